// JSON Schema 2020-12 for the conformance check: compiling the listing's schemas, validating
// with them, and building probe parameters with the relayer's own sampler, so `check` sends what
// listing will send.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { sampleFromSchema } from "@agent-market/program";

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

/** A value the schema accepts (see sampleFromSchema), or null when nothing simple fits. */
export function sampleFor(schema: object, validate: Validator): unknown {
  const value = sampleFromSchema(schema);
  return value !== undefined && validate(value) === null ? value : null;
}
