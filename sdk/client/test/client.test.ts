import { strict as assert } from "node:assert";

import { ed25519PublicKey, ed25519Sign, ed25519Verify, formatAddress, parseAddress } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";
import { utils } from "@coral-xyz/anchor";

import {
  AgentMarket,
  AgentMarketError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  ExecutionFailedError,
  InvalidRequestError,
  ListingError,
  NotFoundError,
  PaymentRequiredError,
  PermissionError,
  ServerError,
  WalletSession,
  backoffMs,
  formatUsdc,
  isRetryable,
  parseUsdc,
  retryAfterMs,
} from "../src/index.js";
import { REQUEST_ID, apiError, execution, startFakeApi, type Canned, type FakeApi } from "./fake-api.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";
const INPUT = { task: "summarize", parameters: { language: "en" } };
const NO_WAIT = { "retry-after": "0" };

describe("AgentMarket", () => {
  let api: FakeApi;
  afterEach(async () => api?.close());

  const client = (options: { maxRetries?: number; timeoutMs?: number } = {}) =>
    new AgentMarket({ apiKey: "svc_test_abc", baseUrl: `${api.url}/`, ...options });

  async function rejection(promise: Promise<unknown>): Promise<AgentMarketError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof AgentMarketError, String(error));
      return error;
    }
    assert.fail("expected a rejection");
  }

  describe("execute", () => {
    it("posts the task and parameters with the API key and a generated Idempotency-Key", async () => {
      api = await startFakeApi([{ status: 200, body: execution() }]);
      const result = await client().agents.execute(AGENT, INPUT);
      assert.equal(result.id, "exec_1111111111111111");
      const [request] = api.requests;
      assert.equal(request!.method, "POST");
      assert.equal(request!.url, `/v1/agents/${AGENT}/execute`);
      assert.equal(request!.headers.authorization, "Bearer svc_test_abc");
      assert.equal(request!.headers["content-type"], "application/json");
      assert.match(String(request!.headers["idempotency-key"]), /^idem_[0-9a-f]{32}$/);
      assert.equal(request!.headers.prefer, undefined);
      assert.deepEqual(request!.body, INPUT);
    });

    it("gives every logical call its own key, and uses the caller's when given", async () => {
      api = await startFakeApi([{ status: 200, body: execution() }]);
      await client().agents.execute(AGENT, INPUT);
      await client().agents.execute(AGENT, INPUT);
      await client().agents.execute(AGENT, INPUT, { idempotencyKey: "order-42" });
      const keys = api.requests.map((r) => r.headers["idempotency-key"]);
      assert.notEqual(keys[0], keys[1]);
      assert.equal(keys[2], "order-42");
    });

    it("asks for an asynchronous run with Prefer: respond-async and returns the pending execution", async () => {
      api = await startFakeApi([{ status: 202, body: execution(undefined, { status: "pending" }), headers: { location: "/v1/executions/x" } }]);
      const pending = await client().agents.execute(AGENT, INPUT, { async: true });
      assert.equal(pending.status, "pending");
      assert.equal(api.requests[0]!.headers.prefer, "respond-async");
    });

    it("retries 503, 409 in progress and a dropped connection with the same Idempotency-Key", async () => {
      api = await startFakeApi([
        apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT),
        apiError(409, "conflict_error", "idempotency_request_in_progress", { execution_id: "exec_1" }, NO_WAIT),
        "drop",
        { status: 200, body: execution() },
      ]);
      const result = await client({ maxRetries: 3 }).agents.execute(AGENT, INPUT);
      assert.equal(result.status, "succeeded");
      assert.equal(api.requests.length, 4);
      assert.equal(new Set(api.requests.map((r) => r.headers["idempotency-key"])).size, 1);
      assert.deepEqual(new Set(api.requests.map((r) => JSON.stringify(r.body))).size, 1);
    });

    it("retries a gateway's 502 and 504 that carry no execution", async () => {
      api = await startFakeApi([
        { status: 502, text: "<html>Bad Gateway</html>", headers: NO_WAIT },
        { status: 504, text: "<html>Gateway Timeout</html>", headers: NO_WAIT },
        { status: 200, body: execution() },
      ]);
      await client().agents.execute(AGENT, INPUT);
      assert.equal(api.requests.length, 3);
    });

    it("never retries a refunded execution: ExecutionFailedError carries it and its refund", async () => {
      const refunded = execution("exec_2", {
        status: "refunded",
        output: null,
        failure: { code: "creator_timeout", message: null, refund_reason: "Timeout" },
      });
      for (const [status, code] of [
        [502, "creator_error"],
        [504, "creator_timeout"],
        [502, "invalid_result"],
      ] as const) {
        api = await startFakeApi([
          apiError(status, "api_error", code, { execution_id: "exec_2", refund_transaction: "sig123", execution: refunded }, NO_WAIT),
          { status: 200, body: execution() },
        ]);
        const error = await rejection(client().agents.execute(AGENT, INPUT));
        assert.ok(error instanceof ExecutionFailedError, error.name);
        assert.equal(error.status, status);
        assert.equal(error.code, code);
        assert.equal(error.execution.id, "exec_2");
        assert.equal(error.execution.status, "refunded");
        assert.equal(error.refundTransaction, "sig123");
        assert.equal(api.requests.length, 1, `${code} is final`);
        await api.close();
      }
    });

    it("does not retry 4xx other than 409 in progress", async () => {
      const cases: [Canned, typeof AgentMarketError][] = [
        [apiError(400, "invalid_request_error", "validation_failed", { param: "parameters.language" }, NO_WAIT), InvalidRequestError],
        [apiError(401, "authentication_error", "revoked_api_key", {}, NO_WAIT), AuthenticationError],
        [apiError(402, "payment_error", "insufficient_allowance", {}, NO_WAIT), PaymentRequiredError],
        [apiError(404, "not_found_error", "resource_not_found", {}, NO_WAIT), NotFoundError],
        [apiError(409, "conflict_error", "idempotency_key_reused", {}, NO_WAIT), ConflictError],
        [apiError(409, "conflict_error", "agent_unavailable", {}, NO_WAIT), ConflictError],
      ];
      for (const [answer, type] of cases) {
        api = await startFakeApi([answer, { status: 200, body: execution() }]);
        const error = await rejection(client().agents.execute(AGENT, INPUT));
        assert.ok(error instanceof type, `${error.code}: ${error.name}`);
        assert.equal(api.requests.length, 1, error.code);
        await api.close();
      }
    });

    it("does not retry a 500, and gives up on retryable failures after maxRetries", async () => {
      api = await startFakeApi([apiError(500, "api_error", "internal_error", {}, NO_WAIT)]);
      assert.ok((await rejection(client().agents.execute(AGENT, INPUT))) instanceof ServerError);
      assert.equal(api.requests.length, 1);
      await api.close();

      api = await startFakeApi([apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT)]);
      const error = await rejection(client({ maxRetries: 2 }).agents.execute(AGENT, INPUT));
      assert.equal(error.code, "chain_unavailable");
      assert.equal(api.requests.length, 3, "the first attempt and two retries");
      await api.close();

      api = await startFakeApi([apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT)]);
      await rejection(client({ maxRetries: 0 }).agents.execute(AGENT, INPUT));
      assert.equal(api.requests.length, 1);
    });

    it("waits what Retry-After asks before retrying", async () => {
      api = await startFakeApi([apiError(503, "api_error", "chain_unavailable", {}, { "retry-after": "1" }), { status: 200, body: execution() }]);
      await client().agents.execute(AGENT, INPUT);
      const waited_ms = api.requests[1]!.at_ms - api.requests[0]!.at_ms;
      assert.ok(waited_ms >= 950 && waited_ms < 1_500, `waited ${waited_ms} ms`);
    });

    it("backs off exponentially with jitter when the answer has no Retry-After", async () => {
      api = await startFakeApi([apiError(503, "api_error", "chain_unavailable"), { status: 200, body: execution() }]);
      await client().agents.execute(AGENT, INPUT);
      const waited_ms = api.requests[1]!.at_ms - api.requests[0]!.at_ms;
      assert.ok(waited_ms >= 240 && waited_ms < 800, `waited ${waited_ms} ms`);
    });

    it("times an attempt out as a ConnectionError, retried with the same key", async () => {
      api = await startFakeApi(["hang", { status: 200, body: execution() }]);
      await client({ timeoutMs: 200 }).agents.execute(AGENT, INPUT);
      assert.equal(api.requests.length, 2);
      assert.equal(api.requests[0]!.headers["idempotency-key"], api.requests[1]!.headers["idempotency-key"]);
      await api.close();

      api = await startFakeApi(["hang"]);
      const error = await rejection(client({ timeoutMs: 100, maxRetries: 0 }).agents.execute(AGENT, INPUT));
      assert.ok(error instanceof ConnectionError);
      assert.equal(error.code, "timeout");
      assert.equal(error.status, undefined);
    });

    it("stops at once, without retrying, when the caller aborts", async () => {
      api = await startFakeApi(["hang"]);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(client().agents.execute(AGENT, INPUT, { signal: controller.signal }), { name: "AbortError" });
      assert.equal(api.requests.length, 1);
    });
  });

  describe("errors", () => {
    it("maps every error type to its class, keeping status, code, type, param and request id", async () => {
      const table: [number, string, string, typeof AgentMarketError][] = [
        [400, "invalid_request_error", "validation_failed", InvalidRequestError],
        [413, "invalid_request_error", "body_too_large", InvalidRequestError],
        [400, "invalid_request_error", "invalid_cursor", InvalidRequestError],
        [401, "authentication_error", "missing_authorization", AuthenticationError],
        [401, "authentication_error", "expired_api_key", AuthenticationError],
        [403, "permission_error", "api_key_not_allowed", PermissionError],
        [404, "not_found_error", "resource_not_found", NotFoundError],
        [404, "not_found_error", "route_not_found", NotFoundError],
        [409, "conflict_error", "agent_already_listed", ConflictError],
        [422, "listing_error", "probe_bad_signature", ListingError],
        [402, "payment_error", "spending_cap_reached", PaymentRequiredError],
        [402, "payment_error", "subscription_required", PaymentRequiredError],
        [502, "api_error", "escrow_rejected", ServerError],
        [500, "api_error", "internal_error", ServerError],
        [503, "api_error", "chain_unavailable", ServerError],
      ];
      for (const [status, type, code, errorClass] of table) {
        api = await startFakeApi([apiError(status, type, code, { param: "agent_id" }, NO_WAIT)]);
        const error = await rejection(client({ maxRetries: 0 }).agents.get(AGENT));
        assert.ok(error instanceof errorClass, `${code} → ${error.name}`);
        assert.equal(error.name, errorClass.name);
        assert.deepEqual(
          { status: error.status, type: error.type, code: error.code, param: error.param, requestId: error.requestId },
          { status, type, code, param: "agent_id", requestId: REQUEST_ID },
        );
        await api.close();
      }
    });

    it("reads a 402's amounts as base units, with the mint, the network and the raise-allowance hint", async () => {
      api = await startFakeApi([
        apiError(402, "payment_error", "insufficient_balance", {
          network: "devnet",
          mint: "Mint1111111111111111111111111111111111111",
          required_usdc: "0.250000",
          balance_usdc: "0.100000",
          allowance_usdc: "5.000000",
          raise_allowance: "POST /v1/wallet/allowance",
        }),
      ]);
      const error = await rejection(client().agents.execute(AGENT, INPUT));
      assert.ok(error instanceof PaymentRequiredError);
      assert.equal(error.required, 250_000n);
      assert.equal(error.balance, 100_000n);
      assert.equal(error.allowance, 5_000_000n);
      assert.equal(error.spendingCap, null);
      assert.equal(error.mint, "Mint1111111111111111111111111111111111111");
      assert.equal(error.network, "devnet");
      assert.equal(error.raiseAllowance, "POST /v1/wallet/allowance");
      assert.equal(error.details.required_usdc, "0.250000", "the decimal strings stay in details");
    });

    it("classifies an answer without the error body by its status, with the Request-Id header", async () => {
      api = await startFakeApi([{ status: 401, text: "nope" }]);
      const error = await rejection(client().whoami());
      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.code, "http_401");
      assert.equal(error.requestId, REQUEST_ID);
    });

    it("refuses a 200 that is not JSON", async () => {
      api = await startFakeApi([{ status: 200, text: "<html>" }]);
      const error = await rejection(client().whoami());
      assert.equal(error.code, "invalid_response");
    });
  });

  describe("reads", () => {
    it("pages through executions with starting_after, to the last page", async () => {
      const ids = ["exec_5", "exec_4", "exec_3", "exec_2", "exec_1"];
      api = await startFakeApi();
      api.routes.set("/v1/executions", (request) => {
        const url = new URL(request.url, "http://x");
        const after = url.searchParams.get("starting_after");
        const limit = Number(url.searchParams.get("limit"));
        const from = after === null ? 0 : ids.indexOf(after) + 1;
        const data = ids.slice(from, from + limit).map((id) => execution(id));
        return { status: 200, body: { object: "list", data, has_more: from + limit < ids.length } };
      });
      const seen: string[][] = [];
      for await (const page of client().executions.pages({ limit: 2, agent: AGENT })) seen.push(page.data.map((e) => e.id));
      assert.deepEqual(seen, [["exec_5", "exec_4"], ["exec_3", "exec_2"], ["exec_1"]]);
      assert.deepEqual(
        api.requests.map((r) => r.url),
        [
          `/v1/executions?limit=2&agent=${AGENT}`,
          `/v1/executions?limit=2&agent=${AGENT}&starting_after=exec_4`,
          `/v1/executions?limit=2&agent=${AGENT}&starting_after=exec_2`,
        ],
      );
    });

    it("retries a GET on 503, reads listings without an API key, and encodes path segments", async () => {
      api = await startFakeApi([apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT), { status: 200, body: { id: AGENT } }]);
      const anonymous = new AgentMarket({ baseUrl: api.url });
      await anonymous.agents.get(AGENT, { network: "devnet" });
      assert.equal(api.requests.length, 2);
      assert.equal(api.requests[1]!.url, `/v1/agents/${AGENT}?network=devnet`);
      assert.equal(api.requests[1]!.headers.authorization, undefined);
      await api.close();

      api = await startFakeApi([{ status: 200, body: execution() }]);
      await client().executions.get("exec_a/../b");
      assert.equal(api.requests[0]!.url, "/v1/executions/exec_a%2F..%2Fb");
    });
  });
});

