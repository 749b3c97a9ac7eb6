// The JSON-RPC calls on an execution's path (accounts, send, signature statuses, blockhash), made
// directly over keep-alive HTTP. web3.js's Connection answers the same calls through jayson and
// superstruct validation, which cost more CPU than the rest of an execution's RPC work together;
// it still serves everything off that path.
//
// Calls made in the same turn of the event loop travel together as one JSON-RPC batch, in the
// order they were made: under load one HTTP exchange carries the calls of many executions.
import http from "node:http";
import https from "node:https";

import type { PublicKey } from "@solana/web3.js";

export type Commitment = "processed" | "confirmed" | "finalized";

/** The node answered with a JSON-RPC error (the request reached it and was refused). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** The node did not answer: refused connection, timeout, HTTP error or a body that is not JSON-RPC. */
export class RpcUnavailableError extends Error {}

/**
 * A socket's failure, named by its code only: Node's messages carry the node's address
 * ("connect ECONNREFUSED 10.0.0.7:8899"), which travels on into answers and stored failures.
 */
function transportFailure(error: Error): RpcUnavailableError {
  const code = (error as NodeJS.ErrnoException).code;
  return new RpcUnavailableError(`the connection failed${code && /^[A-Z0-9_]+$/.test(code) ? ` (${code})` : ""}`, { cause: error });
}

export interface AccountData {
  data: Buffer;
  owner: string;
  lamports: number;
}

export interface SignatureStatus {
  err: unknown;
  confirmationStatus: Commitment | null;
}

interface RpcResponse {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

interface PendingCall {
  id: number;
  method: string;
  params: unknown[];
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/** The most calls one batch carries (what public RPC providers and localnet accept). */
export const MAX_BATCH_CALLS = 100;
/**
 * The largest request body a node takes (agave's RPC and localnet refuse more with 413): a
 * batch of a hundred sendTransaction calls is twice that, so batches are cut by size too.
 */
export const MAX_REQUEST_BYTES = 50 * 1024;

export class RpcClient {
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  private readonly target: URL;
  private next_id = 1;
  private queued: PendingCall[] = [];

  constructor(
    url: string,
    private readonly timeout_ms = 15_000,
  ) {
    this.target = new URL(url);
    this.transport = this.target.protocol === "https:" ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: 64 });
  }

  call<T>(method: string, params: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ id: this.next_id++, method, params, resolve: resolve as (result: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const queued = this.queued;
    this.queued = [];
    let calls: PendingCall[] = [];
    let parts: string[] = [];
    let bytes = 0;
    for (const call of queued) {
      let part: string;
      try {
        part = JSON.stringify({ jsonrpc: "2.0", id: call.id, method: call.method, params: call.params });
      } catch (error) {
        call.reject(error as Error);
        continue;
      }
      // Brackets and commas: one byte per call and one more.
      const size = Buffer.byteLength(part) + 1;
      if (calls.length === MAX_BATCH_CALLS || (calls.length > 0 && bytes + size + 1 > MAX_REQUEST_BYTES)) {
        this.send(calls, parts);
        calls = [];
        parts = [];
        bytes = 0;
      }
      calls.push(call);
      parts.push(part);
      bytes += size;
    }
    if (calls.length > 0) this.send(calls, parts);
  }

  /** Posts `calls` (serialized as `parts`) as one request, and settles each with its answer. */
  private send(calls: PendingCall[], parts: string[]): void {
    const body = parts.length === 1 ? parts[0]! : `[${parts.join(",")}]`;
    this.post(body).then(
      (answer) => {
        // Whatever the node sends, every call settles: entries that are not answers are ignored,
        // and a call left without one is unavailable.
        const answers = (Array.isArray(answer) ? answer : [answer]).filter(
          (entry): entry is RpcResponse => typeof entry === "object" && entry !== null,
        );
        const byId = new Map(answers.map((response) => [response.id, response]));
        for (const call of calls) {
          const response = byId.get(call.id);
          if (!response) call.reject(new RpcUnavailableError(`${call.method}: no answer`));
          else if (response.error) call.reject(new RpcError(response.error.code, response.error.message, response.error.data));
          else if (!("result" in response)) call.reject(new RpcUnavailableError(`${call.method}: an answer without a result`));
          else call.resolve(response.result);
        }
      },
      (error: Error) => {
        for (const call of calls) call.reject(error);
      },
    );
  }

  /** One HTTP exchange; resolves to the parsed body, rejects with RpcUnavailableError. */
  private post(body: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const request = this.transport.request(
        this.target,
        {
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
          timeout: this.timeout_ms,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", (error) => reject(transportFailure(error)));
          response.on("end", () => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
              reject(new RpcUnavailableError(`HTTP ${response.statusCode} without a JSON-RPC body`));
              return;
            }
            // A JSON-RPC error travels with any status; anything else must come with 200.
            if (response.statusCode !== 200 && !(parsed as RpcResponse | null)?.error) {
              reject(new RpcUnavailableError(`HTTP ${response.statusCode}`));
            } else resolve(parsed);
          });
        },
      );
      request.on("timeout", () => request.destroy(new RpcUnavailableError(`no answer in ${this.timeout_ms} ms`)));
      request.on("error", (error) => reject(error instanceof RpcUnavailableError ? error : transportFailure(error)));
      request.end(body);
    });
  }

  async getMultipleAccounts(addresses: PublicKey[], commitment: Commitment): Promise<(AccountData | null)[]> {
    const { value } = await this.call<{ value: ({ data: [string, string]; owner: string; lamports: number } | null)[] }>(
      "getMultipleAccounts",
      [addresses.map((address) => address.toBase58()), { commitment, encoding: "base64" }],
    );
    return value.map((account) =>
      account ? { data: Buffer.from(account.data[0], "base64"), owner: account.owner, lamports: account.lamports } : null,
    );
  }

  /** Sends wire bytes (base64) with a preflight at `processed`; resolves to the signature. */
  sendTransaction(bytes_base64: string): Promise<string> {
    return this.call<string>("sendTransaction", [
      bytes_base64,
      { encoding: "base64", skipPreflight: false, preflightCommitment: "processed", maxRetries: 0 },
    ]);
  }

  async getSignatureStatuses(signatures: string[]): Promise<(SignatureStatus | null)[]> {
    const { value } = await this.call<{ value: (SignatureStatus | null)[] }>("getSignatureStatuses", [
      signatures,
      { searchTransactionHistory: true },
    ]);
    return value;
  }

  /** The lowest unit price (micro-lamports) paid in each recent slot, by transactions writing any of `writable`. */
  async getRecentPrioritizationFees(writable: PublicKey[]): Promise<{ slot: number; prioritizationFee: number }[]> {
    return this.call<{ slot: number; prioritizationFee: number }[]>("getRecentPrioritizationFees", [
      writable.map((address) => address.toBase58()),
    ]);
  }

  async getLatestBlockhash(commitment: Commitment): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    const { value } = await this.call<{ value: { blockhash: string; lastValidBlockHeight: number } }>("getLatestBlockhash", [
      { commitment },
    ]);
    return value;
  }

  getSlot(commitment: Commitment): Promise<number> {
    return this.call<number>("getSlot", [{ commitment }]);
  }

  getBlockHeight(commitment: Commitment): Promise<number> {
    return this.call<number>("getBlockHeight", [{ commitment }]);
  }

  close(): void {
    this.agent.destroy();
  }
}
