// The OpenAPI document of the routes without a database, chain or queue: registering a route
// reads only the configuration, so the app is built over services that refuse any use. The
// client SDK's types are generated from this document (sdk/client/scripts/openapi-types.mjs).
import type { Services } from "./app-services.js";
import { buildApp } from "./app.js";
import type { RelayerConfig } from "./config.js";

/** A service that throws on any use: describing the routes must not reach one. */
function unavailable(name: string): object {
  return new Proxy(
    {},
    {
      get(_target, member) {
        throw new Error(`services.${name}.${String(member)} was used while only describing the API`);
      },
    },
  );
}

/** GET /v1/openapi.json's document, built from the route schemas alone. */
export async function openApiDocument(config: RelayerConfig): Promise<Record<string, unknown>> {
  const services = new Proxy({ config } as Services, {
    get(target, name) {
      return name === "config" ? target.config : unavailable(String(name));
    },
  });
  const app = await buildApp(services);
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
