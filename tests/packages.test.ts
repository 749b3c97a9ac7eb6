// The SDK packages as a newcomer gets them. `npm pack` of @agent-market/program, client, creator
// and cli holds what a published package should, and nothing else; the four tarballs, installed
// into an empty folder (the registry serves only their third-party dependencies), type-check and
// run the documentation's examples against localnet and a relayer: the creator kit's quick start
// (sdk/creator/README.md) serves an agent, the installed `agent-market` makes a key and registers
// and lists the agent, a consumer follows "A consumer from scratch" (docs/sdk.md), and the
// client's quick start and receipt verification run against them.
//
// It lives in tests/, not in a package's own test folder, because it spans the four packages and
// needs the chain and the relayer that only these end-to-end fixtures start.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { agentPda } from "@agent-market/program";
import { freePort } from "@agent-market/service";
import { utils } from "@coral-xyz/anchor";

import { MIN_COLLATERAL_USDC, randomId, TestMarket, USDC } from "./src/fixtures.js";
import { REPO_ROOT, sleep } from "./src/localnet.js";
import { codeBlock, substitute } from "./src/markdown-blocks.js";
import { startRelayer, type RunningRelayer } from "./src/relayer.js";
import { run, type Run } from "./src/run.js";

const PACKAGES = ["program", "client", "creator", "cli"].map((name) => ({
  name: `@agent-market/${name}`,
  dir: join(REPO_ROOT, "sdk", name),
}));
const SDK_DOC = join(REPO_ROOT, "docs", "sdk.md");
const CREATOR_README = join(REPO_ROOT, "sdk", "creator", "README.md");
const DEPLOY_DOC = join(REPO_ROOT, "docs", "deploy.md");
const require = createRequire(import.meta.url);
const TSC = require.resolve("typescript/bin/tsc");
/** Node's typings for the examples, this package's own: a newcomer's project has its own too. */
const NODE_TYPE_ROOT = dirname(dirname(require.resolve("@types/node/package.json")));
/** What the examples' own code needs beside the packages, from the registry as a newcomer gets it. */
const EXAMPLE_DEPENDENCIES = ["@solana/web3.js@1.99.0"];


/** The environment of a child npm: what `npm test -w …` set for this process is not for it. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(config_(workspaces?|include_workspace_root|if_present|ignore_scripts|prefix|global|location)|package_|lifecycle_)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function runIn(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  return run(command, args, { cwd: options.cwd, env: childEnv(options.env) });
}

function succeeded(result: Run, what: string): Run {
  assert.equal(result.code, 0, `${what} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

interface PackedFile {
  path: string;
}
interface Packed {
  name: string;
  version: string;
  filename: string;
  files: PackedFile[];
}

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  publishConfig?: { access?: string };
  license?: string;
  files?: string[];
  types?: string;
  main?: string;
  bin?: Record<string, string>;
  exports?: Record<string, string | { types?: string; import?: string }>;
  dependencies?: Record<string, string>;
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
}

/** `npm pack` of the four workspaces: to `destination`, or only listed with `--dry-run`. */
async function pack(destination?: string): Promise<Packed[]> {
  const args = ["pack", "--json", ...(destination ? ["--pack-destination", destination] : ["--dry-run"])];
  for (const { name } of PACKAGES) args.push("--workspace", name);
  const result = succeeded(await runIn("npm", args, { cwd: REPO_ROOT }), "npm pack");
  const packed = JSON.parse(result.stdout) as Packed[];
  assert.deepEqual(packed.map((p) => p.name), PACKAGES.map((p) => p.name));
  return packed;
}

