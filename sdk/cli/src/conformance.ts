// The conformance check a creator runs before listing: the relayer's probe (a marketplace-signed
// test request whose answer must verify exactly as a paid call's), plus what the probe cannot
// see from outside: that the service refuses unsigned and replayed requests, as
// docs/execute-protocol.md requires, for a metered agent that its units are signed and that
// it signs no more units than a call allows, and for a streaming one that a streamed probe's
// events come in order and its result signs what was streamed. It runs on the creator's machine, so any endpoint
// goes, loopback included.
import { randomBytes } from "node:crypto";

import {
  EXECUTE_PROTOCOL_VERSION,
  PROBE_AMOUNT_USDC,
  PROBE_TASK,
  REQUEST_SIGNATURE_HEADER,
  executeUrl,
  formatAddress,
  formatUsdc,
  formatExecutionId,
  parseAddress,
  requestHash,
  signBatchUrl,
  signRequest,
  toHex,
  verifySignBatchResponse,
  type CreatorExecuteRequest,
  type CreatorResponseCheck,
  type MeteredTerms,
  type SignBatchItem,
  type SignBatchRequest,
} from "@agent-market/program";

import { readCreatorStream, verifyAnswer } from "./creator-stream.js";
import { compile, sampleFor, type Validator } from "./schema.js";

/** The relayer's probe task (relayer/src/listings/listing-service.ts). */
const HEALTH_TIMEOUT_MS = 5_000;

export type CheckStatus = "pass" | "fail" | "warn" | "skip";

export interface ConformanceRow {
  check: string;
  status: CheckStatus;
  detail: string;
}

export interface ConformanceInput {
  /** The agent's endpoint: requests go to `<endpoint>/execute`. */
  endpoint: string;
  /** The agent's signing key (base58) the results must verify against. */
  signingKey: string;
  /**
   * The agent account (base58) the request names: a service made with the creator kit answers
   * only for the agents it is configured with. Default: a random address.
   */
  agent?: string;
  inputSchema: unknown;
  outputSchema: unknown;
  /** The marketplace key the service trusts (64-byte secret key). */
  marketplaceSecretKey: Uint8Array;
  /** Default: built from the input schema as the relayer's probe builds them. */
  parameters?: Record<string, unknown>;
  task?: string;
  /** The limit a paid call gets; the answer must come within it. */
  maxExecutionSecs: number;
  /** A metered agent's terms: its probes carry them, as its paid calls do. */
  metered?: MeteredPricing;
}

/** What a metered agent registers: a unit's price (USDC base units) and the most units of one call. */
export interface MeteredPricing {
  pricePerUnitUsdc: bigint;
  maxUnitsPerCall: bigint;
}

interface HttpAnswer {
  status: number;
  text: string;
  latency_ms: number;
}

function errorCodeOf(text: string): string {
  const code = (jsonOf(text) as { error?: { code?: unknown } } | null | undefined)?.error?.code;
  return typeof code === "string" ? ` ${code}` : "";
}

async function post(url: URL, body: string, headers: Record<string, string>, timeout_ms: number): Promise<HttpAnswer> {
  const started = performance.now();
  // Redirects are not followed, as the relayer follows none.
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(timeout_ms),
  });
  const text = await response.text();
  return { status: response.status, text, latency_ms: Math.round(performance.now() - started) };
}

/** An answer's body as JSON; undefined when it is not JSON. */
function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** fetch's "fetch failed" says little; its cause says what (ECONNREFUSED, ENOTFOUND…). */
function reason(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}

class Rows {
  readonly list: ConformanceRow[] = [];

  add(check: string, status: CheckStatus, detail: string): boolean {
    this.list.push({ check, status, detail });
    return status !== "fail";
  }

  skip(checks: string[], because: string): ConformanceRow[] {
    for (const check of checks) this.add(check, "skip", because);
    return this.list;
  }
}

