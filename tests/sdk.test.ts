// The SDK end to end: the echo example agent as its own process, registered and listed with the
// agent-market CLI (a child process, as a creator runs it), a consumer who signs in, creates a
// key and approves the allowance with the CLI, then runs the agent with @agent-market/client and
// verifies the receipt against the chain. localnet, the relayer on PostgreSQL and Redis.
import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { AgentMarket, callPriceUsdc, ConflictError, PaymentRequiredError, WalletSession, type Execution } from "@agent-market/client";
import { verifyReceipt } from "@agent-market/client/verify";
import { agentPda, delegatePda, ed25519Sign, formatUsdc, PROGRAM_ID, splitPayment } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { getAccount } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";

import { MIN_COLLATERAL_USDC, randomId, TestMarket, USDC, type Wallet } from "./src/fixtures.js";
import { REPO_ROOT, sleep } from "./src/localnet.js";
import { ONE_BY_ONE, startRelayer, type RunningRelayer } from "./src/relayer.js";
import { run, type Run } from "./src/run.js";

const CLI = join(REPO_ROOT, "sdk", "cli", "dist", "main.js");
const ECHO = join(REPO_ROOT, "sdk", "examples", "dist", "echo.js");
const PRICE_USDC = 250_000n;


/** Runs `node <file> ...args` to its end. */
function node(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return run(process.execPath, [file, ...args], { env: { ...process.env, ...env } });
}

function writeKeypairFile(dir: string, name: string, keypair: Keypair): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(Array.from(keypair.secretKey)));
  return path;
}

