// Typed errors. Every API error answer is {"error": {"type", "code", "message", "param"?,
// "request_id", ...details}}; the `type` picks the class and the `code` says exactly what
// happened, so callers can branch with instanceof or on `code`.
import { parseUsdc } from "@agent-market/program/usdc";

import type { Execution } from "./types.js";

/** The `error` object of an API error answer. */
export interface ErrorObject {
  type: string;
  code: string;
  message: string;
  param?: string;
  request_id?: string;
  [detail: string]: unknown;
}

export interface ErrorInit {
  /** The HTTP status; undefined when no answer came (ConnectionError). */
  status: number | undefined;
  code: string;
  type: string;
  message: string;
  param?: string | undefined;
  requestId?: string | undefined;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AgentMarketError extends Error {
  readonly status: number | undefined;
  /** One of the API's error codes (docs/api.md), or `connection_error` / `timeout` / `http_<status>`. */
  readonly code: string;
  readonly type: string;
  /** The request field at fault, as a path ("parameters.language"). */
  readonly param: string | undefined;
  /** Quote it to the marketplace's support: it finds the request in their logs. */
  readonly requestId: string | undefined;
  /** The error object's other fields (execution_id, required_usdc, …), as sent. */
  readonly details: Record<string, unknown>;

  constructor(init: ErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.param = init.param;
    this.requestId = init.requestId;
    this.details = init.details ?? {};
  }
}

/** 400, 413, 415: the request is wrong; sending it again will not help. */
export class InvalidRequestError extends AgentMarketError {}

/** 401: missing, unknown, revoked or expired credentials. */
export class AuthenticationError extends AgentMarketError {}

/** 403: the credentials cannot do this (an API key on a session route, another creator's agent). */
export class PermissionError extends AgentMarketError {}

export class NotFoundError extends AgentMarketError {}

/**
 * 409: agent_unavailable, idempotency_key_reused, idempotency_request_in_progress (retried by
 * the client until its retries run out), agent_already_listed, listing_retired.
 */
export class ConflictError extends AgentMarketError {}

/** 422: a step of the creator checklist failed when listing an agent; `code` names the step. */
export class ListingError extends AgentMarketError {}

function baseUnits(value: unknown): bigint | null {
  if (typeof value !== "string") return null;
  try {
    return parseUsdc(value);
  } catch {
    return null;
  }
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/**
 * 402: insufficient_balance, insufficient_allowance, subscription_required,
 * spending_cap_reached. Nothing was charged. Amounts are base units (6 decimals); null where the
 * code does not carry them.
 */
export class PaymentRequiredError extends AgentMarketError {
  /** What the call costs. */
  readonly required: bigint | null;
  /** The wallet's USDC balance. */
  readonly balance: bigint | null;
  /** What the wallet lets the program's delegate move. */
  readonly allowance: bigint | null;
  /** The API key's cap (spending_cap_reached). */
  readonly spendingCap: bigint | null;
  readonly mint: string | null;
  readonly network: string | null;
  /** How to raise the allowance, in words (insufficient_balance, insufficient_allowance). */
  readonly raiseAllowance: string | null;

  constructor(init: ErrorInit) {
    super(init);
    const d = this.details;
    this.required = baseUnits(d.required_usdc);
    this.balance = baseUnits(d.balance_usdc);
    this.allowance = baseUnits(d.allowance_usdc);
    this.spendingCap = baseUnits(d.spending_cap_usdc);
    this.mint = text(d.mint);
    this.network = text(d.network);
    this.raiseAllowance = text(d.raise_allowance);
  }
}

/**
 * 502 or 504 with an execution: the creator failed (creator_error, creator_timeout,
 * invalid_result) and the escrow was refunded, or the program refused to open it
 * (escrow_rejected, nothing charged). Final: the client never retries it. A streamed execution's
 * `refunded` event is the same error, its status the stream's (200).
 */
export class ExecutionFailedError extends AgentMarketError {
  /** The execution, refunded (or failed when no escrow opened). */
  readonly execution: Execution;
  /** The refund's transaction signature, when there was an escrow to refund. */
  readonly refundTransaction: string | null;

  constructor(init: ErrorInit & { execution: Execution }) {
    super(init);
    this.execution = init.execution;
    this.refundTransaction = text(this.details.refund_transaction);
  }
}

/**
 * A streamed execution's stream ended before its outcome: the API gave up on a reader too slow
 * (`stream_buffer_exceeded`), the connection broke or went silent (`connection_error`,
 * `timeout`), it closed without a final event (`stream_ended`) or sent one the client cannot read
 * (`invalid_response`). The execution goes on regardless and settles or is refunded: read it with
 * executions.get(executionId).
 */
export class StreamInterruptedError extends AgentMarketError {
  /** The execution the stream was about, once its escrow opened; undefined if it broke before that. */
  readonly executionId: string | undefined;

  constructor(init: ErrorInit & { executionId: string | undefined }) {
    super(init);
    this.executionId = init.executionId;
  }
}

/** 500, 503 and gateway failures: the API could not answer this time. */
export class ServerError extends AgentMarketError {}

/** No HTTP answer: DNS, connection refused or reset, or the client's timeout. */
export class ConnectionError extends AgentMarketError {}

const BY_TYPE: Record<string, new (init: ErrorInit) => AgentMarketError> = {
  invalid_request_error: InvalidRequestError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  not_found_error: NotFoundError,
  conflict_error: ConflictError,
  listing_error: ListingError,
  payment_error: PaymentRequiredError,
  api_error: ServerError,
};

/** For answers without the API's error body (a proxy's HTML page, say). */
function typeOfStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "payment_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 422) return "listing_error";
  if (status >= 400 && status < 500) return "invalid_request_error";
  return "api_error";
}

function isErrorObject(value: unknown): value is ErrorObject {
  if (typeof value !== "object" || value === null) return false;
  const error = value as Record<string, unknown>;
  return typeof error.type === "string" && typeof error.code === "string" && typeof error.message === "string";
}

/** The execution an error answer carries, if any (502, 503 and 504 of an execute call may). */
export function executionOf(body: unknown): Execution | undefined {
  const error = (body as { error?: { execution?: unknown } } | null)?.error;
  const execution = error?.execution as Partial<Execution> | undefined;
  return execution && typeof execution === "object" && typeof execution.id === "string" ? (execution as Execution) : undefined;
}

/** The typed error of an HTTP error answer (`body` parsed from JSON, or undefined if it was not JSON). */
export function errorFromResponse(status: number, body: unknown, requestIdHeader: string | null): AgentMarketError {
  const raw = (body as { error?: unknown } | undefined)?.error;
  if (!isErrorObject(raw)) {
    return new (BY_TYPE[typeOfStatus(status)] ?? ServerError)({
      status,
      code: `http_${status}`,
      type: typeOfStatus(status),
      message: `the API answered ${status} without an error body`,
      requestId: requestIdHeader ?? undefined,
    });
  }
  const { type, code, message, param, request_id, ...details } = raw;
  const init: ErrorInit = {
    status,
    code,
    type,
    message,
    param,
    requestId: typeof request_id === "string" ? request_id : (requestIdHeader ?? undefined),
    details,
  };
  const execution = executionOf(body);
  if (execution && (status === 502 || status === 504)) return new ExecutionFailedError({ ...init, execution });
  return new (BY_TYPE[type] ?? ServerError)(init);
}
