// The marketplace ⇄ creator wire protocol, shared by the relayer, the creator
// kit, the conformance checker and the consumer client's receipt check. docs/execute-protocol.md
// documents every field; tests/vectors/protocol.json carries its test vectors (written by
// scripts/gen-protocol-vectors.mjs without this module, so they check it independently).
import { sha256 } from "@noble/hashes/sha2";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import { toHex, fromHex } from "./bytes.js";
import { canonicalJsonHash, outputHash, resultDigest, type EscrowBinding } from "./digest.js";
import { ed25519PublicKey, ed25519Sign, ed25519Verify } from "./ed25519.js";
import { formatUsdc, parseWireUsdc } from "./usdc.js";

export { ed25519PublicKey, ed25519Sign, ed25519Verify };

const bs58 = utils.bytes.bs58;
const utf8 = new TextEncoder();

/** Domain tag that starts every message the marketplace signs for a creator. */
export const REQUEST_SIGNATURE_DOMAIN = "agentmarket/request/v1";
/** Header (lowercase, as Node delivers it) carrying `t=<unix secs>,key=<base58>,sig=<hex>`. */
export const REQUEST_SIGNATURE_HEADER = "agentmarket-signature";
/** A creator should refuse requests whose timestamp is further than this from its clock. */
export const DEFAULT_REQUEST_TOLERANCE_SECS = 300;
export const EXECUTION_ID_PREFIX = "exec_";
/** The execute protocol version this package speaks: its result digest binds the escrow. */
export const EXECUTE_PROTOCOL_VERSION = 2;

/**
 * The escrow a result is signed for, on the wire: what `POST /execute` and each `/sign-batch`
 * item carry so that the creator signs the v2 result digest of exactly this escrow.
 */
export interface WireEscrow {
  /** `exec_` + base58 of the 16 random bytes that seed the escrow. */
  execution_id: string;
  /** The agent account's address (base58). */
  agent: string;
  /** Decimal string of the escrow's u64 nonce (Escrow.nonce). */
  escrow_nonce: string;
  /** The wallet that pays (base58): the owner of `payer_token_account`. */
  payer: string;
  /** The USDC account the escrow was funded from (base58). */
  payer_token_account: string;
  /** What the escrow holds, USDC with 6 decimals ("0.250000"). */
  amount_usdc: string;
  /** Lowercase hex of SHA-256(canonical JSON of {task, parameters}). */
  request_hash: string;
}

/** Body of `POST <endpoint>/execute`, marketplace → creator. */
export interface CreatorExecuteRequest extends WireEscrow {
  /** Always EXECUTE_PROTOCOL_VERSION (2), a JSON number. */
  protocol_version: 2;
  /** "devnet" or "mainnet". */
  network: string;
  task: string;
  parameters: Record<string, unknown>;
  /** RFC 3339: after it, the escrow can no longer be settled. */
  deadline: string;
  /**
   * A metered call only: the most units the answer may report (Escrow.max_units, decimal u64);
   * the program refuses a settlement of more.
   */
  max_units?: string;
  /** A metered call only: what each unit costs the caller, USDC with 6 decimals (Escrow.price_per_unit_usdc). */
  price_per_unit_usdc?: string;
}

/** A metered request's terms: the most units its answer may report, and what each costs. */
export interface MeteredTerms {
  maxUnits: bigint;
  pricePerUnitUsdc: bigint;
}

/** Body of the creator's `200` answer. */
export interface CreatorExecuteResponse {
  execution_id: string;
  output: unknown;
  /** Lowercase hex of SHA-256(canonical JSON of output). */
  result_hash: string;
  /** Decimal string of the u64 units the call used, signed; absent means "0" (a fixed-price call). */
  units?: string;
  /** Lowercase hex of the creator's Ed25519 signature over the result digest. */
  signature: string;
}

const U64_MAX = (1n << 64n) - 1n;

/** A u64 from its decimal string (no sign, no leading zero); null if `text` is not one. */
export function parseDecimalU64(text: unknown): bigint | null {
  if (typeof text !== "string" || !/^(0|[1-9][0-9]{0,19})$/.test(text)) return null;
  const value = BigInt(text);
  return value <= U64_MAX ? value : null;
}

/**
 * The escrow binding of wire fields, as resultDigest takes it; throws a TypeError naming the
 * first malformed field.
 */
