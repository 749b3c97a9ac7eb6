// `agent-market admin`, run as the built command against localnet's development market: each
// action shows what it signs, changes on chain exactly what it says (the market account read
// before and after), and prints the signature or one JSON object. Each test leaves the market as
// it found it. The refusals are in admin-refusals.test.ts.
import { strict as assert } from "node:assert";

import { PROGRAM_ID, feeShardPda, formatUsdc, marketPda, requestHash } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { startAdminMarket, type AdminMarket, SIGNATURE, agentMarket, keypairFile, marketFields } from "./src/admin-cli.js";
import { TestMarket, USDC, randomId } from "./src/fixtures.js";

describe("agent-market admin", function () {
  this.timeout(180_000);
  let harness: AdminMarket;
  let market: TestMarket;
  let dir: string;
  let authority: string;
  let stranger: string;

  const admin = (action: string, ...args: string[]) => harness.admin(action, ...args);
  const read = () => harness.read();

  before(async function () {
    harness = await startAdminMarket();
    ({ market, dir, authority } = harness);
    stranger = keypairFile(dir, "stranger.json", await market.fundedWallet());
  });
  after(() => market?.stop());

  it("show prints the market as localnet created it", async () => {
    const shown = await admin("show", "--json");
    assert.equal(shown.code, 0, shown.stderr);
    const view = JSON.parse(shown.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [view.network, view.program_id, view.market, view.usdc_mint, view.authority, view.treasury, view.relayer, view.arbiter],
      [
        "devnet",
        PROGRAM_ID.toBase58(),
        marketPda(market.programId).toBase58(),
        market.usdcMint.toBase58(),
        market.keys.authority.publicKey.toBase58(),
        market.config.treasury.toBase58(),
        market.relayer.publicKey.toBase58(),
        market.arbiter.publicKey.toBase58(),
      ],
    );
    assert.deepEqual(view.fee_shards, [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("update shows each change before → after, changes exactly those fields, and prints the signature or a JSON object", async () => {
    const before = await read();
    const updated = await admin("update", "--min-collateral", "150", "--dispute-window-secs", "200000", "--json");
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stderr, /^update_market on devnet, program \w+, through http:\/\/127\.0\.0\.1:\d+$/m);
    assert.match(updated.stderr, new RegExp(`^signer: ${market.keys.authority.publicKey.toBase58()} \\(${authority}\\)$`, "m"));
    assert.match(updated.stderr, /^ {2}min_collateral_usdc\s+100\.000000\s+→\s+150\.000000$/m);
    assert.match(updated.stderr, /^ {2}dispute_window_secs\s+259200\s+→\s+200000$/m);
    const result = JSON.parse(updated.stdout) as {
      action: string;
      signature: string;
      dry_run: boolean;
      instructions: { name: string; accounts: { name: string; address: string; signer: boolean; writable: boolean }[] }[];
      changes: unknown[];
    };
    assert.equal(result.action, "update");
    assert.equal(result.dry_run, false);
    assert.match(result.signature, SIGNATURE);
    assert.deepEqual(result.changes, [
      { field: "min_collateral_usdc", before: "100.000000", after: "150.000000" },
      { field: "dispute_window_secs", before: 259200, after: 200000 },
    ]);
    assert.deepEqual(
      result.instructions[0]!.accounts.map((a) => [a.name, a.address, a.signer, a.writable]),
      [
        ["authority", market.keys.authority.publicKey.toBase58(), true, false],
        ["market", marketPda(market.programId).toBase58(), false, true],
        ["treasury", market.config.treasury.toBase58(), false, false],
        ["event_authority", result.instructions[0]!.accounts[3]!.address, false, false],
        ["program", PROGRAM_ID.toBase58(), false, false],
      ],
    );
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), minCollateralUsdc: 150n * USDC, disputeWindowSecs: 200_000 });
    assert.deepEqual(
      (await market.events(result.signature)).map((e) => e.name),
      ["MarketUpdated"],
    );

    const restored = await admin("update", "--min-collateral", "100", "--dispute-window-secs", "259200");
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout.trim(), SIGNATURE);
    assert.match(restored.stderr, /^Confirmed: transaction \w+$/m);
    assert.deepEqual(marketFields(await read()), marketFields(before));
  });

  it("update moves the treasury and proposes a new authority, which takes the market only by accepting it, and alone can then administer it", async () => {
    const before = await read();
    const next = await market.fundedWallet();
    const nextFile = keypairFile(dir, "next-authority.json", next);
    const treasury = (await market.walletWithUsdc(0n)).tokenAccount;
    const proposed = await admin("update", "--treasury", treasury.toBase58(), "--new-authority", next.publicKey.toBase58());
    assert.equal(proposed.code, 0, proposed.stderr);
    assert.match(proposed.stderr, new RegExp(`^ {2}pending_authority\\s+\\(none\\)\\s+→\\s+${next.publicKey.toBase58()}$`, "m"));
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), treasury, pendingAuthority: next.publicKey });

    // Only the proposed key accepts; the market stays as it is until it does.
    const strangerAccepts = await agentMarket(["admin", "accept", "--keypair", stranger, "--rpc", market.localnet.rpcUrl]);
    assert.equal(strangerAccepts.code, 1);
    assert.match(strangerAccepts.stderr, new RegExp(`^error: ${stranger} is \\S+, not the proposed authority ${next.publicKey.toBase58()}$`, "m"));
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), treasury, pendingAuthority: next.publicKey });
    const accepted = await agentMarket(["admin", "accept", "--keypair", nextFile, "--rpc", market.localnet.rpcUrl]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(accepted.stdout.trim(), SIGNATURE);
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), treasury, authority: next.publicKey });

    const refused = await admin("pause");
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.trim(),
      `error: ${authority} is ${market.keys.authority.publicKey.toBase58()}, not the market authority ${next.publicKey.toBase58()}\n` +
        "next: pass the market authority's keypair file as --keypair",
    );
    const back = await agentMarket([
      "admin", "update", "--keypair", nextFile, "--rpc", market.localnet.rpcUrl,
      "--treasury", before.treasury.toBase58(), "--new-authority", before.authority.toBase58(),
    ]);
    assert.equal(back.code, 0, back.stderr);
    const returned = await admin("accept");
    assert.equal(returned.code, 0, returned.stderr);
    assert.deepEqual(marketFields(await read()), marketFields(before));
  });

  it("rotate replaces the relayer and the arbiter keys, and only them: the old relayer key is refused", async () => {
    const before = await read();
    const agent = await market.agent();
    const payer = await market.payer(10n * USDC);
    const relayer = Keypair.generate().publicKey;
    const arbiter = Keypair.generate().publicKey;
    const rotated = await admin("rotate", "--relayer", relayer.toBase58(), "--arbiter", arbiter.toBase58());
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stderr, new RegExp(`^ {2}relayer\\s+${before.relayer.toBase58()}\\s+→\\s+${relayer.toBase58()}$`, "m"));
    assert.match(rotated.stderr, new RegExp(`^ {2}arbiter\\s+${before.arbiter.toBase58()}\\s+→\\s+${arbiter.toBase58()}$`, "m"));
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), relayer, arbiter });
    const open = market.openEscrowInstruction(agent, payer, randomId(), requestHash("summarize", {}));
    await market.expectPreflightError([open], [market.relayer], "NotRelayer");

    const back = await admin("rotate", "--relayer", before.relayer.toBase58(), "--arbiter", before.arbiter.toBase58());
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(marketFields(await read()), marketFields(before));
    await market.openEscrow(agent, payer);
  });

  it("pause stops new escrows until unpause; pausing twice has nothing to change", async () => {
    const before = await read();
    const agent = await market.agent();
    const payer = await market.payer(10n * USDC);
    const paused = await admin("pause");
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stderr, /^ {2}escrows_paused\s+false\s+→\s+true$/m);
    assert.deepEqual(marketFields(await read()), { ...marketFields(before), escrowsPaused: true });
    const open = market.openEscrowInstruction(agent, payer, randomId(), requestHash("summarize", {}));
    await market.expectPreflightError([open], [market.relayer], "EscrowsPaused");

    const again = await admin("pause");
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: nothing to change: the market has these values already\nnext: agent-market admin show prints them$/m);

    const unpaused = await admin("unpause");
    assert.equal(unpaused.code, 0, unpaused.stderr);
    assert.deepEqual(marketFields(await read()), marketFields(before));
    await market.openEscrow(agent, payer);
  });

  it("sweep moves the fees to the treasury, any payer signing; a dry run sends nothing; then nothing is left", async () => {
    const agent = await market.agent();
    const payer = await market.payer(10n * USDC);
    await market.settle(await market.openEscrow(agent, payer), agent, 3);
    await market.settle(await market.openEscrow(agent, payer), agent, 5);
    const { treasury } = await read();
    const shards = [0, 1, 2, 3, 4, 5, 6, 7].map((index) => feeShardPda(index, market.programId));
    const balances = async () => Promise.all([treasury, ...shards].map((account) => market.usdc(account)));
    const before = await balances();
    const fees = before.slice(1);
    assert.ok(fees[3]! > 0n && fees[5]! > 0n, "the settlements paid fees into shards 3 and 5");

    const sweep = (...args: string[]) => agentMarket(["admin", "sweep", "--keypair", stranger, "--rpc", market.localnet.rpcUrl, ...args]);
    const dry = await sweep("--dry-run");
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, "");
    assert.match(dry.stderr, /^instruction 1: sweep_fees$/m);
    assert.match(dry.stderr, /^Dry run: the simulation succeeded; nothing was sent\.$/m);
    assert.deepEqual(await balances(), before);

    const swept = await sweep("--json");
    assert.equal(swept.code, 0, swept.stderr);
    const result = JSON.parse(swept.stdout) as { signature: string; changes: unknown[]; instructions: { name: string }[] };
    const total = fees.reduce((sum, fee) => sum + fee, 0n);
    const full = fees.flatMap((fee, index) => (fee > 0n ? [index] : []));
    assert.deepEqual(
      result.instructions.map((ix) => ix.name),
      full.map(() => "sweep_fees"),
    );
    assert.deepEqual(result.changes, [
      ...full.map((index) => ({ field: `fee_shard_${index}_usdc`, before: formatUsdc(fees[index]!), after: "0.000000" })),
      { field: "treasury_usdc", before: formatUsdc(before[0]!), after: formatUsdc(before[0]! + total) },
    ]);
    assert.deepEqual(await balances(), [before[0]! + total, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n]);
    assert.deepEqual(
      (await market.events(result.signature)).map((e) => e.name),
      full.map(() => "FeesSwept"),
    );

    const empty = await sweep();
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, "");
    assert.equal(empty.stderr.trim(), "No fees to sweep: every fee shard is empty.");
    const one = await sweep("--shard", "9");
    assert.equal(one.code, 2);
    assert.match(one.stderr, /^agent-market admin: --shard must be an integer from 0 to 7$/m);
  });

  it("shards signs nothing when every fee shard exists", async () => {
    const shards = await admin("shards", "--json");
    assert.equal(shards.code, 0, shards.stderr);
    assert.equal(shards.stderr.trim(), "All 8 fee shards exist; nothing to sign.");
    assert.deepEqual(JSON.parse(shards.stdout), {
      action: "shards",
      network: "devnet",
      program_id: PROGRAM_ID.toBase58(),
      signer: market.keys.authority.publicKey.toBase58(),
      instructions: [],
      changes: [],
      dry_run: false,
      signature: null,
    });
  });

  it("is listed in the overview, with its usage on --help", async () => {
    const overview = await agentMarket(["--help"]);
    assert.match(overview.stdout, /^ {2}admin {2,}the market authority's actions/m);
    const help = await agentMarket(["admin", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^agent-market admin <action>/);
    for (const action of ["show", "init", "shards", "update", "accept", "rotate", "pause", "sweep"]) {
      assert.match(help.stdout, new RegExp(`^agent-market admin ${action}`, "m"));
    }
  });
});
