// Agent listings end to end: an agent registered on localnet by its creator, its execution service
// a real HTTP server, listed through the relayer only once every step of the creator checklist
// holds, each failing step answering its own code; discovery; the wallet funding helpers.
import { strict as assert } from "node:assert";

import {
  createReceiptLogInstruction,
  delegatePda,
  listingHash,
  receiptLogPda,
  topUpCollateralInstruction,
  updateMarketInstruction,
  type Pricing,
} from "@agent-market/program";
import { Keypair, PublicKey, Transaction } from "@solana/web3.js";

import { startCreator, ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, type CreatorServer } from "./src/creator-server.js";
import { MIN_COLLATERAL_USDC, MIN_PRICE_PER_CALL_USDC, TestMarket, USDC, type Wallet } from "./src/fixtures.js";
import { registerOnChain } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE: Pricing = { kind: "PayPerUse", priceUsdc: 250_000n };
const PRICE_WIRE = { model: "pay_per_use", price_usdc: "0.250000" };

interface Listing {
  name: string;
  description: string;
  tags: string[];
  input_schema: object;
  output_schema: object;
}

function listingDoc(name = "Summarizer"): Listing {
  return {
    name,
    description: `${name}: summarises a text in a few words.`,
    tags: ["text", "summary"],
    input_schema: ECHO_INPUT_SCHEMA,
    output_schema: ECHO_OUTPUT_SCHEMA,
  };
}

interface Registered {
  creator: Wallet;
  token: string;
  agent: PublicKey;
  server: CreatorServer;
  doc: Listing;
  body: Record<string, unknown>;
}

