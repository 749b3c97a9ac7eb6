// Agent listings: the creator checklist of spec §1 run as one ordered series of checks, each
// failing with its own code so the dashboard can show which step is missing (the on-chain
// account and its terms, the collateral, a public endpoint, a conformance probe answered with a
// correctly signed, schema-valid result), then discovery.
import { randomBytes } from "node:crypto";

import {
  formatExecutionId,
  listingHash,
  LruMap,
  MAX_ENDPOINT_LEN,
  PROBE_TASK,
  requestHash,
  toHex,
  type Agent,
  type CreatorExecuteRequest,
} from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { NetworkName, RelayerConfig } from "../config.js";
import type { CreatorClient } from "../creator/creator-client.js";
import type { Db } from "../db/pool.js";
import { ApiError } from "../errors.js";
import { formatUsdc } from "../usdc.js";
import { checkSchema, sampleFor, validateAgainst } from "./json-schema.js";
import { pricingFromChain, samePricing, type PricingWire } from "./pricing.js";

export type ListingStatus = "active" | "paused" | "retired";

export interface ListingInput {
  network: NetworkName;
  agent: string;
  name: string;
  description: string;
  tags: string[];
  input_schema: object;
  output_schema: object;
  endpoint: string;
  signing_key: string;
  pricing: PricingWire;
  probe?: { task?: string; parameters?: Record<string, unknown> };
}

export type ListingUpdate = Partial<Omit<ListingInput, "network" | "agent">>;

/** What an execution needs of a listing. */
export interface ListingForExecution {
  input_schema: object;
  output_schema: object;
  status: ListingStatus;
  /** The endpoint the listing's probe checked, the only one executions may call (probed-endpoint.ts). */
  endpoint: string;
}

/**
 * How long an execution may use a listing read earlier. Changes made through this instance are
 * seen at once; changes made through another relayer, within this time.
 */
export const LISTING_CACHE_MS = 1_000;
const LISTING_CACHE_ENTRIES = 10_000;

export interface ListingObject {
  object: "agent";
  id: string;
  network: NetworkName;
  creator: string;
  name: string;
  description: string;
  tags: string[];
  pricing: PricingWire;
  input_schema: object;
  output_schema: object;
  endpoint: string;
  signing_key: string;
  max_execution_secs: number;
  collateral_usdc: string;
  minimum_collateral_usdc: string;
  listing_hash: string;
  status: ListingStatus;
  created_at: string;
  updated_at: string;
  last_probe: { at: string; latency_ms: number } | null;
}

interface ListingRow {
  network: NetworkName;
  agent: string;
  creator: string;
  name: string;
  description: string;
  tags: string[];
  input_schema: object;
  output_schema: object;
  endpoint: string;
  signing_key: string;
  pricing: PricingWire;
  max_execution_secs: number;
  collateral_usdc: string;
  listing_hash: Buffer;
  status: ListingStatus;
  created_at: Date;
  updated_at: Date;
  last_probe_at: Date | null;
  last_probe_latency_ms: number | null;
}

const COLUMNS =
  "network, agent, creator, name, description, tags, input_schema, output_schema, endpoint, signing_key, pricing, " +
  "max_execution_secs, collateral_usdc, listing_hash, status, created_at, updated_at, last_probe_at, last_probe_latency_ms";

interface Verified {
  agent: Agent;
  listing_hash: Uint8Array;
  minimum_collateral_usdc: bigint;
  probe_latency_ms: number;
}

export interface ListQuery {
  network: NetworkName;
  status: ListingStatus;
  tag?: string;
  q?: string;
  limit: number;
  starting_after?: string;
}

