// The types derived from the IDL (checked by `tsc -p tsconfig.test.json`, which npm test runs).
import assert from "node:assert/strict";

import type { PublicKey } from "@solana/web3.js";

import type {
  Agent,
  AgentMarketErrorName,
  AgentMarketEvent,
  AgentStatus,
  AgentTerms,
  Escrow,
  EventData,
  Market,
  MarketParams,
  Pricing,
  ReceiptLeaf,
  RefundReason,
} from "../src/index.js";

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

export type TypeChecks = [
  Assert<Equal<RefundReason, "Timeout" | "CreatorError" | "InvalidSignature" | "OutputInvalid" | "RelayerError">>,
  Assert<Equal<AgentStatus, "Active" | "Retired">>,
  Assert<
    Equal<
      Pricing,
      | { kind: "PayPerUse"; priceUsdc: bigint }
      | { kind: "Subscription"; periodPriceUsdc: bigint; periodSecs: number }
      | { kind: "Hybrid"; periodPriceUsdc: bigint; periodSecs: number; includedCalls: number; overagePriceUsdc: bigint }
      | { kind: "Metered"; pricePerUnitUsdc: bigint; maxUnitsPerCall: bigint }
    >
  >,
  Assert<
    Equal<
      MarketParams,
      {
        relayer: PublicKey;
        arbiter: PublicKey;
        minCollateralUsdc: bigint;
        minPricePerCallUsdc: bigint;
        escrowGraceSecs: number;
        disputeWindowSecs: number;
        collateralCooldownSecs: number;
        escrowsPaused: boolean;
      }
    >
  >,
  Assert<
    Equal<
      AgentTerms,
      { signingKey: Uint8Array; endpoint: string; listingHash: Uint8Array; pricing: Pricing; maxExecutionSecs: number }
    >
  >,
  Assert<Equal<Escrow["amountUsdc"], bigint>>,
  Assert<Equal<Escrow["openedAt"], bigint>>,
  Assert<Equal<Escrow["executionId"], Uint8Array>>,
  Assert<Equal<Agent["status"], AgentStatus>>,
  Assert<Equal<Market["feeShardBumps"], Uint8Array>>,
  Assert<Equal<EventData<"EscrowsSettledToLog">["firstLeafIndex"], bigint>>,
  Assert<Equal<EventData<"EscrowsSettledToLog">["leaves"], ReceiptLeaf[]>>,
  Assert<Equal<Extract<AgentMarketEvent, { name: "Subscribed" }>["data"], EventData<"Subscribed">>>,
  Assert<Equal<Extract<AgentMarketErrorName, "NotRelayer" | "DigestMismatch">, "NotRelayer" | "DigestMismatch">>,
];

describe("types", () => {
  it("are derived from the IDL (compile-time checks in this file)", () => {
    const reason: RefundReason = "Timeout";
    // @ts-expect-error not a RefundReason
    const bad: RefundReason = "Bored";
    assert.ok(reason && bad);
  });
});
