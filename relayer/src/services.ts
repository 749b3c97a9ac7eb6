// Builds the relayer's services from its configuration; the one place that wires them together.
import { ApiKeyAuthenticator, ApiKeyStore } from "./auth/api-keys.js";
import { SignInService } from "./auth/sign-in.js";
import type { Services } from "./app.js";
import { ChainService } from "./chain/chain-service.js";
import type { RelayerConfig } from "./config.js";
import { CreatorClient } from "./creator/creator-client.js";
import { createPool, migrate } from "./db/pool.js";
import { ListingService } from "./listings/listing-service.js";

export async function createServices(config: RelayerConfig): Promise<Services & { close(): Promise<void> }> {
  const db = createPool(config.database_url);
  await migrate(db);
  const chain = new ChainService(config.networks);
  const authenticator = new ApiKeyAuthenticator(db, config.api_key_hash_secret);
  const creators = new CreatorClient(config.marketplace_signing_key, config.endpoint_policy);
  return {
    config,
    db,
    chain,
    authenticator,
    keys: new ApiKeyStore(db, config.api_key_hash_secret),
    signIn: new SignInService(db, {
      domain: config.public_url.host,
      uri: config.public_url.origin,
      nonce_ttl_secs: config.nonce_ttl_secs,
      session_ttl_secs: config.session_ttl_secs,
    }),
    listings: new ListingService(db, chain, creators, config),
    async close() {
      await authenticator.flushUsage().catch(() => undefined);
      await db.end();
    },
  };
}
