// API keys: created, listed, inspected and revoked by their wallet's session; verified on every
// API call straight against PostgreSQL. There is no cache of key state, so a revocation is seen
// by the very next request on every relayer; concurrent verifications share one indexed query.
import { randomBytes, timingSafeEqual } from "node:crypto";

import { utils } from "@coral-xyz/anchor";
import { formatUsdc, type NetworkName } from "@agent-market/program";
import { prepared } from "@agent-market/service";
import type { FromSchema } from "json-schema-to-ts";

import { Batcher } from "../db/batcher.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { apiKeyObject } from "../http/schemas.js";
import { generateApiKey, hashApiKey, KEY_PREFIXES, parseApiKey, type KeyEnvironment } from "./api-key-format.js";

export const KEY_NETWORKS: Record<KeyEnvironment, NetworkName> = { test: "devnet", live: "mainnet" };

interface ApiKeyRow {
  id: string;
  wallet: string;
  name: string;
  environment: KeyEnvironment;
  key_hash: Buffer;
  last4: string;
  spending_cap_usdc: string | null;
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  execution_count: string;
  spent_usdc: string;
  revoked_at: Date | null;
}

const COLUMNS =
  "id, wallet, name, environment, key_hash, last4, spending_cap_usdc, expires_at, created_at, last_used_at, " +
  "execution_count, spent_usdc, revoked_at";

const KEYS_BY_HASH = `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ANY($1::bytea[])`;

/** A verified key, as the execute path needs it. */
export interface AuthenticatedKey {
  id: string;
  wallet: string;
  name: string;
  environment: KeyEnvironment;
  network: NetworkName;
  spending_cap_usdc: bigint | null;
  spent_usdc: bigint;
}

/** The API's view of a key (its response schema). The secret itself is never stored, so it is never in here. */
export type ApiKeyObject = FromSchema<typeof apiKeyObject>;

function toObject(row: ApiKeyRow, now: Date): ApiKeyObject {
  const status = row.revoked_at ? "revoked" : row.expires_at && row.expires_at <= now ? "expired" : "active";
  return {
    object: "api_key",
    id: row.id,
    name: row.name,
    environment: row.environment,
    network: KEY_NETWORKS[row.environment],
    wallet: row.wallet,
    prefix: KEY_PREFIXES[row.environment],
    last4: row.last4,
    status,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    execution_count: Number(row.execution_count),
    spent_usdc: formatUsdc(BigInt(row.spent_usdc)),
    spending_cap_usdc: row.spending_cap_usdc === null ? null : formatUsdc(BigInt(row.spending_cap_usdc)),
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

export interface CreateKeyInput {
  name: string;
  environment: KeyEnvironment;
  spending_cap_usdc: bigint | null;
  expires_at: Date | null;
}

export interface Page {
  limit: number;
  starting_after?: string;
}

export class ApiKeyStore {
  constructor(
    private readonly db: Db,
    private readonly hashSecret: Buffer,
  ) {}

  async create(wallet: string, input: CreateKeyInput): Promise<{ key: ApiKeyObject; secret: string }> {
    const { secret, last4 } = generateApiKey(input.environment);
    const id = `key_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const { rows } = await this.db.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, wallet, name, environment, key_hash, last4, spending_cap_usdc, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [
        id,
        wallet,
        input.name,
        input.environment,
        hashApiKey(secret, this.hashSecret),
        last4,
        input.spending_cap_usdc?.toString() ?? null,
        input.expires_at,
      ],
    );
    return { key: toObject(rows[0]!, new Date()), secret };
  }

  /** The wallet's keys, newest first. */
  async list(wallet: string, page: Page): Promise<{ data: ApiKeyObject[]; has_more: boolean }> {
    const params: unknown[] = [wallet, page.limit + 1];
    let after = "";
    if (page.starting_after !== undefined) {
      const cursor = await this.db.query<{ created_at: Date }>(
        "SELECT created_at FROM api_keys WHERE id = $1 AND wallet = $2 AND kind = 'api'",
        [page.starting_after, wallet],
      );
      if (cursor.rowCount === 0) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.rows[0]!.created_at, page.starting_after);
      after = "AND (created_at, id) < ($3, $4)";
    }
    const { rows } = await this.db.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys WHERE wallet = $1 AND kind = 'api' ${after} ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
    const now = new Date();
    return { data: rows.slice(0, page.limit).map((row) => toObject(row, now)), has_more: rows.length > page.limit };
  }

  // The wallet's web-run key (auth/web-run-keys.ts) is none of these: it has no secret to show,
  // revoke or cap, so the key routes never see it.

  /** One of the wallet's keys; another wallet's key is as absent as a key that never was. */
  async get(wallet: string, id: string): Promise<ApiKeyObject> {
    const { rows } = await this.db.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND wallet = $2 AND kind = 'api'`, [
      id,
      wallet,
    ]);
    if (rows.length === 0) throw new ApiError("resource_not_found", `No API key ${id}.`, "key_id");
    return toObject(rows[0]!, new Date());
  }

  /** Revokes at once: the commit is the revocation, and every verification reads it. */
  async revoke(wallet: string, id: string): Promise<ApiKeyObject> {
    const { rows } = await this.db.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, clock_timestamp())
       WHERE id = $1 AND wallet = $2 AND kind = 'api' RETURNING ${COLUMNS}`,
      [id, wallet],
    );
    if (rows.length === 0) throw new ApiError("resource_not_found", `No API key ${id}.`, "key_id");
    return toObject(rows[0]!, new Date());
  }

  /** Sum of the spending caps of the wallet's usable keys of one environment; null if one is uncapped. */
  async spendCapTotal(wallet: string, environment: KeyEnvironment): Promise<{ keys: number; total_usdc: bigint | null }> {
    const { rows } = await this.db.query<{ keys: string; uncapped: string; total: string | null }>(
      `SELECT count(*) AS keys, count(*) FILTER (WHERE spending_cap_usdc IS NULL) AS uncapped,
              sum(spending_cap_usdc) AS total
       FROM api_keys
       WHERE wallet = $1 AND environment = $2 AND kind = 'api' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [wallet, environment],
    );
    const row = rows[0]!;
    return {
      keys: Number(row.keys),
      total_usdc: Number(row.uncapped) > 0 ? null : BigInt(row.total ?? "0"),
    };
  }
}

