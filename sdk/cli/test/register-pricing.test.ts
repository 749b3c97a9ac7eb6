// The terms register takes from its options: a fixed price per call, or a metered agent's price
// per unit, unit and most units per call, as the program and the listing hold them.
import { strict as assert } from "node:assert";

import { UsageError } from "../src/io.js";
import { registerPricing } from "../src/register-pricing.js";

const refused = (values: Record<string, string>, message: RegExp) =>
  assert.throws(() => registerPricing(values, "usage"), (error: unknown) => error instanceof UsageError && message.test(error.message));

describe("register's pricing options", () => {
  it("--price: pay per use on chain and in the listing", () => {
    assert.deepEqual(registerPricing({ price: "0.25" }, "usage"), {
      chain: { kind: "PayPerUse", priceUsdc: 250_000n },
      listing: { model: "pay_per_use", price_usdc: "0.250000" },
      mostPerCallUsdc: 250_000n,
    });
  });

  it("--price-per-unit, --unit, --max-units-per-call: metered, the unit's name the listing's alone", () => {
    assert.deepEqual(registerPricing({ "price-per-unit": "0.001", unit: "100 words", "max-units-per-call": "100" }, "usage"), {
      chain: { kind: "Metered", pricePerUnitUsdc: 1_000n, maxUnitsPerCall: 100n },
      listing: { model: "metered", price_per_unit_usdc: "0.001000", unit: "100 words", max_units_per_call: "100" },
      mostPerCallUsdc: 100_000n,
    });
  });

  it("refuses neither, both, part of the metered terms, and terms the program or the relayer would refuse", () => {
    refused({}, /--price is required \(or, for a metered agent/);
    refused({ price: "0.25", unit: "pages" }, /--price is a fixed price per call: leave out the metered options/);
    refused({ "price-per-unit": "0.001", unit: "pages" }, /--price-per-unit, --unit and --max-units-per-call together/);
    refused({ "price-per-unit": "0", unit: "pages", "max-units-per-call": "10" }, /--price-per-unit must be more than 0/);
    refused({ "price-per-unit": "0.001", unit: " pages", "max-units-per-call": "10" }, /--unit must be 1 to 24 characters/);
    refused({ "price-per-unit": "0.001", unit: "u".repeat(25), "max-units-per-call": "10" }, /--unit must be 1 to 24 characters/);
    refused({ "price-per-unit": "0.001", unit: "pages", "max-units-per-call": "0" }, /--max-units-per-call must be a whole number from 1/);
    refused({ "price-per-unit": "1", unit: "pages", "max-units-per-call": "18446744073709551615" }, /more USDC than a u64 holds/);
  });
});
