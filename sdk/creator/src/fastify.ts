// `POST /execute`, `POST /sign-batch` and `GET /health` as a fastify plugin, answering as the node:http listener does.
// The plugin is encapsulated (no fastify-plugin wrapper) on purpose: its raw-body parser and error
// handler must not leak into the host application.
import type { FastifyError, FastifyPluginAsync, FastifyReply } from "fastify";

import { writeEventStream } from "./node.js";
import { errorResponse, type ServiceResponse } from "./responses.js";
import { createAgentService, type AgentServiceCore, type AgentServiceOptions } from "./service.js";

/**
 * Either a service to serve, or the options to create one with. `never` parameters accept a handler
 * of any parameter type: the plugin only passes them through.
 */
export type AgentServicePluginOptions = { service: AgentServiceCore } | AgentServiceOptions<never>;

function send(reply: FastifyReply, response: ServiceResponse): FastifyReply {
  return reply
    .code(response.status)
    .header("content-type", "application/json; charset=utf-8")
    .header("cache-control", "no-store")
    .send(JSON.stringify(response.body));
}

export const agentServicePlugin: FastifyPluginAsync<AgentServicePluginOptions> = async (fastify, options) => {
  const service = "service" in options ? options.service : createAgentService(options);

  // The signature covers the body's exact bytes, so no content type may be parsed into an object.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: service.maxBodyBytes }, (_request, body, done) => {
    done(null, body);
  });
  fastify.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.statusCode === 413) {
      const message = `the body is larger than ${service.maxBodyBytes} bytes`;
      return send(reply, errorResponse(413, "payload_too_large", message));
    }
    if (error.statusCode !== undefined && error.statusCode < 500) {
      return send(reply, errorResponse(400, "invalid_request", "the request could not be read"));
    }
    return send(reply, errorResponse(500, "internal_error", "the service failed to process the request"));
  });

  fastify.post("/execute", { bodyLimit: service.maxBodyBytes }, async (request, reply) => {
    const hangUp = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) hangUp.abort();
    });
    const response = await service.handleExecute({
      method: request.method,
      path: request.raw.url ?? request.url,
      headers: request.headers,
      body: request.body instanceof Buffer ? request.body : new Uint8Array(),
      signal: hangUp.signal,
    });
    if (!("stream" in response)) return send(reply, response);
    // Fastify sends a reply in one piece; a stream is written to the socket frame by frame instead.
    reply.hijack();
    await writeEventStream(reply.raw, response);
    return reply;
  });

  fastify.post("/sign-batch", { bodyLimit: service.maxBodyBytes }, async (request, reply) => {
    const response = await service.handleSignBatch({
      method: request.method,
      path: request.raw.url ?? request.url,
      headers: request.headers,
      body: request.body instanceof Buffer ? request.body : new Uint8Array(),
    });
    return send(reply, response);
  });

  fastify.get("/health", async (_request, reply) => send(reply, service.health()));
};
