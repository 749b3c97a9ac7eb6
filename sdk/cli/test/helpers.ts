// Running commands in-process, a fake relayer with canned answers, and a creator service that
// follows the execute protocol (or breaks it on purpose).
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  REQUEST_SIGNATURE_HEADER,
  ed25519Sign,
  ed25519Verify,
  fromHex,
  signBatchDigest,
  signBatchItemDigest,
  signResult,
  toHex,
  verifyRequestSignature,
  type CreatorExecuteRequest,
  type SignBatchRequest,
} from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { run } from "../src/cli.js";

export interface Ran {
  code: number;
  out: string;
  err: string;
  /** What was written to stdout as is (a streamed output), in order. */
  written: string;
}

/**
 * Runs `agent-market ...argv` in this process, with its own home directory unless `env` names one.
 * `written` receives stdout's unbroken writes as they happen, for a test to watch them arrive.
 */
export async function cli(argv: string[], env: Record<string, string | undefined> = {}, written: string[] = []): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    write: (text) => written.push(text),
    env: { AGENT_MARKET_HOME: mkdtempSync(join(tmpdir(), "cli-home-")), ...env },
  });
  return { code, out: out.join("\n"), err: err.join("\n"), written: written.join("") };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "cli-test-"));
}

export interface Server {
  url: string;
  requests: { method: string; url: string; headers: IncomingMessage["headers"]; body: unknown }[];
  close(): Promise<void>;
}

/** An HTTP server answering with `handle`, recording every request. */
export async function serve(
  handle: (request: Server["requests"][number], raw: string, res: ServerResponse) => void,
): Promise<Server> {
  const requests: Server["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        body = raw;
      }
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      requests.push(request);
      handle(request, raw, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": "req_cli" }).end(JSON.stringify(body));
}

export type CreatorFault =
  | "none"
  | "accepts_unsigned"
  | "bad_output"
  | "wrong_key"
  | "no_sign_batch"
  | "signs_any_batch"
  | "wrong_batch_key"
  // Metered: 3 units a call, refusing a call that allows fewer as the creator kit does…
  | "metered"
  // …or answering as many as the call allows…
  | "metered_capped"
  // …or signing 3 whatever the call allows.
  | "metered_above_max"
  // Streams to a request accepting text/event-stream: its output's JSON text in chunks, signed…
  | "streams"
  // …or signed over another output than the one streamed…
  | "stream_forged"
  // …or with a gap in its seq.
  | "stream_gap";

/** What a metered fault's answer to `body` signs, or null to refuse it (500 invalid_output). */
function unitsOf(fault: CreatorFault, body: CreatorExecuteRequest): bigint | null | undefined {
  const allowed = body.max_units === undefined ? undefined : BigInt(body.max_units);
  switch (fault) {
    case "metered":
      return allowed !== undefined && allowed < 3n ? null : 3n;
    case "metered_capped":
      return allowed !== undefined && allowed < 3n ? allowed : 3n;
    case "metered_above_max":
      return 3n;
    default:
      return undefined;
  }
}

export const ECHO_INPUT_SCHEMA = {
  type: "object",
  required: ["language"],
  properties: { language: { type: "string", enum: ["en", "fr"] }, max_words: { type: "integer", minimum: 1 } },
};
export const ECHO_OUTPUT_SCHEMA = {
  type: "object",
  required: ["echoed"],
  additionalProperties: false,
  properties: { echoed: { type: "string" } },
};

/** A creator service on the protocol: checks the marketplace signature, refuses replays, signs results. */
export async function creatorService(marketplace: Keypair, signing: Keypair, fault: CreatorFault = "none"): Promise<Server> {
  const seen = new Set<string>();
  const key = marketplace.publicKey.toBase58();
  return serve((request, raw, res) => {
    if (request.url === "/agent/health") return json(res, 200, { status: "ok", signing_key: signing.publicKey.toBase58() });
    const check = verifyRequestSignature(
      request.headers[REQUEST_SIGNATURE_HEADER] as string | undefined,
      { method: request.method, path: request.url, body: raw },
      { marketplace_key: key, now_secs: Date.now() / 1000 },
    );
    if (!check.ok && fault !== "accepts_unsigned") return json(res, 401, { error: { code: check.reason } });
    if (request.url === "/agent/sign-batch") return signBatch(request.body as SignBatchRequest, signing, fault, res);
    const body = request.body as CreatorExecuteRequest;
    if (fault !== "accepts_unsigned") {
      if (seen.has(body.execution_id)) return json(res, 409, { error: { code: "replayed_request" } });
      seen.add(body.execution_id);
    }
    const output = fault === "bad_output" ? { echoed: 42 } : { echoed: body.task };
    const signer = fault === "wrong_key" ? Keypair.generate() : signing;
    const units = unitsOf(fault, body);
    if (units === null) return json(res, 500, { error: { code: "invalid_output" } });
    const streaming = fault === "streams" || fault === "stream_forged" || fault === "stream_gap";
    if (streaming && String(request.headers.accept).includes("text/event-stream")) return stream(res, body, output, signing, fault);
    json(res, 200, signResult(signer.secretKey, body, output, units));
  });
}

/** A streamed answer: `output`'s JSON text in three chunks, then a result signed as `fault` has it. */
function stream(res: ServerResponse, body: CreatorExecuteRequest, output: unknown, signing: Keypair, fault: CreatorFault): void {
  const text = JSON.stringify(output);
  const third = Math.ceil(text.length / 3);
  const chunks = [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)];
  const signed = signResult(signing.secretKey, body, fault === "stream_forged" ? { echoed: "what was not sent" } : output);
  const { output: _sent, ...result } = signed;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  chunks.forEach((chunk, i) => {
    const seq = fault === "stream_gap" && i === 2 ? 3 : i;
    res.write(`: keep-alive\n\nevent: output\ndata: ${JSON.stringify({ seq, text: chunk })}\n\n`);
  });
  res.end(`event: result\r\ndata: ${JSON.stringify({ ...result, format: "json" })}\r\n\r\n`);
}

