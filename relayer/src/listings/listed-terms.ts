// An execution is charged what its caller was shown. The listing holds the pricing and the listing
// hash verified against the agent's account when it was listed or updated; the account is the
// creator's to change at any time (update_agent), and a price raised there would be charged to
// every caller who saw the listing's. The relayer reads the account for every quote: when its
// pricing or listing hash differs from the listing's, the call is refused before anything is sent
// (`agent_terms_changed`), and the listing is paused until its creator lists the new terms (a
// PATCH, whose checks compare them with the account again, makes it active again).
import { toHex, type Agent, type NetworkName } from "@agent-market/program";

import { ApiError } from "../errors.js";
import type { ListingForExecution, ListingService } from "./listing-service.js";
import { pricingFromChain, samePricing } from "./pricing.js";

/** Refuses (and pauses the listing) when `agent`'s account no longer holds the listing's terms. */
export async function requireListedTerms(
  listings: ListingService,
  network: NetworkName,
  address: string,
  listing: ListingForExecution,
  agent: Agent,
): Promise<void> {
  const on_chain = pricingFromChain(agent.pricing);
  const samePrice = samePricing(on_chain, listing.pricing);
  const sameHash = Buffer.from(agent.listingHash).equals(listing.listing_hash);
  if (samePrice && sameHash) return;
  await listings.pauseChangedTerms(network, address, listing);
  throw new ApiError(
    "agent_terms_changed",
    `The agent's account holds ${samePrice ? "a listing hash" : "pricing"} other than its listing's: nothing was charged, and the listing is paused until its creator lists the new terms.`,
    undefined,
    {
      listed_pricing: listing.pricing,
      on_chain_pricing: on_chain,
      ...(sameHash ? {} : { listed_listing_hash: listing.listing_hash.toString("hex"), on_chain_listing_hash: toHex(agent.listingHash) }),
    },
  );
}
