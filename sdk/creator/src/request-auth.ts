// What every marketplace request to the service passes before its body is read for what it asks:
// a bounded size, the marketplace's signature over method, path and body, a signature not seen
// before, and a UTF-8 JSON body. `/execute` and `/sign-batch` share it, and with it one replay cache.
import { REQUEST_SIGNATURE_HEADER, verifyRequestSignature, type RequestSignatureFailure } from "@agent-market/program";

import { errorResponse, type ErrorBody, type ServiceResponse } from "./responses.js";
import { ReplayCache } from "./replay-cache.js";

/** A request to `POST /execute` or `POST /sign-batch`, as it arrived. */
export interface ExecuteHttpRequest {
  method: string;
  /** The request target exactly as received (Node's `req.url`): the marketplace signed it. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  /** Aborts the handler when the marketplace hangs up. */
  signal?: AbortSignal;
}

const SIGNATURE_FAILURE_MESSAGES: Record<RequestSignatureFailure, string> = {
  missing_signature: `the ${REQUEST_SIGNATURE_HEADER} header is missing`,
  malformed_signature: `the ${REQUEST_SIGNATURE_HEADER} header is not t=<unix secs>,key=<base58>,sig=<128 hex>`,
  unexpected_key: "the request is not signed by the marketplace key this service trusts",
  stale_timestamp: "the signature's timestamp is outside the accepted window",
  bad_signature: "the signature does not match the method, path and body",
};

export interface RequestAuthOptions {
  marketplaceKey: string;
  toleranceSecs: number;
  replayCacheSize: number;
  maxBodyBytes: number;
  /** Milliseconds since the Unix epoch, as Date.now. */
  now: () => number;
}

export type Authenticated = { ok: true; body: unknown; now_secs: number } | { ok: false; response: ServiceResponse<ErrorBody> };

function headerValue(headers: ExecuteHttpRequest["headers"], name: string): string | undefined {
  const value = headers[name];
  // A repeated header reaches verifyRequestSignature as Node joins it, which it refuses.
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Checks a request as every route needs it: its parsed JSON body, or the error to answer. */
export function requestAuthenticator(options: RequestAuthOptions): (request: ExecuteHttpRequest) => Authenticated {
  const seenSignatures = new ReplayCache(options.replayCacheSize);
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const refuse = (response: ServiceResponse<ErrorBody>): Authenticated => ({ ok: false, response });
  return (request) => {
    if (request.body.length > options.maxBodyBytes) {
      return refuse(errorResponse(413, "payload_too_large", `the body is larger than ${options.maxBodyBytes} bytes`));
    }
    const now_secs = options.now() / 1000;
    const check = verifyRequestSignature(
      headerValue(request.headers, REQUEST_SIGNATURE_HEADER),
      { method: request.method, path: request.path, body: request.body },
      { marketplace_key: options.marketplaceKey, now_secs, tolerance_secs: options.toleranceSecs },
    );
    if (!check.ok) return refuse(errorResponse(401, check.reason, SIGNATURE_FAILURE_MESSAGES[check.reason]));
    // Past timestamp + tolerance the signature is stale anyway, so that is as long as it needs remembering.
    if (!seenSignatures.remember(check.signature, check.timestamp_secs + options.toleranceSecs, now_secs)) {
      return refuse(errorResponse(409, "replayed_request", "this signature was already used"));
    }
    try {
      return { ok: true, body: JSON.parse(utf8.decode(request.body)), now_secs };
    } catch {
      return refuse(errorResponse(400, "invalid_json", "the body is not UTF-8 JSON"));
    }
  };
}
