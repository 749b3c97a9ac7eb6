// Web runs: a wallet signed in on the dashboard runs agents with its session, and the relayer
// charges them through a key it keeps for that wallet and environment. The key has no secret (no
// request can present it), no cap and no expiry, and the key routes never show it; it exists so
// that a web run takes the very path of an API call: the spending reservation and its release,
// the Idempotency-Key's scope, reconciliation, and the key id every escrow records on chain.
//
// Its id is derived from the wallet and the environment, so anyone reading the chain or the
// indexer can tell a wallet's web runs from its API calls without asking the relayer, and the
// row needs no lookup before it is used (docs/api.md, "Web runs").
import { createHash } from "node:crypto";

import { utils } from "@coral-xyz/anchor";

import type { NetworkName } from "../config.js";
import type { Db } from "../db/pool.js";
import type { KeyEnvironment } from "./api-key-format.js";
import { KEY_NETWORKS, type AuthenticatedKey } from "./api-keys.js";

export const WEB_RUN_KEY_NAME = "Web runs";
const DERIVATION_PREFIX = "agent-market web runs\n";

/** `key_` and base58 of the first 16 bytes of SHA-256("agent-market web runs\n" + environment + "\n" + wallet). */
export function webRunKeyId(wallet: string, environment: KeyEnvironment): string {
  const digest = createHash("sha256").update(`${DERIVATION_PREFIX}${environment}\n${wallet}`).digest();
  return `key_${utils.bytes.bs58.encode(digest.subarray(0, 16))}`;
}

export class WebRunKeys {
  constructor(private readonly db: Db) {}

  /** The wallet's web-run key on `network`, created with its first run. */
  async forWallet(wallet: string, network: NetworkName): Promise<AuthenticatedKey> {
    const environment: KeyEnvironment = network === KEY_NETWORKS.live ? "live" : "test";
    const id = webRunKeyId(wallet, environment);
    // One round trip: the row inserted now, or the one there already (a statement does not see
    // its own insert, so at most one branch answers).
    let { rows } = await this.db.query<{ spent_usdc: string }>(
      `WITH created AS (
         INSERT INTO api_keys (id, wallet, name, environment, kind) VALUES ($1, $2, $3, $4, 'web')
         ON CONFLICT (id) DO NOTHING RETURNING spent_usdc
       )
       SELECT spent_usdc FROM created UNION ALL SELECT spent_usdc FROM api_keys WHERE id = $1`,
      [id, wallet, WEB_RUN_KEY_NAME, environment],
    );
    // Neither, when a concurrent first run inserted it after this statement's snapshot: it is
    // committed by now (the conflict waited for it).
    if (rows.length === 0) ({ rows } = await this.db.query<{ spent_usdc: string }>("SELECT spent_usdc FROM api_keys WHERE id = $1", [id]));
    return { id, wallet, name: WEB_RUN_KEY_NAME, environment, network, spending_cap_usdc: null, spent_usdc: BigInt(rows[0]!.spent_usdc) };
  }
}
