// Sign-In With Solana: the server issues a single-use nonce and the exact message for the wallet
// to sign (the SIWS text layout, bound to our domain, the nonce, and its issue and expiry
// times); a signature by the wallet over that very message opens a session. Sessions are random
// bearer tokens stored as SHA-256, sent as an HttpOnly cookie to the dashboard and in the body to
// the CLI, and revoked at sign-out.
import { createHash, randomBytes } from "node:crypto";

import { ed25519Verify } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";

const bs58 = utils.bytes.bs58;

export const SESSION_TOKEN_PREFIX = "sess_";
const STATEMENT = "Sign in to Agent Market to manage your API keys, listings and wallet settings.";

export interface SignInChallenge {
  wallet: string;
  nonce: string;
  message: string;
  issued_at: string;
  expires_at: string;
}

export interface Session {
  id: string;
  wallet: string;
  created_at: string;
  expires_at: string;
}

/** The SIWS message text (the layout of EIP-4361 with "Solana account"). */
export function signInMessage(fields: {
  domain: string;
  uri: string;
  wallet: string;
  nonce: string;
  issued_at: string;
  expires_at: string;
}): string {
  return [
    `${fields.domain} wants you to sign in with your Solana account:`,
    fields.wallet,
    "",
    STATEMENT,
    "",
    `URI: ${fields.uri}`,
    "Version: 1",
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issued_at}`,
    `Expiration Time: ${fields.expires_at}`,
  ].join("\n");
}

function isWalletAddress(text: string): boolean {
  try {
    return new PublicKey(text).toBase58() === text;
  } catch {
    return false;
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

export class SignInService {
  constructor(
    private readonly db: Db,
    private readonly options: { domain: string; uri: string; nonce_ttl_secs: number; session_ttl_secs: number },
  ) {}

  async challenge(wallet: string): Promise<SignInChallenge> {
    if (!isWalletAddress(wallet)) throw new ApiError("validation_failed", "wallet is not a base58 Solana address.", "wallet");
    const nonce = bs58.encode(randomBytes(16));
    const issued = new Date(Math.floor(Date.now() / 1000) * 1000);
    const expires = new Date(issued.getTime() + this.options.nonce_ttl_secs * 1000);
    const issued_at = issued.toISOString();
    const expires_at = expires.toISOString();
    const message = signInMessage({ ...this.options, wallet, nonce, issued_at, expires_at });
    await this.db.query(
      `INSERT INTO sign_in_nonces (nonce, wallet, domain, message, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [nonce, wallet, this.options.domain, message, issued, expires],
    );
    return { wallet, nonce, message, issued_at, expires_at };
  }

  /**
   * Opens a session for a signed challenge. The nonce is consumed by a conditional UPDATE, so of
   * two concurrent uses of one signature exactly one succeeds.
   */
  async signIn(message: string, signatureBase58: string): Promise<{ token: string; session: Session }> {
    const domain = /^(.*) wants you to sign in with your Solana account:\n/.exec(message)?.[1];
    if (domain === undefined) throw new ApiError("invalid_sign_in_message", "The message is not a SIWS message.", "message");
    if (domain !== this.options.domain) {
      throw new ApiError("sign_in_domain_mismatch", `The message is bound to ${domain}, not ${this.options.domain}.`, "message");
    }
    const nonce = /\nNonce: ([1-9A-HJ-NP-Za-km-z]+)\n/.exec(message)?.[1];
    if (nonce === undefined) throw new ApiError("invalid_sign_in_message", "The message has no nonce.", "message");
    const issued = await this.db.query<{ wallet: string; message: string; expires_at: Date; used_at: Date | null }>(
      "SELECT wallet, message, expires_at, used_at FROM sign_in_nonces WHERE nonce = $1",
      [nonce],
    );
    const challenge = issued.rows[0];
    if (!challenge) throw new ApiError("unknown_nonce");
    if (challenge.message !== message) {
      throw new ApiError("invalid_sign_in_message", "The message differs from the one issued with this nonce.", "message");
    }
    let signature: Uint8Array;
    try {
      signature = bs58.decode(signatureBase58);
    } catch {
      throw new ApiError("validation_failed", "signature is not base58.", "signature");
    }
    const wallet = new PublicKey(challenge.wallet);
    if (!ed25519Verify(signature, new TextEncoder().encode(message), wallet.toBytes())) {
      throw new ApiError("invalid_signature");
    }
    if (challenge.used_at) throw new ApiError("nonce_used");
    if (challenge.expires_at.getTime() <= Date.now()) throw new ApiError("nonce_expired");
    const consumed = await this.db.query(
      "UPDATE sign_in_nonces SET used_at = clock_timestamp() WHERE nonce = $1 AND used_at IS NULL AND expires_at > clock_timestamp()",
      [nonce],
    );
    if (consumed.rowCount !== 1) throw new ApiError("nonce_used");

    const token = SESSION_TOKEN_PREFIX + bs58.encode(randomBytes(32));
    const id = `ses_${bs58.encode(randomBytes(12))}`;
    const { rows } = await this.db.query<{ created_at: Date; expires_at: Date }>(
      `INSERT INTO sessions (id, token_hash, wallet, expires_at)
       VALUES ($1, $2, $3, clock_timestamp() + make_interval(secs => $4)) RETURNING created_at, expires_at`,
      [id, sha256(token), challenge.wallet, this.options.session_ttl_secs],
    );
    const row = rows[0]!;
    return {
      token,
      session: { id, wallet: challenge.wallet, created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString() },
    };
  }

  /** The live session behind a token; unknown, expired and signed-out tokens are refused alike. */
  async session(token: string): Promise<Session> {
    const { rows } = await this.db.query<{ id: string; wallet: string; created_at: Date; expires_at: Date }>(
      `SELECT id, wallet, created_at, expires_at FROM sessions
       WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > clock_timestamp()`,
      [sha256(token)],
    );
    const row = rows[0];
    if (!row) throw new ApiError("invalid_session");
    return { id: row.id, wallet: row.wallet, created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString() };
  }

  async signOut(sessionId: string): Promise<void> {
    await this.db.query("UPDATE sessions SET revoked_at = clock_timestamp() WHERE id = $1 AND revoked_at IS NULL", [sessionId]);
  }

  /** Revokes every live session of `wallet`, in every browser and CLI; how many there were. */
  async signOutEverywhere(wallet: string): Promise<number> {
    const { rowCount } = await this.db.query(
      "UPDATE sessions SET revoked_at = clock_timestamp() WHERE wallet = $1 AND revoked_at IS NULL AND expires_at > clock_timestamp()",
      [wallet],
    );
    return rowCount ?? 0;
  }
}
