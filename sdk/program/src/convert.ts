// Conversion between anchor's Borsh values (snake_case keys as in the IDL, BN for 64-bit
// integers, number[] for byte arrays, { Variant: {...} } for enums) and this package's values
// (see types.ts), driven by the IDL's type definitions.
import BN from "bn.js";
import { PublicKey } from "@solana/web3.js";

import { IDL } from "./program.js";

/** An IDL type, as the JSON writes it. */
export type IdlTypeJson =
  | string
  | { array: [IdlTypeJson, number] }
  | { vec: IdlTypeJson }
  | { option: IdlTypeJson }
  | { defined: { name: string } };

type FieldJson = { name: string; type: IdlTypeJson };
type TypeDefJson =
  | { kind: "struct"; fields: FieldJson[] }
  | { kind: "enum"; variants: { name: string; fields?: FieldJson[] }[] };

const typeDefs = new Map<string, TypeDefJson>(
  (IDL.types as unknown as { name: string; type: TypeDefJson }[]).map((t) => [t.name, t.type]),
);

/** `snake_case` → `camelCase` (the runtime twin of the CamelCase type). */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

// The IDL's names are a closed set, converted again for every instruction built and every
// account decoded: remembered, for this package's own use (camelCase itself takes any string).
const idlCamelNames = new Map<string, string>();

export function idlCamelCase(name: string): string {
  let camel = idlCamelNames.get(name);
  if (camel === undefined) {
    camel = camelCase(name);
    idlCamelNames.set(name, camel);
  }
  return camel;
}

function typeDef(name: string): TypeDefJson {
  const def = typeDefs.get(name);
  if (!def) throw new Error(`IDL has no type ${name}`);
  return def;
}

/** Whether every variant of the enum carries no data (then its values are plain names). */
function isUnitEnum(def: TypeDefJson): boolean {
  return def.kind === "enum" && def.variants.every((v) => !v.fields || v.fields.length === 0);
}

const INTEGER_BITS: Record<string, { bits: bigint; signed: boolean }> = {
  u8: { bits: 8n, signed: false },
  i8: { bits: 8n, signed: true },
  u16: { bits: 16n, signed: false },
  i16: { bits: 16n, signed: true },
  u32: { bits: 32n, signed: false },
  i32: { bits: 32n, signed: true },
  u64: { bits: 64n, signed: false },
  i64: { bits: 64n, signed: true },
  u128: { bits: 128n, signed: false },
  i128: { bits: 128n, signed: true },
};

function checkRange(path: string, type: string, value: bigint): void {
  const { bits, signed } = INTEGER_BITS[type]!;
  const min = signed ? -(1n << (bits - 1n)) : 0n;
  const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  if (value < min || value > max) throw new RangeError(`${path}: ${value} is out of range for ${type}`);
}

/** Converts a value decoded by anchor's coder into this package's shape. */
export function fromAnchor(type: IdlTypeJson, value: unknown, path = "value"): unknown {
  if (typeof type === "string") {
    switch (type) {
      case "u64":
      case "i64":
      case "u128":
      case "i128":
        return BigInt((value as BN).toString());
      case "u8":
      case "i8":
      case "u16":
      case "i16":
      case "u32":
      case "i32":
      case "bool":
      case "string":
        return value;
      case "pubkey":
        return new PublicKey(value as PublicKey);
      default:
        throw new Error(`${path}: unsupported IDL type ${type}`);
    }
  }
  if ("array" in type || "vec" in type) {
    const inner = "array" in type ? type.array[0] : type.vec;
    const items = value as ArrayLike<unknown>;
    if (inner === "u8") return Uint8Array.from(items as ArrayLike<number>);
    return Array.from(items, (item, i) => fromAnchor(inner, item, `${path}[${i}]`));
  }
  if ("option" in type) return value === null || value === undefined ? null : fromAnchor(type.option, value, path);
  const def = typeDef(type.defined.name);
  if (def.kind === "struct") return structFromAnchor(def.fields, value as Record<string, unknown>, path);
  const [variantName] = Object.keys(value as object);
  const variant = def.variants.find((v) => v.name === variantName);
  if (!variant) throw new Error(`${path}: ${String(variantName)} is not a variant of ${type.defined.name}`);
  if (isUnitEnum(def)) return variant.name;
  const fields = (value as Record<string, Record<string, unknown>>)[variant.name] ?? {};
  return { kind: variant.name, ...structFromAnchor(variant.fields ?? [], fields, path) };
}

