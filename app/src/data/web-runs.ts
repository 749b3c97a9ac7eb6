// Runs from the web are charged to the signed-in wallet through its session: the relayer holds
// the wallet's web-run key itself, so no API key exists for them and no secret reaches the
// browser (docs/api.md, "Web runs"). The session token goes as the bearer credential, never the
// cookie alone; the client's execute names no network, so the session's network goes in the query.
import { AgentMarket, type WalletSession } from "@agent-market/client";
import type { NetworkName } from "@agent-market/program/network";

import { base58Encode } from "../wallet/base58.js";

export const WEB_RUNS_LABEL = "Web runs (signed in)";

/** A client whose executions and execution reads are the signed-in wallet's, on `network`. */
export function webRunClient(session: WalletSession, network: NetworkName): AgentMarket {
  const onNetwork: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname.endsWith("/execute")) url.searchParams.set("network", network);
    return fetch(url, init);
  };
  // The client calls its bearer credential an API key; the relayer takes a session there too.
  return new AgentMarket({ baseUrl: location.origin, apiKey: session.token, fetch: onNetwork });
}

/** The id the relayer derives for the wallet's web-run key, as its escrows record it. */
export async function webRunKeyId(wallet: string, network: NetworkName): Promise<string> {
  const environment = network === "mainnet" ? "live" : "test";
  const text = new TextEncoder().encode(`agent-market web runs\n${environment}\n${wallet}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", text));
  return `key_${base58Encode(digest.subarray(0, 16))}`;
}
