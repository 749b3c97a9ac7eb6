// `agent-market admin` on a chain where the program was just deployed and no market exists yet
// (localnet --without-market), as docs/deploy.md walks a team through on devnet: init, then the
// fee shards, then a relayer over the new market runs an execution that settles 99 % / 1 %.
import { strict as assert } from "node:assert";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { errorCode, FEE_SHARD_COUNT, fetchMarket, initializeMarketInstruction, marketPda, PROGRAM_ID } from "@agent-market/program";
import { PublicKey, sendAndConfirmTransaction, Transaction } from "@solana/web3.js";

import { agentMarket, keypairFile, SIGNATURE } from "./src/admin-cli.js";
import { TestMarket } from "./src/fixtures.js";
import { devKeys, Localnet } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer } from "./src/marketplace.js";
import { startRelayer, type RunningRelayer } from "./src/relayer.js";

describe("agent-market admin on a chain without a market", function () {
  this.timeout(300_000);
  let localnet: Localnet;
  let relayer: RunningRelayer | undefined;
  let authority: string;
  const keys = devKeys();
  const admin = (action: string, ...args: string[]) => agentMarket(["admin", action, "--keypair", authority, "--rpc", localnet.rpcUrl, ...args]);

  before(async () => {
    localnet = await Localnet.start({ args: ["--without-market"] });
    authority = keypairFile(mkdtempSync(join(tmpdir(), "admin-fresh-")), "authority.json", keys.authority);
  });

  after(async () => {
    await relayer?.close();
    await localnet?.stop();
  });

  it("creates the market and its fee shards, and the market serves an execution that settles", async () => {
    const market = marketPda(localnet.programId).toBase58();
    const show = await admin("show");
    assert.equal(show.code, 1);
    assert.equal(
      show.stderr.trim(),
      `error: no market at ${market} (program ${PROGRAM_ID.toBase58()}) on devnet\n` +
        "next: initialize it first: agent-market admin init …, or check --program-id and --rpc",
    );

    const usdcMint = keys.usdcMint.publicKey.toBase58();
    const treasury = localnet.ready.market.treasury;
    // Only the key that deployed the program (its upgrade authority) may create the market, so no
    // one can take it between the deploy and this init.
    const roles = ["--usdc-mint", usdcMint, "--treasury", treasury, "--relayer", keys.relayer.publicKey.toBase58(), "--arbiter", keys.arbiter.publicKey.toBase58()];
    const frontRunnerFile = keypairFile(mkdtempSync(join(tmpdir(), "admin-fresh-")), "relayer.json", keys.relayer);
    const frontRun = await agentMarket(["admin", "init", "--keypair", frontRunnerFile, "--rpc", localnet.rpcUrl, ...roles]);
    assert.equal(frontRun.code, 1);
    assert.equal(
      frontRun.stderr.trim(),
      `error: ${frontRunnerFile} is ${keys.relayer.publicKey.toBase58()}, not the program's upgrade authority ${keys.authority.publicKey.toBase58()}\n` +
        "next: pass the keypair that deployed the program as --keypair",
    );
    assert.equal(await fetchMarket(localnet.connection(), undefined, { programId: localnet.programId }), null);
    const relayerLamports = await localnet.connection().getBalance(keys.relayer.publicKey);
    // Sent anyway (the CLI's check skipped), the program refuses it and nothing is spent.
    const direct = new Transaction().add(
      initializeMarketInstruction({
        programId: localnet.programId,
        authority: keys.relayer.publicKey,
        usdcMint: keys.usdcMint.publicKey,
        treasury: new PublicKey(treasury),
        params: {
          relayer: keys.relayer.publicKey,
          arbiter: keys.arbiter.publicKey,
          minCollateralUsdc: 100_000_000n,
          minPricePerCallUsdc: 10_000n,
          escrowGraceSecs: 60,
          disputeWindowSecs: 259_200,
          collateralCooldownSecs: 604_800,
          escrowsPaused: false,
        },
      }),
    );
    const refused = await sendAndConfirmTransaction(localnet.connection(), direct, [keys.relayer]).then(
      () => null,
      (error: unknown) => String(error),
    );
    assert.match(refused ?? "succeeded", new RegExp(`custom program error: 0x${errorCode("NotUpgradeAuthority").toString(16)}`));
    assert.equal(await fetchMarket(localnet.connection(), undefined, { programId: localnet.programId }), null);
    assert.equal(await localnet.connection().getBalance(keys.relayer.publicKey), relayerLamports);

    const init = await admin(
      "init",
      ...["--usdc-mint", usdcMint, "--treasury", treasury, "--relayer", keys.relayer.publicKey.toBase58(), "--arbiter", keys.arbiter.publicKey.toBase58()],
    );
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout.trim(), SIGNATURE);
    const created = (await fetchMarket(localnet.connection(), undefined, { programId: localnet.programId }))!;
    assert.equal(created.authority.toBase58(), keys.authority.publicKey.toBase58());
    assert.equal(created.usdcMint.toBase58(), usdcMint);
    assert.equal(created.treasury.toBase58(), treasury);
    assert.equal(created.minCollateralUsdc, 100_000_000n);
    assert.equal(created.minPricePerCallUsdc, 10_000n);
    assert.equal(created.disputeWindowSecs, 259_200);
    assert.equal(created.escrowsPaused, false);

    const again = await admin("init", "--usdc-mint", usdcMint, "--treasury", treasury, "--relayer", keys.relayer.publicKey.toBase58(), "--arbiter", keys.arbiter.publicKey.toBase58());
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: the market \S+ exists already .*: initialize_market runs once$/m);

    const shards = await admin("shards", "--json");
    assert.equal(shards.code, 0, shards.stderr);
    const shardsDone = JSON.parse(shards.stdout) as { action: string; instructions: unknown[]; signature: string };
    assert.equal(shardsDone.action, "shards");
    assert.equal(shardsDone.instructions.length, FEE_SHARD_COUNT);
    assert.match(shardsDone.signature, SIGNATURE);
    const none = await admin("shards");
    assert.equal(none.stderr.trim(), `All ${FEE_SHARD_COUNT} fee shards exist; nothing to sign.`);

    // The new market, used as any other: a creator lists, a payer runs, the program splits.
    const testMarket = await TestMarket.attach(localnet);
    relayer = await startRelayer(localnet);
    const agent = await listAgent(testMarket, relayer);
    try {
      const payer = await newPayer(testMarket, relayer, 1_000_000n);
      const feesBefore = await feeShardsTotal(testMarket);
      const creatorBefore = await testMarket.usdc(agent.creator.tokenAccount);
      const ran = await execute(relayer, payer, agent.address);
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      assert.equal((ran.body as { status: string }).status, "succeeded");
      assert.equal(await testMarket.usdc(agent.creator.tokenAccount), creatorBefore + 247_500n);
      assert.equal((await feeShardsTotal(testMarket)) - feesBefore, 2_500n);
      assert.equal(await testMarket.usdc(payer.tokenAccount), 750_000n);
    } finally {
      await agent.server.close();
    }
  });
});
