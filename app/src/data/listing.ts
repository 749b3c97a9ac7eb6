// Listing an agent from the web: the market's terms read on chain, the creator's USDC checked
// against the collateral, the relayer's conformance probe run for the agent address about to be
// registered (so a dead endpoint or a wrong key shows before any collateral is locked),
// register_agent signed by the wallet (locking the collateral), then the relayer's listing, which
// probes the endpoint once more. The signing key's secret, when generated here, never leaves the page
// except as the file the creator downloads; the page signs the signing-key proof with it. A key
// kept elsewhere proves itself with a proof the creator pastes (agent-market key-proof), which is
// checked here before anything is sent.
import type { Agent as Listing, Pricing as WirePricing, WalletSession } from "@agent-market/client";
import type { Pricing } from "@agent-market/program";

import type { ConnectedWallet } from "../wallet/wallet.js";
import { base58Decode, base58Encode } from "../wallet/base58.js";
import { freshMarket, signAndSendInstructions, tokenBalance, usdcAccountOf, type Chain } from "./chain.js";
import type { CheckedDocument } from "./listing-document.js";

export interface MarketTerms {
  minimumCollateralUsdc: bigint;
  minimumPriceUsdc: bigint;
  maxExecutionSecs: number;
  balanceUsdc: bigint;
}

export async function marketTerms(chain: Chain, wallet: string): Promise<MarketTerms> {
  const [market, balanceUsdc] = await Promise.all([freshMarket(chain), tokenBalance(chain, usdcAccountOf(chain, wallet))]);
  return {
    minimumCollateralUsdc: market.minCollateralUsdc,
    minimumPriceUsdc: market.minPricePerCallUsdc,
    maxExecutionSecs: Number(chain.program.MAX_EXECUTION_SECS),
    balanceUsdc,
  };
}

export interface GeneratedKey {
  publicKey: string;
  /** A Solana keypair file: the 32-byte seed then the 32-byte public key, as a JSON array. */
  keypairFile: string;
  /** Signs `message` with the key, in this page only. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** An Ed25519 key made by this browser (WebCrypto); its secret is only ever offered as a file. */
export async function generateSigningKey(): Promise<GeneratedKey> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  // An Ed25519 PKCS#8 key ends with its 32-byte seed.
  const seed = pkcs8.subarray(pkcs8.length - 32);
  return {
    publicKey: base58Encode(publicKey),
    keypairFile: JSON.stringify([...seed, ...publicKey]),
    sign: async (message) => new Uint8Array(await crypto.subtle.sign("Ed25519", pair.privateKey, Uint8Array.from(message))),
  };
}

/** An Ed25519 public key as base58, or why it is not one. */
export function signingKeyProblem(text: string): string | null {
  try {
    return base58Decode(text.trim()).length === 32 ? null : "A signing key is 32 bytes: an address-like base58 string of 32–44 characters.";
  } catch {
    return "A signing key is written in base58 (no 0, O, I or l).";
  }
}

export interface ListingInput {
  document: CheckedDocument;
  endpoint: string;
  signingKey: string;
  /** The signing key's proof for the planned agent and the wallet (docs/program.md). */
  keyProof: Uint8Array;
  pricing: Pricing;
  collateralUsdc: bigint;
  maxExecutionSecs: number;
}

/** A fresh agent id and the address register_agent will give it, known before anything is signed. */
export interface PlannedAgent {
  agentId: Uint8Array;
  agent: string;
}

export function planAgent(chain: Chain): PlannedAgent {
  const agentId = crypto.getRandomValues(new Uint8Array(16));
  return { agentId, agent: chain.program.agentPda(agentId, chain.programId).toBase58() };
}

/** The command that prints the signing-key proof where the key is kept. */
export function keyProofCommand(agent: string, creator: string): string {
  return `agent-market key-proof --signing-key <your key file> --creator ${creator} --agent ${agent}`;
}

/**
 * The signing-key proof for `agent` and `creator`: signed here for a key generated on this page,
 * else the pasted one, which must verify as the program will check it. A string says what is wrong.
 */
export async function signingKeyProof(
  chain: Chain,
  agent: string,
  creator: string,
  key: { generated: GeneratedKey } | { signingKey: string; pastedProof: string },
): Promise<Uint8Array | string> {
  const { parseSigningKeyProof, signingKeyProofDigest, verifySigningKeyProof } = chain.program;
  const agentKey = new chain.web3.PublicKey(agent);
  const creatorKey = new chain.web3.PublicKey(creator);
  if ("generated" in key) return key.generated.sign(signingKeyProofDigest(agentKey, creatorKey));
  if (key.pastedProof.trim() === "") return "Key proof: paste what the command above prints where your key is kept.";
  const proof = parseSigningKeyProof(key.pastedProof);
  if (proof === null) return "Key proof: base58 of a 64-byte signature, as the command prints it.";
  if (!verifySigningKeyProof(proof, base58Decode(key.signingKey.trim()), agentKey, creatorKey)) {
    return "Key proof: not the signing key's proof for this agent and wallet; run the command above with that key.";
  }
  return proof;
}

/** The relayer's conformance probe for the planned agent; resolves with its latency in ms. */
export async function probeEndpoint(session: WalletSession, chain: Chain, agent: string, input: ListingInput): Promise<number> {
  const answer = await session.listings.conformance({
    network: chain.network,
    agent,
    endpoint: input.endpoint,
    signing_key: input.signingKey.trim(),
    input_schema: input.document.input_schema,
    output_schema: input.document.output_schema,
    max_execution_secs: input.maxExecutionSecs,
    key_proof: base58Encode(input.keyProof),
  });
  return answer.latency_ms;
}

/** register_agent for the planned agent, signed by the wallet; resolves with the agent's address. */
export async function registerAgent(chain: Chain, wallet: ConnectedWallet, planned: PlannedAgent, input: ListingInput): Promise<{ agent: string; signature: string }> {
  const { agentPda, listingHash, registerAgentInstructions } = chain.program;
  const { agentId } = planned;
  const creator = new chain.web3.PublicKey(wallet.address);
  const tokenAccount = usdcAccountOf(chain, wallet.address);
  const signature = await signAndSendInstructions(
    chain,
    wallet,
    registerAgentInstructions({
      programId: chain.programId,
      creator,
      agentId,
      creatorTokenAccount: tokenAccount,
      payoutAccount: tokenAccount,
      usdcMint: chain.market.usdcMint,
      terms: {
        signingKey: base58Decode(input.signingKey.trim()),
        endpoint: input.endpoint,
        listingHash: listingHash(input.document),
        pricing: input.pricing,
        maxExecutionSecs: input.maxExecutionSecs,
      },
      collateralUsdc: input.collateralUsdc,
      signingKeyProof: input.keyProof,
    }),
  );
  return { agent: agentPda(agentId, chain.programId).toBase58(), signature };
}

/** The relayer's listing: it reaches the endpoint and probes it before the agent is listed. */
export function listAgent(session: WalletSession, chain: Chain, agent: string, input: ListingInput, pricing: WirePricing): Promise<Listing> {
  return session.listings.create({
    network: chain.network,
    agent,
    ...input.document,
    endpoint: input.endpoint,
    signing_key: input.signingKey.trim(),
    pricing,
  });
}
