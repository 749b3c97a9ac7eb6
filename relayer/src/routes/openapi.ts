import type { FastifyInstance } from "fastify";

/** GET /v1/openapi.json: the OpenAPI 3.1 document generated from the route schemas. */
export function registerOpenApi(app: FastifyInstance): void {
  app.get("/v1/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