const BATCH_CHECKS = ["batch signature", "batch refuses unknown results"];
const METERED_CHECKS = ["metered units", "refuses units above max_units"];
const STREAM_CHECKS = ["stream", "stream order", "stream signature", "stream output"];
const AFTER_REQUEST = ["response", "signature", "output", "latency", "refuses unsigned", "refuses replays", ...STREAM_CHECKS, ...BATCH_CHECKS];

export async function checkConformance(input: ConformanceInput): Promise<ConformanceRow[]> {
  const rows = new Rows();
  // A metered agent's two further rows, skipped with the others when the probe cannot run.
  const afterRequest = input.metered ? [...AFTER_REQUEST, ...METERED_CHECKS] : AFTER_REQUEST;
  let validateInput: Validator;
  let validateOutput: Validator;
  try {
    validateInput = compile(input.inputSchema);
    if ((input.inputSchema as { type?: unknown }).type !== "object") throw new TypeError('must have "type": "object"');
    rows.add("input schema", "pass", "JSON Schema 2020-12 of an object");
  } catch (error) {
    rows.add("input schema", "fail", (error as Error).message);
    return rows.skip(["output schema", "parameters", "health", "signed request", ...afterRequest], "needs a valid input schema");
  }
  try {
    validateOutput = compile(input.outputSchema);
    rows.add("output schema", "pass", "JSON Schema 2020-12");
  } catch (error) {
    rows.add("output schema", "fail", (error as Error).message);
    return rows.skip(["parameters", "health", "signed request", ...afterRequest], "needs a valid output schema");
  }

  const parameters = input.parameters ?? sampleFor(input.inputSchema as Record<string, unknown>, validateInput);
  const violation = parameters === null ? null : validateInput(parameters);
  if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) {
    rows.add("parameters", "fail", "none could be built from the input schema: add examples or defaults, or give --parameters");
    return rows.skip(["health", "signed request", ...afterRequest], "needs parameters");
  }
  if (violation) {
    rows.add("parameters", "fail", `they break the input schema: ${violation}`);
    return rows.skip(["health", "signed request", ...afterRequest], "needs parameters");
  }
  rows.add("parameters", "pass", `${input.parameters ? "given" : "built from the input schema"}: ${JSON.stringify(parameters)}`);

  const signingKey = parseAddress(input.signingKey);
  if (!signingKey) throw new TypeError(`${input.signingKey} is not a base58 Ed25519 public key`);
  await checkHealth(input, rows);

  const url = executeUrl(input.endpoint);
  const task = input.task ?? PROBE_TASK;
  const timeout_ms = input.maxExecutionSecs * 1000;
  const agent = input.agent ?? formatAddress(randomBytes(32));
  // A metered agent's probe allows all the units a paid call may: its max_units_per_call.
  const terms = input.metered && { maxUnits: input.metered.maxUnitsPerCall, pricePerUnitUsdc: input.metered.pricePerUnitUsdc };
  const request = probeRequest(agent, task, parameters as Record<string, unknown>, timeout_ms, terms);
  const body = JSON.stringify(request);
  const signed = marketplaceSigned(input, url, body);

  let answer: HttpAnswer;
  try {
    answer = await post(url, body, signed, timeout_ms);
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    rows.add(
      "signed request",
      "fail",
      timedOut ? `no answer from ${url.href} within ${timeout_ms} ms` : `${url.href} unreachable: ${reason(error)}`,
    );
    return rows.skip(afterRequest, "needs an answer");
  }
  if (answer.status !== 200) {
    const hint =
      answer.status === 401
        ? `: does the service trust the marketplace key ${formatAddress(input.marketplaceSecretKey.subarray(32))}?`
        : answer.status >= 300 && answer.status < 400
          ? " (redirects are not followed)"
          : errorCodeOf(answer.text) === " agent_not_served"
            ? `: the service does not answer for agent ${request.agent}; pass the address it serves as --agent`
            : "";
    rows.add("signed request", "fail", `POST ${url.pathname} answered ${answer.status}${errorCodeOf(answer.text)}${hint}`);
    return rows.skip(afterRequest, "needs a 200 answer");
  }
  rows.add("signed request", "pass", `POST ${url.pathname} answered 200`);

  const parsed = jsonOf(answer.text);
  const check = verifyAnswer(parsed, request, signingKey);
  // Units above max_units are checked once the signature verified: such an answer is signed.
  const verified = check.ok || check.reason === "units_above_maximum";
  if (!verified && check.reason !== "bad_signature") {
    rows.add("response", "fail", parsed === undefined ? "the answer is not JSON" : check.message);
    rows.skip(["signature", "output"], "needs a valid response");
  } else {
    const units = (parsed as { units?: string }).units ?? "0";
    rows.add("response", "pass", "echoes the execution id; result_hash is SHA-256 of the output's canonical JSON");
    rows.add(
      "signature",
      verified ? "pass" : "fail",
      verified
        ? `Ed25519 by ${input.signingKey} over the execute protocol v2 result digest of the probe's escrow, units ${units}`
        : `${check.message} (${input.signingKey}): a service signing execute protocol v1, or not the escrow it was sent, is refused`,
    );
    const outputViolation = validateOutput((parsed as { output: unknown }).output);
    rows.add("output", outputViolation ? "fail" : "pass", outputViolation ? `breaks the output schema at ${outputViolation}` : "matches the output schema");
  }
  if (input.metered) meteredUnitsRow(rows, input.metered, check);
  // The probe's own signed result, once it verified: what a /sign-batch item carries.
  const signedResult: SignBatchItem | null = check.ok
    ? {
        execution_id: request.execution_id,
        escrow_nonce: request.escrow_nonce,
        payer: request.payer,
        payer_token_account: request.payer_token_account,
        amount_usdc: request.amount_usdc,
        request_hash: request.request_hash,
        result_hash: (parsed as { result_hash: string }).result_hash,
        units: check.units.toString(),
        signature: (parsed as { signature: string }).signature,
      }
    : null;
  rows.add(
    "latency",
    answer.latency_ms <= timeout_ms ? "pass" : "fail",
    `${answer.latency_ms} ms (a paid call gets ${input.maxExecutionSecs} s)`,
  );

  // The same body without the header: a service that ran it would work for anyone, unpaid.
  try {
    const unsigned = await post(url, body, {}, timeout_ms);
    rows.add(
      "refuses unsigned",
      unsigned.status === 401 ? "pass" : "fail",
      `an unsigned request got ${unsigned.status}${errorCodeOf(unsigned.text)}${unsigned.status === 401 ? "" : ", not 401"}`,
    );
  } catch (error) {
    rows.add("refuses unsigned", "fail", `no answer: ${reason(error)}`);
  }
  // The very request again: one escrow pays for one run.
  try {
    const replay = await post(url, body, signed, timeout_ms);
    rows.add(
      "refuses replays",
      replay.status === 409 ? "pass" : "fail",
      `the same signed request again got ${replay.status}${errorCodeOf(replay.text)}${replay.status === 409 ? "" : ", not 409"}`,
    );
  } catch (error) {
    rows.add("refuses replays", "fail", `no answer: ${reason(error)}`);
  }
  await checkStream(input, rows, request, signingKey, validateOutput);
  if (input.metered) await checkAboveMaximum({ ...input, metered: input.metered }, rows, request, check, signingKey);
  if (signedResult) await checkSignBatch(input, rows, request.agent, signedResult, signingKey);
  else rows.skip(BATCH_CHECKS, "needs a verified result signature");
  return rows.list;
}

