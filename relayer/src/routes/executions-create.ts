import type { NetworkName } from "@agent-market/program";
import type { FastifyReply } from "fastify";

import type { Services } from "../app-services.js";
import { ApiError, errorBody, type ErrorCode } from "../errors.js";
import type { ExecutionRow } from "../executions/execution-row.js";
import { MAX_TASK_CHARS } from "../executions/execution-service.js";
import { renderExecution, type ExecutionObject } from "../executions/execution-view.js";
import { requireApiKeyOrSession } from "../http/auth.js";
import { executionObject } from "../http/execution-schemas.js";
import { acceptsEventStream, EventStreamReply } from "../http/event-stream-reply.js";
import { idempotencyKeyOf } from "../http/idempotency.js";
import { requestUsdc } from "../http/request-usdc.js";
import type { RouteApp } from "../http/route-app.js";
import { servedNetwork } from "../http/web-runs.js";
import { agentIdParams, errorResponses, network, usdcAmount } from "../http/schemas.js";
import { checkWebhookUrl, MAX_URL_BYTES } from "../webhooks/webhook-endpoints.js";

/** The HTTP answer an execution's row gives: the execution with its status, or the error that carries it. */
type Answer = { kind: "execution"; status: 200 | 202; body: ExecutionObject } | { kind: "error"; error: ApiError };

function answer(row: ExecutionRow): Answer {
  const body = renderExecution(row);
  if (row.mode === "async") return { kind: "execution", status: 202, body };
  if (row.state === "settling" || row.state === "settled") return { kind: "execution", status: 200, body };
  // Not finished within its request (the chain or the database failed after its escrow may have
  // opened): the finish job ends it, settled or refunded, and the caller follows it at its URL.
  if (row.state === "opening" || row.state === "running") return { kind: "execution", status: 202, body };
  const code = (row.failure_code ?? "internal_error") as ErrorCode;
  const error = new ApiError(code, row.failure_message ?? undefined, undefined, {
    execution_id: row.id,
    refund_transaction: row.refund_tx?.signature ?? null,
    execution: body,
  });
  return { kind: "error", error };
}

/** Base units of the caller's `max_price_usdc`; the schema's pattern admits amounts above u64 only. */
function maxPrice(text: string): bigint {
  return requestUsdc(text, "max_price_usdc", "max_price_usdc is above the largest amount.");
}

/** The limits of a caller's event stream. */
function streamOptions(services: Services) {
  return { buffer_bytes: services.config.stream_buffer_bytes, keepalive_ms: services.config.stream_keepalive_ms };
}

/** The key a session's run is charged through, on a network this relayer serves. */
function webRunKey(services: Services, wallet: string, network: NetworkName) {
  return services.webRunKeys.forWallet(wallet, servedNetwork(services, network));
}

