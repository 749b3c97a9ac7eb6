// Every program-derived address of the program. Seeds come from the IDL: its `#[constant]`
// seeds, and for the event authority (which Anchor's `#[event_cpi]` adds) the const seed the IDL
// gives that account. Same derivations as localnet/src/market.rs's `pda` module.
import { PublicKey } from "@solana/web3.js";

import { requireLength, toHex, u64Le } from "./bytes.js";
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
export const DISPUTE_SEED = bytesConstant("DISPUTE_SEED");
export const SUBSCRIPTION_SEED = bytesConstant("SUBSCRIPTION_SEED");
export const RECEIPT_LOG_SEED = bytesConstant("RECEIPT_LOG_SEED");
/** The upgradeable BPF loader, which owns every upgradeable program's ProgramData account. */
export const BPF_LOADER_UPGRADEABLE_ID = new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111");

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

// A derivation still costs tens of microseconds (a sha256 and an on-curve test for each candidate
// bump, two on average), and the relayer derives the same addresses again and again: an agent's
// vaults and a payer's subscription for every execution, an execution's escrow when it opens and
// when it closes.
/** Derivations from agents and payers, which keep coming back. */
const ACCOUNT_MEMO_SIZE = 10_000;
/** Derivations from execution ids, wanted for the few seconds an execution lasts. */
const EXECUTION_MEMO_SIZE = 1_000;

/** The derivations of one program id: a deployment reads its id from its configuration. */
class Derivations {
  readonly accounts = new LruMap<string, PublicKey>(ACCOUNT_MEMO_SIZE);
  readonly executions = new LruMap<string, PublicKey>(EXECUTION_MEMO_SIZE);
  /** The bump each derivation found, by address: what the program's own search will try (compute-budget.ts). */
  readonly bumps = new LruMap<string, number>(ACCOUNT_MEMO_SIZE + EXECUTION_MEMO_SIZE);
  /** The few addresses with constant seeds: the market, the delegate, the event authority, shards. */
  private readonly fixed = new Map<string, PublicKey>();

  constructor(readonly programId: PublicKey) {}

  find(...seeds: Uint8Array[]): PublicKey {
    const [address, bump] = findProgramAddress(seeds, this.programId);
    this.bumps.set(address.toBase58(), bump);
    return address;
  }

  memoized(memo: LruMap<string, PublicKey>, ...seeds: Uint8Array[]): PublicKey {
    return memo.getOrSet(seeds.map(toHex).join("/"), () => this.find(...seeds));
  }

  once(key: string, ...seeds: Uint8Array[]): PublicKey {
    let address = this.fixed.get(key);
    if (!address) {
      address = this.find(...seeds);
      this.fixed.set(key, address);
    }
    return address;
  }
}

/** Program ids other than the IDL's a process works with at once: a deployment per network. */
const PROGRAM_MEMO_SIZE = 16;
const idlDerivations = new Derivations(PROGRAM_ID);
// By object first (a deployment passes the same PublicKey from its configuration every time), by
// address second (the same id parsed twice shares one memo).
const derivationsByKey = new WeakMap<PublicKey, Derivations>([[PROGRAM_ID, idlDerivations]]);
const derivationsByAddress = new LruMap<string, Derivations>(PROGRAM_MEMO_SIZE);

function derivations(programId: PublicKey): Derivations {
  const known = derivationsByKey.get(programId);
  if (known) return known;
  if (!(programId instanceof PublicKey)) throw new TypeError(`programId must be a PublicKey, got ${String(programId)}`);
  const address = programId.toBase58();
  const found =
    address === PROGRAM_ID.toBase58()
      ? idlDerivations
      : derivationsByAddress.getOrSet(address, () => new Derivations(programId));
  derivationsByKey.set(programId, found);
  return found;
}

/**
 * The bump this process's derivation of `address` under `programId` found, if it derived it
 * recently: the program's own search for it tries 256 − bump candidates.
 */
