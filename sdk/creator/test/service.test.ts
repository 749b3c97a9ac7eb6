// POST /execute and GET /health over real HTTP on 127.0.0.1, through the node:http listener and
// the fastify plugin, with the marketplace simulated by signRequest.
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";

import { fastify } from "fastify";
import { formatExecutionId, requestHash, toHex, verifyCreatorResponse } from "@agent-market/program";

import { createAgentService, metered, type AgentContext, type AgentServiceOptions } from "../src/index.js";
import { agentServicePlugin } from "../src/fastify.js";
import {
  closeServer,
  creatorSeed,
  executeRequest,
  expectedAnswer,
  marketplaceKey,
  nowSecs,
  post,
  send,
  servedAgent,
  servedOnBothTransports,
  signedCall,
  strangerSeed,
  urlOf,
  type Answer,
  type SignedCall,
} from "./helpers.js";

type Mode = "ok" | "metered" | "throw" | "bad_output" | "not_json" | "wait" | "hang";
interface RepeatParameters {
  text: string;
  times: number;
  mode?: Mode;
}

const inputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    text: { type: "string", maxLength: 100 },
    times: { type: "integer", minimum: 1, maximum: 5, default: 1 },
    mode: { enum: ["ok", "metered", "throw", "bad_output", "not_json", "wait", "hang"] },
  },
  required: ["text"],
  additionalProperties: false,
};

const outputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { repeated: { type: "string" } },
  required: ["repeated"],
};

/** What each handler call saw, by execution id. */
const contexts = new Map<string, AgentContext<RepeatParameters>>();
const errors: { error: unknown; executionId: string | undefined }[] = [];

const options: AgentServiceOptions<RepeatParameters> = {
  signingKey: creatorSeed,
  marketplaceKey,
  agents: [servedAgent],
  inputSchema,
  outputSchema,
  onError: (error, executionId) => errors.push({ error, executionId }),
  async handler(context) {
    contexts.set(context.executionId, context);
    const { text, times, mode = "ok" } = context.parameters;
    switch (mode) {
      case "ok":
        return {
          repeated: text.repeat(times),
          task: context.task,
          execution_id: context.executionId,
          agent: context.agent,
          network: context.network,
          deadline: context.deadline.toISOString(),
        };
      case "metered":
        return metered({ repeated: text.repeat(times) }, BigInt(times) * 1000n);
      case "throw":
        throw new Error("the model is unavailable");
      case "bad_output":
        return { repeated: times };
      case "not_json":
        return { repeated: text, at: new Date(0) };
      case "wait":
        return new Promise((_resolve, reject) => {
          context.signal.addEventListener("abort", () => reject(context.signal.reason));
        });
      case "hang":
        return new Promise(() => {});
    }
  },
};

