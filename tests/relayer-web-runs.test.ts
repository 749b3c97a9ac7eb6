// Web runs: POST /v1/agents/:agent_id/execute authenticated by a wallet session (the dashboard's
// way to run an agent), charged to the session's wallet through its web-run key, on localnet with
// the relayer on PostgreSQL and a creator as a real HTTP server. API-key calls are unchanged. A
// web-run key has a cap (10 USDC until the wallet sets its own) and the wallet can revoke web runs.
import { strict as assert } from "node:assert";

import { ed25519Sign } from "@agent-market/program";
import { webRunKeyId } from "@agent-market/relayer";
import { utils } from "@coral-xyz/anchor";
import { Keypair, PublicKey } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, expectReconciled, signIn, startRelayer, type ApiResponse, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
const BODY = { task: "summarize this please", parameters: { language: "en" } };

describe("relayer: web runs with a wallet session", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
  });
  after(async () => {
    await agent?.server.close();
    try {
      if (relayer) {
        // The web-run keys' reservations agree with the chain like any key's.
        const report = await expectReconciled(relayer);
        assert.ok(report.executions > 0);
        await relayer.close();
      }
    } finally {
      await market?.stop();
    }
  });

  const runPath = () => `/v1/agents/${agent.address.toBase58()}/execute`;

  /** A POST carrying only the session cookie, with the content type a page of another site could send. */
  async function cookiePost(token: string, contentType: string, body: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const response = await fetch(`${relayer.url}${runPath()}`, {
      method: "POST",
      headers: { cookie: `am_session=${token}`, "content-type": contentType, ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
  }

  /** Raises the cap or allows web runs again, signed by the wallet as the dashboard does. */
  async function widen(payer: { wallet: Keypair; token: string }, change: Record<string, unknown>): Promise<WebRuns> {
    const issued = await api<{ message: string }>(relayer, "POST", "/v1/wallet/web-runs/confirmation", { token: payer.token, body: change });
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    const signature = utils.bytes.bs58.encode(ed25519Sign(payer.wallet.secretKey, new TextEncoder().encode(issued.body.message)));
    const done = await api<WebRuns>(relayer, "PATCH", "/v1/wallet/web-runs", {
      token: payer.token,
      body: { ...change, confirmation: { message: issued.body.message, signature } },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    return done.body;
  }

  async function signedInWallet(usdc: bigint, allowance = usdc) {
    const wallet = await market.payer(usdc, allowance);
    return { ...wallet, token: await signIn(relayer, wallet.wallet) };
  }

  it("charges the session's wallet through its web-run key, never listed among its keys", async () => {
    const payer = await signedInWallet(1_000_000n);
    const address = payer.wallet.publicKey.toBase58();
    const response = await api<{ id: string; status: string; output: unknown; charge: { amount_usdc: string }; receipt: unknown; api_key_id: string }>(
      relayer,
      "POST",
      runPath(),
      { token: payer.token, body: BODY, headers: { "idempotency-key": "web-1" } },
    );
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.status, "succeeded");
    assert.deepEqual(response.body.output, { echoed: "summarize this please", words: 3 });
    assert.equal(response.body.charge.amount_usdc, "0.250000");
    assert.ok(response.body.receipt, "a receipt like any execution's");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE, "the signed-in wallet paid");

    const webKey = webRunKeyId(address, "test");
    assert.equal(response.body.api_key_id, webKey);
    const { rows } = await relayer.services.db.query<{ wallet: string; kind: string; key_hash: Buffer | null; execution_count: string; spent_usdc: string }>(
      "SELECT wallet, kind, key_hash, execution_count, spent_usdc FROM api_keys WHERE id = $1",
      [webKey],
    );
    assert.deepEqual(rows, [{ wallet: address, kind: "web", key_hash: null, execution_count: "1", spent_usdc: String(PRICE) }]);

    const keys = await api<{ data: unknown[] }>(relayer, "GET", "/v1/keys", { token: payer.token });
    assert.deepEqual(keys.body.data, [], "no API key was created");
    for (const method of ["GET", "DELETE"]) {
      const direct = await api(relayer, method, `/v1/keys/${webKey}`, { token: payer.token });
      assert.equal(direct.status, 404);
      assert.equal(errorCode(direct), "resource_not_found");
    }
    const read = await api<{ id: string }>(relayer, "GET", `/v1/executions/${response.body.id}`, { token: payer.token });
    assert.equal(read.status, 200);
    const listed = await api<{ data: { id: string }[] }>(relayer, "GET", "/v1/executions", { token: payer.token });
    assert.deepEqual(listed.body.data.map((e) => e.id), [response.body.id]);
  });

  it("replays an Idempotency-Key through the cookie with JSON, charging once", async () => {
    const payer = await signedInWallet(1_000_000n);
    const headers = { "idempotency-key": "web-replay" };
    const first = await cookiePost(payer.token, "application/json", JSON.stringify(BODY), headers);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const again = await cookiePost(payer.token, "application/json; charset=utf-8", JSON.stringify(BODY), headers);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal((again.body as { id: string }).id, (first.body as { id: string }).id);
    // The same Idempotency-Key with the Bearer session is the same wallet's: a replay too.
    const bearer = await api<{ id: string }>(relayer, "POST", runPath(), { token: payer.token, body: BODY, headers });
    assert.equal(bearer.body.id, (first.body as { id: string }).id);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE, "charged once");
  });

  it("refuses a cookie-only request that is not JSON (what a cross-site form sends): 403 cookie_request_not_json, nothing charged", async () => {
    const payer = await signedInWallet(1_000_000n);
    const forms: [string, string][] = [
      ["text/plain", JSON.stringify(BODY)],
      ["application/x-www-form-urlencoded", "task=x&parameters=%7B%7D"],
      ["multipart/form-data; boundary=x", "--x--"],
      ["", JSON.stringify(BODY)],
    ];
    for (const [type, body] of forms) {
      const response = await cookiePost(payer.token, type, body);
      assert.equal(response.status, 403, type);
      assert.equal(errorCode(response), "cookie_request_not_json", type);
    }
    const { rows } = await relayer.services.db.query("SELECT id FROM executions WHERE wallet = $1", [payer.wallet.publicKey.toBase58()]);
    assert.deepEqual(rows, []);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("refuses a cookie-only request that is not JSON on every state-changing route, enumerated from the app: 403 cookie_request_not_json, nothing changed", async () => {
    // The creator's own session: pause and retire would act on its listing if the check let them through.
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    const payer = await signedInWallet(1_000_000n);
    // Every documented route: the OpenAPI document is built from all of them.
    const document = (await api<{ paths: Record<string, Record<string, unknown>> }>(relayer, "GET", "/v1/openapi.json")).body;
    const routes: [string, string][] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        if (["post", "put", "patch", "delete"].includes(method)) routes.push([method.toUpperCase(), path]);
      }
    }
    const names = routes.map(([method, path]) => `${method} ${path}`);
    for (const expected of ["POST /v1/agents/{agent_id}/pause", "POST /v1/agents/{agent_id}/retire", "POST /v1/keys", "DELETE /v1/keys/{key_id}"]) {
      assert.ok(names.includes(expected), `${expected} is enumerated: ${names.join(", ")}`);
    }
    for (const [method, path] of routes) {
      const url = path.replace(/\{agent_id\}/g, agent.address.toBase58()).replace(/\{[a-z_]+\}/g, "x");
      for (const [type, body] of [
        ["text/plain", "{}"],
        ["application/x-www-form-urlencoded", "a=b"],
        [undefined, undefined],
      ] as const) {
        for (const token of [creatorToken, payer.token]) {
          const response = await fetch(`${relayer.url}${url}`, {
            method,
            headers: { cookie: `am_session=${token}`, ...(type === undefined ? {} : { "content-type": type }) },
            ...(body === undefined ? {} : { body }),
          });
          const answer = { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
          assert.equal(answer.status, 403, `${method} ${url} (${type}): ${JSON.stringify(answer.body)}`);
          assert.equal(errorCode(answer), "cookie_request_not_json", `${method} ${url} (${type})`);
        }
      }
    }
    const listing = await api<{ status: string }>(relayer, "GET", `/v1/agents/${agent.address.toBase58()}`);
    assert.equal(listing.body.status, "active", "neither paused nor retired");
    const keys = await api<{ data: unknown[] }>(relayer, "GET", "/v1/keys", { token: payer.token });
    assert.deepEqual(keys.body.data, [], "no key created");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "nothing charged");
    // With JSON the cookie works on a body-less route too (an empty object as the body).
    const paused = await fetch(`${relayer.url}/v1/agents/${agent.address.toBase58()}/pause`, {
      method: "POST",
      headers: { cookie: `am_session=${creatorToken}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(paused.status, 200, await paused.text());
    const resumed = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/resume`, { token: creatorToken });
    assert.equal(resumed.status, 200);
  });

  it("refuses without a session, or with one signed out, each with its code", async () => {
    const payer = await signedInWallet(1_000_000n);
    const none = await api(relayer, "POST", runPath(), { body: BODY });
    assert.equal(none.status, 401);
    assert.equal(errorCode(none), "missing_authorization");
    assert.equal((await api(relayer, "DELETE", "/v1/auth/session", { token: payer.token })).status, 200);
    const ended = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(ended.status, 401);
    assert.equal(errorCode(ended), "invalid_session");
    const cookie = await cookiePost(payer.token, "application/json", JSON.stringify(BODY));
    assert.equal(errorCode(cookie), "invalid_session");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("holds a web run to the wallet's own limits: 402 insufficient_allowance before any escrow", async () => {
    const payer = await signedInWallet(1_000_000n, 100_000n);
    const response = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(response.status, 402);
    assert.equal(errorCode(response), "insufficient_allowance");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("runs a session on the network asked for, and refuses one this relayer does not serve", async () => {
    const payer = await signedInWallet(1_000_000n);
    const mainnet = await api(relayer, "POST", `${runPath()}?network=mainnet`, { token: payer.token, body: BODY });
    assert.equal(mainnet.status, 400);
    assert.equal(errorCode(mainnet), "network_not_configured");
    const bogus = await api(relayer, "POST", `${runPath()}?network=testnet`, { token: payer.token, body: BODY });
    assert.equal(errorCode(bogus), "validation_failed");
    const devnet = await api(relayer, "POST", `${runPath()}?network=devnet`, { token: payer.token, body: BODY });
    assert.equal(devnet.status, 200, JSON.stringify(devnet.body));
    const { rows } = await relayer.services.db.query("SELECT id FROM api_keys WHERE wallet = $1", [payer.wallet.publicKey.toBase58()]);
    assert.deepEqual(rows, [{ id: webRunKeyId(payer.wallet.publicKey.toBase58(), "test") }], "no key for the refused network");
  });

  interface WebRuns {
    enabled: boolean;
    spending_cap_usdc: string;
    spent_usdc: string;
    execution_count: number;
    revoked_at: string | null;
  }

  it("caps a wallet's web runs (10 USDC until it sets its own): past the cap 402 spending_cap_reached, nothing charged, no SOL spent", async () => {
    const payer = await signedInWallet(2_000_000n);
    const initial = await api<WebRuns>(relayer, "GET", "/v1/wallet/web-runs", { token: payer.token });
    assert.equal(initial.status, 200, JSON.stringify(initial.body));
    assert.equal(initial.body.spending_cap_usdc, "10.000000", "a new wallet's web runs start capped");
    assert.equal(initial.body.enabled, true);

    // An API key cannot change it: only the wallet's session.
    const apiPayer = await newPayer(market, relayer, 1_000n);
    const byKey = await api(relayer, "PATCH", "/v1/wallet/web-runs", {
      token: apiPayer.apiKey,
      body: { network: "devnet", spending_cap_usdc: "100.000000" },
    });
    assert.equal(errorCode(byKey), "api_key_not_allowed");

    const set = await api<WebRuns>(relayer, "PATCH", "/v1/wallet/web-runs", {
      token: payer.token,
      body: { network: "devnet", spending_cap_usdc: "0.300000" },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.spending_cap_usdc, "0.300000");

    const first = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const usdc = await market.usdc(payer.tokenAccount);
    const sol = await market.lamports(market.relayer.publicKey);
    const over = await api<{ error: { spending_cap_usdc: string; required_usdc: string } }>(relayer, "POST", runPath(), {
      token: payer.token,
      body: BODY,
    });
    assert.equal(over.status, 402, JSON.stringify(over.body));
    assert.equal(errorCode(over), "spending_cap_reached");
    assert.equal(over.body.error.spending_cap_usdc, "0.300000");
    assert.equal(await market.usdc(payer.tokenAccount), usdc, "nothing charged");
    assert.equal(await market.lamports(market.relayer.publicKey), sol, "no transaction sent");
    const after = await api<WebRuns>(relayer, "GET", "/v1/wallet/web-runs", { token: payer.token });
    assert.deepEqual([after.body.spent_usdc, after.body.execution_count], ["0.250000", 1]);

    // Raising the cap needs the wallet's signature over it; then the next run goes through.
    const unsigned = await api(relayer, "PATCH", "/v1/wallet/web-runs", { token: payer.token, body: { network: "devnet", spending_cap_usdc: "0.500000" } });
    assert.equal(errorCode(unsigned), "wallet_signature_required");
    assert.equal(await market.usdc(payer.tokenAccount), usdc, "nothing charged");
    await widen(payer, { network: "devnet", spending_cap_usdc: "0.500000" });
    const raised = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
  });

  it("revokes a wallet's web runs at once (403 web_runs_revoked, nothing charged) until it enables them again", async () => {
    const payer = await signedInWallet(1_000_000n);
    const first = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(first.status, 200, JSON.stringify(first.body));

    const revoked = await api<WebRuns>(relayer, "PATCH", "/v1/wallet/web-runs", { token: payer.token, body: { network: "devnet", enabled: false } });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.enabled, false);
    assert.ok(revoked.body.revoked_at);
    const usdc = await market.usdc(payer.tokenAccount);
    const sol = await market.lamports(market.relayer.publicKey);
    for (const refused of [
      await api(relayer, "POST", runPath(), { token: payer.token, body: BODY }),
      await cookiePost(payer.token, "application/json", JSON.stringify(BODY)),
    ]) {
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(errorCode(refused), "web_runs_revoked");
    }
    assert.equal(await market.usdc(payer.tokenAccount), usdc, "nothing charged");
    assert.equal(await market.lamports(market.relayer.publicKey), sol, "no transaction sent");

    // The wallet's API keys are not web runs: they still work.
    const key = await api<{ secret: string }>(relayer, "POST", "/v1/keys", { token: payer.token, body: { name: "k", environment: "test" } });
    const byKey = await execute(relayer, { apiKey: key.body.secret }, agent.address);
    assert.equal(byKey.status, 200, JSON.stringify(byKey.body));

    const stolen = await api(relayer, "PATCH", "/v1/wallet/web-runs", { token: payer.token, body: { network: "devnet", enabled: true } });
    assert.equal(errorCode(stolen), "wallet_signature_required", "a session alone cannot allow them again");
    const refusedAgain = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(errorCode(refusedAgain), "web_runs_revoked");
    const enabled = await widen(payer, { network: "devnet", enabled: true });
    assert.equal(enabled.enabled, true);
    const again = await api(relayer, "POST", runPath(), { token: payer.token, body: BODY });
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });

  it("refuses a web-run change without a session, or with an empty or over-large body, each with its code", async () => {
    const payer = await signedInWallet(1_000n);
    const none = await api(relayer, "PATCH", "/v1/wallet/web-runs", { body: { network: "devnet", enabled: false } });
    assert.equal(none.status, 401);
    const empty = await api(relayer, "PATCH", "/v1/wallet/web-runs", { token: payer.token, body: { network: "devnet" } });
    assert.equal(errorCode(empty), "validation_failed");
    const huge = await api(relayer, "PATCH", "/v1/wallet/web-runs", {
      token: payer.token,
      body: { network: "devnet", spending_cap_usdc: "1000000.000001" },
    });
    assert.equal(errorCode(huge), "validation_failed");
    assert.equal((huge.body as { error: { param: string } }).error.param, "spending_cap_usdc");
  });

  it("leaves API-key calls as they were: charged to the key, its network its own", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, 200);
    assert.equal((response.body as { api_key_id: string }).api_key_id, payer.apiKeyId);
    const other = await api(relayer, "POST", `${runPath()}?network=mainnet`, { token: payer.apiKey, body: BODY });
    assert.equal(other.status, 400);
    assert.equal(errorCode(other), "validation_failed");
    const unknown = await execute(relayer, payer, PublicKey.unique());
    assert.equal(unknown.status, 404);
    // The cookie does not stand in for a key's Authorization, nor change what it pays from.
    const withCookie = await api<{ api_key_id: string }>(relayer, "POST", runPath(), {
      token: payer.apiKey,
      body: BODY,
      headers: { cookie: `am_session=${payer.token}` },
    });
    assert.equal(withCookie.body.api_key_id, payer.apiKeyId);
    const keys = await api<{ data: { id: string; execution_count: number }[] }>(relayer, "GET", "/v1/keys", { token: payer.token });
    assert.deepEqual(keys.body.data.map((k) => [k.id, k.execution_count]), [[payer.apiKeyId, 2]]);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - 2n * PRICE);
  });
});
