// The program's identity and constants, all read from the generated IDL.
import { BorshCoder, type Idl } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import { IDL, type AgentMarket } from "./idl/agent_market.js";

export { IDL, type AgentMarket };

/** The program id: the IDL's `address`. */
export const PROGRAM_ID = new PublicKey(IDL.address);

/**
 * Anchor's Borsh coder over the IDL as generated (snake_case names, as in the JSON). The rest of
 * this package converts between its values and the camelCase, bigint-based values of the public
 * API.
 */
export const coder = new BorshCoder(IDL as unknown as Idl);

type ConstantName = AgentMarket["constants"][number]["name"];

function constant(name: ConstantName): AgentMarket["constants"][number] {
  const found = IDL.constants.find((c) => c.name === name);
  if (!found) throw new Error(`IDL has no constant ${name}`);
  return found;
}

/** A `bytes` constant of the IDL (its value is written as "[1, 2, 3]"). */
export function bytesConstant(name: ConstantName): Uint8Array {
  const c = constant(name);
  if (c.type !== "bytes") throw new Error(`IDL constant ${name} is not bytes`);
  return Uint8Array.from(JSON.parse(c.value) as number[]);
}

/** An integer constant of the IDL. */
export function integerConstant(name: ConstantName): bigint {
  const c = constant(name);
  if (c.type === "bytes") throw new Error(`IDL constant ${name} is not an integer`);
  return BigInt(c.value);
}

/** The marketplace fee in basis points (1% = 100), a program constant. */
export const FEE_BPS = integerConstant("FEE_BPS");
export const BPS_DENOMINATOR = integerConstant("BPS_DENOMINATOR");
/** Fee shards are numbered 0 ‥ FEE_SHARD_COUNT - 1. */
export const FEE_SHARD_COUNT = Number(integerConstant("FEE_SHARD_COUNT"));
export const MAX_ENDPOINT_LEN = Number(integerConstant("MAX_ENDPOINT_LEN"));
export const MAX_EXECUTION_SECS = Number(integerConstant("MAX_EXECUTION_SECS"));
/** The longest subscription period a listing may sell, in seconds (366 days). */
export const MAX_SUBSCRIPTION_PERIOD_SECS = Number(integerConstant("MAX_SUBSCRIPTION_PERIOD_SECS"));
/** Domain tag that starts the result digest: "agentmarket/result/v1". */
export const RESULT_DIGEST_DOMAIN = bytesConstant("RESULT_DIGEST_DOMAIN");
/** Domain tag that starts the signing-key proof: "agentmarket/signing-key/v1". */
export const SIGNING_KEY_PROOF_DOMAIN = bytesConstant("SIGNING_KEY_PROOF_DOMAIN");
/** Domain tag that starts the batch digest: "agentmarket/result-batch/v1". */
export const BATCH_DIGEST_DOMAIN = bytesConstant("BATCH_DIGEST_DOMAIN");
/** The most escrows one `settle_batch` settles, hence the most result digests one batch signs. */
export const MAX_SETTLE_BATCH = Number(integerConstant("MAX_SETTLE_BATCH"));
/** The most escrows one `open_escrow_batch` opens. */
export const MAX_OPEN_BATCH = Number(integerConstant("MAX_OPEN_BATCH"));

const U64_MAX = (1n << 64n) - 1n;

/**
 * How the program splits a payment (programs/agent_market/src/fees.rs):
 * `fee = floor(amount × FEE_BPS / BPS_DENOMINATOR)`, the creator gets the rest.
 */
export function splitPayment(amountUsdc: bigint): { creatorShareUsdc: bigint; feeUsdc: bigint } {
  if (amountUsdc < 0n || amountUsdc > U64_MAX) throw new RangeError(`amountUsdc ${amountUsdc} is not a u64`);
  const feeUsdc = (amountUsdc * FEE_BPS) / BPS_DENOMINATOR;
  return { creatorShareUsdc: amountUsdc - feeUsdc, feeUsdc };
}
