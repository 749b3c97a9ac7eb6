// What a conformance probe sends, shared by the relayer's listing probe and the CLI's `check`, so
// a creator's local check sends exactly what listing will.

/** The task of a conformance probe. */
export const PROBE_TASK = "Agent Market conformance probe: answer as you would a paid call.";
/**
 * The `amount_usdc` a probe's request names: no escrow backs a probe, and nothing can settle
 * its signature, so it says it pays nothing.
 */
export const PROBE_AMOUNT_USDC = "0.000000";

/** `<endpoint>/execute`, keeping any path the endpoint has. */
export function executeUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/execute`;
  return url;
}

type Schema = Record<string, unknown>;

/**
 * A candidate value for a JSON Schema: examples, defaults, consts and enums first, else the
 * smallest value of the declared type; undefined when nothing simple fits. The caller validates
 * it against the schema (a pattern or a format can still refuse it).
 */
export function sampleFromSchema(schema: object): unknown {
  return sample(schema as Schema, 0);
}

function sample(schema: Schema, depth: number): unknown {
  if (depth > 8 || typeof schema !== "object" || schema === null) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ("default" in schema) return schema.default;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return sample(options[0] as Schema, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const out: Record<string, unknown> = {};
      for (const name of required) {
        const value = sample(properties[name] ?? {}, depth + 1);
        if (value === undefined) return undefined;
        out[name] = value;
      }
      return out;
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 0;
      const item = sample((schema.items ?? {}) as Schema, depth + 1);
      if (count > 0 && item === undefined) return undefined;
      return Array.from({ length: count }, () => item);
    }
    case "string": {
      const min = typeof schema.minLength === "number" ? schema.minLength : 0;
      const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
      const length = Math.min(Math.max(min, 5), max);
      return "probe".repeat(Math.ceil(length / 5)).slice(0, length);
    }
    case "integer":
    case "number": {
      if (typeof schema.minimum === "number") return type === "integer" ? Math.ceil(schema.minimum) : schema.minimum;
      if (typeof schema.exclusiveMinimum === "number") return Math.floor(schema.exclusiveMinimum) + 1;
      if (typeof schema.maximum === "number" && schema.maximum < 0) {
        return type === "integer" ? Math.floor(schema.maximum) : schema.maximum;
      }
      return 0;
    }
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return type === undefined ? {} : undefined;
  }
}
