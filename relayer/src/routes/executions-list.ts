import type { Services } from "../app-services.js";
import { requireApiKeyOrSession } from "../http/auth.js";
import { executionObject } from "../http/execution-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, listOf, paginationQuery } from "../http/schemas.js";

/** GET /v1/executions: the calling wallet's executions, newest first. */
export function registerExecutionsList(app: RouteApp, services: Services): void {
  app.get(
    "/v1/executions",
    {
      schema: {
        summary: "List executions",
        description: "The executions paid by the calling wallet (through any of its keys or its session), newest first.",
        tags: ["executions"],
        security: [{ apiKey: [] }, { session: [] }],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: { ...paginationQuery, agent: address },
        },
        response: { 200: listOf(executionObject), ...errorResponses(400, 401) },
      },
      preHandler: requireApiKeyOrSession(services.authenticator, services.signIn),
    },
    async (request) => ({ object: "list" as const, ...(await services.executionReads.list(request.apiKey?.wallet ?? request.walletSession!.wallet, request.query)) }),
  );
}
