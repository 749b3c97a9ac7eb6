// Agents: listings from the relayer (text, tags, price), status and uptime from the indexer.
import { AgentMarket, type Agent, type AgentListParams, type Page } from "@agent-market/client";

import type { ChainExecution } from "./executions.js";
import type { AgentChainQuery, AgentChainQueryVariables } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

export type AgentStatus = "OPERATIONAL" | "DEGRADED" | "DOWN" | "NO_DATA";

export interface AgentHealth {
  status: AgentStatus;
  successRate: number | null;
  executions: number;
}

export interface WindowStats {
  window: "H1" | "H24" | "D7" | "D30";
  executions: number;
  successRate: number | null;
  latencySeconds: { p50: number | null; p95: number | null };
}

export interface AgentChain {
  status: AgentStatus;
  uptime: WindowStats[];
  daily: { day: string; executions: number; successRate: number | null; status: AgentStatus }[];
  executions: { edges: { node: ChainExecution }[] };
}

/** The indexer's alias limit: one query answers a page of listings. */
export const PAGE_SIZE = 12;

const publicClient = () => new AgentMarket({ baseUrl: location.origin });

export function listAgents(params: AgentListParams): Promise<Page<Agent>> {
  return publicClient().agents.list({ ...params, limit: PAGE_SIZE });
}

export function getAgent(id: string): Promise<Agent> {
  return publicClient().agents.get(id);
}

export async function agentsHealth(url: string | null, addresses: readonly string[]): Promise<Record<string, AgentHealth | null>> {
  if (addresses.length === 0) return {};
  const fields = addresses.map((_, i) => `a${i}: agent(address: $a${i}) { status stats(window: D30) { executions successRate } }`).join("\n");
  const query = `query Health(${addresses.map((_, i) => `$a${i}: String!`).join(", ")}) {\n${fields}\n}`;
  const variables = Object.fromEntries(addresses.map((a, i) => [`a${i}`, a]));
  const data = await graphql<Record<string, { status: AgentStatus; stats: { executions: number; successRate: number | null } } | null>>(url, query, variables);
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
      uptime { window executions successRate latencySeconds { p50 p95 } }
      daily(days: 90) { day executions successRate status }
      executions(first: 10) {
        edges { node { id agent payer apiKeyId state refundReason amount { usdc finalized } creatorShare { usdc } fee { usdc }
          openedAt closedAt openTransaction { signature slot } closeTransaction { signature slot } commitment } }
      }
    }
  }
`;

export async function agentChain(url: string | null, address: string): Promise<AgentChain | null> {
  const variables: AgentChainQueryVariables = { address };
  // The generated result must fit AgentChain, whose executions are the shape executions.ts reads.
  const answer: { agent: AgentChain | null } = await graphql<AgentChainQuery>(url, AGENT_CHAIN, variables);
  return answer.agent;
}
