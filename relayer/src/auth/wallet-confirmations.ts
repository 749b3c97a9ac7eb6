// A fresh wallet signature over one change, for the changes a stolen session must not make: a
// session is a bearer credential sitting in a browser, the wallet's key is not. The relayer
// issues a single-use nonce and the exact message, which states the change in words; the wallet
// signs it; the change is made only with that signature, only by that wallet, only for the very
// change the message states, and only once. The nonces share the sign-in nonces' table (and its
// purge); a confirmation message never opens a session, since its first line is not a sign-in's.
import { randomBytes } from "node:crypto";

import { ed25519Verify } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";

const bs58 = utils.bytes.bs58;

export interface WalletConfirmation {
  nonce: string;
  message: string;
  issued_at: string;
  expires_at: string;
}

/** What the wallet sends back: the message it signed and its signature (base58). */
export interface SignedConfirmation {
  message: string;
  signature: string;
}

export function confirmationMessage(fields: { domain: string; uri: string; wallet: string; statement: string; nonce: string; issued_at: string; expires_at: string }): string {
  return [
    `${fields.domain} asks you to confirm with your Solana account:`,
    fields.wallet,
    "",
    fields.statement,
    "",
    `URI: ${fields.uri}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issued_at}`,
    `Expiration Time: ${fields.expires_at}`,
  ].join("\n");
}

function refused(reason: string): ApiError {
  return new ApiError("invalid_confirmation", `The confirmation ${reason}; ask for a new one and sign it with the wallet.`, "confirmation");
}

export class WalletConfirmations {
  constructor(
    private readonly db: Db,
    private readonly options: { domain: string; uri: string; nonce_ttl_secs: number },
  ) {}

  /** A message stating `statement` for `wallet` to sign, valid once, for nonce_ttl_secs. */
  async challenge(wallet: string, statement: string): Promise<WalletConfirmation> {
    const nonce = bs58.encode(randomBytes(16));
    const issued = new Date(Math.floor(Date.now() / 1000) * 1000);
    const expires = new Date(issued.getTime() + this.options.nonce_ttl_secs * 1000);
    const issued_at = issued.toISOString();
    const expires_at = expires.toISOString();
    const message = confirmationMessage({ ...this.options, wallet, statement, nonce, issued_at, expires_at });
    await this.db.query(
      "INSERT INTO sign_in_nonces (nonce, wallet, domain, message, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [nonce, wallet, this.options.domain, message, issued, expires],
    );
    return { nonce, message, issued_at, expires_at };
  }

  /**
   * Consumes the confirmation when it is `wallet`'s signature over a message this server issued
   * to `wallet` stating `statement`, unused and unexpired; 403 `invalid_confirmation` otherwise.
   */
  async confirm(wallet: string, statement: string, signed: SignedConfirmation): Promise<void> {
    const nonce = /\nNonce: ([1-9A-HJ-NP-Za-km-z]+)\n/.exec(signed.message)?.[1];
    const { rows } = nonce
      ? await this.db.query<{ wallet: string; message: string }>("SELECT wallet, message FROM sign_in_nonces WHERE nonce = $1", [nonce])
      : { rows: [] };
    const issued = rows[0];
    if (!issued || issued.message !== signed.message || !signed.message.includes(" asks you to confirm with your Solana account:\n")) {
      throw refused("is not a message this server issued");
    }
    if (issued.wallet !== wallet) throw refused("was issued to another wallet");
    if (!signed.message.includes(`\n\n${statement}\n\n`)) throw refused(`states another change than this request's ("${statement}")`);
    let signature: Uint8Array;
    try {
      signature = bs58.decode(signed.signature);
    } catch {
      throw refused("signature is not base58");
    }
    if (!ed25519Verify(signature, new TextEncoder().encode(signed.message), new PublicKey(wallet).toBytes())) {
      throw refused("signature does not verify against the wallet's key");
    }
    // Consumed by a conditional UPDATE: of two uses of one signature, exactly one passes.
    const consumed = await this.db.query(
      "UPDATE sign_in_nonces SET used_at = clock_timestamp() WHERE nonce = $1 AND used_at IS NULL AND expires_at > clock_timestamp()",
      [nonce],
    );
    if (consumed.rowCount !== 1) throw refused("was already used or has expired");
  }
}
