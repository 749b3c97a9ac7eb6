// Disputes of executions settled into the agent's receipt log, against a real localnet, indexer
// and a relayer settling by settle_batch (every settlement a leaf of the receipt log): the CLI,
// the dashboard's data layer and its dispute panel in a browser each open one with open_dispute
// of the leaf, keyed by (agent, leaf index), with the proof the indexer's public GraphQL serves
// or, without an indexer, the one rebuilt from the chain's receipt log history; a proof tampered
// with on its way is refused by the program; the receipt check reads the batch and checks the
// proof against the log on chain.
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { WalletSession, type Execution } from "@agent-market/client";
import { verifyReceipt } from "@agent-market/client/verify";
import * as program from "@agent-market/program";
import {
  errorCode,
  errorFromCode,
  evidenceHash,
  fetchDisputesOfExecution,
  fetchLoggedReceipt,
  fetchMarket,
  formatExecutionId,
  parseExecutionId,
  receiptLogPda,
  toHex,
  verifyLoggedReceipt,
} from "@agent-market/program";
import * as web3 from "@solana/web3.js";
import { Keypair, Transaction } from "@solana/web3.js";

import { DISPUTE_WINDOW_SECS } from "@agent-market/tests/fixtures";
import { REPO_ROOT } from "@agent-market/tests/localnet";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "@agent-market/tests/marketplace";
import { api } from "@agent-market/tests/relayer";
import { run } from "@agent-market/tests/run";

import type { Chain } from "../src/data/chain.js";
import { disputeWindow, openDispute, submitEvidence } from "../src/data/disputes.js";
import type { ConnectedWallet } from "../src/wallet/wallet.js";
import { signInWithTestWallet } from "./browser.js";
import { waitFor, type Stack } from "./stack.js";
import { dashboardSuite } from "./suite.js";

const CLI = join(REPO_ROOT, "sdk", "cli", "dist", "main.js");

/** The wallet as the dashboard's data layer sees it, signing with the keypair itself. */
function keypairWallet(keypair: Keypair, connection: web3.Connection): ConnectedWallet {
  return {
    name: "test keypair",
    icon: null,
    local: true,
    address: keypair.publicKey.toBase58(),
    signMessage: () => Promise.reject(new Error("not needed")),
    async signAndSend(bytes) {
      const transaction = Transaction.from(bytes);
      transaction.partialSign(keypair);
      const signature = await connection.sendRawTransaction(transaction.serialize());
      await connection.confirmTransaction(signature, "confirmed");
      return signature;
    },
    disconnect: () => Promise.resolve(),
  };
}

