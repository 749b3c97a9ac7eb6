// Routes are typed by their own schemas (src/http/route-app.ts). The `@ts-expect-error` lines are
// the test that matters: `tsc -p tsconfig.test.json` (run before mocha) fails if the provider
// stops typing a request's parts or a reply from the schema, because each marked line would then
// compile. The requests below check that the runtime agrees with those types.
import { strict as assert } from "node:assert";

import Fastify from "fastify";

import { routeApp } from "../src/http/route-app.js";

const querystring = {
  type: "object",
  required: ["limit"],
  additionalProperties: false,
  properties: { limit: { type: "integer", minimum: 1 }, starting_after: { type: "string" } },
} as const;

const body = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: { name: { type: "string" }, environment: { type: "string", enum: ["test", "live"] } },
} as const;

const item = {
  type: "object",
  required: ["object", "name"],
  properties: { object: { const: "item" }, name: { type: "string" } },
} as const;

function buildApp() {
  const app = routeApp(Fastify());
  app.get("/items", { schema: { querystring, response: { 200: { type: "object", required: ["limit"], properties: { limit: { type: "integer" } } } } } }, async (request) => {
    const limit: number = request.query.limit;
    const cursor: string | undefined = request.query.starting_after;
    // @ts-expect-error the schema has no `offset`
    void request.query.offset;
    void cursor;
    return { limit };
  });
  app.post("/items", { schema: { body, response: { 201: item } } }, async (request, reply) => {
    const environment: "test" | "live" | undefined = request.body.environment;
    // @ts-expect-error `environment` is one of the schema's enum, not any string
    const widened: "test" = request.body.environment;
    void environment;
    void widened;
    reply.code(201);
    return { object: "item" as const, name: request.body.name };
  });
  // @ts-expect-error a reply whose `object` is not the schema's constant does not compile
  app.get("/wrong", { schema: { response: { 200: item } } }, async () => ({ object: "other" as const, name: "x" }));
  // @ts-expect-error a reply missing the schema's required `name` does not compile
  app.get("/missing", { schema: { response: { 200: item } } }, async () => ({ object: "item" as const }));
  return app;
}

describe("routes typed by their schemas", () => {
  it("reads the query as the schema types it: integers coerced, absent optional fields undefined", async () => {
    const app = buildApp();
    const response = await app.inject({ method: "GET", url: "/items?limit=5" });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { limit: 5 });
    await app.close();
  });

  it("refuses a body the schema refuses, before the handler", async () => {
    const app = buildApp();
    const wrong = await app.inject({ method: "POST", url: "/items", payload: { name: "a", environment: "staging" } });
    assert.equal(wrong.statusCode, 400);
    const right = await app.inject({ method: "POST", url: "/items", payload: { name: "a", environment: "live" } });
    assert.equal(right.statusCode, 201);
    assert.deepEqual(right.json(), { object: "item", name: "a" });
    await app.close();
  });
});
