// What the chain says of disputes, read for the relayer's dispute views: the Dispute accounts
// (all, a payer's or an agent's, found by their fields), a creator's agents, and whether an
// execution's dispute window is open by the chain's clock. A Dispute account stays once resolved,
// until close_dispute returns its rent to the payer after the leaf's window.
import { decodeDispute, disputePda, formatExecutionId, IDL, type Dispute, type NetworkName } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey, SYSVAR_CLOCK_PUBKEY } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";
import type { ExecutionParty } from "./execution-parties.js";
import type { SettledLeaves } from "./settled-leaf.js";

const discriminator = (name: string) => utils.bytes.bs58.encode(Uint8Array.from(IDL.accounts.find((a) => a.name === name)!.discriminator));
const DISPUTE_DISCRIMINATOR = discriminator("Dispute");
const AGENT_DISCRIMINATOR = discriminator("Agent");
/** Offset of Agent.creator: right after the discriminator. */
const AGENT_CREATOR_OFFSET = 8;
/** Offset of Dispute.agent: right after the discriminator. */
const DISPUTE_AGENT_OFFSET = 8;
/** Offset of Dispute.payer: discriminator, agent, leaf index, execution id. */
const DISPUTE_PAYER_OFFSET = 8 + 32 + 8 + 16;

/**
 * The Dispute accounts one scan found, by address: every one of its scope (all of a network's, a
 * payer's, an agent's), so an address of that scope missing from it has no account.
 */
export interface DisputeScan {
  /** The execution ids the accounts name (an id names the dispute of each leaf it settled into). */
  execution_ids: string[];
  /** Each account, by its address in base58. */
  accounts: Map<string, Dispute>;
}

export class DisputeChain {
  constructor(
    private readonly chain: ChainService,
    private readonly leaves: SettledLeaves,
  ) {}

  /** Every Dispute account on `network`. */
  all(network: NetworkName): Promise<DisputeScan> {
    return this.scan(network);
  }

  /** The Dispute accounts `payer` opened on `network`. */
  ofPayer(network: NetworkName, payer: string): Promise<DisputeScan> {
    return this.scan(network, { offset: DISPUTE_PAYER_OFFSET, bytes: payer });
  }

  /** The Dispute accounts against `agent` on `network`. */
  against(network: NetworkName, agent: string): Promise<DisputeScan> {
    return this.scan(network, { offset: DISPUTE_AGENT_OFFSET, bytes: agent });
  }

  /**
   * The Dispute accounts on `network` whose field at `field.offset` is `field.bytes` (all
   * without), in one getProgramAccounts. Which of an id's disputes is an execution's own is its
   * leaf's to say: its address, (agent, leaf index).
   */
  private async scan(network: NetworkName, field?: { offset: number; bytes: string }): Promise<DisputeScan> {
    const filters = [{ memcmp: { offset: 0, bytes: DISPUTE_DISCRIMINATOR } }];
    if (field !== undefined) filters.push({ memcmp: field });
    let found;
    try {
      found = await this.chain.connection(network).getProgramAccounts(this.chain.programId(network), { commitment: "confirmed", filters });
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
    }
    const accounts = new Map(found.map(({ pubkey, account }) => [pubkey.toBase58(), decodeDispute(account.data)]));
    const execution_ids = [...new Set([...accounts.values()].map((dispute) => formatExecutionId(dispute.executionId)))];
    return { execution_ids, accounts };
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
   * Evidence is taken while the dispute window is open by the chain's clock (the leaf's settlement
   * time plus the market's window, as open_dispute checks it), and after it while a dispute of
   * the execution's leaf exists, so that both parties can still speak to the arbiter.
   */
  async requireWindowOpen(execution: ExecutionParty): Promise<void> {
    const leaf = await this.leaves.of(execution);
    if (leaf === null) {
      throw new ApiError("dispute_window_closed", `${execution.id} has no leaf in its agent's receipt log: there is nothing to dispute.`);
    }
    const programId = this.chain.programId(execution.network);
    let accounts;
    try {
      accounts = await this.chain
        .rpc(execution.network)
        .getMultipleAccounts([SYSVAR_CLOCK_PUBKEY, disputePda(new PublicKey(execution.agent), leaf.leaf_index, programId)], "confirmed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
    const [clock, dispute] = accounts;
    if (dispute) return;
    // Clock: slot, epoch start timestamp, epoch, leader schedule epoch, then unix_timestamp.
    const now_secs = clock!.data.readBigInt64LE(32);
    const window_secs = BigInt((await this.chain.market(execution.network)).disputeWindowSecs);
    const ends_secs = leaf.settled_at_secs + window_secs;
    if (now_secs > ends_secs) {
      throw new ApiError(
        "dispute_window_closed",
        `${execution.id}'s dispute window closed at ${new Date(Number(ends_secs) * 1000).toISOString()} (chain time).`,
      );
    }
  }
}
