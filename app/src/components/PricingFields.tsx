import { formatUsdc } from "@agent-market/client";

import { MAX_PERIOD_DAYS, MAX_UNIT_CHARS, meteredCallMaximum, type PricingForm, type PricingModel } from "../data/pricing.js";
import { trimUsdc, usdcText } from "./money.js";

const MODELS: [PricingModel, string, string][] = [
  ["pay_per_use", "Pay per use", "Each call pays its price"],
  ["subscription", "Subscription", "A period's price covers every call in it"],
  ["hybrid", "Hybrid", "A period's price covers some calls, the rest pay per call"],
  ["metered", "Metered", "Each call pays for the units it used, up to a most per call"],
];

/** The pricing models the program knows, and the fields of the one chosen. */
export function PricingFields({
  value,
  onChange,
  minimumUsdc,
  name,
}: {
  value: PricingForm;
  onChange(next: PricingForm): void;
  /** The market's minimum price per call. */
  minimumUsdc: bigint;
  /** Distinguishes this form's radio group from another on the same page. */
  name: string;
}) {
  const field = (key: Exclude<keyof PricingForm, "model">) => ({ value: value[key], onChange: (e: { target: { value: string } }) => onChange({ ...value, [key]: e.target.value }) });
  const minimum = formatUsdc(minimumUsdc);
  return (
    <fieldset data-testid="pricing">
      <legend>Pricing</legend>
      <div className="segmented">
        {MODELS.map(([model, label, hint]) => (
          <label key={model} title={hint}>
            <input type="radio" name={`${name}-pricing`} value={model} checked={value.model === model} onChange={() => onChange({ ...value, model })} />
            {label}
          </label>
        ))}
      </div>
      <p className="small muted">{MODELS.find(([model]) => model === value.model)![2]}; the market's minimum is {trimUsdc(minimum)} USDC a call.</p>
      {value.model === "pay_per_use" ? (
        <label>
          Price per call, USDC
          <input inputMode="decimal" placeholder={`at least ${trimUsdc(minimum)}`} {...field("price")} />
        </label>
      ) : value.model === "metered" ? (
        <MeteredFields value={value} field={field} />
      ) : (
        <>
          <div className="field-pair">
            <label>
              Price per period, USDC
              <input inputMode="decimal" {...field("periodPrice")} />
            </label>
            <label>
              Period, days (up to {MAX_PERIOD_DAYS})
              <input inputMode="numeric" {...field("periodDays")} />
            </label>
          </div>
          {value.model === "hybrid" && (
            <div className="field-pair">
              <label>
                Calls included per period
                <input inputMode="numeric" {...field("includedCalls")} />
              </label>
              <label>
                Price per call beyond them, USDC
                <input inputMode="decimal" placeholder={`at least ${trimUsdc(minimum)}`} {...field("overagePrice")} />
              </label>
            </div>
          )}
        </>
      )}
    </fieldset>
  );
}

/**
 * A metered price: the escrow holds the most a call may cost, which callers accept before their
 * call, so the form shows it as it is typed.
 */
function MeteredFields({ value, field }: { value: PricingForm; field(key: "unitPrice" | "unit" | "maxUnits"): { value: string; onChange(e: { target: { value: string } }): void } }) {
  const most = meteredCallMaximum(value);
  return (
    <>
      <div className="field-pair">
        <label>
          Price per unit, USDC
          <input inputMode="decimal" placeholder="e.g. 0.001" {...field("unitPrice")} />
        </label>
        <label>
          Unit (what callers are charged by)
          <input maxLength={MAX_UNIT_CHARS} placeholder="e.g. words" {...field("unit")} />
        </label>
      </div>
      <label>
        Most units per call
        <input inputMode="numeric" placeholder="e.g. 500" {...field("maxUnits")} />
      </label>
      <p className="small" data-testid="metered-maximum">
        {most === null ? "A call costs up to price per unit × most units; it is charged only the units it used." : `Up to ${usdcText(formatUsdc(most))} a call; each is charged only the units it used.`}
      </p>
    </>
  );
}
