// What the relayer tells the dashboard about its deployment (GET /dashboard-config.json).
export interface DashboardConfig {
  indexer_graphql_url: string | null;
  networks: ("devnet" | "mainnet")[];
  /** A local chain: the browser-kept test wallet is offered and explorer links use a custom cluster. */
  localnet: boolean;
  /** The local chain's RPC address, for explorer links. */
  localnet_rpc_url: string | null;
  /** The local chain's RPC relayed on this origin (a local node answers no CORS). */
  rpc_path: string | null;
}

/** Where this page sends JSON-RPC: only on localnet, through the relayer. */
export function chainRpcUrl(config: DashboardConfig): string | null {
  return config.rpc_path === null ? null : new URL(config.rpc_path, location.origin).href;
}

export async function loadConfig(): Promise<DashboardConfig> {
  const response = await fetch("/dashboard-config.json", { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`The relayer did not serve its dashboard configuration (HTTP ${response.status}).`);
  return (await response.json()) as DashboardConfig;
}