/** `/sign-batch` as the protocol has it: only results it signed itself, one signature over their batch digest. */
function signBatch(batch: SignBatchRequest, signing: Keypair, fault: CreatorFault, res: ServerResponse): void {
  if (fault === "no_sign_batch") return json(res, 404, { error: { code: "not_found" } });
  const unknown = batch.items.some(
    (item) => !ed25519Verify(fromHex(item.signature), signBatchItemDigest(batch.agent, item), signing.publicKey.toBytes()),
  );
  if (unknown && fault !== "signs_any_batch") return json(res, 422, { error: { code: "unknown_result_signature" } });
  const digest = signBatchDigest(batch);
  const signer = fault === "wrong_batch_key" ? Keypair.generate() : signing;
  json(res, 200, { digest: toHex(digest), signature: toHex(ed25519Sign(signer.secretKey, digest)) });
}

/** The charge of a settled call at a fixed 0.250000 USDC, as the API shows it. */
export const FIXED_CHARGE = {
  amount_usdc: "0.250000",
  charged_usdc: "0.250000",
  held_usdc: "0.250000",
  returned_usdc: "0.000000",
  units: "0",
  price_per_unit_usdc: null,
  max_units: null,
  creator_share_usdc: "0.247500",
  fee_usdc: "0.002500",
  currency: "USDC",
  covered_by_subscription: false,
};

/** The charge of a settled metered call: 3 of its 100 units at 0.001000 USDC, the rest returned. */
export const METERED_CHARGE = {
  amount_usdc: "0.003000",
  charged_usdc: "0.003000",
  held_usdc: "0.100000",
  returned_usdc: "0.097000",
  units: "3",
  price_per_unit_usdc: "0.001000",
  max_units: "100",
  creator_share_usdc: "0.002970",
  fee_usdc: "0.000030",
  currency: "USDC",
  covered_by_subscription: false,
};