/**
 * Verifies API keys, always against PostgreSQL. At most `max_in_flight` lookups run at once; the
 * verifications that arrive meanwhile wait and go together in the next `key_hash = ANY(...)`
 * query. A lone request is looked up at once, and under load the number of queries stays small,
 * without caching anything a revocation would have to clear.
 */
export class ApiKeyAuthenticator {
  private readonly lookups: Batcher<Buffer, ApiKeyRow | undefined>;
  private readonly usedAt = new Map<string, Date>();
  private usageTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly hashSecret: Buffer,
    private readonly options: { max_batch: number; max_in_flight: number; usage_flush_ms: number } = {
      max_batch: 256,
      max_in_flight: 4,
      usage_flush_ms: 1000,
    },
  ) {
    this.lookups = new Batcher(async (hashes) => {
      const { rows } = await this.db.query<ApiKeyRow>(prepared(this.db, KEYS_BY_HASH, [hashes]));
      const byHash = new Map(rows.map((row) => [row.key_hash.toString("hex"), row]));
      return hashes.map((hash) => byHash.get(hash.toString("hex")));
    }, options);
  }

  /** The key behind `secret`, or the ApiError that refuses it. Records the use for `last_used_at`. */
  async verify(secret: string): Promise<AuthenticatedKey> {
    const environment = parseApiKey(secret);
    if (environment === null) throw new ApiError("malformed_api_key");
    const hash = hashApiKey(secret, this.hashSecret);
    const row = await this.lookups.submit(hash);
    // The lookup is by keyed hash; the comparison guards against any index or collation surprise.
    if (!row || row.key_hash.length !== hash.length || !timingSafeEqual(row.key_hash, hash)) {
      throw new ApiError("unknown_api_key");
    }
    if (row.revoked_at) throw new ApiError("revoked_api_key");
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw new ApiError("expired_api_key");
    this.recordUse(row.id);
    return {
      id: row.id,
      wallet: row.wallet,
      name: row.name,
      environment: row.environment,
      network: KEY_NETWORKS[row.environment],
      spending_cap_usdc: row.spending_cap_usdc === null ? null : BigInt(row.spending_cap_usdc),
      spent_usdc: BigInt(row.spent_usdc),
    };
  }

  /** Writes the pending `last_used_at` updates now (at shutdown, or in tests). */
  async flushUsage(): Promise<void> {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = undefined;
    if (this.usedAt.size === 0) return;
    const ids = [...this.usedAt.keys()];
    const times = ids.map((id) => this.usedAt.get(id)!);
    this.usedAt.clear();
    await this.db.query(
      `UPDATE api_keys AS k SET last_used_at = greatest(k.last_used_at, u.used_at)
       FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at) WHERE k.id = u.id`,
      [ids, times],
    );
  }

  // `last_used_at` is written behind, at most once per flush interval per key: a write per call
  // would cost more than the verification. It is display data; nothing is authorised from it.
  private recordUse(id: string): void {
    this.usedAt.set(id, new Date());
    if (!this.usageTimer) {
      this.usageTimer = setTimeout(() => {
        this.flushUsage().catch(() => undefined);
      }, this.options.usage_flush_ms);
      this.usageTimer.unref();
    }
  }
}