describe("WalletSession", () => {
  let api: FakeApi;
  afterEach(async () => api?.close());

  const seed = new Uint8Array(32).fill(7);
  const wallet = formatAddress(ed25519PublicKey(seed));
  const message = `127.0.0.1 wants you to sign in with your Solana account:\n${wallet}\n\nNonce: abc`;

  async function fakeSignIn(): Promise<void> {
    api = await startFakeApi();
    api.routes.set("/v1/auth/nonce", () => ({ status: 201, body: { object: "sign_in_challenge", wallet, nonce: "abc", message } }));
    api.routes.set("/v1/auth/session", (request) => {
      if (request.method === "DELETE") return { status: 200, body: { object: "session", id: "ses_1", wallet } };
      const body = request.body as { message: string; signature: string };
      const ok = ed25519Verify(utils.bytes.bs58.decode(body.signature), new TextEncoder().encode(body.message), parseAddress(wallet)!);
      return ok
        ? { status: 201, body: { object: "session", id: "ses_1", token: "sess_secret", wallet, created_at: "t", expires_at: "u" } }
        : apiError(401, "authentication_error", "invalid_signature");
    });
    api.routes.set("/v1/keys", () => ({ status: 201, body: { object: "api_key", id: "key_1", secret: "svc_test_x" } }));
    api.routes.set("/v1/wallet", () => apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT));
  }

  it("signs the challenge message with the wallet, base58, and uses the session token", async () => {
    await fakeSignIn();
    const session = await WalletSession.signIn(api.url, {
      publicKey: new PublicKey(wallet),
      signMessage: (bytes) => ed25519Sign(seed, bytes),
    });
    assert.equal(session.token, "sess_secret");
    assert.equal(session.address, wallet);
    assert.deepEqual(api.requests[0]!.body, { wallet });

    const key = await session.keys.create({ name: "ci", environment: "test", spending_cap_usdc: "5.000000" });
    assert.equal(key.secret, "svc_test_x");
    const create = api.requests.at(-1)!;
    assert.equal(create.headers.authorization, "Bearer sess_secret");
    assert.deepEqual(create.body, { name: "ci", environment: "test", spending_cap_usdc: "5.000000" });

    await session.signOut();
    assert.equal(api.requests.at(-1)!.method, "DELETE");
  });

  it("retries the allowance read but never a key creation", async () => {
    await fakeSignIn();
    const session = await WalletSession.signIn(api.url, { publicKey: wallet, signMessage: async (bytes) => ed25519Sign(seed, bytes) });
    await assert.rejects(session.wallet.funding("devnet"), ServerError);
    assert.equal(api.requests.filter((r) => r.url.startsWith("/v1/wallet")).length, 3);

    api.routes.set("/v1/keys", () => apiError(503, "api_error", "chain_unavailable", {}, NO_WAIT));
    await assert.rejects(session.keys.create({ name: "ci", environment: "test" }), ServerError);
    assert.equal(api.requests.filter((r) => r.url === "/v1/keys").length, 1);
  });

  it("refuses a signer that does not return a 64-byte signature", async () => {
    await fakeSignIn();
    await assert.rejects(
      WalletSession.signIn(api.url, { publicKey: wallet, signMessage: () => new Uint8Array(10) }),
      /64-byte Ed25519 signature/,
    );
  });
});