/** POST /v1/agents/:agent_id/execute: run an agent, paid through on-chain escrow. */
export function registerExecutionsCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/:agent_id/execute",
    {
      schema: {
        summary: "Execute an agent",
        description:
          "Debits the agent's price from the key's wallet into an on-chain escrow, forwards the task to the creator's " +
          "service, verifies the Ed25519-signed result and settles 99% to the creator and 1% to the marketplace in one " +
          "transaction, or refunds. `svc_test_` keys run on devnet, `svc_live_` keys on mainnet. A wallet session " +
          "(`Bearer sess_…`, or the dashboard's cookie with `Content-Type: application/json`) runs on `network` " +
          "(default devnet), charged to the signed-in wallet through its web-run key. Send an " +
          "Idempotency-Key to retry safely: a replay returns the first answer and never charges twice (kept 48 h). " +
          "`Prefer: respond-async` answers 202 at once with the execution to poll, and `callback_url` has its final " +
          "event delivered there. 402 (insufficient_balance, " +
          "insufficient_allowance, subscription_required, spending_cap_reached) is only ever answered before any " +
          "funds move. A refunded execution answers creator_error (502), creator_timeout (504), invalid_result " +
          "(502) or relayer_error (500) with the execution and its refund transaction. An execution the relayer " +
          "could not finish within the request (its chain or database failed once the escrow may have opened) " +
          "answers 202 with the execution: it ends settled or refunded by itself; follow it at its URL. `max_price_usdc` is " +
          "the most the caller agrees to pay (send the price you showed): a call that costs more is refused before " +
          "anything is sent (409 price_above_maximum), and the program never charges more than it. An agent whose " +
          "account no longer holds its listing's pricing is refused (409 agent_terms_changed); an agent whose circuit " +
          "breaker is open, 503 agent_circuit_open; a key or agent at its in-flight limit, 429 key_concurrency_limit " +
          "or agent_concurrency_limit: all before anything is sent. With `Accept: text/event-stream` the call streams: " +
          "every refusal before the escrow opens is still JSON; then 200 text/event-stream with the events execution, " +
          "output ({seq, text}, one per chunk as the creator produces it), and completed (the final execution) or refunded " +
          "(docs/api.md, \"Streamed executions\").",
        tags: ["executions"],
        security: [{ apiKey: [] }, { session: [] }],
        params: agentIdParams,
        querystring: {
          type: "object",
          properties: { network: { ...network, description: "A session's network; an API key's is its own." } },
        },
        body: {
          type: "object",
          required: ["task", "parameters"],
          additionalProperties: false,
          properties: {
            task: { type: "string", minLength: 1, maxLength: MAX_TASK_CHARS },
            parameters: { type: "object", additionalProperties: true },
            max_price_usdc: {
              ...usdcAmount,
              description: "The most this call may cost, as shown to the caller (e.g. the listing's price_usdc).",
            },
            callback_url: {
              type: "string",
              minLength: 1,
              maxLength: MAX_URL_BYTES,
              description:
                "With `Prefer: respond-async` only: where the execution's final event (execution.succeeded, " +
                "execution.refunded or execution.failed) is delivered, signed like a webhook with `callback_secret`, " +
                "which the 202 carries once.",
            },
          },
        },
        response: {
          200: executionObject,
          202: { ...executionObject, properties: { ...executionObject.properties, callback_secret: { type: "string" } } },
          ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504),
        },
      },
      preHandler: requireApiKeyOrSession(services.authenticator, services.signIn),
    },
    async (request, reply) => {
      const key = request.apiKey ?? (await webRunKey(services, request.walletSession!.wallet, request.query.network ?? "devnet"));
      if (request.query.network !== undefined && request.query.network !== key.network) {
        throw new ApiError("validation_failed", `This key runs on ${key.network}, not ${request.query.network}.`, "network");
      }
      const header = idempotencyKeyOf(request.headers);
      const prefer = String(request.headers.prefer ?? "");
      const mode = /(^|[,;\s])respond-async($|[,;\s])/i.test(prefer) ? "async" : "sync";
      const { callback_url } = request.body;
      if (callback_url !== undefined) {
        if (mode !== "async") {
          throw new ApiError("validation_failed", "callback_url needs Prefer: respond-async.", "callback_url");
        }
        checkWebhookUrl(callback_url, services.config.endpoint_policy, "callback_url");
      }
      // A stream only for a call answered within its request: an async one is polled or called back.
      const stream =
        mode === "sync" && acceptsEventStream(request.headers.accept) ? new EventStreamReply(reply, streamOptions(services)) : undefined;
      const input = {
        key,
        agent: request.params.agent_id,
        task: request.body.task,
        parameters: request.body.parameters,
        ...(header === undefined ? {} : { idempotency_key: header }),
        ...(request.body.max_price_usdc === undefined ? {} : { max_price_usdc: maxPrice(request.body.max_price_usdc) }),
        mode,
        ...(callback_url === undefined ? {} : { callback_url }),
        ...(stream ? { stream } : {}),
      } as const;
      let outcome;
      try {
        outcome = await services.executions.execute(input);
      } catch (error) {
        // Once the stream started, its status line is sent: the failure ends it instead.
        if (!stream?.streaming) throw error;
        request.log.error({ err: error }, "streamed execution failed");
        stream.fail();
        return reply;
      }
      if (stream && (stream.streaming || outcome.replayed)) {
        if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
        stream.finish(outcome.row);
        return reply;
      }
      if (outcome.replayed) reply.header("Idempotent-Replayed", "true");
      if (mode === "async") reply.header("Preference-Applied", "respond-async");
      const answered = answer(outcome.row);
      if (answered.kind === "error") {
        const { error } = answered;
        // 500 and 503 are the relayer's own failures (its chain, its SOL): the operator's to see.
        // A creator's failure (502, 504) is the creator's, and shows in the execution.
        if (error.status === 500 || error.status === 503) {
          request.log.error({ code: error.code, execution_id: error.details?.execution_id }, "execution failed");
        }
        // The status is the row's error code's (errors.ts), one of the error responses above: the
        // type provider cannot tell which, so this reply is not typed by it.
        return (reply as FastifyReply).code(error.status).send(errorBody(error, request.id));
      }
      const { status, body } = answered;
      if (status === 202) reply.header("Location", `/v1/executions/${outcome.row.id}`);
      if (status === 202 && mode === "sync") request.log.error({ execution_id: outcome.row.id }, "execution handed to the finish job");
      const sent = outcome.callback_secret === undefined ? body : { ...body, callback_secret: outcome.callback_secret };
      return reply.code(status).send(sent);
    },
  );
}
