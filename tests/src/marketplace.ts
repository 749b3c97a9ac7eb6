// A whole marketplace for the execution tests: localnet, a relayer (PostgreSQL, BullMQ on Redis),
// creators whose services are real HTTP servers with agents registered on-chain and listed, and
// payers with USDC, an allowance and an API key.
import { strict as assert } from "node:assert";

import {
  fetchAgent,
  updateAgentInstruction,
  agentPda,
  feeShardPda,
  FEE_SHARD_COUNT,
  listingHash,
  registerAgentInstructions,
  type ListingDocument,
  type Pricing,
  formatUsdc,
} from "@agent-market/program";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import type { Keypair, PublicKey } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorBehaviour, type CreatorServer } from "./creator-server.js";
import { MIN_COLLATERAL_USDC, randomId, signingKeyProof, TestMarket, type Wallet } from "./fixtures.js";
import { api, signIn, type RunningRelayer } from "./relayer.js";

export interface ListedAgent {
  address: PublicKey;
  creator: Wallet;
  server: CreatorServer;
  pricing: Pricing;
}

export interface Payer extends Wallet {
  token: string;
  apiKey: string;
  apiKeyId: string;
}

export function pricingWire(pricing: Pricing): Record<string, unknown> {
  switch (pricing.kind) {
    case "PayPerUse":
      return { model: "pay_per_use", price_usdc: formatUsdc(pricing.priceUsdc) };
    case "Subscription":
      return { model: "subscription", period_price_usdc: formatUsdc(pricing.periodPriceUsdc), period_secs: pricing.periodSecs };
    case "Hybrid":
      return {
        model: "hybrid",
        period_price_usdc: formatUsdc(pricing.periodPriceUsdc),
        period_secs: pricing.periodSecs,
        included_calls: pricing.includedCalls,
        overage_price_usdc: formatUsdc(pricing.overagePriceUsdc),
      };
    case "Metered":
      return {
        model: "metered",
        price_per_unit_usdc: formatUsdc(pricing.pricePerUnitUsdc),
        unit: "words",
        max_units_per_call: pricing.maxUnitsPerCall.toString(),
      };
  }
}

/**
 * A creator registers an agent on-chain with these terms: a new one holding exactly the
 * collateral, or `terms.creator`, given the collateral first.
 */
export async function registerOnChain(
  market: TestMarket,
  terms: {
    /** The signing key, or its public half with its proof for this agent and creator (made elsewhere). */
    signing: Keypair | { publicKey: PublicKey; keyProof: Uint8Array };
    /** The agent's id; a fresh one when left out. */
    agentId?: Uint8Array;
    endpoint: string;
    listing: ListingDocument;
    pricing: Pricing;
    maxExecutionSecs?: number;
    collateral?: bigint;
    creator?: Wallet;
    /** Leaves out the receipt log registration creates (an agent registered by other tools). */
    withoutReceiptLog?: boolean;
  },
): Promise<{ creator: Wallet; agentId: Uint8Array; address: PublicKey }> {
  const collateral = terms.collateral ?? MIN_COLLATERAL_USDC;
  let creator = terms.creator;
  if (creator) {
    const minted = await market.localnet.mintUsdc(creator.wallet.publicKey, collateral);
    await market.connection.confirmTransaction({ signature: minted.signature, ...(await market.connection.getLatestBlockhash()) });
  } else {
    creator = await market.walletWithUsdc(collateral);
  }
  const agentId = terms.agentId ?? randomId();
  const address = agentPda(agentId, market.programId);
  const { signing } = terms;
  await market.send(
    registerAgentInstructions({
        programId: market.programId,
        creator: creator.wallet.publicKey,
        agentId,
        creatorTokenAccount: creator.tokenAccount,
        payoutAccount: creator.tokenAccount,
        usdcMint: market.usdcMint,
        terms: {
          signingKey: terms.signing.publicKey.toBytes(),
          endpoint: terms.endpoint,
          listingHash: listingHash(terms.listing),
          pricing: terms.pricing,
          maxExecutionSecs: terms.maxExecutionSecs ?? 30,
        },
        collateralUsdc: collateral,
        signingKeyProof: "keyProof" in signing ? signing.keyProof : signingKeyProof(signing, address, creator.wallet.publicKey),
      }).slice(0, terms.withoutReceiptLog ? 2 : 3),
    [creator.wallet],
  );
  return { creator, agentId, address };
}

