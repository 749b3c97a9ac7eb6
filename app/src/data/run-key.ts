// Runs started from the web go through the same execute route and escrow as any API call, so
// they need an API key of the signed-in wallet: one named for the purpose, created on the first
// run and kept in this browser (its runs show up like any key's, and revoking it stops them).
import { AgentMarket, AuthenticationError, type WalletSession } from "@agent-market/client";

export const RUN_KEY_NAME = "Dashboard web runs";
const storageKey = (wallet: string, network: string) => `agent-market.run-key.${network}.${wallet}`;

export async function runClient(session: WalletSession, network: "devnet" | "mainnet"): Promise<AgentMarket> {
  const key = storageKey(session.address, network);
  let secret = localStorage.getItem(key);
  if (secret !== null) {
    const client = new AgentMarket({ baseUrl: location.origin, apiKey: secret });
    try {
      await client.whoami();
      return client;
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
      localStorage.removeItem(key);
    }
  }
  const created = await session.keys.create({ name: RUN_KEY_NAME, environment: network === "mainnet" ? "live" : "test" });
  secret = created.secret;
  localStorage.setItem(key, secret);
  return new AgentMarket({ baseUrl: location.origin, apiKey: secret });
}
