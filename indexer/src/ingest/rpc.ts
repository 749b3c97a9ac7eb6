// A small JSON-RPC client for the reads the indexer makes, with batches for backfill. Its calls
// keep to the configured budget, and a 429 (a provider's rate limit) is waited out and sent again.
import { retryAfterMs } from "@agent-market/program";

import type { RawTransaction } from "./decoder.js";
import { RequestBudget } from "./request-budget.js";

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`JSON-RPC error ${code}: ${message}`);
  }
}

export interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
  blockTime?: number | null;
  confirmationStatus?: string | null;
}

export interface SignatureStatus {
  slot: number;
  confirmationStatus: "processed" | "confirmed" | "finalized" | null;
  err: unknown;
}

type Answer<T> = { id: number; result?: T; error?: { code: number; message: string } };

/** The largest batch a node takes (localnet and most providers: 100). */
export const MAX_BATCH = 100;

/** Times a request answered 429 is sent again before the error is the caller's. */
export const RATE_LIMITED_ATTEMPTS = 8;
/** The wait after a 429 that names none (Retry-After), doubled each time, and its ceiling. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 10_000;

export interface RpcOptions {
  /** Calls a second the node allows (each call of a batch counts); 0 for no budget. */
  calls_per_second?: number;
}

/** How long a 429 asks to wait: its Retry-After, else the backoff of its attempt. */
function waitAfter429Ms(header: string | null, attempt: number): number {
  return retryAfterMs(header) ?? Math.min(BACKOFF_FIRST_MS * 2 ** attempt, BACKOFF_MAX_MS);
}

export class SolanaRpc {
  private nextId = 1;
  private readonly budget: RequestBudget;

  constructor(
    readonly url: string,
    options: RpcOptions = {},
  ) {
    this.budget = new RequestBudget(options.calls_per_second ?? 0);
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const [answer] = await this.batch<T>([[method, params]]);
    return answer as T;
  }

  /** One HTTP request for up to MAX_BATCH calls; answers in the calls' order. */
  async batch<T>(calls: [string, unknown[]][]): Promise<T[]> {
    const ids = calls.map(() => this.nextId++);
    const body = JSON.stringify(calls.map(([method, params], i) => ({ jsonrpc: "2.0", id: ids[i], method, params })));
    const answers = (await (await this.post(body, calls.length)).json()) as Answer<T>[];
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    return ids.map((id) => {
      const answer = byId.get(id);
      if (!answer) throw new RpcError(-32603, "missing answer in batch");
      if (answer.error) throw new RpcError(answer.error.code, answer.error.message);
      return answer.result as T;
    });
  }

  /** One request within the budget; a 429 is waited out (its Retry-After, else a backoff) and sent again. */
  private async post(body: string, calls: number): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      await this.budget.take(calls);
      const response = await fetch(this.url, { method: "POST", headers: { "content-type": "application/json" }, body });
      if (response.status === 429 && attempt + 1 < RATE_LIMITED_ATTEMPTS) {
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, waitAfter429Ms(response.headers.get("retry-after"), attempt)));
        continue;
      }
      if (!response.ok) throw new RpcError(response.status, `HTTP ${response.status} from ${this.url}`);
      return response;
    }
  }

  getSlot(commitment: "confirmed" | "finalized"): Promise<number> {
    return this.call<number>("getSlot", [{ commitment }]);
  }

  getSignaturesForAddress(address: string, options: { before?: string; until?: string; limit?: number; commitment?: "confirmed" | "finalized" }): Promise<SignatureInfo[]> {
    const config: Record<string, unknown> = { commitment: options.commitment ?? "confirmed", limit: options.limit ?? 1000 };
    if (options.before) config.before = options.before;
    if (options.until) config.until = options.until;
    return this.call<SignatureInfo[]>("getSignaturesForAddress", [address, config]);
  }

  /** Transactions at `commitment`, null for one the node does not have (yet, or any more). */
  async getTransactions(signatures: readonly string[], commitment: "confirmed" | "finalized" = "confirmed"): Promise<(RawTransaction | null)[]> {
    const out: (RawTransaction | null)[] = [];
    for (let from = 0; from < signatures.length; from += MAX_BATCH) {
      const chunk = signatures.slice(from, from + MAX_BATCH);
      out.push(
        ...(await this.batch<RawTransaction | null>(
          chunk.map((signature) => ["getTransaction", [signature, { encoding: "json", commitment, maxSupportedTransactionVersion: 0 }]]),
        )),
      );
    }
    return out;
  }

  /** For each blockhash, whether a transaction carrying it could still land (read at `finalized`). */
  async areBlockhashesValid(blockhashes: readonly string[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let from = 0; from < blockhashes.length; from += MAX_BATCH) {
      const chunk = blockhashes.slice(from, from + MAX_BATCH);
      const answers = await this.batch<{ value: boolean }>(chunk.map((blockhash) => ["isBlockhashValid", [blockhash, { commitment: "finalized" }]]));
      out.push(...answers.map((answer) => answer.value));
    }
    return out;
  }

  async getSignatureStatuses(signatures: readonly string[]): Promise<(SignatureStatus | null)[]> {
    const out: (SignatureStatus | null)[] = [];
    for (let from = 0; from < signatures.length; from += 256) {
      const chunk = signatures.slice(from, from + 256);
      const answer = await this.call<{ value: (SignatureStatus | null)[] }>("getSignatureStatuses", [chunk, { searchTransactionHistory: true }]);
      out.push(...answer.value);
    }
    return out;
  }
}
