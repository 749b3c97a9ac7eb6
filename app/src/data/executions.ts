// On-chain executions from the indexer, filtered by payer, key, agent and state.
import type { ExecutionsQuery, ExecutionsQueryVariables } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

const EXECUTIONS = /* GraphQL */ `
  query Executions($first: Int!, $after: String, $filter: ExecutionFilter) {
    executions(first: $first, after: $after, filter: $filter) {
      edges {
        node {
          id agent payer apiKeyId state refundReason amount { usdc finalized } charged { usdc } creatorShare { usdc } fee { usdc }
          openedAt closedAt openTransaction { signature slot } closeTransaction { signature slot } commitment dispute { state }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
    indexer { finalizedSlot }
  }
`;

/**
 * An execution as the indexer records it, as the Executions query reads it, with whether its own
 * last transaction (the settlement or refund, else the escrow's opening) is finalized. The row's
 * `commitment` covers every event of it, a dispute opened later too: it says nothing of the
 * settlement once a dispute opens, so the two are told apart.
 */
export type ChainExecution = ExecutionsQuery["executions"]["edges"][number]["node"] & { transactionFinalized: boolean };
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
  const { finalizedSlot } = data.indexer;
  const executions = edges.map(({ node }) => {
    const last = node.closeTransaction ?? node.openTransaction;
    return { ...node, transactionFinalized: last === null ? node.commitment === "FINALIZED" : last.slot <= finalizedSlot };
  });
  return { executions, next: pageInfo.hasNextPage ? pageInfo.endCursor : null };
}
