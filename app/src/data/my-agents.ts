// A creator's own agents: figures from the indexer (on-chain records only), the listing from the
// relayer, and the Agent account with its collateral read on chain; the collateral's moves
// (retire, top up, withdraw) are transactions the creator's wallet signs.
import type { Agent as Listing, WalletSession } from "@agent-market/client";
import { AgentMarketError } from "@agent-market/client";
import type { Agent as AgentAccount } from "@agent-market/program";

import type { ConnectedWallet } from "../wallet/wallet.js";
import { getAgent } from "./agents.js";
import { chainNowSecs, freshMarket, signAndSendInstructions, tokenBalance, usdcAccountOf, type Chain } from "./chain.js";
import type { CreatedAgentsQuery, CreatedAgentsQueryVariables, CreatorQuery, CreatorQueryVariables, EarningsQuery, EarningsQueryVariables } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

/** A creator's figures, as the Creator query reads them. */
export type CreatorFigures = CreatorQuery["creator"];
export type CreatorAgent = CreatorFigures["agents"][number];
export type RefundCounts = CreatorAgent["uptime"][number]["refunded"];

const CREATOR = /* GraphQL */ `
  query Creator($address: String!) {
    creator(address: $address) {
      earnings { usdc }
      collateral { usdc }
      agents {
        address status retiredAt collateral { usdc }
        uptime { window executions successRate latencySeconds { p50 p95 }
          refunded { timeout creatorError invalidSignature outputInvalid relayerError total } }
        daily(days: 90) { day executions successRate status }
      }
    }
  }
`;

export async function creatorFigures(url: string | null, creator: string): Promise<CreatorFigures> {
  const variables: CreatorQueryVariables = { address: creator };
  return (await graphql<CreatorQuery>(url, CREATOR, variables)).creator;
}

/** The agent's settled executions and share of one day, as the Earnings query reads them. */
export type DailyEarning = EarningsQuery["usage"]["buckets"][number];

const EARNINGS = /* GraphQL */ `
  query Earnings($agent: String!, $from: String!) {
    usage(dimension: AGENT, subject: $agent) { buckets(granularity: DAY, from: $from) { start settled earned { usdc } } }
  }
`;

const CREATED_AGENTS = /* GraphQL */ `
  query CreatedAgents($address: String!) {
    creator(address: $address) { agents { address } }
  }
`;

/** The addresses of the agents `creator` registered, retired ones too. */
export async function createdAgents(url: string | null, creator: string): Promise<string[]> {
  const variables: CreatedAgentsQueryVariables = { address: creator };
  return (await graphql<CreatedAgentsQuery>(url, CREATED_AGENTS, variables)).creator.agents.map((agent) => agent.address);
}

/** The agent's share of settled executions, per day, over the last 30 days. */
export async function dailyEarnings(url: string | null, agent: string): Promise<DailyEarning[]> {
  const from = new Date(Date.now() - 29 * 86_400_000).toISOString();
  const variables: EarningsQueryVariables = { agent, from };
  return (await graphql<EarningsQuery>(url, EARNINGS, variables)).usage.buckets;
}

/** The relayer's listing; null for an agent registered on chain but never listed here. */
export async function listingOf(address: string): Promise<Listing | null> {
  try {
    return await getAgent(address);
  } catch (error) {
    if (error instanceof AgentMarketError && error.status === 404) return null;
    throw error;
  }
}

export interface Collateral {
  account: AgentAccount;
  cooldownSecs: number;
  nowSecs: number;
  /** The market's minimum collateral, below which the relayer will not list or resume the agent. */
  minimumUsdc: bigint;
  /** Why the collateral cannot be withdrawn now; null when it can. */
  locked: { reason: "active" } | { reason: "disputes"; open: number } | { reason: "cooldown"; unlocksAtSecs: number } | null;
}

export async function collateralOf(chain: Chain, address: string): Promise<Collateral> {
  const account = await chain.program.fetchAgent(chain.connection, new chain.web3.PublicKey(address), { programId: chain.programId });
  if (account === null) throw new Error(`${address} has no Agent account on chain.`);
  const [market, nowSecs] = await Promise.all([freshMarket(chain), chainNowSecs(chain)]);
  const cooldownSecs = market.collateralCooldownSecs;
  // Covered calls of subscriptions sold before retirement are honoured until they expire, and the
  // program counts the cooldown from then (withdraw_collateral).
  const unlocksAtSecs = Math.max(Number(account.retiredAt), Number(account.subscriptionsExpireAt)) + cooldownSecs;
  const locked: Collateral["locked"] =
    account.status !== "Retired"
      ? { reason: "active" }
      : account.openDisputes > 0
        ? { reason: "disputes", open: account.openDisputes }
        : nowSecs < unlocksAtSecs
          ? { reason: "cooldown", unlocksAtSecs }
          : null;
  return { account, cooldownSecs, nowSecs, locked, minimumUsdc: market.minCollateralUsdc };
}

/** retire_agent on chain (no new escrows, for good; the cooldown starts), then the listing. */
export async function retireAgent(chain: Chain, wallet: ConnectedWallet, session: WalletSession, address: string): Promise<string> {
  const creator = new chain.web3.PublicKey(wallet.address);
  const agent = new chain.web3.PublicKey(address);
  const signature = await signAndSendInstructions(chain, wallet, [chain.program.retireAgentInstruction({ creator, agent, programId: chain.programId })]);
  if ((await listingOf(address)) !== null) await session.listings.retire(address, { network: chain.network });
  return signature;
}

export async function topUpCollateral(chain: Chain, wallet: ConnectedWallet, address: string, amountUsdc: bigint): Promise<string> {
  const creator = new chain.web3.PublicKey(wallet.address);
  return signAndSendInstructions(chain, wallet, [
    chain.program.topUpCollateralInstruction({
      creator,
      agent: new chain.web3.PublicKey(address),
      creatorTokenAccount: usdcAccountOf(chain, wallet.address),
      usdcMint: chain.market.usdcMint,
      amountUsdc,
      programId: chain.programId,
    }),
  ]);
}

/** The whole collateral back to the creator's USDC account; resolves with what arrived. */
export async function withdrawCollateral(chain: Chain, wallet: ConnectedWallet, address: string): Promise<{ signature: string; withdrawnUsdc: bigint }> {
  const creator = new chain.web3.PublicKey(wallet.address);
  const creatorTokenAccount = usdcAccountOf(chain, wallet.address);
  const before = await tokenBalance(chain, creatorTokenAccount);
  const signature = await signAndSendInstructions(chain, wallet, [
    chain.program.withdrawCollateralInstruction({
      creator,
      agent: new chain.web3.PublicKey(address),
      creatorTokenAccount,
      usdcMint: chain.market.usdcMint,
      programId: chain.programId,
    }),
  ]);
  return { signature, withdrawnUsdc: (await tokenBalance(chain, creatorTokenAccount)) - before };
}
