// Disputes of executions settled into the agent's receipt log (settle_batch: no receipt account),
// against a real localnet, indexer and relayer: the CLI and the dashboard's data layer each open
// one with open_dispute_from_log and the proof the indexer's public GraphQL serves; a proof
// tampered with on its way is refused by the program; a served proof is checked against the log
// on chain; an execution settled by `settle` still goes through open_dispute.
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { formatUsdc, WalletSession, type Execution } from "@agent-market/client";
import { verifyReceipt } from "@agent-market/client/verify";
import * as program from "@agent-market/program";
import {
  disputePda,
  ed25519Sign,
  errorCode,
  errorFromCode,
  fetchDispute,
  fetchLoggedReceipt,
  fetchMarket,
  fetchReceipt,
  formatExecutionId,
  outputHash,
  parseExecutionId,
  PROGRAM_ID,
  receiptPda,
  resultDigest,
  toHex,
  verifyLoggedReceipt,
  type LoggedReceipt,
} from "@agent-market/program";
import * as web3 from "@solana/web3.js";
import { Keypair, Transaction } from "@solana/web3.js";

import type { Chain } from "../src/data/chain.js";
import { disputeWindow, openDispute, submitEvidence } from "../src/data/disputes.js";
import type { ConnectedWallet } from "../src/wallet/wallet.js";
import { DISPUTE_WINDOW_SECS, type AgentFixture } from "../../tests/src/fixtures.js";
import { REPO_ROOT } from "../../tests/src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "../../tests/src/marketplace.js";
import { api } from "../../tests/src/relayer.js";
import { run } from "../../tests/src/run.js";
import { settleToLog, withReceiptLog } from "./log-settlement.js";
import { startStack, type Stack } from "./stack.js";

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
        if (proof) proof[0] = (proof[0]!.slice(0, -1) + (proof[0]!.endsWith("0") ? "1" : "0"));
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
  let stack: Stack;
  let dir: string;
  let agent: ListedAgent;
  let fixture: AgentFixture;
  let payer: Payer;
  /** An execution the relayer ran and settled by `settle`: its row is the template of the others. */
  let viaSettle: string;

  before(async () => {
    stack = await startStack();
    dir = mkdtempSync(join(tmpdir(), "log-disputes-"));
    agent = await listAgent(stack.market, stack.relayer);
    payer = await newPayer(stack.market, stack.relayer, 10_000_000n);
    const ran = await execute(stack.relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    viaSettle = (ran.body as { id: string }).id;
    fixture = await withReceiptLog(stack, agent);
  });
  after(async () => {
    await agent?.server.close();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function settledToLog(): Promise<string> {
    return (await settleToLog(stack, fixture, payer, viaSettle)).id;
  }

  async function chainFor(graphqlUrl: string): Promise<Chain> {
    const connection = new web3.Connection(stack.market.localnet.rpcUrl, "confirmed");
    const market = (await fetchMarket(connection))!;
    return { program, web3, connection, rpcUrl: stack.market.localnet.rpcUrl, network: "devnet", programId: PROGRAM_ID, market, localnet: true, graphqlUrl };
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

  it("the CLI opens a dispute from the log with the indexer's proof, and one by open_dispute for a settled receipt", async () => {
    const home = await payerHome();
    const id = await settledToLog();
    const bytes = parseExecutionId(id)!;
    assert.equal(await fetchReceipt(stack.market.connection, receiptPda(bytes)), null, "settle_batch wrote no receipt");
    const opened = await agentMarket(home, ["dispute", "open", id, "--statement", "The summary was empty."]);
    assert.equal(opened.code, 0, `${opened.stdout}\n${opened.stderr}`);
    const created = JSON.parse(opened.stdout) as { evidence_hash: string; transaction: string };
    const dispute = await fetchDispute(stack.market.connection, disputePda(bytes));
    assert.ok(dispute, "the Dispute account exists");
    assert.equal(toHex(dispute.evidenceHash), created.evidence_hash);
    assert.equal(dispute.payer.toBase58(), payer.wallet.publicKey.toBase58());
    const written = await fetchReceipt(stack.market.connection, receiptPda(bytes));
    assert.equal(written?.disputed, true, "open_dispute_from_log wrote the receipt, marked disputed");

    const twice = await agentMarket(home, ["dispute", "open", id, "--statement", "Again."]);
    assert.equal(twice.code, 1);
    assert.equal((JSON.parse(twice.stdout) as { error: { message: string } }).error.message, `${id} is disputed already`);

    const old = await agentMarket(home, ["dispute", "open", viaSettle, "--statement", "Wrong language."]);
    assert.equal(old.code, 0, `${old.stdout}\n${old.stderr}`);
    assert.ok(await fetchDispute(stack.market.connection, disputePda(parseExecutionId(viaSettle)!)), "open_dispute on the receipt");
  });

  it("the CLI says there is nothing to dispute when neither a receipt nor a leaf exists", async () => {
    const home = await payerHome();
    const id = formatExecutionId(new Uint8Array(16).fill(7));
    const ran = await agentMarket(home, ["dispute", "open", id, "--statement", "Nothing."]);
    assert.equal(ran.code, 1);
    assert.equal(
      (JSON.parse(ran.stdout) as { error: { message: string } }).error.message,
      `${id} has no receipt on chain: it never settled, or its dispute window passed and the receipt was closed`,
    );
  });

  it("the dashboard's data layer opens a dispute from the log: the window from the leaf, the evidence kept, open_dispute_from_log signed", async () => {
    const id = await settledToLog();
    const bytes = parseExecutionId(id)!;
    const chain = await chainFor(stack.graphqlUrl);
    const logged = (await fetchLoggedReceipt(stack.graphqlUrl, id))!;
    const window = await disputeWindow(chain, id);
    assert.deepEqual(
      { receiptExists: window.receiptExists, disputed: window.disputed, endsAtSecs: window.endsAtSecs },
      { receiptExists: true, disputed: false, endsAtSecs: Number(logged.receiptProof.leaf.settledAt) + DISPUTE_WINDOW_SECS },
    );
    const session = await WalletSession.resume(stack.relayer.url, payer.token);
    const evidence = await submitEvidence(session, id, "The output was cut short.", []);
    const signature = await openDispute(chain, keypairWallet(payer.wallet, chain.connection), id, evidence.evidence_hash);
    assert.match(signature, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    const dispute = await fetchDispute(stack.market.connection, disputePda(bytes));
    assert.ok(dispute, "the Dispute account exists");
    assert.equal(toHex(dispute.evidenceHash), evidence.evidence_hash);
    assert.equal((await disputeWindow(chain, id)).disputed, true, "the receipt it wrote says disputed");
  });

  it("refuses a tampered proof with the program's UnknownReceiptRoot, and the chain check tells it from the real one", async () => {
    const id = await settledToLog();
    const tampering = await tamperingIndexer(stack.graphqlUrl);
    try {
      const chain = await chainFor(tampering.url);
      const refused = errorFromCode(errorCode("UnknownReceiptRoot"))!;
      await assert.rejects(openDispute(chain, keypairWallet(payer.wallet, chain.connection), id, "ab".repeat(32)), {
        message: `The program refused: ${refused.msg} (UnknownReceiptRoot).`,
      });
      assert.equal(await stack.market.exists(disputePda(parseExecutionId(id)!)), false, "no dispute opened");

      const real = (await fetchLoggedReceipt(stack.graphqlUrl, id))!;
      const genuine = await verifyLoggedReceipt(stack.market.connection, real);
      assert.equal(genuine.ok, true, genuine.detail);
      assert.equal(genuine.leafHash, real.receiptProof.leafHash);
      assert.equal(genuine.root, real.receiptProof.root);
      const forged: LoggedReceipt = (await fetchLoggedReceipt(tampering.url, id))!;
      const check = await verifyLoggedReceipt(stack.market.connection, forged);
      assert.equal(check.ok, false);
      assert.equal(check.detail, `the proof leads to root ${check.root}, which the receipt log ${program.receiptLogPda(agent.address).toBase58()} does not hold`);
    } finally {
      await tampering.close();
    }
  });

  it("verifyReceipt checks a batched settlement against its batch, and with the indexer its leaf and proof against the log on chain", async () => {
    const { id, escrow, batch } = await settleToLog(stack, fixture, payer, viaSettle);
    const event = batch.events[0]!;
    // The receipt the creator signed call by call; settleBatch signed these results as a batch.
    const output = { summary: "Hi, 0." };
    const digest = resultDigest(escrow.executionId, agent.address, escrow.requestHash, outputHash(output));
    const template = (await api<Execution>(stack.relayer, "GET", `/v1/executions/${viaSettle}`, { token: payer.apiKey })).body;
    const execution: Execution = {
      ...template,
      id,
      output,
      receipt: {
        execution_id: id,
        agent: agent.address.toBase58(),
        request_hash: toHex(escrow.requestHash),
        result_hash: toHex(outputHash(output)),
        digest: toHex(digest),
        creator_signature: toHex(ed25519Sign(agent.server.signing.secretKey, digest)),
        creator_public_key: agent.server.signing.publicKey.toBase58(),
      },
      charge: { ...template.charge, amount_usdc: formatUsdc(event.amountUsdc), creator_share_usdc: formatUsdc(event.creatorShareUsdc), fee_usdc: formatUsdc(event.feeUsdc) },
      transactions: { ...template.transactions, settlement: batch.signature },
    };
    const verified = await verifyReceipt(execution, { connection: stack.market.connection, indexerUrl: stack.graphqlUrl });
    assert.deepEqual(verified.checks.filter((check) => !check.ok), []);
    assert.deepEqual(
      verified.checks.map((check) => check.name),
      ["receipt", "execution_id", "agent", "result_hash", "digest", "creator_signature", "settlement_transaction", "settle_instruction", "settle_arguments", "ed25519_instruction", "escrow_settled_event", "creator_payout", "marketplace_fee", "receipt_log", "on_chain_signing_key"],
    );

    const tampering = await tamperingIndexer(stack.graphqlUrl);
    try {
      const forged = await verifyReceipt(execution, { connection: stack.market.connection, indexerUrl: tampering.url });
      const failed = forged.checks.filter((check) => !check.ok);
      assert.deepEqual(failed.map((check) => check.name), ["receipt_log"]);
      assert.match(failed[0]!.detail, /^the proof leads to root [0-9a-f]{64}, which the receipt log \w+ does not hold$/);
    } finally {
      await tampering.close();
    }
  });
});
