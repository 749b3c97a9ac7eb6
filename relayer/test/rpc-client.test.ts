// The lean JSON-RPC client against a real HTTP server playing the Solana node: batching by
// event-loop turn, answers matched by id, JSON-RPC errors versus transport failures, and the
// exact params of the helpers on an execution's path.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

import { Keypair, PublicKey } from "@solana/web3.js";

import { MAX_BATCH_CALLS, MAX_REQUEST_BYTES, RpcClient, RpcError, RpcUnavailableError } from "../src/chain/rpc-client.js";

interface JsonRpcCall {
  jsonrpc: string;
  id: number;
  method: string;
  params: unknown[];
}

/** One HTTP request as the node received it. */
interface Exchange {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: unknown;
}

/** The calls an exchange carried, whether it was a batch array or a lone object. */
function callsOf(exchange: Exchange): JsonRpcCall[] {
  return Array.isArray(exchange.body) ? (exchange.body as JsonRpcCall[]) : [exchange.body as JsonRpcCall];
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** What the node answers by default: each call's own method and params, so a mix-up shows. */
function echo(call: JsonRpcCall): unknown {
  return { jsonrpc: "2.0", id: call.id, result: { method: call.method, params: call.params } };
}

/**
 * A JSON-RPC node on 127.0.0.1: records every request, then hands it to `handle`, which by
 * default answers each call with `answer` (a batch with an array in the same order).
 */
class FakeNode {
  readonly requests: Exchange[] = [];
  connections = 0;
  /** The node's side of the connections still open. */
  readonly openSockets = new Set<Socket>();
  answer: (call: JsonRpcCall) => unknown = echo;
  handle: (exchange: Exchange, res: http.ServerResponse, req: http.IncomingMessage) => void = (exchange, res) => {
    const body = Array.isArray(exchange.body)
      ? (exchange.body as JsonRpcCall[]).map((call) => this.answer(call))
      : this.answer(exchange.body as JsonRpcCall);
    sendJson(res, 200, body);
  };

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeNode> {
    const server = http.createServer();
    const node = new FakeNode(server);
    server.on("connection", (socket: Socket) => {
      node.connections += 1;
      node.openSockets.add(socket);
      socket.on("close", () => node.openSockets.delete(socket));
    });
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const exchange: Exchange = { method: req.method, url: req.url, headers: req.headers, raw, body };
        node.requests.push(exchange);
        node.handle(exchange, res, req);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return node;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The error a promise rejected with (fails if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    const value = await promise;
    assert.fail(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    assert.ok(error instanceof Error, "rejects with an Error");
    return error;
  }
}

async function unavailable(promise: Promise<unknown>): Promise<RpcUnavailableError> {
  const error = await rejection(promise);
  assert.ok(error instanceof RpcUnavailableError, `RpcUnavailableError expected, got ${error.constructor.name}: ${error.message}`);
  assert.ok(!(error instanceof RpcError), "a transport failure is not a JSON-RPC error");
  return error;
}

/** Settles once the event loop has moved past the current turn (and the client's flush). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("RpcClient", () => {
  let node: FakeNode;
  let client: RpcClient;
  const extraClients: RpcClient[] = [];

  beforeEach(async () => {
    node = await FakeNode.start();
    client = new RpcClient(node.url);
  });

  afterEach(async () => {
    client.close();
    for (const extra of extraClients.splice(0)) extra.close();
    await node.close();
  });

  describe("batching", () => {
    it("sends the calls of one turn as one POST carrying a JSON-RPC batch in call order", async () => {
      const results = await Promise.all([
        client.call("getSlot", [{ commitment: "processed" }]),
        client.call("getBalance", ["11111111111111111111111111111111"]),
        client.call("getBlockHeight", [{ commitment: "confirmed" }]),
        client.call("getVersion", []),
      ]);

      assert.equal(node.requests.length, 1, "one HTTP request");
      const [exchange] = node.requests;
      assert.equal(exchange!.method, "POST");
      assert.match(String(exchange!.headers["content-type"]), /^application\/json/);
      assert.equal(Number(exchange!.headers["content-length"]), Buffer.byteLength(exchange!.raw));
      assert.ok(Array.isArray(exchange!.body), "a batch travels as an array");
      const calls = exchange!.body as JsonRpcCall[];
      assert.deepEqual(
        calls.map((call) => [call.jsonrpc, call.method, call.params]),
        [
          ["2.0", "getSlot", [{ commitment: "processed" }]],
          ["2.0", "getBalance", ["11111111111111111111111111111111"]],
          ["2.0", "getBlockHeight", [{ commitment: "confirmed" }]],
          ["2.0", "getVersion", []],
        ],
      );
      for (const call of calls) assert.deepEqual(Object.keys(call).sort(), ["id", "jsonrpc", "method", "params"]);
      assert.equal(new Set(calls.map((call) => call.id)).size, calls.length, "ids are unique in a batch");
      assert.deepEqual(results, [
        { method: "getSlot", params: [{ commitment: "processed" }] },
        { method: "getBalance", params: ["11111111111111111111111111111111"] },
        { method: "getBlockHeight", params: [{ commitment: "confirmed" }] },
        { method: "getVersion", params: [] },
      ]);
    });

    it("matches answers by id, whatever order the node answers the batch in", async () => {
      node.handle = (exchange, res) => {
        const calls = exchange.body as JsonRpcCall[];
        // Reversed, then the first two swapped: no answer sits where its call was.
        const shuffled = calls.map((call) => ({ jsonrpc: "2.0", id: call.id, result: `answer to ${call.params[0]}` })).reverse();
        [shuffled[0], shuffled[1]] = [shuffled[1]!, shuffled[0]!];
        sendJson(res, 200, shuffled);
      };
      const promises = Array.from({ length: 7 }, (_, i) => client.call<string>("getSlot", [`call ${i}`]));
      const results = await Promise.all(promises);

      assert.equal(node.requests.length, 1);
      assert.deepEqual(
        results,
        Array.from({ length: 7 }, (_, i) => `answer to call ${i}`),
      );
    });

    it("sends a lone call as a plain JSON-RPC object, not a batch of one", async () => {
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: 4242 });
      const height = await client.call<number>("getBlockHeight", [{ commitment: "finalized" }]);

      assert.equal(height, 4242);
      assert.equal(node.requests.length, 1);
      const body = node.requests[0]!.body as JsonRpcCall;
      assert.ok(!Array.isArray(body), "a lone call is not wrapped in an array");
      assert.equal(typeof body, "object");
      assert.equal(body.jsonrpc, "2.0");
      assert.equal(typeof body.id, "number");
      assert.equal(body.method, "getBlockHeight");
      assert.deepEqual(body.params, [{ commitment: "finalized" }]);
    });

    it("resolves a null result as null (a result, not a missing answer)", async () => {
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: null });
      assert.equal(await client.call("getAccountInfo", ["11111111111111111111111111111111"]), null);
    });

    it(`splits 250 calls of one turn into requests of ${MAX_BATCH_CALLS}, ${MAX_BATCH_CALLS} and 50, in order`, async () => {
      assert.equal(MAX_BATCH_CALLS, 100);
      const promises = Array.from({ length: 250 }, (_, i) => client.call<{ params: unknown[] }>("getSlot", [i]));
      const results = await Promise.all(promises);

      assert.equal(node.requests.length, 3, "three HTTP requests");
      const sizes = node.requests.map((exchange) => {
        assert.ok(Array.isArray(exchange.body), "each request is a batch");
        return (exchange.body as unknown[]).length;
      });
      assert.deepEqual(sizes.slice().sort((a, b) => b - a), [100, 100, 50]);
      // The requests may reach the node in any order; together, sorted by their first id,
      // they carry the calls in the order they were made.
      const batches = node.requests
        .map((exchange) => exchange.body as JsonRpcCall[])
        .sort((a, b) => a[0]!.id - b[0]!.id);
      assert.deepEqual(
        batches.map((batch) => batch.length),
        [100, 100, 50],
      );
      const all = batches.flat();
      assert.deepEqual(
        all.map((call) => call.params[0]),
        Array.from({ length: 250 }, (_, i) => i),
      );
      assert.equal(new Set(all.map((call) => call.id)).size, 250, "ids are unique across the requests");
      assert.deepEqual(
        results.map((result) => result.params[0]),
        Array.from({ length: 250 }, (_, i) => i),
      );
    });

    it("sends exactly one full batch for 100 calls and a lone object for the 101st", async () => {
      const promises = Array.from({ length: 101 }, (_, i) => client.call("getSlot", [i]));
      await Promise.all(promises);

      assert.equal(node.requests.length, 2);
      const batch = node.requests.find((exchange) => Array.isArray(exchange.body));
      const lone = node.requests.find((exchange) => !Array.isArray(exchange.body));
      assert.equal((batch!.body as unknown[]).length, 100);
      assert.deepEqual((lone!.body as JsonRpcCall).params, [100]);
    });

    it("cuts the calls of one turn into requests under the node's body limit, every call answered", async () => {
      // A hundred transactions of about 1 KiB of base64 each: twice what a node takes at once.
      const transaction = "A".repeat(1_000);
      const calls = Array.from({ length: MAX_BATCH_CALLS }, (_, i) => client.call("sendTransaction", [`${i}${transaction}`]));
      const results = (await Promise.all(calls)) as { params: string[] }[];

      assert.ok(node.requests.length >= 2, `${node.requests.length} request(s)`);
      for (const exchange of node.requests) {
        assert.ok(Buffer.byteLength(exchange.raw) <= MAX_REQUEST_BYTES, `${Buffer.byteLength(exchange.raw)} bytes`);
      }
      const sent = node.requests.flatMap(callsOf).map((call) => call.params[0]);
      assert.deepEqual(sent, Array.from({ length: MAX_BATCH_CALLS }, (_, i) => `${i}${transaction}`), "all of them, in call order");
      results.forEach((result, i) => assert.equal(result.params[0], `${i}${transaction}`));
    });

    it("sends a call larger than the limit alone, and its refusal touches no other call", async () => {
      node.handle = (exchange, res) => {
        if (Buffer.byteLength(exchange.raw) > MAX_REQUEST_BYTES) sendJson(res, 413, "Payload Too Large");
        else sendJson(res, 200, Array.isArray(exchange.body) ? callsOf(exchange).map(echo) : echo(exchange.body as JsonRpcCall));
      };
      const small = [client.call("getSlot", ["before"]), client.call("getSlot", ["after"])];
      const huge = client.call("sendTransaction", ["A".repeat(MAX_REQUEST_BYTES)]);
      await unavailable(huge);
      const answered = (await Promise.all(small)) as { params: string[] }[];
      assert.deepEqual(answered.map((result) => result.params[0]), ["before", "after"]);
    });

    it("refuses a call whose params cannot be serialized, and sends the others", async () => {
      const bad = client.call("getSlot", [1n]);
      const good = client.call("getSlot", ["fine"]);
      const error = await rejection(bad);
      assert.ok(error instanceof TypeError, error.message);
      assert.deepEqual(((await good) as { params: string[] }).params, ["fine"]);
      assert.equal(node.requests.length, 1);
    });

    it("sends calls made in different turns in separate requests", async () => {
      const first = client.call("getSlot", ["first"]);
      await nextTurn();
      const second = client.call("getSlot", ["second"]);
      const third = client.call("getSlot", ["third"]);
      assert.deepEqual(await Promise.all([first, second, third]), [
        { method: "getSlot", params: ["first"] },
        { method: "getSlot", params: ["second"] },
        { method: "getSlot", params: ["third"] },
      ]);
      // After the first answer came back, too.
      const fourth = await client.call("getSlot", ["fourth"]);
      assert.deepEqual(fourth, { method: "getSlot", params: ["fourth"] });

      assert.equal(node.requests.length, 3);
      const sent = node.requests.map((exchange) => callsOf(exchange).map((call) => call.params[0]));
      assert.deepEqual(sent.slice().sort((a, b) => a.length - b.length || String(a[0]).localeCompare(String(b[0]))), [
        ["first"],
        ["fourth"],
        ["second", "third"],
      ]);
      assert.ok(!Array.isArray(node.requests.find((exchange) => callsOf(exchange)[0]!.params[0] === "first")!.body));
      const ids = node.requests.flatMap((exchange) => callsOf(exchange).map((call) => call.id));
      assert.equal(new Set(ids).size, 4, "ids are never reused");
    });

    it("still batches calls made after an await of a settled promise within the same turn", async () => {
      const first = client.call("getSlot", ["before"]);
      await Promise.resolve();
      const second = client.call("getSlot", ["after"]);
      await Promise.all([first, second]);

      assert.equal(node.requests.length, 1, "microtasks do not end the turn");
      assert.deepEqual(
        callsOf(node.requests[0]!).map((call) => call.params[0]),
        ["before", "after"],
      );
    });

    it("posts to the URL's path and query (provider URLs carry a key there)", async () => {
      const keyed = new RpcClient(`${node.url}/rpc/v1?api-key=secret`);
      extraClients.push(keyed);
      await keyed.call("getHealth", []);
      assert.equal(node.requests[0]!.url, "/rpc/v1?api-key=secret");
    });

    it("keeps the connection alive across requests, and close() releases it", async () => {
      for (let i = 0; i < 4; i += 1) await client.call("getSlot", [i]);
      assert.equal(node.requests.length, 4);
      assert.equal(node.connections, 1, "one keep-alive connection serves every request");

      assert.equal(node.openSockets.size, 1);
      const [socket] = node.openSockets;
      const released = new Promise<void>((resolve) => socket!.once("close", () => resolve()));
      client.close();
      await released;
      assert.equal(node.openSockets.size, 0, "close() ends the idle keep-alive connection");
    });
  });

  describe("JSON-RPC errors", () => {
    it("rejects only the refused call with an RpcError carrying code, message and data", async () => {
      const logs = ["Program 11111111111111111111111111111111 invoke [1]", "Program log: already processed"];
      node.answer = (call) =>
        call.method === "sendTransaction"
          ? {
              jsonrpc: "2.0",
              id: call.id,
              error: {
                code: -32002,
                message: "Transaction simulation failed: This transaction has already been processed",
                data: { err: "AlreadyProcessed", logs },
              },
            }
          : echo(call);

      const before = client.call("getSlot", ["before"]);
      const refused = client.call("sendTransaction", ["AQID"]);
      const after = client.getBlockHeight("confirmed");
      const error = await rejection(refused);

      assert.ok(error instanceof RpcError, `RpcError expected, got ${error.constructor.name}`);
      assert.ok(!(error instanceof RpcUnavailableError));
      assert.equal(error.code, -32002);
      assert.equal(error.message, "Transaction simulation failed: This transaction has already been processed");
      assert.deepEqual(error.data, { err: "AlreadyProcessed", logs });
      assert.deepEqual(await before, { method: "getSlot", params: ["before"] });
      assert.deepEqual(await after, { method: "getBlockHeight", params: [{ commitment: "confirmed" }] });
      assert.equal(node.requests.length, 1, "the three calls shared one request");
    });

    it("rejects a lone call's JSON-RPC error with an RpcError, data undefined when absent", async () => {
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "Method not found" } });
      const error = await rejection(client.call("noSuchMethod", []));
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, -32601);
      assert.equal(error.message, "Method not found");
      assert.equal(error.data, undefined);
    });

    it("takes a JSON-RPC error as an RpcError whatever the HTTP status", async () => {
      node.handle = (exchange, res) => {
        const call = exchange.body as JsonRpcCall;
        sendJson(res, 429, { jsonrpc: "2.0", id: call.id, error: { code: -32005, message: "rate limited", data: { retry: 1 } } });
      };
      const error = await rejection(client.call("getSlot", []));
      assert.ok(error instanceof RpcError, `RpcError expected, got ${error.constructor.name}: ${error.message}`);
      assert.equal(error.code, -32005);
      assert.deepEqual(error.data, { retry: 1 });
    });
  });

  describe("transport failures", () => {
    it("rejects every call of the request with RpcUnavailableError on HTTP 500 with a non-JSON body", async () => {
      node.handle = (_exchange, res) => {
        res.writeHead(500, { "content-type": "text/html" });
        res.end("<html><body>Internal Server Error</body></html>");
      };
      const errors = await Promise.all([
        unavailable(client.call("getSlot", [])),
        unavailable(client.sendTransaction("AQID")),
        unavailable(client.getBlockHeight("confirmed")),
      ]);
      assert.equal(node.requests.length, 1);
      for (const error of errors) assert.match(error.message, /500/);
    });

    it("rejects with RpcUnavailableError on HTTP 200 with a body that is not JSON", async () => {
      node.handle = (_exchange, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("ok");
      };
      await Promise.all([unavailable(client.call("getSlot", [])), unavailable(client.call("getSlot", []))]);
      node.handle = (_exchange, res) => {
        res.writeHead(200);
        res.end();
      };
      await unavailable(client.call("getSlot", []));
    });

    it("rejects with RpcUnavailableError on a non-200 status even when the body is JSON without an error", async () => {
      node.handle = (exchange, res) => {
        const body = (exchange.body as JsonRpcCall[]).map((call) => ({ jsonrpc: "2.0", id: call.id, result: 1 }));
        sendJson(res, 503, body);
      };
      const errors = await Promise.all([unavailable(client.call("getSlot", [])), unavailable(client.call("getSlot", []))]);
      for (const error of errors) assert.match(error.message, /503/);

      node.handle = (_exchange, res) => sendJson(res, 502, { message: "bad gateway" });
      await unavailable(client.call("getSlot", []));
    });

    it("rejects every call with RpcUnavailableError when the node destroys the socket", async () => {
      node.handle = (_exchange, _res, req) => req.socket.destroy();
      await Promise.all([
        unavailable(client.call("getSlot", [])),
        unavailable(client.call("getBalance", [])),
        unavailable(client.call("getBlockHeight", [])),
      ]);
      assert.equal(node.requests.length, 1);

      // The client recovers on a fresh connection once the node behaves again.
      node.handle = (exchange, res) => sendJson(res, 200, echo(exchange.body as JsonRpcCall));
      assert.deepEqual(await client.call("getSlot", ["again"]), { method: "getSlot", params: ["again"] });
    });

    it("rejects with RpcUnavailableError when the socket closes in the middle of the body", async () => {
      node.handle = (_exchange, res, req) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": 1000 });
        res.write('[{"jsonrpc":"2.0","id":1,"res', () => setTimeout(() => req.socket.destroy(), 20));
      };
      await Promise.all([unavailable(client.call("getSlot", [])), unavailable(client.call("getSlot", []))]);
    });

    it("rejects every call with RpcUnavailableError when nothing listens on the port", async () => {
      const gone = await FakeNode.start();
      const url = gone.url;
      await gone.close();
      const orphan = new RpcClient(url);
      extraClients.push(orphan);
      const errors = await Promise.all([
        unavailable(orphan.call("getSlot", [])),
        unavailable(orphan.getBlockHeight("confirmed")),
      ]);
      for (const error of errors) assert.match(error.message, /ECONNREFUSED/);
    });

    it("rejects every call with RpcUnavailableError when the node never answers within the timeout", async () => {
      node.handle = () => {}; // holds the request open
      const impatient = new RpcClient(node.url, 200);
      extraClients.push(impatient);
      const started = performance.now();
      const errors = await Promise.all([
        unavailable(impatient.call("getSlot", [])),
        unavailable(impatient.call("getSlot", [])),
      ]);
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 150, `gave up after ${elapsed} ms, before the timeout`);
      assert.ok(elapsed < 5000, `gave up after ${elapsed} ms, long after the timeout`);
      for (const error of errors) assert.match(error.message, /200 ms/);
      assert.equal(node.requests.length, 1);
    });

    it("does not let one request's failure touch the calls of another request", async () => {
      node.handle = (exchange, res, req) => {
        if (callsOf(exchange)[0]!.params[0] === "doomed") req.socket.destroy();
        else sendJson(res, 200, Array.isArray(exchange.body) ? (exchange.body as JsonRpcCall[]).map(echo) : echo(exchange.body as JsonRpcCall));
      };
      const doomed = unavailable(client.call("getSlot", ["doomed"]));
      await nextTurn();
      const fine = client.call("getSlot", ["fine"]);
      await doomed;
      assert.deepEqual(await fine, { method: "getSlot", params: ["fine"] });
    });
  });

  describe("incomplete answers", () => {
    it("rejects with RpcUnavailableError only the call whose id is missing from the batch answer", async () => {
      node.handle = (exchange, res) => {
        const calls = exchange.body as JsonRpcCall[];
        sendJson(
          res,
          200,
          calls.filter((call) => call.params[0] !== "dropped").map(echo),
        );
      };
      const first = client.call("getSlot", ["kept 1"]);
      const dropped = client.call("getSlot", ["dropped"]);
      const last = client.call("getSlot", ["kept 2"]);

      const error = await unavailable(dropped);
      assert.match(error.message, /getSlot/);
      assert.deepEqual(await first, { method: "getSlot", params: ["kept 1"] });
      assert.deepEqual(await last, { method: "getSlot", params: ["kept 2"] });
    });

    it("rejects with RpcUnavailableError an answer that has neither result nor error", async () => {
      node.handle = (exchange, res) => {
        const calls = exchange.body as JsonRpcCall[];
        sendJson(
          res,
          200,
          calls.map((call) => (call.params[0] === "empty" ? { jsonrpc: "2.0", id: call.id } : echo(call))),
        );
      };
      const empty = client.call("getSlot", ["empty"]);
      const full = client.call("getSlot", ["full"]);
      await unavailable(empty);
      assert.deepEqual(await full, { method: "getSlot", params: ["full"] });
    });

    it("rejects a lone call answered with someone else's id", async () => {
      node.handle = (exchange, res) => {
        const call = exchange.body as JsonRpcCall;
        sendJson(res, 200, { jsonrpc: "2.0", id: call.id + 1000, result: "not yours" });
      };
      await unavailable(client.call("getSlot", []));
    });

    it("settles every call when the node answers null, or a batch with null in it", async () => {
      node.handle = (exchange, res) => {
        if (Array.isArray(exchange.body)) {
          const calls = exchange.body as JsonRpcCall[];
          sendJson(res, 200, [null, ...calls.slice(1).map(echo)]);
        } else sendJson(res, 200, null);
      };
      await unavailable(client.call("getSlot", ["lone"]));
      const first = client.call("getSlot", ["first"]);
      const second = client.call("getSlot", ["second"]);
      await unavailable(first);
      assert.deepEqual(await second, { method: "getSlot", params: ["second"] });
    });
  });

  describe("helpers", () => {
    it("getMultipleAccounts sends base58 addresses with the commitment and decodes base64 data, null kept", async () => {
      const addresses = [
        Keypair.generate().publicKey,
        new PublicKey("11111111111111111111111111111111"),
        Keypair.generate().publicKey,
        Keypair.generate().publicKey,
      ];
      const owner = Keypair.generate().publicKey.toBase58();
      const first = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
      const third = Buffer.from("some account bytes \u00e9\u0000", "utf8");
      node.answer = (call) => ({
        jsonrpc: "2.0",
        id: call.id,
        result: {
          context: { apiVersion: "2.1.0", slot: 123 },
          value: [
            { data: [first.toString("base64"), "base64"], executable: false, lamports: 1_000_000, owner, rentEpoch: 0, space: first.length },
            null,
            { data: [third.toString("base64"), "base64"], executable: false, lamports: 2, owner, rentEpoch: 0, space: third.length },
            { data: ["", "base64"], executable: true, lamports: 0, owner, rentEpoch: 0, space: 0 },
          ],
        },
      });

      const accounts = await client.getMultipleAccounts(addresses, "confirmed");

      const call = node.requests[0]!.body as JsonRpcCall;
      assert.equal(call.method, "getMultipleAccounts");
      assert.deepEqual(call.params, [addresses.map((address) => address.toBase58()), { commitment: "confirmed", encoding: "base64" }]);
      assert.equal(accounts.length, 4);
      assert.ok(Buffer.isBuffer(accounts[0]!.data));
      assert.deepEqual(accounts[0], { data: first, owner, lamports: 1_000_000 });
      assert.equal(accounts[1], null);
      assert.ok(accounts[2]!.data.equals(third));
      assert.deepEqual(accounts[2], { data: third, owner, lamports: 2 });
      assert.ok(Buffer.isBuffer(accounts[3]!.data));
      assert.equal(accounts[3]!.data.length, 0);
    });

    it("getMultipleAccounts passes the commitment it is given", async () => {
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: { context: { slot: 1 }, value: [null] } });
      assert.deepEqual(await client.getMultipleAccounts([Keypair.generate().publicKey], "processed"), [null]);
      assert.deepEqual((node.requests[0]!.body as JsonRpcCall).params[1], { commitment: "processed", encoding: "base64" });
    });

    it("sendTransaction sends the bytes with exactly the documented options and resolves to the signature", async () => {
      const signature = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: signature });
      const bytes = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]).toString("base64");

      assert.equal(await client.sendTransaction(bytes), signature);
      const call = node.requests[0]!.body as JsonRpcCall;
      assert.equal(call.method, "sendTransaction");
      assert.deepEqual(call.params, [
        bytes,
        { encoding: "base64", skipPreflight: false, preflightCommitment: "processed", maxRetries: 0 },
      ]);
    });

    it("getSignatureStatuses searches the transaction history and returns the value array", async () => {
      const statuses = [
        { slot: 10, confirmations: null, err: null, status: { Ok: null }, confirmationStatus: "finalized" },
        null,
        { slot: 11, confirmations: 1, err: { InstructionError: [0, { Custom: 6001 }] }, confirmationStatus: "processed" },
      ];
      node.answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: { context: { slot: 12 }, value: statuses } });
      const signatures = ["sigA", "sigB", "sigC"];

      assert.deepEqual(await client.getSignatureStatuses(signatures), statuses);
      const call = node.requests[0]!.body as JsonRpcCall;
      assert.equal(call.method, "getSignatureStatuses");
      assert.deepEqual(call.params, [signatures, { searchTransactionHistory: true }]);
    });

    it("getLatestBlockhash and getBlockHeight pass the commitment and unwrap their results", async () => {
      node.answer = (call) =>
        call.method === "getLatestBlockhash"
          ? {
              jsonrpc: "2.0",
              id: call.id,
              result: { context: { slot: 5 }, value: { blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N", lastValidBlockHeight: 150 } },
            }
          : { jsonrpc: "2.0", id: call.id, result: 99 };

      const [blockhash, height] = await Promise.all([client.getLatestBlockhash("processed"), client.getBlockHeight("finalized")]);

      assert.deepEqual(blockhash, { blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N", lastValidBlockHeight: 150 });
      assert.equal(height, 99);
      assert.equal(node.requests.length, 1, "helpers batch like plain calls");
      assert.deepEqual(
        (node.requests[0]!.body as JsonRpcCall[]).map((call) => [call.method, call.params]),
        [
          ["getLatestBlockhash", [{ commitment: "processed" }]],
          ["getBlockHeight", [{ commitment: "finalized" }]],
        ],
      );
    });

    it("helpers surface JSON-RPC errors as RpcError and transport failures as RpcUnavailableError", async () => {
      node.answer = (call) => ({
        jsonrpc: "2.0",
        id: call.id,
        error: { code: -32003, message: "Transaction signature verification failure" },
      });
      const refused = await rejection(client.sendTransaction("AQID"));
      assert.ok(refused instanceof RpcError);
      assert.equal(refused.code, -32003);

      node.handle = (_exchange, _res, req) => req.socket.destroy();
      await Promise.all([
        unavailable(client.getMultipleAccounts([Keypair.generate().publicKey], "confirmed")),
        unavailable(client.getSignatureStatuses(["sig"])),
        unavailable(client.getLatestBlockhash("confirmed")),
      ]);
    });
  });
});
