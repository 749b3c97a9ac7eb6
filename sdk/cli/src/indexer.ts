// Where the network's indexer serves GraphQL, which the CLI asks only for what the chain keeps no
// account of: the receipt log proof of an execution settled by settle_batch.
import { apiUrl, type CliConfig } from "./config.js";
import { CliError, type Io } from "./io.js";

/**
 * --indexer, else $AGENT_MARKET_INDEXER_URL, else the indexer the relayer names in its public
 * dashboard configuration (GET /dashboard-config.json, `indexer_graphql_url`).
 */
export async function indexerUrl(io: Io, option: string | undefined, apiOption: string | undefined, config: CliConfig): Promise<string> {
  const given = option ?? io.env.AGENT_MARKET_INDEXER_URL;
  if (given) return given;
  const hint = "pass --indexer <GraphQL url> (or set AGENT_MARKET_INDEXER_URL)";
  const address = new URL("/dashboard-config.json", apiUrl(io, apiOption, config));
  let named: string | null = null;
  try {
    const response = await fetch(address, { headers: { accept: "application/json" } });
    if (response.ok) named = ((await response.json()) as { indexer_graphql_url?: string | null }).indexer_graphql_url ?? null;
  } catch {
    throw new CliError(`the relayer at ${address.origin} did not answer for its indexer's address`, hint);
  }
  if (!named) throw new CliError(`the relayer at ${address.origin} names no indexer`, hint);
  return named;
}