/**
 * A probe: a marketplace request as a paid call's, with made-up escrow fields (no escrow backs
 * it, and its amount says it pays nothing); a metered one carries `terms` as a paid call does.
 */
function probeRequest(
  agent: string,
  task: string,
  parameters: Record<string, unknown>,
  timeout_ms: number,
  terms: MeteredTerms | undefined,
): CreatorExecuteRequest {
  return {
    protocol_version: EXECUTE_PROTOCOL_VERSION,
    execution_id: formatExecutionId(randomBytes(16)),
    agent,
    escrow_nonce: String(randomBytes(6).readUIntLE(0, 6)),
    payer: formatAddress(randomBytes(32)),
    payer_token_account: formatAddress(randomBytes(32)),
    amount_usdc: PROBE_AMOUNT_USDC,
    network: "devnet",
    task,
    parameters,
    request_hash: toHex(requestHash(task, parameters)),
    deadline: new Date(Date.now() + timeout_ms).toISOString(),
    ...(terms ? { max_units: terms.maxUnits.toString(), price_per_unit_usdc: formatUsdc(terms.pricePerUnitUsdc) } : {}),
  };
}

/**
 * A second probe, as a paid call whose caller asked for a stream (`Accept: text/event-stream`): a
 * service that streams must send its output events in order and sign, in the last event, exactly
 * what it streamed; one that answers JSON does not stream (optional), and its rows are skipped.
 */
