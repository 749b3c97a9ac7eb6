// What an example agent charges, as its listing states it to the relayer (`pricing` of
// POST /v1/agents); a local marketplace registers the same terms on chain.

/** A fixed price per call, or a price per unit up to a most units per call (USDC with 6 decimals). */
export type ExamplePricing =
  | { model: "pay_per_use"; price_usdc: string }
  | {
      model: "metered";
      price_per_unit_usdc: string;
      /** The unit's name, shown to callers ("100 words"). */
      unit: string;
      /** A decimal u64: the program holds, and charges, no more units than this for one call. */
      max_units_per_call: string;
    };
