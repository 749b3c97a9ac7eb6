// The clusters a deployment serves, by the names the API, the indexer and the configuration use.
// Imports nothing, so a browser bundle can take it alone ("@agent-market/program/network").

export const NETWORK_NAMES = ["devnet", "mainnet"] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];
