// A JSON-RPC proxy in front of localnet that fails chosen calls, for fault-injection tests: a
// real HTTP server on a free port, forwarding everything else unchanged.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * error: answered 503 without reaching the node (nothing happens on chain);
 * lose: forwarded (it takes effect on chain) but its answer is replaced by a 502;
 * stall: never answered (the client's timeout decides);
 * drop (sendTransaction): forwarded and answered, then taken back with `localnet_dropTransaction`
 * as a cluster abandons the fork that held it: the client has its signature, the chain has nothing.
 * A dropped send runs alone: it waits for the calls already forwarded and holds back new ones until
 * it is taken back, so no other call sees it landed in between (a fork a cluster abandons is never
 * seen at the commitment the relayer reads, and a poll racing the drop would see a confirmed send
 * vanish, which no cluster does).
 */
export type Fault = "error" | "lose" | "stall" | "drop";

interface Rule {
  method: string;
  fault: Fault;
  /** Matching requests let through before the fault applies. */
  skip: number;
  /** Requests it still fails. */
  times: number;
  hits: number;
}

/** A forwarded call, as the proxy saw it: for getProgramAccounts, how many filters it asked and accounts it answered. */
export interface ObservedCall {
  method: string;
  accounts: number | null;
  filters: number | null;
}

export interface RpcProxy {
  url: string;
  /** Every call forwarded since the last clear(), in order. */
  calls: ObservedCall[];
  /** Fails the next `times` requests carrying a call to `method`, after letting `skip` through. */
  fail(method: string, fault: Fault, options?: { skip?: number; times?: number }): Rule;
  clear(): void;
  close(): Promise<void>;
}

/** How long "drop" waits for the transaction to run before deciding it was lost anyway: 2 s. */
const DROP_ATTEMPTS = 40;
const DROP_RETRY_MS = 50;

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const rules: Rule[] = [];
  const calls: ObservedCall[] = [];
  const observe = (request: Buffer, answer: Buffer): void => {
    try {
      type Call = { method?: string; params?: [unknown, { filters?: unknown[] }?] };
      const asked = [JSON.parse(request.toString()) as Call | Call[]].flat();
      const answered = [JSON.parse(answer.toString()) as { result?: unknown } | { result?: unknown }[]].flat();
      asked.forEach((call, i) => {
        const result = answered[i]?.result;
        const programAccounts = call.method === "getProgramAccounts";
        calls.push({
          method: String(call.method),
          accounts: programAccounts && Array.isArray(result) ? result.length : null,
          filters: programAccounts ? (call.params?.[1]?.filters?.length ?? 0) : null,
        });
      });
    } catch {
      // not JSON-RPC: not observed
    }
  };
  const sockets = new Set<Socket>();
  let alone_gate: Promise<void> | null = null;
  let in_flight = 0;
  let on_idle: (() => void) | null = null;
  const shared = async <T>(work: () => Promise<T>): Promise<T> => {
    while (alone_gate) await alone_gate;
    in_flight += 1;
    try {
      return await work();
    } finally {
      in_flight -= 1;
      if (in_flight === 0) on_idle?.();
    }
  };
  const alone = async <T>(work: () => Promise<T>): Promise<T> => {
    while (alone_gate) await alone_gate;
    let open!: () => void;
    alone_gate = new Promise((resolve) => (open = resolve));
    try {
      if (in_flight > 0) await new Promise<void>((resolve) => (on_idle = resolve));
      on_idle = null;
      return await work();
    } finally {
      alone_gate = null;
      open();
    }
  };
  const forward = (body: Buffer): Promise<{ status: number; body: Buffer }> =>
    fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body }).then(async (response) => ({
      status: response.status,
      body: Buffer.from(await response.arrayBuffer()),
    }));
  /** Takes back one transaction by its signature, once the node has run it. */
  const dropTransaction = async (signature: string): Promise<void> => {
    const call = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "localnet_dropTransaction", params: [signature] }));
    // The instant profile has run it by now; a devnet-like one runs it at the next slot boundary
    // (or loses it, and then there is nothing to take back).
    for (let attempt = 0; attempt < DROP_ATTEMPTS; attempt += 1) {
      const dropped = JSON.parse((await forward(call)).body.toString()) as { error?: { message?: string } };
      if (!dropped.error) return;
      if (!/no such transaction/.test(dropped.error.message ?? "")) throw new Error(`localnet_dropTransaction refused: ${JSON.stringify(dropped.error)}`);
      await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_MS));
    }
  };
  /**
   * Takes back every transaction the sendTransaction calls of a request sent (a refused send names
   * none). The relayer's client sends the calls of one event-loop turn as one JSON-RPC batch, so a
   * send may share its request with other calls: its answer is found by its call's id.
   */
  const takeBack = async (request: Buffer, answer: Buffer): Promise<void> => {
    const calls = [JSON.parse(request.toString()) as { id?: unknown; method?: string } | { id?: unknown; method?: string }[]].flat();
    const answers = [JSON.parse(answer.toString()) as { id?: unknown; result?: unknown } | { id?: unknown; result?: unknown }[]].flat();
    const sends = new Set(calls.filter((call) => call.method === "sendTransaction").map((call) => call.id));
    for (const { id, result } of answers) {
      if (sends.has(id) && typeof result === "string") await dropTransaction(result);
    }
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      let methods: string[] = [];
      try {
        const parsed = JSON.parse(body.toString()) as { method?: string } | { method?: string }[];
        methods = (Array.isArray(parsed) ? parsed : [parsed]).map((call) => String(call.method));
      } catch {
        // not JSON: forwarded as is
      }
      const rule = rules.find((r) => r.times > 0 && methods.includes(r.method));
      let fault: Fault | undefined;
      if (rule) {
        if (rule.skip > 0) rule.skip -= 1;
        else {
          rule.times -= 1;
          rule.hits += 1;
          fault = rule.fault;
        }
      }
      if (fault === "stall") return;
      if (fault === "error") {
        response.writeHead(503).end("injected fault");
        return;
      }
      const forwarded =
        fault === "drop"
          ? alone(async () => {
              const answer = await forward(body);
              await takeBack(body, answer.body);
              return answer;
            })
          : shared(() => forward(body));
      forwarded
        .then((answer) => {
          observe(body, answer.body);
          return answer;
        })
        .then(
          (answer) => {
            if (fault === "lose") response.writeHead(502).end("injected fault: answer lost");
            else response.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
          },
          () => response.writeHead(502).end("node unreachable"),
        );
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    fail(method, fault, options = {}) {
      const rule = { method, fault, skip: options.skip ?? 0, times: options.times ?? 1, hits: 0 };
      rules.push(rule);
      return rule;
    },
    clear() {
      rules.length = 0;
      calls.length = 0;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
