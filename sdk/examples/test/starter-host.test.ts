// The starter host over real HTTP on 127.0.0.1: keys given out with the host's token only, one per
// agent and wallet, kept across restarts; each agent answered under its own endpoint and signed
// with its own key, as the marketplace calls it.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  ed25519PublicKey,
  formatAddress,
  formatExecutionId,
  parseAddress,
  requestHash,
  signRequest,
  toHex,
  verifyCreatorResponse,
  type CreatorExecuteRequest,
} from "@agent-market/program";

import { startStarterHost, type RunningStarterHost, type StarterKey } from "../src/index.js";

const marketplaceSeed = new Uint8Array(32).fill(0x6e);
const marketplaceKey = formatAddress(ed25519PublicKey(marketplaceSeed));
const TOKEN = "starter-test-token";
const address = () => formatAddress(randomBytes(32));

async function keys(host: RunningStarterHost, body: unknown, token = TOKEN): Promise<{ status: number; body: any }> {
  const response = await fetch(`${host.url}/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A marketplace-signed call of `key`'s agent at its endpoint; metered with `max_units` when given. */
async function execute(key: StarterKey, parameters: Record<string, unknown>, max_units?: string, agent = key.agent) {
  const request: CreatorExecuteRequest = {
    protocol_version: 2,
    execution_id: formatExecutionId(randomBytes(16)),
    agent,
    escrow_nonce: "1",
    payer: address(),
    payer_token_account: address(),
    amount_usdc: "0.010000",
    network: "devnet",
    task: "answer",
    parameters,
    request_hash: toHex(requestHash("answer", parameters)),
    deadline: new Date(Date.now() + 60_000).toISOString(),
    ...(max_units === undefined ? {} : { max_units, price_per_unit_usdc: "0.001000" }),
  };
  const body = JSON.stringify(request);
  const url = new URL(`${key.endpoint}/execute`);
  const signature = signRequest(marketplaceSeed, { method: "POST", path: url.pathname, body, timestamp_secs: Math.floor(Date.now() / 1000) });
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "agentmarket-signature": signature }, body });
  const answer = (await response.json()) as any;
  const check = verifyCreatorResponse(answer, { ...request, signing_key: parseAddress(key.signing_key)! });
  return { status: response.status, answer, check };
}

describe("the starter host", () => {
  const dir = mkdtempSync(join(tmpdir(), "starter-host-"));
  const keysFile = join(dir, "keys.json");
  let host: RunningStarterHost;
  before(async () => {
    host = await startStarterHost({ marketplaceKey, keysFile, adminToken: TOKEN, maxAgentsPerCreator: 2 });
  });
  after(() => host.close());

  it("gives keys only for the host's token: 401 otherwise", async () => {
    const refused = await keys(host, { agent: address(), creator: address() }, "other");
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, "unauthorized");
  });

  it("refuses a body without two addresses: 400 invalid_request", async () => {
    for (const body of [{}, { agent: "x", creator: address() }, { agent: address() }, null]) {
      const answer = await keys(host, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, "invalid_request");
    }
  });

  it("answers each agent under its own endpoint with its own key, a unit a word when metered", async () => {
    const creator = address();
    const one = (await keys(host, { agent: address(), creator })).body as StarterKey;
    const two = (await keys(host, { agent: address(), creator })).body as StarterKey;
    assert.notEqual(one.signing_key, two.signing_key);
    const fixed = await execute(one, { text: "three little words" });
    assert.equal(fixed.status, 200, JSON.stringify(fixed.answer));
    assert.ok(fixed.check.ok);
    assert.deepEqual(fixed.answer.output, { reply: "You said: three little words", words: 3 });
    const capped = await execute(two, { text: "one two three four five" }, "4");
    assert.ok(capped.check.ok && capped.check.units === 4n, "units stop at the call's maximum");
    const other = await execute(two, { anything: [1, 2] });
    assert.deepEqual(other.answer.output, { reply: 'You said: {"anything":[1,2]}', words: 1 }, "any input is answered");
  });

  it("refuses a call naming another agent than its endpoint's: 403 agent_not_served", async () => {
    const key = (await keys(host, { agent: address(), creator: address() })).body as StarterKey;
    const crossed = await execute(key, { text: "hi" }, undefined, address());
    assert.equal(crossed.status, 403);
    assert.equal(crossed.answer.error.code, "agent_not_served");
    const unknown = await fetch(`${host.url}/agents/${address()}/execute`, { method: "POST", body: "{}" });
    assert.equal(unknown.status, 403);
    assert.match(((await unknown.json()) as any).error.message, /^this starter host holds no signing key for agent /);
  });

  it("keeps one key per agent for its wallet, refuses it to another, and stops at the wallet's limit", async () => {
    const creator = address();
    const agent = address();
    const first = (await keys(host, { agent, creator })).body as StarterKey;
    assert.equal(((await keys(host, { agent, creator })).body as StarterKey).signing_key, first.signing_key);
    const taken = await keys(host, { agent, creator: address() });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, "agent_taken");
    assert.equal((await keys(host, { agent: address(), creator })).status, 200);
    const over = await keys(host, { agent: address(), creator });
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, "too_many_agents");
  });

  it("keeps its keys in a file of the owner's only, and serves them after a restart", async () => {
    const key = (await keys(host, { agent: address(), creator: address() })).body as StarterKey;
    assert.equal(statSync(keysFile).mode & 0o777, 0o600);
    await host.close();
    host = await startStarterHost({ marketplaceKey, keysFile, adminToken: TOKEN, maxAgentsPerCreator: 2 });
    assert.ok(host.agents().includes(key.agent));
    const again = await execute({ ...key, endpoint: `${host.url}/agents/${key.agent}` }, { text: "still here" });
    assert.ok(again.check.ok, "the same key signs after the restart");
  });
});
