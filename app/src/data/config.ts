import type { NetworkName } from "@agent-market/program/network";
// What the relayer tells the dashboard about its deployment (GET /dashboard-config.json).
export interface DashboardConfig {
  /** The market's arbiter per network (null where the relayer could not read it). */
  arbiters: Record<NetworkName, string | null>;
  /** Localnet only: the committed development arbiter's keypair (64 bytes), to try the arbiter's screens. */
  dev_arbiter_secret_key: number[] | null;
  indexer_graphql_url: string | null;
  networks: NetworkName[];
  /** A local chain: the browser-kept test wallet is offered and explorer links use a custom cluster. */
  localnet: boolean;
  /** Localnet only: the starter host serves agents listed from this page (data/starter-agent.ts). */
  starter_agent: boolean;
  /** The local chain's RPC address, for explorer links. */
  localnet_rpc_url: string | null;
  /** The local chain's RPC relayed on this origin, the one address sure to reach this page. */
  rpc_path: string | null;
  /** A hosted network's RPC address the page may call itself, where the operator gave one. */
  rpc_urls: Record<NetworkName, string | null>;
}

/**
 * Where this page sends JSON-RPC for `network`: the relayed local chain, or the hosted network's
 * public address; null when it has none (then only the wallet can send, and nothing is read).
 */
export function chainRpcUrl(config: DashboardConfig, network: NetworkName): string | null {
  if (config.rpc_path !== null) return new URL(config.rpc_path, location.origin).href;
  return config.rpc_urls[network];
}

export async function loadConfig(): Promise<DashboardConfig> {
  const response = await fetch("/dashboard-config.json", { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`The relayer did not serve its dashboard configuration (HTTP ${response.status}).`);
  return (await response.json()) as DashboardConfig;
}
