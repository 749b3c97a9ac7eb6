// Sample values of any IDL type, in anchor's raw shape (snake_case keys, BN, number[]), for
// encoding synthetic accounts and events with anchor's coder.
import BN from "bn.js";
import { PublicKey } from "@solana/web3.js";

import { IDL, type IdlTypeJson } from "../src/index.js";

type FieldJson = { name: string; type: IdlTypeJson };
type TypeDefJson =
  | { kind: "struct"; fields: FieldJson[] }
  | { kind: "enum"; variants: { name: string; fields?: FieldJson[] }[] };

const typeDefs = new Map(
  (IDL.types as unknown as { name: string; type: TypeDefJson }[]).map((t) => [t.name, t.type]),
);

/** A deterministic, varied sample of `type`; `seed` changes values and enum variants. */
export function sampleRaw(type: IdlTypeJson, seed: number): unknown {
  if (typeof type === "string") {
    switch (type) {
      case "u64":
        return new BN(((1n << 64n) - 1n - BigInt(seed)).toString());
      case "i64":
        return new BN(1_700_000_000 + seed);
      case "u32":
        return 4_000_000_000 + seed;
      case "u16":
        return 60_000 + seed;
      case "u8":
        return (200 + seed) % 256;
      case "bool":
        return seed % 2 === 1;
      case "string":
        return `https://agent-${seed}.example/ünï`;
      case "pubkey":
        return new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + seed) % 256));
      default:
        throw new Error(`no sample for ${type}`);
    }
  }
  if ("array" in type) {
    const [inner, length] = type.array;
    return Array.from({ length }, (_, i) => sampleRaw(inner, seed + i));
  }
  if ("vec" in type) return [sampleRaw(type.vec, seed)];
  if ("option" in type) return seed % 2 ? null : sampleRaw(type.option, seed);
  const def = typeDefs.get(type.defined.name)!;
  if (def.kind === "struct") return sampleStruct(def.fields, seed);
  const variant = def.variants[seed % def.variants.length]!;
  return { [variant.name]: sampleStruct(variant.fields ?? [], seed) };
}

function sampleStruct(fields: FieldJson[], seed: number): Record<string, unknown> {
  return Object.fromEntries(fields.map((f, i) => [f.name, sampleRaw(f.type, seed + i)]));
}
