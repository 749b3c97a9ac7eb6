// The cross-site request check applies to every state-changing route by construction (an app-wide
// hook): the test takes the routes from the app's own OpenAPI document, so a route added later is
// checked without anyone listing it here.
import { strict as assert } from "node:assert";

import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

const STATE_CHANGING = ["post", "put", "patch", "delete"];

describe("cookie requests on state-changing routes", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  async function stateChangingRoutes(): Promise<[string, string][]> {
    const document = (await relayer.app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes: [string, string][] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) if (STATE_CHANGING.includes(method)) routes.push([method.toUpperCase(), path]);
    }
    return routes;
  }

  it("refuses every one of them without Content-Type: application/json: 403 cookie_request_not_json, nothing changed", async () => {
    const token = await signIn(relayer.app);
    const routes = await stateChangingRoutes();
    const names = routes.map(([method, path]) => `${method} ${path}`);
    for (const expected of [
      "POST /v1/agents/{agent_id}/pause",
      "POST /v1/agents/{agent_id}/retire",
      "POST /v1/agents/{agent_id}/resume",
      "PATCH /v1/agents/{agent_id}",
      "POST /v1/keys",
      "DELETE /v1/keys/{key_id}",
      "DELETE /v1/auth/session",
      "POST /v1/disputes/evidence",
      "POST /v1/agents/{agent_id}/execute",
    ]) {
      assert.ok(names.includes(expected), `${expected} is among ${names.join(", ")}`);
    }
    const agent = Keypair.generate().publicKey.toBase58();
    for (const [method, path] of routes) {
      const url = path.replace("{agent_id}", agent).replace(/\{[a-z_]+\}/g, "x");
      for (const headers of [{ "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, {}]) {
        const response = await relayer.app.inject({
          method: method as "POST",
          url,
          headers: { cookie: `am_session=${token}`, ...headers },
          ...("content-type" in headers ? { payload: "{}" } : {}),
        });
        assert.equal(response.statusCode, 403, `${method} ${url} ${JSON.stringify(headers)}: ${response.body}`);
        assert.equal(errorOf(response).code, "cookie_request_not_json", `${method} ${url}`);
      }
    }
    // Nothing happened: no key was created and the session was not signed out.
    const keys = await relayer.app.inject({ method: "GET", url: "/v1/keys", headers: bearer(token) });
    assert.equal(keys.statusCode, 200, "the session is still signed in");
    assert.deepEqual((keys.json() as { data: unknown[] }).data, []);
  });

  it("lets JSON through, with an empty object on a route without a body, and a Bearer session without the check", async () => {
    const token = await signIn(relayer.app);
    const agent = Keypair.generate().publicKey.toBase58();
    const json = await relayer.app.inject({
      method: "POST",
      url: `/v1/agents/${agent}/pause`,
      headers: { cookie: `am_session=${token}`, "content-type": "application/json" },
      payload: "{}",
    });
    assert.equal(errorOf(json).code, "resource_not_found", "past the check, to the route");
    const withBearer = await relayer.app.inject({ method: "POST", url: `/v1/agents/${agent}/pause`, headers: bearer(token) });
    assert.equal(errorOf(withBearer).code, "resource_not_found");
    // Reads are not concerned.
    const read = await relayer.app.inject({ method: "GET", url: "/v1/keys", headers: { cookie: `am_session=${token}` } });
    assert.equal(read.statusCode, 200);
  });
});
