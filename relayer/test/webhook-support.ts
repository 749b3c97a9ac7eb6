// What the webhook tests share: a receiver on loopback that verifies what it is sent with the
// standardwebhooks package, and a relayer (its database, wallets, endpoints, execution rows and
// delivery workers) set up and closed around each test file.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";
import type { FastifyInstance } from "fastify";
import { Webhook } from "standardwebhooks";

import type { Db } from "../src/db/database.js";
import type { ExecutionRow } from "../src/executions/execution-row.js";
import { WEBHOOK_WORKER_DEFAULTS, WebhookWorker, type WebhookWorkerOptions } from "../src/webhooks/webhook-worker.js";
import { bearer, signIn, startTestRelayer, type TestRelayer } from "./support.js";

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** An HTTP receiver on loopback that records what it is sent, and can be stopped and started. */
export class Receiver {
  readonly received: Received[] = [];
  private server: http.Server | undefined;
  port = 0;
  /** How long it waits before answering, and with what. */
  delay_ms = 0;
  status = 204;
  headers: Record<string, string> = {};

  async start(port = 0): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        this.received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        setTimeout(() => response.writeHead(this.status, this.headers).end(), this.delay_ms);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** The events received that verify under `secret`, as its receiver would check them. */
  verified(secret: string): { type: string; data: { id?: string } & Record<string, unknown>; id: string; body: string }[] {
    const hook = new Webhook(secret);
    return this.received.flatMap((r) => {
      try {
        return [{ ...(hook.verify(r.body, r.headers) as { type: string; data: { id?: string } }), id: r.headers["webhook-id"]!, body: r.body }];
      } catch {
        return [];
      }
    });
  }
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeout_ms = 20_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Delivery workers that poll often, under the development policy (the receivers are on loopback). */
const FAST: WebhookWorkerOptions = { ...WEBHOOK_WORKER_DEFAULTS, policy: "development", poll_ms: 50 };

export interface Owner {
  address: string;
  token: string;
  key_id: string;
  key_secret: string;
}

export interface WebhookFixture {
  relayer: TestRelayer;
  receiver: Receiver;
  /** A worker over the relayer's database (or `db`), closed after the test. */
  startWorker(options?: Partial<WebhookWorkerOptions>, db?: Db): WebhookWorker;
  closeWorkers(): Promise<void>;
  wallet(app?: FastifyInstance): Promise<Owner>;
  createEndpoint(token: string, url: string, events?: string[]): Promise<{ id: string; secret: string; url: string; events: string[] }>;
  execution(owner: { address: string; key_id: string }, state: "settling" | "refunding" | "opening", db?: Db): Promise<ExecutionRow>;
}

/** A relayer and a receiver for the describe block it is called in. */
export function webhookFixture(): WebhookFixture {
  const workers: WebhookWorker[] = [];
  const fx = {} as WebhookFixture;
  before(async () => {
    fx.relayer = await startTestRelayer();
    fx.receiver = new Receiver();
    await fx.receiver.start();
  });
  afterEach(() => fx.closeWorkers());
  after(async () => {
    await fx.receiver.stop();
    await fx.relayer.close();
  });
  fx.closeWorkers = async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.close()));
  };
  fx.startWorker = (options = {}, db = fx.relayer.services.db) => {
    const worker = new WebhookWorker(db, { ...FAST, ...options });
    workers.push(worker);
    worker.start();
    return worker;
  };
  /** A signed-in wallet with an API key, for executions rows of its own. */
  fx.wallet = async (app = fx.relayer.app) => {
    const keypair = Keypair.generate();
    const token = await signIn(app, keypair);
    const key = await app.inject({ method: "POST", url: "/v1/keys", headers: bearer(token), payload: { name: "k", environment: "test" } });
    const { id, secret } = key.json() as { id: string; secret: string };
    return { address: keypair.publicKey.toBase58(), token, key_id: id, key_secret: secret };
  };
  fx.createEndpoint = async (token, url, events = ["execution.succeeded", "execution.refunded", "execution.failed"]) => {
    const response = await fx.relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url, events } });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string; secret: string; url: string; events: string[] };
  };
  /** An execution row in `state`, as the execute path leaves it there. */
  fx.execution = async (owner, state, db = fx.relayer.services.db) => {
    const id = `exec_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const { rows } = await db.query<ExecutionRow>(
      `INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, task, parameters, request_hash,
         payer_token_account, quoted_usdc, amount_usdc, escrow_nonce, output, result_hash, result_digest, units, creator_signature,
         signing_key, finished_at, refund_reason, failure_code, failure_message)
       VALUES ($1, $2, $3, 'devnet', $4, 'sync', $5, 'task', '{}', $6, $4, 0, 0, 3, '{"answer":42}', $6, $6, 0, $6, $4,
         clock_timestamp(), $7, $8, $9) RETURNING *`,
      [
        id,
        owner.key_id,
        owner.address,
        Keypair.generate().publicKey.toBase58(),
        state,
        randomBytes(32),
        state === "refunding" ? "CreatorError" : null,
        state === "refunding" ? "creator_error" : null,
        state === "refunding" ? "the creator answered 500" : null,
      ],
    );
    return rows[0]!;
  };
  return fx;
}
