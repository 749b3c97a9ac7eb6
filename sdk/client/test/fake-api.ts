// A local HTTP server that plays canned relayer answers, one per request in order, and records
// what the client sent.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  at_ms: number;
}

/**
 * An answer: status, JSON body (or raw text), headers; `respond` writes the answer itself (an
 * event stream, in pieces over time); "drop" closes the connection unanswered; "hang" never answers.
 */
export type Canned =
  | { status: number; body?: unknown; text?: string; headers?: Record<string, string> }
  | { respond: (res: ServerResponse) => void }
  | "drop"
  | "hang";

export interface FakeApi {
  url: string;
  requests: Recorded[];
  /** Answers to give, consumed in order; the last one repeats. */
  answers: Canned[];
  /** Answers by path prefix, taking precedence over `answers`. */
  routes: Map<string, (request: Recorded) => Canned>;
  close(): Promise<void>;
}

export const REQUEST_ID = "req_test";

function send(res: ServerResponse, answer: { status: number; body?: unknown; text?: string; headers?: Record<string, string> }): void {
  const text = answer.text ?? (answer.body === undefined ? "" : JSON.stringify(answer.body));
  res.writeHead(answer.status, {
    "content-type": answer.text === undefined ? "application/json" : "text/html",
    "request-id": REQUEST_ID,
    ...answer.headers,
  });
  res.end(text);
}

export async function startFakeApi(answers: Canned[] = []): Promise<FakeApi> {
  const requests: Recorded[] = [];
  const routes = new Map<string, (request: Recorded) => Canned>();
  const api: FakeApi = { url: "", requests, answers, routes, close: async () => undefined };
  let served = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const recorded: Recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: text === "" ? undefined : JSON.parse(text),
        at_ms: Date.now(),
      };
      requests.push(recorded);
      const route = [...routes.entries()].find(([prefix]) => recorded.url.startsWith(prefix));
      const answer = route ? route[1](recorded) : api.answers[Math.min(served++, api.answers.length - 1)];
      if (answer === undefined) return send(res, { status: 599, text: `no canned answer for ${recorded.method} ${recorded.url}` });
      if (answer === "hang") return;
      if (answer === "drop") {
        req.socket.destroy();
        return;
      }
      if ("respond" in answer) return answer.respond(res);
      send(res, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

/** The API's error answer for `code`. */
export function apiError(
  status: number,
  type: string,
  code: string,
  details: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Canned {
  return { status, body: { error: { ...details, type, code, message: `${code} happened`, request_id: REQUEST_ID } }, headers };
}

/** A succeeded execution as the API renders it (fields the client does not read are filler). */
export function execution(id = "exec_1111111111111111", overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: "execution",
    id,
    agent: "11111111111111111111111111111111",
    network: "devnet",
    status: "succeeded",
    api_key_id: "key_1",
    output: { ok: true },
    receipt: null,
    charge: { amount_usdc: "0.250000", creator_share_usdc: "0.247500", fee_usdc: "0.002500", currency: "USDC", covered_by_subscription: false },
    transactions: { escrow: "e", settlement: "s", refund: null, confirmation: "processed" },
    failure: null,
    escrow_deadline: null,
    created_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:01.000Z",
    durations_ms: { total: 1000, escrow: 100, creator: 800, settlement: 100 },
    ...overrides,
  };
}
