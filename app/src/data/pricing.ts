// A listing's price as the creator types it, checked against the market's minimum as the program
// checks it (require_min_price), and turned into both forms that must agree: the Pricing the
// wallet signs into register_agent or update_agent, and the listing's pricing on the wire.
import { formatUsdc, parseUsdc, type Pricing as WirePricing } from "@agent-market/client";
import type { Pricing as ChainPricing } from "@agent-market/program";

import { trimUsdc, usdcText } from "../components/money.js";

export type PricingModel = WirePricing["model"];

export interface PricingForm {
  model: PricingModel;
  /** Pay-per-use: USDC per call. */
  price: string;
  /** Subscription and hybrid: USDC per period, the period in days. */
  periodPrice: string;
  periodDays: string;
  /** Hybrid: calls the period covers, then USDC per call beyond them. */
  includedCalls: string;
  overagePrice: string;
  /** Metered: USDC per unit, the unit's name ("words", "100 words") and the most units one call is charged for. */
  unitPrice: string;
  unit: string;
  maxUnits: string;
}

export const NEW_PRICING: PricingForm = {
  model: "pay_per_use",
  price: "",
  periodPrice: "",
  periodDays: "30",
  includedCalls: "",
  overagePrice: "",
  unitPrice: "",
  unit: "",
  maxUnits: "",
};

const SECS_PER_DAY = 86_400;
/**
 * The program's MAX_SUBSCRIPTION_PERIOD_SECS in days: register_agent and update_agent refuse a
 * longer period (SubscriptionPeriodTooLong), which would lock a retired agent's collateral as long.
 */
export const MAX_PERIOD_DAYS = 366;
const MAX_U32 = 4_294_967_295;
const MAX_U64 = (1n << 64n) - 1n;
/** The relayer's limit on a unit's name, which callers see beside every price. */
export const MAX_UNIT_CHARS = 24;

export interface CheckedPricing {
  chain: ChainPricing;
  wire: WirePricing;
}

/** A USDC amount above 0 as a person types it ("0.25"), in base units; null if it is not one. */
function positiveUsdc(text: string): bigint | null {
  try {
    const value = parseUsdc(text.trim());
    return value > 0n ? value : null;
  } catch {
    return null;
  }
}

function amount(text: string, label: string, example: string, found: string[]): bigint | null {
  const value = positiveUsdc(text);
  if (value === null) found.push(`${label}: an amount in USDC above 0, e.g. ${example}.`);
  return value;
}

function wholeNumber(text: string, label: string, max: number, found: string[]): number | null {
  const value = Number(text.trim());
  if (/^[0-9]+$/.test(text.trim()) && value >= 1 && value <= max) return value;
  found.push(`${label}: a whole number from 1 to ${max.toLocaleString("en")}.`);
  return null;
}

/** A u64 count above 0 typed in digits only ("1.5", "1e3" and "-2" are not counts); null if it is not one. */
function positiveU64(text: string): bigint | null {
  const trimmed = text.trim();
  if (!/^[0-9]+$/.test(trimmed)) return null;
  const value = BigInt(trimmed);
  return value >= 1n && value <= MAX_U64 ? value : null;
}

/**
 * The most one metered call costs (price per unit × most units), what its escrow holds and the
 * caller is asked to accept; null until both are typed as the form will accept them.
 */
export function meteredCallMaximum(form: PricingForm): bigint | null {
  const price = positiveUsdc(form.unitPrice);
  const max = positiveU64(form.maxUnits);
  return price === null || max === null ? null : price * max;
}

function checkMetered(form: PricingForm, minimumUsdc: bigint): CheckedPricing | string[] {
  const found: string[] = [];
  const price = amount(form.unitPrice, "Price per unit", "0.001", found);
  const unit = form.unit.trim();
  if (unit === "" || [...unit].length > MAX_UNIT_CHARS) found.push(`Unit: what one unit is, 1 to ${MAX_UNIT_CHARS} characters, e.g. words.`);
  const max = positiveU64(form.maxUnits);
  if (max === null) found.push("Most units per call: a whole number above 0, e.g. 500.");
  if (price !== null && max !== null) {
    // The program holds the most a call costs in escrow (a u64 amount) and requires it to meet the
    // market's minimum price per call (require_min_price); a call of fewer units is charged less.
    const most = price * max;
    if (most > MAX_U64) found.push("Most units per call: price per unit × most units is more USDC than a call can hold.");
    else if (most < minimumUsdc) {
      found.push(`Most units per call: the most a call costs (price per unit × most units), ${usdcText(formatUsdc(most))}, must be at least the market's minimum, ${usdcText(formatUsdc(minimumUsdc))}.`);
    }
  }
  if (found.length > 0 || price === null || max === null) return found;
  return {
    chain: { kind: "Metered", pricePerUnitUsdc: price, maxUnitsPerCall: max },
    wire: { model: "metered", price_per_unit_usdc: formatUsdc(price), unit, max_units_per_call: max.toString() },
  };
}

