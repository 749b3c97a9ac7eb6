// Where an execution's settlement sits in its agent's receipt log: a dispute is keyed by (agent,
// leaf index), and its window counts from the leaf's `settled_at`. Both are in the settlement
// transaction's EscrowSettledToLog event, read when a dispute needs them; the leaf index is then
// kept on the row, so that later reads of the dispute skip the transaction.
import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";
import { executionIdBytes } from "../executions/execution-row.js";
import type { ExecutionStore } from "../executions/execution-store.js";
import { settledToLog } from "../executions/log-settlement.js";
import type { ExecutionParty } from "./execution-parties.js";

export interface SettledLeaf {
  leaf_index: bigint;
  /** Chain seconds: the dispute window ends `dispute_window_secs` after. */
  settled_at_secs: bigint;
}

export class SettledLeaves {
  constructor(
    private readonly chain: ChainService,
    private readonly store: ExecutionStore,
  ) {}

  /** The execution's leaf, read from its settlement's event; null if it has none (not settled into the log). */
  async of(execution: ExecutionParty): Promise<SettledLeaf | null> {
    if (execution.state !== "settled" || execution.settle_signature === null || execution.escrow_nonce === null) return null;
    let event;
    try {
      event = await settledToLog(this.chain.connection(execution.network), this.chain.programId(execution.network), execution.settle_signature, {
        executionId: executionIdBytes(execution.id),
        nonce: BigInt(execution.escrow_nonce),
      });
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
    if (!event) return null;
    if (execution.leaf_index === null) {
      await this.store.recordLeafIndex(execution.id, event.leafIndex);
      execution.leaf_index = event.leafIndex.toString();
    }
    return { leaf_index: event.leafIndex, settled_at_secs: event.settledAt };
  }

  /** The execution's leaf index: the one kept on its row, else read (null if it has none). */
  async indexOf(execution: ExecutionParty): Promise<bigint | null> {
    if (execution.leaf_index !== null) return BigInt(execution.leaf_index);
    return (await this.of(execution))?.leaf_index ?? null;
  }
}
