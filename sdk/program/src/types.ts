// TypeScript types of the program's accounts, events and arguments, derived from the IDL's type
// at compile time (never written out by hand), in the shape this package decodes them to:
// field names in camelCase; u64/i64 as bigint; u8/u16/u32 as number; pubkey as PublicKey;
// [u8; N] as Uint8Array; enums whose variants carry no data as the variant's name, other enums
// as { kind: "<Variant>", ...fields }.
import type { PublicKey } from "@solana/web3.js";

import type { AgentMarket } from "./idl/agent_market.js";

/** `snake_case` → `camelCase`, as the runtime conversion does. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type TypeDefs = AgentMarket["types"][number];
/** Names of the IDL's defined types (accounts, events, argument structs and enums). */
export type TypeName = TypeDefs["name"];
type TypeDefBody<N> = Extract<TypeDefs, { name: N }>["type"];

type IdlField = { name: string; type: unknown };
type IdlVariant = { name: string; fields?: readonly unknown[] };

/** The decoded value of an IDL type. */
export type Value<T> = T extends "u64" | "i64" | "u128" | "i128"
  ? bigint
  : T extends "u8" | "i8" | "u16" | "i16" | "u32" | "i32"
    ? number
    : T extends "bool"
      ? boolean
      : T extends "string"
        ? string
        : T extends "pubkey"
          ? PublicKey
          : T extends { array: ["u8", number] }
            ? Uint8Array
            : T extends { array: [infer E, number] }
              ? Value<E>[]
              : T extends { vec: "u8" }
                ? Uint8Array
                : T extends { vec: infer E }
                  ? Value<E>[]
                  : T extends { option: infer E }
                    ? Value<E> | null
                    : T extends { defined: { name: infer N } }
                      ? Defined<N>
                      : never;

/** A struct's fields, keyed in camelCase. */
export type Struct<F extends readonly IdlField[]> = Simplify<{
  [K in F[number] as CamelCase<K["name"]>]: Value<K["type"]>;
}>;

type VariantValue<V> = V extends { name: infer N; fields: infer F extends readonly IdlField[] }
  ? Simplify<{ kind: N } & Struct<F>>
  : V extends { name: infer N }
    ? { kind: N }
    : never;

type EnumValue<V extends readonly IdlVariant[]> = [Extract<V[number], { fields: readonly unknown[] }>] extends [never]
  ? V[number]["name"]
  : VariantValue<V[number]>;

/** The decoded value of the IDL's defined type `N`. */
export type Defined<N> = TypeDefBody<N> extends { kind: "struct"; fields: infer F extends readonly IdlField[] }
  ? Struct<F>
  : TypeDefBody<N> extends { kind: "enum"; variants: infer V extends readonly IdlVariant[] }
    ? EnumValue<V>
    : never;

export type Market = Defined<"Market">;
export type Agent = Defined<"Agent">;
export type Escrow = Defined<"Escrow">;
export type Subscription = Defined<"Subscription">;
export type Dispute = Defined<"Dispute">;
export type ReceiptLog = Defined<"ReceiptLog">;
/** What a receipt log's leaf commits to: `openDisputeInstruction` takes it. */
export type ReceiptLeaf = Defined<"ReceiptLeaf">;

export type MarketParams = Defined<"MarketParams">;
export type AgentTerms = Defined<"AgentTerms">;
export type Pricing = Defined<"Pricing">;
export type AgentStatus = Defined<"AgentStatus">;
export type RefundReason = Defined<"RefundReason">;

/** Names of the program's accounts: "Agent", "Dispute", "Escrow", "Market", "ReceiptLog", "Subscription". */
export type AccountName = AgentMarket["accounts"][number]["name"];
/** The decoded data of account `A`. */
export type AccountData<A extends AccountName> = Defined<A>;

/** Names of the program's events. */
export type EventName = AgentMarket["events"][number]["name"];
/** The decoded data of event `E`. */
export type EventData<E extends EventName> = Defined<E>;
/** Any event of the program, discriminated by `name`. */
export type AgentMarketEvent = { [E in EventName]: { name: E; data: EventData<E> } }[EventName];

/** Names of the program's instructions, as in the IDL (snake_case). */
export type InstructionName = AgentMarket["instructions"][number]["name"];
