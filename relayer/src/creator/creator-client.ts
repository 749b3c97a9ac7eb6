// Calls a creator's `POST <endpoint>/execute` and `POST <endpoint>/sign-batch` as
// docs/execute-protocol.md describes: the body signed by the marketplace key, the SSRF guard, one
// overall deadline, a response size limit and no redirects; then checks the answer against what
// the relayer computes itself (for /execute: execution id, result hash, the agent key's signature
// over the v2 result digest of the escrow the request carried, with the units answered, and the
// output schema; for /sign-batch: the agent key's signature over the batch digest). The
// conformance probe and executions share it.
import {
  executeUrl,
  MAX_SETTLE_BATCH,
  REQUEST_SIGNATURE_HEADER,
  signBatchUrl,
  signRequest,
  verifyCreatorResponse,
  verifySignBatchResponse,
  type CreatorExecuteRequest,
  type SignBatchItem,
  type NetworkName,
} from "@agent-market/program";

import type { NetworkConfig } from "../config.js";
import type { EndpointPolicy } from "../net/ip-policy.js";
import { guardedRequest, OutboundError } from "../net/guarded-http.js";
import { validateAgainst } from "../listings/json-schema.js";
import { isEventStream, StreamedAnswer, type OutputChunk } from "./streamed-answer.js";

export type CreatorFailure =
  | "endpoint_not_allowed"
  | "unreachable"
  | "timeout"
  | "http_error"
  | "response_too_large"
  | "invalid_response"
  | "bad_signature"
  | "output_invalid";

export type CreatorOutcome =
  | {
      ok: true;
      output: unknown;
      result_hash: Uint8Array;
      /** The metered units the answer signed (0 when it named none). */
      units: bigint;
      digest: Uint8Array;
      signature: Uint8Array;
      latency_ms: number;
    }
  | {
      ok: false;
      failure: CreatorFailure;
      message: string;
      latency_ms: number;
      status?: number;
      /** An error status's `{"error": {code, message}}`, as the creator's kit answers: the creator's own words, cut short. */
      service_error?: { code: string; message: string };
    };

/** How much of a creator's own error message is kept: enough to say what it refused. */
const SERVICE_MESSAGE_CHARS = 300;

/** The creator kit's error body, if `body` is one: its code and message, printable and cut short. */
function serviceError(body: Buffer): { code: string; message: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== "string" || !/^[a-z0-9_]{1,64}$/.test(error.code)) return undefined;
  const message = typeof error.message === "string" ? error.message.replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, SERVICE_MESSAGE_CHARS) : "";
  return { code: error.code, message };
}

export interface CreatorCall {
  endpoint: string;
  request: CreatorExecuteRequest;
  /** The agent's registered Ed25519 key (32 bytes). */
  signing_key: Uint8Array;
  output_schema: object;
  timeout_ms: number;
  max_response_bytes: number;
  signal?: AbortSignal;
  /**
   * Set for a streamed call: the creator is told it may stream, and each chunk of a streamed
   * answer is handed here as it arrives, before the whole answer is verified.
   */
  on_output?: (chunk: OutputChunk) => void;
}

/** Why a creator gave no batch signature; `unsupported` (a 404) means per-call signatures instead. */
export type SignBatchFailure =
  | "unsupported"
  | "endpoint_not_allowed"
  | "unreachable"
  | "timeout"
  | "http_error"
  | "response_too_large"
  | "invalid_response"
  | "digest_mismatch"
  | "bad_signature";

export type SignBatchOutcome =
  | { ok: true; digest: Uint8Array; signature: Uint8Array; latency_ms: number }
  | { ok: false; failure: SignBatchFailure; message: string; latency_ms: number; status?: number };

export interface SignBatchCall {
  endpoint: string;
  /** The network whose marketplace key signs the request. */
  network: string;
  /** The agent account's address (base58): every item is one of its executions. */
  agent: string;
  /** The agent's registered Ed25519 key (32 bytes), which must have signed the batch digest. */
  signing_key: Uint8Array;
  /** 1 ‥ MAX_SETTLE_BATCH executions whose `/execute` answers were verified, in settle_batch's order. */
  items: SignBatchItem[];
  timeout_ms: number;
  max_response_bytes: number;
  signal?: AbortSignal;
}

type Posted =
  | { ok: true; status: number; body: Buffer; latency_ms: number }
  | { ok: false; failure: "endpoint_not_allowed" | "unreachable" | "timeout" | "response_too_large"; message: string; latency_ms: number };

export class CreatorClient {
  constructor(
    /** Each network's key that signs its requests to creators. */
    private readonly marketplaceKeys: Partial<Record<NetworkName, Pick<NetworkConfig, "marketplace_signing_key">>>,
    private readonly policy: EndpointPolicy,
  ) {}

