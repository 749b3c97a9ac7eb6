// Dispute evidence kept by the relayer, end to end: the payer's statement and files behind the
// hash open_dispute binds on chain (a dispute of the settlement's leaf, keyed by agent and leaf
// index), the creator's answer, who may read what, the dispute's state as the chain has it (open,
// then upheld with its slash), and a resolved dispute that stays until someone closes it (the
// relayer does not) while its outcome and evidence outlive the account. What a dispute read
// costs the marketplace is counted at a proxy in front of localnet's RPC: the relayer's RPC
// quota is the one settlement spends, and anyone can pad a dispute address's history.
import { strict as assert } from "node:assert";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

import {
  closeDisputeInstruction,
  collateralVaultPda,
  disputePda,
  disputeRoute,
  fetchDispute,
  openDisputeFor,
  parseExecutionId,
  resolveDisputeInstruction,
} from "@agent-market/program";
import { Keypair, SystemProgram, type PublicKey } from "@solana/web3.js";

import { DISPUTE_WINDOW_SECS, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, ONE_BY_ONE, signIn, startRelayer, startRelayerWith, type RunningRelayer } from "./src/relayer.js";
import { Receiver, until } from "./src/webhook-receiver.js";

const MIB = 1024 * 1024;
/** Longer than the relayer's sweep interval (2 s): a sweep has run in between. */
const ONE_SWEEP_MS = 2_500;
/** The watcher's one look for a resolving transaction reads at most this many (RESOLUTION_TRANSACTIONS). */
const RESOLUTION_TRANSACTIONS = 3;

/**
 * A JSON-RPC proxy in front of localnet that records each call the relayer makes, with its
 * parameters, so that a test counts the calls about one address or transaction. holdScans()
 * keeps getProgramAccounts calls waiting until released: the dispute watcher starts each pass
 * with one, so that a test measures a read without the watcher's own calls in between.
 */
interface CountingProxy {
  url: string;
  calls: { method: string; params: string }[];
  /** The methods of the calls since `from` (an index into `calls`) whose parameters name one of `names`. */
  about(from: number, names: string[]): string[];
  holdScans(): () => void;
  close(): Promise<void>;
}