async function checkStream(
  input: ConformanceInput,
  rows: Rows,
  first: CreatorExecuteRequest,
  signingKey: Uint8Array,
  validateOutput: Validator,
): Promise<void> {
  const timeout_ms = input.maxExecutionSecs * 1000;
  const terms = input.metered && { maxUnits: input.metered.maxUnitsPerCall, pricePerUnitUsdc: input.metered.pricePerUnitUsdc };
  const request = probeRequest(first.agent, first.task, first.parameters, timeout_ms, terms);
  const url = executeUrl(input.endpoint);
  const body = JSON.stringify(request);
  const after = STREAM_CHECKS.slice(1);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream, application/json", ...marketplaceSigned(input, url, body) },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeout_ms),
    });
  } catch (error) {
    rows.add("stream", "fail", `a probe accepting a stream got no answer: ${reason(error)}`);
    rows.skip(after, "needs an answer");
    return;
  }
  const type = response.headers.get("content-type") ?? "";
  if (!/^text\/event-stream\s*(;|$)/i.test(type)) {
    const text = await response.text().catch(() => "");
    if (response.status === 200) {
      rows.add("stream", "skip", "a probe accepting text/event-stream was answered JSON: the service does not stream (optional)");
    } else {
      rows.add("stream", "fail", `a probe accepting text/event-stream got ${response.status}${errorCodeOf(text)}`);
    }
    rows.skip(after, "no stream");
    return;
  }
  if (response.status !== 200) {
    rows.add("stream", "fail", `a stream must come with 200, not ${response.status}`);
    rows.skip(after, "needs a 200 stream");
    return;
  }
  rows.add("stream", "pass", "a probe accepting text/event-stream was answered with a stream");
  let reading;
  try {
    reading = await readCreatorStream(response.body!, request, signingKey);
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    rows.add("stream order", "fail", timedOut ? `the stream did not end within ${timeout_ms} ms` : `the stream broke: ${reason(error)}`);
    rows.skip(["stream signature", "stream output"], "needs a whole stream");
    return;
  }
  if (!reading.ok) {
    rows.add("stream order", "fail", `${reading.order}: the marketplace refunds such a stream`);
    rows.skip(["stream signature", "stream output"], "needs a stream in order");
    return;
  }
  rows.add("stream order", "pass", `${reading.chunks} output events with seq 0 to ${reading.chunks - 1}, then the result, last`);
  const { check } = reading;
  rows.add(
    "stream signature",
    check.ok ? "pass" : "fail",
    check.ok
      ? `the result's signature by ${input.signingKey} covers the ${reading.chunks} chunks streamed (format ${reading.format}), units ${check.units}`
      : `${check.message}: the result does not sign what was streamed, and the marketplace refunds such a stream`,
  );
  const violation = validateOutput(reading.output);
  rows.add("stream output", violation ? "fail" : "pass", violation ? `the streamed output breaks the output schema at ${violation}` : "the streamed output matches the output schema");
}

