import type { FastifyReply } from "fastify";

import type { Services } from "../app-services.js";
import { attachmentDisposition, MAX_ATTACHMENTS } from "../disputes/dispute-evidence.js";
import { requireSession } from "../http/auth.js";
import { evidenceId, executionId } from "../http/dispute-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";

/**
 * GET /v1/disputes/:execution_id/evidence/:evidence_id/attachments/:index: the file as uploaded.
 * Its type is whatever the uploader claimed, so it is always a download, never sniffed, and
 * sandboxed should a browser render it anyway.
 */
export function registerDisputesAttachment(app: RouteApp, services: Services): void {
  app.get(
    "/v1/disputes/:execution_id/evidence/:evidence_id/attachments/:index",
    {
      schema: {
        summary: "Download an evidence attachment",
        description: "The bytes with the content type given at upload, as an attachment; for the dispute's parties.",
        tags: ["disputes"],
        security: [{ session: [] }],
        params: {
          type: "object",
          required: ["execution_id", "evidence_id", "index"],
          properties: { execution_id: executionId, evidence_id: evidenceId, index: { type: "integer", minimum: 0, maximum: MAX_ATTACHMENTS - 1 } },
        },
        response: { 200: { type: "string", format: "binary" }, ...errorResponses(400, 401, 403, 404) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const { execution_id, evidence_id, index } = request.params;
      const file = await services.disputes.attachment(request.walletSession!.wallet, execution_id, evidence_id, index);
      // Raw bytes: the schema's binary string documents them, the type provider would want a string.
      return (reply as FastifyReply)
        .header("content-type", file.content_type)
        .header("content-disposition", attachmentDisposition(file.name))
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", "sandbox")
        .header("cache-control", "private, no-store")
        .send(file.content);
    },
  );
}