export function escrowBindingOf(wire: WireEscrow): EscrowBinding {
  const executionId = parseExecutionId(wire.execution_id);
  if (!executionId) throw new TypeError(`execution_id is not an execution id: ${String(wire.execution_id)}`);
  const addresses = (["agent", "payer", "payer_token_account"] as const).map((field) => {
    const bytes = parseAddress(wire[field]);
    if (!bytes) throw new TypeError(`${field} is not a base58 address: ${String(wire[field])}`);
    return new PublicKey(bytes);
  });
  const nonce = parseDecimalU64(wire.escrow_nonce);
  if (nonce === null) throw new TypeError(`escrow_nonce is not the decimal string of a u64: ${String(wire.escrow_nonce)}`);
  let amountUsdc: bigint;
  try {
    amountUsdc = parseWireUsdc(wire.amount_usdc);
  } catch {
    throw new TypeError(`amount_usdc is not USDC with 6 decimals: ${String(wire.amount_usdc)}`);
  }
  if (typeof wire.request_hash !== "string" || !/^[0-9a-f]{64}$/.test(wire.request_hash)) {
    throw new TypeError(`request_hash is not 64 lowercase hex characters: ${String(wire.request_hash)}`);
  }
  return {
    executionId,
    agent: addresses[0]!,
    nonce,
    payer: addresses[1]!,
    payerTokenAccount: addresses[2]!,
    amountUsdc,
    requestHash: fromHex(wire.request_hash),
  };
}

/** The wire fields of an escrow binding (what the marketplace sends for an escrow it opened). */
export function wireEscrowOf(escrow: EscrowBinding): WireEscrow {
  return {
    execution_id: formatExecutionId(escrow.executionId),
    agent: escrow.agent.toBase58(),
    escrow_nonce: escrow.nonce.toString(),
    payer: escrow.payer.toBase58(),
    payer_token_account: escrow.payerTokenAccount.toBase58(),
    amount_usdc: formatUsdc(escrow.amountUsdc),
    request_hash: toHex(escrow.requestHash),
  };
}

export type ExecuteRequestCheck =
  | { ok: true; request: CreatorExecuteRequest; escrow: EscrowBinding; metered: MeteredTerms | null }
  | { ok: false; reason: "unsupported_protocol_version" | "malformed_request"; message: string };

/**
 * Checks the shape of a `POST /execute` body (after its signature, which covers every byte):
 * protocol version 2 and the escrow fields the result digest binds. A creator answers 400 on
 * any failure: signing for a request it cannot bind would sign a digest nobody can settle.
 */
export function parseExecuteRequest(body: unknown): ExecuteRequestCheck {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, reason: "malformed_request", message: "the request body is not a JSON object" };
  }
  const request = body as Record<string, unknown>;
  if (request.protocol_version !== EXECUTE_PROTOCOL_VERSION) {
    return {
      ok: false,
      reason: "unsupported_protocol_version",
      message: `protocol_version is ${JSON.stringify(request.protocol_version) ?? "missing"}; this creator speaks ${EXECUTE_PROTOCOL_VERSION}`,
    };
  }
  for (const field of ["network", "task", "deadline"] as const) {
    if (typeof request[field] !== "string") return { ok: false, reason: "malformed_request", message: `${field} is missing or not a string` };
  }
  const parameters = request.parameters;
  if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) {
    return { ok: false, reason: "malformed_request", message: "parameters is not a JSON object" };
  }
  if (("max_units" in request) !== ("price_per_unit_usdc" in request)) {
    return { ok: false, reason: "malformed_request", message: "a metered request carries both max_units and price_per_unit_usdc" };
  }
  let metered: MeteredTerms | null = null;
  if ("max_units" in request) {
    const maxUnits = parseDecimalU64(request.max_units);
    if (maxUnits === null) return { ok: false, reason: "malformed_request", message: "max_units is not the decimal string of a u64" };
    let pricePerUnitUsdc: bigint;
    try {
      pricePerUnitUsdc = parseWireUsdc(request.price_per_unit_usdc as string);
    } catch {
      return { ok: false, reason: "malformed_request", message: "price_per_unit_usdc is not USDC with 6 decimals" };
    }
    metered = { maxUnits, pricePerUnitUsdc };
  }
  try {
    const escrow = escrowBindingOf(request as unknown as WireEscrow);
    return { ok: true, request: request as unknown as CreatorExecuteRequest, escrow, metered };
  } catch (error) {
    return { ok: false, reason: "malformed_request", message: (error as Error).message };
  }
}

export function formatExecutionId(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`an execution id is 16 bytes, got ${bytes.length}`);
  return EXECUTION_ID_PREFIX + bs58.encode(bytes);
}

/** The 16 bytes of an `exec_…` id, or null if `id` is not one. */
export function parseExecutionId(id: string): Uint8Array | null {
  if (typeof id !== "string" || !id.startsWith(EXECUTION_ID_PREFIX)) return null;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(id.slice(EXECUTION_ID_PREFIX.length));
  } catch {
    return null;
  }
  return bytes.length === 16 && formatExecutionId(bytes) === id ? Uint8Array.from(bytes) : null;
}

