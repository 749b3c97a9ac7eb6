import type { Services } from "../app-services.js";
import { EVIDENCE_BODY_LIMIT_BYTES } from "../disputes/dispute-evidence.js";
import { requireSession } from "../http/auth.js";
import { evidenceBody, evidenceCreated } from "../http/dispute-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";

/** POST /v1/disputes/evidence: the payer's statement (bound by open_dispute) or the creator's answer. */
export function registerDisputesEvidenceCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/disputes/evidence",
    {
      bodyLimit: EVIDENCE_BODY_LIMIT_BYTES,
      schema: {
        summary: "Submit dispute evidence",
        description:
          "The session's wallet must be the execution's payer (role payer) or its agent's creator (role creator). " +
          "evidence_hash is what the payer passes to open_dispute.",
        tags: ["disputes"],
        security: [{ session: [] }],
        body: evidenceBody,
        response: { 201: evidenceCreated, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      },
      // Before the body is read: only a signed-in wallet gets to send up to 8 MiB.
      onRequest: requireSession(services.signIn),
    },
    async (request, reply) => {
      const created = await services.disputes.submitEvidence(request.walletSession!.wallet, request.body);
      return reply.code(201).send(created);
    },
  );
}
