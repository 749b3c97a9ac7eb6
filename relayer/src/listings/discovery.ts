// Discovery: listings with each agent's status and figures from the network's indexer (and its
// collateral from the chain, see live-collateral.ts), filtered and sorted by them. Sorting or filtering by the indexer's figures ranks the whole matching set
// (the newest DISCOVERY_MAX_RANKED listings), never one page, so a cursor walks one consistent
// order; without them, the listing's own newest-first pagination is used and only the page is
// annotated.
import type { NetworkName } from "@agent-market/program";

import { ApiError } from "../errors.js";
import { NO_DATA_HEALTH, UNKNOWN_HEALTH, type AgentHealth, type AgentHealthStatus, type IndexerClient } from "../indexer/indexer-client.js";
import type { ListingObject, ListingService, ListQuery } from "./listing-service.js";
import { maxCallPriceUsdc, type PricingWire } from "./pricing.js";

/** The most listings a ranked discovery query orders (the newest matching ones). */
export const DISCOVERY_MAX_RANKED = 1_000;

export type DiscoverySort = "newest" | "success_rate" | "latency_p50" | "price";

export interface DiscoveryQuery extends ListQuery {
  health?: Exclude<AgentHealthStatus, "unknown">;
  min_success_rate?: number;
  sort: DiscoverySort;
}

export type DiscoveredListing = ListingObject & { health: AgentHealth };

export class Discovery {
  constructor(
    private readonly listings: ListingService,
    private readonly indexer: IndexerClient,
  ) {}

  async get(network: NetworkName, agent: string): Promise<DiscoveredListing> {
    const [listing, agents] = await Promise.all([this.listings.get(network, agent), this.indexer.agents(network)]);
    return withHealth(listing, agents);
  }

  async list(query: DiscoveryQuery): Promise<{ data: DiscoveredListing[]; has_more: boolean }> {
    if (query.sort === "newest" && query.health === undefined && query.min_success_rate === undefined) {
      const [page, agents] = await Promise.all([this.listings.list(query), this.indexer.agents(query.network)]);
      return { data: page.data.map((listing) => withHealth(listing, agents)), has_more: page.has_more };
    }
    const [newest, agents] = await Promise.all([
      this.listings.newestMatching(query, DISCOVERY_MAX_RANKED),
      this.indexer.agents(query.network),
    ]);
    const ranked = newest
      .map((listing) => withHealth(listing, agents))
      .filter(({ health }) => query.health === undefined || health.status === query.health)
      .filter(({ health }) => query.min_success_rate === undefined || (health.success_rate_24h ?? -1) >= query.min_success_rate);
    // Array.prototype.sort is stable: ties keep the newest first.
    if (query.sort !== "newest") ranked.sort(comparator(query.sort));
    let start = 0;
    if (query.starting_after !== undefined) {
      start = ranked.findIndex((listing) => listing.id === query.starting_after) + 1;
      if (start === 0) throw new ApiError("invalid_cursor", undefined, "starting_after");
    }
    const data = await this.listings.live(query.network, ranked.slice(start, start + query.limit));
    return { data, has_more: ranked.length > start + query.limit };
  }
}

function withHealth(listing: ListingObject, agents: Map<string, AgentHealth> | undefined): DiscoveredListing {
  return { ...listing, health: agents === undefined ? UNKNOWN_HEALTH : (agents.get(listing.id) ?? NO_DATA_HEALTH) };
}

/** Best first; an agent without the figure comes last. */
function comparator(sort: Exclude<DiscoverySort, "newest">): (a: DiscoveredListing, b: DiscoveredListing) => number {
  const key: (listing: DiscoveredListing) => number | null = {
    success_rate: (listing: DiscoveredListing) => (listing.health.success_rate_24h === null ? null : -listing.health.success_rate_24h),
    latency_p50: (listing: DiscoveredListing) => listing.health.latency_p50_secs,
    price: (listing: DiscoveredListing) => pricePerCall(listing.pricing),
  }[sort];
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return x - y;
  };
}

/** What one more call costs at most: the pay-per-use price, the hybrid overage, a metered call's maximum; none for a subscription. */
function pricePerCall(pricing: PricingWire): number | null {
  const price = maxCallPriceUsdc(pricing);
  return price === null ? null : Number(price);
}
