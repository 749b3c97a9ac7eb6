// On-chain executions from the indexer, filtered by payer, key, agent and state.
import { graphql } from "./graphql.js";

export type ChainState = "OPEN" | "SETTLED" | "REFUNDED" | "RECLAIMED";

export interface ChainExecution {
  id: string;
  agent: string;
  payer: string;
  apiKeyId: string | null;
  state: ChainState;
  refundReason: string | null;
  amount: { usdc: string; finalized: boolean };
  creatorShare: { usdc: string };
  fee: { usdc: string };
  openedAt: string | null;
  closedAt: string | null;
  openTransaction: { signature: string; slot: number } | null;
  closeTransaction: { signature: string; slot: number } | null;
  commitment: "CONFIRMED" | "FINALIZED";
}

export interface ExecutionFilter {
  payer?: string;
  apiKeyId?: string;
  agent?: string;
  state?: ChainState;
}

const FIELDS = `id agent payer apiKeyId state refundReason amount { usdc finalized } creatorShare { usdc } fee { usdc }
  openedAt closedAt openTransaction { signature slot } closeTransaction { signature slot } commitment`;

const EXECUTIONS = /* GraphQL */ `
  query Executions($first: Int!, $after: String, $filter: ExecutionFilter) {
    executions(first: $first, after: $after, filter: $filter) {
      edges { node { ${FIELDS} } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

export async function fetchExecutions(
  url: string | null,
  filter: ExecutionFilter,
  after: string | null = null,
  first = 50,
): Promise<{ executions: ChainExecution[]; next: string | null }> {
  const clean = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== ""));
  const data = await graphql<{
    executions: { edges: { node: ChainExecution }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  }>(url, EXECUTIONS, { first, after, filter: clean });
  const { edges, pageInfo } = data.executions;
  return { executions: edges.map((e) => e.node), next: pageInfo.hasNextPage ? pageInfo.endCursor : null };
}