/** The pricing, or what is wrong with it; `minimumUsdc` is the market's minimum price per call. */
export function checkPricing(form: PricingForm, minimumUsdc: bigint): CheckedPricing | string[] {
  const found: string[] = [];
  const minimum = usdcText(formatUsdc(minimumUsdc));
  if (form.model === "pay_per_use") {
    const price = amount(form.price, "Price per call", "0.25", found);
    if (price !== null && price < minimumUsdc) found.push(`Price per call: at least the market's minimum, ${minimum}.`);
    if (found.length > 0 || price === null) return found;
    return { chain: { kind: "PayPerUse", priceUsdc: price }, wire: { model: "pay_per_use", price_usdc: formatUsdc(price) } };
  }
  if (form.model === "metered") return checkMetered(form, minimumUsdc);
  const periodPrice = amount(form.periodPrice, "Price per period", "20", found);
  const days = wholeNumber(form.periodDays, "Period, days", MAX_PERIOD_DAYS, found);
  if (form.model === "subscription") {
    // An unlimited period has no call count to divide by: it must cover at least one call.
    if (periodPrice !== null && periodPrice < minimumUsdc) found.push(`Price per period: at least the market's minimum price of one call, ${minimum}.`);
    if (found.length > 0 || periodPrice === null || days === null) return found;
    const periodSecs = days * SECS_PER_DAY;
    return {
      chain: { kind: "Subscription", periodPriceUsdc: periodPrice, periodSecs },
      wire: { model: "subscription", period_price_usdc: formatUsdc(periodPrice), period_secs: periodSecs },
    };
  }
  const included = wholeNumber(form.includedCalls, "Calls included", MAX_U32, found);
  const overage = amount(form.overagePrice, "Price per call beyond them", "0.30", found);
  // Each included call must pay the minimum through its share of the period price.
  if (periodPrice !== null && included !== null && periodPrice < minimumUsdc * BigInt(included)) {
    found.push(`Price per period: at least ${usdcText(formatUsdc(minimumUsdc * BigInt(included)))}, the market's minimum (${minimum}) for each of the ${included.toLocaleString("en")} calls included.`);
  }
  if (overage !== null && overage < minimumUsdc) found.push(`Price per call beyond them: at least the market's minimum, ${minimum}.`);
  if (found.length > 0 || periodPrice === null || days === null || included === null || overage === null) return found;
  const periodSecs = days * SECS_PER_DAY;
  return {
    chain: { kind: "Hybrid", periodPriceUsdc: periodPrice, periodSecs, includedCalls: included, overagePriceUsdc: overage },
    wire: {
      model: "hybrid",
      period_price_usdc: formatUsdc(periodPrice),
      period_secs: periodSecs,
      included_calls: included,
      overage_price_usdc: formatUsdc(overage),
    },
  };
}

/** A listing's current pricing in the form's terms, to edit it (amounts as a person types them: "0.25"). */
export function pricingForm(pricing: WirePricing): PricingForm {
  switch (pricing.model) {
    case "pay_per_use":
      return { ...NEW_PRICING, price: trimUsdc(pricing.price_usdc) };
    case "subscription":
      return { ...NEW_PRICING, model: "subscription", periodPrice: trimUsdc(pricing.period_price_usdc), periodDays: String(pricing.period_secs / SECS_PER_DAY) };
    case "hybrid":
      return {
        ...NEW_PRICING,
        model: "hybrid",
        periodPrice: trimUsdc(pricing.period_price_usdc),
        periodDays: String(pricing.period_secs / SECS_PER_DAY),
        includedCalls: String(pricing.included_calls),
        overagePrice: trimUsdc(pricing.overage_price_usdc),
      };
    case "metered":
      return {
        ...NEW_PRICING,
        model: "metered",
        unitPrice: trimUsdc(pricing.price_per_unit_usdc),
        unit: pricing.unit,
        maxUnits: pricing.max_units_per_call,
      };
  }
}
