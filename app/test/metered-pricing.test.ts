// A metered listing from the form: what the creator types, checked as the program and the relayer
// check it (price and most units above 0, their product a u64 at least the market's minimum, a unit
// of 1–24 characters), and turned into the chain's Pricing and the listing's wire pricing; then
// read back to edit, and shown to callers with the most a call costs.
import { strict as assert } from "node:assert";

import { priceText } from "../src/components/price.js";
import { unitsText } from "../src/components/units.js";
import { executionAmountUsdc } from "../src/data/execution-amount.js";
import { checkPricing, meteredCallMaximum, NEW_PRICING, pricingForm, type PricingForm } from "../src/data/pricing.js";

const MINIMUM = 10_000n; // 0.01 USDC
const metered = (fields: Partial<PricingForm>): PricingForm => ({ ...NEW_PRICING, model: "metered", unitPrice: "0.001", unit: "words", maxUnits: "500", ...fields });

describe("metered pricing in the listing form", () => {
  it("builds the chain's Metered pricing and the listing's, which agree", () => {
    assert.deepEqual(checkPricing(metered({ unit: " words " }), MINIMUM), {
      chain: { kind: "Metered", pricePerUnitUsdc: 1_000n, maxUnitsPerCall: 500n },
      wire: { model: "metered", price_per_unit_usdc: "0.001000", unit: "words", max_units_per_call: "500" },
    });
  });

  it("says what is wrong with empty, zero and non-integer fields", () => {
    assert.deepEqual(checkPricing(metered({ unitPrice: "", unit: "", maxUnits: "" }), MINIMUM), [
      "Price per unit: an amount in USDC above 0, e.g. 0.001.",
      "Unit: what one unit is, 1 to 24 characters, e.g. words.",
      "Most units per call: a whole number above 0, e.g. 500.",
    ]);
    assert.deepEqual(checkPricing(metered({ unitPrice: "0", maxUnits: "0" }), MINIMUM), [
      "Price per unit: an amount in USDC above 0, e.g. 0.001.",
      "Most units per call: a whole number above 0, e.g. 500.",
    ]);
    for (const maxUnits of ["1.5", "1e3", "-2", "18446744073709551616"]) {
      assert.deepEqual(checkPricing(metered({ maxUnits }), MINIMUM), ["Most units per call: a whole number above 0, e.g. 500."], maxUnits);
    }
    assert.deepEqual(checkPricing(metered({ unitPrice: "0.0000001" }), MINIMUM), ["Price per unit: an amount in USDC above 0, e.g. 0.001."]);
    assert.deepEqual(checkPricing(metered({ unit: "x".repeat(25) }), MINIMUM), ["Unit: what one unit is, 1 to 24 characters, e.g. words."]);
  });

  it("requires the most a call costs to meet the market's minimum and to be a u64 amount, as the program does", () => {
    assert.deepEqual(checkPricing(metered({ maxUnits: "5" }), MINIMUM), [
      "Most units per call: the most a call costs (price per unit × most units), 0.005 USDC, must be at least the market's minimum, 0.01 USDC.",
    ]);
    assert.ok(!Array.isArray(checkPricing(metered({ maxUnits: "10" }), MINIMUM)), "exactly the minimum is accepted");
    assert.deepEqual(checkPricing(metered({ unitPrice: "1", maxUnits: "18446744073709551615" }), MINIMUM), [
      "Most units per call: price per unit × most units is more USDC than a call can hold.",
    ]);
  });

  it("shows the most a call costs once price and most units are typed", () => {
    assert.equal(meteredCallMaximum(metered({})), 500_000n);
    assert.equal(meteredCallMaximum(metered({ maxUnits: "" })), null);
    assert.equal(meteredCallMaximum(metered({ unitPrice: "abc" })), null);
  });

  it("reads a listed metered pricing back into the form as a person types it", () => {
    const wire = { model: "metered", price_per_unit_usdc: "0.001000", unit: "100 words", max_units_per_call: "100" } as const;
    const form = pricingForm(wire);
    assert.deepEqual([form.model, form.unitPrice, form.unit, form.maxUnits], ["metered", "0.001", "100 words", "100"]);
    const checked = checkPricing(form, MINIMUM);
    assert.ok(!Array.isArray(checked));
    assert.deepEqual(checked.wire, wire);
  });

  it("prices a metered listing by its unit and the most a call costs", () => {
    assert.equal(
      priceText({ model: "metered", price_per_unit_usdc: "0.001000", unit: "words", max_units_per_call: "500" }),
      "0.001 USDC per words, up to 0.50 USDC a call",
    );
    assert.equal(priceText({ model: "metered", price_per_unit_usdc: "0.001000", unit: "100 words", max_units_per_call: "100" }), "0.001 USDC per 100 words, up to 0.10 USDC a call");
  });
});

describe("a metered call's units on its receipt", () => {
  it("names the units by the listing's unit, a counted unit with ×, and plain units when the listing is not known", () => {
    assert.equal(unitsText("7", "words"), "7 words");
    assert.equal(unitsText("7", "100 words"), "7 × 100 words");
    assert.deepEqual([unitsText("1", null), unitsText("7", null)], ["1 unit", "7 units"]);
  });
});

describe("an execution's amount in the lists", () => {
  it("is what a settled call was charged, and what any other holds or held", () => {
    const held = { usdc: "0.500000" };
    const charged = { usdc: "0.007000" };
    assert.equal(executionAmountUsdc({ state: "SETTLED", amount: held, charged }), "0.007000");
    assert.equal(executionAmountUsdc({ state: "OPEN", amount: held, charged: null }), "0.500000");
    // A refunded call was charged nothing: the list shows what it held, as for a fixed price.
    assert.equal(executionAmountUsdc({ state: "REFUNDED", amount: held, charged: { usdc: "0.000000" } }), "0.500000");
  });
});
