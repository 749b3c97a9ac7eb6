// Web runs: a wallet signed in on the dashboard runs agents with its session, and the relayer
// charges them through a key it keeps for that wallet and environment. The key has no secret (no
// request can present it) and no expiry, and the key routes never show it; it exists so that a
// web run takes the very path of an API call: the spending reservation and its release, the
// Idempotency-Key's scope, reconciliation, and the key id every escrow records on chain. A session
// is a bearer credential too, so the key has a spending cap (WEB_RUN_DEFAULT_CAP_USDC until the
// wallet sets its own) and the wallet can revoke web runs at once, and enable them again. A session
// alone may only narrow them (lower the cap, revoke): widening them needs a fresh signature by the
// wallet over the change (wallet-confirmations.ts), which a stolen session cannot make.
//
// Its id is derived from the wallet and the environment, so anyone reading the chain or the
// indexer can tell a wallet's web runs from its API calls without asking the relayer, and the
// row needs no lookup before it is used (docs/api.md, "Web runs").
import { createHash } from "node:crypto";

import { utils } from "@coral-xyz/anchor";
import { formatUsdc, parseUsdc, type NetworkName } from "@agent-market/program";
import type { FromSchema } from "json-schema-to-ts";

import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { webRunSettings } from "../http/schemas.js";
import type { KeyEnvironment } from "./api-key-format.js";
import { KEY_NETWORKS, type AuthenticatedKey } from "./api-keys.js";

export const WEB_RUN_KEY_NAME = "Web runs";
/** The cap a web-run key starts with: 10 USDC, until the wallet sets another. */
export const WEB_RUN_DEFAULT_CAP_USDC = 10_000_000n;
/** The highest cap a wallet may set: 1,000,000 USDC. */
export const WEB_RUN_MAX_CAP_USDC = 1_000_000_000_000n;

/** A wallet's web runs on one network, as GET and PATCH /v1/wallet/web-runs show them. */
export type WebRunSettings = FromSchema<typeof webRunSettings>;

interface WebKeyRow {
  spent_usdc: string;
  spending_cap_usdc: string;
  revoked_at: Date | null;
  execution_count: string;
}

const ROW = "spent_usdc, spending_cap_usdc, revoked_at, execution_count";
const DERIVATION_PREFIX = "agent-market web runs\n";

/** `key_` and base58 of the first 16 bytes of SHA-256("agent-market web runs\n" + environment + "\n" + wallet). */
export function webRunKeyId(wallet: string, environment: KeyEnvironment): string {
  const digest = createHash("sha256").update(`${DERIVATION_PREFIX}${environment}\n${wallet}`).digest();
  return `key_${utils.bytes.bs58.encode(digest.subarray(0, 16))}`;
}

export interface WebRunChange {
  spending_cap_usdc?: bigint;
  enabled?: boolean;
}

/** The words the wallet signs to confirm `change`, one per change and network. */
export function webRunStatement(network: NetworkName, change: WebRunChange): string {
  const parts: string[] = [];
  if (change.enabled === true) parts.push(`allow web runs on ${network} again`);
  if (change.enabled === false) parts.push(`revoke web runs on ${network}`);
  if (change.spending_cap_usdc !== undefined) parts.push(`set the web-run spending cap on ${network} to ${formatUsdc(change.spending_cap_usdc)} USDC`);
  const text = parts.join(", and ");
  return `Agent Market: ${text}.`;
}

/** Whether `change` lets sessions spend more than `current` does: a higher cap, or web runs enabled again. */
export function widens(current: WebRunSettings, change: WebRunChange): boolean {
  if (change.enabled === true && !current.enabled) return true;
  return change.spending_cap_usdc !== undefined && change.spending_cap_usdc > parseUsdc(current.spending_cap_usdc);
}

export class WebRunKeys {
  constructor(private readonly db: Db) {}

  /**
   * The wallet's web-run key on `network`, created with its first run; refused
   * (`web_runs_revoked`) while the wallet has revoked web runs. Read on every run, like an API key.
   */
  async forWallet(wallet: string, network: NetworkName): Promise<AuthenticatedKey> {
    const { id, environment, row } = await this.row(wallet, network);
    if (row.revoked_at) {
      throw new ApiError("web_runs_revoked", `This wallet revoked its web runs on ${network} at ${row.revoked_at.toISOString()}.`);
    }
    return {
      id,
      wallet,
      name: WEB_RUN_KEY_NAME,
      environment,
      network,
      spending_cap_usdc: BigInt(row.spending_cap_usdc),
      spent_usdc: BigInt(row.spent_usdc),
    };
  }

  async settings(wallet: string, network: NetworkName): Promise<WebRunSettings> {
    const { id, row } = await this.row(wallet, network);
    return view(network, id, row);
  }

  /** Sets the cap and enables or revokes web runs; a revocation holds from the next request on. */
  async update(wallet: string, network: NetworkName, change: WebRunChange): Promise<WebRunSettings> {
    const { id } = await this.row(wallet, network);
    const { rows } = await this.db.query<WebKeyRow>(
      `UPDATE api_keys SET spending_cap_usdc = coalesce($2::numeric, spending_cap_usdc),
         revoked_at = CASE WHEN $3::boolean IS NULL THEN revoked_at
                           WHEN $3::boolean THEN NULL ELSE coalesce(revoked_at, clock_timestamp()) END
       WHERE id = $1 AND kind = 'web' RETURNING ${ROW}`,
      [id, change.spending_cap_usdc?.toString() ?? null, change.enabled ?? null],
    );
    return view(network, id, rows[0]!);
  }

  private async row(wallet: string, network: NetworkName): Promise<{ id: string; environment: KeyEnvironment; row: WebKeyRow }> {
    const environment: KeyEnvironment = network === KEY_NETWORKS.live ? "live" : "test";
    const id = webRunKeyId(wallet, environment);
    // One round trip: the row inserted now, or the one there already (a statement does not see
    // its own insert, so at most one branch answers).
    let { rows } = await this.db.query<WebKeyRow>(
      `WITH created AS (
         INSERT INTO api_keys (id, wallet, name, environment, kind, spending_cap_usdc) VALUES ($1, $2, $3, $4, 'web', $5)
         ON CONFLICT (id) DO NOTHING RETURNING ${ROW}
       )
       SELECT ${ROW} FROM created UNION ALL SELECT ${ROW} FROM api_keys WHERE id = $1`,
      [id, wallet, WEB_RUN_KEY_NAME, environment, WEB_RUN_DEFAULT_CAP_USDC.toString()],
    );
    // Neither, when a concurrent first run inserted it after this statement's snapshot: it is
    // committed by now (the conflict waited for it).
    if (rows.length === 0) ({ rows } = await this.db.query<WebKeyRow>(`SELECT ${ROW} FROM api_keys WHERE id = $1`, [id]));
    return { id, environment, row: rows[0]! };
  }
}

function view(network: NetworkName, key_id: string, row: WebKeyRow): WebRunSettings {
  return {
    object: "web_runs",
    network,
    key_id,
    enabled: row.revoked_at === null,
    spending_cap_usdc: formatUsdc(BigInt(row.spending_cap_usdc)),
    spent_usdc: formatUsdc(BigInt(row.spent_usdc)),
    execution_count: Number(row.execution_count),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}
