// Subscriptions: one period of an agent's subscription or hybrid plan, bought with `subscribe`,
// which the relayer signs and the program pays from the wallet's delegate approval, split 99/1.
// A purchase is durable like an execution: its signed transaction is recorded before it is sent,
// so an unknown send outcome is answered 202 (never "nothing charged") and finished by the
// finish_purchase job; an Idempotency-Key replays the first answer.
import { createHash, randomBytes } from "node:crypto";

import {
  canonicalJson,
  decodeAgent,
  FEE_SHARD_COUNT,
  decodeSubscription,
  delegatePda,
  splitPayment,
  subscribeInstruction,
  subscriptionPda,
  type Pricing,
  type Subscription,
  formatUsdc,
  type NetworkName,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import { inTransaction, reportBackgroundError } from "@agent-market/service";

import type { AuthenticatedKey } from "../auth/api-keys.js";
import type { ChainService } from "../chain/chain-service.js";
import type { SignedTransaction, TransactionSender } from "../chain/tx-sender.js";
import type { Db } from "../db/database.js";
import { ApiError, type ErrorCode } from "../errors.js";
import { JOB_DONE, retryJob, type JobOutcome, type JobQueue } from "../jobs/job-queue.js";
import { requireListedTerms } from "../listings/listed-terms.js";
import type { ListingService } from "../listings/listing-service.js";
import { PURCHASE_PREFIX } from "./purchase-id.js";
import { priceAboveMaximum, type Quoter } from "./quote.js";
import { anyFeeShard, errorFromLogs, feePayerShort, REBROADCAST_MS, senderOf, type Senders } from "./transactions.js";

/** How long a sent purchase is awaited before the finish_purchase job takes it over, and how often it is looked for. */
const SUBSCRIPTION_WAIT_MS = 5_000;
const SUBSCRIPTION_POLL_MS = 100;

export type PurchaseState = "sending" | "succeeded" | "failed";

export interface PurchaseRow {
  id: string;
  api_key_id: string;
  wallet: string;
  network: NetworkName;
  agent: string;
  state: PurchaseState;
  price_usdc: string;
  tx: SignedTransaction;
  result: { expires_at: string; included_calls_remaining: number } | null;
  failure_code: string | null;
  failure_message: string | null;
}

export interface PurchaseOutcome {
  row: PurchaseRow;
  replayed: boolean;
}

/**
 * The program's rule for another period (subscribe): a live subscription on the same terms is
 * extended only while at most a period of it is left; one bought under other terms is replaced
 * only once it covers no more calls. Checked before anything is signed, so a refusal costs no fee.
 */
function refuseUnrenewable(subscription: Subscription, pricing: Extract<Pricing, { kind: "Subscription" | "Hybrid" }>): void {
  const now_secs = Math.floor(Date.now() / 1000);
  const expires_at_secs = Number(subscription.expiresAt);
  if (now_secs >= expires_at_secs) return;
  const covers_every_call = pricing.kind === "Subscription";
  if (subscription.coversEveryCall === covers_every_call) {
    if (expires_at_secs - now_secs > pricing.periodSecs) {
      throw new ApiError(
        "subscription_not_renewable",
        `The subscription runs until ${new Date(expires_at_secs * 1000).toISOString()}, more than a period ahead; buy the next period once at most one is left.`,
      );
    }
  } else if (subscription.coversEveryCall || subscription.includedCallsRemaining > 0) {
    throw new ApiError(
      "subscription_not_renewable",
      `The subscription was bought under the agent's earlier pricing and covers calls until ${new Date(expires_at_secs * 1000).toISOString()}; buy a period of the new plan once it expires or its included calls are used.`,
    );
  }
}

/** The purchase as the API shows it. */
export function renderPurchase(row: PurchaseRow) {
  const price = BigInt(row.price_usdc);
  const { creatorShareUsdc, feeUsdc } = splitPayment(price);
  return {
    object: "subscription" as const,
    id: row.id,
    status: row.state === "sending" ? ("pending" as const) : row.state,
    agent: row.agent,
    wallet: row.wallet,
    network: row.network,
    expires_at: row.result?.expires_at ?? null,
    included_calls_remaining: row.result?.included_calls_remaining ?? null,
    charge: {
      amount_usdc: formatUsdc(price),
      creator_share_usdc: formatUsdc(creatorShareUsdc),
      fee_usdc: formatUsdc(feeUsdc),
      currency: "USDC" as const,
    },
    transaction: row.tx.signature,
  };
}

export class SubscriptionService {
  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly quoter: Quoter,
    private readonly jobs: JobQueue,
    private readonly listings: ListingService,
  ) {}

  /**
   * Buys the wallet a period of the agent's subscription: `subscribe`, signed by the relayer,
   * pays the period price through the wallet's delegate approval, split 99/1 at once.
   */
  async subscribe(key: AuthenticatedKey, agent: string, idempotency_key?: string, max_price_usdc?: bigint): Promise<PurchaseOutcome> {
    const network = key.network;
    const sender = senderOf(this.senders, network);
    const fingerprint = createHash("sha256").update(canonicalJson({ network, agent })).digest();
    if (idempotency_key !== undefined) {
      const replay = await this.replay(key.id, idempotency_key, fingerprint);
      if (replay) return replay;
    }
    const listing = await this.quoter.listing(network, agent);
    const agentAddress = new PublicKey(agent);
    const wallet = new PublicKey(key.wallet);
    const market = await this.chain.market(network);
    const payerTokenAccount = getAssociatedTokenAddressSync(market.usdcMint, wallet, true);
    const connection = this.chain.connection(network);
    let infos;
    try {
      infos = await connection.getMultipleAccountsInfo([
        agentAddress,
        payerTokenAccount,
        subscriptionPda(agentAddress, wallet, this.chain.programId(network)),
      ]);
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
    }
    if (!infos[0]) throw new ApiError("resource_not_found", `No agent account ${agent} on ${network}.`, "agent_id");
    const onChain = decodeAgent(infos[0].data);
    await requireListedTerms(this.listings, network, agent, listing, onChain);
    if (onChain.pricing.kind === "PayPerUse" || onChain.pricing.kind === "Metered") throw new ApiError("subscription_not_offered");
    const price = onChain.pricing.periodPriceUsdc;
    if (infos[2]) refuseUnrenewable(decodeSubscription(infos[2].data), onChain.pricing);
    if (max_price_usdc !== undefined && price > max_price_usdc) throw priceAboveMaximum(price, max_price_usdc);
    const token = infos[1] ? unpackAccount(payerTokenAccount, infos[1], infos[1].owner) : null;
    const balance = token?.amount ?? 0n;
    const allowance = token?.delegate?.equals(delegatePda(this.chain.programId(network))) ? token.delegatedAmount : 0n;
    if (balance < price || allowance < price) {
      throw new ApiError(balance < price ? "insufficient_balance" : "insufficient_allowance", undefined, undefined, {
        network,
        wallet: wallet.toBase58(),
        mint: market.usdcMint.toBase58(),
        required_usdc: formatUsdc(price),
        balance_usdc: formatUsdc(balance),
        allowance_usdc: formatUsdc(allowance),
      });
    }
    const id = `${PURCHASE_PREFIX}${utils.bytes.bs58.encode(randomBytes(16))}`;
    // Two purchases of one subscription signed with the same blockhash and fee shard would be one
    // transaction: the second a replay that never lands, though its signature shows as landed.
    // Each purchase takes a fee shard no recorded purchase of the same bytes has.
    const firstShard = anyFeeShard();
    let inserted: { rows: PurchaseRow[] } | "duplicate" = "duplicate";
    for (let i = 0; i < FEE_SHARD_COUNT && inserted === "duplicate"; i += 1) {
      const signed = await sender.sign([
        subscribeInstruction({
          programId: this.chain.programId(network),
          relayer: sender.signer.publicKey,
          usdcMint: market.usdcMint,
          agent: agentAddress,
          payer: wallet,
          payerTokenAccount,
          payoutAccount: onChain.payoutAccount,
          feeShardIndex: (firstShard + i) % FEE_SHARD_COUNT,
          maxAmountUsdc: price,
        }),
      ]);
      // The intent, written before the send: from here on the purchase is finish_purchase's if
      // this request cannot end it.
      inserted = await this.insertWithinCap(key, [
        id, key.id, key.wallet, network, agent, price.toString(), signed, idempotency_key ?? null, fingerprint,
      ]);
    }
    if (inserted === "duplicate") {
      throw new ApiError("rate_limited", `${FEE_SHARD_COUNT} purchases of this subscription signed with one blockhash; retry in 2 s.`, undefined, {
        retry_after_secs: 2,
      });
    }
    if (!inserted.rows[0]) {
      const replay = await this.replay(key.id, idempotency_key!, fingerprint);
      if (!replay) throw new ApiError("idempotency_request_in_progress", undefined, "Idempotency-Key");
      return replay;
    }
    let row = inserted.rows[0];
    try {
      const sent = await sender.send(row.tx);
      if (sent.kind === "rejected") {
        const underfunded = feePayerShort(sent);
        const program = errorFromLogs(sent.message);
        row = await this.fail(
          row,
          underfunded
            ? "relayer_underfunded"
            : program === "PriceAboveMaximum"
              ? "price_changed"
              : program === "SubscriptionPaidAhead" || program === "SubscriptionTermsChanged"
                ? "subscription_not_renewable"
                : "escrow_rejected",
          underfunded ? "subscribe was refused: the relayer's SOL ran short" : `subscribe was refused: ${program ?? sent.message}`,
        );
      } else if (sent.kind === "processed") {
        row = await this.awaitSubscription(row, sender);
      }
    } catch (error) {
      // Sent or not, it is recorded: the finish_purchase job ends it.
      reportBackgroundError("subscription purchase", error, { purchase_id: row.id });
    }
    if (row.state === "sending") {
      // If the job's store fails too, the sweep finds the purchase still `sending`.
      await this.jobs.add("finish_purchase", row.id).catch((error: unknown) => reportBackgroundError("finish handover", error, { purchase_id: row.id }));
    }
    return { row, replayed: false };
  }

  /** The first answer again for a known Idempotency-Key, or null if the key is new. */
  private async replay(api_key_id: string, idempotency_key: string, fingerprint: Buffer): Promise<PurchaseOutcome | null> {
    const { rows } = await this.db.query<PurchaseRow & { fingerprint: Buffer }>(
      "SELECT * FROM subscription_purchases WHERE api_key_id = $1 AND idempotency_key = $2",
      [api_key_id, idempotency_key],
    );
    const row = rows[0];
    if (!row) return null;
    if (!row.fingerprint.equals(fingerprint)) throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    return { row, replayed: true };
  }

  /**
   * Moves a purchase whose send outcome was unknown on: succeeded once its transaction is
   * confirmed, failed once it expired unlanded or landed with an error. `retry` while the chain
   * still has to decide, so the finish_purchase job runs again.
   */
  async finish(id: string): Promise<JobOutcome> {
    const { rows } = await this.db.query<PurchaseRow>("SELECT * FROM subscription_purchases WHERE id = $1", [id]);
    const row = rows[0];
    if (!row || row.state !== "sending") return JOB_DONE;
    const sender = senderOf(this.senders, row.network);
    const state = await sender.state(row.tx);
    if (state.kind === "landed" && state.err === null) {
      if (state.confirmation === "processed") return retryJob("subscribe processed, not confirmed yet");
      if ((await this.succeed(row)).state === "sending") return retryJob("subscription not visible yet");
      return JOB_DONE;
    }
    if (state.kind === "landed") {
      await this.fail(row, "escrow_rejected", `subscribe failed on chain: ${JSON.stringify(state.err)}`);
      return JOB_DONE;
    }
    if (state.kind === "expired") {
      await this.fail(row, "chain_unavailable", "subscribe never landed; nothing was charged");
      return JOB_DONE;
    }
    await sender.send(row.tx);
    return retryJob("subscribe not landed yet");
  }

  /** Purchases left `sending` for a while (their request and its handover both failed). */
  async sweep(): Promise<void> {
    const { rows } = await this.db.query<{ id: string }>(
      "SELECT id FROM subscription_purchases WHERE state = 'sending' AND updated_at < clock_timestamp() - interval '10 seconds' LIMIT 500",
    );
    for (const { id } of rows) await this.jobs.add("finish_purchase", id);
  }

  /**
   * Ends a sent purchase by its transaction's status, never by the subscription account alone: a
   * renewal's account exists before its transaction lands, so only the signature tells that this
   * period was paid. Succeeded once confirmed; failed (its reservation released) once it landed
   * with an error or its blockhash expired unlanded. A cluster loses some sends: the same bytes
   * are sent again every REBROADCAST_MS meanwhile. Past SUBSCRIPTION_WAIT_MS it is left to the
   * finish_purchase job, which goes on the same way (and survives a restart: the row is `sending`).
   */
  private async awaitSubscription(row: PurchaseRow, sender: TransactionSender): Promise<PurchaseRow> {
    let sent_ms = Date.now();
    for (const start_ms = Date.now(); Date.now() - start_ms < SUBSCRIPTION_WAIT_MS; ) {
      await new Promise((resolve) => setTimeout(resolve, SUBSCRIPTION_POLL_MS));
      const state = await sender.state(row.tx);
      if (state.kind === "landed" && state.err !== null) {
        return this.fail(row, "escrow_rejected", `subscribe failed on chain: ${JSON.stringify(state.err)}`);
      }
      if (state.kind === "landed" && state.confirmation !== "processed") {
        const current = await this.succeed(row);
        if (current.state !== "sending") return current;
      }
      if (state.kind === "expired") return this.fail(row, "chain_unavailable", "subscribe never landed; nothing was charged");
      if (state.kind === "pending" && Date.now() - sent_ms >= REBROADCAST_MS) {
        sent_ms = Date.now();
        await sender.send(row.tx);
      }
    }
    return row;
  }

  /** Records the subscription as its confirmed transaction left it. */
  private async succeed(row: PurchaseRow): Promise<PurchaseRow> {
    const info = await this.chain
      .connection(row.network)
      .getAccountInfo(subscriptionPda(new PublicKey(row.agent), new PublicKey(row.wallet), this.chain.programId(row.network)), "confirmed");
    if (!info) return row;
    const subscription = decodeSubscription(info.data);
    const result = {
      expires_at: new Date(Number(subscription.expiresAt) * 1000).toISOString(),
      included_calls_remaining: subscription.includedCallsRemaining,
    };
    const { rows } = await this.db.query<PurchaseRow>(
      `UPDATE subscription_purchases SET state = 'succeeded', result = $2, updated_at = clock_timestamp()
       WHERE id = $1 AND state = 'sending' RETURNING *`,
      [row.id, result],
    );
    return rows[0] ?? row;
  }

  /**
   * Records the purchase and reserves its price against the key's spending cap, in one
   * transaction: a period bought with a key counts toward its cap like the calls it pays for.
   * No row when the Idempotency-Key is already taken; spending_cap_reached when the cap refuses.
   */
  private async insertWithinCap(key: AuthenticatedKey, values: unknown[]): Promise<{ rows: PurchaseRow[] } | "duplicate"> {
    const [, , wallet, network, agent, , signed] = values as [string, string, string, NetworkName, string, string, SignedTransaction];
    return inTransaction(this.db, async (client) => {
      // Identical transactions can only be the same wallet's purchases of the same agent.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('subscribe:' || $1 || ':' || $2 || ':' || $3))", [network, wallet, agent]);
      const same = await client.query(
        "SELECT 1 FROM subscription_purchases WHERE wallet = $1 AND agent = $2 AND network = $3 AND tx->>'signature' = $4",
        [wallet, agent, network, signed.signature],
      );
      // Nothing was written yet: committing is as good as rolling back.
      if (same.rows.length > 0) return "duplicate" as const;
      const inserted = await client.query<PurchaseRow>(
        `INSERT INTO subscription_purchases (id, api_key_id, wallet, network, agent, state, price_usdc, tx, idempotency_key, fingerprint)
         VALUES ($1, $2, $3, $4, $5, 'sending', $6, $7, $8, $9)
         ON CONFLICT (api_key_id, idempotency_key) DO NOTHING RETURNING *`,
        values,
      );
      if (inserted.rows[0]) {
        const reserved = await client.query(
          `UPDATE api_keys SET spent_usdc = spent_usdc + $2::numeric
            WHERE id = $1 AND (spending_cap_usdc IS NULL OR spent_usdc + $2::numeric <= spending_cap_usdc)`,
          [key.id, inserted.rows[0].price_usdc],
        );
        // Thrown, so the purchase's row is rolled back with it.
        if (reserved.rowCount === 0) {
          throw new ApiError("spending_cap_reached", undefined, undefined, {
            spending_cap_usdc: key.spending_cap_usdc === null ? null : formatUsdc(key.spending_cap_usdc),
            required_usdc: formatUsdc(BigInt(inserted.rows[0].price_usdc)),
          });
        }
      }
      return inserted;
    });
  }

  /** Nothing charged. A failure on our side that a retry can cure frees the Idempotency-Key. */
  private async fail(row: PurchaseRow, code: ErrorCode, message: string): Promise<PurchaseRow> {
    // The purchase's reservation on the key is released with the same statement.
    const { rows } = await this.db.query<PurchaseRow>(
      `WITH failed AS (
         UPDATE subscription_purchases SET state = 'failed', failure_code = $2, failure_message = $3,
           idempotency_key = CASE WHEN $2 = 'relayer_underfunded' THEN NULL ELSE idempotency_key END,
           updated_at = clock_timestamp()
         WHERE id = $1 AND state = 'sending' RETURNING *
       ), released AS (
         UPDATE api_keys k SET spent_usdc = k.spent_usdc - f.price_usdc FROM failed f WHERE k.id = f.api_key_id
       )
       SELECT * FROM failed`,
      [row.id, code, message],
    );
    return rows[0] ?? row;
  }
}