/** The relative path of a package entry (`./dist/x.js` → `dist/x.js`). */
const entry = (path: string) => path.replace(/^\.\//, "");

describe("SDK packages: npm pack contents", function () {
  this.timeout(120_000);
  let packed: Packed[];

  before(async function () {
    for (const { dir } of PACKAGES) {
      if (!existsSync(join(dir, "dist"))) throw new Error(`${dir}/dist is missing: run npm run build --workspaces first`);
    }
    packed = await pack();
  });

  it("each tarball holds only dist (JavaScript and typings, no source maps, no tests), the README, the LICENSE and package.json", () => {
    for (const { name, files } of packed) {
      const paths = files.map((f) => f.path).sort();
      const stray = paths.filter(
        (path) => !["package.json", "README.md", "LICENSE"].includes(path) && !/^dist\/[\w/.-]+\.(js|d\.ts)$/.test(path),
      );
      assert.deepEqual(stray, [], `${name} packs ${stray.join(", ")}`);
      assert.ok(!paths.some((path) => /\.map$|(^|\/)(test|src)\//.test(path)), `${name}: ${paths.join(", ")}`);
      for (const required of ["package.json", "README.md", "LICENSE"]) assert.ok(paths.includes(required), `${name} lacks ${required}`);
      assert.ok(paths.some((path) => path.startsWith("dist/")), `${name} has no dist`);
    }
  });

  it("every entry point, its typings and every command are in the tarball", () => {
    for (const { dir } of PACKAGES) {
      const { name, exports, bin, types, main } = manifest(dir);
      const paths = new Set(packed.find((p) => p.name === name)!.files.map((f) => f.path));
      assert.ok(exports, `${name} sets exports`);
      const entries: string[] = [...Object.values(bin ?? {}), ...(types ? [types] : []), ...(main ? [main] : [])];
      for (const [subpath, target] of Object.entries(exports)) {
        if (typeof target === "string") {
          entries.push(target);
          continue;
        }
        assert.ok(target.types && target.import, `${name} exports ${subpath} with its typings`);
        assert.equal(target.types, target.import.replace(/\.js$/, ".d.ts"), `${name} ${subpath}: typings beside the code`);
        entries.push(target.types, target.import);
      }
      for (const path of entries) assert.ok(paths.has(entry(path)), `${name}: ${path} is not packed`);
    }
    assert.deepEqual(Object.keys(manifest(join(REPO_ROOT, "sdk", "client")).exports!), [".", "./verify"]);
    assert.deepEqual(Object.keys(manifest(join(REPO_ROOT, "sdk", "creator")).exports!), [".", "./fastify"]);
    assert.deepEqual(manifest(join(REPO_ROOT, "sdk", "cli")).bin, { "agent-market": "./dist/main.js" });
  });

  it("the manifests are publishable: public, Apache-2.0 with the repository's LICENSE, dependencies that a registry resolves", () => {
    const license = readFileSync(join(REPO_ROOT, "LICENSE"), "utf8");
    assert.match(license, /^\s*Apache License\s+Version 2\.0, January 2004/);
    const version = manifest(join(REPO_ROOT, "sdk", "program")).version;
    for (const { dir } of PACKAGES) {
      const m = manifest(dir);
      assert.equal(m.private, undefined, `${m.name} is not private`);
      assert.equal(m.publishConfig?.access, "public", `${m.name}: a scoped package is published public`);
      assert.equal(m.license, "Apache-2.0");
      assert.ok(m.files?.includes("dist"), `${m.name} lists its files`);
      assert.equal(readFileSync(join(dir, "LICENSE"), "utf8"), license, `${m.name}'s LICENSE is the repository's`);
      assert.equal(m.version, version, "the packages share one version");
      for (const [dependency, range] of Object.entries(m.dependencies ?? {})) {
        assert.match(range, /^\d+\.\d+\.\d+$/, `${m.name} depends on ${dependency}@${range}, an exact registry version`);
        if (dependency.startsWith("@agent-market/")) {
          assert.ok(PACKAGES.some((p) => p.name === dependency), `${m.name} depends on the unpublished ${dependency}`);
          assert.equal(range, version, `${m.name} depends on ${dependency} of the same version`);
        }
      }
    }
  });
});

describe("SDK packages: installed from tarballs into an empty folder, the docs' examples run", function () {
  this.timeout(600_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let work: string;
  let app: string;
  let agentService: ReturnType<typeof spawn> | undefined;
  let agent: string;
  let apiKey: string;
  let executionId: string;

  /** The installed `agent-market`, run in the app folder with a home of its own. */
  const agentMarket = (args: string[], env: Record<string, string> = {}) =>
    runIn(join(app, "node_modules", ".bin", "agent-market"), args, { cwd: app, env: { AGENT_MARKET_HOME: join(work, "home"), ...env } });

  before(async function () {
    work = mkdtempSync(join(tmpdir(), "sdk-packages-"));
    app = join(work, "app");
    mkdirSync(app);
    mkdirSync(join(work, "home"));
    const tarballs = (await pack(work)).map((p) => join(work, p.filename));
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "newcomer", private: true, type: "module" }, null, 2));
    const install = runIn("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs, ...EXAMPLE_DEPENDENCIES], { cwd: app });
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    succeeded(await install, "npm install of the tarballs");
  });

  after(async () => {
    agentService?.kill();
    await relayer?.close();
    await market?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("installs the packed packages, not registry copies, with the CLI's command", () => {
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; resolved?: string }>;
    };
    for (const { name } of PACKAGES) {
      const installed = lock.packages[`node_modules/${name}`];
      assert.ok(installed, `${name} is installed at the top level`);
      assert.match(installed.resolved ?? "", /^file:.*\.tgz$/, `${name} comes from its tarball, not ${installed.resolved}`);
      const nested = Object.keys(lock.packages).filter((path) => path.endsWith(`/node_modules/${name}`));
      assert.deepEqual(nested, [], `${name} is installed once`);
    }
    assert.ok(existsSync(join(app, "node_modules", ".bin", "agent-market")), "npm linked the agent-market command");
  });

  it("the examples type-check against the installed typings, docs/deploy.md's market set-up too", async () => {
    writeExamples();
    const result = await runIn(process.execPath, [TSC, "-p", join(app, "tsconfig.json")], { cwd: app });
    assert.equal(result.code, 0, `tsc:\n${result.stdout}${result.stderr}`);
    for (const name of ["creator", "client", "verify", "deploy"]) assert.ok(existsSync(join(app, "out", `${name}.js`)));
  });

  it("the creator kit's quick start serves an agent, and the installed CLI makes its key and registers and lists it", async () => {
    const keygen = succeeded(await agentMarket(["keygen", "--out", "agent-key.json"]), "agent-market keygen");
    const signingKey = keygen.stdout.trim();
    const agentPort = await freePort();
    // The agent's address comes first: the quick start's service answers for it alone.
    const agentId = randomId();
    agentService = spawn(process.execPath, [join(app, "out", "creator.js")], {
      cwd: app,
      env: childEnv({
        PORT: String(agentPort),
        AGENT_MARKET_MARKETPLACE_KEY: relayer.marketplaceKey.publicKey.toBase58(),
        AGENT_ADDRESS: agentPda(agentId, market.programId).toBase58(),
      }),
      stdio: ["ignore", "inherit", "inherit"],
    });
    const endpoint = `http://127.0.0.1:${agentPort}`;
    for (let i = 0; ; i++) {
      const health = await fetch(`${endpoint}/health`).catch(() => undefined);
      if (health?.ok) {
        assert.match(await health.text(), new RegExp(signingKey), "the service signs with the key keygen made");
        break;
      }
      assert.ok(i < 100, "the creator service listens");
      await sleep(100);
    }

    const listing = {
      name: "Upper",
      description: "Returns the text in capitals: the creator kit's quick start.",
      tags: ["summarization"],
      ...EXAMPLE_SCHEMAS,
    };
    writeFileSync(join(app, "listing.json"), JSON.stringify(listing));
    const creator = await market.walletWithUsdc(MIN_COLLATERAL_USDC);
    writeFileSync(join(app, "creator.json"), JSON.stringify([...creator.wallet.secretKey]));
    const registered = await agentMarket([
      "register", "--keypair", "creator.json", "--signing-key", "agent-key.json", "--endpoint", endpoint,
      "--listing", "listing.json", "--price", "0.25", "--api", relayer.url, "--rpc", market.localnet.rpcUrl,
      "--agent-id", utils.bytes.bs58.encode(agentId), "--json",
    ]);
    succeeded(registered, "agent-market register");
    const result = JSON.parse(registered.stdout) as { agent: string; listing: { status: string } };
    assert.equal(result.listing.status, "active");
    agent = result.agent;
  });

  it("a consumer from scratch (docs/sdk.md) signs in, makes a key, approves and runs the agent with the installed CLI", async () => {
    const payer = await market.walletWithUsdc(5n * USDC);
    writeFileSync(join(app, "wallet.json"), JSON.stringify([...payer.wallet.secretKey]));
    const script = substitute(codeBlock(SDK_DOC, "A consumer from scratch", "sh"), [
      ["https://api.agentmarket.example", relayer.url],
      ["https://api.devnet.solana.com", market.localnet.rpcUrl],
      ["agent-market keys create --name laptop --cap 10\nexport AGENT_MARKET_API_KEY=svc_test_…", 'export AGENT_MARKET_API_KEY=$(agent-market keys create --name laptop --cap 10)\necho "$AGENT_MARKET_API_KEY" > api-key'],
      ["<agent>", agent],
      ['{"text": "…"}', '{"text": "hello from the docs"}'],
    ]);
    const result = await runIn("sh", ["-ec", script], {
      cwd: app,
      env: { AGENT_MARKET_HOME: join(work, "home"), PATH: `${join(app, "node_modules", ".bin")}:${process.env.PATH}` },
    });
    succeeded(result, "the consumer's commands");
    // The commands before `execute` print their own lines; the agent's output comes last.
    assert.deepEqual(JSON.parse(result.stdout.slice(result.stdout.lastIndexOf("\n{") + 1)), { upper: "HELLO FROM THE DOCS" });
    assert.match(result.stdout, /^Allowance 10\.000000 USDC on devnet/m);
    assert.match(result.stderr, /^Charged 0\.250000 USDC \(0\.247500 to the creator, 0\.002500 fee\)/m);
    apiKey = readFileSync(join(app, "api-key"), "utf8").trim();
    assert.match(apiKey, /^svc_test_/);
    assert.equal(await market.usdc(payer.tokenAccount), 5n * USDC - 250_000n);
  });

  it("the client's quick start finds the agent by its tag and runs it", async () => {
    const result = succeeded(
      await runIn(process.execPath, [join(app, "out", "client.js")], { cwd: app, env: { AGENT_MARKET_API_KEY: apiKey, API_URL: relayer.url } }),
      "the client's quick start",
    );
    const last = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as { id: string; agent: string; output: unknown; amount_usdc: string };
    assert.deepEqual([last.agent, last.output, last.amount_usdc], [agent, { upper: "HELLO, AGENTS" }, "0.250000"]);
    executionId = last.id;
  });

  it("verifyReceipt, from the installed client/verify entry, checks the execution against the chain", async () => {
    const result = succeeded(
      await runIn(process.execPath, [join(app, "out", "verify.js")], {
        cwd: app,
        env: {
          AGENT_MARKET_API_KEY: apiKey,
          API_URL: relayer.url,
          RPC_URL: market.localnet.rpcUrl,
          PROGRAM_ID: market.programId.toBase58(),
          EXECUTION_ID: executionId,
        },
      }),
      "the receipt verification example",
    );
    const last = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as { ok: boolean; checks: string[] };
    assert.equal(last.ok, true, result.stdout);
    for (const check of ["creator_signature", "expected_signing_key", "settle_instruction", "escrow_settled_event", "creator_payout"]) {
      assert.ok(last.checks.includes(check), check);
    }
  });

  /** The examples as TypeScript modules of the app: the docs' code, with what it leaves to the reader around it. */
  function writeExamples(): void {
    const creator = codeBlock(CREATOR_README, "Quick start", "ts");
    const client = substitute(codeBlock(SDK_DOC, "Quick start", "ts"), [
      ['"https://api.agentmarket.example"', "process.env.API_URL!"],
    ]);
    const verify = codeBlock(SDK_DOC, "Verifying a receipt", "ts");
    const src = join(app, "src");
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, "creator.ts"), creator);
    // Type-checked only: it initialises a market, which localnet has already.
    writeFileSync(join(src, "deploy.ts"), codeBlock(DEPLOY_DOC, "From a script", "ts"));
    writeFileSync(
      join(src, "client.ts"),
      `const text = "hello, agents";\n${client}\n` +
        `console.log(JSON.stringify({ id: execution.id, agent: execution.agent, output: execution.output, amount_usdc: execution.charge.amount_usdc }));\n`,
    );
    writeFileSync(
      join(src, "verify.ts"),
      [
        'import { AgentMarket, type Execution } from "@agent-market/client";',
        'import { Connection, PublicKey } from "@solana/web3.js";',
        "const market = new AgentMarket({ apiKey: process.env.AGENT_MARKET_API_KEY, baseUrl: process.env.API_URL! });",
        'const connection = new Connection(process.env.RPC_URL!, "confirmed");',
        "const programId = new PublicKey(process.env.PROGRAM_ID!);",
        'const task = "Summarize this article";',
        'const parameters = { text: "hello, agents", top_n: 3 };',
        "let execution: Execution = await market.executions.get(process.env.EXECUTION_ID!);",
        'while (execution.transactions.confirmation !== "confirmed") {',
        "  await new Promise((resolve) => setTimeout(resolve, 100));",
        "  execution = await market.executions.get(execution.id);",
        "}",
        "const listing = await market.agents.get(execution.agent);",
        verify,
        "console.log(JSON.stringify({ ok: result.ok, checks: result.checks.map((c) => c.name) }));",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify(
        {
          compilerOptions: {
            target: "ES2022",
            lib: ["ES2022"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            strict: true,
            skipLibCheck: true,
            rootDir: "src",
            outDir: "out",
            types: ["node"],
            typeRoots: [NODE_TYPE_ROOT],
          },
          include: ["src/*.ts"],
        },
        null,
        2,
      ),
    );
  }
});

/** The schemas of the creator kit's quick start, which its listing repeats. */
const EXAMPLE_SCHEMAS = {
  input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  output_schema: { type: "object", properties: { upper: { type: "string" } }, required: ["upper"] },
};