describe("relayer: agent listings", function () {
  this.timeout(60_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const servers: CreatorServer[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await relayer?.close();
    await market?.stop();
  });

  /** A creator registers an agent on-chain whose terms match `doc` and `server`, and signs in. */
  async function register(
    options: { doc?: Listing; endpoint?: string; collateral?: bigint; behaviour?: CreatorServer["behaviour"]; withoutReceiptLog?: boolean } = {},
  ): Promise<Registered> {
    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58(), options.behaviour);
    servers.push(server);
    const doc = options.doc ?? listingDoc();
    const endpoint = options.endpoint ?? server.url;
    const collateral = options.collateral ?? MIN_COLLATERAL_USDC;
    const { creator, address: agent } = await registerOnChain(market, {
      signing: server.signing,
      endpoint: endpoint,
      listing: doc,
      pricing: PRICE, collateral: collateral,
      withoutReceiptLog: options.withoutReceiptLog ?? false,
    });
    const token = await signIn(relayer, creator.wallet);
    const body = {
      agent: agent.toBase58(),
      ...doc,
      endpoint,
      signing_key: server.signing.publicKey.toBase58(),
      pricing: PRICE_WIRE,
    };
    return { creator, token, agent, server, doc, body };
  }

  const list = (r: Registered, body: Record<string, unknown> = r.body) =>
    api(relayer, "POST", "/v1/agents", { token: r.token, body });

  it("lists an agent once the chain, the collateral, the endpoint and a signed probe all check out", async () => {
    const r = await register();
    const response = await list(r);
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const listing = response.body;
    assert.equal(listing.id, r.agent.toBase58());
    assert.equal(listing.network, "devnet");
    assert.equal(listing.creator, r.creator.wallet.publicKey.toBase58());
    assert.equal(listing.status, "active");
    assert.deepEqual(listing.pricing, PRICE_WIRE);
    assert.equal(listing.collateral_usdc, "100.000000");
    assert.equal(listing.minimum_collateral_usdc, "100.000000");
    assert.equal(listing.max_execution_secs, 30);
    assert.deepEqual(listing.input_schema, ECHO_INPUT_SCHEMA);
    assert.equal(listing.listing_hash, Buffer.from(listingHash(r.doc)).toString("hex"));

    assert.equal(r.server.received.length, 1, "one conformance probe");
    const probe = r.server.received[0]!;
    assert.ok(probe.signature_ok, "the probe carries a valid marketplace signature");
    assert.equal(probe.body.agent, r.agent.toBase58());
    assert.deepEqual(probe.body.parameters, { language: "en" }, "parameters built from the input schema");
    assert.match(probe.body.execution_id, /^exec_/);

    const again = await list(r);
    assert.equal(again.status, 409);
    assert.equal(errorCode(again), "agent_already_listed");
  });

  it("discovers listings by tag, text and status, and shows one with its schemas", async () => {
    const r = await register({ doc: { ...listingDoc("Translator Zeta"), tags: ["translation"] } });
    assert.equal((await list(r)).status, 201);
    const byTag = await api<{ data: { id: string }[] }>(relayer, "GET", "/v1/agents?tag=translation");
    assert.deepEqual(byTag.body.data.map((a) => a.id), [r.agent.toBase58()]);
    const byText = await api<{ data: { id: string }[] }>(relayer, "GET", "/v1/agents?q=zeta");
    assert.deepEqual(byText.body.data.map((a) => a.id), [r.agent.toBase58()]);
    const wildcard = await api<{ data: unknown[] }>(relayer, "GET", "/v1/agents?q=%25");
    assert.deepEqual(wildcard.body.data, [], "% is matched literally");
    const one = await api(relayer, "GET", `/v1/agents/${r.agent.toBase58()}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.output_schema, ECHO_OUTPUT_SCHEMA);
    const unknown = await api(relayer, "GET", `/v1/agents/${Keypair.generate().publicKey.toBase58()}`);
    assert.equal(unknown.status, 404);
    assert.equal(errorCode(unknown), "resource_not_found");
  });

  it("pages through listings with starting_after", async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await list(await register({ doc: { ...listingDoc(`Pager ${i}`), tags: ["pager"] } }))).status, 201);
    const first = await api<{ data: { id: string; name: string }[]; has_more: boolean }>(relayer, "GET", "/v1/agents?tag=pager&limit=2");
    assert.deepEqual(first.body.data.map((a) => a.name), ["Pager 2", "Pager 1"]);
    assert.equal(first.body.has_more, true);
    const next = await api<{ data: { name: string }[]; has_more: boolean }>(
      relayer,
      "GET",
      `/v1/agents?tag=pager&limit=2&starting_after=${first.body.data[1]!.id}`,
    );
    assert.deepEqual(next.body.data.map((a) => a.name), ["Pager 0"]);
    assert.equal(next.body.has_more, false);
  });

  it("refuses an agent that is not on chain, or that another wallet registered", async () => {
    const r = await register();
    const missing = await list(r, { ...r.body, agent: Keypair.generate().publicKey.toBase58() });
    assert.equal(missing.status, 422);
    assert.equal(errorCode(missing), "agent_not_on_chain");

    const stranger = await signIn(relayer, Keypair.generate());
    const foreign = await api(relayer, "POST", "/v1/agents", { token: stranger, body: r.body });
    assert.equal(foreign.status, 403);
    assert.equal(errorCode(foreign), "not_agent_creator");
    assert.equal(r.server.received.length, 0, "no probe before the chain checks pass");
  });

  it("refuses an agent without its receipt log, which its creator pays and not the relayer, then lists it once the creator made it", async () => {
    const r = await register({ withoutReceiptLog: true });
    const relayerKey = relayer.services.config.networks.devnet!.relayer_keypair.publicKey;
    const solBefore = await market.lamports(relayerKey);
    const refused = await list(r);
    assert.equal(refused.status, 422);
    assert.equal(errorCode(refused), "receipt_log_missing");
    assert.equal(r.server.received.length, 0, "no probe");
    assert.equal(await market.exists(receiptLogPda(r.agent, market.programId)), false, "the relayer made no log");
    assert.equal(await market.lamports(relayerKey), solBefore, "nor spent anything");

    const creatorSol = await market.lamports(r.creator.wallet.publicKey);
    await market.send([createReceiptLogInstruction({ programId: market.programId, payer: r.creator.wallet.publicKey, agent: r.agent })], [r.creator.wallet]);
    const log = (await market.connection.getAccountInfo(receiptLogPda(r.agent, market.programId), "confirmed"))!;
    assert.equal(creatorSol - (await market.lamports(r.creator.wallet.publicKey)), BigInt(log.lamports) + 5_000n, "the creator paid its rent and the fee");
    const listed = await list(r);
    assert.equal(listed.status, 201, JSON.stringify(listed.body));
  });

  it("refuses a listing whose on-chain data disagrees: key, pricing, endpoint, listing hash", async () => {
    const r = await register();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ signing_key: Keypair.generate().publicKey.toBase58() }, "signing_key_mismatch", "signing_key"],
      [{ pricing: { model: "pay_per_use", price_usdc: "0.300000" } }, "pricing_mismatch", "pricing"],
      [{ pricing: { model: "subscription", period_price_usdc: "10.000000", period_secs: 3600 } }, "pricing_mismatch", "pricing"],
      [{ endpoint: `${r.server.url}/v2` }, "endpoint_mismatch", "endpoint"],
      [{ description: "Another description." }, "listing_hash_mismatch", ""],
      [{ tags: ["text"] }, "listing_hash_mismatch", ""],
    ];
    for (const [change, code, param] of cases) {
      const response = await list(r, { ...r.body, ...change });
      assert.equal(response.status, 422, JSON.stringify(change));
      assert.equal(errorCode(response), code, JSON.stringify(change));
      assert.equal((response.body as { error: { param?: string } }).error.param ?? "", param);
    }
    assert.equal(r.server.received.length, 0);
  });

  it("refuses an endpoint that answers with a bad signature, a bad output, an error, a redirect or no JSON", async () => {
    const cases: [CreatorServer["behaviour"], string][] = [
      ["wrong_key", "probe_bad_signature"],
      ["invalid_output", "probe_output_invalid"],
      ["status_500", "probe_http_error"],
      ["redirect", "probe_http_error"],
      ["invalid_json", "probe_invalid_response"],
    ];
    for (const [behaviour, code] of cases) {
      const r = await register({ behaviour });
      const response = await list(r);
      assert.equal(response.status, 422, behaviour);
      assert.equal(errorCode(response), code, behaviour);
      assert.equal(r.server.received.length, 1, `${behaviour}: one probe`);
      const listed = await api(relayer, "GET", `/v1/agents/${r.agent.toBase58()}`);
      assert.equal(listed.status, 404, `${behaviour}: not listed`);
    }
  });

  it("refuses an endpoint that does not answer", async () => {
    const closed = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    const url = closed.url;
    await closed.close();
    const r = await register({ endpoint: url });
    const response = await list(r, { ...r.body, endpoint: url });
    assert.equal(response.status, 422);
    assert.equal(errorCode(response), "endpoint_unreachable");
  });

  it("refuses schemas that are not JSON Schema 2020-12, with the parameter", async () => {
    const r = await register();
    const bad = await list(r, { ...r.body, input_schema: { type: "object", properties: { a: { type: "nope" } } } });
    assert.equal(bad.status, 400);
    assert.equal(errorCode(bad), "invalid_schema");
    assert.equal((bad.body as { error: { param: string } }).error.param, "input_schema");
    const notObject = await list(r, { ...r.body, input_schema: { type: "string" } });
    assert.equal(errorCode(notObject), "invalid_schema");
  });

  it("needs a wallet session to list", async () => {
    const r = await register();
    const response = await api(relayer, "POST", "/v1/agents", { body: r.body });
    assert.equal(response.status, 401);
    assert.equal(errorCode(response), "session_required");
  });

  it("updates, pauses, resumes and retires a listing; only its creator can", async () => {
    const r = await register();
    assert.equal((await list(r)).status, 201);
    const path = `/v1/agents/${r.agent.toBase58()}`;
    const stranger = await signIn(relayer, Keypair.generate());
    const foreign = await api(relayer, "PATCH", path, { token: stranger, body: { name: "Mine now" } });
    assert.equal(foreign.status, 404);

    const renamed = await api(relayer, "PATCH", path, { token: r.token, body: { name: "Renamed" } });
    assert.equal(renamed.status, 422, "a new name changes the listing hash");
    assert.equal(errorCode(renamed), "listing_hash_mismatch");

    const probe = await api(relayer, "PATCH", path, { token: r.token, body: { probe: { parameters: { language: "fr" } } } });
    assert.equal(probe.status, 200, JSON.stringify(probe.body));
    assert.deepEqual(r.server.received.at(-1)!.body.parameters, { language: "fr" });

    const paused = await api(relayer, "POST", `${path}/pause`, { token: r.token });
    assert.equal(paused.body.status, "paused");
    const active = await api<{ data: { id: string }[] }>(relayer, "GET", "/v1/agents?limit=100");
    assert.ok(!active.body.data.some((a) => a.id === r.agent.toBase58()), "paused agents are not offered");

    r.server.behaviour = "wrong_key";
    const refused = await api(relayer, "POST", `${path}/resume`, { token: r.token });
    assert.equal(errorCode(refused), "probe_bad_signature", "resuming runs the checklist again");
    r.server.behaviour = "echo";
    assert.equal((await api(relayer, "POST", `${path}/resume`, { token: r.token })).body.status, "active");

    const retired = await api(relayer, "POST", `${path}/retire`, { token: r.token });
    assert.equal(retired.body.status, "retired");
    const change = await api(relayer, "POST", `${path}/pause`, { token: r.token });
    assert.equal(change.status, 409);
    assert.equal(errorCode(change), "listing_retired");
  });

  it("shows the collateral the agent account holds now, not the one it was listed with", async () => {
    const r = await register();
    assert.equal((await list(r)).status, 201);
    const path = `/v1/agents/${r.agent.toBase58()}`;
    assert.equal((await api(relayer, "GET", path)).body.collateral_usdc, "100.000000");
    // A top-up moves the collateral on chain only, as a slash or a withdrawal does.
    const minted = await market.localnet.mintUsdc(r.creator.wallet.publicKey, 5n * USDC);
    await market.connection.confirmTransaction({ signature: minted.signature, ...(await market.connection.getLatestBlockhash()) });
    await market.send(
      [
        topUpCollateralInstruction({
          programId: market.programId,
          creator: r.creator.wallet.publicKey,
          agent: r.agent,
          creatorTokenAccount: r.creator.tokenAccount,
          usdcMint: market.usdcMint,
          amountUsdc: 5n * USDC,
        }),
      ],
      [r.creator.wallet],
    );
    // Read again past the relayer's brief cache of the account (COLLATERAL_MAX_AGE_MS).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal((await api(relayer, "GET", path)).body.collateral_usdc, "105.000000");
    const listed = await api<{ data: { id: string; collateral_usdc: string }[] }>(relayer, "GET", "/v1/agents?limit=100");
    assert.equal(listed.body.data.find((a) => a.id === r.agent.toBase58())?.collateral_usdc, "105.000000");
    const paused = await api(relayer, "POST", `${path}/pause`, { token: r.token });
    assert.equal(paused.body.collateral_usdc, "105.000000");
  });

  it("shows a wallet's balance and allowance, and builds the approve and revoke it signs", async () => {
    const payer = await market.walletWithUsdc(40n * USDC);
    const token = await signIn(relayer, payer.wallet);
    const funding = async () => (await api(relayer, "GET", "/v1/wallet/funding?network=devnet", { token })).body;
    const before = await funding();
    assert.equal(before.balance_usdc, "40.000000");
    assert.equal(before.allowance_usdc, "0.000000");
    assert.equal(before.delegate, delegatePda(market.programId).toBase58());
    assert.equal(before.usdc_mint, market.usdcMint.toBase58());

    for (const [name, cap] of [["a", "5.000000"], ["b", "7.500000"]] as const) {
      const created = await api(relayer, "POST", "/v1/keys", { token, body: { name, environment: "test", spending_cap_usdc: cap } });
      assert.equal(created.status, 201);
    }
    const approve = await api<{ transaction: string; amount_usdc: string }>(relayer, "POST", "/v1/wallet/allowance", {
      token,
      body: { network: "devnet" },
    });
    assert.equal(approve.status, 200, JSON.stringify(approve.body));
    assert.equal(approve.body.amount_usdc, "12.500000", "the sum of the keys' caps");
    const send = async (base64: string) => {
      const transaction = Transaction.from(Buffer.from(base64, "base64"));
      assert.ok(transaction.feePayer?.equals(payer.wallet.publicKey));
      transaction.partialSign(payer.wallet);
      const signature = await market.connection.sendRawTransaction(transaction.serialize());
      await market.waitForConfirmed(signature);
    };
    await send(approve.body.transaction);
    assert.equal((await funding()).allowance_usdc, "12.500000");

    const explicit = await api<{ transaction: string }>(relayer, "POST", "/v1/wallet/allowance", {
      token,
      body: { network: "devnet", amount_usdc: "1.250000" },
    });
    await send(explicit.body.transaction);
    assert.equal((await funding()).allowance_usdc, "1.250000");

    const revoke = await api<{ transaction: string }>(relayer, "POST", "/v1/wallet/allowance/revoke", { token, body: { network: "devnet" } });
    await send(revoke.body.transaction);
    assert.equal((await funding()).allowance_usdc, "0.000000");
  });

  it("tells clients the marketplace's program, mint, fee, minimum collateral and request key", async () => {
    const response = await api<{ fee_bps: number; request_signing_key: string; networks: Record<string, unknown>[] }>(
      relayer,
      "GET",
      "/v1/marketplace",
    );
    assert.equal(response.status, 200);
    assert.equal(response.body.fee_bps, 100);
    assert.equal(response.body.request_signing_key, relayer.marketplaceKey.publicKey.toBase58());
    assert.equal(response.body.networks.length, 1);
    assert.equal(response.body.networks[0]!.name, "devnet");
    assert.equal(response.body.networks[0]!.usdc_mint, market.usdcMint.toBase58());
    assert.equal(response.body.networks[0]!.minimum_collateral_usdc, "100.000000");
    assert.equal(response.body.networks[0]!.request_signing_key, relayer.marketplaceKey.publicKey.toBase58());
  });
});

describe("relayer: listing checks that need a market of their own", function () {
  this.timeout(60_000);

  it("refuses an agent whose collateral is below the marketplace minimum", async () => {
    const market = await TestMarket.start();
    const relayer = await startRelayer(market.localnet);
    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    try {
      const doc = listingDoc();
      const { creator, address } = await registerOnChain(market, {
        signing: server.signing,
        endpoint: server.url,
        listing: doc,
        pricing: PRICE,
      });
      const onChain = await market.localnet.marketConfig();
      await market.send(
        [
          updateMarketInstruction({
            programId: market.programId,
            authority: market.keys.authority.publicKey,
            treasury: onChain.treasury,
            params: {
              relayer: market.relayer.publicKey,
              arbiter: market.arbiter.publicKey,
              minCollateralUsdc: 2n * MIN_COLLATERAL_USDC,
              minPricePerCallUsdc: MIN_PRICE_PER_CALL_USDC,
              escrowGraceSecs: 60,
              disputeWindowSecs: 3 * 24 * 3600,
              collateralCooldownSecs: 7 * 24 * 3600,
              escrowsPaused: false,
            },
            newAuthority: market.keys.authority.publicKey,
          }),
        ],
        [market.keys.authority],
      );
      const token = await signIn(relayer, creator.wallet);
      const response = await api<{ error: Record<string, string> }>(relayer, "POST", "/v1/agents", {
        token,
        body: {
          agent: address.toBase58(),
          ...doc,
          endpoint: server.url,
          signing_key: server.signing.publicKey.toBase58(),
          pricing: PRICE_WIRE,
        },
      });
      assert.equal(response.status, 422);
      assert.equal(errorCode(response), "collateral_below_minimum");
      assert.equal(response.body.error.minimum_collateral_usdc, "200.000000");
      assert.equal(response.body.error.collateral_usdc, "100.000000");
      assert.equal(server.received.length, 0);
    } finally {
      await server.close();
      await relayer.close();
      await market.stop();
    }
  });

  it("refuses private, loopback and metadata endpoints under the public policy, before any request", async () => {
    const market = await TestMarket.start();
    const relayer = await startRelayer(market.localnet, { ENDPOINT_POLICY: "public", PROBE_TIMEOUT_MS: "1000" });
    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    const port = new URL(server.url).port;
    try {
      for (const endpoint of [
        `https://127.0.0.1:${port}`,
        `https://localhost:${port}`,
        `https://[::ffff:127.0.0.1]:${port}`,
        `https://0x7f.1:${port}`,
        "https://10.0.0.7",
        "https://169.254.169.254/latest",
        "https://[fd00:ec2::254]",
        `http://127.0.0.1:${port}`,
      ]) {
        const doc = listingDoc();
        const { creator, address } = await registerOnChain(market, {
          signing: server.signing,
          endpoint: endpoint,
          listing: doc,
          pricing: PRICE,
        });
        const token = await signIn(relayer, creator.wallet);
        const response = await api(relayer, "POST", "/v1/agents", {
          token,
          body: { agent: address.toBase58(), ...doc, endpoint, signing_key: server.signing.publicKey.toBase58(), pricing: PRICE_WIRE },
        });
        assert.equal(response.status, 422, endpoint);
        assert.equal(errorCode(response), "endpoint_not_allowed", endpoint);
      }
      assert.equal(server.received.length, 0, "the loopback server was never called");
    } finally {
      await server.close();
      await relayer.close();
      await market.stop();
    }
  });
});
