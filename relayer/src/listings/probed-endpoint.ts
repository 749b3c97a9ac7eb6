// An execution calls the endpoint the listing's probe checked, never another. The agent's
// account is the creator's to change at any time (update_agent), and the relayer reads it on
// every execution; the listing records the endpoint that passed the checks (its `endpoint`
// column, equal to the account's when it was listed, updated or resumed). When the two differ,
// the listing fails closed: it is paused, and runs again only once its creator has listed the
// new endpoint (PATCH, which probes it) and resumed it.
import type { NetworkName } from "@agent-market/program";

import type { ListingForExecution, ListingService } from "./listing-service.js";

/**
 * Null when `on_chain_endpoint`, the one the execution is about to call, is the listing's probed
 * endpoint; otherwise the listing is paused and the refusal's message returned (the caller
 * refunds with `endpoint_changed`).
 */
export async function unprobedEndpoint(
  listings: ListingService,
  network: NetworkName,
  agent: string,
  listing: ListingForExecution,
  on_chain_endpoint: string,
): Promise<string | null> {
  if (on_chain_endpoint === listing.endpoint) return null;
  await listings.pauseUnprobed(network, agent, listing.endpoint);
  return "The agent's account names an endpoint its listing never probed: the call was not sent, and the listing is paused until its creator lists the new endpoint.";
}
