// The API's URL as people have it: `npm start` prints the relayer's with /v1, and the CLI's paths
// start with /v1, so a URL ending in /v1 (or a slash) must not be requested as /v1/v1/…
import { strict as assert } from "node:assert";

import { FIXED_CHARGE, cli, json, serve, type Server } from "./helpers.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";

describe("the API URL, with or without /v1", () => {
  let api: Server;
  afterEach(async () => api?.close());

  it("requests /v1/… once whether AGENT_MARKET_API_URL or --api ends in /v1, /v1/ or nothing", async () => {
    api = await serve((request, _raw, res) =>
      request.method === "GET"
        ? json(res, 200, { object: "agent", id: AGENT, name: "Echo", pricing: { model: "pay_per_use", price_usdc: "0.250000" } })
        : json(res, 200, {
            id: "exec_1",
            status: "succeeded",
            output: { echoed: "hi" },
            charge: FIXED_CHARGE,
            transactions: { settlement: "sig" },
          }),
    );
    const key = { AGENT_MARKET_API_KEY: "svc_test_k" };
    for (const url of [api.url, `${api.url}/`, `${api.url}/v1`, `${api.url}/v1/`]) {
      const byEnv = await cli(["execute", AGENT, "--task", "hi"], { ...key, AGENT_MARKET_API_URL: url });
      assert.equal(byEnv.code, 0, `${url}: ${byEnv.err}`);
      const byOption = await cli(["execute", AGENT, "--task", "hi", "--api", url], key);
      assert.equal(byOption.code, 0, `${url}: ${byOption.err}`);
    }
    assert.deepEqual([...new Set(api.requests.map((request) => `${request.method} ${new URL(request.url, "http://x").pathname}`))], [
      `GET /v1/agents/${AGENT}`,
      `POST /v1/agents/${AGENT}/execute`,
    ]);
  });
});
