// On-chain executions from the indexer, filtered by payer, key, agent and state.
import type { ExecutionsQuery, ExecutionsQueryVariables } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

const EXECUTIONS = /* GraphQL */ `
  query Executions($first: Int!, $after: String, $filter: ExecutionFilter) {
    executions(first: $first, after: $after, filter: $filter) {
      edges {
        node {
          id agent payer apiKeyId state refundReason amount { usdc finalized } charged { usdc } creatorShare { usdc } fee { usdc }
          openedAt closedAt openTransaction { signature slot } closeTransaction { signature slot } commitment
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** An execution as the indexer records it, as the Executions query reads it. */
export type ChainExecution = ExecutionsQuery["executions"]["edges"][number]["node"];
export type ChainState = ChainExecution["state"];

/** Which executions to list; a field left out (or empty) filters nothing. */
export interface ExecutionFilter {
  payer?: string;
  apiKeyId?: string;
  agent?: string;
  state?: ChainState;
}

export async function fetchExecutions(
  url: string | null,
  filter: ExecutionFilter,
  after: string | null = null,
  first = 50,
): Promise<{ executions: ChainExecution[]; next: string | null }> {
  const clean = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== ""));
  const variables: ExecutionsQueryVariables = { first, after, filter: clean };
  const data = await graphql<ExecutionsQuery>(url, EXECUTIONS, variables);
  const { edges, pageInfo } = data.executions;
  return { executions: edges.map((e) => e.node), next: pageInfo.hasNextPage ? pageInfo.endCursor : null };
}
