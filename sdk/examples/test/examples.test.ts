// The example agents over real HTTP on 127.0.0.1, called the way the marketplace calls them.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  ed25519PublicKey,
  formatAddress,
  formatExecutionId,
  listingHash,
  requestHash,
  signRequest,
  toHex,
  verifyCreatorResponse,
  type CreatorExecuteRequest,
} from "@agent-market/program";

import {
  echoListing,
  echoOutputSchema,
  exampleAgents,
  meteredTextStatsListing,
  startEcho,
  startMeteredTextStats,
  startTextStats,
  streamWords,
  textStatsListing,
  textStatsOutputSchema,
  wordStreamListing,
  WORD_DELAY_MS,
  type RunningAgent,
} from "../src/index.js";

const marketplaceSeed = new Uint8Array(32).fill(0x6d);
const marketplaceKey = formatAddress(ed25519PublicKey(marketplaceSeed));
const creatorSeed = new Uint8Array(32).fill(0x63);
const creatorPublicKey = ed25519PublicKey(creatorSeed);
/** The agent account the example agents are started for. */
const agentAddress = formatAddress(new Uint8Array(32).fill(0x61));

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
const validEcho = ajv.compile(echoOutputSchema);
const validTextStats = ajv.compile(textStatsOutputSchema);

interface Call {
  status: number;
  request: CreatorExecuteRequest;
  body: any;
}

/** A metered call's terms, as the relayer sends them: at most 3 units of 0.001000 USDC. */
const METERED = { max_units: "3", price_per_unit_usdc: "0.001000" };

/**
 * Calls `agent` as the marketplace would: a fresh execution, signed now, due in a minute; a
 * metered one with `terms`.
 */
async function call(
  agent: RunningAgent,
  task: string,
  parameters: Record<string, unknown>,
  terms: Pick<CreatorExecuteRequest, "max_units" | "price_per_unit_usdc"> = {},
  accept = "application/json",
): Promise<Call> {
  const { request, response } = await send(agent, task, parameters, terms, accept);
  return { status: response.status, request, body: await response.json() };
}

