// The receipt check's findings as a reader takes them: each check named in words rather than by
// its identifier in the client library, and its amounts (which the library states in base units,
// millionths of a USDC) in USDC.
import { formatUsdc } from "@agent-market/client";

import { usdcText } from "./money.js";

const NAMES: Readonly<Record<string, string>> = {
  receipt: "The execution has a receipt",
  execution_id: "The receipt is for this execution",
  agent: "The receipt names this agent",
  result_hash: "The output is the one the receipt signs",
  request_hash: "The task and parameters are the ones the receipt signs",
  protocol_version: "Protocol version",
  digest: "Signed digest rebuilt from the receipt",
  creator_signature: "The creator's signature",
  expected_signing_key: "Signed by the expected key",
  on_chain: "On chain",
  settlement_transaction: "Settlement transaction",
  settle_instruction: "Settlement instruction for this escrow",
  settle_position: "This escrow's place in the settlement batch",
  settle_arguments: "Settlement arguments",
  ed25519_instruction: "Signature checked on chain",
  escrow_settled_event: "Settlement record",
  creator_payout: "Creator's payout",
  marketplace_fee: "Marketplace fee",
  receipt_log: "Receipt log",
  on_chain_signing_key: "The agent's signing key on chain",
};

/** A check's name in words; an unknown one (a newer client's) reads as its identifier spaced out. */
export function checkName(name: string): string {
  return NAMES[name] ?? name.replace(/_/g, " ");
}

// The numbers in a finding that are base units: the ones after or before these words.
const BASE_UNITS = /(\b(?:held|charged|returned|creator share|fee|gained|sum to)|≠) (\d+)\b|\b(\d+)( base units held| charged| to the creator| fee\b| returned)/g;

/** A finding with its base-unit amounts in USDC ("250000 charged" → "0.25 USDC charged"). */
export function checkDetail(detail: string): string {
  return detail.replace(/\bsettle_batch\b/g, "settlement batch").replace(BASE_UNITS, (_, before: string | undefined, afterNumber: string | undefined, number: string | undefined, after: string | undefined) =>
    before !== undefined ? `${before} ${usdc(afterNumber!)}` : `${usdc(number!)}${after === " base units held" ? " held" : after!}`,
  );
}

const usdc = (baseUnits: string) => usdcText(formatUsdc(BigInt(baseUnits)));
