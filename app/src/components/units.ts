/**
 * A metered call's units as people read them, with the listing's unit name when known: "7 words",
 * and "7 × 100 words" for a unit that is itself a count (a creator may price per "100 words").
 */
export function unitsText(units: string, unit: string | null): string {
  if (unit === null) return `${units} ${units === "1" ? "unit" : "units"}`;
  return /^[0-9]/.test(unit) ? `${units} × ${unit}` : `${units} ${unit}`;
}
