// Who takes part in an execution's dispute: its payer (the executions row), its agent's creator
// (the chain's word: a listing could be stale, an agent account is never closed) and, per
// network, the market's arbiter.
import type { NetworkName } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";

export type EvidenceRole = "payer" | "creator";
export type DisputeRole = EvidenceRole | "arbiter";

export interface ExecutionParty {
  id: string;
  network: NetworkName;
  state: string;
  payer: string;
  agent: string;
  creator: string | null;
  amount_usdc: string | null;
  /** The escrow's nonce (u64, decimal), which its settlement's event names. */
  escrow_nonce: string | null;
  /** The settlement transaction's signature, once one was signed. */
  settle_signature: string | null;
  /** Its leaf in the agent's receipt log (u64, decimal), once read from the settlement's event. */
  leaf_index: string | null;
}

/** Agents whose creator is kept in memory; the least recently read are forgotten first. */
const KEPT_CREATORS = 10_000;

export class ExecutionParties {
  /**
   * The creator of each agent read, by network and agent: no instruction changes an Agent
   * account's creator, so once read it is read again only when forgotten. Every dispute read
   * needs it; without this each would cost an RPC call.
   */
  private readonly creators = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
  ) {}

  async one(id: string): Promise<ExecutionParty> {
    const [execution] = await this.many([id]);
    if (!execution) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return execution;
  }

  async many(ids: string[]): Promise<ExecutionParty[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<{
      id: string;
      network: NetworkName;
      state: string;
      wallet: string;
      agent: string;
      amount_usdc: string | null;
      escrow_nonce: string | null;
      settle_signature: string | null;
      leaf_index: string | null;
    }>(
      `SELECT id, network, state, wallet, agent, amount_usdc, escrow_nonce, settle_tx->>'signature' AS settle_signature, leaf_index
       FROM executions WHERE id = ANY($1::text[])`,
      [ids],
    );
    const parties: ExecutionParty[] = [];
    for (const row of rows) {
      parties.push({
        id: row.id,
        network: row.network,
        state: row.state,
        payer: row.wallet,
        agent: row.agent,
        creator: await this.creatorOf(row.network, row.agent),
        amount_usdc: row.amount_usdc,
        escrow_nonce: row.escrow_nonce,
        settle_signature: row.settle_signature,
        leaf_index: row.leaf_index,
      });
    }
    return parties;
  }

  /** The agent's creator as its account names it (a listing could be stale, an agent is never closed); null without an account. */
  private async creatorOf(network: NetworkName, agent: string): Promise<string | null> {
    const key = `${network}:${agent}`;
    const kept = this.creators.get(key);
    if (kept !== undefined) {
      this.creators.delete(key);
      this.creators.set(key, kept);
      return kept;
    }
    const account = await this.chain.agent(network, new PublicKey(agent));
    if (account === null) return null;
    const creator = account.creator.toBase58();
    this.creators.set(key, creator);
    if (this.creators.size > KEPT_CREATORS) this.creators.delete(this.creators.keys().next().value!);
    return creator;
  }

  async roles(wallet: string, execution: ExecutionParty): Promise<DisputeRole[]> {
    const roles: DisputeRole[] = [];
    if (execution.payer === wallet) roles.push("payer");
    if (execution.creator === wallet) roles.push("creator");
    if (await this.isArbiter(execution.network, wallet)) roles.push("arbiter");
    return roles;
  }

  /** Whether `wallet` is the arbiter of `network`'s market, which takes part in all its disputes. */
  async isArbiter(network: NetworkName, wallet: string): Promise<boolean> {
    return (await this.chain.market(network)).arbiter.toBase58() === wallet;
  }

  async requireParty(wallet: string, execution: ExecutionParty): Promise<void> {
    if ((await this.roles(wallet, execution)).length === 0) {
      throw new ApiError("not_dispute_party", `${wallet} is not the payer, the creator or the arbiter of ${execution.id}.`);
    }
  }
}
