// Error mapping from the IDL.
import assert from "node:assert/strict";

import {
  AGENT_MARKET_ERROR_NAMES,
  AGENT_MARKET_ERRORS,
  errorCode,
  errorFromCode,
  errorFromTransactionError,
  IDL,
} from "../src/index.js";

describe("errors", () => {
  it("lists every IDL error, codes 6000 upwards without gaps", () => {
    assert.equal(AGENT_MARKET_ERRORS.length, IDL.errors.length);
    AGENT_MARKET_ERRORS.forEach((e, i) => assert.equal(e.code, 6000 + i));
    assert.deepEqual(AGENT_MARKET_ERROR_NAMES, IDL.errors.map((e) => e.name));
  });

  it("maps codes to names and messages, and back", () => {
    assert.deepEqual(errorFromCode(6000), {
      code: 6000,
      name: "NotMarketAuthority",
      msg: "Signer is not the market authority",
    });
    assert.equal(errorFromCode(6001)?.name, "NotRelayer");
    for (const e of AGENT_MARKET_ERRORS) {
      assert.equal(errorCode(e.name), e.code);
      assert.deepEqual(errorFromCode(e.code), e);
    }
    assert.equal(errorCode("DigestMismatch"), IDL.errors.find((e) => e.name === "DigestMismatch")!.code);
    assert.equal(errorFromCode(5999), null);
    assert.equal(errorFromCode(6000 + IDL.errors.length), null);
    assert.equal(errorFromCode(3012), null); // an Anchor framework error, not the program's
  });

  it("reads the program error out of a transaction error", () => {
    const code = errorCode("InsufficientAllowance");
    assert.deepEqual(errorFromTransactionError({ InstructionError: [1, { Custom: code }] }), {
      ...errorFromCode(code)!,
      instructionIndex: 1,
    });
    assert.equal(errorFromTransactionError({ InstructionError: [0, { Custom: 1 }] }), null);
    assert.equal(errorFromTransactionError({ InstructionError: [0, "InvalidAccountData"] }), null);
    assert.equal(errorFromTransactionError("BlockhashNotFound"), null);
    assert.equal(errorFromTransactionError(null), null);
  });
});
