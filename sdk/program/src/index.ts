// @agent-market/program: the TypeScript client of the agent_market program.
// USDC amounts and network names are also their own entries, "@agent-market/program/usdc" and
// "@agent-market/program/network", which import nothing: a browser bundle takes them without Anchor.
export {
  IDL,
  type AgentMarket,
  PROGRAM_ID,
  coder,
  bytesConstant,
  integerConstant,
  FEE_BPS,
  BPS_DENOMINATOR,
  FEE_SHARD_COUNT,
  MAX_ENDPOINT_LEN,
  MAX_EXECUTION_SECS,
  MAX_SUBSCRIPTION_PERIOD_SECS,
  RESULT_DIGEST_DOMAIN,
  SIGNING_KEY_PROOF_DOMAIN,
  BATCH_DIGEST_DOMAIN,
  MAX_SETTLE_BATCH,
  MAX_OPEN_BATCH,
  splitPayment,
} from "./program.js";
export * from "./types.js";
export * from "./pda.js";
export { isOnCurve, findProgramAddress } from "./curve.js";
export * from "./digest.js";
export * from "./key-proof.js";
export * from "./instruction-builder.js";
export * from "./ed25519-instruction.js";
export * from "./market-instructions.js";
export * from "./agent-instructions.js";
export * from "./escrow-instructions.js";
export * from "./dispute-instructions.js";
export * from "./batch-instructions.js";
export * from "./metered-charge.js";
export * from "./open-batch-instructions.js";
export * from "./accounts.js";
export * from "./events.js";
export * from "./errors.js";
export { toHex, fromHex } from "./bytes.js";
export { decodeBase58 } from "./base58.js";
export { LruMap } from "./lru.js";
export { fromAnchor, toAnchor, camelCase, type IdlTypeJson } from "./convert.js";
export { ed25519PublicKey, ed25519Sign, ed25519Verify } from "./ed25519.js";
export * from "./protocol.js";
export * from "./sign-batch.js";
export * from "./evidence.js";
export * from "./transaction.js";
export * from "./conformance.js";
export * from "./receipt-log.js";
export * from "./settled-leaves.js";
export * from "./compute-budget.js";
export * from "./receipt-tree.js";
export * from "./receipt-history.js";
export * from "./dispute-route.js";
export * from "./usdc.js";
export * from "./network.js";
export { MAX_RETRY_AFTER_MS, retryAfterMs } from "./retry-after.js";
export * from "./lookup-table.js";
