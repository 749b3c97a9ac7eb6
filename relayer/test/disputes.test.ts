// Dispute evidence and dispute views in the relayer's own package: a settled execution of the
// relayer's database, its settlement's EscrowSettledToLog (its leaf), the clock and the Dispute
// accounts (keyed by agent and leaf index) held by a stand-in RPC.
// Who may speak (the payer and the agent's creator, as the Agent account names it), until when
// (the dispute window by the chain's clock, longer while a dispute is open), and who may read a
// dispute (its parties and the market's arbiter; another wallet costs nothing but its 403).
// tests/relayer-disputes.test.ts opens and resolves disputes on localnet, end to end.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { disputePda, evidenceHash, formatExecutionId, toHex } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { MAX_EVIDENCE_BYTES_PER_WALLET } from "../src/disputes/dispute-evidence.js";
import { EvidencePurge } from "../src/disputes/evidence-purge.js";
import { ExecutionStore } from "../src/executions/execution-store.js";
import { StandInMarket, type Creator } from "./stand-in-market.js";
import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

const AMOUNT_USDC = 250_000n;
const WINDOW_SECS = 3n * 24n * 3600n;

describe("disputes against the chain's accounts (stand-in RPC)", function () {
  this.timeout(30_000);
  let market: StandInMarket;
  let relayer: TestRelayer;
  let creator: Creator;
  const payer = Keypair.generate();
  const sessions: Record<"payer" | "creator" | "stranger" | "arbiter", string> = { payer: "", creator: "", stranger: "", arbiter: "" };
  let apiKeyId: string;

  before(async () => {
    market = await StandInMarket.start();
    relayer = await startTestRelayer(market.env());
    creator = await market.register(relayer.services.config.networks.devnet!.marketplace_public_key);
    sessions.payer = await signIn(relayer.app, payer);
    sessions.creator = await signIn(relayer.app, creator.wallet);
    sessions.stranger = await signIn(relayer.app);
    sessions.arbiter = await signIn(relayer.app, market.arbiter);
    const key = await relayer.app.inject({
      method: "POST",
      url: "/v1/keys",
      headers: bearer(sessions.payer),
      payload: { name: "disputes", environment: "test" },
    });
    apiKeyId = (key.json() as { id: string }).id;
  });

  after(async () => {
    await creator?.close();
    await relayer?.close();
    await market?.close();
  });

  let leaves = 0n;

  /** A settled execution of `payer` on the creator's agent, its leaf settled at `settled_at`, the clock at `now`. */
  async function settled(settled_at: bigint, now: bigint): Promise<{ id: string; bytes: Uint8Array; leafIndex: bigint }> {
    const bytes = new Uint8Array(randomBytes(16));
    const id = formatExecutionId(bytes);
    const store = new ExecutionStore(relayer.services.db);
    await store.insert({
      id,
      api_key_id: apiKeyId,
      wallet: payer.publicKey.toBase58(),
      network: "devnet",
      agent: creator.agent.toBase58(),
      mode: "sync",
      owner: "instance",
      task: "echo",
      parameters: { text: "hi" },
      request_hash: randomBytes(32),
      payer_token_account: market.fund(payer.publicKey, 0n, 0n).toBase58(),
      used_subscription: false,
      quoted_usdc: AMOUNT_USDC.toString(),
      escrow_tx: { signature: "open", bytes: "AQID", last_valid_block_height: 1 },
    });
    // The settlement as the chain's confirmation leaves it (the relayer's write path is tested
    // with its store and, end to end, on localnet), and its transaction's event: the leaf.
    const nonce = 7n;
    const signature = `settle-${id}`;
    const settle_tx = JSON.stringify({ signature, bytes: "AQID", last_valid_block_height: 1 });
    await relayer.services.db.query(
      "UPDATE executions SET state = 'settled', amount_usdc = $2, escrow_nonce = $3, settle_tx = $4 WHERE id = $1",
      [id, AMOUNT_USDC.toString(), nonce.toString(), settle_tx],
    );
    // Not 0: a leaf index read as "none" would pass unnoticed.
    const leafIndex = (leaves += 1n);
    market.rpc.setEventTransaction(signature, market.programId, "EscrowSettledToLog", {
      executionId: bytes,
      agent: creator.agent,
      nonce,
      payer: payer.publicKey,
      payerTokenAccount: PublicKey.default,
      apiKeyId: new Uint8Array(16),
      amountUsdc: AMOUNT_USDC,
      creatorShareUsdc: AMOUNT_USDC - AMOUNT_USDC / 100n,
      feeUsdc: AMOUNT_USDC / 100n,
      units: 0n,
      requestHash: new Uint8Array(32),
      resultHash: new Uint8Array(32),
      settledAt: settled_at,
      leafIndex,
      logRoot: new Uint8Array(32),
    });
    market.rpc.setClock(now);
    return { id, bytes, leafIndex };
  }

  /** The payer's Dispute account of the execution's leaf, as open_dispute leaves it. */
  function opened(bytes: Uint8Array, leafIndex: bigint, evidenceHash: Uint8Array, openedAt: bigint, settledAt: bigint): Promise<void> {
    return market.rpc.setProgramAccount(disputePda(creator.agent, leafIndex, market.programId), market.programId, "Dispute", {
      agent: creator.agent,
      leafIndex,
      executionId: bytes,
      payer: payer.publicKey,
      payerTokenAccount: PublicKey.default,
      amountUsdc: AMOUNT_USDC,
      evidenceHash,
      openedAt,
      settledAt,
      resolved: false,
      upheld: false,
      bump: 255,
    });
  }

  const submit = (session: string, execution_id: string, statement: string) =>
    relayer.app.inject({ method: "POST", url: "/v1/disputes/evidence", headers: bearer(session), payload: { execution_id, statement } });

  it("takes the payer's and the creator's statements within the window, with the hash open_dispute binds; no one else's", async () => {
    const { id } = await settled(1_000_000n, 1_000_060n);
    const mine = await submit(sessions.payer, id, "The summary left out the second half.");
    assert.equal(mine.statusCode, 201, mine.body);
    const evidence = mine.json() as { role: string; evidence_hash: string };
    assert.deepEqual(
      [evidence.role, evidence.evidence_hash],
      ["payer", toHex(evidenceHash("The summary left out the second half.", []))],
    );
    const answer = await submit(sessions.creator, id, "The input was cut at 4,000 characters, as listed.");
    assert.equal(answer.statusCode, 201, answer.body);
    assert.equal((answer.json() as { role: string }).role, "creator");
    const stranger = await submit(sessions.stranger, id, "I have views.");
    assert.equal(stranger.statusCode, 403);
    assert.equal(errorOf(stranger).code, "not_dispute_party");
  });

  it("closes evidence with the window by the chain's clock, and keeps it open while a dispute is", async () => {
    const settled_at = 2_000_000n;
    const { id, bytes, leafIndex } = await settled(settled_at, settled_at + WINDOW_SECS);
    assert.equal((await submit(sessions.payer, id, "At the last second.")).statusCode, 201);
    market.rpc.setClock(settled_at + WINDOW_SECS + 1n);
    const late = await submit(sessions.payer, id, "One second late.");
    assert.equal(late.statusCode, 409);
    assert.equal(errorOf(late).code, "dispute_window_closed");
    assert.equal(errorOf(late).message, `${id}'s dispute window closed at ${new Date(Number(settled_at + WINDOW_SECS) * 1000).toISOString()} (chain time).`);

    await opened(bytes, leafIndex, new Uint8Array(32), settled_at + 10n, settled_at);
    assert.equal((await submit(sessions.creator, id, "Answering the open dispute.")).statusCode, 201);
  });

  it("shows an open dispute to its payer, its creator and the arbiter, from the Dispute account; 403 to anyone else", async () => {
    const { id, bytes, leafIndex } = await settled(3_000_000n, 3_000_060n);
    await opened(bytes, leafIndex, new Uint8Array(32).fill(1), 3_000_030n, 3_000_000n);
    for (const [role, session] of [["payer", sessions.payer], ["creator", sessions.creator], ["arbiter", sessions.arbiter]] as const) {
      const page = await relayer.app.inject({ method: "GET", url: `/v1/disputes?role=${role}&state=open`, headers: bearer(session) });
      assert.equal(page.statusCode, 200, page.body);
      const found = (
        page.json() as { data: { execution_id: string; leaf_index: string | null; state: string; evidence_hash: string; amount_usdc: string }[] }
      ).data.find((dispute) => dispute.execution_id === id);
      assert.deepEqual(
        [role, found?.leaf_index, found?.state, found?.evidence_hash, found?.amount_usdc],
        [role, leafIndex.toString(), "open", "01".repeat(32), "0.250000"],
      );
    }
    const foreign = await relayer.app.inject({ method: "GET", url: `/v1/disputes/${id}`, headers: bearer(sessions.stranger) });
    assert.equal(foreign.statusCode, 403);
    assert.equal(errorOf(foreign).code, "not_dispute_party");
    const none = await relayer.app.inject({ method: "GET", url: "/v1/disputes?role=payer", headers: bearer(sessions.stranger) });
    assert.deepEqual((none.json() as { data: unknown[] }).data, []);
  });
  /** Five files of 1 MiB: the most one evidence item carries. */
  const FILES = Array.from({ length: 5 }, (_, i) => ({
    name: `log-${i}.txt`,
    content_type: "text/plain",
    content_base64: Buffer.alloc(1024 * 1024, i).toString("base64"),
  }));
  const withFiles = (session: string, execution_id: string) =>
    relayer.app.inject({ method: "POST", url: "/v1/disputes/evidence", headers: bearer(session), payload: { execution_id, statement: "See the logs.", attachments: FILES } });
  const storedBytes = async (wallet: string) =>
    Number(
      (
        await relayer.services.db.query<{ bytes: string }>(
          "SELECT coalesce(sum(a.size_bytes), 0)::text AS bytes FROM dispute_attachments a JOIN dispute_evidence e ON e.id = a.evidence_id WHERE e.wallet = $1",
          [wallet],
        )
      ).rows[0]!.bytes,
    );

  it("holds a wallet's evidence files to 50 MiB across executions (409 evidence_quota_reached, nothing stored); a purge gives the quota back", async function () {
    this.timeout(120_000);
    const wallet = payer.publicKey.toBase58();
    await relayer.services.db.query("DELETE FROM dispute_attachments a USING dispute_evidence e WHERE a.evidence_id = e.id AND e.wallet = $1", [wallet]);
    const executions = [await settled(3_000_000n, 3_000_060n), await settled(3_000_000n, 3_000_060n), await settled(3_000_000n, 3_000_060n)];
    for (let i = 0; i < 10; i += 1) {
      const stored = await withFiles(sessions.payer, executions[i % 2]!.id);
      assert.equal(stored.statusCode, 201, stored.body);
    }
    assert.equal(await storedBytes(wallet), MAX_EVIDENCE_BYTES_PER_WALLET);
    const items = async () => Number((await relayer.services.db.query<{ n: string }>("SELECT count(*) AS n FROM dispute_evidence WHERE wallet = $1", [wallet])).rows[0]!.n);
    const before = await items();
    const refused = await withFiles(sessions.payer, executions[2]!.id);
    assert.equal(refused.statusCode, 409);
    assert.equal(errorOf(refused).code, "evidence_quota_reached");
    assert.equal(
      errorOf(refused).message,
      `This wallet keeps ${MAX_EVIDENCE_BYTES_PER_WALLET} bytes of evidence files; 5242880 more would pass its ${MAX_EVIDENCE_BYTES_PER_WALLET} bytes. Files are purged once their dispute is resolved or its window closed.`,
    );
    assert.equal(await items(), before, "nothing stored");
    assert.equal(await storedBytes(wallet), MAX_EVIDENCE_BYTES_PER_WALLET);
    // A statement without files still goes in: the quota counts files.
    assert.equal((await submit(sessions.payer, executions[2]!.id, "No files this time.")).statusCode, 201);

    // The first execution's window closed more than the grace ago with no dispute: its files go.
    await relayer.services.db.query("UPDATE executions SET finished_at = now() - make_interval(secs => $2) WHERE id = $1", [executions[0]!.id, Number(WINDOW_SECS) + 3600]);
    const purge = new EvidencePurge(relayer.services.db, relayer.services.chain, { interval_ms: 60_000, grace_secs: 1800, onError: (error) => assert.fail(String(error)) });
    assert.equal(await purge.once(), 25);
    assert.equal(await storedBytes(wallet), MAX_EVIDENCE_BYTES_PER_WALLET / 2);
    assert.equal((await withFiles(sessions.payer, executions[2]!.id)).statusCode, 201);
  });

  it("purges files once the dispute was resolved or the window closed, each past the grace; never an open dispute's, nor a recent one's", async () => {
    const cases = {
      windowClosed: await settled(4_000_000n, 4_000_060n),
      windowOpen: await settled(4_000_000n, 4_000_060n),
      disputeOpen: await settled(4_000_000n, 4_000_060n),
      resolvedLongAgo: await settled(4_000_000n, 4_000_060n),
      resolvedJustNow: await settled(4_000_000n, 4_000_060n),
    };
    const wallet = payer.publicKey.toBase58();
    await relayer.services.db.query("DELETE FROM dispute_attachments a USING dispute_evidence e WHERE a.evidence_id = e.id AND e.wallet = $1", [wallet]);
    for (const { id } of Object.values(cases)) {
      const stored = await relayer.app.inject({
        method: "POST",
        url: "/v1/disputes/evidence",
        headers: bearer(sessions.payer),
        payload: { execution_id: id, statement: "A file.", attachments: [{ name: "a.txt", content_type: "text/plain", content_base64: "aGk=" }] },
      });
      assert.equal(stored.statusCode, 201, stored.body);
    }
    const old = Number(WINDOW_SECS) + 7200;
    await relayer.services.db.query("UPDATE executions SET finished_at = now() - make_interval(secs => $2) WHERE id = ANY($1::text[])", [
      [cases.windowClosed.id, cases.disputeOpen.id, cases.resolvedLongAgo.id, cases.resolvedJustNow.id],
      old,
    ]);
    await relayer.services.db.query("UPDATE executions SET finished_at = now() WHERE id = $1", [cases.windowOpen.id]);
    const outcome = (id: string, state: string, resolved_ago_secs: number | null) =>
      relayer.services.db.query(
        `INSERT INTO dispute_outcomes (execution_id, state, amount_usdc, evidence_hash, opened_at, resolved_at)
         VALUES ($1, $2, 0, '\\x00', now() - interval '3 days', CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(secs => $3::int) END)`,
        [id, state, resolved_ago_secs],
      );
    await outcome(cases.disputeOpen.id, "open", null);
    await outcome(cases.resolvedLongAgo.id, "upheld", 7200);
    await outcome(cases.resolvedJustNow.id, "rejected", 60);
    const purge = new EvidencePurge(relayer.services.db, relayer.services.chain, { interval_ms: 60_000, grace_secs: 3600, onError: (error) => assert.fail(String(error)) });
    assert.equal(await purge.once(), 2);
    const left = await relayer.services.db.query<{ execution_id: string }>(
      "SELECT e.execution_id FROM dispute_attachments a JOIN dispute_evidence e ON e.id = a.evidence_id WHERE e.wallet = $1",
      [wallet],
    );
    assert.deepEqual(left.rows.map((row) => row.execution_id).sort(), [cases.windowOpen.id, cases.disputeOpen.id, cases.resolvedJustNow.id].sort());
    // The statements and their hashes stay: only the files go.
    const statements = await relayer.services.db.query("SELECT 1 FROM dispute_evidence WHERE execution_id = ANY($1::text[])", [[cases.windowClosed.id, cases.resolvedLongAgo.id]]);
    assert.equal(statements.rowCount, 2);
    assert.equal(await purge.once(), 0, "idempotent");
  });
});
