import type { RouteApp } from "../http/route-app.js";

/** GET /v1/openapi.json: the OpenAPI 3.1 document generated from the route schemas. */
export function registerOpenApi(app: RouteApp): void {
  app.get("/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
