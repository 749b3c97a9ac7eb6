// Live updates from the indexer's GraphQL subscriptions, served as server-sent events (graphql-yoga,
// `GET /graphql?query=…` with `Accept: text/event-stream`). A screen does not keep a second copy of
// the chain's records: each event only tells it to read its figures again, so what it shows is
// always the indexer's answer. The browser's EventSource reconnects by itself after a drop.
import { useEffect, useRef } from "react";

import type {
  AgentChangedSubscriptionVariables,
  AgentsChangedSubscriptionVariables,
  PaidBySubscriptionVariables,
} from "./generated/graphql.js";

/** Events closer together than this make one reload: a settle moves several rows at once. */
const COALESCE_MS = 150;
/**
 * Streams one screen keeps open. A browser allows six connections to an HTTP/1.1 host, shared by
 * its tabs: a screen must leave room for its own queries. A list of agents is followed on one
 * stream (`agentsChanged`), so a creator's agents need one, not one each.
 */
export const MAX_STREAMS = 3;
/** The indexer's bound on the addresses one `agentsUpdated` follows. */
const AGENTS_PER_STREAM = 100;

export interface LiveQuery {
  /** A subscription document; its selection is ignored beyond being valid. */
  query: string;
  variables: PaidBySubscriptionVariables | AgentChangedSubscriptionVariables | AgentsChangedSubscriptionVariables;
}

// Whole texts, so the indexer's type generation checks them against the schema.
const PAID_BY = /* GraphQL */ `
  subscription PaidBy($payer: String!) { executionUpdated(payer: $payer) { id } }
`;
const AGENT_CHANGED = /* GraphQL */ `
  subscription AgentChanged($address: String!) { agentUpdated(address: $address) { address } }
`;
const AGENTS_CHANGED = /* GraphQL */ `
  subscription AgentsChanged($addresses: [String!]!) { agentsUpdated(addresses: $addresses) { address } }
`;

/** Executions whose payer is `wallet`, as the chain records them (opened, settled, refunded, finalized). */
export function paidBy(wallet: string): LiveQuery {
  const variables: PaidBySubscriptionVariables = { payer: wallet };
  return { query: PAID_BY, variables };
}

/** An agent after each change of its record or of any of its executions. */
export function agentChanged(address: string): LiveQuery {
  const variables: AgentChangedSubscriptionVariables = { address };
  return { query: AGENT_CHANGED, variables };
}

/** Any agent of `addresses` after each change: one stream per hundred agents. */
export function agentsChanged(addresses: string[]): LiveQuery[] {
  const streams: LiveQuery[] = [];
  for (let at = 0; at < addresses.length; at += AGENTS_PER_STREAM) {
    const variables: AgentsChangedSubscriptionVariables = { addresses: addresses.slice(at, at + AGENTS_PER_STREAM) };
    streams.push({ query: AGENTS_CHANGED, variables });
  }
  return streams;
}

function open(url: string, live: LiveQuery, onEvent: () => void): () => void {
  const address = new URL(url, location.href);
  address.searchParams.set("query", live.query);
  address.searchParams.set("variables", JSON.stringify(live.variables));
  const source = new EventSource(address.href);
  source.addEventListener("next", onEvent);
  return () => source.close();
}

/**
 * Calls `onChange` (once per burst) each time one of `queries` has news, while the screen is shown.
 * Without an indexer there is nothing to follow and nothing happens.
 */
export function useLive(url: string | null, queries: LiveQuery[], onChange: () => void): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  const key = JSON.stringify(queries);
  useEffect(() => {
    if (url === null || queries.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const fire = () => {
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        latest.current();
      }, COALESCE_MS);
    };
    const closers = queries.slice(0, MAX_STREAMS).map((live) => open(url, live, fire));
    return () => {
      closers.forEach((close) => close());
      if (timer !== null) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [url, key]);
}