export class ListingService {
  private readonly forExecutions = new LruMap<string, { listing: Promise<ListingForExecution | null>; at_ms: number }>(
    LISTING_CACHE_ENTRIES,
  );

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly creators: CreatorClient,
    private readonly config: Pick<
      RelayerConfig,
      "endpoint_policy" | "schema_limit_bytes" | "probe_timeout_ms" | "probe_max_response_bytes"
    >,
  ) {}

  async create(wallet: string, input: ListingInput): Promise<ListingObject> {
    this.chain.connection(input.network);
    const existing = await this.row(input.network, input.agent);
    if (existing) throw new ApiError("agent_already_listed", `Agent ${input.agent} is listed on ${input.network}.`, "agent");
    const verified = await this.verify(wallet, input);
    const { rows } = await this.db.query<ListingRow>(
      `INSERT INTO agent_listings (network, agent, creator, name, description, tags, input_schema, output_schema, endpoint,
         signing_key, pricing, max_execution_secs, collateral_usdc, listing_hash, status, last_probe_at, last_probe_latency_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'active', clock_timestamp(), $15)
       ON CONFLICT (network, agent) DO NOTHING
       RETURNING ${COLUMNS}`,
      [input.network, input.agent, wallet, ...listingValues(input, verified)],
    );
    if (rows.length === 0) throw new ApiError("agent_already_listed", `Agent ${input.agent} is listed on ${input.network}.`, "agent");
    this.forget(input.network, input.agent);
    return this.toObject(rows[0]!, verified.minimum_collateral_usdc);
  }

  /** Changes a listing; the whole checklist runs again on the merged listing. */
  async update(wallet: string, network: NetworkName, agent: string, update: ListingUpdate): Promise<ListingObject> {
    const current = await this.owned(wallet, network, agent);
    if (current.status === "retired") throw new ApiError("listing_retired");
    const merged: ListingInput = {
      network,
      agent,
      name: update.name ?? current.name,
      description: update.description ?? current.description,
      tags: update.tags ?? current.tags,
      input_schema: update.input_schema ?? current.input_schema,
      output_schema: update.output_schema ?? current.output_schema,
      endpoint: update.endpoint ?? current.endpoint,
      signing_key: update.signing_key ?? current.signing_key,
      pricing: update.pricing ?? current.pricing,
      ...(update.probe === undefined ? {} : { probe: update.probe }),
    };
    const verified = await this.verify(wallet, merged);
    const { rows } = await this.db.query<ListingRow>(
      `UPDATE agent_listings SET name = $3, description = $4, tags = $5, input_schema = $6, output_schema = $7,
         endpoint = $8, signing_key = $9, pricing = $10, max_execution_secs = $11, collateral_usdc = $12,
         listing_hash = $13, updated_at = clock_timestamp(), last_probe_at = clock_timestamp(), last_probe_latency_ms = $14
       WHERE network = $1 AND agent = $2 AND status <> 'retired' RETURNING ${COLUMNS}`,
      [network, agent, ...listingValues(merged, verified)],
    );
    this.forget(network, agent);
    if (rows.length === 0) throw new ApiError("listing_retired");
    return this.toObject(rows[0]!, verified.minimum_collateral_usdc);
  }

  async pause(wallet: string, network: NetworkName, agent: string): Promise<ListingObject> {
    const current = await this.owned(wallet, network, agent);
    if (current.status === "retired") throw new ApiError("listing_retired");
    return this.setStatus(network, agent, "paused");
  }

  /** Back to active, once the chain and the endpoint still pass the checklist. */
  async resume(wallet: string, network: NetworkName, agent: string): Promise<ListingObject> {
    const current = await this.owned(wallet, network, agent);
    if (current.status === "retired") throw new ApiError("listing_retired");
    await this.verify(wallet, { ...current, network, agent });
    return this.setStatus(network, agent, "active");
  }

  /** Retires the listing for good (the on-chain agent is retired by the creator's own transaction). */
  async retire(wallet: string, network: NetworkName, agent: string): Promise<ListingObject> {
    await this.owned(wallet, network, agent);
    return this.setStatus(network, agent, "retired");
  }

  /**
   * The listing an execution runs under, null if there is none. Every execution reads it, so it
   * is kept for LISTING_CACHE_MS; the schemas stay the same objects, whose compiled validators
   * are then found without serializing them.
   */
  forExecution(network: NetworkName, agent: string): Promise<ListingForExecution | null> {
    const key = `${network}/${agent}`;
    const cached = this.forExecutions.get(key);
    if (cached && Date.now() - cached.at_ms < LISTING_CACHE_MS) return cached.listing;
    const listing = this.db
      .query<ListingForExecution>(
        "SELECT input_schema, output_schema, status, endpoint FROM agent_listings WHERE network = $1 AND agent = $2",
        [network, agent],
      )
      .then(({ rows }) => rows[0] ?? null);
    this.forExecutions.set(key, { listing, at_ms: Date.now() });
    listing.catch(() => this.forExecutions.delete(key));
    return listing;
  }

  /**
   * Pauses an active listing whose agent account no longer names the endpoint it probed (see
   * probed-endpoint.ts); one whose endpoint was updated meanwhile is left alone.
   */
  async pauseUnprobed(network: NetworkName, agent: string, probed_endpoint: string): Promise<void> {
    await this.db.query(
      `UPDATE agent_listings SET status = 'paused', updated_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 AND status = 'active' AND endpoint = $3`,
      [network, agent, probed_endpoint],
    );
    this.forget(network, agent);
  }

  private forget(network: NetworkName, agent: string): void {
    this.forExecutions.delete(`${network}/${agent}`);
  }

  async get(network: NetworkName, agent: string): Promise<ListingObject> {
    const row = await this.row(network, agent);
    if (!row) throw new ApiError("resource_not_found", `No agent ${agent} on ${network}.`, "agent_id");
    return this.toObject(row, await this.minimumCollateral(network));
  }

  /** Listings newest first, filtered by status, tag and text (name, description). */
  async list(query: ListQuery): Promise<{ data: ListingObject[]; has_more: boolean }> {
    const where = ["network = $1", "status = $2"];
    const params: unknown[] = [query.network, query.status];
    if (query.tag !== undefined) {
      params.push(query.tag);
      where.push(`$${params.length} = ANY(tags)`);
    }
    if (query.q !== undefined) {
      params.push(`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where.push(`(name ILIKE $${params.length} OR description ILIKE $${params.length})`);
    }
    if (query.starting_after !== undefined) {
      const cursor = await this.row(query.network, query.starting_after);
      if (!cursor) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.created_at, cursor.agent);
      where.push(`(created_at, agent) < ($${params.length - 1}, $${params.length})`);
    }
    params.push(query.limit + 1);
    const { rows } = await this.db.query<ListingRow>(
      `SELECT ${COLUMNS} FROM agent_listings WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, agent DESC LIMIT $${params.length}`,
      params,
    );
    const minimum = await this.minimumCollateral(query.network);
    return {
      data: rows.slice(0, query.limit).map((row) => this.toObject(row, minimum)),
      has_more: rows.length > query.limit,
    };
  }

  private async verify(wallet: string, input: ListingInput): Promise<Verified> {
    checkSchema(input.input_schema, "input_schema", this.config.schema_limit_bytes, true);
    checkSchema(input.output_schema, "output_schema", this.config.schema_limit_bytes, false);
    this.checkEndpointUrl(input.endpoint);
    const signingKey = parseAddress(input.signing_key, "signing_key");
    const address = parseAddress(input.agent, "agent");

    const agent = await this.chain.agent(input.network, address);
    if (!agent) throw new ApiError("agent_not_on_chain", `No agent account ${input.agent} on ${input.network}.`, "agent");
    if (agent.creator.toBase58() !== wallet) {
      throw new ApiError("not_agent_creator", `Agent ${input.agent} was registered by another wallet.`, "agent");
    }
    if (agent.status !== "Active") throw new ApiError("agent_retired_on_chain", undefined, "agent");
    if (!Buffer.from(agent.signingKey).equals(signingKey.toBuffer())) {
      throw new ApiError(
        "signing_key_mismatch",
        `The agent account's signing key is ${new PublicKey(agent.signingKey).toBase58()}.`,
        "signing_key",
      );
    }
    const onChainPricing = pricingFromChain(agent.pricing);
    if (!samePricing(onChainPricing, input.pricing)) {
      throw new ApiError("pricing_mismatch", `The agent account's pricing is ${JSON.stringify(onChainPricing)}.`, "pricing", {
        on_chain: onChainPricing,
      });
    }
    if (agent.endpoint !== input.endpoint) {
      throw new ApiError("endpoint_mismatch", `The agent account's endpoint is ${agent.endpoint}.`, "endpoint");
    }
    const hash = listingHash(input);
    if (!Buffer.from(agent.listingHash).equals(Buffer.from(hash))) {
      throw new ApiError(
        "listing_hash_mismatch",
        `SHA-256 of this listing's canonical JSON is ${toHex(hash)}; the agent account holds ${toHex(agent.listingHash)}.`,
        undefined,
        { listing_hash: toHex(hash), on_chain: toHex(agent.listingHash) },
      );
    }
    // Read afresh: a listing is checked once, against the minimum the market holds now.
    const minimum = (await this.chain.market(input.network, 0)).minCollateralUsdc;
    if (agent.collateralUsdc < minimum) {
      throw new ApiError(
        "collateral_below_minimum",
        `The agent locks ${formatUsdc(agent.collateralUsdc)} USDC; the minimum is ${formatUsdc(minimum)} USDC.`,
        undefined,
        { collateral_usdc: formatUsdc(agent.collateralUsdc), minimum_collateral_usdc: formatUsdc(minimum) },
      );
    }
    const probe_latency_ms = await this.probe(input, agent);
    return { agent, listing_hash: hash, minimum_collateral_usdc: minimum, probe_latency_ms };
  }

  /** A marketplace-signed test request; the answer must verify exactly as a paid call's would. */
  private async probe(input: ListingInput, agent: Agent): Promise<number> {
    const parameters = input.probe?.parameters ?? sampleFor(input.input_schema);
    if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) {
      throw new ApiError("probe_parameters_unavailable", undefined, "probe.parameters");
    }
    const violation = validateAgainst(input.input_schema, parameters);
    if (violation) {
      throw new ApiError(
        "validation_failed",
        `probe.parameters${violation.path} ${violation.message}`,
        `probe.parameters${violation.path.replaceAll("/", ".")}`,
      );
    }
    const task = input.probe?.task ?? PROBE_TASK;
    const timeout_ms = Math.min(this.config.probe_timeout_ms, agent.maxExecutionSecs * 1000);
    const request: CreatorExecuteRequest = {
      execution_id: formatExecutionId(randomBytes(16)),
      agent: input.agent,
      network: input.network,
      task,
      parameters: parameters as Record<string, unknown>,
      request_hash: toHex(requestHash(task, parameters)),
      deadline: new Date(Date.now() + timeout_ms).toISOString(),
    };
    const outcome = await this.creators.call({
      endpoint: input.endpoint,
      request,
      signing_key: new PublicKey(input.signing_key).toBytes(),
      output_schema: input.output_schema,
      timeout_ms,
      max_response_bytes: this.config.probe_max_response_bytes,
    });
    if (outcome.ok) return outcome.latency_ms;
    const message = `Conformance probe: ${outcome.message}.`;
    switch (outcome.failure) {
      case "endpoint_not_allowed":
        throw new ApiError("endpoint_not_allowed", message, "endpoint");
      case "unreachable":
      case "timeout":
        throw new ApiError("endpoint_unreachable", message, "endpoint");
      case "http_error":
        throw new ApiError("probe_http_error", message, undefined, { status: outcome.status });
      case "response_too_large":
      case "invalid_response":
        throw new ApiError("probe_invalid_response", message);
      case "bad_signature":
        throw new ApiError("probe_bad_signature", message);
      case "output_invalid":
        throw new ApiError("probe_output_invalid", message);
    }
  }

  private checkEndpointUrl(endpoint: string): void {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new ApiError("validation_failed", "endpoint is not an absolute URL.", "endpoint");
    }
    if (Buffer.byteLength(endpoint) > MAX_ENDPOINT_LEN) {
      throw new ApiError("validation_failed", `endpoint is longer than ${MAX_ENDPOINT_LEN} bytes.`, "endpoint");
    }
    const allowed = this.config.endpoint_policy === "development" ? ["https:", "http:"] : ["https:"];
    if (!allowed.includes(url.protocol) || url.username !== "" || url.password !== "" || url.hash !== "") {
      throw new ApiError(
        "endpoint_not_allowed",
        `endpoint must be an ${allowed.join(" or ")} URL without credentials or fragment.`,
        "endpoint",
      );
    }
  }

  private async owned(wallet: string, network: NetworkName, agent: string): Promise<ListingRow> {
    const row = await this.row(network, agent);
    if (!row || row.creator !== wallet) {
      throw new ApiError("resource_not_found", `You have no agent ${agent} on ${network}.`, "agent_id");
    }
    return row;
  }

  private async setStatus(network: NetworkName, agent: string, status: ListingStatus): Promise<ListingObject> {
    const { rows } = await this.db.query<ListingRow>(
      `UPDATE agent_listings SET status = $3, updated_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 RETURNING ${COLUMNS}`,
      [network, agent, status],
    );
    this.forget(network, agent);
    return this.toObject(rows[0]!, await this.minimumCollateral(network));
  }

  private async row(network: NetworkName, agent: string): Promise<ListingRow | undefined> {
    const { rows } = await this.db.query<ListingRow>(
      `SELECT ${COLUMNS} FROM agent_listings WHERE network = $1 AND agent = $2`,
      [network, agent],
    );
    return rows[0];
  }

  private async minimumCollateral(network: NetworkName): Promise<bigint> {
    return (await this.chain.market(network)).minCollateralUsdc;
  }

  private toObject(row: ListingRow, minimum: bigint): ListingObject {
    return {
      object: "agent",
      id: row.agent,
      network: row.network,
      creator: row.creator,
      name: row.name,
      description: row.description,
      tags: row.tags,
      pricing: row.pricing,
      input_schema: row.input_schema,
      output_schema: row.output_schema,
      endpoint: row.endpoint,
      signing_key: row.signing_key,
      max_execution_secs: row.max_execution_secs,
      collateral_usdc: formatUsdc(BigInt(row.collateral_usdc)),
      minimum_collateral_usdc: formatUsdc(minimum),
      listing_hash: row.listing_hash.toString("hex"),
      status: row.status,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      last_probe:
        row.last_probe_at && row.last_probe_latency_ms !== null
          ? { at: row.last_probe_at.toISOString(), latency_ms: row.last_probe_latency_ms }
          : null,
    };
  }
}

/** The listing's stored columns, name to last_probe_latency_ms, in the order both writes use. */
function listingValues(input: ListingInput, verified: Verified): unknown[] {
  return [
    input.name,
    input.description,
    input.tags,
    JSON.stringify(input.input_schema),
    JSON.stringify(input.output_schema),
    input.endpoint,
    input.signing_key,
    JSON.stringify(input.pricing),
    verified.agent.maxExecutionSecs,
    verified.agent.collateralUsdc.toString(),
    Buffer.from(verified.listing_hash),
    verified.probe_latency_ms,
  ];
}

function parseAddress(text: string, param: string): PublicKey {
  try {
    const key = new PublicKey(text);
    if (key.toBase58() === text) return key;
  } catch {
    // falls through to the error below
  }
  throw new ApiError("validation_failed", `${param} is not a base58 Solana address.`, param);
}
