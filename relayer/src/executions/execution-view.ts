// An execution as the API shows it: status, output, the receipt that binds who produced which
// output for which input, the charge split as the program splits it, the transactions, timings.
import { EXECUTE_PROTOCOL_VERSION, splitPayment, toHex, formatUsdc } from "@agent-market/program";
import type { FromSchema } from "json-schema-to-ts";

import type { executionObject } from "../http/execution-schemas.js";
import type { ExecutionRow, ExecutionState } from "./execution-row.js";

export type ExecutionStatus = "pending" | "running" | "succeeded" | "refunded" | "failed";

const STATUS: Record<ExecutionState, ExecutionStatus> = {
  opening: "pending",
  running: "running",
  settling: "succeeded",
  settled: "succeeded",
  refunding: "refunded",
  refunded: "refunded",
  failed: "failed",
};

const ms = (from: Date | null, to: Date | null) => (from && to ? to.getTime() - from.getTime() : null);

/** An execution as its response schema describes it. */
export type ExecutionObject = FromSchema<typeof executionObject>;

/**
 * What the call was charged and what went back to its payer: a succeeded call its escrow's charge
 * for the units signed (settle_batch's rule), a refunded one nothing, its whole escrow returned.
 */
function chargeOfRow(row: ExecutionRow, status: ExecutionStatus): { charged: bigint; returned: bigint } {
  const held = row.amount_usdc === null ? 0n : BigInt(row.amount_usdc);
  if (status === "succeeded") {
    const charged = row.charged_usdc === null ? held : BigInt(row.charged_usdc);
    return { charged, returned: held - charged };
  }
  return { charged: 0n, returned: status === "refunded" ? held : 0n };
}

export function renderExecution(row: ExecutionRow): ExecutionObject {
  const status = STATUS[row.state];
  const amount = row.amount_usdc === null ? null : BigInt(row.amount_usdc);
  const { charged, returned } = chargeOfRow(row, status);
  const split = splitPayment(charged);
  const metered = BigInt(row.price_per_unit_usdc ?? "0") > 0n;
  const final = row.state === "settled" || row.state === "refunded" || row.state === "failed";
  return {
    object: "execution",
    id: row.id,
    agent: row.agent,
    network: row.network,
    status,
    api_key_id: row.api_key_id,
    output: status === "succeeded" ? row.output : null,
    receipt:
      status === "succeeded"
        ? {
            protocol_version: EXECUTE_PROTOCOL_VERSION,
            execution_id: row.id,
            agent: row.agent,
            escrow_nonce: row.escrow_nonce!,
            payer: row.wallet,
            payer_token_account: row.payer_token_account,
            amount_usdc: formatUsdc(amount!),
            request_hash: toHex(row.request_hash),
            result_hash: toHex(row.result_hash!),
            units: row.units!,
            digest: toHex(row.result_digest!),
            creator_signature: toHex(row.creator_signature!),
            creator_public_key: row.signing_key!,
          }
        : null,
    charge: {
      amount_usdc: formatUsdc(charged),
      charged_usdc: formatUsdc(charged),
      held_usdc: amount === null ? null : formatUsdc(amount),
      returned_usdc: formatUsdc(returned),
      units: status === "succeeded" ? row.units : null,
      price_per_unit_usdc: metered ? formatUsdc(BigInt(row.price_per_unit_usdc!)) : null,
      max_units: metered ? row.max_units : null,
      creator_share_usdc: formatUsdc(split.creatorShareUsdc),
      fee_usdc: formatUsdc(split.feeUsdc),
      currency: "USDC",
      covered_by_subscription: row.used_subscription,
    },
    transactions: {
      escrow: row.escrow_tx?.signature ?? null,
      settlement: row.settle_tx && status === "succeeded" ? row.settle_tx.signature : null,
      refund: row.refund_tx?.signature ?? null,
      confirmation: row.confirmed_at ? "confirmed" : final ? null : row.state === "opening" ? null : "processed",
    },
    failure: row.failure_code ? { code: row.failure_code, message: row.failure_message, refund_reason: row.refund_reason } : null,
    escrow_deadline: row.escrow_deadline?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    durations_ms: {
      total: ms(row.created_at, row.finished_at),
      escrow: ms(row.created_at, row.escrow_opened_at),
      creator: ms(row.creator_started_at, row.creator_finished_at),
      settlement: ms(row.creator_finished_at, row.finished_at),
    },
  };
}

