// POST /v1/agents/:agent_id/execute end to end: localnet, the relayer on PostgreSQL with BullMQ on
// Redis, creators as real HTTP servers. Every case checks the balances on chain to the unit.
import { strict as assert } from "node:assert";

import { ed25519Verify, escrowBindingOf, fromHex, resultDigest, outputHash, settledLeaves, splitPayment, type WireEscrow } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { CreatorBehaviour } from "./src/creator-server.js";
import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, expectReconciled, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;

interface Execution extends Record<string, unknown> {
  id: string;
  status: string;
  output: unknown;
  receipt: Record<string, string> | null;
  charge: Record<string, string | boolean>;
  transactions: Record<string, string | null>;
  failure: { code: string; refund_reason: string } | null;
}

describe("relayer: execute", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
    agents.push(agent);
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      // Every execution above, whatever its fate, agrees with the chain once finished.
      if (relayer) {
        const report = await expectReconciled(relayer);
        assert.ok(report.executions > 0, "there were executions to reconcile");
      }
    } finally {
        await market?.stop();
    }
  });

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeout_ms = 20_000): Promise<T> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  const getExecution = (payer: { apiKey: string }, id: string) =>
    api<Execution & { transactions: { confirmation: string | null } }>(relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey });

  it("charges the agent's price, pays the creator 99% and the marketplace 1% in one settle, with a verifiable receipt", async () => {
    const payer = await newPayer(market, relayer, 10_000_000n);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const feesBefore = await feeShardsTotal(market);
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const execution = response.body as unknown as Execution;
    assert.equal(execution.status, "succeeded");
    assert.deepEqual(execution.output, { echoed: "summarize this please", words: 3 });
    const { creatorShareUsdc, feeUsdc } = splitPayment(PRICE);
    // A fixed price: the whole escrow charged, nothing returned, no unit price.
    assert.deepEqual(execution.charge, {
      amount_usdc: "0.250000",
      charged_usdc: "0.250000",
      held_usdc: "0.250000",
      returned_usdc: "0.000000",
      units: "0",
      price_per_unit_usdc: null,
      max_units: null,
      creator_share_usdc: "0.247500",
      fee_usdc: "0.002500",
      currency: "USDC",
      covered_by_subscription: false,
    });
    // The answer comes once the settle is accepted; on a cluster it runs at the next slot.
    await market.waitForConfirmed(execution.transactions.settlement!);
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - PRICE);
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + creatorShareUsdc);
    assert.equal(await feeShardsTotal(market), feesBefore + feeUsdc);

    // Execute protocol v2: the creator was sent the escrow's nonce, payer, token account and
    // amount, signed them with the result, and the receipt names them as the chain recorded them.
    const receipt = execution.receipt!;
    const sent = agent.server.received.at(-1)!.body;
    assert.equal(sent.protocol_version, 2);
    const wire = (escrow: object): WireEscrow => {
      const fields = escrow as Record<string, unknown>;
      const names = ["execution_id", "agent", "escrow_nonce", "payer", "payer_token_account", "amount_usdc", "request_hash"] as const;
      return Object.fromEntries(names.map((name) => [name, String(fields[name])])) as unknown as WireEscrow;
    };
    assert.deepEqual(wire(receipt), wire(sent));
    assert.deepEqual(
      [sent.execution_id, sent.payer, sent.payer_token_account, sent.amount_usdc, receipt.units],
      [execution.id, payer.wallet.publicKey.toBase58(), payer.tokenAccount.toBase58(), "0.250000", "0"],
    );
    const [settled] = settledLeaves(await market.events(execution.transactions.settlement!));
    assert.ok(settled, "the settlement's leaf");
    assert.equal(settled.nonce.toString(), receipt.escrow_nonce, "the nonce the escrow recorded at its open");
    const digest = resultDigest({ escrow: escrowBindingOf(wire(receipt)), resultHash: outputHash(execution.output), units: 0n });
    assert.equal(receipt.digest, Buffer.from(digest).toString("hex"));
    assert.equal(receipt.creator_public_key, agent.server.signing.publicKey.toBase58());
    assert.ok(ed25519Verify(fromHex(receipt.creator_signature!), digest, agent.server.signing.publicKey.toBytes()));

    const settlement = await market.connection.getTransaction(execution.transactions.settlement!, {
      commitment: "confirmed",
      maxSupportedTransactionVersion: 0,
    });
    assert.equal(settlement?.meta?.err, null, "the settlement landed");
    const confirmed = await waitFor("confirmation", async () => {
      const got = await getExecution(payer, execution.id);
      return got.body.transactions.confirmation === "confirmed" ? got.body : undefined;
    });
    assert.equal(confirmed.status, "succeeded");

    const key = await api<{ execution_count: number; spent_usdc: string; last_used_at: string | null }>(
      relayer,
      "GET",
      `/v1/keys/${payer.apiKeyId}`,
      { token: payer.token },
    );
    assert.equal(key.body.execution_count, 1);
    assert.equal(key.body.spent_usdc, "0.250000");
  });

  it("answers 402 with the shortfall, before any escrow, for too little balance or allowance", async () => {
    const poor = await newPayer(market, relayer, 100_000n);
    const lowBalance = await execute(relayer, poor, agent.address);
    assert.equal(lowBalance.status, 402);
    assert.equal(errorCode(lowBalance), "insufficient_balance");
    const detail = (lowBalance.body as { error: Record<string, string> }).error;
    assert.equal(detail.required_usdc, "0.250000");
    assert.equal(detail.balance_usdc, "0.100000");
    assert.equal(detail.allowance_usdc, "0.100000");
    assert.equal(detail.mint, market.usdcMint.toBase58());
    assert.equal(detail.network, "devnet");
    assert.match(detail.raise_allowance!, /POST \/v1\/wallet\/allowance/);

    const unapproved = await newPayer(market, relayer, 5_000_000n, 0n);
    const noAllowance = await execute(relayer, unapproved, agent.address);
    assert.equal(noAllowance.status, 402);
    assert.equal(errorCode(noAllowance), "insufficient_allowance");

    assert.equal(await market.usdc(poor.tokenAccount), 100_000n);
    assert.equal(await market.usdc(unapproved.tokenAccount), 5_000_000n);
    const listed = await api<{ data: unknown[] }>(relayer, "GET", "/v1/executions", { token: poor.apiKey });
    assert.deepEqual(listed.body.data, [], "no execution was started");
  });

  const faults: [CreatorBehaviour, number, string, string][] = [
    ["status_500", 502, "creator_error", "CreatorError"],
    ["hang", 504, "creator_timeout", "Timeout"],
    ["trickle", 504, "creator_timeout", "Timeout"],
    ["huge", 502, "creator_error", "CreatorError"],
    ["invalid_json", 502, "invalid_result", "OutputInvalid"],
    ["wrong_key", 502, "invalid_result", "InvalidSignature"],
    ["replay_signature", 502, "invalid_result", "InvalidSignature"],
    // A kit from before execute protocol v2: its signature binds no escrow, so nothing settles with it.
    ["v1_digest", 502, "invalid_result", "InvalidSignature"],
    ["invalid_output", 502, "invalid_result", "OutputInvalid"],
    ["redirect", 502, "creator_error", "CreatorError"],
  ];
  for (const [behaviour, status, code, reason] of faults) {
    it(`refunds the payer in full when the creator's service misbehaves: ${behaviour}`, async () => {
      const faulty = await listAgent(market, relayer, { maxExecutionSecs: 2 });
      agents.push(faulty);
      faulty.server.behaviour = behaviour;
      const payer = await newPayer(market, relayer, 1_000_000n);
      const creatorBefore = await market.usdc(faulty.creator.tokenAccount);
      const response = await execute(relayer, payer, faulty.address);
      assert.equal(response.status, status, JSON.stringify(response.body));
      assert.equal(errorCode(response), code);
      const error = (response.body as { error: { execution_id: string; refund_transaction: string; execution: Execution } }).error;
      assert.match(error.execution_id, /^exec_/);
      assert.equal(error.execution.status, "refunded");
      assert.equal(error.execution.failure?.refund_reason, reason);
      await market.waitForConfirmed(error.refund_transaction);
      const refund = await market.connection.getTransaction(error.refund_transaction, {
        commitment: "confirmed",
        maxSupportedTransactionVersion: 0,
      });
      assert.equal(refund?.meta?.err, null, "the refund landed");
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "the payer is whole");
      assert.equal(await market.usdc(faulty.creator.tokenAccount), creatorBefore, "the creator got nothing");
    });
  }

  it("refunds when the creator's service is unreachable", async () => {
    const gone = await listAgent(market, relayer);
    agents.push(gone);
    await gone.server.close();
    const payer = await newPayer(market, relayer, 1_000_000n);
    const response = await execute(relayer, payer, gone.address);
    assert.equal(response.status, 502);
    assert.equal(errorCode(response), "creator_error");
    // The answer comes once the refund is accepted; on a cluster it runs at the next slot.
    await market.waitForConfirmed((response.body as { error: { refund_transaction: string } }).error.refund_transaction);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("refuses a paused agent from the very next call, and runs it again once resumed", async () => {
    const paused = await listAgent(market, relayer);
    agents.push(paused);
    const payer = await newPayer(market, relayer, 1_000_000n);
    // The first call leaves the listing in the relayer's cache; the pause must reach past it.
    assert.equal((await execute(relayer, payer, paused.address)).status, 200);
    const token = await signIn(relayer, paused.creator.wallet);
    const path = `/v1/agents/${paused.address.toBase58()}`;
    assert.equal((await api(relayer, "POST", `${path}/pause`, { token })).status, 200);
    const refused = await execute(relayer, payer, paused.address);
    assert.equal(errorCode(refused), "agent_unavailable");
    assert.equal((await api(relayer, "POST", `${path}/resume`, { token })).status, 200);
    assert.equal((await execute(relayer, payer, paused.address)).status, 200);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - 2n * PRICE, "the refused call cost nothing");
  });

  it("validates the task and the parameters against the agent's input schema, naming the path", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const cases: [unknown, string][] = [
      [{ task: "x", parameters: { language: "de" } }, "parameters.language"],
      [{ task: "x", parameters: {} }, "parameters.language"],
      [{ task: "x", parameters: { language: "en", max_words: 0 } }, "parameters.max_words"],
      [{ task: "", parameters: { language: "en" } }, "task"],
      [{ task: 5, parameters: { language: "en" } }, "task"],
      [{ task: "x".repeat(20_001), parameters: { language: "en" } }, "task"],
      [{ task: "x", parameters: [] }, "parameters"],
      [{ task: "x" }, "parameters"],
    ];
    for (const [body, param] of cases) {
      const response = await execute(relayer, payer, agent.address, body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(errorCode(response), "validation_failed");
      assert.equal((response.body as { error: { param: string } }).error.param, param);
    }
    const unknown = await execute(relayer, payer, PublicKey.unique());
    assert.equal(unknown.status, 404);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("replays an Idempotency-Key's first answer without charging again; another body is 409", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const headers = { "idempotency-key": "order-42" };
    const first = await execute(relayer, payer, agent.address, undefined, headers);
    assert.equal(first.status, 200);
    const again = await execute(relayer, payer, agent.address, undefined, headers);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal((again.body as { id: string }).id, (first.body as { id: string }).id);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE, "charged once");

    const other = await execute(relayer, payer, agent.address, { task: "another", parameters: { language: "en" } }, headers);
    assert.equal(other.status, 409);
    assert.equal(errorCode(other), "idempotency_key_reused");
    const badKey = await execute(relayer, payer, agent.address, undefined, { "idempotency-key": "has space" });
    assert.equal(errorCode(badKey), "invalid_idempotency_key");
  });

  it("opens one escrow for fifty concurrent requests with one Idempotency-Key", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const headers = { "idempotency-key": "burst-1" };
    const responses = await Promise.all(Array.from({ length: 50 }, () => execute(relayer, payer, agent.address, undefined, headers)));
    const ok = responses.filter((r) => r.status === 200);
    const busy = responses.filter((r) => r.status === 409);
    assert.equal(ok.length + busy.length, 50, responses.map((r) => r.status).join(","));
    assert.ok(ok.length >= 1);
    assert.ok(busy.every((r) => errorCode(r) === "idempotency_request_in_progress"));
    assert.equal(new Set(ok.map((r) => (r.body as { id: string }).id)).size, 1);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE, "charged once");
    const listed = await api<{ data: unknown[] }>(relayer, "GET", "/v1/executions", { token: payer.apiKey });
    assert.equal(listed.body.data.length, 1, "one execution, one escrow");
  });

  it("runs asynchronously with Prefer: respond-async, answering 202 with the execution's URL", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const response = await execute(relayer, payer, agent.address, undefined, { prefer: "respond-async" });
    assert.equal(response.status, 202);
    const id = (response.body as { id: string }).id;
    assert.equal(response.headers.get("location"), `/v1/executions/${id}`);
    assert.equal(response.headers.get("preference-applied"), "respond-async");
    const done = await waitFor("the async execution", async () => {
      const got = await getExecution(payer, id);
      return got.body.status === "succeeded" ? got.body : undefined;
    });
    assert.deepEqual(done.output, { echoed: "summarize this please", words: 3 });
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE);
  });

  it("shows an async execution as running while its creator works", async () => {
    const slow = await listAgent(market, relayer, { maxExecutionSecs: 5 });
    agents.push(slow);
    slow.server.behaviour = "slow";
    slow.server.delay_ms = 1_000;
    const payer = await newPayer(market, relayer, 1_000_000n);
    const response = await execute(relayer, payer, slow.address, undefined, { prefer: "respond-async" });
    assert.equal(response.status, 202);
    const id = (response.body as { id: string }).id;
    const running = await waitFor("the running status", async () => {
      const got = await getExecution(payer, id);
      return got.body.status === "running" ? got.body : undefined;
    });
    assert.equal(running.output, null);
    const done = await waitFor("the async execution", async () => {
      const got = await getExecution(payer, id);
      return got.body.status === "succeeded" ? got.body : undefined;
    });
    assert.equal(done.charge.amount_usdc, "0.250000");
  });

  it("shows a wallet only its own executions", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const stranger = await newPayer(market, relayer, 1_000_000n);
    const done = await execute(relayer, payer, agent.address);
    const id = (done.body as { id: string }).id;
    assert.equal((await getExecution(payer, id)).status, 200);
    const foreign = await getExecution(stranger, id);
    assert.equal(foreign.status, 404);
    assert.equal(errorCode(foreign), "resource_not_found");
    const list = await api<{ data: { id: string }[] }>(relayer, "GET", "/v1/executions", { token: stranger.apiKey });
    assert.ok(!list.body.data.some((e) => e.id === id));
  });

  it("enforces a key's spending cap before any escrow", async () => {
    const payer = await newPayer(market, relayer, 5_000_000n, 5_000_000n, { spending_cap_usdc: "0.400000" });
    assert.equal((await execute(relayer, payer, agent.address)).status, 200);
    const over = await execute(relayer, payer, agent.address);
    assert.equal(over.status, 402);
    assert.equal(errorCode(over), "spending_cap_reached");
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - PRICE);
  });

  it("lets an execution in flight finish when its key is revoked, and refuses the next request", async () => {
    const slow = await listAgent(market, relayer, { maxExecutionSecs: 5 });
    agents.push(slow);
    slow.server.behaviour = "slow";
    slow.server.delay_ms = 700;
    const payer = await newPayer(market, relayer, 1_000_000n);
    const inFlight = execute(relayer, payer, slow.address);
    await sleep(300);
    const revoked = await api(relayer, "DELETE", `/v1/keys/${payer.apiKeyId}`, { token: payer.token });
    assert.equal(revoked.status, 200);
    const next = await execute(relayer, payer, slow.address);
    assert.equal(next.status, 401);
    assert.equal(errorCode(next), "revoked_api_key");
    assert.equal((await inFlight).status, 200);
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE);
  });

  it("sells subscriptions: covered calls cost nothing, hybrid calls past the quota pay the overage", async () => {
    const hybrid = await listAgent(market, relayer, {
      pricing: { kind: "Hybrid", periodPriceUsdc: 2_000_000n, periodSecs: 3600, includedCalls: 2, overagePriceUsdc: 300_000n },
    });
    agents.push(hybrid);
    const payer = await newPayer(market, relayer, 5_000_000n);
    const creatorBefore = await market.usdc(hybrid.creator.tokenAccount);
    const subscribed = await api<{ charge: { amount_usdc: string; creator_share_usdc: string }; included_calls_remaining: number }>(
      relayer,
      "POST",
      `/v1/agents/${hybrid.address.toBase58()}/subscription`,
      { token: payer.apiKey },
    );
    assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body));
    assert.equal(subscribed.body.charge.amount_usdc, "2.000000");
    assert.equal(subscribed.body.included_calls_remaining, 2);
    assert.equal(await market.usdc(payer.tokenAccount), 3_000_000n);
    assert.equal(await market.usdc(hybrid.creator.tokenAccount), creatorBefore + 1_980_000n, "99% of the period at once");

    for (let call = 0; call < 2; call += 1) {
      const covered = await execute(relayer, payer, hybrid.address);
      assert.equal(covered.status, 200, JSON.stringify(covered.body));
      assert.deepEqual((covered.body as Execution).charge, {
        amount_usdc: "0.000000",
        charged_usdc: "0.000000",
        held_usdc: "0.000000",
        returned_usdc: "0.000000",
        units: "0",
        price_per_unit_usdc: null,
        max_units: null,
        creator_share_usdc: "0.000000",
        fee_usdc: "0.000000",
        currency: "USDC",
        covered_by_subscription: true,
      });
    }
    assert.equal(await market.usdc(payer.tokenAccount), 3_000_000n, "included calls cost nothing");
    const overage = await execute(relayer, payer, hybrid.address);
    assert.equal((overage.body as Execution).charge.amount_usdc, "0.300000");
    assert.equal(await market.usdc(payer.tokenAccount), 2_700_000n);

    const payPerUse = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, { token: payer.apiKey });
    assert.equal(payPerUse.status, 409);
    assert.equal(errorCode(payPerUse), "subscription_not_offered");
  });

  it("refuses a subscription agent's calls without a subscription: 402 subscription_required, nothing charged", async () => {
    const monthly = await listAgent(market, relayer, { pricing: { kind: "Subscription", periodPriceUsdc: 1_000_000n, periodSecs: 3600 } });
    agents.push(monthly);
    const payer = await newPayer(market, relayer, 2_000_000n);
    const refused = await execute(relayer, payer, monthly.address);
    assert.equal(refused.status, 402);
    assert.equal(errorCode(refused), "subscription_required");
    assert.equal(await market.usdc(payer.tokenAccount), 2_000_000n);
    const subscribed = await api(relayer, "POST", `/v1/agents/${monthly.address.toBase58()}/subscription`, { token: payer.apiKey });
    assert.equal(subscribed.status, 200);
    const covered = await execute(relayer, payer, monthly.address);
    assert.equal(covered.status, 200);
    assert.equal((covered.body as Execution).charge.amount_usdc, "0.000000");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("counts a subscription bought with a key against its spending cap, and releases a refused one", async () => {
    const monthly = await listAgent(market, relayer, { pricing: { kind: "Subscription", periodPriceUsdc: 1_000_000n, periodSecs: 3600 } });
    agents.push(monthly);
    const path = `/v1/agents/${monthly.address.toBase58()}/subscription`;
    const capped = await newPayer(market, relayer, 5_000_000n, 5_000_000n, { spending_cap_usdc: "0.500000" });
    const over = await api(relayer, "POST", path, { token: capped.apiKey });
    assert.equal(over.status, 402);
    assert.equal(errorCode(over), "spending_cap_reached");
    assert.equal(await market.usdc(capped.tokenAccount), 5_000_000n, "nothing charged");

    const payer = await newPayer(market, relayer, 5_000_000n, 5_000_000n, { spending_cap_usdc: "1.500000" });
    assert.equal((await api(relayer, "POST", path, { token: payer.apiKey })).status, 200);
    const key = await api<{ spent_usdc: string }>(relayer, "GET", `/v1/keys/${payer.apiKeyId}`, { token: payer.token });
    assert.equal(key.body.spent_usdc, "1.000000", JSON.stringify(key.body));
    const second = await api(relayer, "POST", path, { token: payer.apiKey });
    assert.equal(second.status, 402, "a second period would pass the cap");
    assert.equal(errorCode(second), "spending_cap_reached");
    assert.equal(await market.usdc(payer.tokenAccount), 4_000_000n);
  });

  it("answers network_not_configured for a live key on a relayer without mainnet", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const { secret } = await relayer.services.keys
      .create(payer.wallet.publicKey.toBase58(), { name: "live", environment: "live", spending_cap_usdc: null, expires_at: null })
      .catch(() => ({ secret: "" }));
    const response = await execute(relayer, { apiKey: secret }, agent.address);
    assert.equal(response.status, 400);
    assert.equal(errorCode(response), "network_not_configured");
  });
});
