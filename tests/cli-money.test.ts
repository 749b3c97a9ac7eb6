// The agent-market commands that move money, run as the built program against a real relayer and
// localnet: disputes opened with evidence and resolved by the arbiter, reclaim, subscribe,
// collateral retired, withdrawn and topped up, the allowance revoked. Every effect is checked on
// chain to the unit; every refusal by its exit code and message, and in --json by its error.
import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  collateralVaultPda,
  escrowPda,
  evidenceHash,
  attachmentDigest,
  fetchAgent,
  fetchDisputesOfExecution,
  formatExecutionId,
  marketPda,
  parseExecutionId,
  PROGRAM_ID,
  provenLeavesFromChain,
  splitPayment,
  subscriptionPda,
  toHex,
} from "@agent-market/program";
import { getAccount } from "@solana/spl-token";
import { Keypair } from "@solana/web3.js";

import { COLLATERAL_COOLDOWN_SECS, DISPUTE_WINDOW_SECS, ESCROW_GRACE_SECS, MAX_EXECUTION_SECS, MIN_COLLATERAL_USDC, TestMarket } from "./src/fixtures.js";
import { REPO_ROOT } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { ONE_BY_ONE, startRelayer, type RunningRelayer } from "./src/relayer.js";
import { run, type Run } from "./src/run.js";

const CLI = join(REPO_ROOT, "sdk", "cli", "dist", "main.js");