describe("retry rule", () => {
  it("retries only what is safe to send again", () => {
    const answer = (status: number, code?: string, hasExecution = false) => ({ kind: "answer" as const, status, code, hasExecution });
    assert.equal(isRetryable({ kind: "no_answer" }, true), true);
    assert.equal(isRetryable({ kind: "no_answer" }, false), false);
    assert.equal(isRetryable(answer(503, "chain_unavailable"), true), true);
    assert.equal(isRetryable(answer(503, "chain_unavailable"), false), false);
    assert.equal(isRetryable(answer(409, "idempotency_request_in_progress"), true), true);
    assert.equal(isRetryable(answer(409, "idempotency_key_reused"), true), false);
    assert.equal(isRetryable(answer(502, "http_502"), true), true);
    assert.equal(isRetryable(answer(502, "creator_error", true), true), false);
    assert.equal(isRetryable(answer(504, "creator_timeout", true), true), false);
    assert.equal(isRetryable(answer(500, "internal_error"), true), false);
    assert.equal(isRetryable(answer(402, "insufficient_balance"), true), false);
    assert.equal(isRetryable(answer(503, "agent_circuit_open"), true), false);
    assert.equal(isRetryable(answer(429, "key_concurrency_limit"), true), false);
  });

  it("backs off 500 ms × 2^n, at most 8 s, jittered to 50–100 %", () => {
    assert.equal(backoffMs(0, () => 0), 250);
    assert.equal(backoffMs(0, () => 1), 500);
    assert.equal(backoffMs(2, () => 1), 2_000);
    assert.equal(backoffMs(10, () => 1), 8_000);
  });

  it("reads Retry-After as seconds or an HTTP date, capped at a minute", () => {
    assert.equal(retryAfterMs(null), null);
    assert.equal(retryAfterMs("2"), 2_000);
    assert.equal(retryAfterMs("soon"), null);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 7_000), 3_000);
    assert.equal(retryAfterMs("3600"), 60_000);
  });
});

describe("USDC amounts", () => {
  it("parses decimal strings to base units and formats them back with six places", () => {
    assert.equal(parseUsdc("12.500000"), 12_500_000n);
    assert.equal(parseUsdc("0.25"), 250_000n);
    assert.equal(parseUsdc("7"), 7_000_000n);
    assert.equal(parseUsdc("18446744073709.551615"), (1n << 64n) - 1n);
    for (const bad of ["", "-1", "1e3", "0.1234567", "01", ".5", "1.", " 1", "18446744073709.551616"]) {
      assert.throws(() => parseUsdc(bad), Error, bad);
    }
    assert.equal(formatUsdc(250_000n), "0.250000");
    assert.equal(formatUsdc(0n), "0.000000");
    assert.throws(() => formatUsdc(-1n));
  });
});

describe("base58", () => {
  it("encodes as Solana does, leading zero bytes as 1s", async () => {
    const { base58Encode } = await import("../src/base58.js");
    for (const bytes of [new Uint8Array(0), new Uint8Array([0, 0, 1]), new Uint8Array(64).fill(255), ed25519PublicKey(new Uint8Array(32))]) {
      assert.equal(base58Encode(bytes), utils.bytes.bs58.encode(bytes));
    }
  });
});
