// Agents: listings from the relayer (text, tags, price), status and uptime from the indexer.
import { AgentMarket, type Agent, type AgentListParams, type Page } from "@agent-market/client";

import type { AgentChainQuery, AgentChainQueryVariables, AgentHealthFieldsFragment, AgentStatus } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

export type { AgentStatus };

export interface AgentHealth {
  status: AgentStatus;
  successRate: number | null;
  executions: number;
}

/** An agent's record as the agent page's query reads it. */
export type AgentChain = NonNullable<AgentChainQuery["agent"]>;

/** The indexer's alias limit: one query answers a page of listings. */
export const PAGE_SIZE = 12;

const publicClient = () => new AgentMarket({ baseUrl: location.origin });

export function listAgents(params: AgentListParams): Promise<Page<Agent>> {
  return publicClient().agents.list({ ...params, limit: PAGE_SIZE });
}

export function getAgent(id: string): Promise<Agent> {
  return publicClient().agents.get(id);
}

const AGENT_HEALTH_FIELDS = /* GraphQL */ `
  fragment AgentHealthFields on Agent {
    status
    stats(window: D30) { executions successRate }
  }
`;

export async function agentsHealth(url: string | null, addresses: readonly string[]): Promise<Record<string, AgentHealth | null>> {
  if (addresses.length === 0) return {};
  // One alias per listing, so the operation is built here; each alias selects the fragment, which
  // is whole text and so typed (and checked against the schema) like the other queries.
  const fields = addresses.map((_, i) => `a${i}: agent(address: $a${i}) { ...AgentHealthFields }`).join("\n");
  const query = `query Health(${addresses.map((_, i) => `$a${i}: String!`).join(", ")}) {\n${fields}\n}\n${AGENT_HEALTH_FIELDS}`;
  const variables = Object.fromEntries(addresses.map((a, i) => [`a${i}`, a]));
  const data = await graphql<Record<string, AgentHealthFieldsFragment | null>>(url, query, variables);
  return Object.fromEntries(
    addresses.map((a, i) => {
      const row = data[`a${i}`];
      return [a, row ? { status: row.status, successRate: row.stats.successRate, executions: row.stats.executions } : null];
    }),
  );
}

const AGENT_CHAIN = /* GraphQL */ `
  query AgentChain($address: String!) {
    agent(address: $address) {
      status
      collateral { usdc }
      uptime { window executions successRate latencySeconds { p50 p95 } }
      daily(days: 90) { day executions successRate status }
      executions(first: 10) {
        edges { node { id agent payer apiKeyId state refundReason amount { usdc finalized } charged { usdc } creatorShare { usdc } fee { usdc }
          openedAt closedAt openTransaction { signature slot } closeTransaction { signature slot } commitment } }
      }
    }
  }
`;

export async function agentChain(url: string | null, address: string): Promise<AgentChain | null> {
  const variables: AgentChainQueryVariables = { address };
  return (await graphql<AgentChainQuery>(url, AGENT_CHAIN, variables)).agent;
}