/** The signed request `call` sends, and the response with its body unread (a stream, say). */
async function send(
  agent: RunningAgent,
  task: string,
  parameters: Record<string, unknown>,
  terms: Pick<CreatorExecuteRequest, "max_units" | "price_per_unit_usdc">,
  accept: string,
): Promise<{ request: CreatorExecuteRequest; response: Response }> {
  const request: CreatorExecuteRequest = {
    protocol_version: 2,
    execution_id: formatExecutionId(randomBytes(16)),
    agent: agentAddress,
    escrow_nonce: "7",
    payer: formatAddress(randomBytes(32)),
    payer_token_account: formatAddress(randomBytes(32)),
    amount_usdc: "0.010000",
    network: "devnet",
    task,
    parameters,
    request_hash: toHex(requestHash(task, parameters)),
    deadline: new Date(Date.now() + 60_000).toISOString(),
    ...terms,
  };
  const body = JSON.stringify(request);
  const header = signRequest(marketplaceSeed, {
    method: "POST",
    path: "/execute",
    body,
    timestamp_secs: Math.floor(Date.now() / 1000),
  });
  const response = await fetch(`${agent.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", "agentmarket-signature": header, accept },
    body,
  });
  return { request, response };
}

/** A verified answer signing `units`: 0 (none answered) for the fixed-price examples. */
function assertSigned(result: Call, units = 0n): void {
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const check = verifyCreatorResponse(result.body, { ...result.request, signing_key: creatorPublicKey });
  assert.ok(check.ok, check.ok ? "" : check.message);
  assert.equal(check.units, units);
}

const SAMPLE = "The cat sat on the mat. The dog barked!";

describe("example agents over HTTP", () => {
  let echo: RunningAgent;
  let textStats: RunningAgent;
  let meteredTextStats: RunningAgent;

  before(async () => {
    echo = await startEcho({ signingKey: creatorSeed, marketplaceKey, agents: [agentAddress] });
    textStats = await startTextStats({ signingKey: creatorSeed, marketplaceKey, agents: [agentAddress] });
    // Its refusals are expected here: no need to print them.
    meteredTextStats = await startMeteredTextStats({ signingKey: creatorSeed, marketplaceKey, agents: [agentAddress], onError: () => {} });
  });

  after(async () => {
    await echo.close();
    await textStats.close();
    await meteredTextStats.close();
  });

  it("start on 127.0.0.1 and sign with the given key", async () => {
    for (const agent of [echo, textStats, meteredTextStats]) {
      assert.match(agent.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(agent.publicKey, formatAddress(creatorPublicKey));
      const health = await (await fetch(`${agent.url}/health`)).json();
      assert.deepEqual(health, { status: "ok", signing_key: agent.publicKey });
    }
  });

  describe("echo", () => {
    for (const [task, parameters] of [
      ["say it back", { message: "hello", n: [1, 2.5, null, true] }],
      ["", {}],
      ["naïve ☕ 😀", { nested: { deeper: { deepest: "ok" } } }],
    ] as [string, Record<string, unknown>][]) {
      it(`returns task, parameters and length: ${JSON.stringify(task)}`, async () => {
        const result = await call(echo, task, parameters);
        assertSigned(result);
        assert.deepEqual(result.body.output, { task, parameters, length: [...task].length });
        assert.ok(validEcho(result.body.output), JSON.stringify(validEcho.errors));
      });
    }

    it("answers the same output, hash and signature for the same request", async () => {
      const [a, b] = await Promise.all([call(echo, "same", { x: 1 }), call(echo, "same", { x: 1 })]);
      assert.deepEqual(a.body.output, b.body.output);
      assert.equal(a.body.result_hash, b.body.result_hash);
    });
  });

  describe("text-stats", () => {
    it("measures a known text, filling in the defaults", async () => {
      const result = await call(textStats, "measure", { text: SAMPLE });
      assertSigned(result);
      assert.ok(validTextStats(result.body.output), JSON.stringify(validTextStats.errors));
      assert.deepEqual(result.body.output, {
        characters: { total: 39, without_whitespace: 31, letters: 29, digits: 0, whitespace: 8, punctuation: 2 },
        words: 9,
        unique_words: 7,
        sentences: 2,
        paragraphs: 1,
        syllables: 9,
        average_word_length: 3.22,
        average_sentence_length: 4.5,
        reading_time_secs: 2,
        flesch_reading_ease: 117.67,
        top_words: [
          { word: "barked", count: 1 },
          { word: "cat", count: 1 },
          { word: "dog", count: 1 },
          { word: "mat", count: 1 },
          { word: "sat", count: 1 },
        ],
      });
    });

    it("follows top_n and stopwords", async () => {
      const result = await call(textStats, "measure", { text: SAMPLE, top_n: 2, stopwords: false });
      assertSigned(result);
      assert.deepEqual(result.body.output.top_words, [
        { word: "the", count: 3 },
        { word: "barked", count: 1 },
      ]);
    });

    it("measures the longest text its schema allows", async () => {
      const text = "Lorem ipsum dolor sit amet. ".repeat(4000).slice(0, 100_000);
      const result = await call(textStats, "measure", { text });
      assertSigned(result);
      assert.ok(validTextStats(result.body.output), JSON.stringify(validTextStats.errors));
      assert.equal(result.body.output.characters.total, 100_000);
    });

    for (const [what, parameters] of [
      ["a text past 100000 characters", { text: "a".repeat(100_001) }],
      ["no text", { top_n: 3 }],
      ["top_n 0", { text: "a", top_n: 0 }],
      ["top_n 51", { text: "a", top_n: 51 }],
      ["a fractional top_n", { text: "a", top_n: 2.5 }],
      ["stopwords as a string", { text: "a", stopwords: "yes" }],
      ["an unknown parameter", { text: "a", language: "en" }],
    ] as [string, Record<string, unknown>][]) {
      it(`refuses ${what}: 400 invalid_parameters`, async () => {
        const result = await call(textStats, "measure", parameters);
        assert.equal(result.status, 400);
        assert.equal(result.body.error.code, "invalid_parameters");
      });
    }
  });

  describe("metered-text-stats", () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}x`).join(" ");

    it("answers text-stats's figures and signs a unit per started 100 words", async () => {
      for (const [count, units] of [[1, 1n], [100, 1n], [101, 2n], [300, 3n]] as const) {
        const result = await call(meteredTextStats, "measure", { text: words(count) }, METERED);
        assertSigned(result, units);
        assert.equal(result.body.output.words, count);
        assert.equal(result.body.units, String(units));
      }
    });

    it("charges nothing for a text without words", async () => {
      const result = await call(meteredTextStats, "measure", { text: "42 …" }, METERED);
      assertSigned(result, 0n);
    });

    it("refuses a text of more units than the call pays for, unsigned: 500 handler_error", async () => {
      const result = await call(meteredTextStats, "measure", { text: words(301) }, METERED);
      assert.equal(result.status, 500);
      assert.deepEqual(result.body, {
        error: { code: "handler_error", message: "the text is 4 units of 100 words; this call pays for at most 3 (300 words)" },
      });
    });
  });

  describe("word-stream", () => {
    let wordStream: RunningAgent;
    before(async () => {
      wordStream = await exampleAgents["word-stream"].start({ signingKey: creatorSeed, marketplaceKey, agents: [agentAddress] });
    });
    after(() => wordStream.close());

    it("streams its words one by one, WORD_DELAY_MS apart, then a result signed over the text", async () => {
      const { request, response } = await send(wordStream, "tell", { count: 5 }, {}, "text/event-stream, application/json");
      assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
      const events: { event: string; data: any; at: number }[] = [];
      let buffered = "";
      const decoder = new TextDecoder();
      for await (const bytes of response.body!) {
        buffered += decoder.decode(bytes, { stream: true });
        for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
          const [eventLine, dataLine] = buffered.slice(0, end).split("\n");
          events.push({ event: eventLine!.slice(7), data: JSON.parse(dataLine!.slice(6)), at: Date.now() });
          buffered = buffered.slice(end + 2);
        }
      }
      const words = streamWords("tell", 5);
      assert.deepEqual(
        events.slice(0, 5).map((e) => [e.event, e.data.seq, e.data.text]),
        words.map((word, i) => ["output", i, i === 0 ? word : ` ${word}`]),
      );
      // Arrived apart, not in one piece at the end (timers may fire a little early).
      assert.ok(events[4]!.at - events[0]!.at >= 4 * WORD_DELAY_MS - 10, `${events[4]!.at - events[0]!.at} ms`);
      const result = events[5]!;
      assert.equal(result.event, "result");
      assertSigned({ status: 200, request, body: { ...result.data, output: words.join(" ") } });
    });

    it("answers the same text at once, in JSON, to a call that does not accept a stream", async () => {
      const result = await call(wordStream, "tell", { count: 5 });
      assertSigned(result);
      assert.equal(result.body.output, streamWords("tell", 5).join(" "));
      assert.equal((await call(wordStream, "tell", {})).body.output.split(" ").length, 20, "20 words by default");
    });
  });

  it("exampleAgents starts each agent, whose listing names its schemas and whose answer signs units as its pricing has them", async () => {
    for (const [slug, example] of Object.entries(exampleAgents)) {
      const agent = await example.start({ signingKey: creatorSeed, marketplaceKey, agents: [agentAddress] });
      try {
        const isMetered = example.pricing.model === "metered";
        const parameters = slug === "echo" ? {} : slug === "word-stream" ? { count: 3 } : { text: "One. Two." };
        const result = await call(agent, "listed", parameters, isMetered ? METERED : {});
        assertSigned(result, isMetered ? 1n : 0n);
        assert.ok(ajv.validate(example.listing.output_schema as object, result.body.output));
      } finally {
        await agent.close();
      }
    }
  });
});