/** The 32 bytes of a base58 address (an account or an Ed25519 public key), or null if `address` is not one. */
export function parseAddress(address: string): Uint8Array | null {
  if (typeof address !== "string") return null;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(address);
  } catch {
    return null;
  }
  return bytes.length === 32 && bs58.encode(bytes) === address ? Uint8Array.from(bytes) : null;
}

/** The base58 address of 32 bytes (an account or an Ed25519 public key). */
export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length !== 32) throw new RangeError(`an address is 32 bytes, got ${bytes.length}`);
  return bs58.encode(bytes);
}

export interface SignedRequestParts {
  method: string;
  /** Path of the request URL, with its query string if any, exactly as sent. */
  path: string;
  body: Uint8Array | string;
  timestamp_secs: number;
}

// The header's `t` holds at most 12 digits; a timestamp outside that range could be signed but
// never verified.
const MAX_TIMESTAMP_SECS = 999_999_999_999;

/** `domain \n timestamp \n METHOD \n path \n hex(SHA-256(body))`, UTF-8. */
export function requestSigningMessage(parts: SignedRequestParts): Uint8Array {
  if (!(parts.timestamp_secs >= 0 && parts.timestamp_secs <= MAX_TIMESTAMP_SECS)) {
    throw new RangeError(`timestamp_secs must be within 0..${MAX_TIMESTAMP_SECS}, got ${parts.timestamp_secs}`);
  }
  const body = typeof parts.body === "string" ? utf8.encode(parts.body) : parts.body;
  return utf8.encode(
    [
      REQUEST_SIGNATURE_DOMAIN,
      String(Math.trunc(parts.timestamp_secs)),
      parts.method.toUpperCase(),
      parts.path,
      toHex(sha256(body)),
    ].join("\n"),
  );
}

/** The `agentmarket-signature` header value for a request signed by the marketplace key. */
export function signRequest(marketplaceSecretKey: Uint8Array, parts: SignedRequestParts): string {
  const key = formatAddress(ed25519PublicKey(marketplaceSecretKey));
  const signature = ed25519Sign(marketplaceSecretKey, requestSigningMessage(parts));
  return `t=${Math.trunc(parts.timestamp_secs)},key=${key},sig=${toHex(signature)}`;
}

export type RequestSignatureFailure =
  | "missing_signature"
  | "malformed_signature"
  | "unexpected_key"
  | "stale_timestamp"
  | "bad_signature";

export type RequestSignatureCheck =
  | { ok: true; timestamp_secs: number; signature: string }
  | { ok: false; reason: RequestSignatureFailure };

/**
 * Checks a request's `agentmarket-signature` header: the marketplace's key, a timestamp within
 * `tolerance_secs` of `now_secs`, and the signature over method, path and body.
 */
export function verifyRequestSignature(
  header: string | undefined,
  request: { method: string; path: string; body: Uint8Array | string },
  options: { marketplace_key: string; now_secs: number; tolerance_secs?: number },
): RequestSignatureCheck {
  if (header === undefined || header === "") return { ok: false, reason: "missing_signature" };
  const fields = new Map<string, string>();
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return { ok: false, reason: "malformed_signature" };
    const name = part.slice(0, eq).trim();
    // Node joins a repeated header with ", ": two signatures in one request are ambiguous, not a choice.
    if (fields.has(name)) return { ok: false, reason: "malformed_signature" };
    fields.set(name, part.slice(eq + 1).trim());
  }
  const t = fields.get("t");
  const key = fields.get("key");
  const sig = fields.get("sig");
  // signRequest writes t without leading zeros; accepting them would let one signature travel
  // under several headers.
  if (!t || !/^(0|[1-9][0-9]{0,11})$/.test(t) || !key || !sig || !/^[0-9a-f]{128}$/.test(sig)) {
    return { ok: false, reason: "malformed_signature" };
  }
  if (key !== options.marketplace_key) return { ok: false, reason: "unexpected_key" };
  const timestamp_secs = Number(t);
  const tolerance = options.tolerance_secs ?? DEFAULT_REQUEST_TOLERANCE_SECS;
  if (Math.abs(options.now_secs - timestamp_secs) > tolerance) return { ok: false, reason: "stale_timestamp" };
  const publicKey = parseAddress(key);
  if (!publicKey) return { ok: false, reason: "malformed_signature" };
  const message = requestSigningMessage({ ...request, timestamp_secs });
  if (!ed25519Verify(fromHex(sig), message, publicKey)) return { ok: false, reason: "bad_signature" };
  return { ok: true, timestamp_secs, signature: sig };
}

