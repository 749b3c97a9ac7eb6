// Quoting a call: the listing must take executions and the parameters fit its schema; the price
// is read from the accounts the program reads, and a wallet that cannot cover it gets its 402
// before anything is sent.
import {
  decodeAgent,
  decodeSubscription,
  delegatePda,
  meteredHold,
  LruMap,
  subscriptionPda,
  type Agent,
  formatUsdc,
  type NetworkName,
} from "@agent-market/program";
import { getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";
import { validateAgainst } from "../listings/json-schema.js";
import { requireListedTerms } from "../listings/listed-terms.js";
import type { ListingForExecution, ListingService } from "../listings/listing-service.js";

export interface Quote {
  amount_usdc: bigint;
  uses_subscription: boolean;
  /** The agent account the quote read. */
  agent: Agent;
}

const TOKEN_ACCOUNT_MEMO_ENTRIES = 10_000;

function retiredListing(network: NetworkName, agent: string): ApiError {
  return new ApiError("resource_not_found", `No agent ${agent} on ${network}.`, "agent_id");
}

export class Quoter {
  private readonly tokenAccounts = new LruMap<string, PublicKey>(TOKEN_ACCOUNT_MEMO_ENTRIES);

  constructor(
    private readonly chain: ChainService,
    private readonly listings: ListingService,
  ) {}

  /** The parameters against the listing's input schema; `validation_failed` names the first fault. */
  validate(listing: ListingForExecution, parameters: Record<string, unknown>): void {
    const violation = validateAgainst(listing.input_schema, parameters);
    if (violation) {
      const path = violation.path.split("/").slice(1).join(".");
      throw new ApiError(
        "validation_failed",
        `parameters${path ? `.${path}` : ""} ${violation.message}.`,
        `parameters${path ? `.${path}` : ""}`,
      );
    }
  }

  /**
   * The listing a call or purchase goes to. A retired one is given only with `retired_allowed`:
   * its live subscriptions are still honoured, which `quote` checks on chain.
   */
  async listing(network: NetworkName, agent: string, retired_allowed = false): Promise<ListingForExecution> {
    const listing = await this.listings.forExecution(network, agent);
    if (!listing || (listing.status === "retired" && !retired_allowed)) {
      throw retiredListing(network, agent);
    }
    if (listing.status === "paused") throw new ApiError("agent_unavailable", `Agent ${agent} is paused by its creator.`);
    return listing;
  }

  /** The wallet's associated USDC account; deriving it costs more than the rest of the quote. */
  tokenAccount(usdcMint: PublicKey, wallet: PublicKey): PublicKey {
    return this.tokenAccounts.getOrSet(`${usdcMint.toBase58()}/${wallet.toBase58()}`, () =>
      getAssociatedTokenAddressSync(usdcMint, wallet, true),
    );
  }

  /**
   * What the program will charge for the call, from the same accounts it reads and by the same
   * rule (open_escrow's `price_call`): a live subscription covers calls on the terms it was bought
   * under, whatever the agent's pricing is now and even once it retired. Any other call follows
   * the pricing now: it is refused by a retired agent (or listing), then when the account's terms
   * are not the listing's (listed-terms.ts), then when it costs more than the caller's
   * `max_price_usdc`. An agent locking less than the market's minimum collateral takes no call.
   * A 402 when the wallet cannot cover it. One getMultipleAccounts call (and the market, cached);
   * nothing is sent.
   */
  async quote(
    network: NetworkName,
    listing: ListingForExecution,
    agentAddress: PublicKey,
    wallet: PublicKey,
    payerTokenAccount: PublicKey,
    usdcMint: PublicKey,
    max_price_usdc?: bigint,
  ): Promise<Quote> {
    const programId = this.chain.programId(network);
    // Read beside the accounts: cached for seconds, but not waited for after them when it is not.
    const market = this.chain.market(network);
    let infos;
    try {
      infos = await this.chain
        .rpc(network)
        .getMultipleAccounts([agentAddress, payerTokenAccount, subscriptionPda(agentAddress, wallet, programId)], "processed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
    }
    const [agentInfo, tokenInfo, subscriptionInfo] = infos;
    if (!agentInfo) throw new ApiError("resource_not_found", `No agent account ${agentAddress.toBase58()} on ${network}.`, "agent_id");
    const agent = decodeAgent(agentInfo.data);
    // open_escrow refuses an agent an upheld dispute slashed below the minimum (subscribers' calls
    // too): refused here, nothing is sent, and calling it again costs the relayer no fee.
    const minimum = (await market).minCollateralUsdc;
    if (agent.collateralUsdc < minimum) {
      throw new ApiError(
        "agent_unavailable",
        `Agent ${agentAddress.toBase58()} locks ${formatUsdc(agent.collateralUsdc)} USDC of collateral, less than the market's minimum of ${formatUsdc(minimum)} USDC: it takes no calls until its creator tops it up.`,
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const subscription = subscriptionInfo ? decodeSubscription(subscriptionInfo.data) : null;
    const covered =
      subscription !== null &&
      now < Number(subscription.expiresAt) &&
      (subscription.coversEveryCall || subscription.includedCallsRemaining > 0);
    let amount_usdc = 0n;
    const uses_subscription = covered;
    if (!covered) {
      if (listing.status === "retired") throw retiredListing(network, agentAddress.toBase58());
      if (agent.status !== "Active") throw new ApiError("agent_unavailable", "The agent is retired on-chain.");
      // A covered call costs nothing whatever the terms: only a charged one needs the listing's.
      await requireListedTerms(this.listings, network, agentAddress.toBase58(), listing, agent);
      switch (agent.pricing.kind) {
        case "PayPerUse":
          amount_usdc = agent.pricing.priceUsdc;
          break;
        case "Subscription":
          throw new ApiError("subscription_required", undefined, undefined, {
            network,
            period_price_usdc: formatUsdc(agent.pricing.periodPriceUsdc),
            subscribe: `POST /v1/agents/${agentAddress.toBase58()}/subscription`,
          });
        case "Hybrid":
          amount_usdc = agent.pricing.overagePriceUsdc;
          break;
        case "Metered": {
          // What the escrow will hold: whole units, as many as the smaller maximum buys.
          const { pricePerUnitUsdc, maxUnitsPerCall } = agent.pricing;
          const hold = meteredHold(pricePerUnitUsdc, maxUnitsPerCall, max_price_usdc);
          if (hold === null) throw priceAboveMaximum(pricePerUnitUsdc, max_price_usdc!, "unit");
          amount_usdc = hold.amountUsdc;
          break;
        }
      }
    }
    if (max_price_usdc !== undefined && amount_usdc > max_price_usdc) throw priceAboveMaximum(amount_usdc, max_price_usdc);
    const token = tokenInfo
      ? unpackAccount(payerTokenAccount, { ...tokenInfo, owner: new PublicKey(tokenInfo.owner), executable: false })
      : null;
    const balance = token?.amount ?? 0n;
    const allowance = token?.delegate?.equals(delegatePda(programId)) ? token.delegatedAmount : 0n;
    const shortfall = (code: "insufficient_balance" | "insufficient_allowance") =>
      new ApiError(code, undefined, undefined, {
        network,
        wallet: wallet.toBase58(),
        mint: usdcMint.toBase58(),
        token_account: payerTokenAccount.toBase58(),
        delegate: delegatePda(programId).toBase58(),
        required_usdc: formatUsdc(amount_usdc),
        balance_usdc: formatUsdc(balance),
        allowance_usdc: formatUsdc(allowance),
        raise_allowance:
          "Sign in with the wallet and POST /v1/wallet/allowance {\"network\":\"" + network + "\"}, then sign and send the returned transaction.",
      });
    if (balance < amount_usdc) throw shortfall("insufficient_balance");
    if (allowance < amount_usdc) throw shortfall("insufficient_allowance");
    return { amount_usdc, uses_subscription, agent };
  }
}

/**
 * The refusal of a call (or a subscription period) that costs more than its caller agreed to pay;
 * of a metered call whose caller's maximum buys not one `unit`.
 */
export function priceAboveMaximum(price_usdc: bigint, max_price_usdc: bigint, per: "call" | "unit" = "call"): ApiError {
  return new ApiError(
    "price_above_maximum",
    `${per === "unit" ? "One unit" : "The call"} costs ${formatUsdc(price_usdc)} USDC, more than max_price_usdc ${formatUsdc(max_price_usdc)}: nothing was sent.`,
    "max_price_usdc",
    { price_usdc: formatUsdc(price_usdc), max_price_usdc: formatUsdc(max_price_usdc) },
  );
}
