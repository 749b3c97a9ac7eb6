// A creator's execution service for the tests: a real HTTP server on 127.0.0.1 that checks the
// marketplace's request signature and answers per `behaviour`, including the faults a
// misbehaving creator could commit.
import { createHash } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import {
  ed25519Sign,
  ed25519Verify,
  fromHex,
  outputHash,
  parseExecutionId,
  REQUEST_SIGNATURE_HEADER,
  signBatchDigest,
  signBatchItemDigest,
  signResult,
  toHex,
  verifyRequestSignature,
  type CreatorExecuteRequest,
  type SignBatchRequest,
} from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

export type CreatorBehaviour =
  | "echo"
  | "wrong_key"
  | "invalid_output"
  | "status_500"
  | "redirect"
  | "invalid_json"
  /** Never answers. */
  | "hang"
  /** Sends a valid answer one byte every 100 ms. */
  | "trickle"
  /** Sends 2 MiB. */
  | "huge"
  /** Answers with the signature of the previous execution it served. */
  | "replay_signature"
  /** Signs the v1 result digest, which binds no escrow (a kit from before execute protocol v2). */
  | "v1_digest"
  /** Answers correctly after `delay_ms`. */
  | "slow"
  /** Streams its answer when the request accepts it (JSON chunks of the output, format "json"), else answers JSON. */
  | "stream"
  /** Streams half the chunks, then drops the connection. */
  | "stream_break"
  /** Streams half the chunks, then goes silent. */
  | "stream_stall"
  /** Streams the output, then signs another one. */
  | "stream_bad_signature"
  /** Streams 2 MiB of chunks. */
  | "stream_huge"
  /** Streams, and signs, an output the listing's schema refuses. */
  | "stream_invalid_output";

export interface CreatorServer {
  url: string;
  signing: Keypair;
  /** Requests it received, with whether the marketplace signature verified. */
  received: { body: CreatorExecuteRequest; signature_ok: boolean }[];
  behaviour: CreatorBehaviour;
  delay_ms: number;
  /** Answers POST /sign-batch (docs/execute-protocol.md) when set; a 404 otherwise, as a server without it. */
  sign_batch: boolean;
  /** The batches it signed, by their item counts. */
  batches_signed: number[];
  /** Between two chunks of a streamed answer. */
  chunk_delay_ms: number;
  /** The units a metered answer reports for a request; none (a fixed-price answer) when unset. */
  units: ((request: CreatorExecuteRequest) => bigint) | undefined;
  close(): Promise<void>;
}

