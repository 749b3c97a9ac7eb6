// The indexer's calls to a rate-limited RPC provider (a stand-in HTTP server here, the provider
// being outside): they keep to INDEXER_RPC_CALLS_PER_SECOND, counting each call of a batch, and a
// 429 is waited out, as its Retry-After asks or else with a doubling backoff, then sent again.
import { strict as assert } from "node:assert";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { RATE_LIMITED_ATTEMPTS, RpcError, SolanaRpc } from "../src/ingest/rpc.js";

interface Seen {
  at_ms: number;
  calls: number;
}

/** A provider that answers 429 (with `retryAfter` when given) to the first `limited` requests. */
async function provider(options: { limited: number; retryAfter?: string }): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const calls = JSON.parse(Buffer.concat(chunks).toString()) as { id: number }[];
      seen.push({ at_ms: performance.now(), calls: calls.length });
      if (seen.length <= options.limited) {
        response.writeHead(429, options.retryAfter === undefined ? {} : { "retry-after": options.retryAfter }).end("Too Many Requests");
        return;
      }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(calls.map(({ id }) => ({ jsonrpc: "2.0", id, result: 42 }))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

describe("the indexer's RPC calls: budget and 429s", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });
  const start = async (options: Parameters<typeof provider>[0]) => {
    const started = await provider(options);
    servers.push(started.server);
    return started;
  };

  it("waits as long as a 429's Retry-After asks, then sends again and answers", async () => {
    const { url, seen } = await start({ limited: 1, retryAfter: "1" });
    assert.equal(await new SolanaRpc(url).getSlot("confirmed"), 42);
    assert.equal(seen.length, 2);
    assert.ok(seen[1]!.at_ms - seen[0]!.at_ms >= 990, `sent again after ${seen[1]!.at_ms - seen[0]!.at_ms} ms`);
  });

  it("backs off, doubling, when a 429 names no wait", async () => {
    const { url, seen } = await start({ limited: 2 });
    assert.equal(await new SolanaRpc(url).getSlot("confirmed"), 42);
    assert.equal(seen.length, 3);
    const gaps = [seen[1]!.at_ms - seen[0]!.at_ms, seen[2]!.at_ms - seen[1]!.at_ms];
    assert.ok(gaps[0]! >= 245 && gaps[1]! >= 495, `waited ${gaps.join(" and ")} ms`);
  });

  it(`gives the caller the 429 after ${RATE_LIMITED_ATTEMPTS} tries, no more`, async () => {
    const { url, seen } = await start({ limited: 1_000, retryAfter: "0" });
    await assert.rejects(new SolanaRpc(url).getSlot("confirmed"), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, 429);
      return true;
    });
    assert.equal(seen.length, RATE_LIMITED_ATTEMPTS);
  });

  it("keeps to its calls a second, each call of a batch counted, however many readers ask at once", async () => {
    const { url, seen } = await start({ limited: 0 });
    const rpc = new SolanaRpc(url, { calls_per_second: 20 });
    // Ten readers at once, each a batch of 5 calls: 50 calls, 2.5 s of the budget.
    await Promise.all(Array.from({ length: 10 }, () => rpc.batch(Array.from({ length: 5 }, () => ["getSlot", []] as [string, unknown[]]))));
    assert.equal(seen.reduce((sum, request) => sum + request.calls, 0), 50);
    for (const first of seen) {
      const inSecond = seen.filter((request) => request.at_ms >= first.at_ms && request.at_ms < first.at_ms + 1000);
      const calls = inSecond.reduce((sum, request) => sum + request.calls, 0);
      // A batch booked at the end of a second may start within it: one batch over at most.
      assert.ok(calls <= 20 + 5, `${calls} calls within a second`);
    }
    assert.ok(seen.at(-1)!.at_ms - seen[0]!.at_ms >= 2250 - 10, "45 calls after the first batch take 2.25 s at 20 a second");
  });

  it("makes no wait of its own without a budget", async () => {
    const { url, seen } = await start({ limited: 0 });
    const rpc = new SolanaRpc(url);
    await Promise.all(Array.from({ length: 10 }, () => rpc.getSlot("confirmed")));
    assert.equal(seen.length, 10);
  });
});
