// The JSON answers of an agent service: the signed result or batch, or {"error": {code, message}}.
import type { CreatorExecuteResponse, RequestSignatureFailure, SignBatchResponse } from "@agent-market/program";

export type ExecuteErrorCode =
  | RequestSignatureFailure
  | "payload_too_large"
  | "replayed_request"
  | "invalid_json"
  | "invalid_request"
  | "unsupported_protocol_version"
  | "agent_not_served"
  | "request_hash_mismatch"
  | "invalid_parameters"
  | "deadline_passed"
  | "request_aborted"
  | "handler_error"
  | "invalid_output"
  // POST /sign-batch only.
  | "empty_batch"
  | "batch_too_large"
  | "duplicate_execution"
  | "unknown_result_signature"
  | "not_found"
  | "method_not_allowed"
  | "internal_error";

/** One schema violation: a JSON Pointer into the checked value and what is wrong there. */
export interface SchemaViolation {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: { code: ExecuteErrorCode; message: string; details?: SchemaViolation[] };
}

export interface HealthBody {
  status: "ok";
  /** The base58 public key results are signed with: the agent's registered signing key. */
  signing_key: string;
}

/** An HTTP answer: the status and the JSON body. */
export interface ServiceResponse<B = CreatorExecuteResponse | SignBatchResponse | ErrorBody | HealthBody> {
  status: number;
  body: B;
}

export function errorResponse(
  status: number,
  code: ExecuteErrorCode,
  message: string,
  details?: SchemaViolation[],
): ServiceResponse<ErrorBody> {
  return { status, body: { error: details ? { code, message, details } : { code, message } } };
}
