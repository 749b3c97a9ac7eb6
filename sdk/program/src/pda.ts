// Every program-derived address of the program. Seeds come from the IDL: its `#[constant]`
// seeds, and for the event authority (which Anchor's `#[event_cpi]` adds) the const seed the IDL
// gives that account. Same derivations as localnet/src/market.rs's `pda` module.
import { PublicKey } from "@solana/web3.js";

import { requireLength, toHex } from "./bytes.js";
import { findProgramAddress } from "./curve.js";
import { LruMap } from "./lru.js";
import { bytesConstant, FEE_SHARD_COUNT, IDL, PROGRAM_ID } from "./program.js";

export const MARKET_SEED = bytesConstant("MARKET_SEED");
export const DELEGATE_SEED = bytesConstant("DELEGATE_SEED");
export const FEE_SHARD_SEED = bytesConstant("FEE_SHARD_SEED");
export const AGENT_SEED = bytesConstant("AGENT_SEED");
export const COLLATERAL_VAULT_SEED = bytesConstant("COLLATERAL_VAULT_SEED");
export const ESCROW_VAULT_SEED = bytesConstant("ESCROW_VAULT_SEED");
export const ESCROW_SEED = bytesConstant("ESCROW_SEED");
export const RECEIPT_SEED = bytesConstant("RECEIPT_SEED");
export const DISPUTE_SEED = bytesConstant("DISPUTE_SEED");
export const SUBSCRIPTION_SEED = bytesConstant("SUBSCRIPTION_SEED");

/** `"__event_authority"`, read from the IDL's `event_authority` account. */
export const EVENT_AUTHORITY_SEED: Uint8Array = (() => {
  for (const ix of IDL.instructions) {
    for (const account of ix.accounts) {
      if (account.name === "event_authority" && "pda" in account) {
        const [seed] = account.pda.seeds;
        if (seed.kind === "const") return Uint8Array.from(seed.value);
      }
    }
  }
  throw new Error("IDL has no event_authority PDA");
})();

function find(...seeds: Uint8Array[]): PublicKey {
  return findProgramAddress(seeds, PROGRAM_ID)[0];
}

// A derivation still costs tens of microseconds (a sha256 and an on-curve test for each candidate
// bump, two on average), and the relayer derives the same addresses again and again: an agent's
// vaults and a payer's subscription for every execution, an execution's escrow when it opens and
// when it closes.
/** Derivations from agents and payers, which keep coming back. */
const ACCOUNT_MEMO_SIZE = 10_000;
/** Derivations from execution ids, wanted for the few seconds an execution lasts. */
const EXECUTION_MEMO_SIZE = 1_000;
const accountMemo = new LruMap<string, PublicKey>(ACCOUNT_MEMO_SIZE);
const executionMemo = new LruMap<string, PublicKey>(EXECUTION_MEMO_SIZE);

function findMemoized(memo: LruMap<string, PublicKey>, ...seeds: Uint8Array[]): PublicKey {
  return memo.getOrSet(seeds.map(toHex).join("/"), () => find(...seeds));
}

/** Internal, for tests: how many derivations each memo holds, and how many it may. */
export function pdaMemoSizes(): Record<"accounts" | "executions", { size: number; capacity: number }> {
  return {
    accounts: { size: accountMemo.size, capacity: accountMemo.capacity },
    executions: { size: executionMemo.size, capacity: executionMemo.capacity },
  };
}

const memo = new Map<string, PublicKey>();
function once(key: string, derive: () => PublicKey): PublicKey {
  let address = memo.get(key);
  if (!address) {
    address = derive();
    memo.set(key, address);
  }
  return address;
}

/** The market configuration account: `["market"]`. */
export function marketPda(): PublicKey {
  return once("market", () => find(MARKET_SEED));
}

/** The SPL Token delegate every payer approves: `["delegate"]`. */
export function delegatePda(): PublicKey {
  return once("delegate", () => find(DELEGATE_SEED));
}

/** Signs the program's `emit_cpi!` self-invocations: `["__event_authority"]`. */
export function eventAuthorityPda(): PublicKey {
  return once("event_authority", () => find(EVENT_AUTHORITY_SEED));
}

/** Fee shard token account `index` (0 ‥ FEE_SHARD_COUNT - 1): `["fee_shard", index]`. */
export function feeShardPda(index: number): PublicKey {
  if (!Number.isInteger(index) || index < 0 || index >= FEE_SHARD_COUNT) {
    throw new RangeError(`fee shard index ${index} is not in 0..${FEE_SHARD_COUNT - 1}`);
  }
  return once(`fee_shard/${index}`, () => find(FEE_SHARD_SEED, Uint8Array.of(index)));
}

/** The agent account: `["agent", agentId]` with the 16-byte agent id. */
export function agentPda(agentId: Uint8Array): PublicKey {
  return findMemoized(accountMemo, AGENT_SEED, requireLength("agentId", agentId, 16));
}

/** The agent's collateral vault: `["collateral_vault", agent]`. */
export function collateralVaultPda(agent: PublicKey): PublicKey {
  return findMemoized(accountMemo, COLLATERAL_VAULT_SEED, agent.toBytes());
}

/** The agent's escrow vault: `["escrow_vault", agent]`. */
export function escrowVaultPda(agent: PublicKey): PublicKey {
  return findMemoized(accountMemo, ESCROW_VAULT_SEED, agent.toBytes());
}

/** One execution's escrow: `["escrow", executionId]` with the 16-byte execution id. */
export function escrowPda(executionId: Uint8Array): PublicKey {
  return findMemoized(executionMemo, ESCROW_SEED, requireLength("executionId", executionId, 16));
}

/** One execution's receipt: `["receipt", executionId]`. */
export function receiptPda(executionId: Uint8Array): PublicKey {
  return findMemoized(executionMemo, RECEIPT_SEED, requireLength("executionId", executionId, 16));
}

/** One execution's dispute: `["dispute", executionId]`. */
export function disputePda(executionId: Uint8Array): PublicKey {
  return findMemoized(executionMemo, DISPUTE_SEED, requireLength("executionId", executionId, 16));
}

/** A payer's subscription to an agent: `["subscription", agent, payer]` (payer = the wallet). */
export function subscriptionPda(agent: PublicKey, payer: PublicKey): PublicKey {
  return findMemoized(accountMemo, SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes());
}
