// The agents a wallet's executions and usage can be narrowed to: those it paid (read off its
// executions on chain) and those it registered, each with its listed name.
import { useCallback, useRef } from "react";

import { agentName } from "./agent-names.js";
import { paidAgents } from "./executions.js";
import { createdAgents } from "./my-agents.js";
import { useLoad, type Loaded } from "./use-load.js";

export interface WalletAgent {
  address: string;
  /** Its listed name; null for an agent never listed here. */
  name: string | null;
}

export interface WalletAgents {
  agents: WalletAgent[];
  /** Only the agents of the wallet's latest executions were read: an agent paid before them may be missing. */
  partial: boolean;
}

/** Pages of a hundred executions read for their agents: a wallet of a few thousand calls waits for no more. */
const PAGES_READ = 10;

const named = (addresses: readonly string[]): Promise<WalletAgent[]> => Promise.all(addresses.map(async (address) => ({ address, name: await agentName(address) })));

async function walletAgents(url: string | null, wallet: string): Promise<WalletAgents> {
  const [paid, created] = await Promise.all([paidAgents(url, wallet, PAGES_READ), createdAgents(url, wallet)]);
  return { agents: await named([...new Set([...paid.agents, ...created])]), partial: paid.partial };
}

/**
 * The wallet's agents; a refresh for when it has paid again, which reads only its newest
 * executions, not all the pages again, and adds the agents not yet known; and a reload.
 */
export function useWalletAgents(url: string | null, wallet: string): [Loaded<WalletAgents>, () => void, () => void] {
  const [loaded, reload, set] = useLoad(() => walletAgents(url, wallet), [url, wallet]);
  const latest = useRef(loaded);
  latest.current = loaded;
  const refresh = useCallback(() => {
    void paidAgents(url, wallet, 1).then(
      async ({ agents }) => {
        // Names already asked for come from the page's cache: only a new agent's is fetched.
        const newest = await named(agents);
        const now = latest.current;
        if (now.state !== "ready") return;
        const added = newest.filter((agent) => !now.value.agents.some((known) => known.address === agent.address));
        if (added.length > 0) set({ ...now.value, agents: [...now.value.agents, ...added] });
      },
      // The screen's own reload of its rows reports the indexer's failure; the choices stay as they were.
      () => undefined,
    );
  }, [url, wallet, set]);
  return [loaded, refresh, reload];
}
