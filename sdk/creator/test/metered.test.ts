// A metered call through handleExecute: the handler sees the escrow's terms, units up to the
// maximum are signed, and units above it are never signed but answered as the creator's failure.
import assert from "node:assert/strict";

import { signRequest, verifyCreatorResponse } from "@agent-market/program";

import { createAgentService, metered, type AgentContext, type ExecuteHttpRequest } from "../src/index.js";
import { creatorSeed, executeRequest, expectedAnswer, jsonAnswer, marketplaceKey, marketplaceSeed, servedAgent } from "./helpers.js";

/** The terms of a metered request: at most 10 units of 0.001000 USDC. */
const TERMS = { max_units: "10", price_per_unit_usdc: "0.001000" };

function signed(body: unknown): ExecuteHttpRequest {
  const text = JSON.stringify(body);
  const header = signRequest(marketplaceSeed, { method: "POST", path: "/execute", body: text, timestamp_secs: Date.now() / 1000 });
  return { method: "POST", path: "/execute", headers: { "agentmarket-signature": header }, body: new TextEncoder().encode(text) };
}

describe("metered calls", () => {
  const seen = new Map<string, AgentContext<{ units: number }>>();
  const reported: [unknown, string | undefined][] = [];
  // Answers the units its parameters ask for, whatever the call allows: the kit must hold the line.
  const service = createAgentService<{ units: number }>({
    signingKey: creatorSeed,
    marketplaceKey,
    agents: [servedAgent],
    inputSchema: { type: "object", properties: { units: { type: "integer", minimum: 0 } }, required: ["units"] },
    outputSchema: { type: "object" },
    handler(context) {
      seen.set(context.executionId, context);
      return metered({ counted: context.parameters.units }, BigInt(context.parameters.units));
    },
    onError: (error, executionId) => reported.push([error, executionId]),
  });

  it("gives the handler the call's terms, and null for a fixed-price call", async () => {
    const meteredCall = executeRequest("count", { units: 1 }, TERMS);
    const fixedCall = executeRequest("count", { units: 1 });
    assert.equal((jsonAnswer(await service.handleExecute(signed(meteredCall)))).status, 200);
    assert.equal((jsonAnswer(await service.handleExecute(signed(fixedCall)))).status, 200);
    assert.deepEqual(seen.get(meteredCall.execution_id)!.metered, { maxUnits: 10n, pricePerUnitUsdc: 1000n });
    assert.equal(seen.get(fixedCall.execution_id)!.metered, null);
  });

  it("signs units up to the call's max_units", async () => {
    const request = executeRequest("count", { units: 10 }, TERMS);
    const response = jsonAnswer(await service.handleExecute(signed(request)));
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const check = verifyCreatorResponse(response.body, expectedAnswer(request));
    assert.ok(check.ok && check.units === 10n, check.ok ? `units ${check.units}` : check.message);
  });

  it("answers units above max_units as 500 invalid_output, unsigned, and tells onError", async () => {
    const request = executeRequest("count", { units: 11 }, TERMS);
    const response = jsonAnswer(await service.handleExecute(signed(request)));
    assert.equal(response.status, 500);
    assert.deepEqual(response.body, {
      error: { code: "invalid_output", message: "the handler answered 11 units, above the call's max_units 10" },
    });
    assert.equal("signature" in response.body, false);
    const [error, executionId] = reported.at(-1)!;
    assert.equal(executionId, request.execution_id);
    assert.ok(error instanceof RangeError);
  });

  it("answers a fixed-price call's units as before: signed, whatever their number", async () => {
    const request = executeRequest("count", { units: 1000 });
    const response = jsonAnswer(await service.handleExecute(signed(request)));
    assert.equal(response.status, 200);
    const check = verifyCreatorResponse(response.body, expectedAnswer(request));
    assert.ok(check.ok && check.units === 1000n);
  });

  it("refuses a request carrying one of the two terms without the other: 400 invalid_request", async () => {
    const response = jsonAnswer(await service.handleExecute(signed(executeRequest("count", { units: 1 }, { max_units: "10" }))));
    assert.equal(response.status, 400);
    assert.equal((response.body as { error: { code: string } }).error.code, "invalid_request");
  });
});
