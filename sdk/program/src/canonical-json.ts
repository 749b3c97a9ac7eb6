// RFC 8785 JSON Canonicalization Scheme (JCS).
//
// - Objects: members sorted by their names as arrays of UTF-16 code units (which is what
//   comparing JavaScript strings with < does), no whitespace.
// - Numbers: ECMAScript's Number-to-String (the shortest round-tripping form, exponent from
//   1e21 up and below 1e-6, -0 written 0); NaN and ±Infinity are errors.
// - Strings: `"` and `\` escaped, U+0008/09/0A/0C/0D as \b \t \n \f \r, the other controls
//   below U+0020 as \u00xx in lowercase hex, everything else as is (UTF-8 once encoded); a lone
//   surrogate is an error (I-JSON, RFC 7493, requires well-formed Unicode).
//
// Input is JSON data as JavaScript values: null, booleans, finite numbers, strings, arrays and
// plain objects. Anything else (undefined, functions, bigint, symbols, Dates, Maps, class
// instances, sparse arrays) is refused rather than silently dropped or coerced, since a hash over
// it would not be reproducible from the JSON text.

/** Thrown for input that has no RFC 8785 canonical form. */
export class CanonicalJsonError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "CanonicalJsonError";
  }
}

const SHORT_ESCAPES: Record<number, string> = {
  0x08: "\\b",
  0x09: "\\t",
  0x0a: "\\n",
  0x0c: "\\f",
  0x0d: "\\r",
  0x22: '\\"',
  0x5c: "\\\\",
};

function serializeString(value: string, path: string): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) {
        throw new CanonicalJsonError(`${path}: lone surrogate U+${unit.toString(16).toUpperCase()}`);
      }
      i++;
      continue;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw new CanonicalJsonError(`${path}: lone surrogate U+${unit.toString(16).toUpperCase()}`);
    }
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c) {
      out += value.slice(runStart, i);
      out += SHORT_ESCAPES[unit] ?? `\\u${unit.toString(16).padStart(4, "0")}`;
      runStart = i + 1;
    }
  }
  return out + value.slice(runStart) + '"';
}

function serializeNumber(value: number, path: string): string {
  if (!Number.isFinite(value)) throw new CanonicalJsonError(`${path}: ${value} is not a JSON number`);
  // ECMAScript Number::toString, which RFC 8785 §3.2.2.3 adopts; it writes -0 as "0".
  return String(value);
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function serialize(value: unknown, path: string, ancestors: Set<object>): string {
  switch (typeof value) {
    case "string":
      return serializeString(value, path);
    case "number":
      return serializeNumber(value, path);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      throw new CanonicalJsonError(`${path}: ${typeof value} is not JSON`);
  }
  if (value === null) return "null";
  if (ancestors.has(value)) throw new CanonicalJsonError(`${path}: circular reference`);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items: string[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw new CanonicalJsonError(`${path}[${i}]: hole in a sparse array`);
        items.push(serialize(value[i], `${path}[${i}]`, ancestors));
      }
      return `[${items.join(",")}]`;
    }
    if (!isPlainObject(value)) {
      throw new CanonicalJsonError(`${path}: ${value.constructor?.name ?? "object"} is not a plain JSON object`);
    }
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new CanonicalJsonError(`${path}: symbol keys are not JSON`);
    }
    // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
    const keys = Object.keys(value).sort();
    const members = keys.map((key) => {
      const memberPath = `${path}.${key}`;
      return `${serializeString(key, memberPath)}:${serialize((value as Record<string, unknown>)[key], memberPath, ancestors)}`;
    });
    return `{${members.join(",")}}`;
  } finally {
    ancestors.delete(value);
  }
}

/** The RFC 8785 canonical JSON text of `value`. */
export function canonicalJson(value: unknown): string {
  return serialize(value, "$", new Set());
}
