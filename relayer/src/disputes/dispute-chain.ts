// What the chain says of disputes, read for the relayer's dispute views: the open Dispute accounts
// (all, a payer's or an agent's, found by their fields), a creator's agents, and whether an
// execution's dispute window is open by the chain's clock.
import { decodeDispute, decodeReceipt, disputePda, formatExecutionId, IDL, receiptPda, type NetworkName } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { SYSVAR_CLOCK_PUBKEY, type PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";
import { executionIdBytes } from "../executions/execution-row.js";
import { loggedSettledAt } from "../executions/log-settlement.js";
import type { ExecutionParty } from "./execution-parties.js";

const discriminator = (name: string) => utils.bytes.bs58.encode(Uint8Array.from(IDL.accounts.find((a) => a.name === name)!.discriminator));
const DISPUTE_DISCRIMINATOR = discriminator("Dispute");
const AGENT_DISCRIMINATOR = discriminator("Agent");
/** Offset of Agent.creator: right after the discriminator. */
const AGENT_CREATOR_OFFSET = 8;
/** Offset of Dispute.agent: discriminator, execution id. */
const DISPUTE_AGENT_OFFSET = 8 + 16;
/** Offset of Dispute.payer: discriminator, execution id, agent. */
const DISPUTE_PAYER_OFFSET = 8 + 16 + 32;

export class DisputeChain {
  constructor(private readonly chain: ChainService) {}

  /** The execution ids of every open dispute on `network`. */
  open(network: NetworkName): Promise<string[]> {
    return this.openOnChain(network);
  }

  /** The execution ids of the open disputes `payer` opened on `network`. */
  openByPayer(network: NetworkName, payer: string): Promise<string[]> {
    return this.openOnChain(network, { offset: DISPUTE_PAYER_OFFSET, bytes: payer });
  }

  /** The execution ids of the open disputes against `agent` on `network`. */
  openAgainst(network: NetworkName, agent: string): Promise<string[]> {
    return this.openOnChain(network, { offset: DISPUTE_AGENT_OFFSET, bytes: agent });
  }

  /** The execution ids of the open Dispute accounts on `network` whose field at `field.offset` is `field.bytes` (all without). */
  private async openOnChain(network: NetworkName, field?: { offset: number; bytes: string }): Promise<string[]> {
    const filters = [{ memcmp: { offset: 0, bytes: DISPUTE_DISCRIMINATOR } }];
    if (field !== undefined) filters.push({ memcmp: field });
    const accounts = await this.chain.connection(network).getProgramAccounts(this.chain.programId(network), { commitment: "confirmed", filters });
    return accounts.map(({ account }) => formatExecutionId(decodeDispute(account.data).executionId));
  }

  /** The agents `creator` registered on `network`, found by the Agent account's creator field. */
  async agentsOf(network: NetworkName, creator: string): Promise<string[]> {
    const accounts = await this.chain.connection(network).getProgramAccounts(this.chain.programId(network), {
      commitment: "confirmed",
      filters: [{ memcmp: { offset: 0, bytes: AGENT_DISCRIMINATOR } }, { memcmp: { offset: AGENT_CREATOR_OFFSET, bytes: creator } }],
    });
    return accounts.map(({ pubkey }) => pubkey.toBase58());
  }

  /**
   * Evidence is taken while the dispute window is open by the chain's clock (the receipt's
   * settlement time plus the market's window, as open_dispute checks it), and after it while a
   * dispute of the execution is open, so that both parties can still speak to the arbiter.
   */
  async requireWindowOpen(execution: ExecutionParty): Promise<void> {
    const programId = this.chain.programId(execution.network);
    const executionId = executionIdBytes(execution.id);
    let accounts;
    try {
      accounts = await this.chain
        .rpc(execution.network)
        .getMultipleAccounts([SYSVAR_CLOCK_PUBKEY, receiptPda(executionId, programId), disputePda(executionId, programId)], "confirmed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
    const [clock, receipt, dispute] = accounts;
    if (dispute) return;
    // Clock: slot, epoch start timestamp, epoch, leader schedule epoch, then unix_timestamp.
    const now_secs = clock!.data.readBigInt64LE(32);
    const window_secs = BigInt((await this.chain.market(execution.network)).disputeWindowSecs);
    // Settled by settle_batch: no receipt account, its leaf's settlement time is in its event.
    const settled_secs = receipt ? decodeReceipt(receipt.data).settledAt : await this.loggedSettledAt(execution, programId, executionId);
    const ends_secs = settled_secs === null ? null : settled_secs + window_secs;
    if (ends_secs === null || now_secs > ends_secs) {
      throw new ApiError(
        "dispute_window_closed",
        ends_secs === null
          ? `${execution.id}'s receipt is closed: its dispute window has passed.`
          : `${execution.id}'s dispute window closed at ${new Date(Number(ends_secs) * 1000).toISOString()} (chain time).`,
      );
    }
  }

  private async loggedSettledAt(execution: ExecutionParty, programId: PublicKey, executionId: Uint8Array): Promise<bigint | null> {
    if (!execution.receipt_in_log || execution.settle_signature === null) return null;
    try {
      return await loggedSettledAt(this.chain.connection(execution.network), programId, execution.settle_signature, executionId);
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
  }
}