/**
 * What a creator answers for `request` with `output`, signed with its registered key over the v2
 * result digest of the request's escrow. `units` (a metered call's) is answered and signed; left
 * out, the answer has none and the digest signs 0, as a fixed-price call does.
 */
export function signResult(
  creatorSecretKey: Uint8Array,
  request: WireEscrow,
  output: unknown,
  units?: bigint,
): CreatorExecuteResponse {
  const escrow = escrowBindingOf(request);
  const resultHash = outputHash(output);
  const digest = resultDigest({ escrow, resultHash, units: units ?? 0n });
  return {
    execution_id: request.execution_id,
    output,
    result_hash: toHex(resultHash),
    ...(units === undefined ? {} : { units: units.toString() }),
    signature: toHex(ed25519Sign(creatorSecretKey, digest)),
  };
}

export type CreatorResponseFailure =
  | "malformed_response"
  | "execution_id_mismatch"
  | "result_hash_mismatch"
  | "bad_signature"
  | "units_above_maximum";

export type CreatorResponseCheck =
  | { ok: true; result_hash: Uint8Array; units: bigint; digest: Uint8Array; signature: Uint8Array; output: unknown }
  | { ok: false; reason: CreatorResponseFailure; message: string };

/**
 * Checks a creator's answer to one request: shape, the echoed execution id, the result hash of
 * the output, the units (absent: 0), and the Ed25519 signature by `signing_key` over the v2 result
 * digest of the escrow the request carried. Units above a metered request's `max_units` fail
 * (the program would refuse to settle them); a fixed-price request's units are signed but do not
 * change its charge. Schema checks of the output are the caller's.
 */
export function verifyCreatorResponse(
  body: unknown,
  expected: WireEscrow & { signing_key: Uint8Array } & Pick<CreatorExecuteRequest, "max_units">,
): CreatorResponseCheck {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, reason: "malformed_response", message: "the response body is not a JSON object" };
  }
  const response = body as Record<string, unknown>;
  if (!("output" in response)) return { ok: false, reason: "malformed_response", message: "output is missing" };
  for (const field of ["execution_id", "result_hash", "signature"] as const) {
    if (typeof response[field] !== "string") {
      return { ok: false, reason: "malformed_response", message: `${field} is missing or not a string` };
    }
  }
  if (response.execution_id !== expected.execution_id) {
    return {
      ok: false,
      reason: "execution_id_mismatch",
      message: `execution_id ${String(response.execution_id)} does not echo ${expected.execution_id}`,
    };
  }
  const resultHashHex = response.result_hash as string;
  const signatureHex = response.signature as string;
  if (!/^[0-9a-f]{64}$/.test(resultHashHex) || !/^[0-9a-f]{128}$/.test(signatureHex)) {
    return {
      ok: false,
      reason: "malformed_response",
      message: "result_hash must be 64 and signature 128 lowercase hex characters",
    };
  }
  const units = "units" in response ? parseDecimalU64(response.units) : 0n;
  if (units === null) {
    return { ok: false, reason: "malformed_response", message: "units is not the decimal string of a u64" };
  }
  let resultHash: Uint8Array;
  try {
    resultHash = canonicalJsonHash(response.output);
  } catch (error) {
    return { ok: false, reason: "malformed_response", message: `output has no canonical JSON: ${String(error)}` };
  }
  if (toHex(resultHash) !== resultHashHex) {
    return { ok: false, reason: "result_hash_mismatch", message: "result_hash is not SHA-256 of the output's canonical JSON" };
  }
  const digest = resultDigest({ escrow: escrowBindingOf(expected), resultHash, units });
  const signature = fromHex(signatureHex);
  if (!ed25519Verify(signature, digest, expected.signing_key)) {
    return { ok: false, reason: "bad_signature", message: "signature does not verify against the agent's registered key" };
  }
  // The request's own max_units, as the marketplace sent it: a request it made, so well formed.
  const max_units = expected.max_units === undefined ? null : parseDecimalU64(expected.max_units);
  if (max_units !== null && units > max_units) {
    return {
      ok: false,
      reason: "units_above_maximum",
      message: `units ${units} are above the call's max_units ${max_units}`,
    };
  }
  return { ok: true, result_hash: resultHash, units, digest, signature, output: response.output };
}

/** The public listing document whose hash the agent account records (Agent.listing_hash). */
export interface ListingDocument {
  name: string;
  description: string;
  tags: string[];
  input_schema: unknown;
  output_schema: unknown;
}

/** SHA-256 of the canonical JSON of exactly the listing document's five fields. */
export function listingHash(listing: ListingDocument): Uint8Array {
  return canonicalJsonHash({
    name: listing.name,
    description: listing.description,
    tags: listing.tags,
    input_schema: listing.input_schema,
    output_schema: listing.output_schema,
  });
}
