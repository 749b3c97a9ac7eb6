// Agent cloning (security review, issue 27): anyone could register an agent with a victim's
// public endpoint and signing key and a payout account of their own, pass the probe (the victim's
// service answers it) and be paid for the victim's work. Here, against localnet, a real relayer and
// a real creator service: the clone cannot be registered without the key's proof (replaying the
// victim's own proof does not help), and a clone with a key of its own cannot list the victim's
// endpoint, in any spelling; the victim's service never hears of it and no USDC moves.
import { strict as assert } from "node:assert";

import {
  agentPda,
  collateralVaultPda,
  listingHash,
  registerAgentInstruction,
  registerAgentInstructions,
  signingKeyProofInstruction,
} from "@agent-market/program";
import { Keypair, Transaction } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator } from "./src/creator-server.js";
import { MIN_COLLATERAL_USDC, randomId, signingKeyProof, TestMarket } from "./src/fixtures.js";
import { feeShardsTotal, listAgent, pricingWire, registerOnChain, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const DOC = {
  name: "Echo",
  description: "Echoes the task and counts its words.",
  tags: ["test"],
  input_schema: ECHO_INPUT_SCHEMA,
  output_schema: ECHO_OUTPUT_SCHEMA,
};

describe("relayer + program: an agent cannot be cloned", function () {
  this.timeout(300_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let victim: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    victim = await listAgent(market, relayer);
  });
  after(async () => {
    await victim?.server.close();
    await relayer?.close();
    await market?.stop();
  });

  it("refuses on chain a clone of the victim's key without the key's own proof for the clone", async () => {
    const cloner = await market.walletWithUsdc(MIN_COLLATERAL_USDC);
    const agentId = randomId();
    const clone = agentPda(agentId, market.programId);
    const input = {
      programId: market.programId,
      creator: cloner.wallet.publicKey,
      agentId,
      creatorTokenAccount: cloner.tokenAccount,
      payoutAccount: cloner.tokenAccount,
      usdcMint: market.usdcMint,
      terms: {
        signingKey: victim.server.signing.publicKey.toBytes(),
        endpoint: victim.server.url,
        listingHash: listingHash(DOC),
        pricing: victim.pricing,
        maxExecutionSecs: 3,
      },
      collateralUsdc: MIN_COLLATERAL_USDC,
    };
    const received = victim.server.received.length;
    const shards = await feeShardsTotal(market);

    // No proof at all: the request the review made.
    await market.expectPreflightError([registerAgentInstruction(input)], [cloner.wallet], "MissingSigningKeyProof");
    // The victim's proof, verified as its own registration carried it on chain: it names the
    // victim's agent and wallet, not the clone's.
    const victimProof = signingKeyProof(victim.server.signing, victim.address, victim.creator.wallet.publicKey);
    const replayed = signingKeyProofInstruction({
      agent: victim.address,
      creator: victim.creator.wallet.publicKey,
      signingKey: victim.server.signing.publicKey.toBytes(),
      signingKeyProof: victimProof,
    });
    await market.expectPreflightError([replayed, registerAgentInstruction(input)], [cloner.wallet], "SigningKeyProofDigestMismatch");
    // The same proof claimed for the clone's digest: the Ed25519 precompile itself refuses it.
    const claimed = await market.connection.simulateTransaction(
      new Transaction().add(...registerAgentInstructions({ ...input, signingKeyProof: victimProof })),
      [cloner.wallet],
    );
    assert.deepEqual(claimed.value.err, { InstructionError: [0, { Custom: 2 }] }, "the precompile's invalid signature");
    // A proof by the cloner's own key, for the clone, registering the victim's key.
    const ownKey = Keypair.generate();
    const own = signingKeyProofInstruction({
      agent: clone,
      creator: cloner.wallet.publicKey,
      signingKey: ownKey.publicKey.toBytes(),
      signingKeyProof: signingKeyProof(ownKey, clone, cloner.wallet.publicKey),
    });
    await market.expectPreflightError([own, registerAgentInstruction(input)], [cloner.wallet], "SigningKeyProofKeyMismatch");

    assert.equal(await market.exists(clone), false, "no clone on chain");
    assert.equal(await market.exists(collateralVaultPda(clone, market.programId)), false);
    assert.equal(await market.usdc(cloner.tokenAccount), MIN_COLLATERAL_USDC, "the cloner's USDC did not move");
    assert.equal(await feeShardsTotal(market), shards);
    assert.equal(victim.server.received.length, received, "the victim's service heard nothing");

    // Listing the address anyway: the endpoint is the victim's (and nothing is on chain to list).
    const token = await signIn(relayer, cloner.wallet);
    const listed = await api(relayer, "POST", "/v1/agents", {
      token,
      body: {
        agent: clone.toBase58(),
        ...DOC,
        endpoint: victim.server.url,
        signing_key: victim.server.signing.publicKey.toBase58(),
        pricing: pricingWire(victim.pricing),
      },
    });
    assert.equal(listed.status, 409);
    assert.equal(errorCode(listed), "endpoint_already_listed");
    assert.equal(victim.server.received.length, received);
  });

  it("refuses a listing of the victim's endpoint by another creator, 409 endpoint_already_listed, before any probe", async () => {
    // With a key of its own the clone registers (the program cannot know whose service a URL is),
    // but the relayer lists an endpoint for the creator who listed it first, and only for them.
    const received = victim.server.received.length;
    for (const endpoint of [victim.server.url, `${victim.server.url}/`, victim.server.url.replace("http://", "HTTP://")]) {
      const signing = Keypair.generate();
      const { creator, address } = await registerOnChain(market, { signing, endpoint, listing: DOC, pricing: victim.pricing, maxExecutionSecs: 3 });
      const collateral = await market.usdc(collateralVaultPda(address, market.programId));
      const token = await signIn(relayer, creator.wallet);
      const listed = await api(relayer, "POST", "/v1/agents", {
        token,
        body: {
          agent: address.toBase58(),
          ...DOC,
          endpoint,
          signing_key: signing.publicKey.toBase58(),
          pricing: pricingWire(victim.pricing),
        },
      });
      assert.equal(listed.status, 409, JSON.stringify(listed.body));
      assert.equal(errorCode(listed), "endpoint_already_listed", endpoint);
      assert.equal((await api(relayer, "GET", `/v1/agents/${address.toBase58()}`)).status, 404, "not listed");
      assert.equal(await market.usdc(creator.tokenAccount), 0n, "the collateral stays locked, nothing else moved");
      assert.equal(await market.usdc(collateralVaultPda(address, market.programId)), collateral);
    }
    assert.equal(victim.server.received.length, received, "the victim's service was never probed for a clone");
  });

  it("refuses an update that moves another creator's listing onto the victim's endpoint", async () => {
    const other = await listAgent(market, relayer);
    try {
      const token = await signIn(relayer, other.creator.wallet);
      const received = victim.server.received.length;
      const moved = await api(relayer, "PATCH", `/v1/agents/${other.address.toBase58()}`, {
        token,
        body: { endpoint: victim.server.url },
      });
      assert.equal(moved.status, 409, JSON.stringify(moved.body));
      assert.equal(errorCode(moved), "endpoint_already_listed");
      assert.equal(victim.server.received.length, received);
      assert.equal((await api<{ endpoint: string }>(relayer, "GET", `/v1/agents/${other.address.toBase58()}`)).body.endpoint, other.server.url);
    } finally {
      await other.server.close();
    }
  });

  it("lets one creator list several agents on one endpoint", async () => {
    const { address } = await registerOnChain(market, {
      signing: victim.server.signing,
      endpoint: victim.server.url,
      listing: DOC,
      pricing: victim.pricing,
      maxExecutionSecs: 3,
      creator: victim.creator,
    });
    const token = await signIn(relayer, victim.creator.wallet);
    const listed = await api(relayer, "POST", "/v1/agents", {
      token,
      body: {
        agent: address.toBase58(),
        ...DOC,
        endpoint: victim.server.url,
        signing_key: victim.server.signing.publicKey.toBase58(),
        pricing: pricingWire(victim.pricing),
      },
    });
    assert.equal(listed.status, 201, JSON.stringify(listed.body));
  });

  it("takes two creators listing one endpoint at the same moment one at a time: one listed, the other refused", async () => {
    // One service answering for two wallets' agents with one key (both registrations carry the
    // key's proof): whoever lists first holds the endpoint, even when both probes pass together.
    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    try {
      const contenders = await Promise.all(
        [0, 1].map(() => registerOnChain(market, { signing: server.signing, endpoint: server.url, listing: DOC, pricing: victim.pricing, maxExecutionSecs: 3 })),
      );
      const answers = await Promise.all(
        contenders.map(async ({ creator, address }) =>
          api(relayer, "POST", "/v1/agents", {
            token: await signIn(relayer, creator.wallet),
            body: {
              agent: address.toBase58(),
              ...DOC,
              endpoint: server.url,
              signing_key: server.signing.publicKey.toBase58(),
              pricing: pricingWire(victim.pricing),
            },
          }),
        ),
      );
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 409], JSON.stringify(answers.map((answer) => answer.body)));
      assert.equal(errorCode(answers.find((answer) => answer.status === 409)!), "endpoint_already_listed");
    } finally {
      await server.close();
    }
  });
});