/** Starts the echo example agent, answering for `agent`, and reads the JSON line it prints once listening. */
async function startEcho(keyFile: string, marketplaceKey: string, agent: string): Promise<{ child: ChildProcess; url: string; signing_key: string }> {
  const child = spawn(process.execPath, [ECHO, "--key", keyFile, "--marketplace-key", marketplaceKey, "--agent", agent, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the echo agent exited with ${code}`)));
  });
  lines.close();
  const ready = JSON.parse(first) as { url: string; signing_key: string };
  return { child, ...ready };
}

describe("SDK: CLI and client end to end", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let echo: { child: ChildProcess; url: string; signing_key: string };
  let dir: string;
  let home: string;
  const files: Record<string, string> = {};
  let agent: string;
  // The agent's id is chosen first: the service answers for its address alone, and register uses it.
  const agentId = randomId();
  let plannedAgent: string;
  let apiKey: string;
  let payer: Wallet;

  const agentMarket = (...args: string[]) => node(CLI, args, { AGENT_MARKET_HOME: home });

  before(async function () {
    for (const built of [CLI, ECHO]) {
      if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build --workspaces first`);
    }
    market = await TestMarket.start();
    plannedAgent = agentPda(agentId, market.programId).toBase58();
    relayer = await startRelayer(market.localnet, ONE_BY_ONE);
    dir = mkdtempSync(join(tmpdir(), "sdk-e2e-"));
    home = join(dir, "home");
    mkdirSync(home);

    const keygen = await agentMarket("keygen", "--out", join(dir, "signing.json"));
    assert.equal(keygen.code, 0, keygen.stderr);
    files.signing = join(dir, "signing.json");
    files.marketplace = writeKeypairFile(dir, "marketplace.json", relayer.marketplaceKey);
    echo = await startEcho(files.signing, relayer.marketplaceKey.publicKey.toBase58(), plannedAgent);
    assert.equal(echo.signing_key, keygen.stdout.trim(), "keygen printed the key the agent signs with");

    const listing = JSON.parse((await node(ECHO, ["--listing"])).stdout) as { listing: Record<string, unknown> };
    files.listing = join(dir, "listing.json");
    writeFileSync(files.listing, JSON.stringify(listing.listing));
    files.input = join(dir, "input-schema.json");
    writeFileSync(files.input, JSON.stringify(listing.listing.input_schema));
    files.output = join(dir, "output-schema.json");
    writeFileSync(files.output, JSON.stringify(listing.listing.output_schema));
  });

  after(async () => {
    echo?.child.kill();
    await relayer?.close();
    await market?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("check passes against the running echo agent, and exits 1 for another key", async () => {
    const pass = await agentMarket(
      "check", echo.url, "--key", echo.signing_key, "--agent", plannedAgent, "--input-schema", files.input!,
      "--output-schema", files.output!, "--marketplace-keypair", files.marketplace!, "--json",
    );
    assert.equal(pass.code, 0, pass.stdout + pass.stderr);
    const report = JSON.parse(pass.stdout) as { ok: boolean; checks: { check: string; status: string }[] };
    assert.equal(report.ok, true);
    // Every check passes but the stream's, skipped: the echo agent answers whole.
    assert.ok(report.checks.every((c) => c.status === (c.check.startsWith("stream") ? "skip" : "pass")), pass.stdout);
    // The creator kit's /sign-batch: it signs the probe's result in a batch and refuses a forged one.
    assert.deepEqual(
      report.checks.filter((c) => c.check.startsWith("batch ")).map((c) => c.check),
      ["batch signature", "batch refuses unknown results"],
    );

    const wrong = await agentMarket(
      "check", echo.url, "--key", relayer.marketplaceKey.publicKey.toBase58(), "--agent", plannedAgent, "--input-schema", files.input!,
      "--output-schema", files.output!, "--marketplace-keypair", files.marketplace!,
    );
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(wrong.stdout, /^signature\s+FAIL/m);
    assert.match(wrong.stdout, /^health\s+FAIL/m);

    // The echo agent answers for its own agent only: a request naming another is refused unsigned.
    const other = await agentMarket(
      "check", echo.url, "--key", echo.signing_key, "--input-schema", files.input!, "--output-schema", files.output!,
      "--marketplace-keypair", files.marketplace!,
    );
    assert.equal(other.code, 1, other.stdout + other.stderr);
    assert.match(other.stdout, /^signed request\s+FAIL\s+POST \/execute answered 403 agent_not_served: the service does not answer for agent/m);
  });

  it("register takes a creator through the checklist: on-chain registration with collateral, then listing", async () => {
    const creator = await market.walletWithUsdc(MIN_COLLATERAL_USDC);
    files.creator = writeKeypairFile(dir, "creator.json", creator.wallet);
    const cheap = await agentMarket(
      "register", "--keypair", files.creator, "--signing-key", files.signing!, "--endpoint", echo.url, "--listing", files.listing!,
      "--price", "0.009999", "--api", relayer.url, "--rpc", market.localnet.rpcUrl,
    );
    assert.equal(cheap.code, 2, cheap.stderr);
    assert.match(cheap.stderr, /--price 0\.009999 is below the market's minimum price per call, 0\.010000 USDC/);
    assert.equal(await market.usdc(creator.tokenAccount), MIN_COLLATERAL_USDC, "nothing was locked");
    // The CLI's program id (--program-id, else AGENT_MARKET_PROGRAM_ID, else the IDL's) must be
    // the one the API runs on the network.
    const elsewhere = Keypair.generate().publicKey.toBase58();
    const otherProgram = await agentMarket(
      "register", "--keypair", files.creator, "--signing-key", files.signing!, "--endpoint", echo.url, "--listing", files.listing!,
      "--price", "0.25", "--api", relayer.url, "--rpc", market.localnet.rpcUrl, "--program-id", elsewhere,
    );
    assert.equal(otherProgram.code, 1, otherProgram.stderr);
    assert.match(otherProgram.stderr, new RegExp(`^error: the API runs program ${PROGRAM_ID.toBase58()} on devnet; this CLI uses ${elsewhere}$`, "m"));
    assert.equal(await market.usdc(creator.tokenAccount), MIN_COLLATERAL_USDC, "nothing was locked");
    const registered = await agentMarket(
      "register", "--keypair", files.creator, "--signing-key", files.signing!, "--endpoint", echo.url, "--listing", files.listing!,
      "--price", "0.25", "--api", relayer.url, "--rpc", market.localnet.rpcUrl, "--agent-id", utils.bytes.bs58.encode(agentId), "--json",
    );
    assert.equal(registered.code, 0, registered.stderr);
    assert.match(registered.stderr, /\[8\/8\] Listed: /);
    const result = JSON.parse(registered.stdout) as { agent: string; register_transaction: string; listing: { status: string; pricing: unknown } };
    agent = result.agent;
    assert.equal(agent, plannedAgent);
    assert.equal(result.listing.status, "active");
    assert.deepEqual(result.listing.pricing, { model: "pay_per_use", price_usdc: "0.250000" });
    assert.equal(await market.usdc(creator.tokenAccount), 0n, "the collateral is locked");

    const status = await agentMarket("status", "--agent", agent, "--api", relayer.url, "--rpc", market.localnet.rpcUrl, "--json");
    assert.equal(status.code, 0, status.stderr);
    const shown = JSON.parse(status.stdout) as { listing: { status: string }; on_chain: { status: string; collateral_usdc: string } };
    assert.equal(shown.listing.status, "active");
    assert.deepEqual([shown.on_chain.status, shown.on_chain.collateral_usdc], ["Active", "100.000000"]);
    const table = await agentMarket("status", "--agent", agent, "--api", relayer.url, "--rpc", market.localnet.rpcUrl);
    assert.match(table.stdout, /^listing\s+active$/m);
    assert.match(table.stdout, /^collateral\s+100\.000000 USDC \(minimum 100\.000000\)$/m);
    const foreign = await node(CLI, ["status", "--agent", agent, "--api", relayer.url, "--rpc", market.localnet.rpcUrl], {
      AGENT_MARKET_HOME: home,
      AGENT_MARKET_PROGRAM_ID: elsewhere,
    });
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, new RegExp(`^error: account ${agent} is owned by ${PROGRAM_ID.toBase58()}, not the program ${elsewhere}$`, "m"));
    const malformed = await node(CLI, ["status", "--agent", agent, "--api", relayer.url], { AGENT_MARKET_HOME: home, AGENT_MARKET_PROGRAM_ID: "0OIl" });
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /^error: AGENT_MARKET_PROGRAM_ID 0OIl is not an address$/m);

    const again = await agentMarket(
      "register", "--keypair", files.creator, "--signing-key", files.signing!, "--endpoint", echo.url, "--listing", files.listing!,
      "--price", "0.25", "--api", relayer.url, "--rpc", market.localnet.rpcUrl, "--agent", agent,
    );
    assert.equal(again.code, 1);
    assert.match(again.stderr, /agent_already_listed/);
    assert.match(again.stderr, /next: it is listed already: agent-market status --agent/);
  });

  it("a consumer signs in, creates a key and approves the allowance with the CLI", async () => {
    payer = await market.walletWithUsdc(5n * USDC);
    files.payer = writeKeypairFile(dir, "payer.json", payer.wallet);
    const login = await agentMarket("login", "--keypair", files.payer, "--api", relayer.url, "--rpc", market.localnet.rpcUrl);
    assert.equal(login.code, 0, login.stderr);
    assert.equal(statSync(join(home, "config.json")).mode & 0o777, 0o600);
    assert.match(readFileSync(join(home, "config.json"), "utf8"), /"token": "sess_/);

    const created = await agentMarket("keys", "create", "--name", "e2e", "--cap", "2", "--json");
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout) as { secret: string; spending_cap_usdc: string };
    assert.match(key.secret, /^svc_test_/);
    assert.equal(key.spending_cap_usdc, "2.000000");
    apiKey = key.secret;

    const allowance = await agentMarket("allowance", "set", "1");
    assert.equal(allowance.code, 0, allowance.stderr);
    assert.match(allowance.stdout, /^Allowance 1\.000000 USDC on devnet/);
    const account = await getAccount(market.connection, payer.tokenAccount);
    assert.ok(account.delegate?.equals(delegatePda(market.programId)));
    assert.equal(account.delegatedAmount, USDC);

    const listed = await agentMarket("keys", "list");
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /e2e\s+svc_test_…\w{4}\s+active/);
  });

  it("the client runs the agent and its receipt verifies against the chain; a tampered one does not", async () => {
    const client = new AgentMarket({ apiKey, baseUrl: relayer.url });
    assert.equal((await client.whoami()).wallet, payer.wallet.publicKey.toBase58());
    const request = { task: "hello, agents", parameters: { shout: false } };
    const execution = await client.agents.execute(agent, request);
    assert.equal(execution.status, "succeeded");
    assert.deepEqual(execution.output, { task: "hello, agents", parameters: { shout: false }, length: 13 });
    const { creatorShareUsdc, feeUsdc } = splitPayment(PRICE_USDC);
    assert.deepEqual(
      [execution.charge.amount_usdc, execution.charge.creator_share_usdc, execution.charge.fee_usdc],
      ["0.250000", formatUsdc(creatorShareUsdc), formatUsdc(feeUsdc)],
    );

    let settled: Execution = execution;
    for (let i = 0; settled.transactions.confirmation !== "confirmed"; i++) {
      assert.ok(i < 200, "the settlement is confirmed");
      await sleep(100);
      settled = await client.executions.get(execution.id);
    }
    const options = { connection: market.connection, programId: market.programId, request, expectedSigningKey: echo.signing_key };
    const verified = await verifyReceipt(settled, options);
    assert.equal(verified.ok, true, JSON.stringify(verified.checks, null, 2));
    assert.deepEqual(
      verified.checks.map((c) => c.name),
      [
        "receipt", "execution_id", "agent", "result_hash", "request_hash", "protocol_version", "digest", "creator_signature", "expected_signing_key",
        "settlement_transaction", "settle_instruction", "settle_position", "settle_arguments", "ed25519_instruction", "escrow_settled_event",
        "creator_payout", "marketplace_fee", "on_chain_signing_key",
      ],
    );

    const failing = async (tamper: (e: Execution) => void) => {
      const copy = structuredClone(settled);
      tamper(copy);
      const result = await verifyReceipt(copy, options);
      assert.equal(result.ok, false);
      return result.checks.filter((c) => !c.ok).map((c) => c.name).sort();
    };
    // The payout and fee checks weigh the chain's transfers against the batch's leaves, not the
    // charge: a charge that misstates the split fails against its leaf.
    assert.deepEqual(await failing((e) => void (e.charge.creator_share_usdc = "0.250000")), ["escrow_settled_event"]);
    assert.deepEqual(await failing((e) => void (e.charge.fee_usdc = "0.000000")), ["escrow_settled_event"]);
    assert.deepEqual(await failing((e) => void ((e.output as { length: number }).length = 14)), ["result_hash"]);
    assert.deepEqual(
      await failing((e) => void (e.receipt!.creator_public_key = relayer.marketplaceKey.publicKey.toBase58())),
      ["creator_signature", "ed25519_instruction", "expected_signing_key", "on_chain_signing_key"],
    );
    assert.deepEqual(await failing((e) => void (e.transactions.settlement = e.transactions.escrow)), ["settle_instruction"]);

    // The program id the API names for the network is the one that settled; checked against
    // another program's id, the settlement is not that program's.
    const served = (await client.marketplace()).networks.find((n) => n.name === "devnet")!;
    const atServedId = await verifyReceipt(settled, { ...options, programId: new PublicKey(served.program_id) });
    assert.equal(atServedId.ok, true, JSON.stringify(atServedId.checks, null, 2));
    const elsewhere = await verifyReceipt(settled, { ...options, programId: Keypair.generate().publicKey });
    assert.deepEqual(elsewhere.checks.filter((c) => !c.ok).map((c) => c.name), ["settle_instruction"]);

    const ids: string[] = [];
    for await (const page of client.executions.pages({ limit: 1, agent })) ids.push(...page.data.map((e) => e.id));
    assert.deepEqual(ids, [execution.id]);
  });

  it("execute with the CLI prints the output and the charge; a wallet without allowance gets the shortfall and the fix", async () => {
    const paid = await node(CLI, ["execute", agent, "--task", "from the CLI", "--params", '{"n":1}', "--api", relayer.url], {
      AGENT_MARKET_HOME: home,
      AGENT_MARKET_API_KEY: apiKey,
    });
    assert.equal(paid.code, 0, paid.stderr);
    assert.deepEqual(JSON.parse(paid.stdout), { task: "from the CLI", parameters: { n: 1 }, length: 12 });
    assert.match(paid.stderr, /^Charged 0\.250000 USDC \(0\.247500 to the creator, 0\.002500 fee\) for exec_/);

    const unapproved = await market.walletWithUsdc(5n * USDC);
    const session = await WalletSession.signIn(relayer.url, {
      publicKey: unapproved.wallet.publicKey,
      signMessage: (message) => ed25519Sign(unapproved.wallet.secretKey, message),
    });
    const { secret } = await session.keys.create({ name: "no allowance", environment: "test" });
    const refused = await node(CLI, ["execute", agent, "--task", "x", "--api-key", secret, "--api", relayer.url]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /insufficient_allowance: this call costs 0\.250000 USDC; the wallet allows the marketplace 0\.000000 USDC/);
    assert.match(refused.stderr, /next: agent-market allowance set 0\.250000/);

    const client = new AgentMarket({ apiKey: secret, baseUrl: relayer.url });
    await assert.rejects(client.agents.execute(agent, { task: "x", parameters: {} }), (error: unknown) => {
      assert.ok(error instanceof PaymentRequiredError);
      assert.deepEqual([error.code, error.required, error.balance, error.allowance], ["insufficient_allowance", PRICE_USDC, 5n * USDC, 0n]);
      assert.equal(error.mint, market.usdcMint.toBase58());
      return true;
    });
    assert.equal(await market.usdc(unapproved.tokenAccount), 5n * USDC, "nothing was charged");
  });

  it("the CLI and the client send a maximum price: the listing's by default, and a lower one is refused before anything is sent", async () => {
    const before = await node(CLI, ["execute", agent, "--task", "cheap", "--max-price", "0.249999", "--api", relayer.url], {
      AGENT_MARKET_HOME: home,
      AGENT_MARKET_API_KEY: apiKey,
    });
    assert.equal(before.code, 1);
    assert.match(before.stderr, /price_above_maximum: The call costs 0\.250000 USDC, more than max_price_usdc 0\.249999/);
    assert.match(before.stderr, /next: pass --max-price 0\.250000 to agree to the new price/);
    const malformed = await node(CLI, ["execute", agent, "--task", "x", "--max-price", "0.25", "--api", relayer.url], {
      AGENT_MARKET_HOME: home,
      AGENT_MARKET_API_KEY: apiKey,
    });
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /--max-price must be USDC with six decimals/);

    const client = new AgentMarket({ apiKey, baseUrl: relayer.url });
    const listing = await client.agents.get(agent);
    assert.equal(callPriceUsdc(listing.pricing), "0.250000");
    assert.deepEqual([listing.pause_reason, listing.circuit.state], [null, "closed"]);
    await assert.rejects(
      client.agents.execute(agent, { task: "x", parameters: {} }, { maxPriceUsdc: "0.100000" }),
      (error: unknown) => {
        assert.ok(error instanceof ConflictError);
        assert.deepEqual([error.code, error.details.price_usdc], ["price_above_maximum", "0.250000"]);
        return true;
      },
    );
    const paid = await client.agents.execute(agent, { task: "x", parameters: {} }, { maxPriceUsdc: callPriceUsdc(listing.pricing) });
    assert.equal(paid.charge.amount_usdc, "0.250000");
  });

  it("logout ends the session, after which session commands ask to sign in", async () => {
    const logout = await agentMarket("logout");
    assert.equal(logout.code, 0, logout.stderr);
    assert.doesNotMatch(readFileSync(join(home, "config.json"), "utf8"), /sess_/);
    const keys = await agentMarket("keys", "list");
    assert.equal(keys.code, 1);
    assert.match(keys.stderr, /error: not signed in\nnext: agent-market login/);
  });
});
