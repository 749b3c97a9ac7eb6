// Every error the dashboard shows, in words, with what to do about it. A 402 names its fix.
import { AgentMarketError, PaymentRequiredError, formatUsdc } from "@agent-market/client";

import { usdcText } from "../components/money.js";
import { ChainError, chainErrorWords, isRawRpcText, NeedsSolError } from "./chain-errors.js";
import { GraphQLError } from "./graphql.js";

export interface Explained {
  title: string;
  detail: string;
  /** What to do about it, when there is something to do. */
  fix: string | null;
  code: string | null;
  requestId: string | null;
  /** A screen of the dashboard where the fix is made. */
  link: { href: string; label: string } | null;
}

/** What to do about the refusals that protect the payer and the relayer (nothing was charged). */
const RELAYER_FIXES: Record<string, string> = {
  price_above_maximum: "The agent now costs more than the price shown here; nothing was charged. Reload the page to see its price, then run it again if you agree.",
  agent_terms_changed: "The creator changed the agent's price on chain; nothing was charged. The listing is paused until the creator lists the new price.",
  agent_circuit_open: "The agent failed too many calls lately; nothing was charged. It takes calls again after a pause: try later.",
  key_concurrency_limit: "Too many of your calls are running at once; nothing was charged. Wait for one to finish, then run it again.",
  agent_concurrency_limit: "The agent is running as many calls as it may; nothing was charged. Try again in a moment.",
  web_runs_revoked: "Runs from this dashboard are revoked for this wallet. Allow them again on the Wallet screen.",
  webhook_limit_reached: "A wallet may have 10 webhook endpoints. Delete one you no longer use, then add this one.",
  webhook_url_not_allowed: "Give an https URL of a public host, without a user name, password or #fragment.",
};

const WALLET_LINK = { href: "#/wallet", label: "Open the Wallet screen" };

function solFix(localnet: boolean): string {
  return localnet
    ? "Fund the wallet with test SOL and USDC on the Wallet screen (one click on this local marketplace), then try again."
    : "Get devnet SOL from the Solana faucet (faucet.solana.com) for this wallet's address, then try again.";
}

const usdc = (value: bigint | null) => (value === null ? "?" : usdcText(formatUsdc(value)));

/** `localnet`: the Wallet screen has the faucet's one-click test USDC, which a short balance points to. */
export function explain(error: unknown, localnet = false): Explained {
  if (error instanceof PaymentRequiredError) {
    const base = { title: "Payment required", detail: error.message, code: error.code, requestId: error.requestId ?? null, link: null };
    switch (error.code) {
      case "insufficient_balance":
        return {
          ...base,
          detail: `The wallet holds less USDC than this call costs: nothing was charged.`,
          fix: `The call costs ${usdc(error.required)} and the wallet holds ${usdc(error.balance)}. ${localnet ? "Fund the wallet with test USDC on the Wallet screen (one click on this local marketplace)" : "Add USDC to the wallet on the Wallet screen"}, then run it again.`,
          link: localnet ? { href: "#/wallet", label: "Fund it on the Wallet screen" } : WALLET_LINK,
        };
      case "insufficient_allowance":
        return {
          ...base,
          detail: "Your wallet has not allowed the marketplace to take this much USDC: nothing was charged.",
          fix: `The call costs ${usdc(error.required)} but the wallet lets the marketplace move only ${usdc(error.allowance)}. Raise the allowance on the Wallet screen, then run it again.`,
          link: WALLET_LINK,
        };
      case "spending_cap_reached":
        return {
          ...base,
          fix: `This call would pass the spending cap of ${usdc(error.spendingCap)}. For runs from this dashboard, raise the cap on the Wallet screen; for an API key, generate one with a higher cap on the API keys screen.`,
          link: WALLET_LINK,
        };
      case "subscription_required":
        return { ...base, fix: "This agent is sold by subscription: subscribe to it with your API key (POST /v1/agents/:id/subscription), then run it." };
    }
    return { ...base, fix: null };
  }
  if (error instanceof NeedsSolError) {
    return { title: "The wallet needs SOL for the network fee", detail: error.message, fix: solFix(error.localnet), code: null, requestId: null, link: WALLET_LINK };
  }
  if (error instanceof ChainError) return chainRefusal(error.raw);
  if (error instanceof GraphQLError && error.code === "unreachable") {
    return { title: "The indexer could not be reached", detail: error.message, fix: "Try again in a moment.", code: null, requestId: null, link: null };
  }
  if (error instanceof AgentMarketError && (error.code === "connection_error" || error.code === "timeout")) {
    return {
      title: "The relayer could not be reached",
      detail: "The marketplace's server did not answer: it may be stopped or restarting, or this computer is offline.",
      fix: "Check your connection (on your own machine: that npm start is still running), then try again.",
      code: error.code,
      requestId: null,
      link: null,
    };
  }
  // An upheld dispute's slash leaves a listed agent short of the minimum: say by how much.
  if (error instanceof AgentMarketError && error.code === "collateral_below_minimum") {
    const held = String(error.details.collateral_usdc ?? "?");
    const minimum = String(error.details.minimum_collateral_usdc ?? "?");
    return {
      title: "The agent's collateral is below the market's minimum",
      detail: `It locks ${usdcText(held)}; the market's minimum is ${usdcText(minimum)}. An upheld dispute pays the payer from the collateral, and the marketplace lists only agents that lock the minimum.`,
      fix: "Top up the difference (one click on My agents), then try again.",
      code: error.code,
      requestId: error.requestId ?? null,
      link: { href: "#/my-agents", label: "Open My agents" },
    };
  }
  if (error instanceof AgentMarketError) {
    const fix =
      RELAYER_FIXES[error.code] ??
      (error.code === "invalid_session" || error.code === "session_required"
        ? "Your session ended: sign in again."
        : error.code === "revoked_api_key"
          ? "This key was revoked: generate a new one on the API keys screen."
          : error.status === 503 || error.code === "connection_error"
            ? "The service is unavailable for a moment: try again."
            : null);
    return { title: "The relayer refused", detail: error.message, fix, code: error.code, requestId: error.requestId ?? null, link: null };
  }
  const message = error instanceof Error ? error.message : String(error);
  if (isRawRpcText(message)) return chainRefusal(message);
  return { title: "Something went wrong", detail: message, fix: null, code: null, requestId: null, link: null };
}

function chainRefusal(raw: string): Explained {
  const words = chainErrorWords(raw);
  return { title: words.title, detail: words.detail, fix: words.fix, code: null, requestId: null, link: words.onWallet ? WALLET_LINK : null };
}
