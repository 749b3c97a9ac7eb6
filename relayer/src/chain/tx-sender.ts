// Sending the relayer's transactions durably. A transaction is signed first and its bytes,
// signature and last valid block height handed to the caller to record; only then is it sent.
// After a failure or a restart the same bytes are sent again, and a transaction is re-signed
// (new blockhash, new signature) only once the old one can no longer land.
import { createPrivateKey, sign as signEd25519, type KeyObject } from "node:crypto";

import { compileMessage, serializeTransaction, withComputeBudget, type LookupTable } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import type { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";

import type { PriorityFees } from "./priority-fee.js";
import { RpcError, type Commitment, type RpcClient, type SignatureStatus } from "./rpc-client.js";

/** A signed transaction, as recorded before it is sent. */
export interface SignedTransaction {
  signature: string;
  /** The wire bytes, base64. */
  bytes: string;
  last_valid_block_height: number;
}

export type SendOutcome =
  /** Executed (processed) without error. */
  | { kind: "processed" }
  /** Refused by the preflight simulation: it did not land and cannot. */
  | { kind: "rejected"; message: string; logs: string[]; err: unknown }
  /** The RPC did not answer: it may or may not have landed. */
  | { kind: "unknown"; message: string };

export type SignatureState =
  | { kind: "landed"; err: unknown; confirmation: Commitment }
  /** Not seen and its blockhash expired: it never will land. */
  | { kind: "expired" }
  | { kind: "pending" };

/** A blockhash older than this is refreshed, in the background while it is younger than the next. */
const BLOCKHASH_REFRESH_MS = 2_000;
/**
 * Past this a blockhash is awaited anew. 5 s is a small share of a blockhash's life (150 blocks:
 * 60 s at 400 ms slots, 15 s at 100 ms); the re-signing after expiry relies on the recorded
 * last valid height, not on this age.
 */
const BLOCKHASH_STALE_MS = 5_000;

/** Signs, sends and watches the transactions of one network's relayer key. */
export class TransactionSender {
  private blockhash: { value: { blockhash: string; lastValidBlockHeight: number }; at_ms: number } | undefined;
  private refreshing: Promise<{ blockhash: string; lastValidBlockHeight: number }> | undefined;
  private readonly watched = new Map<string, Waiter[]>();
  private polling = false;

  private readonly privateKey: KeyObject;

  constructor(
    readonly rpc: RpcClient,
    readonly signer: Keypair,
    /** The program whose instructions' compute the budget is sized from. */
    readonly programId: PublicKey,
    private readonly priorityFees: PriorityFees,
  ) {
    // PKCS #8 wrapping of the 32-byte Ed25519 seed, for OpenSSL: signing in JavaScript costs ten
    // times as much.
    this.privateKey = createPrivateKey({
      key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), signer.secretKey.subarray(0, 32)]),
      format: "der",
      type: "pkcs8",
    });
  }

  /**
   * A recent blockhash, shared by the transactions of the next two seconds: it stays valid for
   * about a minute (150 blocks), and fetching one per transaction would double the RPC calls.
   * Past two seconds it is refreshed in the background and still used meanwhile, so that signing
   * waits for no RPC round trip under steady traffic.
   */
  async recentBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    const age_ms = this.blockhash ? Date.now() - this.blockhash.at_ms : Infinity;
    if (age_ms < BLOCKHASH_REFRESH_MS) return this.blockhash!.value;
    const refreshing = this.refresh();
    if (age_ms < BLOCKHASH_STALE_MS) {
      // Its failure is seen by the next caller that must await one.
      refreshing.catch(() => undefined);
      return this.blockhash!.value;
    }
    return refreshing;
  }

  private refresh(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    return (this.refreshing ??= this.rpc
      .getLatestBlockhash("confirmed")
      .then((value) => {
        this.blockhash = { value, at_ms: Date.now() };
        return value;
      })
      .finally(() => {
        this.refreshing = undefined;
      }));
  }

  /**
   * `instructions` as this sender sends them: after the compute budget they need, at the unit
   * price of the moment. What a batch is cut to fit must be measured on these.
   */
  budgeted(instructions: readonly TransactionInstruction[]): TransactionInstruction[] {
    return withComputeBudget(instructions, this.programId, this.priorityFees.current());
  }

  /**
   * Signs `instructions`, after their compute budget, as a legacy transaction, or as a v0 one
   * loading what it can from `tables`.
   */
  async sign(instructions: TransactionInstruction[], tables: readonly LookupTable[] = []): Promise<SignedTransaction> {
    const { blockhash, lastValidBlockHeight } = await this.recentBlockhash();
    const message = compileMessage(this.signer.publicKey, this.budgeted(instructions), blockhash, tables);
    const signature = signEd25519(null, message, this.privateKey);
    return {
      // A transaction's id is its first signature, base58.
      signature: utils.bytes.bs58.encode(signature),
      bytes: Buffer.from(serializeTransaction([signature], message)).toString("base64"),
      last_valid_block_height: lastValidBlockHeight,
    };
  }

  /** Sends recorded bytes with a preflight simulation; sending the same bytes twice is harmless. */
  async send(signed: SignedTransaction): Promise<SendOutcome> {
    try {
      await this.rpc.sendTransaction(signed.bytes);
      return { kind: "processed" };
    } catch (error) {
      if (error instanceof RpcError) {
        const data = (error.data ?? {}) as { err?: unknown; logs?: string[] | null };
        // Resending a transaction that already landed is not a failure of it.
        if (data.err === "AlreadyProcessed" || /already been processed/i.test(error.message)) return { kind: "processed" };
        // -32002: the preflight simulation failed; -32003: a signature does not verify.
        if (error.code === -32002 || error.code === -32003) {
          return { kind: "rejected", message: error.message, logs: data.logs ?? [], err: data.err ?? null };
        }
      }
      return { kind: "unknown", message: (error as Error).message };
    }
  }

  /** Where a recorded transaction stands now. */
  async state(signed: SignedTransaction): Promise<SignatureState> {
    const status = await this.status(signed.signature);
    if (status) {
      return {
        kind: "landed",
        err: status.err,
        confirmation: status.confirmationStatus ?? "processed",
      };
    }
    const height = await this.rpc.getBlockHeight("confirmed");
    // Checked after the status: a transaction seen as missing and then past its last valid
    // height can no longer land, whatever happens next.
    if (height > signed.last_valid_block_height) {
      const again = await this.status(signed.signature);
      if (again) return { kind: "landed", err: again.err, confirmation: again.confirmationStatus ?? "processed" };
      return { kind: "expired" };
    }
    return { kind: "pending" };
  }

  /**
   * One signature's status. Concurrent callers share getSignatureStatuses calls of up to 256
   * signatures, so hundreds of executions a second cost a few status calls.
   */
  status(signature: string): Promise<SignatureStatus | null> {
    return new Promise((resolve, reject) => {
      const waiters = this.watched.get(signature) ?? [];
      waiters.push({ resolve, reject });
      this.watched.set(signature, waiters);
      if (!this.polling) {
        this.polling = true;
        setImmediate(() => void this.poll());
      }
    });
  }

  private async poll(): Promise<void> {
    try {
      while (this.watched.size > 0) {
        const signatures = [...this.watched.keys()].slice(0, 256);
        const waiters = signatures.map((signature) => {
          const list = this.watched.get(signature)!;
          this.watched.delete(signature);
          return list;
        });
        let values: (SignatureStatus | null)[];
        try {
          values = await this.rpc.getSignatureStatuses(signatures);
        } catch (error) {
          for (const list of waiters) for (const waiter of list) waiter.reject(error);
          continue;
        }
        signatures.forEach((_, i) => {
          for (const waiter of waiters[i]!) waiter.resolve(values[i] ?? null);
        });
      }
    } finally {
      this.polling = false;
    }
  }
}

interface Waiter {
  resolve: (status: SignatureStatus | null) => void;
  reject: (error: unknown) => void;
}