/** Registers an agent on-chain for a new creator and lists it through the relayer. */
export async function listAgent(
  market: TestMarket,
  relayer: Pick<RunningRelayer, "url" | "marketplaceKey">,
  options: { pricing?: Pricing; maxExecutionSecs?: number; behaviour?: CreatorBehaviour } = {},
): Promise<ListedAgent> {
  const pricing = options.pricing ?? { kind: "PayPerUse", priceUsdc: 250_000n };
  const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58(), options.behaviour);
  const doc = {
    name: "Echo",
    description: "Echoes the task and counts its words.",
    tags: ["test"],
    input_schema: ECHO_INPUT_SCHEMA,
    output_schema: ECHO_OUTPUT_SCHEMA,
  };
  const { creator, address } = await registerOnChain(market, {
    signing: server.signing,
    endpoint: server.url,
    listing: doc,
    pricing,
    maxExecutionSecs: options.maxExecutionSecs ?? 3,
  });
  const token = await signIn(relayer, creator.wallet);
  const listed = await api(relayer, "POST", "/v1/agents", {
    token,
    body: {
      agent: address.toBase58(),
      ...doc,
      endpoint: server.url,
      signing_key: server.signing.publicKey.toBase58(),
      pricing: pricingWire(pricing),
    },
  });
  assert.equal(listed.status, 201, JSON.stringify(listed.body));
  return { address, creator, server, pricing };
}

/** A wallet holding `usdc` with `allowance` approved, signed in, with a test API key. */
export async function newPayer(
  market: TestMarket,
  relayer: Pick<RunningRelayer, "url">,
  usdc: bigint,
  allowance: bigint = usdc,
  key: Record<string, unknown> = {},
): Promise<Payer> {
  const wallet = allowance > 0n ? await market.payer(usdc, allowance) : await market.walletWithUsdc(usdc);
  const token = await signIn(relayer, wallet.wallet);
  const created = await api<{ secret: string; id: string }>(relayer, "POST", "/v1/keys", {
    token,
    body: { name: "tests", environment: "test", ...key },
  });
  assert.equal(created.status, 201);
  return { ...wallet, token, apiKey: created.body.secret, apiKeyId: created.body.id };
}

/** USDC in the fee shards, all of them. */
export async function feeShardsTotal(market: TestMarket): Promise<bigint> {
  let total = 0n;
  for (let i = 0; i < FEE_SHARD_COUNT; i += 1) total += await market.usdc(feeShardPda(i, market.programId));
  return total;
}

export function tokenAccountOf(market: TestMarket, owner: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(market.usdcMint, owner);
}

export function execute(
  relayer: { url: string },
  payer: { apiKey: string },
  agent: PublicKey,
  body: unknown = { task: "summarize this please", parameters: { language: "en" } },
  headers: Record<string, string> = {},
) {
  return api(relayer, "POST", `/v1/agents/${agent.toBase58()}/execute`, { token: payer.apiKey, body, headers });
}

/**
 * The creator's `update_agent` with `pricing`, every other term as the account holds it: a price
 * changed on chain, which the relayer's listing does not show until the creator's PATCH.
 */
export async function repriceOnChain(market: TestMarket, agent: ListedAgent, pricing: Pricing): Promise<void> {
  const onChain = await fetchAgent(market.connection, agent.address, { programId: market.programId });
  assert.ok(onChain, "the agent is on chain");
  await market.send(
    [
      updateAgentInstruction({
        programId: market.programId,
        creator: agent.creator.wallet.publicKey,
        agent: agent.address,
        payoutAccount: onChain.payoutAccount,
        terms: {
          signingKey: onChain.signingKey,
          endpoint: onChain.endpoint,
          listingHash: onChain.listingHash,
          pricing,
          maxExecutionSecs: onChain.maxExecutionSecs,
        },
      }),
    ],
    [agent.creator.wallet],
  );
}
