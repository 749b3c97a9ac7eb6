// Calls a creator's `POST <endpoint>/execute` as docs/execute-protocol.md describes: the body
// signed by the marketplace key, the SSRF guard, one overall deadline, a response size limit and
// no redirects; then checks the answer (execution id, result hash, the agent key's signature over
// the result digest, the output schema). The conformance probe and executions share it.
import {
  executeUrl,
  REQUEST_SIGNATURE_HEADER,
  signRequest,
  verifyCreatorResponse,
  type CreatorExecuteRequest,
} from "@agent-market/program";

import type { NetworkConfig, NetworkName } from "../config.js";
import type { EndpointPolicy } from "../net/ip-policy.js";
import { guardedRequest, OutboundError } from "../net/guarded-http.js";
import { validateAgainst } from "../listings/json-schema.js";

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
      digest: Uint8Array;
      signature: Uint8Array;
      latency_ms: number;
    }
  | { ok: false; failure: CreatorFailure; message: string; latency_ms: number; status?: number };

export interface CreatorCall {
  endpoint: string;
  request: CreatorExecuteRequest;
  /** The agent's registered Ed25519 key (32 bytes). */
  signing_key: Uint8Array;
  output_schema: object;
  timeout_ms: number;
  max_response_bytes: number;
  signal?: AbortSignal;
}

export class CreatorClient {
  constructor(
    /** Each network's key that signs its requests to creators. */
    private readonly marketplaceKeys: Partial<Record<NetworkName, Pick<NetworkConfig, "marketplace_signing_key">>>,
    private readonly policy: EndpointPolicy,
  ) {}

  async call(call: CreatorCall): Promise<CreatorOutcome> {
    const url = executeUrl(call.endpoint);
    const body = JSON.stringify(call.request);
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const key = this.marketplaceKeys[call.request.network as NetworkName];
    if (!key) throw new Error(`no marketplace key for ${call.request.network}`);
    const signature = signRequest(key.marketplace_signing_key, {
      method: "POST",
      path: url.pathname + url.search,
      body,
      timestamp_secs: Math.floor(Date.now() / 1000),
    });
    let response;
    try {
      response = await guardedRequest({
        method: "POST",
        url: url.href,
        headers: { "content-type": "application/json", [REQUEST_SIGNATURE_HEADER]: signature },
        body,
        timeout_ms: call.timeout_ms,
        max_response_bytes: call.max_response_bytes,
        policy: this.policy,
        signal: call.signal,
      });
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      const failure: CreatorFailure =
        error.code === "address_not_allowed" || error.code === "invalid_url"
          ? "endpoint_not_allowed"
          : error.code === "timeout"
            ? "timeout"
            : error.code === "response_too_large"
              ? "response_too_large"
              : "unreachable";
      return { ok: false, failure, message: error.message, latency_ms: elapsed() };
    }
    const latency_ms = elapsed();
    if (response.status !== 200) {
      const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
      return {
        ok: false,
        failure: "http_error",
        message: `the endpoint answered ${response.status}${redirect}`,
        latency_ms,
        status: response.status,
      };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString("utf8"));
    } catch {
      return { ok: false, failure: "invalid_response", message: "the answer is not JSON", latency_ms };
    }
    const check = verifyCreatorResponse(parsed, {
      execution_id: call.request.execution_id,
      agent: call.request.agent,
      request_hash: call.request.request_hash,
      signing_key: call.signing_key,
    });
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
      digest: check.digest,
      signature: check.signature,
      latency_ms,
    };
  }
}