function structFromAnchor(fields: FieldJson[], value: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    if (!(field.name in value)) throw new Error(`${path}: missing field ${field.name}`);
    out[idlCamelCase(field.name)] = fromAnchor(field.type, value[field.name], `${path}.${field.name}`);
  }
  return out;
}

/** Converts a value of this package's shape into what anchor's coder encodes. */
export function toAnchor(type: IdlTypeJson, value: unknown, path = "value"): unknown {
  if (typeof type === "string") {
    switch (type) {
      case "u64":
      case "i64":
      case "u128":
      case "i128": {
        if (typeof value !== "bigint") throw new TypeError(`${path} must be a bigint (${type})`);
        checkRange(path, type, value);
        return new BN(value.toString());
      }
      case "u8":
      case "i8":
      case "u16":
      case "i16":
      case "u32":
      case "i32": {
        if (typeof value !== "number" || !Number.isInteger(value)) throw new TypeError(`${path} must be an integer (${type})`);
        checkRange(path, type, BigInt(value));
        return value;
      }
      case "bool":
        if (typeof value !== "boolean") throw new TypeError(`${path} must be a boolean`);
        return value;
      case "string":
        if (typeof value !== "string") throw new TypeError(`${path} must be a string`);
        return value;
      case "pubkey":
        if (!(value instanceof PublicKey)) throw new TypeError(`${path} must be a PublicKey`);
        return value;
      default:
        throw new Error(`${path}: unsupported IDL type ${type}`);
    }
  }
  if ("array" in type) {
    const [inner, length] = type.array;
    if (inner === "u8") {
      if (!(value instanceof Uint8Array)) throw new TypeError(`${path} must be a Uint8Array`);
      if (value.length !== length) throw new RangeError(`${path} must be ${length} bytes, got ${value.length}`);
      return Array.from(value);
    }
    const items = value as unknown[];
    if (!Array.isArray(items) || items.length !== length) throw new TypeError(`${path} must be an array of ${length}`);
    return items.map((item, i) => toAnchor(inner, item, `${path}[${i}]`));
  }
  if ("vec" in type) {
    if (type.vec === "u8") {
      if (!(value instanceof Uint8Array)) throw new TypeError(`${path} must be a Uint8Array`);
      return Buffer.from(value);
    }
    if (!Array.isArray(value)) throw new TypeError(`${path} must be an array`);
    return value.map((item, i) => toAnchor(type.vec, item, `${path}[${i}]`));
  }
  if ("option" in type) return value === null || value === undefined ? null : toAnchor(type.option, value, path);
  const def = typeDef(type.defined.name);
  if (def.kind === "struct") return structToAnchor(def.fields, value as Record<string, unknown>, path);
  const kind = isUnitEnum(def) ? value : (value as { kind?: unknown } | null)?.kind;
  const variant = def.variants.find((v) => v.name === kind);
  if (!variant) {
    const names = def.variants.map((v) => v.name).join(", ");
    throw new TypeError(`${path}: ${String(kind)} is not a variant of ${type.defined.name} (${names})`);
  }
  if (isUnitEnum(def)) return { [variant.name]: {} };
  return { [variant.name]: structToAnchor(variant.fields ?? [], value as Record<string, unknown>, path) };
}

function structToAnchor(fields: FieldJson[], value: Record<string, unknown>, path: string): Record<string, unknown> {
  if (value === null || typeof value !== "object") throw new TypeError(`${path} must be an object`);
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const key = idlCamelCase(field.name);
    if (!(key in value)) throw new TypeError(`${path}.${key} is missing`);
    out[field.name] = toAnchor(field.type, value[key], `${path}.${key}`);
  }
  return out;
}

/** Decodes a defined type `name` from an anchor value. */
export function definedFromAnchor(name: string, value: unknown): unknown {
  return fromAnchor({ defined: { name } }, value, name);
}
