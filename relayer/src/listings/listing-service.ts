// Agent listings: created, updated and resumed only once the creator checklist passes
// (listing-checks.ts), paused, retired, read by executions (cached) and discovered.
import { LruMap, formatUsdc, type NetworkName } from "@agent-market/program";
import type pg from "pg";
import { inTransaction } from "@agent-market/service";

import type { ChainService } from "../chain/chain-service.js";
import type { RelayerConfig } from "../config.js";
import type { CreatorClient } from "../creator/creator-client.js";
import { type Db, type DbClient } from "../db/database.js";
import { ApiError } from "../errors.js";
import { CIRCUIT_COLUMN, circuitRow, circuitView, type CircuitJson, type CircuitRow, type CircuitView } from "./circuit-breaker.js";
import { endpointKey } from "./endpoint-key.js";
import { ListingChecks, type ConformanceInput, type ListingInput, type Verified } from "./listing-checks.js";
import { LiveCollateral } from "./live-collateral.js";
import type { PricingWire } from "./pricing.js";

export type ListingStatus = "active" | "paused" | "retired";
/** Who paused a paused listing: its creator, or the relayer failing closed (probed-endpoint.ts, listed-terms.ts). */
export type PauseReason = "creator" | "endpoint_changed" | "terms_changed";

/** What a creator lists (see listing-checks.ts, where the checks read it). */
export type { ListingInput };

export type ListingUpdate = Partial<Omit<ListingInput, "network" | "agent">>;

/** What an execution needs of a listing. */
export interface ListingForExecution {
  input_schema: object;
  output_schema: object;
  status: ListingStatus;
  /** The endpoint the listing's probe checked, the only one executions may call (probed-endpoint.ts). */
  endpoint: string;
  /** The pricing and listing hash verified against the agent account (listed-terms.ts). */
  pricing: PricingWire;
  listing_hash: Buffer;
  /** The agent's circuit breaker, null while it has none (circuit-breaker.ts). */
  circuit: CircuitRow | null;
}

/**
 * How long an execution may use a listing read earlier. Changes made through this instance are
 * seen at once; changes made through another relayer, within this time.
 */
export const LISTING_CACHE_MS = 1_000;
const LISTING_CACHE_ENTRIES = 10_000;

export type ListingObject = {
  object: "agent";
  id: string;
  network: NetworkName;
  creator: string;
  name: string;
  description: string;
  tags: string[];
  pricing: PricingWire;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  endpoint: string;
  signing_key: string;
  max_execution_secs: number;
  collateral_usdc: string;
  minimum_collateral_usdc: string;
  listing_hash: string;
  status: ListingStatus;
  pause_reason: PauseReason | null;
  circuit: CircuitView;
  created_at: string;
  updated_at: string;
  last_probe: { at: string; latency_ms: number } | null;
};

interface ListingRow {
  network: NetworkName;
  agent: string;
  creator: string;
  name: string;
  description: string;
  tags: string[];
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  endpoint: string;
  signing_key: string;
  pricing: PricingWire;
  max_execution_secs: number;
  collateral_usdc: string;
  listing_hash: Buffer;
  status: ListingStatus;
  pause_reason: PauseReason | null;
  circuit: CircuitJson | null;
  created_at: Date;
  updated_at: Date;
  last_probe_at: Date | null;
  last_probe_latency_ms: number | null;
}

