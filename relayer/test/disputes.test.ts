// Dispute evidence and dispute views in the relayer's own package: a settled execution of the
// relayer's database, its settlement's EscrowsSettledToLog (its batch's leaves), the clock and the Dispute
// accounts (keyed by agent and leaf index) held by a stand-in RPC.
// Who may speak (the payer and the agent's creator, as the Agent account names it), until when
// (the dispute window by the chain's clock, longer while a dispute is open), and who may read a
// dispute (its parties and the market's arbiter; another wallet costs nothing but its 403).
// tests/relayer-disputes.test.ts opens and resolves disputes on localnet, end to end.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { disputePda, evidenceHash, formatExecutionId, toHex } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { DisputeChain } from "../src/disputes/dispute-chain.js";
import { MAX_EVIDENCE_BYTES_PER_WALLET } from "../src/disputes/dispute-evidence.js";
import { DISPUTE_ACCOUNT_MAX_AGE_MS, DisputeOutcomes, RESOLUTION_TRANSACTIONS } from "../src/disputes/dispute-outcomes.js";
import { ExecutionParties } from "../src/disputes/execution-parties.js";
import { SettledLeaves } from "../src/disputes/settled-leaf.js";
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
    market.rpc.setEventTransaction(signature, market.programId, "EscrowsSettledToLog", {
      agent: creator.agent,
      firstLeafIndex: leafIndex,
      logRoot: new Uint8Array(32),
      checkpoint: false,
      leaves: [
        {
          executionId: bytes,
          nonce,
          payer: payer.publicKey,
          payerTokenAccount: PublicKey.default,
          apiKeyId: new Uint8Array(16),
          amountUsdc: AMOUNT_USDC,
          chargedUsdc: AMOUNT_USDC,
          returnedUsdc: 0n,
          units: 0n,
          requestHash: new Uint8Array(32),
          resultHash: new Uint8Array(32),
          settledAt: settled_at,
        },
      ],
    });
    market.rpc.setClock(now);
    return { id, bytes, leafIndex };
  }

  /** The payer's Dispute account of the execution's leaf, as open_dispute leaves it, or resolve_dispute with `ruling`. */
  function opened(
    bytes: Uint8Array,
    leafIndex: bigint,
    evidenceHash: Uint8Array,
    openedAt: bigint,
    settledAt: bigint,
    ruling?: { upheld: boolean; slashedUsdc: bigint; resolvedAt: bigint },
  ): Promise<void> {
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
      resolved: ruling !== undefined,
      upheld: ruling?.upheld ?? false,
      slashedUsdc: ruling?.slashedUsdc ?? 0n,
      resolvedAt: ruling?.resolvedAt ?? 0n,
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
  /** The calls to the stand-in RPC since `from` (an index into its calls) that name `address`. */
  const callsNaming = (from: number, address: PublicKey) =>
    market.rpc.calls.slice(from).filter((call) => JSON.stringify(call.params).includes(address.toBase58())).map((call) => call.method);
  /**
   * The calls since `from` that read some address's history: its signatures, or a transaction
   * other than the execution's own settlement (read once for its leaf index).
   */
  const historyReads = (from: number) =>
    market.rpc.calls
      .slice(from)
      .filter((call) => call.method === "getSignaturesForAddress" || (call.method === "getTransaction" && !String(call.params[0]).startsWith("settle-")))
      .map((call) => call.method);
  const get = (session: string, id: string) => relayer.app.inject({ method: "GET", url: `/v1/disputes/${id}`, headers: bearer(session) });
  /** A DisputeResolved event of leaf `leafIndex` in transaction `signature`, listed on `address`. */
  function resolvedIn(signature: string, address: PublicKey, bytes: Uint8Array, leafIndex: bigint, ruling: { upheld: boolean; slashedUsdc: bigint; resolvedAt: bigint }) {
    market.rpc.setEventTransaction(signature, market.programId, "DisputeResolved", {
      executionId: bytes,
      agent: creator.agent,
      leafIndex,
      payer: payer.publicKey,
      ...ruling,
    });
    market.rpc.addSignature(address, signature);
  }

  // GET /v1/disputes/:execution_id is for the dispute's three parties, each limited per wallet and
  // per address (rate-limit.test.ts). What it costs the marketplace: nothing on the RPC once the
  // outcome is recorded, else one getAccountInfo a second per dispute, however many read it and
  // whatever anyone adds to the address's history; a thousand reads gain a caller nothing more.
  it("answers a resolved dispute from its account with one read, whatever the address's history holds; with none once recorded", async () => {
    const { id, bytes, leafIndex } = await settled(5_000_000n, 5_000_060n);
    const address = disputePda(creator.agent, leafIndex, market.programId);
    await opened(bytes, leafIndex, new Uint8Array(32).fill(2), 5_000_030n, 5_000_000n, { upheld: true, slashedUsdc: 1_500_000n, resolvedAt: 5_000_050n });
    // Anyone can add transactions that mention the address: a reader must not page through them.
    for (let i = 0; i < 25; i += 1) market.rpc.addSignature(address, `junk-${id}-${i}`);
    const from = market.rpc.calls.length;
    const first = await get(sessions.payer, id);
    assert.equal(first.statusCode, 200, first.body);
    const view = first.json() as { state: string; slashed_usdc: string; resolved_at: string; resolve_transaction: string | null };
    assert.deepEqual(
      [view.state, view.slashed_usdc, view.resolved_at, view.resolve_transaction],
      ["upheld", "1.500000", new Date(5_000_050_000).toISOString(), null],
      "the outcome is the account's; only the watcher looks for the resolving transaction",
    );
    assert.deepEqual(callsNaming(from, address), ["getAccountInfo"]);
    assert.deepEqual(historyReads(from), [], "no history read");

    const again = market.rpc.calls.length;
    const recorded = await get(sessions.creator, id);
    assert.deepEqual(recorded.json(), first.json());
    assert.deepEqual(callsNaming(again, address), [], "a recorded outcome costs no RPC call");
  });

  it("shares one read of a Dispute account among the reads of it within a second, concurrent or not", async () => {
    const { id, bytes, leafIndex } = await settled(6_000_000n, 6_000_060n);
    const address = disputePda(creator.agent, leafIndex, market.programId);
    await opened(bytes, leafIndex, new Uint8Array(32).fill(3), 6_000_030n, 6_000_000n);
    const from = market.rpc.calls.length;
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) => get([sessions.payer, sessions.creator, sessions.arbiter][i % 3]!, id)),
    );
    for (let i = 0; i < 5; i += 1) burst.push(await get(sessions.payer, id));
    assert.deepEqual(burst.map((r) => (r.json() as { state: string }).state), Array(15).fill("open"));
    assert.deepEqual(callsNaming(from, address), ["getAccountInfo"]);
    await new Promise((resolve) => setTimeout(resolve, DISPUTE_ACCOUNT_MAX_AGE_MS + 50));
    assert.equal((await get(sessions.payer, id)).statusCode, 200);
    assert.deepEqual(callsNaming(from, address), ["getAccountInfo", "getAccountInfo"], "read again once the read is a second old");
    // The payer's evidence comes right before its open_dispute: its next read is a new one.
    assert.equal((await submit(sessions.payer, id, "More of the log.")).statusCode, 201);
    const afterEvidence = market.rpc.calls.length;
    assert.equal((await get(sessions.payer, id)).statusCode, 200);
    assert.deepEqual(callsNaming(afterEvidence, address), ["getAccountInfo"]);
  });

  // GET /v1/disputes is for any signed-in wallet, each seeing its own disputes in one role. It costs
  // one getProgramAccounts per network (per agent for a creator), whatever the page holds; it
  // counts against the same limit as the reads of one dispute, so a thousand lists a minute get
  // the caller the same page and 429s.
  it("lists disputes from one scan of the caller's Dispute accounts, with no read per dispute", async () => {
    const disputes = [await settled(7_000_000n, 7_000_060n), await settled(7_000_000n, 7_000_060n)];
    await opened(disputes[0]!.bytes, disputes[0]!.leafIndex, new Uint8Array(32), 7_000_010n, 7_000_000n);
    await opened(disputes[1]!.bytes, disputes[1]!.leafIndex, new Uint8Array(32), 7_000_010n, 7_000_000n, { upheld: false, slashedUsdc: 0n, resolvedAt: 7_000_020n });
    const from = market.rpc.calls.length;
    const page = await relayer.app.inject({ method: "GET", url: "/v1/disputes?role=payer&limit=100", headers: bearer(sessions.payer) });
    assert.equal(page.statusCode, 200, page.body);
    const states = new Map((page.json() as { data: { execution_id: string; state: string }[] }).data.map((d) => [d.execution_id, d.state]));
    assert.deepEqual([states.get(disputes[0]!.id), states.get(disputes[1]!.id)], ["open", "rejected"]);
    for (const { leafIndex } of disputes) assert.deepEqual(callsNaming(from, disputePda(creator.agent, leafIndex, market.programId)), []);
    assert.deepEqual(market.rpc.methods.slice(from).filter((m) => m === "getProgramAccounts"), ["getProgramAccounts"], "one scan, by the payer field");
  });

  it("the watcher looks once, in the newest few transactions, for a resolving transaction: found unless junk hides it; an outcome stays the account's", async () => {
    const store = new ExecutionStore(relayer.services.db);
    const leaves = new SettledLeaves(relayer.services.chain, store);
    const outcomes = new DisputeOutcomes(relayer.services.db, relayer.services.chain, leaves);
    const parties = new ExecutionParties(relayer.services.db, relayer.services.chain);
    const ruling = { upheld: true, slashedUsdc: 700_000n, resolvedAt: 8_000_050n };
    const row = async (id: string) =>
      (await relayer.services.db.query<{ state: string; slashed_usdc: string; resolve_signature: string | null }>(
        "SELECT state, slashed_usdc, resolve_signature FROM dispute_outcomes WHERE execution_id = $1",
        [id],
      )).rows[0];

    // Read by a caller first (recorded, with no signature), then found by the watcher past a
    // failed transaction and another leaf's resolution that mention the address.
    const seen = await settled(8_000_000n, 8_000_060n);
    const seenAddress = disputePda(creator.agent, seen.leafIndex, market.programId);
    await opened(seen.bytes, seen.leafIndex, new Uint8Array(32), 8_000_010n, 8_000_000n, ruling);
    resolvedIn(`resolve-${seen.id}`, seenAddress, seen.bytes, seen.leafIndex, ruling);
    resolvedIn(`other-leaf-${seen.id}`, seenAddress, seen.bytes, seen.leafIndex + 1000n, { upheld: false, slashedUsdc: 0n, resolvedAt: 8_000_055n });
    market.rpc.addSignature(seenAddress, `failed-${seen.id}`, true);
    assert.equal((await get(sessions.payer, seen.id)).statusCode, 200);
    assert.equal((await row(seen.id))?.resolve_signature, null);

    // Resolved, then buried under three transactions anyone could add.
    const buried = await settled(8_000_000n, 8_000_060n);
    const buriedAddress = disputePda(creator.agent, buried.leafIndex, market.programId);
    await opened(buried.bytes, buried.leafIndex, new Uint8Array(32), 8_000_010n, 8_000_000n, ruling);
    resolvedIn(`resolve-${buried.id}`, buriedAddress, buried.bytes, buried.leafIndex, ruling);
    for (let i = 0; i < 3; i += 1) market.rpc.addSignature(buriedAddress, `junk-${buried.id}-${i}`);

    const scan = (await new DisputeChain(relayer.services.chain, leaves).all("devnet")).accounts;
    const from = market.rpc.calls.length;
    for (const id of [seen.id, buried.id]) assert.notEqual(await outcomes.watch(await parties.one(id), scan), null);
    assert.deepEqual(await row(seen.id), { state: "upheld", slashed_usdc: "700000", resolve_signature: `resolve-${seen.id}` });
    assert.deepEqual(await row(buried.id), { state: "upheld", slashed_usdc: "700000", resolve_signature: null }, "the outcome, without its transaction");
    assert.deepEqual(callsNaming(from, seenAddress), ["getSignaturesForAddress"]);
    assert.deepEqual(callsNaming(from, buriedAddress), ["getSignaturesForAddress"]);
    assert.equal(historyReads(from).filter((m) => m === "getTransaction").length, 2 + RESOLUTION_TRANSACTIONS);

    // Once per dispute: the next passes ask nothing more.
    const next = market.rpc.calls.length;
    for (const id of [seen.id, buried.id]) await outcomes.watch(await parties.one(id), scan);
    assert.deepEqual(market.rpc.methods.slice(next), []);
    assert.equal((await row(buried.id))?.resolve_signature, null);
  });

  it("the watcher finds the outcome of a dispute recorded open whose account was closed before anyone saw it resolved", async () => {
    const { id, bytes, leafIndex } = await settled(9_000_000n, 9_000_060n);
    const address = disputePda(creator.agent, leafIndex, market.programId);
    await opened(bytes, leafIndex, new Uint8Array(32).fill(4), 9_000_010n, 9_000_000n);
    assert.equal(((await get(sessions.payer, id)).json() as { state: string }).state, "open");
    const ruling = { upheld: false, slashedUsdc: 0n, resolvedAt: 9_000_020n };
    resolvedIn(`resolve-${id}`, address, bytes, leafIndex, ruling);
    market.rpc.addSignature(address, `close-${id}`);
    market.rpc.remove(address);

    const store = new ExecutionStore(relayer.services.db);
    const leaves = new SettledLeaves(relayer.services.chain, store);
    const outcomes = new DisputeOutcomes(relayer.services.db, relayer.services.chain, leaves);
    const scan = (await new DisputeChain(relayer.services.chain, leaves).all("devnet")).accounts;
    await outcomes.watch(await new ExecutionParties(relayer.services.db, relayer.services.chain).one(id), scan);
    const view = (await get(sessions.creator, id)).json() as { state: string; slashed_usdc: string; resolved_at: string; resolve_transaction: string };
    assert.deepEqual(
      [view.state, view.slashed_usdc, view.resolved_at, view.resolve_transaction],
      ["rejected", "0.000000", new Date(9_000_020_000).toISOString(), `resolve-${id}`],
    );
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
