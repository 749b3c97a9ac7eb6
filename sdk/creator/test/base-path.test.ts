// nodeListener mounted under a path, as one server hosting several agents mounts each under its
// own endpoint: the routes move under the base, and the signature still covers the full path.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";

import { verifyCreatorResponse } from "@agent-market/program";

import { createAgentService, nodeListener } from "../src/index.js";
import { closeServer, creatorSeed, executeRequest, expectedAnswer, marketplaceKey, post, send, servedAgent, urlOf } from "./helpers.js";

describe("nodeListener under a base path", () => {
  const core = createAgentService({
    signingKey: creatorSeed,
    marketplaceKey,
    agents: [servedAgent],
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    handler: ({ parameters }) => ({ got: parameters }),
  });
  let server: Server;
  let url: string;
  before(async () => {
    server = createServer(nodeListener(core, { basePath: "/agents/a1/" }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = urlOf(server);
  });
  after(() => closeServer(server));

  it("answers POST <base>/execute, signed over the full path, with a result that verifies", async () => {
    const request = executeRequest("t", { a: 1 });
    const answer = await post(url, "/agents/a1/execute", request);
    assert.equal(answer.status, 200, answer.text);
    assert.ok(verifyCreatorResponse(answer.body, expectedAnswer(request)).ok);
  });

  it("refuses a request signed for the path without its base: 401 bad_signature", async () => {
    const answer = await post(url, "/agents/a1/execute", executeRequest("t", {}), { signedPath: "/execute" });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, "bad_signature");
  });

  it("answers GET <base>/health, and nothing outside the base: 404 not_found naming the routes", async () => {
    const health = await send(url, { method: "GET", path: "/agents/a1/health", body: "", headers: {} });
    assert.deepEqual(health.body, { status: "ok", signing_key: core.publicKey });
    for (const path of ["/execute", "/agents/a10/execute", "/agents/a1"]) {
      const answer = await post(url, path, executeRequest("t", {}));
      assert.equal(answer.status, 404, path);
      assert.equal(answer.body.error.message, "this service answers POST /agents/a1/execute, POST /agents/a1/sign-batch and GET /agents/a1/health");
    }
  });

  it("refuses a base path that is not absolute", () => {
    assert.throws(() => nodeListener(core, { basePath: "agents" }), /basePath must start with "\/"/);
  });
});
