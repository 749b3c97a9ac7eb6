// JSON Schema 2020-12 for the conformance check: compiling the listing's schemas, validating
// with them, and building probe parameters the way the relayer's probe does
// (relayer/src/listings/json-schema.ts), so `check` sends what listing will send.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// addUsedSchema: false lets two schemas share an $id, as listings may.
const ajv = new Ajv2020({ allErrors: false, strict: false, addUsedSchema: false });
addFormats.default(ajv);

export type Validator = (value: unknown) => string | null;

/** A validator returning the first violation as "<JSON Pointer> <message>", or null; throws if the schema is invalid. */
export function compile(schema: unknown): Validator {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw new TypeError("not a JSON Schema object");
  if (!ajv.validateSchema(schema)) {
    const first = ajv.errors?.[0];
    throw new TypeError(`not valid JSON Schema 2020-12: ${first?.instancePath || "/"} ${first?.message ?? ""}`.trim());
  }
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (validate(value)) return null;
    const error = validate.errors?.[0];
    return error ? `${error.instancePath || "/"} ${error.message ?? "does not match"}` : "/ does not match";
  };
}

type Schema = Record<string, unknown>;

/**
 * A value the schema accepts: examples, defaults, consts and enums first, else the smallest
 * value of the declared type; null when nothing simple fits (a pattern, a format).
 */
export function sampleFor(schema: Schema, validate: Validator): unknown {
  const value = sample(schema, 0);
  return value !== undefined && validate(value) === null ? value : null;
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
      if (typeof schema.maximum === "number" && schema.maximum < 0) return type === "integer" ? Math.floor(schema.maximum) : schema.maximum;
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
