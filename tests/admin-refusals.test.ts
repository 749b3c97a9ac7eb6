// The refusals of `agent-market admin`, each with its exact message, against localnet's
// development market, which each test leaves as it found it; and `init`, which localnet lets run only up to
// the program's answer: its market exists from the start (one market per program id), and under
// another program id, whose market does not, the simulation finds no program there.
import { strict as assert } from "node:assert";

import { PROGRAM_ID, marketPda } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { startAdminMarket, type AdminMarket, agentMarket, mainnetLookalike, marketFields, programError } from "./src/admin-cli.js";
import { TestMarket } from "./src/fixtures.js";

describe("agent-market admin: init and refusals", function () {
  this.timeout(180_000);
  let harness: AdminMarket;
  let market: TestMarket;
  let authority: string;

  const admin = (action: string, ...args: string[]) => harness.admin(action, ...args);
  const read = () => harness.read();

  before(async function () {
    harness = await startAdminMarket();
    ({ market, authority } = harness);
  });
  after(() => market?.stop());

  describe("init", () => {
    const initArgs = () => [
      "--usdc-mint", market.usdcMint.toBase58(), "--treasury", market.config.treasury.toBase58(),
      "--relayer", market.relayer.publicKey.toBase58(), "--arbiter", market.arbiter.publicKey.toBase58(),
    ];

    it("refuses a market that exists: initialize_market runs once", async () => {
      const init = await admin("init", ...initArgs());
      assert.equal(init.code, 1);
      assert.equal(
        init.stderr.trim(),
        `error: the market ${marketPda(market.programId).toBase58()} exists already (program ${PROGRAM_ID.toBase58()}): initialize_market runs once\n` +
          "next: change its parameters with agent-market admin update",
      );
    });

    it("under another program id: the market of that id with the defaults, and the chain's answer that no program runs there", async () => {
      const elsewhere = Keypair.generate().publicKey;
      const init = await admin("init", ...initArgs(), "--program-id", elsewhere.toBase58(), "--min-price", "0.02", "--dry-run");
      assert.equal(init.code, 1);
      assert.match(init.stderr, new RegExp(`^initialize_market on devnet, program ${elsewhere.toBase58()}, through `, "m"));
      assert.match(init.stderr, new RegExp(`^ {2}market\\s+${marketPda(elsewhere).toBase58()}\\s+writable$`, "m"));
      assert.match(init.stderr, new RegExp(`^ {2}program\\s+${elsewhere.toBase58()}$`, "m"));
      for (const [field, value] of [
        ["min_collateral_usdc", "100.000000"],
        ["min_price_per_call_usdc", "0.020000"],
        ["escrow_grace_secs", "60"],
        ["dispute_window_secs", "259200"],
        ["collateral_cooldown_secs", "604800"],
        ["escrows_paused", "false"],
      ]) {
        assert.match(init.stderr, new RegExp(`^ {2}${field}\\s+\\(none\\)\\s+→\\s+${value.replace(".", "\\.")}$`, "m"));
      }
      assert.match(init.stderr, /^error: the program would refuse it: InvalidProgramForExecution\nnext: nothing was sent$/m);
    });
  });

  describe("refusals", () => {
    it("mainnet without --confirm-mainnet, whether named by --network or known by the RPC's genesis hash", async () => {
      const before = await read();
      const named = await admin("pause", "--network", "mainnet");
      assert.equal(named.code, 1);
      assert.match(named.stderr, /^ {2}escrows_paused\s+false\s+→\s+true$/m, "the summary comes first");
      assert.match(
        named.stderr,
        /^error: refusing to sign for mainnet without --confirm-mainnet\nnext: read the summary above, then run the same command with --confirm-mainnet$/m,
      );

      const dry = await admin("pause", "--network", "mainnet", "--dry-run");
      assert.equal(dry.code, 0, "a dry run sends nothing, so it needs no confirmation");
      assert.match(dry.stderr, /^Dry run: the simulation succeeded; nothing was sent\.$/m);

      const lookalike = await mainnetLookalike(market.localnet.rpcUrl);
      try {
        const known = await agentMarket(["admin", "pause", "--keypair", authority, "--rpc", lookalike.url]);
        assert.equal(known.code, 1);
        assert.match(known.stderr, /^update_market on mainnet, /m);
        assert.match(known.stderr, /^error: refusing to sign for mainnet without --confirm-mainnet$/m);
        const mismatch = await agentMarket(["admin", "pause", "--keypair", authority, "--rpc", lookalike.url, "--network", "devnet"]);
        assert.equal(mismatch.code, 1);
        assert.equal(mismatch.stderr.trim(), `error: --network devnet, but ${lookalike.url} serves mainnet\nnext: pass the devnet RPC, or --network mainnet`);
        assert.deepEqual(marketFields(await read()), marketFields(before), "nothing was signed");

        const confirmed = await agentMarket(["admin", "pause", "--keypair", authority, "--rpc", lookalike.url, "--confirm-mainnet"]);
        assert.equal(confirmed.code, 0, confirmed.stderr);
        assert.equal((await read()).escrowsPaused, true);
      } finally {
        await lookalike.close();
      }
      const unpaused = await admin("unpause", "--network", "mainnet", "--confirm-mainnet");
      assert.equal(unpaused.code, 0, unpaused.stderr);
      assert.deepEqual(marketFields(await read()), marketFields(before));
    });

    it("what the program refuses, sent or simulated, by the program's error", async () => {
      const before = await read();
      const sent = await admin("update", "--dispute-window-secs", "0");
      assert.equal(sent.code, 1);
      assert.match(
        sent.stderr,
        new RegExp(`^error: update_market failed: ${programError("InvalidMarketParams")}\nnext: nothing was changed; fix the cause and run the command again$`, "m"),
      );
      const simulated = await admin("update", "--collateral-cooldown-secs", "60", "--dry-run");
      assert.equal(simulated.code, 1);
      assert.match(simulated.stderr, new RegExp(`^error: the program would refuse it: ${programError("InvalidMarketParams")}\nnext: nothing was sent$`, "m"));
      assert.deepEqual(marketFields(await read()), marketFields(before));
    });

    it("a program id without a market, an unchanged value, missing or malformed options", async () => {
      const elsewhere = Keypair.generate().publicKey;
      const cases: [string[], number, string][] = [
        [
          ["update", "--min-price", "0.02", "--program-id", elsewhere.toBase58()],
          1,
          `error: no market at ${marketPda(elsewhere).toBase58()} (program ${elsewhere.toBase58()}) on devnet\n` +
            "next: initialize it first: agent-market admin init …, or check --program-id and --rpc",
        ],
        [["update", "--min-collateral", "100"], 1, "error: nothing to change: the market has these values already\nnext: agent-market admin show prints them"],
        [["update"], 2, "agent-market admin: give at least one value to change"],
        [["rotate"], 2, "agent-market admin: give --relayer <address> and/or --arbiter <address>"],
        [["rotate", "--relayer", "nope"], 2, "agent-market admin: --relayer nope is not an address"],
        [["update", "--min-price", "0.02", "--program-id", "nope"], 2, "agent-market admin: --program-id nope is not an address"],
        [["update", "--escrow-grace-secs", "4294967296"], 2, "agent-market admin: --escrow-grace-secs must be an integer from 0 to 4294967295"],
        [["frobnicate"], 2, "agent-market admin: unknown admin action frobnicate"],
      ];
      for (const [args, code, message] of cases) {
        const ran = await admin(...(args as [string, ...string[]]));
        assert.equal(ran.code, code, args.join(" "));
        assert.ok(ran.stderr.startsWith(message), `${args.join(" ")}: ${ran.stderr}`);
      }
      const noKeypair = await agentMarket(["admin", "pause", "--rpc", market.localnet.rpcUrl]);
      assert.equal(noKeypair.code, 2);
      assert.match(noKeypair.stderr, /^agent-market admin: --keypair is required$/m);
      const noRpc = await agentMarket(["admin", "pause", "--keypair", authority], { AGENT_MARKET_RPC_URL: "" });
      assert.equal(noRpc.code, 1);
      assert.equal(noRpc.stderr.trim(), "error: no RPC URL\nnext: pass --rpc <url> (or set AGENT_MARKET_RPC_URL)");
      const fromEnv = await agentMarket(["admin", "show", "--keypair", authority, "--json"], { AGENT_MARKET_RPC_URL: market.localnet.rpcUrl });
      assert.equal(fromEnv.code, 0, fromEnv.stderr);
      assert.equal((JSON.parse(fromEnv.stdout) as { market: string }).market, marketPda(market.programId).toBase58());
    });
  });
});