const COLUMNS =
  "network, agent, creator, name, description, tags, input_schema, output_schema, endpoint, signing_key, pricing, " +
  "max_execution_secs, collateral_usdc, listing_hash, status, pause_reason, created_at, updated_at, last_probe_at, " +
  `last_probe_latency_ms, ${CIRCUIT_COLUMN}`;



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

  private readonly checks: ListingChecks;
  private readonly collateral: LiveCollateral;

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    creators: CreatorClient,
    config: Pick<RelayerConfig, "endpoint_policy" | "schema_limit_bytes" | "probe_timeout_ms" | "probe_max_response_bytes">,
  ) {
    this.checks = new ListingChecks(chain, creators, config);
    this.collateral = new LiveCollateral(chain);
  }

  async create(wallet: string, input: ListingInput): Promise<ListingObject> {
    this.chain.connection(input.network);
    const existing = await this.row(input.network, input.agent);
    if (existing) throw new ApiError("agent_already_listed", `Agent ${input.agent} is listed on ${input.network}.`, "agent");
    await this.requireEndpointFree(this.db, wallet, input.network, input.endpoint);
    const verified = await this.checks.verify(wallet, input);
    const rows = await this.writeHoldingEndpoint<ListingRow>(
      wallet,
      input.network,
      input.endpoint,
      `INSERT INTO agent_listings (network, agent, creator, name, description, tags, input_schema, output_schema, endpoint,
         signing_key, pricing, max_execution_secs, collateral_usdc, listing_hash, last_probe_latency_ms, endpoint_key,
         status, last_probe_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'active', clock_timestamp())
       ON CONFLICT (network, agent) DO NOTHING
       RETURNING ${COLUMNS}`,
      [input.network, input.agent, wallet, ...listingValues(input, verified)],
    );
    if (rows.length === 0) throw new ApiError("agent_already_listed", `Agent ${input.agent} is listed on ${input.network}.`, "agent");
    this.forget(input.network, input.agent);
    return this.toObject(rows[0]!, verified.minimum_collateral_usdc);
  }

  /** The conformance probe alone, for an agent not registered yet; its latency in ms. */
  async conformance(wallet: string, input: ConformanceInput): Promise<number> {
    this.chain.connection(input.network);
    return this.checks.conformance(wallet, input);
  }

  /**
   * Refuses an endpoint another creator lists (any listing not retired): whoever lists a service
   * someone else runs would be paid for its work. One creator may list several agents on one
   * endpoint. Checked before the checklist, so a refused listing costs no probe.
   */
  private async requireEndpointFree(db: Db | DbClient, wallet: string, network: NetworkName, endpoint: string): Promise<void> {
    const key = endpointKey(endpoint);
    if (key === null) return;
    const { rows } = await db.query<{ agent: string }>(
      `SELECT agent FROM agent_listings
       WHERE network = $1 AND endpoint_key = $2 AND creator <> $3 AND status <> 'retired' LIMIT 1`,
      [network, key, wallet],
    );
    if (rows.length > 0) {
      throw new ApiError("endpoint_already_listed", `Another creator lists an agent at this endpoint on ${network}.`, "endpoint");
    }
  }

  /**
   * Writes a listing whose endpoint was found free, checking it again under a lock on the
   * endpoint: two creators listing one endpoint at the same moment are taken one at a time, and
   * the second is refused.
   */
  private writeHoldingEndpoint<R extends pg.QueryResultRow>(
    wallet: string,
    network: NetworkName,
    endpoint: string | null,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    return inTransaction(this.db, async (client) => {
      const key = endpoint === null ? null : endpointKey(endpoint);
      if (key !== null) {
        await client.query("SELECT pg_advisory_xact_lock(hashtext('listing_endpoint:' || $1 || ':' || $2))", [network, key]);
        await this.requireEndpointFree(client, wallet, network, endpoint!);
      }
      return (await client.query<R>(text, values)).rows;
    });
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
    if (merged.endpoint !== current.endpoint) await this.requireEndpointFree(this.db, wallet, network, merged.endpoint);
    const verified = await this.checks.verify(wallet, merged);
    const rows = await this.writeHoldingEndpoint<ListingRow>(
      wallet,
      network,
      merged.endpoint !== current.endpoint ? merged.endpoint : null,
      `UPDATE agent_listings SET name = $3, description = $4, tags = $5, input_schema = $6, output_schema = $7,
         endpoint = $8, signing_key = $9, pricing = $10, max_execution_secs = $11, collateral_usdc = $12,
         listing_hash = $13, last_probe_latency_ms = $14, endpoint_key = $15,
         updated_at = clock_timestamp(), last_probe_at = clock_timestamp(),
         status = CASE WHEN pause_reason = 'terms_changed' THEN 'active' ELSE status END,
         pause_reason = CASE WHEN pause_reason = 'terms_changed' THEN NULL ELSE pause_reason END
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
    return this.setStatus(network, agent, "paused", "creator");
  }

  /** Back to active, once the chain and the endpoint still pass the checklist. */
  async resume(wallet: string, network: NetworkName, agent: string): Promise<ListingObject> {
    const current = await this.owned(wallet, network, agent);
    if (current.status === "retired") throw new ApiError("listing_retired");
    await this.checks.verify(wallet, { ...current, network, agent });
    return this.setStatus(network, agent, "active", null);
  }

  /** Retires the listing for good (the on-chain agent is retired by the creator's own transaction). */
  async retire(wallet: string, network: NetworkName, agent: string): Promise<ListingObject> {
    await this.owned(wallet, network, agent);
    return this.setStatus(network, agent, "retired", null);
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
      .query<Omit<ListingForExecution, "circuit"> & { circuit: CircuitJson | null }>(
        `SELECT input_schema, output_schema, status, endpoint, pricing, listing_hash, ${CIRCUIT_COLUMN}
         FROM agent_listings WHERE network = $1 AND agent = $2`,
        [network, agent],
      )
      .then(({ rows }) => (rows[0] ? { ...rows[0], circuit: circuitRow(rows[0].circuit) } : null));
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
      `UPDATE agent_listings SET status = 'paused', pause_reason = 'endpoint_changed', updated_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 AND status = 'active' AND endpoint = $3`,
      [network, agent, probed_endpoint],
    );
    this.forget(network, agent);
  }

  /**
   * Pauses an active listing whose agent account no longer holds the pricing or listing hash it
   * verified (see listed-terms.ts); one updated meanwhile (other terms verified) is left alone.
   */
  async pauseChangedTerms(network: NetworkName, agent: string, listed: Pick<ListingForExecution, "pricing" | "listing_hash">): Promise<void> {
    await this.db.query(
      `UPDATE agent_listings SET status = 'paused', pause_reason = 'terms_changed', updated_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 AND status = 'active' AND listing_hash = $3 AND pricing = $4::jsonb`,
      [network, agent, listed.listing_hash, JSON.stringify(listed.pricing)],
    );
    this.forget(network, agent);
  }

  /** Drops the cached listing: its circuit or status changed through this relayer. */
  forget(network: NetworkName, agent: string): void {
    this.forExecutions.delete(`${network}/${agent}`);
  }

  async get(network: NetworkName, agent: string): Promise<ListingObject> {
    const row = await this.row(network, agent);
    if (!row) throw new ApiError("resource_not_found", `No agent ${agent} on ${network}.`, "agent_id");
    const [listing] = await this.live(network, [this.toObject(row, await this.minimumCollateral(network))]);
    return listing!;
  }

  /**
   * `listings` with the collateral their agent accounts hold now (read at most every
   * COLLATERAL_MAX_AGE_MS), in place of the one each listing verified: slashes, top-ups and
   * withdrawals move it on chain, never through the relayer.
   */
  async live<L extends ListingObject>(network: NetworkName, listings: L[]): Promise<L[]> {
    const held = await this.collateral.of(network, listings.map((listing) => listing.id));
    return listings.map((listing) => ({ ...listing, collateral_usdc: formatUsdc(held.get(listing.id) ?? 0n) }));
  }

  /** Listings newest first, filtered by status, tag and text (name, description). */
  async list(query: ListQuery): Promise<{ data: ListingObject[]; has_more: boolean }> {
    const { where, params } = matching(query);
    if (query.starting_after !== undefined) {
      const cursor = await this.row(query.network, query.starting_after);
      if (!cursor) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.created_at, cursor.agent);
      where.push(`(created_at, agent) < ($${params.length - 1}, $${params.length})`);
    }
    const data = await this.newest(query.network, where, params, query.limit + 1);
    return { data: await this.live(query.network, data.slice(0, query.limit)), has_more: data.length > query.limit };
  }

  /**
   * The `limit` newest listings of a query, for a ranking that pages over them itself; each with
   * the collateral it was listed with, which `live` brings up to date on the page shown.
   */
  async newestMatching(query: Omit<ListQuery, "starting_after" | "limit">, limit: number): Promise<ListingObject[]> {
    const { where, params } = matching(query);
    return this.newest(query.network, where, params, limit);
  }

  private async newest(network: NetworkName, where: string[], params: unknown[], limit: number): Promise<ListingObject[]> {
    params.push(limit);
    const { rows } = await this.db.query<ListingRow>(
      `SELECT ${COLUMNS} FROM agent_listings WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, agent DESC LIMIT $${params.length}`,
      params,
    );
    const minimum = await this.minimumCollateral(network);
    return rows.map((row) => this.toObject(row, minimum));
  }

  private async owned(wallet: string, network: NetworkName, agent: string): Promise<ListingRow> {
    const row = await this.row(network, agent);
    if (!row || row.creator !== wallet) {
      throw new ApiError("resource_not_found", `You have no agent ${agent} on ${network}.`, "agent_id");
    }
    return row;
  }

  private async setStatus(
    network: NetworkName,
    agent: string,
    status: ListingStatus,
    pause_reason: PauseReason | null,
  ): Promise<ListingObject> {
    const { rows } = await this.db.query<ListingRow>(
      `UPDATE agent_listings SET status = $3, pause_reason = $4, updated_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 RETURNING ${COLUMNS}`,
      [network, agent, status, pause_reason],
    );
    this.forget(network, agent);
    const [listing] = await this.live(network, [this.toObject(rows[0]!, await this.minimumCollateral(network))]);
    return listing!;
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
      pause_reason: row.status === "paused" ? row.pause_reason : null,
      circuit: circuitView(circuitRow(row.circuit)),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      last_probe:
        row.last_probe_at && row.last_probe_latency_ms !== null
          ? { at: row.last_probe_at.toISOString(), latency_ms: row.last_probe_latency_ms }
          : null,
    };
  }
}

/** The conditions of a listing query, without its cursor. */
function matching(query: Omit<ListQuery, "starting_after" | "limit">): { where: string[]; params: unknown[] } {
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
  return { where, params };
}

/** The listing's stored columns, name to endpoint_key, in the order both writes use. */
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
    endpointKey(input.endpoint),
  ];
}
