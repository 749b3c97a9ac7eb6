// Each agent's status and figures as a network's indexer computed them from on-chain records,
// read over its public GraphQL API. Discovery must never fail because of the indexer: a missing,
// slow or failing indexer yields no figures, and the listing shows nulls.
import type { NetworkName } from "@agent-market/program";

import type { NetworkConfig } from "../config.js";
import type { IndexerAgentsQuery, IndexerAgentsQueryVariables } from "./generated/graphql.js";

export type AgentHealthStatus = "operational" | "degraded" | "down" | "no_data" | "unknown";

/** What a listing shows of an agent's on-chain record (`unknown`: the indexer did not answer). */
export type AgentHealth = {
  status: AgentHealthStatus;
  /** Settled ÷ (settled + refunds against the creator) over 24 h; null without any. */
  success_rate_24h: number | null;
  executions_24h: number | null;
  /** Escrow open → settlement, in seconds of the chain's clock, over 24 h. */
  latency_p50_secs: number | null;
  latency_p95_secs: number | null;
};

export const UNKNOWN_HEALTH: AgentHealth = {
  status: "unknown",
  success_rate_24h: null,
  executions_24h: null,
  latency_p50_secs: null,
  latency_p95_secs: null,
};

/** An agent the indexer has no record of. */
export const NO_DATA_HEALTH: AgentHealth = { ...UNKNOWN_HEALTH, status: "no_data", executions_24h: 0 };

/** How long one snapshot of every agent serves discovery: the indexer is asked at most this often. */
export const INDEXER_SNAPSHOT_MS = 5_000;
/** One request to the indexer may take this long before the listing goes on without it. */
const INDEXER_TIMEOUT_MS = 2_000;
const PAGE_SIZE = 100;
/** Agents read per snapshot (pages × 100); discovery documents this bound. */
export const INDEXER_MAX_AGENTS = 2_000;

const AGENTS_QUERY = /* GraphQL */ `
  query IndexerAgents($first: Int!, $after: String) {
    agents(first: $first, after: $after) {
      edges { node { address status stats(window: H24) { executions successRate latencySeconds { p50 p95 } } } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** An answer to AGENTS_QUERY: its data typed from the indexer's schema (generated/graphql.ts). */
interface AgentsPage {
  data?: IndexerAgentsQuery;
  errors?: { message: string }[];
}

export class IndexerClient {
  private readonly snapshots = new Map<NetworkName, { at_ms: number; agents: Promise<Map<string, AgentHealth> | undefined> }>();

  constructor(
    private readonly networks: Partial<Record<NetworkName, Pick<NetworkConfig, "indexer_url">>>,
    private readonly onError: (network: NetworkName, error: unknown) => void = () => undefined,
  ) {}

  /** Every agent's health on a network, or undefined when there is no indexer or it did not answer. */
  agents(network: NetworkName): Promise<Map<string, AgentHealth> | undefined> {
    const url = this.networks[network]?.indexer_url;
    if (url === undefined) return Promise.resolve(undefined);
    const cached = this.snapshots.get(network);
    if (cached && Date.now() - cached.at_ms < INDEXER_SNAPSHOT_MS) return cached.agents;
    const agents = this.read(url).catch((error: unknown) => {
      this.onError(network, error);
      return undefined;
    });
    this.snapshots.set(network, { at_ms: Date.now(), agents });
    return agents;
  }

  private async read(url: string): Promise<Map<string, AgentHealth>> {
    const agents = new Map<string, AgentHealth>();
    let after: string | null = null;
    for (let read = 0; read < INDEXER_MAX_AGENTS; read += PAGE_SIZE) {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ query: AGENTS_QUERY, variables: { first: PAGE_SIZE, after } satisfies IndexerAgentsQueryVariables }),
        signal: AbortSignal.timeout(INDEXER_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`the indexer answered ${response.status}`);
      const page = (await response.json()) as AgentsPage;
      if (!page.data) throw new Error(`the indexer answered errors: ${page.errors?.map((e) => e.message).join("; ")}`);
      for (const { node } of page.data.agents.edges) {
        agents.set(node.address, {
          status: node.status.toLowerCase() as AgentHealthStatus,
          success_rate_24h: node.stats.successRate,
          executions_24h: node.stats.executions,
          latency_p50_secs: node.stats.latencySeconds.p50,
          latency_p95_secs: node.stats.latencySeconds.p95,
        });
      }
      if (!page.data.agents.pageInfo.hasNextPage) break;
      after = page.data.agents.pageInfo.endCursor;
    }
    return agents;
  }
}