/** Whether the probe's answer signed its units, within its max_units. */
function meteredUnitsRow(rows: Rows, metered: MeteredPricing, check: CreatorResponseCheck): void {
  if (check.ok) {
    const charge = formatUsdc(check.units * metered.pricePerUnitUsdc);
    if (check.units === 0n) {
      rows.add("metered units", "warn", "the answer signs 0 units: a metered call answered so is charged nothing");
    } else {
      rows.add(
        "metered units",
        "pass",
        `units ${check.units} signed in the result digest, within the call's max_units ${metered.maxUnitsPerCall}: a paid call answered so is charged ${charge} USDC`,
      );
    }
  } else if (check.reason === "units_above_maximum") {
    rows.add("metered units", "fail", `${check.message}: the program refuses to settle them (UnitsAboveMaximum) and the call is refunded`);
  } else {
    rows.add("metered units", "skip", "needs a verified result signature");
  }
}

/**
 * A metered probe allowing one unit fewer than the first probe's answer used, with the same task
 * and parameters: the service must refuse it (any answer but 200), or answer no more units than
 * that. Signing more would be work the program refuses to settle (UnitsAboveMaximum).
 */
async function checkAboveMaximum(
  input: ConformanceInput & { metered: MeteredPricing },
  rows: Rows,
  first: CreatorExecuteRequest,
  check: CreatorResponseCheck,
  signingKey: Uint8Array,
): Promise<void> {
  const row = "refuses units above max_units";
  if (!check.ok) {
    if (check.reason === "units_above_maximum") rows.add(row, "fail", `the probe's own answer is signed, and ${check.message}`);
    else rows.skip([row], "needs a verified result signature");
    return;
  }
  if (check.units === 0n) {
    rows.skip([row], "the probe's answer used no units: there is no fewer to allow");
    return;
  }
  const allowed = check.units - 1n;
  const timeout_ms = input.maxExecutionSecs * 1000;
  const terms = { maxUnits: allowed, pricePerUnitUsdc: input.metered.pricePerUnitUsdc };
  const request = probeRequest(first.agent, first.task, first.parameters, timeout_ms, terms);
  const url = executeUrl(input.endpoint);
  const body = JSON.stringify(request);
  const asked = `a call allowing ${allowed} units (the probe used ${check.units})`;
  let answer: HttpAnswer;
  try {
    answer = await post(url, body, marketplaceSigned(input, url, body), timeout_ms);
  } catch (error) {
    rows.add(row, "fail", `${asked}: no answer: ${reason(error)}`);
    return;
  }
  if (answer.status !== 200) {
    rows.add(row, "pass", `${asked} got ${answer.status}${errorCodeOf(answer.text)}: nothing signed, the call refunded`);
    return;
  }
  const capped = verifyAnswer(jsonOf(answer.text), request, signingKey);
  if (capped.ok) rows.add(row, "pass", `${asked} was answered with ${capped.units} units: it stopped at the maximum`);
  else if (capped.reason === "units_above_maximum") {
    rows.add(row, "fail", `${asked} was signed, and ${capped.message}: the program refuses to settle them (UnitsAboveMaximum); refuse, or stop at the request's max_units`);
  } else rows.add(row, "fail", `${asked} was answered 200 with ${capped.message}`);
}

/** The signature header of a marketplace `POST` of `body` to `url`, made now. */
function marketplaceSigned(input: ConformanceInput, url: URL, body: string): Record<string, string> {
  const signature = signRequest(input.marketplaceSecretKey, {
    method: "POST",
    path: url.pathname + url.search,
    body,
    timestamp_secs: Math.floor(Date.now() / 1000),
  });
  return { [REQUEST_SIGNATURE_HEADER]: signature };
}