describe("agent-market: commands that move money", function () {
  this.timeout(300_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let dir: string;
  const agents: ListedAgent[] = [];

  before(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build --workspaces first`);
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet, ONE_BY_ONE);
    dir = mkdtempSync(join(tmpdir(), "cli-money-"));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      await relayer?.close();
    } finally {
      await market?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  /** `agent-market …` as its own process, the API and RPC URLs from the environment. */
  function agentMarket(home: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
    return run(process.execPath, [CLI, ...args], {
      env: { ...process.env, AGENT_MARKET_HOME: home, AGENT_MARKET_API_URL: relayer.url, AGENT_MARKET_RPC_URL: market.localnet.rpcUrl, ...env },
    });
  }

  /** Runs with --json and expects exit 0; the parsed stdout. */
  async function ok<T = Record<string, unknown>>(home: string, args: string[], env: Record<string, string> = {}): Promise<T> {
    const ran = await agentMarket(home, [...args, "--json"], env);
    assert.equal(ran.code, 0, `${args.join(" ")}: ${ran.stderr}\n${ran.stdout}`);
    return JSON.parse(ran.stdout) as T;
  }

  /** Runs with --json and expects exit 1 with a JSON error on stdout; its message. */
  async function fails(home: string, args: string[], code = 1, env: Record<string, string> = {}): Promise<string> {
    const ran = await agentMarket(home, [...args, "--json"], env);
    assert.equal(ran.code, code, `${args.join(" ")}: ${ran.stdout}`);
    const body = JSON.parse(ran.stdout) as { error: { code: string; message: string } };
    assert.equal(typeof body.error.message, "string");
    return body.error.message;
  }

  function keyFile(name: string, keypair: Keypair): string {
    const path = join(dir, `${name}-${keypair.publicKey.toBase58()}.json`);
    writeFileSync(path, JSON.stringify(Array.from(keypair.secretKey)));
    return path;
  }

  /** A CLI home signed in as `wallet`, its keypair remembered. */
  async function home(wallet: Keypair): Promise<string> {
    const path = mkdtempSync(join(dir, "home-"));
    const login = await agentMarket(path, ["login", "--keypair", keyFile("wallet", wallet), "--api", relayer.url]);
    assert.equal(login.code, 0, login.stderr);
    return path;
  }

  async function newAgent(options: Parameters<typeof listAgent>[2] = {}): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer, options);
    agents.push(agent);
    return agent;
  }

  async function settled(agent: ListedAgent, payer: Payer): Promise<string> {
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.id as string;
    const deadline = Date.now() + 10_000;
    // Settled once its leaf is in the agent's receipt log, as the CLI will read it.
    const settledLeaf = async () =>
      (await provenLeavesFromChain(market.connection, agent.address, parseExecutionId(id)!, { programId: market.programId })).length > 0;
    while (!(await settledLeaf())) {
      if (Date.now() > deadline) throw new Error(`no receipt log leaf for ${id}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return id;
  }

  const usdc = (address: Parameters<TestMarket["usdc"]>[0]) => market.usdc(address);
  /** The one dispute of execution `id` on chain, found as the CLI's resolve finds it. */
  const disputeOf = async (id: string) => {
    const found = await fetchDisputesOfExecution(market.connection, parseExecutionId(id)!, { programId: market.programId });
    assert.ok(found.length <= 1, `${found.length} disputes of ${id}`);
    return found[0]?.dispute ?? null;
  };
  const vault = (agent: ListedAgent) => usdc(collateralVaultPda(agent.address, market.programId));

  it("prints its version, and in --json its failures as one error object on stdout with the same exit codes", async () => {
    const anywhere = mkdtempSync(join(dir, "home-"));
    const version = await agentMarket(anywhere, ["--version"]);
    assert.equal(version.code, 0);
    const expected = (JSON.parse(readFileSync(join(REPO_ROOT, "sdk", "cli", "package.json"), "utf8")) as { version: string }).version;
    assert.equal(version.stdout.trim(), expected);
    assert.deepEqual(await ok(anywhere, ["--version"]), { version: expected });

    const usage = await agentMarket(anywhere, ["dispute", "show", "not-an-id", "--json"]);
    assert.equal(usage.code, 2);
    const usageError = JSON.parse(usage.stdout) as { error: { code: string; message: string } };
    assert.equal(usageError.error.code, "usage");
    assert.equal(usageError.error.message, "not-an-id is not an execution id (exec_…)");
    assert.equal(usage.stderr, "");

    const unsigned = await agentMarket(anywhere, ["dispute", "list", "--json"]);
    assert.equal(unsigned.code, 1);
    assert.deepEqual(JSON.parse(unsigned.stdout), {
      error: { code: "failed", message: "not signed in", next: "agent-market login --keypair <wallet file> --api <url>" },
    });
    const plain = await agentMarket(anywhere, ["dispute", "list"]);
    assert.equal(plain.code, 1);
    assert.equal(plain.stdout, "");
    assert.match(plain.stderr, /^error: not signed in$/m);
  });

  it("opens a dispute with evidence, lets the creator answer, upholds it: the slash moves exactly from the collateral to the payer", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const payerHome = await home(payer.wallet);
    const creatorHome = await home(agent.creator.wallet);
    const arbiterHome = await home(market.arbiter);
    const id = await settled(agent, payer);

    const evidenceFile = join(dir, "output.txt");
    writeFileSync(evidenceFile, "the summary was empty\n");
    const payerBefore = await usdc(payer.tokenAccount);
    const opened = await ok<{ evidence_id: string; evidence_hash: string; role: string; transaction: string }>(payerHome, [
      "dispute",
      "open",
      id,
      "--statement",
      "The agent returned an empty summary.",
      "--attach",
      evidenceFile,
      // No indexer: the leaf and its proof come from the chain's history of the agent's receipt log.
      "--agent",
      agent.address.toBase58(),
    ]);
    assert.equal(opened.role, "payer");
    const expected = evidenceHash("The agent returned an empty summary.", [
      attachmentDigest("output.txt", "text/plain; charset=utf-8", readFileSync(evidenceFile)),
    ]);
    assert.equal(opened.evidence_hash, toHex(expected));
    const onChain = await disputeOf(id);
    assert.ok(onChain, "the dispute is open on chain");
    assert.equal(toHex(onChain.evidenceHash), opened.evidence_hash, "open_dispute bound the relayer's hash");
    assert.ok(onChain.payer.equals(payer.wallet.publicKey));
    assert.equal(await usdc(payer.tokenAccount), payerBefore, "opening a dispute moves no USDC");
    assert.equal((await fetchAgent(market.connection, agent.address, { programId: market.programId }))!.openDisputes, 1);

    const twice = await fails(payerHome, ["dispute", "open", id, "--statement", "again", "--agent", agent.address.toBase58()]);
    assert.equal(twice, `${id} (leaf ${onChain.leafIndex}) is disputed already`);

    const answer = await ok<{ role: string; transaction?: string }>(creatorHome, [
      "dispute",
      "open",
      id,
      "--answer",
      "--statement",
      "The task had nothing to summarize.",
    ]);
    assert.equal(answer.role, "creator");
    assert.equal(answer.transaction, undefined, "an answer signs nothing");

    const shown = await ok<{ state: string; evidence: { role: string; bound_on_chain: boolean }[] }>(creatorHome, ["dispute", "show", id]);
    assert.equal(shown.state, "open");
    assert.deepEqual(
      shown.evidence.map((e) => [e.role, e.bound_on_chain]),
      [
        ["payer", true],
        ["creator", false],
      ],
    );
    const listed = await ok<{ execution_id: string }[]>(arbiterHome, ["dispute", "list", "--role", "arbiter", "--state", "open"]);
    assert.ok(listed.some((d) => d.execution_id === id));
    const mine = await ok<{ execution_id: string }[]>(payerHome, ["dispute", "list"]);
    assert.ok(mine.some((d) => d.execution_id === id), "--role payer by default");

    // Only the arbiter resolves, and the slash must be positive to uphold.
    const notArbiter = await fails(payerHome, ["dispute", "resolve", id, "--uphold", "--slash", "1", "--keypair", keyFile("payer", payer.wallet)]);
    assert.match(notArbiter, /is not the market's arbiter/);
    const arbiterKey = keyFile("arbiter", market.arbiter);
    assert.match(await fails(arbiterHome, ["dispute", "resolve", id, "--uphold", "--keypair", arbiterKey], 2), /--slash is required/);
    assert.match(await fails(arbiterHome, ["dispute", "resolve", id, "--keypair", arbiterKey], 2), /give --uphold --slash <usdc> or --reject/);

    const vaultBefore = await vault(agent);
    const payerBeforeSlash = await usdc(payer.tokenAccount);
    const resolved = await ok<{ state: string; slashed_usdc: string; payer_received_usdc: string }>(arbiterHome, [
      "dispute",
      "resolve",
      id,
      "--uphold",
      "--slash",
      "2.5",
      "--keypair",
      arbiterKey,
    ]);
    assert.deepEqual([resolved.state, resolved.slashed_usdc, resolved.payer_received_usdc], ["upheld", "2.500000", "2.500000"]);
    assert.equal(await vault(agent), vaultBefore - 2_500_000n, "exactly the slash left the collateral");
    assert.equal(await usdc(payer.tokenAccount), payerBeforeSlash + 2_500_000n, "and reached the payer");
    const kept = await disputeOf(id);
    assert.deepEqual([kept?.resolved, kept?.upheld], [true, true], "the resolved dispute stays until its leaf's window passes");
    const after = await ok<{ state: string; slashed_usdc: string }>(payerHome, ["dispute", "show", id]);
    assert.deepEqual([after.state, after.slashed_usdc], ["upheld", "2.500000"]);

    // Anyone returns its rent to the payer once the window has passed, not before.
    const anyone = keyFile("anyone", await market.fundedWallet());
    assert.match(await fails(payerHome, ["dispute", "close", id, "--keypair", anyone]), new RegExp(`^the dispute window of ${id} ends in `));
    await market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS });
    const lamportsBefore = await market.lamports(payer.wallet.publicKey);
    const closed = await ok<{ leaf_index: string; payer: string }>(payerHome, ["dispute", "close", id, "--keypair", anyone]);
    assert.deepEqual([closed.leaf_index, closed.payer], [kept!.leafIndex.toString(), payer.wallet.publicKey.toBase58()]);
    assert.equal(await disputeOf(id), null, "the dispute account is gone");
    assert.ok((await market.lamports(payer.wallet.publicKey)) > lamportsBefore, "its rent went back to the payer");
    assert.match(await fails(payerHome, ["dispute", "close", id, "--keypair", anyone]), new RegExp(`^no resolved dispute on ${id}$`));
  });

  it("rejects a dispute: nothing moves", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const payerHome = await home(payer.wallet);
    const arbiterHome = await home(market.arbiter);
    const id = await settled(agent, payer);
    const statementFile = join(dir, "statement.md");
    writeFileSync(statementFile, "Too slow.\n");
    const dataFile = join(dir, "trace.bin");
    writeFileSync(dataFile, Buffer.from([0, 1, 2, 3]));
    const opened = await ok<{ evidence_hash: string }>(payerHome, [
      "dispute",
      "open",
      id,
      "--statement-file",
      statementFile,
      "--attach",
      dataFile,
      "--agent",
      agent.address.toBase58(),
    ]);
    const expected = evidenceHash("Too slow.\n", [attachmentDigest("trace.bin", "application/octet-stream", Buffer.from([0, 1, 2, 3]))]);
    assert.equal(opened.evidence_hash, toHex(expected), "the statement file as it is, a file of unknown type as octet-stream");
    const vaultBefore = await vault(agent);
    const payerBefore = await usdc(payer.tokenAccount);
    // Under another program id there is no market to resolve it in.
    const elsewhere = Keypair.generate().publicKey;
    assert.equal(
      await fails(arbiterHome, [
        "dispute",
        "resolve",
        id,
        "--reject",
        "--keypair",
        keyFile("arbiter", market.arbiter),
        "--program-id",
        elsewhere.toBase58(),
      ]),
      `no agent_market market at ${marketPda(elsewhere).toBase58()} (program ${elsewhere.toBase58()}) on this RPC's network`,
    );
    const resolved = await ok<{ state: string; slashed_usdc: string }>(arbiterHome, [
      "dispute",
      "resolve",
      id,
      "--reject",
      "--keypair",
      keyFile("arbiter", market.arbiter),
    ]);
    assert.deepEqual([resolved.state, resolved.slashed_usdc], ["rejected", "0.000000"]);
    assert.equal(await vault(agent), vaultBefore);
    assert.equal(await usdc(payer.tokenAccount), payerBefore);
    assert.equal((await ok<{ state: string }>(payerHome, ["dispute", "show", id])).state, "rejected");
  });

  it("retires an agent; refuses to withdraw while a dispute is open and during the cooldown, saying how long is left; withdraws after", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const payerHome = await home(payer.wallet);
    const creatorHome = await home(agent.creator.wallet);
    const id = await settled(agent, payer);
    await ok(payerHome, ["dispute", "open", id, "--statement", "Wrong language.", "--agent", agent.address.toBase58()]);

    const active = await fails(creatorHome, ["agents", "withdraw", agent.address.toBase58()]);
    assert.match(active, /is active: collateral is locked until it is retired/);
    const retired = await ok<{ listing: string; transaction: string }>(creatorHome, ["agents", "retire", agent.address.toBase58()]);
    assert.equal(retired.listing, "retired");
    assert.equal((await fetchAgent(market.connection, agent.address, { programId: market.programId }))!.status, "Retired");

    const disputed = await fails(creatorHome, ["agents", "withdraw", agent.address.toBase58()]);
    assert.match(disputed, /has 1 open dispute\(s\): the collateral stays until the arbiter resolves them/);
    await ok(await home(market.arbiter), ["dispute", "resolve", id, "--uphold", "--slash", "1", "--keypair", keyFile("arbiter", market.arbiter)]);

    const cooling = await fails(creatorHome, ["agents", "withdraw", agent.address.toBase58()]);
    assert.match(cooling, /^the collateral cooldown has 6d 23h 5\dm( \d+s)? left \(it unlocks at /);

    await market.localnet.advanceClock({ seconds: COLLATERAL_COOLDOWN_SECS });
    const creatorBefore = await usdc(agent.creator.tokenAccount);
    const collateral = await vault(agent);
    assert.equal(collateral, MIN_COLLATERAL_USDC - 1_000_000n, "the collateral less the slash");
    // The agent's account belongs to the program the market runs; under another id it is not an agent.
    const elsewhere = Keypair.generate().publicKey.toBase58();
    assert.equal(
      await fails(creatorHome, ["agents", "withdraw", agent.address.toBase58(), "--program-id", elsewhere]),
      `account ${agent.address.toBase58()} is owned by ${PROGRAM_ID.toBase58()}, not the program ${elsewhere}`,
    );
    assert.equal(await vault(agent), collateral, "nothing moved");
    const withdrawn = await ok<{ withdrawn_usdc: string }>(creatorHome, ["agents", "withdraw", agent.address.toBase58()]);
    assert.equal(withdrawn.withdrawn_usdc, "99.000000");
    assert.equal(await usdc(agent.creator.tokenAccount), creatorBefore + collateral, "the whole collateral came back");
    assert.equal(await vault(agent), 0n);
  });

  it("tops up collateral by exactly the amount, pauses and resumes the listing", async () => {
    const agent = await newAgent();
    const creatorHome = await home(agent.creator.wallet);
    await market.localnet.mintUsdc(agent.creator.wallet.publicKey, 5_000_000n);
    await waitForBalance(agent.creator.tokenAccount, 5_000_000n);
    const before = await vault(agent);
    const topped = await ok<{ collateral_usdc: string }>(creatorHome, ["agents", "topup", agent.address.toBase58(), "3.25"]);
    assert.equal(await vault(agent), before + 3_250_000n);
    assert.equal(await usdc(agent.creator.tokenAccount), 5_000_000n - 3_250_000n);
    assert.equal(topped.collateral_usdc, "103.250000");
    assert.match(await fails(creatorHome, ["agents", "topup", agent.address.toBase58(), "0"], 2), /<usdc> must be more than 0/);

    assert.equal((await ok<{ status: string }>(creatorHome, ["agents", "pause", agent.address.toBase58()])).status, "paused");
    assert.equal((await ok<{ status: string }>(creatorHome, ["agents", "resume", agent.address.toBase58()])).status, "active");
    const stranger = await home(await market.fundedWallet());
    assert.match(await fails(stranger, ["agents", "topup", agent.address.toBase58(), "1"]), /was registered by .*, not /);
  });

  async function waitForBalance(account: Parameters<TestMarket["usdc"]>[0], expected: bigint): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await usdc(account).catch(() => -1n)) !== expected) {
      if (Date.now() > deadline) throw new Error(`balance never reached ${expected}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("reclaims an escrow nobody settled by its deadline, straight from the chain, signed by the payer", async () => {
    const agent = await market.agent();
    const payer = await market.payer(1_000_000n);
    const payerHome = mkdtempSync(join(dir, "home-"));
    const payerKey = keyFile("payer", payer.wallet);
    const escrow = await market.openEscrow(agent, payer);
    const id = formatExecutionId(escrow.executionId);
    const afterOpen = await usdc(payer.tokenAccount);
    assert.equal(afterOpen, 1_000_000n - 250_000n);

    const early = await fails(payerHome, ["reclaim", id, "--keypair", payerKey]);
    // 91 s at most (its deadline, 90 s after it opened, plus one); less as the machine takes its time.
    assert.match(early, new RegExp(`^the escrow of ${id} can be reclaimed in 1m [0-3]\\ds \\(after `));
    const other = await fails(payerHome, ["reclaim", id, "--keypair", keyFile("other", await market.fundedWallet())]);
    assert.match(other, new RegExp(`^the escrow of ${id} was paid by ${payer.wallet.publicKey.toBase58()}, not `));

    await market.localnet.advanceClock({ seconds: MAX_EXECUTION_SECS + ESCROW_GRACE_SECS + 1 });
    // The escrow is derived under the program id of the environment: under another, there is none.
    const elsewhere = Keypair.generate().publicKey;
    assert.equal(
      await fails(payerHome, ["reclaim", id, "--keypair", payerKey], 1, { AGENT_MARKET_PROGRAM_ID: elsewhere.toBase58() }),
      `no open escrow for ${id} at ${escrowPda(escrow.executionId, elsewhere).toBase58()}: it was settled, refunded or reclaimed already`,
    );
    assert.equal(await usdc(payer.tokenAccount), afterOpen, "nothing came back");
    const reclaimed = await ok<{ reclaimed_usdc: string }>(payerHome, ["reclaim", id, "--keypair", payerKey]);
    assert.equal(reclaimed.reclaimed_usdc, "0.250000");
    assert.equal(await usdc(payer.tokenAccount), 1_000_000n, "the whole escrow came back");
    assert.equal(await market.exists(escrowPda(escrow.executionId, market.programId)), false);
    assert.match(await fails(payerHome, ["reclaim", id, "--keypair", payerKey]), /no open escrow for .*: it was settled, refunded or reclaimed already/);
  });

  it("subscribes from the API key's wallet, split 99/1, and lists and shows the wallet's executions", async () => {
    const periodPriceUsdc = 2_000_000n;
    const agent = await newAgent({ pricing: { kind: "Subscription", periodPriceUsdc, periodSecs: 3600 } });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const anywhere = mkdtempSync(join(dir, "home-"));
    const creatorBefore = await usdc(agent.creator.tokenAccount);
    const bought = await ok<{ status: string; charge: { amount_usdc: string } }>(anywhere, ["subscribe", agent.address.toBase58()], {
      AGENT_MARKET_API_KEY: payer.apiKey,
    });
    assert.equal(bought.status, "succeeded");
    assert.equal(bought.charge.amount_usdc, "2.000000");
    assert.equal(await usdc(payer.tokenAccount), 10_000_000n - periodPriceUsdc);
    assert.equal(await usdc(agent.creator.tokenAccount), creatorBefore + splitPayment(periodPriceUsdc).creatorShareUsdc);
    assert.ok(await market.exists(subscriptionPda(agent.address, payer.wallet.publicKey, market.programId)));

    const id = await settled(agent, payer);
    const list = await ok<{ id: string }[]>(anywhere, ["executions", "list", "--api-key", payer.apiKey]);
    assert.deepEqual(list.map((e) => e.id), [id]);
    const one = await ok<{ id: string; status: string }>(anywhere, ["executions", "get", id, "--api-key", payer.apiKey]);
    assert.deepEqual([one.id, one.status], [id, "succeeded"]);
    const unknown = await agentMarket(anywhere, ["executions", "get", "exec_1111111111111111111111", "--api-key", payer.apiKey, "--json"]);
    assert.equal(unknown.code, 1);
    assert.equal((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code, "resource_not_found");
  });

  it("revokes the allowance: the delegate can draw nothing", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const payerHome = await home(payer.wallet);
    assert.equal((await getAccount(market.connection, payer.tokenAccount)).delegatedAmount, 1_000_000n);
    const revoked = await ok<{ allowance_usdc: string }>(payerHome, ["allowance", "revoke"]);
    assert.equal(revoked.allowance_usdc, "0.000000");
    const account = await getAccount(market.connection, payer.tokenAccount);
    assert.equal(account.delegate, null);
    assert.equal(account.delegatedAmount, 0n);
    assert.equal(account.amount, 1_000_000n);
  });
});
