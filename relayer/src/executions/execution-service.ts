// Starting an execution: the quote, its Idempotency-Key claimed, its row inserted with the key's
// spending reservation, then its run (sync) or its job (async). The route turns the row it
// answers with into an HTTP status; docs/architecture.md follows one execution through.
import { createHash, randomBytes } from "node:crypto";

import { canonicalJson, formatExecutionId, requestHash, formatUsdc, type NetworkName } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";
import { reportBackgroundError } from "@agent-market/service";

import type { AuthenticatedKey } from "../auth/api-keys.js";
import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { JobQueue } from "../jobs/job-queue.js";
import { circuitState, type CircuitBreaker } from "../listings/circuit-breaker.js";
import type { ListingForExecution, ListingService } from "../listings/listing-service.js";
import { newWebhookSecret } from "../webhooks/webhook-signing.js";
import { EMPTY_ROW, type ExecutionRow } from "./execution-row.js";
import type { ExecutionLeases } from "./execution-leases.js";
import type { ExecutionStream } from "./execution-stream.js";
import type { ExecutionRunner } from "./execution-run.js";
import type { ExecutionStore, NewExecution } from "./execution-store.js";
import type { Quoter } from "./quote.js";
import { openEscrowInstructions, senderOf, type Senders } from "./transactions.js";

/** Longest task accepted, in characters. */
export const MAX_TASK_CHARS = 20_000;

export interface ExecuteInput {
  key: AuthenticatedKey;
  agent: string;
  task: string;
  parameters: Record<string, unknown>;
  idempotency_key?: string;
  mode: "sync" | "async";
  /** The most the caller agreed to pay for this call, in USDC base units (the price it was shown). */
  max_price_usdc?: bigint;
  /** Async only: where the execution's final event is delivered (checked by the route). */
  callback_url?: string;
  /** Sync only: where a streamed call reports its escrow's opening and the creator's chunks. */
  stream?: ExecutionStream;
}

/** What limits admission: the in-flight leases and the agents' circuit breakers. */
export interface AdmissionServices {
  leases: ExecutionLeases;
  breaker: CircuitBreaker;
  listings: ListingService;
}

/** The execution as it stands when its request is answered. */
export interface ExecuteOutcome {
  row: ExecutionRow;
  replayed: boolean;
  /** The secret the callback's delivery is signed with: in the first answer only. */
  callback_secret?: string;
}