export async function startCreator(marketplaceKey: string, behaviour: CreatorBehaviour = "echo"): Promise<CreatorServer> {
  const signing = Keypair.generate();
  const received: CreatorServer["received"] = [];
  const state: { behaviour: CreatorBehaviour; delay_ms: number; chunk_delay_ms: number; sign_batch: boolean; units: CreatorServer["units"] } = {
    behaviour,
    delay_ms: 1_000,
    chunk_delay_ms: 20,
    sign_batch: false,
    units: undefined,
  };
  const batches_signed: number[] = [];
  let previousSignature: string | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const check = verifyRequestSignature(
        req.headers[REQUEST_SIGNATURE_HEADER] as string | undefined,
        { method: req.method ?? "", path: req.url ?? "", body: raw },
        { marketplace_key: marketplaceKey, now_secs: Math.floor(Date.now() / 1000) },
      );
      if (req.url?.endsWith("/sign-batch")) {
        if (!state.sign_batch || !check.ok) {
          res.writeHead(state.sign_batch ? 401 : 404, { "content-type": "application/json" }).end("{}");
          return;
        }
        const batch = JSON.parse(raw.toString("utf8")) as SignBatchRequest;
        // Only results it signed itself, as the creator kit checks.
        const own = batch.items.every((item) =>
          ed25519Verify(fromHex(item.signature), signBatchItemDigest(batch.agent, item), signing.publicKey.toBytes()),
        );
        if (!own) {
          res.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_signed_here" } }));
          return;
        }
        batches_signed.push(batch.items.length);
        const digest = signBatchDigest(batch);
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ digest: toHex(digest), signature: toHex(ed25519Sign(signing.secretKey, digest)) }));
        return;
      }
      const body = JSON.parse(raw.toString("utf8")) as CreatorExecuteRequest;
      received.push({ body, signature_ok: check.ok });
      if (!check.ok) {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: check.reason } }));
        return;
      }
      const output = { echoed: body.task, words: body.task.split(/\s+/).length };
      const reply = (status: number, payload: string, headers: Record<string, string> = {}) =>
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(payload);
      if (state.behaviour.startsWith("stream") && /text\/event-stream/.test(req.headers.accept ?? "")) {
        streamAnswer(res, body, state.behaviour, output, signing.secretKey, state.units?.(body), state.chunk_delay_ms);
        return;
      }
      const signed = signResult(signing.secretKey, body, output, state.units?.(body));
      const lastSignature = previousSignature;
      previousSignature = signed.signature;
      switch (state.behaviour) {
        case "echo":
        // A streaming creator answers a request that does not accept a stream (the listing's probe) whole.
        case "stream":
        case "stream_break":
        case "stream_stall":
        case "stream_bad_signature":
        case "stream_huge":
        case "stream_invalid_output":
          return reply(200, JSON.stringify(signed));
        case "slow":
          setTimeout(() => reply(200, JSON.stringify(signed)), state.delay_ms);
          return;
        case "hang":
          return;
        case "trickle": {
          const bytes = Buffer.from(JSON.stringify(signed));
          res.writeHead(200, { "content-type": "application/json", "content-length": String(bytes.length) });
          let at = 0;
          const timer = setInterval(() => {
            if (at >= bytes.length || res.destroyed) {
              clearInterval(timer);
              res.end();
              return;
            }
            res.write(bytes.subarray(at, at + 1));
            at += 1;
          }, 100);
          return;
        }
        case "huge":
          return reply(200, JSON.stringify({ ...signed, padding: "x".repeat(2 * 1024 * 1024) }));
        case "replay_signature":
          return reply(200, JSON.stringify({ ...signed, signature: lastSignature ?? "00".repeat(64) }));
        case "v1_digest":
          return reply(200, JSON.stringify({ ...signed, signature: toHex(ed25519Sign(signing.secretKey, v1ResultDigest(body, output))) }));
        case "wrong_key":
          return reply(200, JSON.stringify(signResult(Keypair.generate().secretKey, body, output)));
        case "invalid_output":
          return reply(200, JSON.stringify(signResult(signing.secretKey, body, { echoed: 42 })));
        case "status_500":
          return reply(500, JSON.stringify({ error: "boom" }));
        case "redirect":
          return reply(302, "{}", { location: "http://127.0.0.1:1/elsewhere" });
        case "invalid_json":
          return reply(200, "{not json");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    signing,
    received,
    get behaviour() {
      return state.behaviour;
    },
    set behaviour(next: CreatorBehaviour) {
      state.behaviour = next;
    },
    get delay_ms() {
      return state.delay_ms;
    },
    get sign_batch() {
      return state.sign_batch;
    },
    set sign_batch(next: boolean) {
      state.sign_batch = next;
    },
    batches_signed,
    get units() {
      return state.units;
    },
    get chunk_delay_ms() {
      return state.chunk_delay_ms;
    },
    set chunk_delay_ms(next: number) {
      state.chunk_delay_ms = next;
    },
    set units(next: CreatorServer["units"]) {
      state.units = next;
    },
    set delay_ms(next: number) {
      state.delay_ms = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The pieces a streamed answer sends: its output's JSON text cut every 8 characters. */
export function streamedPieces(output: unknown): string[] {
  const text = JSON.stringify(output);
  return Array.from({ length: Math.ceil(text.length / 8) }, (_, i) => text.slice(i * 8, i * 8 + 8));
}

/**
 * A streamed answer (docs/execute-protocol.md, "Streamed answers"): the output's JSON text in
 * chunks, `chunk_delay_ms` apart, then the result signed over the whole output, or one of the
 * faults `behaviour` names.
 */
function streamAnswer(
  res: ServerResponse,
  request: CreatorExecuteRequest,
  behaviour: CreatorBehaviour,
  output: unknown,
  secretKey: Uint8Array,
  units: bigint | undefined,
  chunk_delay_ms: number,
): void {
  const streamed = behaviour === "stream_invalid_output" ? { echoed: 42 } : output;
  const pieces =
    behaviour === "stream_huge" ? Array.from({ length: 2048 }, () => "x".repeat(1024)) : streamedPieces(streamed);
  const cut = behaviour === "stream_break" || behaviour === "stream_stall" ? Math.ceil(pieces.length / 2) : pieces.length;
  res.writeHead(200, { "content-type": "text/event-stream" });
  let seq = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (seq < cut) {
      res.write(`event: output\ndata: ${JSON.stringify({ seq, text: pieces[seq] })}\n\n`);
      seq += 1;
      if (behaviour === "stream_huge") setImmediate(next);
      else setTimeout(next, chunk_delay_ms);
      return;
    }
    if (behaviour === "stream_break") return void res.destroy();
    if (behaviour === "stream_stall") return;
    const signed = signResult(secretKey, request, streamed, units);
    const signature =
      behaviour === "stream_bad_signature" ? signResult(secretKey, request, { echoed: "something else", words: 2 }, units).signature : signed.signature;
    const { output: _output, ...result } = signed;
    res.end(`event: result\ndata: ${JSON.stringify({ ...result, format: "json", signature })}\n\n`);
  };
  next();
}

/** The output schema the test creator's "echo" answers satisfy. */
export const ECHO_OUTPUT_SCHEMA = {
  type: "object",
  required: ["echoed", "words"],
  additionalProperties: false,
  properties: { echoed: { type: "string" }, words: { type: "integer", minimum: 0 } },
} as const;

export const ECHO_INPUT_SCHEMA = {
  type: "object",
  required: ["language"],
  properties: { language: { type: "string", enum: ["en", "fr"] }, max_words: { type: "integer", minimum: 1, default: 50 } },
} as const;

/** `SHA-256("agentmarket/result/v1" ‖ execution_id ‖ agent ‖ request_hash ‖ result_hash)`: what a v1 kit signed. */
function v1ResultDigest(request: CreatorExecuteRequest, output: unknown): Uint8Array {
  return createHash("sha256")
    .update("agentmarket/result/v1")
    .update(parseExecutionId(request.execution_id)!)
    .update(new PublicKey(request.agent).toBytes())
    .update(fromHex(request.request_hash))
    .update(outputHash(output))
    .digest();
}