/** An indexer in front of the real one that flips a bit of every receipt proof's first hash. */
async function tamperingIndexer(graphqlUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      void (async () => {
        const upstream = await fetch(graphqlUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
        const answer = (await upstream.json()) as { data?: { execution?: { receiptProof?: { proof: string[] } | null } | null } };
        const proof = answer.data?.execution?.receiptProof?.proof;
        if (proof) proof[0] = proof[0]!.slice(0, -1) + (proof[0]!.endsWith("0") ? "1" : "0");
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/graphql`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("disputes of executions settled into the receipt log", function () {
  this.timeout(300_000);
  const suite = dashboardSuite({ dashboard: () => ({ DASHBOARD_LOCALNET: "true" }) });
  let stack: Stack;
  let dir: string;
  let agent: ListedAgent;
  let payer: Payer;

  before(async () => {
    stack = suite.stack;
    dir = mkdtempSync(join(tmpdir(), "log-disputes-"));
    agent = await listAgent(stack.market, stack.relayer);
    suite.defer(() => agent.server.close());
    payer = await newPayer(stack.market, stack.relayer, 10_000_000n);
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A call the relayer runs and settles by settle_batch, once the indexer serves its receipt proof. */
  async function settledToLog(who: Payer = payer): Promise<string> {
    const ran = await execute(stack.relayer, who, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const id = (ran.body as { id: string }).id;
    await waitFor(`${id}'s receipt proof in the indexer`, async () => (await fetchLoggedReceipt(stack.graphqlUrl, id)) !== null);
    return id;
  }

  async function chainFor(graphqlUrl: string): Promise<Chain> {
    const connection = new web3.Connection(stack.market.localnet.rpcUrl, "confirmed");
    const market = (await fetchMarket(connection, undefined, { programId: stack.market.programId }))!;
    return { program, web3, connection, rpcUrl: stack.market.localnet.rpcUrl, network: "devnet", programId: stack.market.programId, market, localnet: true, graphqlUrl };
  }

  function agentMarket(home: string, args: string[]) {
    return run(process.execPath, [CLI, ...args, "--json"], {
      env: { ...process.env, AGENT_MARKET_HOME: home, AGENT_MARKET_API_URL: stack.relayer.url, AGENT_MARKET_RPC_URL: stack.market.localnet.rpcUrl },
    });
  }

  async function payerHome(): Promise<string> {
    const home = mkdtempSync(join(dir, "home-"));
    const keyFile = join(home, "payer.json");
    writeFileSync(keyFile, JSON.stringify(Array.from(payer.wallet.secretKey)));
    const login = await agentMarket(home, ["login", "--keypair", keyFile, "--api", stack.relayer.url]);
    assert.equal(login.code, 0, login.stderr);
    return home;
  }

  /** The Dispute accounts of the execution's leaves, found by its execution id. */
  const disputesOf = (bytes: Uint8Array) => fetchDisputesOfExecution(stack.market.connection, bytes, { programId: stack.market.programId });

  const errorOf = (stdout: string) => (JSON.parse(stdout) as { error: { message: string } }).error.message;

  it("the CLI opens a dispute from the log with the proof of the indexer the relayer names", async () => {
    const home = await payerHome();
    const id = await settledToLog();
    const bytes = parseExecutionId(id)!;
    const opened = await agentMarket(home, ["dispute", "open", id, "--statement", "The summary was empty."]);
    assert.equal(opened.code, 0, `${opened.stdout}\n${opened.stderr}`);
    const created = JSON.parse(opened.stdout) as { evidence_hash: string; transaction: string };
    const [found] = await disputesOf(bytes);
    assert.ok(found, "the Dispute account exists");
    const dispute = found.dispute;
    assert.equal(toHex(dispute.evidenceHash), created.evidence_hash);
    assert.equal(dispute.payer.toBase58(), payer.wallet.publicKey.toBase58());

    const twice = await agentMarket(home, ["dispute", "open", id, "--statement", "Again."]);
    assert.equal(twice.code, 1);
    assert.equal(errorOf(twice.stdout), `${id} (leaf ${dispute.leafIndex}) is disputed already`);
  });

  it("the CLI says there is nothing to dispute when no leaf of the execution exists", async () => {
    const home = await payerHome();
    const id = formatExecutionId(new Uint8Array(16).fill(7));
    const ran = await agentMarket(home, ["dispute", "open", id, "--statement", "Nothing."]);
    assert.equal(ran.code, 1);
    assert.equal(errorOf(ran.stdout), `the indexer knows no settlement of ${id}`);
  });

  it("the dashboard's data layer opens a dispute from the log: the window from the leaf, the evidence kept, open_dispute signed", async () => {
    const id = await settledToLog();
    const bytes = parseExecutionId(id)!;
    const chain = await chainFor(stack.graphqlUrl);
    const logged = (await fetchLoggedReceipt(stack.graphqlUrl, id))!;
    const window = await disputeWindow(chain, id, agent.address.toBase58());
    assert.deepEqual(
      { receiptExists: window.receiptExists, disputed: window.disputed, endsAtSecs: window.endsAtSecs },
      { receiptExists: true, disputed: false, endsAtSecs: Number(logged.receiptProof.leaf.settledAt) + DISPUTE_WINDOW_SECS },
    );
    const session = await WalletSession.resume(stack.relayer.url, payer.token);
    const evidence = await submitEvidence(session, id, "The output was cut short.", []);
    await openDispute(chain, keypairWallet(payer.wallet, chain.connection), id, agent.address.toBase58(), evidence.evidence_hash);
    const [found] = await disputesOf(bytes);
    assert.ok(found, "the Dispute account exists");
    assert.equal(found.dispute.leafIndex.toString(), logged.receiptProof.leafIndex, "keyed by the leaf");
    assert.equal(toHex(found.dispute.evidenceHash), evidence.evidence_hash);
    assert.equal((await disputeWindow(chain, id, agent.address.toBase58())).disputed, true, "the leaf's dispute account exists");
  });

  it("the dashboard's data layer disputes without an indexer: the leaf and proof rebuilt from the chain's receipt log history", async () => {
    const fixture = await stack.market.agent();
    const wallet = await stack.market.payer(10_000_000n);
    const escrow = await stack.market.openEscrow(fixture, wallet);
    await stack.market.settle(escrow, fixture);
    const id = formatExecutionId(escrow.executionId);
    const chain = { ...(await chainFor(stack.graphqlUrl)), graphqlUrl: null };
    assert.equal((await disputeWindow(chain, id, fixture.address.toBase58())).receiptExists, true);
    await openDispute(chain, keypairWallet(wallet.wallet, chain.connection), id, fixture.address.toBase58(), "cd".repeat(32));
    const [found] = await disputesOf(escrow.executionId);
    assert.equal(toHex(found!.dispute.evidenceHash), "cd".repeat(32));
  });

  it("refuses a tampered proof with the program's UnknownReceiptRoot, and the chain check tells it from the real one", async () => {
    const id = await settledToLog();
    const tampering = await tamperingIndexer(stack.graphqlUrl);
    try {
      const chain = await chainFor(tampering.url);
      const refused = errorFromCode(errorCode("UnknownReceiptRoot"))!;
      await assert.rejects(openDispute(chain, keypairWallet(payer.wallet, chain.connection), id, agent.address.toBase58(), "ab".repeat(32)), {
        message: `The program refused: ${refused.msg} (UnknownReceiptRoot).`,
      });
      assert.deepEqual(await disputesOf(parseExecutionId(id)!), [], "no dispute opened");

      const real = (await fetchLoggedReceipt(stack.graphqlUrl, id))!;
      const genuine = await verifyLoggedReceipt(stack.market.connection, real, { programId: stack.market.programId });
      assert.equal(genuine.ok, true, genuine.detail);
      assert.equal(genuine.leafHash, real.receiptProof.leafHash);
      assert.equal(genuine.root, real.receiptProof.root);
      const check = await verifyLoggedReceipt(stack.market.connection, (await fetchLoggedReceipt(tampering.url, id))!, { programId: stack.market.programId });
      assert.equal(check.ok, false);
      assert.equal(check.detail, `the proof leads to root ${check.root}, which the receipt log ${receiptLogPda(agent.address, stack.market.programId).toBase58()} does not hold`);
    } finally {
      await tampering.close();
    }
  });

  it("verifyReceipt checks the relayer's receipt of a batched settlement against its batch, and with the indexer its proof against the log", async () => {
    const id = await settledToLog();
    const execution = (await api<Execution>(stack.relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey })).body;
    const verified = await verifyReceipt(execution, { connection: stack.market.connection, programId: stack.market.programId, indexerUrl: stack.graphqlUrl });
    assert.deepEqual(verified.checks.filter((check) => !check.ok), []);
    assert.deepEqual(
      verified.checks.map((check) => check.name),
      ["receipt", "execution_id", "agent", "result_hash", "protocol_version", "digest", "creator_signature", "settlement_transaction", "settle_instruction", "settle_position", "settle_arguments", "ed25519_instruction", "escrow_settled_event", "creator_payout", "marketplace_fee", "receipt_log", "on_chain_signing_key"],
    );

    const tampering = await tamperingIndexer(stack.graphqlUrl);
    try {
      const forged = await verifyReceipt(execution, { connection: stack.market.connection, programId: stack.market.programId, indexerUrl: tampering.url });
      const failed = forged.checks.filter((check) => !check.ok);
      assert.deepEqual(failed.map((check) => check.name), ["receipt_log"]);
      assert.match(failed[0]!.detail, /^the proof leads to root [0-9a-f]{64}, which the receipt log \w+ does not hold$/);
    } finally {
      await tampering.close();
    }
  });

  it("the payer disputes a batched settlement from the execution's panel in the browser", async () => {
    const own = await newPayer(stack.market, stack.relayer, 10_000_000n);
    const id = await settledToLog(own);
    const dashboard = await suite.open(own.wallet);
    await signInWithTestWallet(dashboard);
    const { page } = dashboard;
    await page.getByRole("link", { name: "Executions" }).click();
    await page.getByRole("button", { name: "Details" }).first().click();
    await page.getByTestId("countdown").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("countdown").textContent())!, /^2d 23h 5\dm \d+s left/, "the window counted from the leaf's settled_at");
    const statement = "The summary came back in French; I asked for English.";
    await page.getByLabel("Statement").fill(statement);
    await page.getByRole("button", { name: "Sign and open the dispute" }).click();
    await page.getByTestId("dispute-opened").waitFor({ timeout: 60_000 });
    await page.getByTestId("dispute-state").filter({ hasText: "open: waiting for the arbiter" }).waitFor();
    const [found] = await disputesOf(parseExecutionId(id)!);
    assert.ok(found, "open_dispute created the dispute account");
    assert.equal(toHex(found.dispute.evidenceHash), toHex(evidenceHash(statement, [])));
  });

  // Last: it moves the chain's clock past every window.
  it("closes the window at the leaf's settled_at plus the market's window: the relayer keeps no more evidence, the CLI signs nothing", async () => {
    const id = await settledToLog();
    const settledAt = Number((await fetchLoggedReceipt(stack.graphqlUrl, id))!.receiptProof.leaf.settledAt);
    const within = await api(stack.relayer, "POST", "/v1/disputes/evidence", { token: payer.token, body: { execution_id: id, statement: "Still in time." } });
    assert.equal(within.status, 201, JSON.stringify(within.body));
    await stack.market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS + 1 });
    const late = await api<{ error: { code: string; message: string } }>(stack.relayer, "POST", "/v1/disputes/evidence", {
      token: payer.token,
      body: { execution_id: id, statement: "Too late." },
    });
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.deepEqual(late.body.error.code, "dispute_window_closed");
    assert.equal(late.body.error.message, `${id}'s dispute window closed at ${new Date((settledAt + DISPUTE_WINDOW_SECS) * 1000).toISOString()} (chain time).`);
    const ran = await agentMarket(await payerHome(), ["dispute", "open", id, "--statement", "Too late."]);
    assert.equal(ran.code, 1);
    assert.match(errorOf(ran.stdout), new RegExp(`^the dispute window of ${id} closed \\d+s ago$`));
  });
});
