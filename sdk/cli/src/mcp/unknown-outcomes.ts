// Calls whose outcome the server does not know (no answer in time, a 5xx without an execution, a
// replay still in progress). Such a call may have been charged, so its reservation stays on the
// session's and the process's limits until its final state is read: the same request is sent
// again with its Idempotency-Key, which the relayer answers with the first call's execution and
// never charges twice (a call that never reached it runs then, within the reservation it holds).
import {
  AgentMarketError,
  ConflictError,
  ConnectionError,
  ExecutionFailedError,
  ServerError,
  StreamInterruptedError,
  parseUsdc,
  type AgentMarket,
  type ExecuteInput,
} from "@agent-market/client";

import { chargeText } from "../charge-text.js";
import type { SpendingLimit } from "./spending-limit.js";

/** One call sent to the relayer, as it would be sent again, and what it holds. */
export interface SentCall {
  agent_id: string;
  input: ExecuteInput;
  max_price_usdc: string;
  idempotency_key: string;
  reserved_usdc: bigint;
  limits: SpendingLimit[];
}

/**
 * Whether an execute that failed with `error` may have been charged: no final answer came back
 * (a stream that ended early included: its execution goes on).
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof AgentMarketError)) return true;
  if (error instanceof ExecutionFailedError) return false;
  if (error instanceof ConnectionError || error instanceof ServerError || error instanceof StreamInterruptedError) return true;
  return error instanceof ConflictError && error.code === "idempotency_request_in_progress";
}

export function settle(call: SentCall, charged_usdc: bigint): void {
  for (const limit of call.limits) limit.settle(call.reserved_usdc, charged_usdc);
}

export class UnknownOutcomes {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly client: AgentMarket,
    private readonly retry_ms: number,
    private readonly log: (line: string) => void,
  ) {}

  /** How many calls still hold their reservation. */
  pending(): number {
    return this.timers.size;
  }

  /** Keeps `call`'s reservation and asks again every `retry_ms` until its outcome is final. */
  follow(call: SentCall): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ask(call).catch((error: unknown) => this.log(`reading the outcome of ${call.idempotency_key} failed: ${(error as Error).message}`));
    }, this.retry_ms);
    this.timers.add(timer);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async ask(call: SentCall): Promise<void> {
    try {
      const execution = await this.client.agents.execute(call.agent_id, call.input, {
        maxPriceUsdc: call.max_price_usdc,
        idempotencyKey: call.idempotency_key,
      });
      settle(call, parseUsdc(execution.charge.charged_usdc));
      this.log(`call ${call.idempotency_key} to ${call.agent_id} ended: ${execution.id} charged ${chargeText(execution.charge)}`);
    } catch (error) {
      if (outcomeUnknown(error)) return this.follow(call);
      // A refusal or a refund: nothing was charged.
      settle(call, 0n);
      const code = error instanceof AgentMarketError ? error.code : "error";
      this.log(`call ${call.idempotency_key} to ${call.agent_id} ended: ${code}, nothing charged`);
    }
  }
}
