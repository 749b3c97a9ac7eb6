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

export class ExecutionParties {
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
    const creators = new Map<string, string | null>();
    const parties: ExecutionParty[] = [];
    for (const row of rows) {
      const key = `${row.network}/${row.agent}`;
      if (!creators.has(key)) {
        // The chain says who the creator is: a listing could be stale, an agent is never closed.
        const agent = await this.chain.agent(row.network, new PublicKey(row.agent));
        creators.set(key, agent ? agent.creator.toBase58() : null);
      }
      parties.push({
        id: row.id,
        network: row.network,
        state: row.state,
        payer: row.wallet,
        agent: row.agent,
        creator: creators.get(key)!,
        amount_usdc: row.amount_usdc,
        escrow_nonce: row.escrow_nonce,
        settle_signature: row.settle_signature,
        leaf_index: row.leaf_index,
      });
    }
    return parties;
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
