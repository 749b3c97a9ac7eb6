// The generated IDL module, the program id and the constants, against the IDL JSON.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

import {
  BPS_DENOMINATOR,
  EVENT_AUTHORITY_SEED,
  FEE_BPS,
  FEE_SHARD_COUNT,
  IDL,
  MARKET_SEED,
  MAX_ENDPOINT_LEN,
  MAX_EXECUTION_SECS,
  PROGRAM_ID,
  RESULT_DIGEST_DOMAIN,
  splitPayment,
  SUBSCRIPTION_SEED,
} from "../src/index.js";

const jsonUrl = new URL("../../../programs/agent_market/idl/agent_market.json", import.meta.url);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("IDL", () => {
  it("src/idl/agent_market.ts holds exactly programs/agent_market/idl/agent_market.json", () => {
    assert.deepEqual(IDL, JSON.parse(readFileSync(jsonUrl, "utf8")));
    // and is what scripts/gen-idl.mjs writes today
    execFileSync(process.execPath, [new URL("../scripts/gen-idl.mjs", import.meta.url).pathname, "--check"]);
  });

  it("takes the program id from the IDL's address, which is the program's declare_id!", () => {
    assert.equal(PROGRAM_ID.toBase58(), IDL.address);
    const lib = readFileSync(new URL("../../../programs/agent_market/src/lib.rs", import.meta.url), "utf8");
    assert.match(lib, new RegExp(`declare_id!\\("${IDL.address}"\\)`));
  });

  it("reads the constants from the IDL", () => {
    assert.equal(FEE_BPS, 100n);
    assert.equal(BPS_DENOMINATOR, 10_000n);
    assert.equal(FEE_SHARD_COUNT, 8);
    assert.equal(MAX_ENDPOINT_LEN, 200);
    assert.equal(MAX_EXECUTION_SECS, 900);
    assert.equal(text(RESULT_DIGEST_DOMAIN), "agentmarket/result/v2");
    assert.equal(text(MARKET_SEED), "market");
    assert.equal(text(SUBSCRIPTION_SEED), "subscription");
    assert.equal(text(EVENT_AUTHORITY_SEED), "__event_authority");
  });

  it("splits payments as the program does: fee = floor(amount / 100), creator the rest", () => {
    const cases: [bigint, bigint][] = [
      [0n, 0n],
      [1n, 0n],
      [99n, 0n],
      [100n, 1n],
      [101n, 1n],
      [199n, 1n],
      [200n, 2n],
      [1_000_000n, 10_000n],
      [(1n << 64n) - 1n, ((1n << 64n) - 1n) / 100n],
    ];
    for (const [amountUsdc, feeUsdc] of cases) {
      assert.deepEqual(splitPayment(amountUsdc), { creatorShareUsdc: amountUsdc - feeUsdc, feeUsdc });
    }
    assert.throws(() => splitPayment(1n << 64n), RangeError);
    assert.throws(() => splitPayment(-1n), RangeError);
  });
});