describe("listings", () => {
  for (const listing of [echoListing, textStatsListing, meteredTextStatsListing, wordStreamListing]) {
    it(`${listing.name}: five fields, valid JSON Schemas, a stable hash`, () => {
      assert.deepEqual(Object.keys(listing).sort(), ["description", "input_schema", "name", "output_schema", "tags"]);
      assert.ok(listing.name.length > 0 && listing.description.length > 0 && listing.tags.length > 0);
      for (const schema of [listing.input_schema, listing.output_schema]) {
        assert.ok(ajv.validateSchema(schema as object), JSON.stringify(ajv.errors));
      }
      assert.equal(toHex(listingHash(JSON.parse(JSON.stringify(listing)))), toHex(listingHash(listing)));
    });
  }
});

describe("the command line", () => {
  it("serves an agent with the key of a keypair file and prints where", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-market-examples-"));
    const keyFile = join(dir, "id.json");
    writeFileSync(keyFile, JSON.stringify([...creatorSeed, ...creatorPublicKey]));
    const entry = new URL("../src/echo.ts", import.meta.url).pathname;
    const child = spawn(process.execPath, ["--import", "tsx", entry, "--port", "0", "--key", keyFile, "--agent", agentAddress], {
      env: { ...process.env, AGENT_MARKET_MARKETPLACE_KEY: marketplaceKey },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
      const started = JSON.parse(line) as { agent: string; url: string; signing_key: string; listing_hash: string };
      assert.equal(started.agent, "echo");
      assert.equal(started.signing_key, formatAddress(creatorPublicKey));
      assert.equal(started.listing_hash, toHex(listingHash(echoListing)));
      const agent: RunningAgent = {
        url: started.url,
        publicKey: started.signing_key,
        keyProof: () => "",
        close: async () => {},
      };
      assertSigned(await call(agent, "from the command line", { ok: true }));
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      assert.equal(await exited, 0);
    }
  });
});