async function startCountingProxy(target: string): Promise<CountingProxy> {
  const calls: { method: string; params: string }[] = [];
  let held: Promise<void> | null = null;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const asked = [JSON.parse(body.toString()) as { method: string; params?: unknown }].flat();
        while (held && asked.some((call) => call.method === "getProgramAccounts")) await held;
        for (const call of asked) calls.push({ method: call.method, params: JSON.stringify(call.params ?? []) });
        const answer = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
        response.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
      })().catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    about: (from, names) => calls.slice(from).filter((call) => names.some((name) => call.params.includes(name))).map((call) => call.method),
    holdScans() {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = null;
        release();
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Evidence {
  evidence_id: string;
  execution_id: string;
  role: string;
  evidence_hash: string;
  created_at: string;
}

interface DisputeView {
  leaf_index: string | null;
  state: string;
  amount_usdc: string;
  slashed_usdc: string | null;
  evidence_hash: string | null;
  creator: string;
  evidence: {
    evidence_id: string;
    role: string;
    evidence_hash: string;
    bound_on_chain: boolean;
    statement: string;
    attachments: { index: number; name: string; content_type: string; size_bytes: number; sha256: string }[];
  }[];
}

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/**
 * The documented encoding, written out independently of the program client: SHA-256 of the
 * canonical JSON (keys sorted, no spaces) of the domain, the statement and the attachments' names,
 * types and SHA-256s. JSON.stringify escapes strings as RFC 8785 does.
 */
function expectedHash(statement: string, files: { name: string; content_type: string; bytes: Buffer }[]): string {
  const attachments = files.map((f) => `{"content_type":${JSON.stringify(f.content_type)},"name":${JSON.stringify(f.name)},"sha256":"${sha256(f.bytes)}"}`);
  return sha256(`{"attachments":[${attachments.join(",")}],"domain":"agentmarket/evidence/v1","statement":${JSON.stringify(statement)}}`);
}

const attachment = (name: string, bytes: Buffer, content_type = "application/octet-stream") => ({
  name,
  content_type,
  content_base64: bytes.toString("base64"),
});

describe("relayer: dispute evidence", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let proxy: CountingProxy;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];
  let agent: ListedAgent;
  let payer: Payer;
  let settled: string;

  before(async () => {
    market = await TestMarket.start();
    proxy = await startCountingProxy(market.localnet.rpcUrl);
    // The tests read disputes from one address far faster than any party should; the limit has
    // a relayer of its own below.
    relayer = await startRelayer(market.localnet, { ...ONE_BY_ONE, DEVNET_RPC_URL: proxy.url, RATE_LIMIT_DISPUTE_READS_PER_MINUTE: "1000000" });
    agent = await newAgent();
    payer = await newPayer(market, relayer, 10_000_000n);
    settled = await executed(agent);
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      await relayer?.close();
      await proxy?.close();
    } finally {
      await market?.stop();
    }
  });

  async function newAgent(): Promise<ListedAgent> {
    const listed = await listAgent(market, relayer);
    agents.push(listed);
    return listed;
  }

  async function executed(by: ListedAgent): Promise<string> {
    const response = await execute(relayer, payer, by.address);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.id as string;
    await waitUntil(`${id} is confirmed`, async () => (await executionRow(id)).state === "settled");
    return id;
  }

  async function executionRow(id: string): Promise<{ state: string }> {
    const { rows } = await relayer.services.db.query<{ state: string }>("SELECT state FROM executions WHERE id = $1", [id]);
    return rows[0]!;
  }

  /** The payer's open_dispute of the execution's leaf (found from the chain's receipt log history); its leaf index. */
  async function openDispute(agent: PublicKey, execution: string, evidenceHashHex: string): Promise<bigint> {
    const route = await disputeRoute(market.connection, parseExecutionId(execution)!, { programId: market.programId, source: { kind: "chain", agent } });
    assert.ok(route, `${execution} has a leaf`);
    await market.send(
      [openDisputeFor(route, { payer: payer.wallet.publicKey, evidenceHash: Buffer.from(evidenceHashHex, "hex"), programId: market.programId })],
      [payer.wallet],
    );
    return route.leafIndex;
  }

  /** The arbiter's resolve_dispute of leaf `leafIndex` of `agent`'s log. */
  const resolveInstruction = (agent: PublicKey, leafIndex: bigint, upheld: boolean, slashUsdc: bigint) =>
    resolveDisputeInstruction({
      programId: market.programId,
      arbiter: market.arbiter.publicKey,
      usdcMint: market.usdcMint,
      agent,
      leafIndex,
      payerTokenAccount: payer.tokenAccount,
      upheld,
      slashUsdc,
    });

  async function waitUntil(what: string, done: () => Promise<boolean>, timeout_ms = 20_000): Promise<void> {
    const deadline = Date.now() + timeout_ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(100);
    }
  }

  const submit = (token: string | undefined, body: unknown) => api<Evidence>(relayer, "POST", "/v1/disputes/evidence", { token, body });
  const dispute = (token: string, id: string) => api<DisputeView>(relayer, "GET", `/v1/disputes/${id}`, { token });

  /**
   * The dispute once it shows `state`: a read within a second of another read of the same
   * dispute is answered from that read of its account (DISPUTE_ACCOUNT_MAX_AGE_MS).
   */
  async function disputeShowing(token: string, id: string, state: string) {
    let seen = await dispute(token, id);
    for (const deadline = Date.now() + 5_000; seen.body.state !== state && Date.now() < deadline; seen = await dispute(token, id)) await sleep(100);
    assert.equal(seen.body.state, state, JSON.stringify(seen.body));
    return seen;
  }

  /** The payer's evidence on `execution` of `by`, then its open_dispute; the leaf index and the dispute's address. */
  async function disputed(by: ListedAgent, execution: string): Promise<{ leaf: bigint; address: PublicKey }> {
    const created = await submit(payer.token, { execution_id: execution, statement: `about ${execution}` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const leaf = await openDispute(by.address, execution, created.body.evidence_hash);
    return { leaf, address: disputePda(by.address, leaf, market.programId) };
  }

  /** 25 transactions anyone may send that mention `address` (a few thousand lamports of fees); their signatures. */
  async function junkOn(address: PublicKey): Promise<string[]> {
    const junk = await market.fundedWallet();
    const sink = Keypair.generate().publicKey;
    return Promise.all(
      Array.from({ length: 25 }, (_, i) => {
        const transfer = SystemProgram.transfer({ fromPubkey: junk.publicKey, toPubkey: sink, lamports: 1_000_000 + i });
        transfer.keys.push({ pubkey: address, isSigner: false, isWritable: false });
        return market.send([transfer], [junk]);
      }),
    );
  }

  const outcomeRow = async (id: string) =>
    (await relayer.services.db.query<{ state: string; resolve_signature: string | null }>("SELECT state, resolve_signature FROM dispute_outcomes WHERE execution_id = $1", [id]))
      .rows[0];

  /**
   * Runs `measure` while the dispute watcher is held at its scan, after any pass under way has
   * ended (a pass takes milliseconds), so that the calls counted are the reads' own.
   */
  async function withoutWatcher<T>(measure: () => Promise<T>): Promise<T> {
    const release = proxy.holdScans();
    try {
      await sleep(1_000);
      return await measure();
    } finally {
      release();
    }
  }

  async function submitError(token: string | undefined, body: unknown, status: number, code: string, param?: string): Promise<void> {
    const response = await submit(token, body);
    assert.equal(response.status, status, JSON.stringify(response.body));
    assert.equal(errorCode(response as never), code);
    assert.equal((response.body as unknown as { error: { param?: string } }).error.param, param);
  }

  describe("refuses bad evidence with its exact error", () => {
    // Evidence is taken within the dispute window: an execution settled now, after the clock
    // moves of the tests above.
    before(async () => {
      settled = await executed(agent);
    });
    it("without a session: 401 session_required", async () => {
      await submitError(undefined, { execution_id: settled, statement: "wrong output" }, 401, "session_required");
    });

    it("with an API key: 403 api_key_not_allowed", async () => {
      await submitError(payer.apiKey, { execution_id: settled, statement: "wrong output" }, 403, "api_key_not_allowed");
    });

    it("an unknown execution: 404 resource_not_found", async () => {
      await submitError(payer.token, { execution_id: "exec_1111111111111111111111", statement: "x" }, 404, "resource_not_found", "execution_id");
    });

    it("from a wallet that is neither the payer nor the creator: 403 not_dispute_party", async () => {
      const stranger = await market.fundedWallet();
      await submitError(await signIn(relayer, stranger), { execution_id: settled, statement: "x" }, 403, "not_dispute_party");
    });

    it("an empty statement, or one over 10,000 characters: 400 validation_failed", async () => {
      await submitError(payer.token, { execution_id: settled, statement: "" }, 400, "validation_failed", "statement");
      await submitError(payer.token, { execution_id: settled, statement: "é".repeat(10_001) }, 400, "validation_failed", "statement");
      const exactly = await submit(payer.token, { execution_id: settled, statement: "é".repeat(10_000) });
      assert.equal(exactly.status, 201, "10,000 characters are accepted");
    });

    it("more than 5 attachments: 400 validation_failed", async () => {
      const six = Array.from({ length: 6 }, (_, i) => attachment(`f${i}.txt`, Buffer.from("x")));
      await submitError(payer.token, { execution_id: settled, statement: "x", attachments: six }, 400, "validation_failed", "attachments");
    });

    it("an attachment over 1 MiB once decoded: 413 attachment_too_large", async () => {
      const big = [attachment("small.txt", Buffer.from("ok")), attachment("big.bin", Buffer.alloc(MIB + 1, 1))];
      await submitError(payer.token, { execution_id: settled, statement: "x", attachments: big }, 413, "attachment_too_large", "attachments[1].content_base64");
      const exactly = await submit(payer.token, { execution_id: settled, statement: "x", attachments: [attachment("max.bin", Buffer.alloc(MIB, 2))] });
      assert.equal(exactly.status, 201, "1 MiB exactly is accepted");
    });

    it("a name over 200 characters, a bad content type or bad base64: 400 validation_failed", async () => {
      const long = attachment("n".repeat(201), Buffer.from("x"));
      await submitError(payer.token, { execution_id: settled, statement: "x", attachments: [long] }, 400, "validation_failed", "attachments[0].name");
      const type = attachment("a.txt", Buffer.from("x"), "text");
      await submitError(payer.token, { execution_id: settled, statement: "x", attachments: [type] }, 400, "validation_failed", "attachments[0].content_type");
      const bad = { name: "a.txt", content_type: "text/plain", content_base64: "not base64!" };
      await submitError(payer.token, { execution_id: settled, statement: "x", attachments: [bad] }, 400, "validation_failed", "attachments[0].content_base64");
    });

    it("on an execution that was refunded: 409 execution_not_disputable", async () => {
      agent.server.behaviour = "status_500";
      const failed = await execute(relayer, payer, agent.address);
      agent.server.behaviour = "echo";
      assert.equal(failed.status, 502);
      const id = (failed.body.error as { execution_id: string }).execution_id;
      await waitUntil(`${id} is refunded`, async () => (await executionRow(id)).state === "refunded");
      await submitError(payer.token, { execution_id: id, statement: "x" }, 409, "execution_not_disputable");
    });
  });

  it("keeps the payer's evidence, binds it on chain, and shows the dispute to its parties only", async () => {
    const agent = await newAgent();
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    const id = await executed(agent);
    const log = Buffer.from("the output was empty\n");
    const screenshot = Buffer.alloc(4096, 7);
    const statement = "The agent answered with an empty summary; « rien ».";
    const files = [
      { name: "log.txt", content_type: "text/plain; charset=utf-8", bytes: log },
      { name: "écran.png", content_type: "image/png", bytes: screenshot },
    ];
    const created = await submit(payer.token, {
      execution_id: id,
      statement,
      attachments: files.map((f) => attachment(f.name, f.bytes, f.content_type)),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.role, "payer");
    assert.equal(created.body.execution_id, id);
    assert.match(created.body.evidence_id, /^evd_/);
    assert.equal(created.body.evidence_hash, expectedHash(statement, files));

    // Before open_dispute: the evidence is kept, the dispute does not exist.
    const before = await dispute(payer.token, id);
    assert.equal(before.status, 200);
    assert.equal(before.body.state, "none");
    assert.equal(before.body.evidence[0]!.bound_on_chain, false);

    const leafIndex = await openDispute(agent.address, id, created.body.evidence_hash);
    const answer = await submit(creatorToken, { execution_id: id, statement: "The task asked for nothing to summarize." });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body.role, "creator");

    const arbiterToken = await signIn(relayer, market.arbiter);
    // Read within a second of the read above, the first may be answered from its read of the account.
    await disputeShowing(payer.token, id, "open");
    for (const token of [payer.token, creatorToken, arbiterToken]) {
      const open = await dispute(token, id);
      assert.equal(open.status, 200, JSON.stringify(open.body));
      assert.equal(open.body.state, "open");
      assert.equal(open.body.leaf_index, leafIndex.toString(), "the dispute is its leaf's");
      assert.equal(open.body.amount_usdc, "0.250000");
      assert.equal(open.body.slashed_usdc, null);
      assert.equal(open.body.evidence_hash, created.body.evidence_hash);
      assert.equal(open.body.creator, agent.creator.wallet.publicKey.toBase58());
      assert.deepEqual(
        open.body.evidence.map((e) => [e.role, e.bound_on_chain]),
        [
          ["payer", true],
          ["creator", false],
        ],
      );
      assert.equal(open.body.evidence[0]!.statement, statement);
      assert.deepEqual(open.body.evidence[0]!.attachments, [
        { index: 0, name: "log.txt", content_type: "text/plain; charset=utf-8", size_bytes: log.length, sha256: sha256(log) },
        { index: 1, name: "écran.png", content_type: "image/png", size_bytes: screenshot.length, sha256: sha256(screenshot) },
      ]);
    }
    const stranger = await signIn(relayer, await market.fundedWallet());
    const refused = await dispute(stranger, id);
    assert.equal(refused.status, 403);
    assert.equal(errorCode(refused as never), "not_dispute_party");
    const unknown = await dispute(payer.token, "exec_1111111111111111111111");
    assert.equal(unknown.status, 404);
    assert.equal(errorCode(unknown as never), "resource_not_found");

    // The file as uploaded, as a download that is never sniffed.
    const path = `/v1/disputes/${id}/evidence/${created.body.evidence_id}/attachments/1`;
    const download = await fetch(`${relayer.url}${path}`, { headers: { authorization: `Bearer ${arbiterToken}` } });
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), screenshot);
    assert.equal(download.headers.get("content-type"), "image/png");
    assert.equal(download.headers.get("x-content-type-options"), "nosniff");
    assert.equal(download.headers.get("content-disposition"), `attachment; filename="_cran.png"; filename*=UTF-8''%C3%A9cran.png`);
    const forbidden = await api(relayer, "GET", path, { token: stranger });
    assert.equal(forbidden.status, 403);
    assert.equal(errorCode(forbidden), "not_dispute_party");
    const missing = await api(relayer, "GET", path.replace(/1$/, "2"), { token: payer.token });
    assert.equal(missing.status, 404);
    assert.equal(errorCode(missing), "resource_not_found");
    const anonymous = await api(relayer, "GET", path);
    assert.equal(anonymous.status, 401);
    assert.equal(errorCode(anonymous), "session_required");

    // Lists, by role and state.
    const ids = async (token: string, query: string) =>
      (await api<{ data: { execution_id: string }[] }>(relayer, "GET", `/v1/disputes?${query}`, { token })).body.data.map((d) => d.execution_id);
    assert.ok((await ids(payer.token, "role=payer&state=open")).includes(id));
    assert.ok((await ids(creatorToken, "role=creator")).includes(id));
    assert.ok((await ids(arbiterToken, "role=arbiter&state=open")).includes(id));
    assert.ok(!(await ids(payer.token, "role=payer&state=resolved")).includes(id));
    assert.deepEqual(await ids(payer.token, "role=creator"), [], "the payer created no agent");
    assert.deepEqual(await ids(stranger, "role=arbiter"), [], "a stranger arbitrates nothing");
    const badRole = await api(relayer, "GET", "/v1/disputes?role=judge", { token: payer.token });
    assert.equal(badRole.status, 400);
    assert.equal(errorCode(badRole), "validation_failed");

    // The arbiter upholds it: the slash goes from the collateral to the payer.
    const vaultBefore = await market.usdc(collateralVaultPda(agent.address, market.programId));
    const payerBefore = await market.usdc(payer.tokenAccount);
    await market.send([resolveInstruction(agent.address, leafIndex, true, 1_500_000n)], [market.arbiter]);
    assert.equal(await market.usdc(collateralVaultPda(agent.address, market.programId)), vaultBefore - 1_500_000n);
    assert.equal(await market.usdc(payer.tokenAccount), payerBefore + 1_500_000n);
    const resolved = await disputeShowing(payer.token, id, "upheld");
    assert.equal(resolved.body.slashed_usdc, "1.500000");
    assert.equal(resolved.body.evidence[0]!.bound_on_chain, true);
    assert.ok((await ids(payer.token, "role=payer&state=resolved")).includes(id));
    assert.ok(!(await ids(arbiterToken, "role=arbiter&state=open")).includes(id));

    // Resolved, the Dispute account stays: past the leaf's window the relayer still does not
    // close it (close_dispute only returns the payer's rent); anyone may, and the outcome and the
    // evidence outlive it.
    const address = disputePda(agent.address, leafIndex, market.programId);
    await market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS + 1 });
    await sleep(2 * ONE_SWEEP_MS);
    assert.equal(await market.exists(address), true, "the relayer sent no close_dispute");
    const rentBefore = await market.lamports(payer.wallet.publicKey);
    const closer = await market.fundedWallet();
    await market.send([closeDisputeInstruction({ programId: market.programId, agent: agent.address, leafIndex, payer: payer.wallet.publicKey })], [closer]);
    assert.equal(await market.exists(address), false);
    assert.ok((await market.lamports(payer.wallet.publicKey)) > rentBefore, "the rent went back to the payer");
    const closed = await dispute(payer.token, id);
    assert.deepEqual([closed.body.state, closed.body.slashed_usdc, closed.body.evidence.length], ["upheld", "1.500000", 2]);

    // Nothing can delete an execution that has evidence.
    await assert.rejects(relayer.services.db.query("DELETE FROM executions WHERE id = $1", [id]), /foreign key/);
  });

  it("reports a dispute rejected when the arbiter rejects it, with nothing slashed", async () => {
    const agent = await newAgent();
    const id = await executed(agent);
    const created = await submit(payer.token, { execution_id: id, statement: "too slow" });
    assert.equal(created.status, 201);
    const leafIndex = await openDispute(agent.address, id, created.body.evidence_hash);
    const vaultBefore = await market.usdc(collateralVaultPda(agent.address, market.programId));
    await market.send([resolveInstruction(agent.address, leafIndex, false, 0n)], [market.arbiter]);
    assert.equal(await market.usdc(collateralVaultPda(agent.address, market.programId)), vaultBefore);
    // Resolved before the relayer ever saw it open: the outcome comes from the account.
    const rejected = await dispute(payer.token, id);
    assert.equal(rejected.body.state, "rejected");
    assert.equal(rejected.body.slashed_usdc, "0.000000");
    assert.equal(rejected.body.evidence[0]!.bound_on_chain, true);
  });
  // GET /v1/disputes/:execution_id: for the execution's payer, its agent's creator and the
  // market's arbiter. It costs the marketplace no RPC call once the outcome is recorded, else one
  // getAccountInfo of the Dispute account (shared by the reads of a second), never the address's
  // history; a caller calling it a thousand times gains the same answer and 429s.
  it("answers a dispute's outcome from its own account: not another dispute's resolution naming its address, nor 25 junk transactions on it", async () => {
    const agent = await newAgent();
    const id = await executed(agent);
    const other = await executed(agent);
    const { leaf, address } = await disputed(agent, id);
    const { leaf: otherLeaf } = await disputed(agent, other);
    const payerBefore = await market.usdc(payer.tokenAccount);
    const resolveSignature = await market.send([resolveInstruction(agent.address, leaf, false, 0n)], [market.arbiter]);
    assert.equal(await market.usdc(payer.tokenAccount), payerBefore, "a rejected dispute moves nothing");
    // The other dispute's resolution (upheld, 0.7 USDC) mentions this dispute's address, after its own.
    const misleading = resolveInstruction(agent.address, otherLeaf, true, 700_000n);
    misleading.keys.push({ pubkey: address, isSigner: false, isWritable: false });
    await market.send([misleading], [market.arbiter]);
    const account = (await fetchDispute(market.connection, address, { commitment: "confirmed", programId: market.programId }))!;
    const seen = await dispute(payer.token, id);
    assert.equal(seen.status, 200, JSON.stringify(seen.body));
    assert.equal(seen.body.state, "rejected", "its own resolution, not the other dispute's");
    assert.equal(seen.body.slashed_usdc, "0.000000");
    assert.equal((seen.body as unknown as { resolved_at: string }).resolved_at, new Date(Number(account.resolvedAt) * 1000).toISOString());

    // The watcher's one look among the address's newest transactions passes the other's resolution.
    await waitUntil("the watcher found the resolving transaction", async () => (await outcomeRow(id))?.resolve_signature != null, 30_000);
    assert.equal((await outcomeRow(id))!.resolve_signature, resolveSignature);

    // Anyone may send transactions that mention the dispute's address: the answer stays, at no RPC call.
    const junk = await junkOn(address);
    const from = proxy.calls.length;
    const after = await dispute(payer.token, id);
    assert.deepEqual(after.body, { ...seen.body, resolve_transaction: resolveSignature });
    assert.deepEqual(proxy.about(from, [address.toBase58(), resolveSignature, ...junk]), []);
    const theOther = await dispute(payer.token, other);
    assert.equal(theOther.body.state, "upheld");
    assert.equal(theOther.body.slashed_usdc, "0.700000");
  });

  it("reads a resolved dispute it has not recorded with one getAccountInfo, whether 0 or 25 junk transactions follow its resolution, and answers the same", async () => {
    const agent = await newAgent();
    const quiet = await executed(agent);
    const padded = await executed(agent);
    const quietDispute = await disputed(agent, quiet);
    const paddedDispute = await disputed(agent, padded);
    const { resolveSignature, junk, reads, watchedFrom } = await withoutWatcher(async () => {
      // One transaction resolves both: the same outcome and time.
      const resolveSignature = await market.send(
        [resolveInstruction(agent.address, quietDispute.leaf, true, 400_000n), resolveInstruction(agent.address, paddedDispute.leaf, true, 400_000n)],
        [market.arbiter],
      );
      const junk = await junkOn(paddedDispute.address);
      const reads = [];
      for (const [id, { address }] of [[quiet, quietDispute], [padded, paddedDispute]] as const) {
        const from = proxy.calls.length;
        const read = await dispute(payer.token, id);
        assert.equal(read.status, 200, JSON.stringify(read.body));
        reads.push({ read: read.body as unknown as Record<string, unknown>, calls: proxy.about(from, [address.toBase58(), resolveSignature, ...junk]) });
      }
      // What the watcher asks once released.
      return { resolveSignature, junk, reads, watchedFrom: proxy.calls.length };
    });
    assert.deepEqual(reads.map((r) => r.calls), [["getAccountInfo"], ["getAccountInfo"]], "the same one read of the account, junk or not");
    const outcome = (r: Record<string, unknown>) => [r.state, r.amount_usdc, r.slashed_usdc, r.resolved_at, r.resolve_transaction];
    assert.deepEqual(outcome(reads[1]!.read), outcome(reads[0]!.read));
    assert.deepEqual(outcome(reads[0]!.read).slice(0, 3), ["upheld", "0.250000", "0.400000"]);

    // The watcher, once back, looks once for each resolving transaction: among the quiet address's
    // newest it is; the junk hides it on the padded one, whose outcome stays the account's. Each
    // look: one getSignaturesForAddress, at most RESOLUTION_TRANSACTIONS getTransaction.
    await waitUntil(
      "the watcher looked at both",
      async () => (await outcomeRow(quiet))?.resolve_signature != null && proxy.about(watchedFrom, junk).length > 0,
      30_000,
    );
    await sleep(ONE_SWEEP_MS);
    assert.equal((await outcomeRow(quiet))!.resolve_signature, resolveSignature);
    assert.deepEqual(await outcomeRow(padded), { state: "upheld", resolve_signature: null });
    assert.deepEqual(proxy.about(watchedFrom, [paddedDispute.address.toBase58()]), ["getSignaturesForAddress"]);
    assert.ok(proxy.about(watchedFrom, junk).length <= RESOLUTION_TRANSACTIONS, "a bounded look");
  });

  it("answers a recorded outcome with no RPC call about the dispute, however often its parties read it", async () => {
    const agent = await newAgent();
    const id = await executed(agent);
    const { leaf, address } = await disputed(agent, id);
    await market.send([resolveInstruction(agent.address, leaf, true, 250_000n)], [market.arbiter]);
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    const arbiterToken = await signIn(relayer, market.arbiter);
    const recorded = await dispute(payer.token, id);
    assert.equal(recorded.body.state, "upheld");
    const reads = await withoutWatcher(async () => {
      const from = proxy.calls.length;
      const answers = [];
      for (let i = 0; i < 10; i += 1) for (const token of [payer.token, creatorToken, arbiterToken]) answers.push((await dispute(token, id)).body);
      return { answers, calls: proxy.about(from, [address.toBase58()]) };
    });
    assert.deepEqual(reads.calls, []);
    for (const answer of reads.answers) assert.deepEqual(answer, recorded.body);
  });

  it("limits each party's dispute reads: past RATE_LIMIT_DISPUTE_READS_PER_MINUTE, 429 rate_limited with Retry-After, answered before any RPC call", async () => {
    // A relayer of the same deployment (the database), counting its own requests (its queue),
    // with 5 reads a minute. A thousand reads in a row get 5 answers and 995 refusals.
    const limited = await startRelayerWith(
      { ...relayer.env, QUEUE_NAME: `${relayer.env.QUEUE_NAME}-limited`, RATE_LIMIT_DISPUTE_READS_PER_MINUTE: "5" },
      { dropDatabase: false },
    );
    try {
      const agent = await newAgent();
      const id = await executed(agent);
      const { leaf, address } = await disputed(agent, id);
      await market.send([resolveInstruction(agent.address, leaf, false, 0n)], [market.arbiter]);
      const from = proxy.calls.length;
      const answers = [];
      for (let i = 0; i < 1000; i += 1) answers.push(await api(limited, "GET", `/v1/disputes/${id}`, { token: payer.token }));
      assert.deepEqual(answers.slice(0, 5).map((a) => a.status), [200, 200, 200, 200, 200]);
      assert.deepEqual(new Set(answers.slice(5).map((a) => a.status)), new Set([429]));
      for (const refused of [answers[5]!, answers[999]!, await api(limited, "GET", "/v1/disputes?role=payer", { token: payer.token })]) {
        assert.equal(refused.status, 429);
        assert.equal(errorCode(refused), "rate_limited");
        const retryAfter = Number(refused.headers.get("retry-after"));
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get("retry-after")}`);
      }
      assert.ok(proxy.about(from, [address.toBase58()]).filter((method) => method === "getAccountInfo").length <= 1, "one read of the account at most");
    } finally {
      await limited.close();
    }
  });
  it("sends dispute.opened and dispute.resolved, once each, of a dispute opened and resolved on chain that no one reads through the relayer", async () => {
    const receiver = new Receiver();
    await receiver.start();
    try {
      const hook = await api<{ secret: string }>(relayer, "POST", "/v1/webhooks", {
        token: payer.token,
        body: { url: receiver.url, events: ["dispute.opened", "dispute.resolved"] },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      receiver.secrets.push(hook.body.secret);
      const agent = await newAgent();
      const id = await executed(agent);
      const of = (type: string) => receiver.events.filter((e) => e.type === type && (e.data as unknown as { execution_id: string }).execution_id === id);
      const leafIndex = await openDispute(agent.address, id, randomBytes(32).toString("hex"));
      // The sweep reads the open disputes every DISPUTE_WATCH_INTERVAL_MS (10 s).
      await until("dispute.opened", () => of("dispute.opened").length > 0, 40_000);
      const resolveSignature = await market.send([resolveInstruction(agent.address, leafIndex, false, 0n)], [market.arbiter]);
      // Resolution keeps the account (resolved): the sweep reads the disputes it recorded open, and
      // looks once among the address's newest transactions for the resolving one.
      await until("dispute.resolved", () => of("dispute.resolved").length > 0, 40_000);
      await sleep(12_000);
      assert.equal(of("dispute.opened").length, 1);
      assert.equal(of("dispute.resolved").length, 1);
      assert.equal((of("dispute.resolved")[0]!.data as unknown as { resolve_transaction: string }).resolve_transaction, resolveSignature);
    } finally {
      await receiver.stop();
    }
  });
});