  /** POSTs `body` to `url` signed by `network`'s marketplace key, through the outbound guard. */
  private async post(
    network: string,
    url: URL,
    body: string,
    limits: { timeout_ms: number; max_response_bytes: number; signal?: AbortSignal },
    stream?: { accept: string; on_data: NonNullable<Parameters<typeof guardedRequest>[0]["on_data"]> },
  ): Promise<Posted> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const key = this.marketplaceKeys[network as NetworkName];
    if (!key) throw new Error(`no marketplace key for ${network}`);
    const signature = signRequest(key.marketplace_signing_key, {
      method: "POST",
      path: url.pathname + url.search,
      body,
      timestamp_secs: Math.floor(Date.now() / 1000),
    });
    try {
      const response = await guardedRequest({
        method: "POST",
        url: url.href,
        headers: { "content-type": "application/json", accept: stream?.accept ?? "application/json", [REQUEST_SIGNATURE_HEADER]: signature },
        body,
        timeout_ms: limits.timeout_ms,
        max_response_bytes: limits.max_response_bytes,
        policy: this.policy,
        signal: limits.signal,
        ...(stream ? { on_data: stream.on_data } : {}),
      });
      return { ok: true, status: response.status, body: response.body, latency_ms: elapsed() };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      const failure =
        error.code === "address_not_allowed" || error.code === "invalid_url"
          ? "endpoint_not_allowed"
          : error.code === "timeout"
            ? "timeout"
            : error.code === "response_too_large"
              ? "response_too_large"
              : "unreachable";
      return { ok: false, failure, message: error.message, latency_ms: elapsed() };
    }
  }

  async call(call: CreatorCall): Promise<CreatorOutcome> {
    const { on_output } = call;
    // A streamed answer is read as it arrives, its chunks forwarded at once; any other is read whole.
    let streamed: StreamedAnswer | undefined;
    const stream = on_output && {
      accept: "text/event-stream, application/json",
      on_data: (piece: Buffer, head: { status: number; headers: Record<string, string | string[] | undefined> }) => {
        if (head.status === 200 && isEventStream(head.headers["content-type"])) (streamed ??= new StreamedAnswer(on_output)).push(piece);
      },
    };
    const response = await this.post(call.request.network, executeUrl(call.endpoint), JSON.stringify(call.request), call, stream);
    if (!response.ok) return response;
    const { latency_ms } = response;
    if (response.status !== 200) {
      const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
      const service_error = serviceError(response.body);
      return {
        ok: false,
        failure: "http_error",
        message: `the endpoint answered ${response.status}${service_error ? ` ${service_error.code}` : ""}${redirect}`,
        latency_ms,
        status: response.status,
        ...(service_error ? { service_error } : {}),
      };
    }
    let parsed: unknown;
    if (streamed) {
      const answer = streamed.finish();
      if (!answer.ok) return { ok: false, failure: answer.failure, message: answer.message, latency_ms };
      parsed = answer.body;
    } else {
      try {
        parsed = JSON.parse(response.body.toString("utf8"));
      } catch {
        return { ok: false, failure: "invalid_response", message: "the answer is not JSON", latency_ms };
      }
    }
    // The digest is rebuilt from the escrow the request named: a signature over anything else
    // (another escrow, the v1 digest) is bad_signature, and the execution is refunded.
    const check = verifyCreatorResponse(parsed, { ...call.request, signing_key: call.signing_key });
    if (!check.ok) {
      return {
        ok: false,
        failure: check.reason === "bad_signature" ? "bad_signature" : "invalid_response",
        message: check.message,
        latency_ms,
      };
    }
    const violation = validateAgainst(call.output_schema, check.output);
    if (violation) {
      return {
        ok: false,
        failure: "output_invalid",
        message: `output${violation.path} ${violation.message}`,
        latency_ms,
      };
    }
    return {
      ok: true,
      output: check.output,
      result_hash: check.result_hash,
      units: check.units,
      digest: check.digest,
      signature: check.signature,
      latency_ms,
    };
  }

  /**
   * Asks the creator for one signature over the batch digest of `items` and returns it only once
   * it verifies, under the agent's registered key, over the digest computed here from the items:
   * what settle_batch will check. A 404 is a kit without the route: `unsupported`.
   */
  async signBatch(call: SignBatchCall): Promise<SignBatchOutcome> {
    if (call.items.length === 0 || call.items.length > MAX_SETTLE_BATCH) {
      throw new RangeError(`a batch signs 1 to ${MAX_SETTLE_BATCH} executions, got ${call.items.length}`);
    }
    const request = { agent: call.agent, items: call.items };
    const response = await this.post(call.network, signBatchUrl(call.endpoint), JSON.stringify(request), call);
    if (!response.ok) return response;
    const { latency_ms, status } = response;
    if (status === 404) {
      return { ok: false, failure: "unsupported", message: "the endpoint has no /sign-batch (answered 404)", latency_ms, status };
    }
    if (status !== 200) {
      const redirect = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
      const code = errorCodeOf(response.body);
      const message = `the endpoint answered ${status}${code ? ` ${code}` : ""}${redirect}`;
      return { ok: false, failure: "http_error", message, latency_ms, status };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString("utf8"));
    } catch {
      return { ok: false, failure: "invalid_response", message: "the answer is not JSON", latency_ms };
    }
    const check = verifySignBatchResponse(parsed, request, call.signing_key);
    if (!check.ok) {
      const failure = check.reason === "malformed_response" ? "invalid_response" : check.reason;
      return { ok: false, failure, message: check.message, latency_ms };
    }
    return { ok: true, digest: check.digest, signature: check.signature, latency_ms };
  }
}

/** The `error.code` of a kit's error answer, for the log; undefined for any other body. */
function errorCodeOf(body: Buffer): string | undefined {
  try {
    const code = (JSON.parse(body.toString("utf8")) as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" && /^[a-z_]{1,64}$/.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}
