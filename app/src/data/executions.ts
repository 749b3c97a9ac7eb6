// On-chain executions from the indexer, filtered by payer, key, agent and state.
import type { ExecutionsQuery, ExecutionsQueryVariables, PaidAgentsQuery, PaidAgentsQueryVariables } from "./generated/graphql.js";
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

const PAID_AGENTS = /* GraphQL */ `
  query PaidAgents($payer: String!, $first: Int!, $after: String) {
    executions(first: $first, after: $after, filter: { payer: $payer }) {
      edges { node { agent } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

/** The indexer's largest page. */
const PAID_AGENTS_PAGE = 100;

/**
 * The agents of the payer's executions, from its newest execution back, reading at most `pages`
 * pages of them; `partial` when older executions were left unread. The indexer keeps no list of
 * a payer's agents: they are read off its executions.
 */
export async function paidAgents(url: string | null, payer: string, pages: number): Promise<{ agents: string[]; partial: boolean }> {
  const agents = new Set<string>();
  let after: string | null = null;
  for (let read = 0; read < pages; read += 1) {
    const variables: PaidAgentsQueryVariables = { payer, first: PAID_AGENTS_PAGE, after };
    const { executions } = await graphql<PaidAgentsQuery>(url, PAID_AGENTS, variables);
    for (const { node } of executions.edges) agents.add(node.agent);
    if (!executions.pageInfo.hasNextPage) return { agents: [...agents], partial: false };
    after = executions.pageInfo.endCursor;
  }
  return { agents: [...agents], partial: true };
}