export class ExecutionService {
  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly quoter: Quoter,
    private readonly store: ExecutionStore,
    private readonly runner: ExecutionRunner,
    private readonly jobs: JobQueue,
    private readonly instance_id: string,
    private readonly admission: AdmissionServices,
  ) {}

  async execute(input: ExecuteInput): Promise<ExecuteOutcome> {
    const { key } = input;
    const network = key.network;
    // A network this relayer does not serve is refused before anything else.
    senderOf(this.senders, network);
    const fingerprint =
      input.idempotency_key === undefined
        ? null
        : createHash("sha256")
            .update(canonicalJson({ network, agent: input.agent, task: input.task, parameters: input.parameters }))
            .digest();
    if (input.idempotency_key !== undefined) {
      const replay = await this.replay(key.id, input.idempotency_key, fingerprint!);
      if (replay) return replay;
    }

    const listing = await this.quoter.listing(network, input.agent, true);
    this.quoter.validate(listing, input.parameters);

    const id = formatExecutionId(randomBytes(16));
    // Before anything is sent, and in this order: the agent's circuit (its probe claimed if it is
    // half-open), then a lease in the key's and the agent's in-flight limits.
    const probe = await this.admitThroughCircuit(network, input.agent, listing, id);
    let leased = false;
    let kept = false;
    try {
      await this.admission.leases.acquire(id, key.id, network, input.agent);
      leased = true;
      const outcome = await this.start(input, listing, id, fingerprint);
      // An async execution's leases (and probe) stay with it until its job has run it.
      kept = input.mode === "async" && !outcome.replayed && outcome.row.state === "opening";
      return outcome;
    } finally {
      if (kept) this.admission.leases.handOff(id);
      else {
        if (leased) await this.admission.leases.release(id);
        if (probe) {
          await this.admission.breaker
            .endProbe(id)
            .catch((error: unknown) => reportBackgroundError("circuit probe release", error, { execution_id: id }));
        }
      }
    }
  }

  /**
   * Refuses an agent whose circuit is open (`agent_circuit_open`); lets a half-open one through
   * for one probe call, this one if it claims it. True when this execution is the probe.
   */
  private async admitThroughCircuit(
    network: NetworkName,
    agent: string,
    listing: ListingForExecution,
    id: string,
  ): Promise<boolean> {
    const state = circuitState(listing.circuit);
    if (state === "closed") return false;
    if (state === "half_open" && (await this.admission.breaker.claimProbe(network, agent, id))) {
      this.admission.listings.forget(network, agent);
      return true;
    }
    const retry_at = state === "open" ? listing.circuit!.opened_until! : new Date(Date.now() + 1_000);
    throw new ApiError(
      "agent_circuit_open",
      state === "open"
        ? `The agent's creator caused too many refunds lately: it takes no executions until ${retry_at.toISOString()}.`
        : "The agent's circuit is half-open and its probe call is under way; retry in a moment.",
      undefined,
      { retry_at: retry_at.toISOString(), retry_after_secs: Math.max(1, Math.ceil((retry_at.getTime() - Date.now()) / 1000)) },
    );
  }

  private async start(
    input: ExecuteInput,
    listing: ListingForExecution,
    id: string,
    fingerprint: Buffer | null,
  ): Promise<ExecuteOutcome> {
    const { key } = input;
    const network = key.network;
    const sender = senderOf(this.senders, network);
    const agentAddress = new PublicKey(input.agent);
    const wallet = new PublicKey(key.wallet);
    const market = await this.chain.market(network);
    const payerTokenAccount = this.quoter.tokenAccount(market.usdcMint, wallet);
    const quote = await this.quoter.quote(
      network,
      listing,
      agentAddress,
      wallet,
      payerTokenAccount,
      market.usdcMint,
      input.max_price_usdc,
    );

    const opening = {
      id,
      api_key_id: key.id,
      wallet: key.wallet,
      network,
      agent: input.agent,
      mode: input.mode,
      owner: input.mode === "sync" ? this.instance_id : null,
      task: input.task,
      parameters: input.parameters,
      request_hash: Buffer.from(requestHash(input.task, input.parameters)),
      payer_token_account: payerTokenAccount.toBase58(),
      used_subscription: quote.uses_subscription,
      // The escrow is limited to the quote, the listing's verified price and no more than the
      // caller's max_price_usdc or what the key's cap leaves (the reservation below).
      quoted_usdc: quote.amount_usdc.toString(),
    };
    const execution: NewExecution = {
      ...opening,
      escrow_tx:
        input.mode === "sync" && this.runner.signsOwnOpen(network, input.agent)
          ? await sender.sign(await openEscrowInstructions(this.chain, sender, [opening]))
          : null,
    };
    let created_at: Date | undefined;
    if (input.idempotency_key === undefined) {
      created_at = await this.store.insert(execution);
    } else {
      const claim = await this.store.claimAndInsert(execution, input.idempotency_key, fingerprint!);
      // Replayed once the connection is back in the pool: fifty duplicates holding theirs while
      // waiting for another would exhaust it.
      if (!claim.claimed) {
        const replay = await this.replay(key.id, input.idempotency_key, fingerprint!);
        // The claim's holder let go of it (its try failed and freed the key) between our two
        // reads: the client retries, as with a request still running.
        if (!replay) throw new ApiError("idempotency_request_in_progress", undefined, "Idempotency-Key");
        return replay;
      }
      created_at = claim.created_at;
    }
    if (!created_at) {
      throw new ApiError("spending_cap_reached", undefined, undefined, {
        spending_cap_usdc: key.spending_cap_usdc === null ? null : formatUsdc(key.spending_cap_usdc),
        required_usdc: formatUsdc(quote.amount_usdc),
      });
    }
    const row: ExecutionRow = { ...EMPTY_ROW, ...execution, state: "opening", created_at };

    if (input.mode === "async") {
      let callback_secret: string | undefined;
      try {
        // Recorded before the job may run it, so the statement that makes it final finds it.
        if (input.callback_url !== undefined) {
          callback_secret = newWebhookSecret();
          await this.db.query("INSERT INTO execution_callbacks (execution_id, url, secret) VALUES ($1, $2, $3)", [
            id,
            input.callback_url,
            callback_secret,
          ]);
        }
        await this.jobs.add("execute", id);
      } catch (error) {
        // Not queued (or its callback not recorded), and its caller is told to retry: this
        // execution must never run. (Should this
        // write fail too, the row waits for the sweep's stalled rule.)
        await this.store.fail(row, "database_unavailable", "the execution could not be queued").catch((failure: unknown) =>
          reportBackgroundError("async execution not queued", failure, { execution_id: id }),
        );
        throw error;
      }
      return { row, replayed: false, ...(callback_secret === undefined ? {} : { callback_secret }) };
    }
    const context = { agent: quote.agent, listing, ...(input.stream ? { stream: input.stream } : {}) };
    return { row: await this.runner.run(row, context), replayed: false };
  }

  /** The first response again for a known Idempotency-Key, or null if the key is new. */
  private async replay(api_key_id: string, idempotency_key: string, fingerprint: Buffer): Promise<ExecuteOutcome | null> {
    const { rows } = await this.db.query<{ fingerprint: Buffer; execution_id: string }>(
      "SELECT fingerprint, execution_id FROM idempotency_keys WHERE api_key_id = $1 AND key = $2",
      [api_key_id, idempotency_key],
    );
    const claim = rows[0];
    if (!claim) return null;
    if (!claim.fingerprint.equals(fingerprint)) throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    const row = await this.store.row(claim.execution_id);
    if (row.mode === "async") return { row, replayed: true };
    if (row.state === "opening" || row.state === "running") {
      throw new ApiError("idempotency_request_in_progress", undefined, "Idempotency-Key", { execution_id: row.id });
    }
    return { row, replayed: true };
  }
}
