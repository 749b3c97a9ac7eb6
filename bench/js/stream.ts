// Benchmark of streamed executions (POST /v1/agents/:agent_id/execute with Accept:
// text/event-stream) on this machine, in one process tree: localnet, the relayer as its own
// process, and the word-stream example agent in this process with the load generator. Three
// tables, each against a baseline measured in the same run:
//
// 1. Time to first output: from the `execution` event (the escrow is open; the relayer calls the
//    creator next) to the first `output` event, against a marketplace-signed streamed call straight
//    to the same creator, from its request to its first chunk. The difference is what the
//    marketplace adds to the creator's own first byte, at 1 and 32 concurrent streams.
// 2. Chunks forwarded: 32 concurrent streams of small chunks sent without pause; chunks per second
//    through the relayer and its CPU per chunk, net of its CPU for as many executions of one chunk
//    (the escrow, the creator's call, the settlement) measured just before.
// 3. Memory per open stream: the relayer's resident memory with 1,000 streams open whose readers
//    do not read, against the same relayer idle just before.
//
//   npm run bench:stream [-- --seconds 10] [--streams 1000]
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";

import { serverSentEvents } from "@agent-market/client";
import {
  EXECUTE_PROTOCOL_VERSION,
  formatExecutionId,
  requestHash,
  signRequest,
  toHex,
  REQUEST_SIGNATURE_HEADER,
} from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { startBenchMarketplace } from "./bench-marketplace.js";
import { cpuSeconds } from "./cpu.js";

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const SECONDS = argument("--seconds", 10);
const OPEN_STREAMS = argument("--streams", 1000);

const keptAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });

interface Streamed {
  /** From the request to its response's headers. */
  started_ms: number;
  /** From the request to the `execution` event (paid calls only). */
  opened_ms: number | null;
  /** From the request to the first output chunk. */
  first_output_ms: number | null;
  outputs: number;
  last: string;
}

