// Agents' input and output schemas: JSON Schema 2020-12, checked against the meta-schema and
// compiled once (Ajv), size-limited, never resolved over the network. Creators write them, so
// validating a caller's parameters must stay cheap whatever they wrote: patterns run on a
// linear-time engine (linear-regexp.ts), and keywords whose cost is not linear need a bound
// (schema-bounds.ts).
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

import { LruMap, sampleFromSchema } from "@agent-market/program";

import { ApiError } from "../errors.js";
import { linearRegExp } from "./linear-regexp.js";
import { schemaBoundsProblem } from "./schema-bounds.js";

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** Compiled validators kept, least recently used dropped first. */
export const COMPILED_SCHEMA_LIMIT = 1_000;

const options = { allErrors: false, strict: false, addUsedSchema: false, code: { regExp: linearRegExp } } as const;
// Checks schemas against the meta-schema only; it never compiles a creator's schema, so it keeps
// nothing of them.
const metaAjv = addFormats(new Ajv2020(options));

// Ajv keeps every schema it compiled (and every pattern it met) for the life of its instance: one
// instance per schema, dropped with its validator, keeps the memory within the cache's bound.
function compile(schema: object): ValidateFunction {
  const ajv = addFormats(new Ajv2020({ ...options, meta: false, validateSchema: false }));
  return ajv.compile(schema);
}

// Schemas come from database rows, a new object per read: compiled validators are kept by the
// schema's text.
const compiled = new LruMap<string, ValidateFunction>(COMPILED_SCHEMA_LIMIT);
// A schema object seen before (a cached listing's) skips the serialization.
const compiledByObject = new WeakMap<object, ValidateFunction>();

export interface SchemaViolation {
  /** JSON Pointer of the offending value, "" for the root. */
  path: string;
  message: string;
}

/** Throws invalid_schema unless `schema` is a JSON Schema 2020-12 document within `limit_bytes`. */
export function checkSchema(schema: unknown, param: string, limit_bytes: number, mustDescribeObject: boolean): void {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new ApiError("invalid_schema", `${param} must be a JSON Schema object.`, param);
  }
  const size = Buffer.byteLength(JSON.stringify(schema));
  if (size > limit_bytes) {
    throw new ApiError("invalid_schema", `${param} is ${size} bytes; the limit is ${limit_bytes}.`, param);
  }
  if (mustDescribeObject && (schema as { type?: unknown }).type !== "object") {
    throw new ApiError("invalid_schema", `${param} must have "type": "object" (parameters are a JSON object).`, param);
  }
  if (!metaAjv.validateSchema(schema)) {
    const first = metaAjv.errors?.[0];
    throw new ApiError(
      "invalid_schema",
      `${param} is not valid JSON Schema 2020-12: ${first?.instancePath || "/"} ${first?.message ?? ""}`.trim(),
      param,
    );
  }
  const bounds = schemaBoundsProblem(schema);
  if (bounds !== null) throw new ApiError("invalid_schema", `${param}${bounds}`, param);
  try {
    validatorFor(schema);
  } catch (error) {
    throw new ApiError("invalid_schema", `${param} does not compile: ${(error as Error).message}`, param);
  }
}

function validatorFor(schema: object): ValidateFunction {
  const known = compiledByObject.get(schema);
  if (known) return known;
  const validate = compiled.getOrSet(JSON.stringify(schema), () => compile(schema));
  compiledByObject.set(schema, validate);
  return validate;
}

/** The first violation of `value` against `schema`, or null if it conforms. */
export function validateAgainst(schema: object, value: unknown): SchemaViolation | null {
  const validate = validatorFor(schema);
  if (validate(value)) return null;
  const error = validate.errors?.[0];
  if (!error) return { path: "", message: "does not match the schema" };
  const missing = error.keyword === "required" ? `/${String((error.params as { missingProperty: string }).missingProperty)}` : "";
  return { path: error.instancePath + missing, message: error.message ?? "does not match the schema" };
}

/**
 * A value the schema accepts, for the conformance probe (see sampleFromSchema), or null when the
 * simple candidate does not validate; the creator then supplies probe parameters.
 */
export function sampleFor(schema: object): unknown {
  const value = sampleFromSchema(schema);
  return value !== undefined && validateAgainst(schema, value) === null ? value : null;
}
