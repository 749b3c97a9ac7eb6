// The command that creates or updates the Helius webhook, run as a process against a local
// stand-in for Helius's REST API (Helius itself is not reachable from the tests).
import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { Keypair } from "@solana/web3.js";


const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const API_KEY = "stand-in-api-key";

interface StoredWebhook {
  webhookID: string;
  wallet: string;
  webhookURL: string;
  transactionTypes: string[];
  accountAddresses: string[];
  webhookType: string;
  authHeader: string;
  txnStatus?: string;
}

/** Helius's webhook REST API as the SDK uses it: /v0/webhooks[/<id>]?api-key=… */
function standIn(): Promise<{ server: Server; url: string; webhooks: Map<string, StoredWebhook>; calls: string[] }> {
  const webhooks = new Map<string, StoredWebhook>();
  const calls: string[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://stand-in");
    calls.push(`${request.method} ${url.pathname}`);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (url.searchParams.get("api-key") !== API_KEY) return send(401, { error: "invalid api key" });
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const id = /^\/v0\/webhooks\/([^/]+)$/.exec(url.pathname)?.[1];
      if (url.pathname === "/v0/webhooks" && request.method === "GET") return send(200, [...webhooks.values()]);
      if (url.pathname === "/v0/webhooks" && request.method === "POST") {
        const created = { ...(JSON.parse(text) as StoredWebhook), webhookID: `wh-${webhooks.size + 1}`, wallet: "stand-in" };
        webhooks.set(created.webhookID, created);
        return send(200, created);
      }
      if (id && request.method === "PUT" && webhooks.has(id)) {
        const updated = { ...webhooks.get(id)!, ...(JSON.parse(text) as Partial<StoredWebhook>) };
        webhooks.set(id, updated);
        return send(200, updated);
      }
      return send(404, { error: "not found" });
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, webhooks, calls })));
}

async function command(env: Record<string, string>): Promise<{ action: string; webhookId: string; webhookUrl: string }> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", join(HERE, "..", "src", "webhook", "register-main.ts")], {
    env: { ...process.env, ...env },
    cwd: join(HERE, ".."),
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("Helius webhook command", function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof standIn>>;

  before(async () => {
    api = await standIn();
  });
  after(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  it("creates the raw webhook for the program, leaves it alone when unchanged, and updates it", async () => {
    const program = Keypair.generate().publicKey.toBase58();
    const env = {
      HELIUS_API_KEY: API_KEY,
      HELIUS_API_URL: api.url,
      INDEXER_PUBLIC_URL: "https://indexer.example",
      INDEXER_HELIUS_WEBHOOK_AUTH: "first-authorization-value",
      INDEXER_NETWORK: "devnet",
      DEVNET_PROGRAM_ID: program,
      MAINNET_PROGRAM_ID: program,
    };
    const created = await command(env);
    assert.equal(created.action, "created");
    assert.equal(created.webhookUrl, "https://indexer.example/webhooks/helius");
    const stored = api.webhooks.get(created.webhookId)!;
    assert.equal(stored.webhookType, "rawDevnet");
    assert.deepEqual(stored.accountAddresses, [program]);
    assert.equal(stored.authHeader, "first-authorization-value");
    assert.equal(stored.txnStatus, "success");

    assert.equal((await command(env)).action, "unchanged");
    const updated = await command({ ...env, INDEXER_HELIUS_WEBHOOK_AUTH: "second-authorization-value", INDEXER_NETWORK: "mainnet" });
    assert.equal(updated.action, "updated");
    assert.equal(updated.webhookId, created.webhookId);
    assert.equal(api.webhooks.size, 1);
    assert.equal(api.webhooks.get(created.webhookId)!.authHeader, "second-authorization-value");
    assert.equal(api.webhooks.get(created.webhookId)!.webhookType, "raw");
    assert.deepEqual(api.calls, ["GET /v0/webhooks", "POST /v0/webhooks", "GET /v0/webhooks", "GET /v0/webhooks", `PUT /v0/webhooks/${created.webhookId}`]);
  });

  it("registers the network's configured program id, and refuses none or one that is not an address", async () => {
    // Its own stand-in, so that the other test's count of webhooks and calls holds in any order.
    const own = await standIn();
    try {
      const env = {
        HELIUS_API_KEY: API_KEY,
        HELIUS_API_URL: own.url,
        INDEXER_PUBLIC_URL: "https://indexer-program.example",
        INDEXER_HELIUS_WEBHOOK_AUTH: "program-authorization-value",
        INDEXER_NETWORK: "mainnet",
      };
      const mainnetProgram = Keypair.generate().publicKey.toBase58();
      const created = await command({ ...env, MAINNET_PROGRAM_ID: mainnetProgram, DEVNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58() });
      assert.deepEqual(own.webhooks.get(created.webhookId)!.accountAddresses, [mainnetProgram]);
      await assert.rejects(command({ ...env, DEVNET_PROGRAM_ID: mainnetProgram }), (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /MAINNET_PROGRAM_ID is required: the program's address on mainnet/);
        return true;
      });
      await assert.rejects(command({ ...env, MAINNET_PROGRAM_ID: "not-an-address" }), (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /MAINNET_PROGRAM_ID must be the program's base58 address \(32 bytes\), got "not-an-address"/);
        return true;
      });
    } finally {
      await new Promise<void>((resolve) => own.server.close(() => resolve()));
    }
  });

  it("refuses to run without its settings, naming each", async () => {
    await assert.rejects(command({ HELIUS_API_KEY: "", INDEXER_PUBLIC_URL: "", INDEXER_HELIUS_WEBHOOK_AUTH: "short" }), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 2);
      assert.match(err.stderr, /HELIUS_API_KEY is required: the Helius API key/);
      assert.match(err.stderr, /INDEXER_PUBLIC_URL is required: this indexer's public origin/);
      assert.match(err.stderr, /INDEXER_HELIUS_WEBHOOK_AUTH must be at least 16 characters/);
      return true;
    });
  });
});