describe("agent services on 127.0.0.1", () => {
  const served = servedOnBothTransports(options);

  const servers = () => [
    ["node:http", served.nodeUrl],
    ["fastify", served.fastifyUrl],
  ] as const;

  function assertError(answer: Answer, status: number, code: string): void {
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    assert.equal(answer.body.error.code, code, JSON.stringify(answer.body));
    assert.equal(typeof answer.body.error.message, "string");
  }

  for (const [name, url] of [
    ["node:http", () => served.nodeUrl],
    ["fastify", () => served.fastifyUrl],
  ] as const) {
    describe(`agent service over ${name}`, () => {
      it("GET /health names the signing key", async () => {
        const answer = await send(url(), { method: "GET", path: "/health", body: "", headers: {} });
        assert.equal(answer.status, 200);
        assert.equal(answer.contentType, "application/json; charset=utf-8");
        assert.deepEqual(answer.body, { status: "ok", signing_key: createAgentService(options).publicKey });
      });

      it("answers a metered call with its units, signed", async () => {
        const request = executeRequest("repeat", { text: "ab", times: 3, mode: "metered" });
        const answer = await post(url(), "/execute", request);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.units, "3000");
        const check = verifyCreatorResponse(answer.body, expectedAnswer(request));
        assert.ok(check.ok && check.units === 3000n);
        assert.equal(verifyCreatorResponse({ ...answer.body, units: "3001" }, expectedAnswer(request)).ok, false);
      });

      it("refuses a request of another protocol version: 400 unsupported_protocol_version", async () => {
        const { protocol_version: _, ...v1 } = executeRequest("repeat", { text: "ab", times: 1 });
        const answer = await post(url(), "/execute", v1);
        assertError(answer, 400, "unsupported_protocol_version");
        assert.equal(answer.body.error.message, "protocol_version is missing; this creator speaks 2");
      });

      it("refuses a request whose escrow fields are malformed, naming the field: 400 invalid_request", async () => {
        const answer = await post(url(), "/execute", executeRequest("repeat", { text: "ab", times: 1 }, { amount_usdc: "0.25" }));
        assertError(answer, 400, "invalid_request");
        assert.equal(answer.body.error.message, "amount_usdc is not USDC with 6 decimals: 0.25");
      });

      it("answers a valid call with a result that verifies", async () => {
        const request = executeRequest("repeat", { text: "ab", times: 3 });
        const answer = await post(url(), "/execute", request);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const check = verifyCreatorResponse(answer.body, expectedAnswer(request));
        assert.ok(check.ok, check.ok ? "" : check.message);
        assert.equal(check.units, 0n, "a fixed-price answer signs units 0");
        assert.equal("units" in answer.body, false, "and answers none");
        assert.deepEqual(answer.body.output, {
          repeated: "ababab",
          task: "repeat",
          execution_id: request.execution_id,
          agent: request.agent,
          network: "devnet",
          deadline: request.deadline,
        });
      });

      it("fills the input schema's defaults into the handler's parameters, after checking request_hash", async () => {
        const request = executeRequest("repeat", { text: "x" });
        const answer = await post(url(), "/execute", request);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body.output.repeated, "x");
        assert.deepEqual(contexts.get(request.execution_id)!.parameters, { text: "x", times: 1 });
        assert.ok(verifyCreatorResponse(answer.body, expectedAnswer(request)).ok);
      });

      it("takes the signed path as received, query string included", async () => {
        const request = executeRequest("repeat", { text: "q" });
        const answer = await post(url(), "/execute?trace=1", request);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
      });

      describe("refuses what the marketplace did not sign: 401", () => {
        it("missing_signature", async () => {
          assertError(await post(url(), "/execute", executeRequest("t", { text: "a" }), { header: null }), 401, "missing_signature");
        });
        it("malformed_signature", async () => {
          const answer = await post(url(), "/execute", executeRequest("t", { text: "a" }), { header: "t=1,key=2" });
          assertError(answer, 401, "malformed_signature");
        });
        it("unexpected_key", async () => {
          const answer = await post(url(), "/execute", executeRequest("t", { text: "a" }), { signer: strangerSeed });
          assertError(answer, 401, "unexpected_key");
        });
        it("stale_timestamp, signed too long ago", async () => {
          const answer = await post(url(), "/execute", executeRequest("t", { text: "a" }), { timestamp_secs: nowSecs() - 400 });
          assertError(answer, 401, "stale_timestamp");
        });
        it("stale_timestamp, signed in the future", async () => {
          const answer = await post(url(), "/execute", executeRequest("t", { text: "a" }), { timestamp_secs: nowSecs() + 400 });
          assertError(answer, 401, "stale_timestamp");
        });
        it("bad_signature: signed for another path", async () => {
          const answer = await post(url(), "/execute?x=1", executeRequest("t", { text: "a" }), { signedPath: "/execute" });
          assertError(answer, 401, "bad_signature");
        });
        it("bad_signature: body changed after signing", async () => {
          const request = executeRequest("t", { text: "a" });
          const call = signedCall("/execute", JSON.stringify(request));
          assertError(await send(url(), { ...call, body: JSON.stringify({ ...request, task: "u" }) }), 401, "bad_signature");
        });
      });

      describe("refuses replays: 409 replayed_request", () => {
        it("the same signed request twice", async () => {
          const call = signedCall("/execute", JSON.stringify(executeRequest("t", { text: "a" })));
          assert.equal((await send(url(), call)).status, 200);
          assertError(await send(url(), call), 409, "replayed_request");
        });
        it("the same execution id under a new signature", async () => {
          const request = executeRequest("t", { text: "a" });
          assert.equal((await post(url(), "/execute", request, { timestamp_secs: nowSecs() - 1 })).status, 200);
          assertError(await post(url(), "/execute", request), 409, "replayed_request");
        });
      });

      describe("refuses bodies it cannot use: 400", () => {
        it("invalid_json: not JSON", async () => {
          assertError(await post(url(), "/execute", "{not json"), 400, "invalid_json");
        });
        it("invalid_json: not UTF-8", async () => {
          assertError(await post(url(), "/execute", new Uint8Array([0x22, 0xff, 0x22])), 400, "invalid_json");
        });
        it("invalid_request: a body that is not an object", async () => {
          assertError(await post(url(), "/execute", [executeRequest("t", { text: "a" })]), 400, "invalid_request");
        });
        const badFields: [string, Record<string, unknown>][] = [
          ["an execution id without its prefix", { execution_id: "8wCZXmNqnVigP1PCUJiX9p" }],
          ["an execution id of 17 bytes", { execution_id: "exec_c2E2ansQKokxp8gydXCG5uq" }],
          ["an agent that is not base58", { agent: "0OIl" }],
          ["an agent of 16 bytes", { agent: formatExecutionId(new Uint8Array(16)).slice(5) }],
          ["a missing network", { network: undefined }],
          ["a task that is not a string", { task: 7 }],
          ["parameters that are an array", { parameters: ["a"] }],
          ["a request hash in capitals", { request_hash: "AB".repeat(32) }],
          ["a deadline that is not RFC 3339", { deadline: "tomorrow" }],
          ["a deadline without a time zone", { deadline: "2030-01-01T00:00:00" }],
        ];
        for (const [what, fields] of badFields) {
          it(`invalid_request: ${what}`, async () => {
            const request = executeRequest("t", { text: "a" });
            assertError(await post(url(), "/execute", { ...request, ...fields }), 400, "invalid_request");
          });
        }
        it("request_hash_mismatch", async () => {
          const request = executeRequest("t", { text: "a" }, { request_hash: toHex(requestHash("t", { text: "b" })) });
          assertError(await post(url(), "/execute", request), 400, "request_hash_mismatch");
        });
        it("invalid_parameters, with the failing paths", async () => {
          const request = executeRequest("t", { text: 5, times: 9, extra: true });
          const answer = await post(url(), "/execute", request);
          assertError(answer, 400, "invalid_parameters");
          const paths = (answer.body.error.details as { path: string }[]).map((d) => d.path).sort();
          assert.deepEqual(paths, ["/", "/text", "/times"]);
          assert.match(answer.body.error.message, /\/text must be string/);
        });
      });

      describe("deadlines: 408 deadline_passed", () => {
        it("a deadline already past", async () => {
          const request = executeRequest("t", { text: "a" }, { deadline: new Date(Date.now() - 1000).toISOString() });
          assertError(await post(url(), "/execute", request), 408, "deadline_passed");
          assert.equal(contexts.has(request.execution_id), false);
        });
        it("a handler that stops when its signal fires at the deadline", async () => {
          const request = executeRequest("t", { text: "a", mode: "wait" }, { deadline: new Date(Date.now() + 300).toISOString() });
          assertError(await post(url(), "/execute", request), 408, "deadline_passed");
          assert.equal(contexts.get(request.execution_id)!.signal.aborted, true);
        });
        it("a handler that ignores its signal is not waited for", async () => {
          const started_ms = Date.now();
          const request = executeRequest("t", { text: "a", mode: "hang" }, { deadline: new Date(Date.now() + 300).toISOString() });
          assertError(await post(url(), "/execute", request), 408, "deadline_passed");
          assert.ok(Date.now() - started_ms < 5000);
        });
      });

      describe("the creator's own failures: 500, unsigned", () => {
        it("handler_error carries the message, not the stack", async () => {
          const request = executeRequest("t", { text: "a", mode: "throw" });
          const answer = await post(url(), "/execute", request);
          assertError(answer, 500, "handler_error");
          assert.equal(answer.body.error.message, "the model is unavailable");
          assert.deepEqual(Object.keys(answer.body.error), ["code", "message"]);
          assert.ok(errors.some((e) => e.executionId === request.execution_id));
        });
        it("invalid_output: an output that fails the output schema", async () => {
          const request = executeRequest("t", { text: "a", mode: "bad_output" });
          const answer = await post(url(), "/execute", request);
          assertError(answer, 500, "invalid_output");
          assert.equal(answer.body.signature, undefined);
          assert.deepEqual(answer.body.error.details, [{ path: "/repeated", message: "must be string" }]);
        });
        it("invalid_output: an output that is not JSON data", async () => {
          const answer = await post(url(), "/execute", executeRequest("t", { text: "a", mode: "not_json" }));
          assertError(answer, 500, "invalid_output");
        });
      });

      it("413 payload_too_large past maxBodyBytes (1 MiB by default)", async () => {
        const request = executeRequest("t", { text: "a" });
        const answer = await post(url(), "/execute", JSON.stringify(request) + " ".repeat(1024 * 1024));
        assertError(answer, 413, "payload_too_large");
      });
    });
  }

  describe("node:http listener and fastify plugin", () => {
    it("answer every case with the same status, content type and bytes", async () => {
      const request = () => executeRequest("same", { text: "z", times: 2 });
      const fixed = executeRequest("same", { text: "z", times: 2 });
      const calls: SignedCall[] = [
        signedCall("/execute", JSON.stringify(fixed)),
        signedCall("/execute", JSON.stringify(request()), { header: null }),
        signedCall("/execute", JSON.stringify(request()), { header: "sig=00" }),
        signedCall("/execute", JSON.stringify(request()), { signer: strangerSeed }),
        signedCall("/execute", JSON.stringify(request()), { timestamp_secs: nowSecs() - 1000 }),
        signedCall("/execute", JSON.stringify(request()), { signedPath: "/other" }),
        signedCall("/execute", "[1,"),
        signedCall("/execute", JSON.stringify({ ...request(), agent: "x" })),
        signedCall("/execute", JSON.stringify({ ...request(), request_hash: "00".repeat(32) })),
        signedCall("/execute", JSON.stringify(executeRequest("t", { text: [] }))),
        signedCall("/execute", JSON.stringify(executeRequest("t", { text: "a" }, { deadline: "2001-01-01T00:00:00Z" }))),
        signedCall("/execute", JSON.stringify(executeRequest("t", { text: "a", mode: "throw" }))),
        signedCall("/execute", JSON.stringify(executeRequest("t", { text: "a", mode: "bad_output" }))),
        signedCall("/execute", JSON.stringify(request()), { contentType: "text/plain" }),
        signedCall("/execute", JSON.stringify(request()), { contentType: "application/octet-stream" }),
      ];
      const codes: string[] = [];
      for (const call of calls) {
        const [a, b] = await Promise.all(servers().map(([, url]) => send(url, call)));
        assert.deepEqual(b, a, JSON.stringify(call).slice(0, 200));
        codes.push(a.body.error?.code ?? String(a.status));
      }
      assert.deepEqual(codes, [
        "200",
        "missing_signature",
        "malformed_signature",
        "unexpected_key",
        "stale_timestamp",
        "bad_signature",
        "invalid_json",
        "invalid_request",
        "request_hash_mismatch",
        "invalid_parameters",
        "deadline_passed",
        "handler_error",
        "invalid_output",
        "200",
        "200",
      ]);
      // Ed25519 is deterministic: both signed the same bytes.
      const [a, b] = await Promise.all(servers().map(([, url]) => send(url, calls[0]!)));
      assert.deepEqual(a, b);
      assert.equal(a.body.error.code, "replayed_request");
    });

    it("an upload cut off at maxBodyBytes, with or without a Content-Length", async () => {
      const small = { ...options, maxBodyBytes: 256 };
      const server = await createAgentService(small).listen(0, "127.0.0.1");
      const app = fastify();
      await app.register(agentServicePlugin, small);
      const appUrl = await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        for (const base of [urlOf(server), appUrl]) {
          for (const chunked of [false, true]) {
            const answer = await rawPost(base, "x".repeat(1000), chunked);
            assert.equal(answer.status, 413, `${base} chunked=${chunked}`);
            assert.deepEqual(JSON.parse(answer.text), {
              error: { code: "payload_too_large", message: "the body is larger than 256 bytes" },
            });
          }
        }
      } finally {
        await closeServer(server);
        await app.close();
      }
    });

    it("the plugin under a prefix verifies the prefixed path", async () => {
      const app = fastify();
      await app.register(agentServicePlugin, { ...options, prefix: "/agents/repeat" });
      const base = await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        const request = executeRequest("t", { text: "p" });
        const answer = await post(base, "/agents/repeat/execute", request);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.ok(verifyCreatorResponse(answer.body, expectedAnswer(request)).ok);
        const health = await send(base, { method: "GET", path: "/agents/repeat/health", body: "", headers: {} });
        assert.equal(health.status, 200);
      } finally {
        await app.close();
      }
    });

    it("the plugin serves a service created elsewhere, and leaves the host's JSON parsing alone", async () => {
      const service = createAgentService(options);
      const app = fastify();
      app.post("/echo", async (request) => request.body);
      await app.register(agentServicePlugin, { service });
      const base = await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        const echoed = await fetch(`${base}/echo`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"a":1}',
        });
        assert.deepEqual(await echoed.json(), { a: 1 });
        const health = await send(base, { method: "GET", path: "/health", body: "", headers: {} });
        assert.equal(health.body.signing_key, service.publicKey);
      } finally {
        await app.close();
      }
    });

    it("the node listener answers 404 and 405 elsewhere", async () => {
      const missing = await send(served.nodeUrl, { method: "GET", path: "/nothing", body: "", headers: {} });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, "not_found");
      const wrongMethod = await send(served.nodeUrl, { method: "GET", path: "/execute", body: "", headers: {} });
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.body.error.code, "method_not_allowed");
      const postHealth = await send(served.nodeUrl, { method: "POST", path: "/health", body: "", headers: {} });
      assert.equal(postHealth.status, 405);
    });

    it("the handler's signal fires when the marketplace hangs up", async () => {
      const request = executeRequest("t", { text: "a", mode: "wait" });
      const call = signedCall("/execute", JSON.stringify(request));
      for (const [, base] of servers()) {
        // node:http rather than fetch, whose pool reconnects after an abort and keeps servers from closing.
        const req = httpRequest(base + call.path, { method: "POST", headers: call.headers, agent: false });
        req.on("error", () => {});
        req.end(call.body);
        await waitFor(() => contexts.has(request.execution_id));
        req.destroy();
        const context = contexts.get(request.execution_id)!;
        await waitFor(() => context.signal.aborted);
        contexts.delete(request.execution_id);
      }
    });
  });
});

async function waitFor(condition: () => boolean, timeout_ms = 5000): Promise<void> {
  const until_ms = Date.now() + timeout_ms;
  while (!condition()) {
    if (Date.now() > until_ms) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A POST of `body` sent with a Content-Length, or chunked without one. */
function rawPost(baseUrl: string, body: string, chunked: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}/execute`, {
      method: "POST",
      headers: chunked ? { "content-type": "application/json" } : { "content-type": "application/json", "content-length": body.length },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    req.on("error", reject);
    if (chunked) {
      req.write(body.slice(0, 100));
      setTimeout(() => req.end(body.slice(100)), 20);
    } else {
      req.end(body);
    }
  });
}