/** POSTs a streamed call and reads its events to the end. */
function stream(url: string, headers: Record<string, string>, body: string): Promise<Streamed> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent: keptAlive,
        headers: { ...headers, accept: "text/event-stream", "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        const result: Streamed = { started_ms: performance.now() - t0, opened_ms: null, first_output_ms: null, outputs: 0, last: "" };
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`HTTP ${response.statusCode}`));
          return;
        }
        (async () => {
          for await (const { event } of serverSentEvents(response)) {
            const at = performance.now() - t0;
            if (event === "execution") result.opened_ms = at;
            if (event === "output") {
              result.first_output_ms ??= at;
              result.outputs += 1;
            }
            result.last = event;
          }
          resolve(result);
        })().catch(reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

/** Closed loop for `seconds`: each of `clients` starts its next stream when the last one ended. */
async function closedLoop(clients: number, seconds: number, call: () => Promise<Streamed>): Promise<{ runs: Streamed[]; elapsed_s: number }> {
  const runs: Streamed[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) runs.push(await call());
    }),
  );
  return { runs, elapsed_s: (performance.now() - started) / 1000 };
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((entry) => entry.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

async function main(): Promise<void> {
  const bench = await startBenchMarketplace({ name: "stream" });
  const { marketplace, data_dir } = bench;
  try {
    const agent = marketplace.agents.find((entry) => entry.slug === "word-stream");
    if (!agent) throw new Error("npm start lists no word-stream agent");
    const relayer_pid = marketplace.processes.relayer.pid!;
    const marketplaceKey = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(join(data_dir, "marketplace.json"), "utf8")) as number[]));
    const paid = (parameters: Record<string, unknown>) => () =>
      stream(`${marketplace.relayer_url}/v1/agents/${agent.address}/execute`, { authorization: `Bearer ${marketplace.api_key}` }, JSON.stringify({ task: "bench", parameters }));
    const direct = (parameters: Record<string, unknown>) => () => {
      // A request as the relayer sends it, for an escrow that does not exist: the creator streams
      // it all the same, and its signature settles nothing.
      const body = JSON.stringify({
        protocol_version: EXECUTE_PROTOCOL_VERSION,
        execution_id: formatExecutionId(randomBytes(16)),
        agent: agent.address,
        network: "devnet",
        escrow_nonce: "0",
        payer: PublicKey.default.toBase58(),
        payer_token_account: PublicKey.default.toBase58(),
        amount_usdc: "0.010000",
        task: "bench",
        parameters,
        request_hash: toHex(requestHash("bench", parameters)),
        deadline: new Date(Date.now() + 60_000).toISOString(),
      });
      const signature = signRequest(marketplaceKey.secretKey, { method: "POST", path: "/execute", body, timestamp_secs: Math.floor(Date.now() / 1000) });
      return stream(`${agent.url}/execute`, { [REQUEST_SIGNATURE_HEADER]: signature }, body);
    };

    // Warm: V8 optimises the hot paths after a few thousand calls.
    await closedLoop(32, 5, paid({ count: 2, delay_ms: 0 }));

    console.log(`streamed executions of the word-stream agent, against localnet (100 ms slots); ${SECONDS} s per row\n`);
    console.log("1. time to first output (ms): paid, from the escrow's opening to the first chunk; direct, a call straight to the creator");
    console.log("streams   paid p50   paid p99   direct p50   direct p99   added p50   added p99   streams done");
    for (const clients of [1, 32]) {
      const shape = { count: 3, delay_ms: 20 };
      const baseline = await closedLoop(clients, Math.min(SECONDS, 5), direct(shape));
      const measured = await closedLoop(clients, SECONDS, paid(shape));
      const paidFirst = measured.runs.filter((run) => run.last === "completed").map((run) => run.first_output_ms! - run.opened_ms!);
      const directFirst = baseline.runs.map((run) => run.first_output_ms!);
      const [p50, p99, d50, d99] = [quantile(paidFirst, 0.5), quantile(paidFirst, 0.99), quantile(directFirst, 0.5), quantile(directFirst, 0.99)];
      console.log(
        `${String(clients).padStart(7)}   ${p50.toFixed(2).padStart(8)}   ${p99.toFixed(2).padStart(8)}   ${d50.toFixed(2).padStart(10)}   ${d99.toFixed(2).padStart(10)}` +
          `   ${(p50 - d50).toFixed(2).padStart(9)}   ${(p99 - d99).toFixed(2).padStart(9)}   ${String(paidFirst.length).padStart(12)}`,
      );
    }

    console.log("\n2. chunks forwarded at 32 concurrent streams of 200 small chunks sent without pause");
    const cpuOf = async (parameters: Record<string, unknown>) => {
      const before = cpuSeconds(relayer_pid);
      const run = await closedLoop(32, SECONDS, paid(parameters));
      const completed = run.runs.filter((entry) => entry.last === "completed");
      return { cpu_s: cpuSeconds(relayer_pid) - before, executions: completed.length, chunks: completed.reduce((sum, entry) => sum + entry.outputs, 0), elapsed_s: run.elapsed_s };
    };
    const single = await cpuOf({ count: 1, delay_ms: 0 });
    const many = await cpuOf({ count: 200, delay_ms: 0 });
    const perExecution_s = single.cpu_s / single.executions;
    const chunkCpu_s = many.cpu_s - perExecution_s * many.executions;
    console.log("executions   chunks    chunks/s   relayer CPU   of which chunks   CPU per chunk   baseline: CPU per execution of 1 chunk");
    console.log(
      `${String(many.executions).padStart(10)}   ${String(many.chunks).padStart(6)}   ${(many.chunks / many.elapsed_s).toFixed(0).padStart(9)}` +
        `   ${many.cpu_s.toFixed(2).padStart(9)} s   ${chunkCpu_s.toFixed(2).padStart(13)} s   ${((chunkCpu_s * 1e6) / many.chunks).toFixed(1).padStart(10)} µs` +
        `   ${(perExecution_s * 1000).toFixed(2)} ms (${single.executions} executions)`,
    );

    console.log(`\n3. memory of the relayer with ${OPEN_STREAMS} streams open whose readers read nothing`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const idle = rssBytes(relayer_pid);
    const held: http.ClientRequest[] = [];
    let opened = 0;
    let peak = idle;
    await Promise.all(
      Array.from({ length: OPEN_STREAMS }, () =>
        new Promise<void>((resolve) => {
          const body = JSON.stringify({ task: "bench", parameters: { count: 200, delay_ms: 100 } });
          const request = http.request(
            `${marketplace.relayer_url}/v1/agents/${agent.address}/execute`,
            {
              method: "POST",
              agent: new http.Agent({ keepAlive: false }),
              headers: {
                authorization: `Bearer ${marketplace.api_key}`,
                accept: "text/event-stream",
                "content-type": "application/json",
                "content-length": Buffer.byteLength(body),
              },
            },
            (response) => {
              // Never read: the relayer must hold what it cannot send, up to its buffer.
              response.pause();
              opened += 1;
              resolve();
            },
          );
          request.on("error", () => resolve());
          request.end(body);
          held.push(request);
        }),
      ),
    );
    for (let i = 0; i < 10; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      peak = Math.max(peak, rssBytes(relayer_pid));
    }
    console.log("streams open   relayer RSS idle   with the streams   per open stream");
    console.log(
      `${String(opened).padStart(12)}   ${(idle / 2 ** 20).toFixed(1).padStart(13)} MiB   ${(peak / 2 ** 20).toFixed(1).padStart(12)} MiB   ${((peak - idle) / opened / 1024).toFixed(1).padStart(11)} KiB`,
    );
    for (const request of held) request.destroy();
  } finally {
    keptAlive.destroy();
    await bench.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