/** One marketplace-signed `POST <endpoint>/sign-batch`. */
async function postSignBatch(input: ConformanceInput, batch: SignBatchRequest): Promise<HttpAnswer> {
  const url = signBatchUrl(input.endpoint);
  const body = JSON.stringify(batch);
  return post(url, body, marketplaceSigned(input, url, body), input.maxExecutionSecs * 1000);
}

/**
 * `POST /sign-batch` (optional): asked for the probe's own result, the service signs its batch
 * digest with the agent's key; asked for a result it never signed, it refuses. A service without
 * the route still works: its settlements carry one signature per execution instead of one per batch.
 */
async function checkSignBatch(
  input: ConformanceInput,
  rows: Rows,
  agent: string,
  item: SignBatchItem,
  signingKey: Uint8Array,
): Promise<void> {
  const batch: SignBatchRequest = { agent, items: [item] };
  const path = signBatchUrl(input.endpoint).pathname;
  let answer: HttpAnswer;
  try {
    answer = await postSignBatch(input, batch);
  } catch (error) {
    rows.add("batch signature", "fail", `POST ${path}: no answer: ${reason(error)}`);
    rows.skip(["batch refuses unknown results"], "needs an answer from /sign-batch");
    return;
  }
  if (answer.status === 404) {
    rows.add(
      "batch signature",
      "warn",
      `POST ${path} answered 404 (optional): each settlement of this agent carries one signature per execution`,
    );
    rows.skip(["batch refuses unknown results"], "no /sign-batch");
    return;
  }
  const parsed = jsonOf(answer.text);
  const signed = answer.status === 200 ? verifySignBatchResponse(parsed, batch, signingKey) : null;
  if (signed === null) rows.add("batch signature", "fail", `POST ${path} answered ${answer.status}${errorCodeOf(answer.text)}, not 200`);
  else if (!signed.ok) rows.add("batch signature", "fail", parsed === undefined ? "the answer is not JSON" : signed.message);
  else rows.add("batch signature", "pass", `Ed25519 over the batch digest of the probe's result by ${input.signingKey}`);

  // Another result hash under the same signature: a service that signed this would vouch for an
  // output it never produced, for whoever holds the marketplace key.
  const forged = { ...item, result_hash: item.result_hash.replace(/^./, (c) => (c === "0" ? "1" : "0")) };
  try {
    const refused = await postSignBatch(input, { agent, items: [forged] });
    const ok = refused.status === 422 && errorCodeOf(refused.text) === " unknown_result_signature";
    rows.add(
      "batch refuses unknown results",
      ok ? "pass" : "fail",
      `a result it never signed got ${refused.status}${errorCodeOf(refused.text)}${ok ? "" : ", not 422 unknown_result_signature"}`,
    );
  } catch (error) {
    rows.add("batch refuses unknown results", "fail", `no answer: ${reason(error)}`);
  }
}

/** GET /health is optional in the protocol, but when there, it must name the key results are signed with. */
async function checkHealth(input: ConformanceInput, rows: Rows): Promise<void> {
  const url = new URL(input.endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/health`;
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    const body = (await response.json().catch(() => null)) as { signing_key?: unknown } | null;
    if (response.status !== 200 || typeof body?.signing_key !== "string") {
      rows.add("health", "warn", `GET ${url.pathname} answered ${response.status} without a signing_key (optional)`);
    } else if (body.signing_key !== input.signingKey) {
      rows.add("health", "fail", `the service signs with ${body.signing_key}, not ${input.signingKey}`);
    } else {
      rows.add("health", "pass", `GET ${url.pathname} names ${body.signing_key}`);
    }
  } catch (error) {
    rows.add("health", "warn", `GET ${url.pathname} failed: ${reason(error)} (optional)`);
  }
}
