import { strict as assert } from "node:assert";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { agentPda, delegatePda, ed25519Verify, parseAddress, parseSigningKeyProof, PROGRAM_ID, verifySigningKeyProof, type CreatorExecuteRequest, type SignBatchRequest } from "@agent-market/program";
import {
  createApproveCheckedInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createRevokeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { utils } from "@coral-xyz/anchor";

import { checkAllowanceTransaction, checkRevokeTransaction } from "../src/commands/allowance.js";
import { compile, sampleFor } from "../src/schema.js";
import {
  ECHO_INPUT_SCHEMA,
  ECHO_OUTPUT_SCHEMA,
  FIXED_CHARGE,
  METERED_CHARGE,
  cli,
  creatorService,
  json,
  serve,
  tempDir,
  type CreatorFault,
  type Server,
} from "./helpers.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";

describe("agent-market", () => {
  describe("usage", () => {
    it("exits 2 with the usage for a missing command, an unknown one, an unknown option or a missing value", async () => {
      for (const argv of [[], ["frobnicate"], ["keygen", "--bogus"], ["keygen"], ["keys"], ["keys", "create"], ["execute", AGENT]]) {
        const ran = await cli(argv);
        assert.equal(ran.code, 2, argv.join(" "));
        assert.match(ran.err, /agent-market/);
        assert.equal(ran.out, "");
      }
      const tooMany = await cli(["keygen", "--out", "x", "extra"]);
      assert.equal(tooMany.code, 2);
      assert.match(tooMany.err, /unexpected argument extra/);
    });

    it("prints the overview and each command's usage on --help, exit 0", async () => {
      const overview = await cli(["--help"]);
      assert.equal(overview.code, 0);
      for (const name of [
        "keygen",
        "key-proof",
        "check",
        "register",
        "status",
        "agents",
        "login",
        "logout",
        "keys",
        "allowance",
        "execute",
        "executions",
        "subscribe",
        "reclaim",
        "dispute",
      ]) {
        assert.match(overview.out, new RegExp(`^  ${name} `, "m"));
        const usage = await cli([name, "--help"]);
        assert.equal(usage.code, 0);
        assert.match(usage.out, new RegExp(`^agent-market ${name}`));
      }
    });
  });

  describe("keygen", () => {
    it("writes a Solana keypair file readable by its owner alone and prints its public key", async () => {
      const out = join(tempDir(), "key.json");
      const ran = await cli(["keygen", "--out", out]);
      assert.equal(ran.code, 0, ran.err);
      const keypair = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(out, "utf8")) as number[]));
      assert.equal(ran.out, keypair.publicKey.toBase58());
      assert.equal(statSync(out).mode & 0o777, 0o600);
    });

    it("refuses to overwrite a file, exit 1, leaving it as it was", async () => {
      const out = join(tempDir(), "key.json");
      writeFileSync(out, "precious");
      const ran = await cli(["keygen", "--out", out]);
      assert.equal(ran.code, 1);
      assert.match(ran.err, /refusing to overwrite/);
      assert.match(ran.err, /^next: /m);
      assert.equal(readFileSync(out, "utf8"), "precious");
    });
  });

  describe("key-proof", () => {
    const signing = Keypair.generate();
    const keyFile = join(tempDir(), "agent-key.json");
    writeFileSync(keyFile, JSON.stringify(Array.from(signing.secretKey)));
    const creator = Keypair.generate().publicKey;
    const agent = Keypair.generate().publicKey;

    it("prints the key's proof for an agent and a creator, which verifies as the program checks it", async () => {
      const ran = await cli(["key-proof", "--signing-key", keyFile, "--creator", creator.toBase58(), "--agent", agent.toBase58()]);
      assert.equal(ran.code, 0, ran.err);
      const proof = parseSigningKeyProof(ran.out);
      assert.ok(proof);
      assert.ok(verifySigningKeyProof(proof, signing.publicKey.toBytes(), agent, creator));
      assert.ok(!verifySigningKeyProof(proof, signing.publicKey.toBytes(), agent, Keypair.generate().publicKey), "bound to the creator");
    });

    it("without an agent, picks a new agent id and proves the key for its address", async () => {
      const ran = await cli(["key-proof", "--signing-key", keyFile, "--creator", creator.toBase58(), "--json"]);
      assert.equal(ran.code, 0, ran.err);
      const out = JSON.parse(ran.out) as { agent_id: string; agent: string; key_proof: string; signing_key: string };
      // Without --program-id or AGENT_MARKET_PROGRAM_ID the CLI names the IDL's program.
      assert.equal(out.agent, agentPda(utils.bytes.bs58.decode(out.agent_id), PROGRAM_ID).toBase58());
      assert.equal(out.signing_key, signing.publicKey.toBase58());
      assert.ok(verifySigningKeyProof(parseSigningKeyProof(out.key_proof)!, signing.publicKey.toBytes(), out.agent, creator));
    });

    it("refuses an address that is not one, exit 2", async () => {
      const ran = await cli(["key-proof", "--signing-key", keyFile, "--creator", "nope"]);
      assert.equal(ran.code, 2);
      assert.match(ran.err, /--creator nope is not an address/);
    });

    it("register --key-proof takes the key's public key and the agent id the proof names, before anything is sent", async () => {
      const wallet = join(tempDir(), "creator.json");
      writeFileSync(wallet, JSON.stringify(Array.from(Keypair.generate().secretKey)));
      const base = ["register", "--keypair", wallet, "--endpoint", "https://agent.example.com", "--listing", "l.json", "--price", "0.25"];
      const rest = ["--api", "http://127.0.0.1:9", "--rpc", "http://127.0.0.1:9"];
      const proof = utils.bytes.bs58.encode(new Uint8Array(64).fill(7));
      const noId = await cli([...base, "--signing-key", signing.publicKey.toBase58(), "--key-proof", proof, ...rest]);
      assert.equal(noId.code, 2);
      assert.match(noId.err, /--key-proof names an agent: pass the --agent-id it was made for/);
      const id = utils.bytes.bs58.encode(new Uint8Array(16).fill(1));
      const notKey = await cli([...base, "--signing-key", keyFile, "--key-proof", proof, "--agent-id", id, ...rest]);
      assert.equal(notKey.code, 2);
      assert.match(notKey.err, /with --key-proof, --signing-key is the key's public key/);
      const badProof = await cli([...base, "--signing-key", signing.publicKey.toBase58(), "--key-proof", "abc", "--agent-id", id, ...rest]);
      assert.equal(badProof.code, 2);
      assert.match(badProof.err, /--key-proof is not base58 of a 64-byte signature/);
    });
  });

  describe("check", () => {
    const marketplace = Keypair.generate();
    const signing = Keypair.generate();
    const dir = tempDir();
    const files = {
      marketplace: join(dir, "marketplace.json"),
      input: join(dir, "input.json"),
      output: join(dir, "output.json"),
    };
    writeFileSync(files.marketplace, JSON.stringify(Array.from(marketplace.secretKey)));
    writeFileSync(files.input, JSON.stringify(ECHO_INPUT_SCHEMA));
    writeFileSync(files.output, JSON.stringify(ECHO_OUTPUT_SCHEMA));
    let service: Server | undefined;
    afterEach(async () => service?.close());

    async function check(fault: CreatorFault, ...extra: string[]) {
      service = await creatorService(marketplace, signing, fault);
      const args = ["check", `${service.url}/agent`, "--key", signing.publicKey.toBase58(), "--input-schema", files.input];
      return cli([...args, "--output-schema", files.output, "--marketplace-keypair", files.marketplace, "--json", ...extra]);
    }
    const statuses = (ran: { out: string }) =>
      Object.fromEntries((JSON.parse(ran.out) as { checks: { check: string; status: string }[] }).checks.map((c) => [c.check, c.status]));

    it("passes a conforming service, probing it as the relayer does, with parameters from the input schema", async () => {
      const ran = await check("none");
      assert.equal(ran.code, 0, ran.out + ran.err);
      // A service that does not stream: its streamed probe is answered JSON, the stream rows skipped.
      assert.deepEqual(Object.values(statuses(ran)), [...Array(11).fill("pass"), ...Array(4).fill("skip"), ...Array(2).fill("pass")]);
      assert.equal(service!.requests.filter((r) => r.headers.accept === "text/event-stream, application/json").length, 1);
      assert.deepEqual(Object.keys(statuses(ran)).slice(-2), ["batch signature", "batch refuses unknown results"]);
      const probe = service!.requests.find((r) => r.url === "/agent/execute")!;
      const body = probe.body as { task: string; parameters: unknown; request_hash: string };
      assert.deepEqual(body.parameters, { language: "en" });
      assert.equal(body.task, "Agent Market conformance probe: answer as you would a paid call.");
    });

    it("fails, exit 1, one row per broken rule", async () => {
      const cases: [CreatorFault, Record<string, string>][] = [
        ["wrong_key", { signature: "fail" }],
        ["bad_output", { output: "fail" }],
        ["accepts_unsigned", { "refuses unsigned": "fail", "refuses replays": "fail" }],
        ["wrong_batch_key", { "batch signature": "fail" }],
        ["signs_any_batch", { "batch refuses unknown results": "fail" }],
      ];
      for (const [fault, expected] of cases) {
        const ran = await check(fault);
        assert.equal(ran.code, 1, fault);
        const got = statuses(ran);
        for (const [row, status] of Object.entries(expected)) assert.equal(got[row], status, `${fault}: ${row}`);
        assert.equal(Object.values(got).filter((s) => s === "fail").length, Object.keys(expected).length, `${fault}: ${ran.out}`);
        await service!.close();
      }
    });

    it("passes a streaming service: its streamed probe's events in order, its result signing what was streamed", async () => {
      const ran = await check("streams");
      assert.equal(ran.code, 0, ran.out + ran.err);
      const got = statuses(ran);
      for (const row of ["stream", "stream order", "stream signature", "stream output"]) assert.equal(got[row], "pass", row);
      assert.equal(Object.values(got).filter((s) => s !== "pass").length, 0, ran.out);
    });

    it("fails a stream whose result signs another output than the one streamed, or whose seq has a gap", async () => {
      const forged = await check("stream_forged");
      assert.equal(forged.code, 1);
      const rows = JSON.parse(forged.out).checks as { check: string; status: string; detail: string }[];
      const signature = rows.find((r) => r.check === "stream signature")!;
      assert.equal(signature.status, "fail");
      assert.match(signature.detail, /does not sign what was streamed/);
      assert.deepEqual(rows.filter((r) => r.status === "fail").map((r) => r.check), ["stream signature"]);
      await service!.close();
      const gap = await check("stream_gap");
      assert.equal(gap.code, 1);
      assert.equal(statuses(gap)["stream order"], "fail");
      assert.equal(statuses(gap)["stream signature"], "skip");
    });

    it("asks /sign-batch only for a result that verified: a wrong result key skips both batch rows", async () => {
      const ran = await check("wrong_key");
      assert.equal(statuses(ran)["batch signature"], "skip");
      assert.equal(statuses(ran)["batch refuses unknown results"], "skip");
      assert.equal(service!.requests.filter((r) => r.url === "/agent/sign-batch").length, 0);
    });

    it("warns, exit 0, when the service has no /sign-batch (settlements then carry a signature per call)", async () => {
      const ran = await check("no_sign_batch");
      assert.equal(ran.code, 0, ran.out);
      const got = statuses(ran);
      assert.equal(got["batch signature"], "warn");
      assert.equal(got["batch refuses unknown results"], "skip");
      assert.equal(Object.values(got).filter((s) => s === "pass").length, 11);
    });

    it("asks for the probe's own result, then for one whose result hash it never signed", async () => {
      await check("none");
      const [own, forged] = service!.requests.filter((r) => r.url === "/agent/sign-batch").map((r) => r.body as SignBatchRequest);
      const probe = service!.requests.find((r) => r.url === "/agent/execute")!.body as CreatorExecuteRequest;
      assert.equal(own!.agent, probe.agent);
      assert.equal(own!.items.length, 1);
      assert.equal(own!.items[0]!.execution_id, probe.execution_id);
      assert.equal(own!.items[0]!.request_hash, probe.request_hash);
      assert.deepEqual({ ...forged!.items[0]!, result_hash: own!.items[0]!.result_hash }, own!.items[0]);
      assert.notEqual(forged!.items[0]!.result_hash, own!.items[0]!.result_hash);
    });

    it("uses --parameters when given, refusing ones the input schema does not accept", async () => {
      const ran = await check("none", "--parameters", '{"language":"fr","max_words":3}');
      assert.equal(ran.code, 0, ran.out);
      assert.deepEqual((service!.requests.find((r) => r.url === "/agent/execute")!.body as { parameters: unknown }).parameters, {
        language: "fr",
        max_words: 3,
      });
      await service!.close();
      const refused = await check("none", "--parameters", '{"language":"de"}');
      assert.equal(refused.code, 1);
      assert.equal(statuses(refused).parameters, "fail");
      assert.equal(statuses(refused)["signed request"], "skip");
    });

    describe("a metered agent (--price-per-unit, --max-units-per-call)", () => {
      const METERED = ["--price-per-unit", "0.001", "--max-units-per-call", "100"];
      const probes = () => service!.requests.filter((r) => r.url === "/agent/execute").map((r) => r.body as CreatorExecuteRequest);
      const details = (ran: { out: string }) =>
        Object.fromEntries((JSON.parse(ran.out) as { checks: { check: string; detail: string }[] }).checks.map((c) => [c.check, c.detail]));

      it("probes with the call's terms, checks the units signed, and that a call allowing fewer is refused", async () => {
        const ran = await check("metered", ...METERED);
        assert.equal(ran.code, 0, ran.out);
        const got = statuses(ran);
        assert.deepEqual(Object.values(got), [...Array(12).fill("pass"), ...Array(4).fill("skip"), ...Array(3).fill("pass")]);
        assert.equal(details(ran)["metered units"], "units 3 signed in the result digest, within the call's max_units 100: a paid call answered so is charged 0.003000 USDC");
        assert.equal(details(ran)["refuses units above max_units"], "a call allowing 2 units (the probe used 3) got 500 invalid_output: nothing signed, the call refunded");
        const [probe, , , streamed, fewer] = probes();
        assert.equal(probe!.max_units, "100");
        assert.equal(streamed!.max_units, "100", "the streamed probe carries the terms too");
        assert.equal(probe!.price_per_unit_usdc, "0.001000");
        assert.equal(fewer!.max_units, "2");
        assert.deepEqual(fewer!.parameters, probe!.parameters);
        assert.notEqual(fewer!.execution_id, probe!.execution_id);
        // The batch item carries the units the probe signed.
        const batch = service!.requests.find((r) => r.url === "/agent/sign-batch")!.body as SignBatchRequest;
        assert.equal(batch.items[0]!.units, "3");
      });

      it("passes a service that answers no more units than a call allows", async () => {
        const ran = await check("metered_capped", ...METERED);
        assert.equal(ran.code, 0, ran.out);
        assert.equal(details(ran)["refuses units above max_units"], "a call allowing 2 units (the probe used 3) was answered with 2 units: it stopped at the maximum");
      });

      it("fails, exit 1, a service that signs units above a call's max_units", async () => {
        const ran = await check("metered_above_max", ...METERED);
        assert.equal(ran.code, 1);
        const got = statuses(ran);
        assert.equal(got["refuses units above max_units"], "fail");
        assert.equal(Object.values(got).filter((status) => status === "fail").length, 1, ran.out);
        assert.match(details(ran)["refuses units above max_units"]!, /was signed, and units 3 are above the call's max_units 2: .*UnitsAboveMaximum/);

        await service!.close();
        const tight = await check("metered_above_max", "--price-per-unit", "0.001", "--max-units-per-call", "2");
        assert.equal(tight.code, 1);
        assert.equal(statuses(tight)["metered units"], "fail");
        assert.equal(statuses(tight)["refuses units above max_units"], "fail");
        assert.equal(statuses(tight).signature, "pass", "the answer was signed: that is what is wrong");
      });

      it("warns about an answer without units, which charges a metered call nothing", async () => {
        const ran = await check("none", ...METERED);
        assert.equal(ran.code, 0, ran.out);
        assert.equal(statuses(ran)["metered units"], "warn");
        assert.equal(statuses(ran)["refuses units above max_units"], "skip");
      });

      it("takes both terms or neither", async () => {
        const ran = await cli(["check", "http://127.0.0.1:1", "--key", signing.publicKey.toBase58(), "--price-per-unit", "0.001"]);
        assert.equal(ran.code, 2);
        assert.match(ran.err, /both --price-per-unit and --max-units-per-call/);
        const zero = await cli(["check", "http://127.0.0.1:1", "--key", signing.publicKey.toBase58(), ...METERED.slice(0, 2), "--max-units-per-call", "0"]);
        assert.equal(zero.code, 2);
        assert.match(zero.err, /--max-units-per-call must be a whole number from 1/);
      });
    });

    it("signs with a test marketplace key of its own when none is given, and says so", async () => {
      service = await creatorService(marketplace, signing);
      const home = tempDir();
      const args = ["check", `${service.url}/agent`, "--key", signing.publicKey.toBase58(), "--input-schema", files.input, "--output-schema", files.output];
      const ran = await cli(args, { AGENT_MARKET_HOME: home });
      assert.equal(ran.code, 1);
      assert.match(ran.err, /Signing as the test marketplace key (\w+): start your service trusting it/);
      assert.match(ran.out, /^signed request\s+FAIL\s+POST \/agent\/execute answered 401 unexpected_key: does the service trust/m);
      const again = await cli(args, { AGENT_MARKET_HOME: home });
      assert.equal(/key (\w+):/.exec(again.err)![1], /key (\w+):/.exec(ran.err)![1], "the same key every run");
    });
  });

  describe("consumer commands against a fake API", () => {
    let api: Server;
    afterEach(async () => api?.close());
    const wallet = Keypair.generate();

    async function fakeApi(answers: Record<string, (body: unknown) => [number, unknown]>): Promise<void> {
      api = await serve((request, _raw, res) => {
        const route = Object.keys(answers).find((prefix) => `${request.method} ${request.url}`.startsWith(prefix));
        if (!route) return json(res, 404, { error: { type: "not_found_error", code: "route_not_found", message: "no", request_id: "r" } });
        const [status, body] = answers[route]!(request.body);
        json(res, status, body);
      });
    }

    it("login keeps a verified session in a 0600 config file; logout signs out and forgets it", async () => {
      const message = `agents wants you to sign in with your Solana account:\n${wallet.publicKey.toBase58()}\n\nNonce: n1`;
      await fakeApi({
        "POST /v1/auth/nonce": () => [201, { message }],
        "POST /v1/auth/session": (body) => {
          const { signature } = body as { signature: string };
          const ok = ed25519Verify(utils.bytes.bs58.decode(signature), new TextEncoder().encode(message), parseAddress(wallet.publicKey.toBase58())!);
          return ok ? [201, { token: "sess_t", id: "s", wallet: wallet.publicKey.toBase58(), expires_at: "2030-01-01T00:00:00Z" }] : [401, {}];
        },
        "GET /v1/auth/session": () => [200, { id: "s", wallet: wallet.publicKey.toBase58(), expires_at: "2030-01-01T00:00:00Z" }],
        "DELETE /v1/auth/session": () => [200, { id: "s", wallet: wallet.publicKey.toBase58() }],
      });
      const home = tempDir();
      const keyFile = join(home, "wallet.json");
      writeFileSync(keyFile, JSON.stringify(Array.from(wallet.secretKey)));
      const login = await cli(["login", "--keypair", keyFile, "--api", api.url, "--rpc", "http://127.0.0.1:8899"], { AGENT_MARKET_HOME: home });
      assert.equal(login.code, 0, login.err);
      assert.equal(login.out, `Signed in as ${wallet.publicKey.toBase58()} until 2030-01-01T00:00:00Z`);
      const path = join(home, "config.json");
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const config = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
      assert.deepEqual(config, {
        api: api.url,
        rpc: "http://127.0.0.1:8899",
        keypair: keyFile,
        session: { token: "sess_t", wallet: wallet.publicKey.toBase58(), expires_at: "2030-01-01T00:00:00Z" },
      });

      const logout = await cli(["logout"], { AGENT_MARKET_HOME: home });
      assert.equal(logout.code, 0, logout.err);
      assert.equal(api.requests.at(-1)!.headers.authorization, "Bearer sess_t");
      assert.equal(api.requests.at(-1)!.method, "DELETE");
      assert.equal((JSON.parse(readFileSync(path, "utf8")) as { session?: unknown }).session, undefined);
    });

    const listing = () => [200, { object: "agent", id: AGENT, name: "Echo", pricing: { model: "pay_per_use", price_usdc: "0.250000" } }] as [number, unknown];

    it("execute prints the output on stdout and the charge on stderr, sending the listing's price as the maximum", async () => {
      await fakeApi({
        [`GET /v1/agents/${AGENT}?network=devnet`]: listing,
        [`POST /v1/agents/${AGENT}/execute`]: () => [
          200,
          {
            id: "exec_1",
            status: "succeeded",
            output: { echoed: "hi" },
            charge: FIXED_CHARGE,
            transactions: { settlement: "sig" },
          },
        ],
      });
      const ran = await cli(["execute", AGENT, "--task", "hi", "--params", '{"language":"en"}', "--api", api.url], { AGENT_MARKET_API_KEY: "svc_test_k" });
      assert.equal(ran.code, 0, ran.err);
      assert.deepEqual(JSON.parse(ran.out), { echoed: "hi" });
      assert.equal(ran.err, "Charged 0.250000 USDC (0.247500 to the creator, 0.002500 fee) for exec_1, settled in sig");
      assert.equal(api.requests[1]!.headers.authorization, "Bearer svc_test_k");
      assert.deepEqual(api.requests[1]!.body, { task: "hi", parameters: { language: "en" }, max_price_usdc: "0.250000" });
    });

    describe("a metered agent", () => {
      const pricing = { model: "metered", price_per_unit_usdc: "0.001000", unit: "100 words", max_units_per_call: "100" };
      const execution = {
        object: "execution",
        id: "exec_m",
        agent: AGENT,
        status: "succeeded",
        output: { words: 250 },
        charge: METERED_CHARGE,
        transactions: { escrow: "open_sig", settlement: "sig", refund: null, confirmation: "confirmed" },
        failure: null,
        created_at: "2030-01-01T00:00:00Z",
      };

      it("status prints its price as the most a call costs and the price of a unit", async () => {
        await fakeApi({ [`GET /v1/agents/${AGENT}?network=devnet`]: () => [200, { object: "agent", id: AGENT, name: "Words", status: "active", pricing }] });
        const ran = await cli(["status", "--agent", AGENT, "--api", api.url]);
        assert.equal(ran.code, 0, ran.err);
        assert.match(ran.out, /^price\s+up to 0\.100000 USDC, 0\.001000 per 100 words$/m);
      });

      it("execute holds the most a call costs, then prints the units charged and what was returned", async () => {
        await fakeApi({
          [`GET /v1/agents/${AGENT}?network=devnet`]: () => [200, { object: "agent", id: AGENT, name: "Words", pricing }],
          [`POST /v1/agents/${AGENT}/execute`]: () => [200, execution],
        });
        const ran = await cli(["execute", AGENT, "--task", "count", "--api", api.url], { AGENT_MARKET_API_KEY: "svc_test_k" });
        assert.equal(ran.code, 0, ran.err);
        assert.equal((api.requests[1]!.body as { max_price_usdc: string }).max_price_usdc, "0.100000");
        assert.equal(
          ran.err,
          "Charged 0.003000 USDC for 3 units at 0.001000 USDC, 0.097000 of the 0.100000 held returned (0.002970 to the creator, 0.000030 fee) for exec_m, settled in sig",
        );
      });

      it("executions get and list show its units, what was held and what was returned", async () => {
        const fixed = { ...execution, id: "exec_f", charge: FIXED_CHARGE };
        await fakeApi({
          "GET /v1/executions/exec_m": () => [200, execution],
          "GET /v1/executions?": () => [200, { object: "list", data: [execution, fixed], has_more: false }],
        });
        const env = { AGENT_MARKET_API_KEY: "svc_test_k" };
        const got = await cli(["executions", "get", "exec_m", "--api", api.url], env);
        assert.equal(got.code, 0, got.err);
        assert.match(got.out, /^charged\s+0\.003000 USDC for 3 units at 0\.001000 USDC, 0\.097000 of the 0\.100000 held returned$/m);
        assert.match(got.out, /^held\s+0\.100000 USDC$/m);
        assert.match(got.out, /^returned\s+0\.097000 USDC$/m);
        assert.match(got.out, /^units\s+3 of at most 100$/m);
        const listed = await cli(["executions", "list", "--api", api.url], env);
        assert.equal(listed.code, 0, listed.err);
        const [header, metered, flat] = listed.out.split("\n").map((line) => line.split(/\s+/));
        assert.deepEqual(header, ["ID", "AGENT", "STATUS", "CHARGED", "RETURNED", "UNITS", "CREATED"]);
        assert.deepEqual(metered, ["exec_m", AGENT, "succeeded", "0.003000", "0.097000", "3/100", "2030-01-01T00:00:00Z"]);
        assert.deepEqual(flat, ["exec_f", AGENT, "succeeded", "0.250000", "0.000000", "2030-01-01T00:00:00Z"], "a fixed-price call has no units");
      });
    });

    it("execute sends --max-price as given, and explains price_above_maximum with the --max-price that agrees to it", async () => {
      await fakeApi({
        [`POST /v1/agents/${AGENT}/execute`]: () => [
          409,
          {
            error: {
              type: "conflict_error",
              code: "price_above_maximum",
              message: "The call costs 0.500000 USDC, more than max_price_usdc 0.250000: nothing was sent.",
              request_id: "r",
              price_usdc: "0.500000",
              max_price_usdc: "0.250000",
            },
          },
        ],
      });
      const ran = await cli(["execute", AGENT, "--task", "hi", "--max-price", "0.250000", "--api-key", "svc_test_k", "--api", api.url]);
      assert.equal(ran.code, 1);
      assert.equal(api.requests.length, 1, "no listing read with --max-price");
      assert.deepEqual(api.requests[0]!.body, { task: "hi", parameters: {}, max_price_usdc: "0.250000" });
      assert.match(ran.err, /^error: price_above_maximum: The call costs 0\.500000 USDC/);
      assert.match(ran.err, /next: pass --max-price 0\.500000 to agree to the new price/);
    });

    it("execute explains a 402: the shortfall and the command that fixes it, exit 1", async () => {
      const shortfall = (code: string, extra: Record<string, string> = {}) => () =>
        [
          402,
          {
            error: {
              type: "payment_error",
              code,
              message: code,
              request_id: "r",
              required_usdc: "0.250000",
              balance_usdc: "0.100000",
              allowance_usdc: "0.050000",
              mint: "MintX",
              network: "devnet",
              ...extra,
            },
          },
        ] as [number, unknown];
      const cases: [string, RegExp[]][] = [
        ["insufficient_allowance", [/allows the marketplace 0\.050000 USDC \(balance 0\.100000 USDC\)/, /next: agent-market allowance set 0\.250000/]],
        ["insufficient_balance", [/the wallet holds 0\.100000 USDC/, /next: send at least 0\.150000 USDC \(mint MintX, devnet\)/]],
        ["spending_cap_reached", [/past the key's spending cap/, /next: use a key with a higher cap/]],
      ];
      for (const [code, patterns] of cases) {
        await fakeApi({ [`GET /v1/agents/${AGENT}`]: listing, "POST /v1/agents": shortfall(code) });
        const ran = await cli(["execute", AGENT, "--task", "hi", "--api-key", "svc_test_k", "--api", api.url]);
        assert.equal(ran.code, 1, code);
        assert.equal(ran.out, "");
        assert.match(ran.err, new RegExp(`^error: ${code}: this call costs 0\\.250000 USDC`));
        for (const pattern of patterns) assert.match(ran.err, pattern, code);
        await api.close();
      }
    });

    it("execute without an API key exits 1 and says where one comes from", async () => {
      const ran = await cli(["execute", AGENT, "--task", "hi", "--api", "http://127.0.0.1:1"], { AGENT_MARKET_API_KEY: undefined });
      assert.equal(ran.code, 1);
      assert.match(ran.err, /^error: no API key\nnext: pass --api-key/);
    });

    it("takes the RPC URL from --rpc, else AGENT_MARKET_RPC_URL, and says where one comes from without either", async () => {
      const none = await cli(["reclaim", "exec_1111111111111111", "--keypair", join(tempDir(), "missing.json")]);
      assert.equal(none.code, 1);
      assert.match(none.err, /^error: cannot read /);
      const key = join(tempDir(), "k.json");
      writeFileSync(key, JSON.stringify(Array.from(Keypair.generate().secretKey)));
      const noRpc = await cli(["reclaim", "exec_1111111111111111", "--keypair", key, "--json"]);
      assert.equal(noRpc.code, 1);
      assert.deepEqual(JSON.parse(noRpc.out), {
        error: { code: "failed", message: "no RPC URL", next: "pass --rpc <url> (or set AGENT_MARKET_RPC_URL, or run agent-market login --rpc <url>)" },
      });
      // An address nothing listens on: the command got as far as the RPC named by the environment.
      const fromEnv = await cli(["reclaim", "exec_1111111111111111", "--keypair", key], { AGENT_MARKET_RPC_URL: "http://127.0.0.1:9" });
      assert.equal(fromEnv.code, 1);
      assert.match(fromEnv.err, /127\.0\.0\.1:9|ECONNREFUSED|fetch failed/);
    });

    it("reports wrong usage as JSON on stdout with --json, exit 2, and checks dispute options", async () => {
      const cases: [string[], string][] = [
        [["dispute", "resolve", "exec_1111111111111111", "--keypair", "k"], "give --uphold --slash <usdc> or --reject"],
        [["dispute", "resolve", "exec_1111111111111111", "--reject", "--slash", "1", "--keypair", "k"], "--reject slashes nothing: leave out --slash"],
        [["dispute", "resolve", "exec_1111111111111111", "--uphold", "--slash", "0", "--keypair", "k"], "--slash must be more than 0 to uphold"],
        [["dispute", "open", "exec_1111111111111111"], "give --statement or --statement-file (one of them)"],
        [["dispute", "list", "--role", "judge"], "--role is payer, creator or arbiter"],
        [["dispute", "frobnicate"], "unknown dispute command frobnicate"],
        [["dispute", "open", "exec_1111111111111111", "--statement", "s", "--nonce", "3"], "--nonce picks an escrow in the chain's receipt log history: give --agent too"],
        [
          ["dispute", "open", "exec_1111111111111111", "--statement", "s", "--indexer", "http://127.0.0.1:9", "--agent", AGENT],
          "--agent and --nonce rebuild the proof from the chain: leave out --indexer (and AGENT_MARKET_INDEXER_URL)",
        ],
        [["dispute", "open", "exec_1111111111111111", "--statement", "s", "--agent", "nope"], "--agent nope is not a base58 address"],
        [["dispute", "open", "exec_1111111111111111", "--statement", "s", "--agent", AGENT, "--nonce", "1.5"], "--nonce 1.5 is not the decimal string of a u64"],
        [["dispute", "open", "exec_1111111111111111", "--statement", "s", "--answer", "--agent", AGENT], "--answer signs nothing: leave out --agent and --nonce"],
        [["dispute", "resolve", "exec_1111111111111111", "--reject", "--leaf", "x", "--keypair", "k"], "--leaf x is not the decimal string of a u64"],
        [["dispute", "close", "exec_1111111111111111", "--leaf", "01", "--keypair", "k"], "--leaf 01 is not the decimal string of a u64"],
        [["agents", "topup", "not-an-address", "1"], "not-an-address is not an address"],
        [["reclaim", "exec_0"], "exec_0 is not an execution id (exec_…)"],
      ];
      for (const [argv, message] of cases) {
        const ran = await cli([...argv, "--json"]);
        assert.equal(ran.code, 2, argv.join(" "));
        const body = JSON.parse(ran.out) as { error: { code: string; message: string } };
        assert.equal(body.error.code, "usage");
        assert.equal(body.error.message, message);
        assert.equal(ran.err, "");
      }
    });

    it("takes the program id from --program-id, else AGENT_MARKET_PROGRAM_ID, in every command that reaches the program", async () => {
      const commands = [
        ["agents", "retire", AGENT],
        ["agents", "withdraw", AGENT],
        ["agents", "topup", AGENT, "1"],
        ["dispute", "open", "exec_1111111111111111", "--statement", "late", "--agent", AGENT],
        ["dispute", "resolve", "exec_1111111111111111", "--reject", "--keypair", "k"],
        ["dispute", "close", "exec_1111111111111111", "--keypair", "k"],
        ["reclaim", "exec_1111111111111111"],
      ];
      for (const argv of commands) {
        const option = await cli([...argv, "--program-id", "0OIl", "--json"]);
        assert.equal(option.code, 2, argv.join(" "));
        const { error } = JSON.parse(option.out) as { error: { code: string; message: string } };
        assert.deepEqual([error.code, error.message], ["usage", "--program-id 0OIl is not an address"]);
        const env = await cli([...argv, "--json"], { AGENT_MARKET_PROGRAM_ID: "0OIl" });
        assert.equal(env.code, 1, argv.join(" "));
        assert.deepEqual(JSON.parse(env.out), {
          error: { code: "failed", message: "AGENT_MARKET_PROGRAM_ID 0OIl is not an address", next: "set it to the program id of the network, or unset it" },
        });
      }
    });

    it("session commands ask to sign in first", async () => {
      for (const argv of [["keys", "list"], ["keys", "create", "--name", "x"], ["allowance", "set", "1", "--rpc", "http://x", "--keypair", "k"]]) {
        const ran = await cli(argv);
        assert.equal(ran.code, 1, argv.join(" "));
        assert.match(ran.err, /next: /);
      }
    });
  });

  describe("the allowance transaction", () => {
    const wallet = Keypair.generate();
    const mint = Keypair.generate().publicKey;
    const tokenAccount = getAssociatedTokenAddressSync(mint, wallet.publicKey);
    const funding = { usdc_mint: mint.toBase58() } as Parameters<typeof checkAllowanceTransaction>[2];
    // Any deployment's id: the check holds the approval to that program's delegate.
    const programId = Keypair.generate().publicKey;
    const approve = (delegate: PublicKey = delegatePda(programId), amount = 1_000_000n, owner = wallet.publicKey) =>
      createApproveCheckedInstruction(tokenAccount, mint, delegate, owner, amount, 6);
    const transaction = (...instructions: Parameters<Transaction["add"]>) => {
      const tx = new Transaction({ feePayer: wallet.publicKey, blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 1 });
      return tx.add(...instructions);
    };

    it("accepts what the API builds: maybe the wallet's USDC account, then one approveChecked to the delegate", () => {
      checkAllowanceTransaction(transaction(approve()), wallet.publicKey, funding, 1_000_000n, programId);
      const create = createAssociatedTokenAccountIdempotentInstruction(wallet.publicKey, tokenAccount, wallet.publicKey, mint);
      checkAllowanceTransaction(transaction(create, approve()), wallet.publicKey, funding, 1_000_000n, programId);
    });

    it("accepts one revoke on the wallet's own USDC account, and nothing else", () => {
      const stranger = Keypair.generate().publicKey;
      checkRevokeTransaction(transaction(createRevokeInstruction(tokenAccount, wallet.publicKey)), wallet.publicKey, funding);
      const cases: [Transaction, RegExp][] = [
        [transaction(createRevokeInstruction(getAssociatedTokenAddressSync(mint, stranger), wallet.publicKey)), /revokes on another token account/],
        [transaction(createRevokeInstruction(tokenAccount, stranger)), /another owner signs the revoke/],
        [transaction(createRevokeInstruction(tokenAccount, wallet.publicKey), approve()), /holds 2 instructions, not one revoke/],
        [transaction(approve()), /other than revoke/],
        [transaction(SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: stranger, lamports: 1 })), /calls 1111/],
        [new Transaction({ feePayer: stranger, blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 1 }).add(createRevokeInstruction(tokenAccount, wallet.publicKey)), /fee/],
      ];
      for (const [tx, reason] of cases) assert.throws(() => checkRevokeTransaction(tx, wallet.publicKey, funding), reason);
    });

    it("takes a compute unit limit before what was asked, and refuses a unit price the wallet would pay", () => {
      const limit = ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 });
      checkRevokeTransaction(transaction(limit, createRevokeInstruction(tokenAccount, wallet.publicKey)), wallet.publicKey, funding);
      checkAllowanceTransaction(transaction(limit, approve()), wallet.publicKey, funding, 1_000_000n, programId);
      const price = ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 });
      assert.throws(
        () => checkRevokeTransaction(transaction(limit, price, createRevokeInstruction(tokenAccount, wallet.publicKey)), wallet.publicKey, funding),
        /sets more of the compute budget than a unit limit/,
      );
      assert.throws(
        () => checkAllowanceTransaction(transaction(price, approve()), wallet.publicKey, funding, 1_000_000n, programId),
        /sets more of the compute budget than a unit limit/,
      );
    });

    it("refuses to sign anything else", () => {
      const stranger = Keypair.generate().publicKey;
      const cases: [Transaction, RegExp][] = [
        [transaction(approve(stranger)), /not the program's delegate/],
        [transaction(approve(undefined, 2_000_000n)), /approves 2\.000000 USDC, not 1\.000000/],
        [transaction(approve(), SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: stranger, lamports: 1 })), /calls 1111/],
        [transaction(approve(), approve()), /2 approvals/],
        [transaction(createTransferCheckedInstruction(tokenAccount, mint, stranger, wallet.publicKey, 1n, 6)), /other than approveChecked/],
        [new Transaction({ feePayer: stranger, blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 1 }).add(approve()), /fee/],
      ];
      for (const [tx, reason] of cases) {
        assert.throws(() => checkAllowanceTransaction(tx, wallet.publicKey, funding, 1_000_000n, programId), reason);
      }
    });
  });

  describe("probe parameters", () => {
    it("come from examples, defaults, enums and minimal values, as the relayer builds them", () => {
      const cases: [Record<string, unknown>, unknown][] = [
        [ECHO_INPUT_SCHEMA, { language: "en" }],
        [{ type: "object" }, {}],
        [{ type: "object", examples: [{ a: 1 }] }, { a: 1 }],
        [{ type: "object", required: ["n", "s", "b"], properties: { n: { type: "integer", minimum: 3 }, s: { type: "string", minLength: 7 }, b: { type: "boolean" } } }, { n: 3, s: "probepr", b: false }],
        [{ type: "object", required: ["id"], properties: { id: { type: "string", pattern: "^[0-9]+$" } } }, null],
      ];
      for (const [schema, expected] of cases) assert.deepEqual(sampleFor(schema, compile(schema)), expected, JSON.stringify(schema));
    });
  });
});