export function derivedBump(address: PublicKey, programId: PublicKey): number | undefined {
  return derivations(programId).bumps.get(address.toBase58());
}

/** Internal, for tests: how many derivations each memo of the IDL's program id holds, and how many it may. */
export function pdaMemoSizes(): Record<"accounts" | "executions", { size: number; capacity: number }> {
  const { accounts, executions } = idlDerivations;
  return {
    accounts: { size: accounts.size, capacity: accounts.capacity },
    executions: { size: executions.size, capacity: executions.capacity },
  };
}

// Every function below derives under `programId`, the program's address on the cluster at hand.
// It has no default: an id left out would derive the IDL's addresses, right on localnet and wrong
// on a deployment at another id.

/** The market configuration account: `["market"]`. */
export function marketPda(programId: PublicKey): PublicKey {
  return derivations(programId).once("market", MARKET_SEED);
}

/** The SPL Token delegate every payer approves: `["delegate"]`. */
export function delegatePda(programId: PublicKey): PublicKey {
  return derivations(programId).once("delegate", DELEGATE_SEED);
}

/** Signs the program's `emit_cpi!` self-invocations: `["__event_authority"]`. */
export function eventAuthorityPda(programId: PublicKey): PublicKey {
  return derivations(programId).once("event_authority", EVENT_AUTHORITY_SEED);
}

/** The upgradeable loader's account that names the program's upgrade authority: `[programId]` under that loader. */
export function programDataPda(programId: PublicKey): PublicKey {
  return findProgramAddress([programId.toBytes()], BPF_LOADER_UPGRADEABLE_ID)[0];
}

/** Fee shard token account `index` (0 ‥ FEE_SHARD_COUNT - 1): `["fee_shard", index]`. */
export function feeShardPda(index: number, programId: PublicKey): PublicKey {
  if (!Number.isInteger(index) || index < 0 || index >= FEE_SHARD_COUNT) {
    throw new RangeError(`fee shard index ${index} is not in 0..${FEE_SHARD_COUNT - 1}`);
  }
  return derivations(programId).once(`fee_shard/${index}`, FEE_SHARD_SEED, Uint8Array.of(index));
}

/** The agent account: `["agent", agentId]` with the 16-byte agent id. */
export function agentPda(agentId: Uint8Array, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.accounts, AGENT_SEED, requireLength("agentId", agentId, 16));
}

/** The agent's collateral vault: `["collateral_vault", agent]`. */
export function collateralVaultPda(agent: PublicKey, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.accounts, COLLATERAL_VAULT_SEED, agent.toBytes());
}

/** The agent's escrow vault: `["escrow_vault", agent]`. */
export function escrowVaultPda(agent: PublicKey, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.accounts, ESCROW_VAULT_SEED, agent.toBytes());
}

/** One execution's escrow: `["escrow", executionId]` with the 16-byte execution id. */
export function escrowPda(executionId: Uint8Array, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.executions, ESCROW_SEED, requireLength("executionId", executionId, 16));
}

/** The agent's receipt log, which `settle_batch` appends to: `["receipt_log", agent]`. */
export function receiptLogPda(agent: PublicKey, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.accounts, RECEIPT_LOG_SEED, agent.toBytes());
}

/**
 * The dispute of leaf `leafIndex` of the agent's receipt log: `["dispute", agent, leafIndex (u64
 * LE)]`. Keyed by the leaf, not the execution id: an id opened twice settles into two leaves,
 * each disputable on its own.
 */
export function disputePda(agent: PublicKey, leafIndex: bigint, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.executions, DISPUTE_SEED, agent.toBytes(), u64Le("leafIndex", leafIndex));
}

/** A payer's subscription to an agent: `["subscription", agent, payer]` (payer = the wallet). */
export function subscriptionPda(agent: PublicKey, payer: PublicKey, programId: PublicKey): PublicKey {
  const d = derivations(programId);
  return d.memoized(d.accounts, SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes());
}
