// One builder per instruction of the program, plus the Ed25519 precompile instruction settle,
// register_agent and a key-changing update_agent need. Each takes the same inputs as its twin in localnet/src/market.rs and returns the same
// accounts in the same order (tests/vectors/golden.json holds both sides to that). The account
// order and the signer/writable flags come from the IDL, and the data from anchor's coder.
import { PublicKey, TransactionInstruction, type AccountMeta } from "@solana/web3.js";

import { requireLength } from "./bytes.js";
import { idlCamelCase, toAnchor, type IdlTypeJson } from "./convert.js";
import { resultDigest, signingKeyProofDigest } from "./digest.js";
import {
  agentPda,
  collateralVaultPda,
  delegatePda,
  disputePda,
  escrowPda,
  escrowVaultPda,
  eventAuthorityPda,
  feeShardPda,
  marketPda,
  programDataPda,
  receiptPda,
  subscriptionPda,
} from "./pda.js";
import { coder, IDL } from "./program.js";
import type { AgentTerms, InstructionName, MarketParams, RefundReason } from "./types.js";

type IdlAccountJson = { name: string; writable?: boolean; signer?: boolean; optional?: boolean; address?: string };
type IdlInstructionJson = { name: string; accounts: IdlAccountJson[]; args: { name: string; type: IdlTypeJson }[] };

const instructionDefs = new Map<string, IdlInstructionJson>(
  (IDL.instructions as unknown as IdlInstructionJson[]).map((ix) => [ix.name, ix]),
);

/** Accounts every builder fills in itself: fixed addresses, and the two `#[event_cpi]` adds. */
function implicitAccount(account: IdlAccountJson, programId: PublicKey): PublicKey | undefined {
  if (account.address) return new PublicKey(account.address);
  if (account.name === "event_authority") return eventAuthorityPda(programId);
  if (account.name === "program") return programId;
  return undefined;
}

/**
 * Builds instruction `name` from its accounts (camelCase names, `null` for an optional account
 * left out) and arguments (camelCase names, this package's value shapes). Every account the IDL
 * lists must be given, except fixed addresses, `eventAuthority` and `program`; an optional
 * account left out is passed as the program id, read-only, as Anchor expects. `programId` is the
 * program's address on the cluster.
 */
export function buildInstruction(
  name: InstructionName,
  accounts: Record<string, PublicKey | null>,
  args: Record<string, unknown>,
  programId: PublicKey,
): TransactionInstruction {
  const def = instructionDefs.get(name);
  if (!def) throw new Error(`IDL has no instruction ${name}`);
  const used = new Set<string>();
  const keys: AccountMeta[] = def.accounts.map((account) => {
    const implicit = implicitAccount(account, programId);
    if (implicit) return { pubkey: implicit, isSigner: Boolean(account.signer), isWritable: Boolean(account.writable) };
    const key = idlCamelCase(account.name);
    const pubkey = accounts[key];
    used.add(key);
    if (pubkey === null && account.optional) return { pubkey: programId, isSigner: false, isWritable: false };
    if (!(pubkey instanceof PublicKey)) throw new TypeError(`${name}: account ${key} must be a PublicKey`);
    return { pubkey, isSigner: Boolean(account.signer), isWritable: Boolean(account.writable) };
  });
  const unknown = Object.keys(accounts).filter((key) => !used.has(key));
  if (unknown.length > 0) throw new TypeError(`${name}: unknown accounts ${unknown.join(", ")}`);

  const anchorArgs: Record<string, unknown> = {};
  for (const arg of def.args) {
    const key = idlCamelCase(arg.name);
    if (!(key in args)) throw new TypeError(`${name}: argument ${key} is missing`);
    anchorArgs[arg.name] = toAnchor(arg.type, args[key], `${name}.${key}`);
  }
  const data = coder.instruction.encode(name, anchorArgs);
  return new TransactionInstruction({ programId, keys, data });
}

/**
 * Every builder takes the program's address on the cluster it targets, since devnet and mainnet
 * may run the program at different ids. It is required: a caller that means the IDL's address
 * (localnet loads the program there) passes PROGRAM_ID itself.
 */
export interface ProgramOption {
  programId: PublicKey;
}

// ---------------------------------------------------------------------------------------------
// Market administration

/** `authority` must be the program's upgrade authority (its ProgramData account names it). */
export function initializeMarketInstruction(input: {
  authority: PublicKey;
  usdcMint: PublicKey;
  treasury: PublicKey;
  params: MarketParams;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "initialize_market",
    {
      authority: input.authority,
      programData: programDataPda(input.programId),
      market: marketPda(input.programId),
      usdcMint: input.usdcMint,
      treasury: input.treasury,
    },
    { params: input.params },
    input.programId,
  );
}

/** Sets the parameters and proposes `newAuthority`, which takes over by signing `acceptMarketAuthorityInstruction`. */
export function updateMarketInstruction(input: {
  authority: PublicKey;
  treasury: PublicKey;
  params: MarketParams;
  newAuthority: PublicKey;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "update_market",
    { authority: input.authority, market: marketPda(input.programId), treasury: input.treasury },
    { params: input.params, newAuthority: input.newAuthority },
    input.programId,
  );
}

/** The proposed authority's acceptance of the market, signed by `newAuthority`. */
export function acceptMarketAuthorityInstruction(input: { newAuthority: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "accept_market_authority",
    { newAuthority: input.newAuthority, market: marketPda(input.programId) },
    {},
    input.programId,
  );
}

export function createFeeShardInstruction(input: {
  authority: PublicKey;
  usdcMint: PublicKey;
  index: number;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "create_fee_shard",
    {
      authority: input.authority,
      market: marketPda(input.programId),
      feeShard: feeShardPda(input.index, input.programId),
      usdcMint: input.usdcMint,
    },
    { index: input.index },
    input.programId,
  );
}

/** Anyone may send it: the shard's balance can only go to the market's treasury. */
export function sweepFeesInstruction(input: {
  treasury: PublicKey;
  usdcMint: PublicKey;
  index: number;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "sweep_fees",
    {
      market: marketPda(input.programId),
      feeShard: feeShardPda(input.index, input.programId),
      treasury: input.treasury,
      usdcMint: input.usdcMint,
    },
    { index: input.index },
    input.programId,
  );
}

// ---------------------------------------------------------------------------------------------
// Agents

export interface RegisterAgentInput extends ProgramOption {
  creator: PublicKey;
  agentId: Uint8Array;
  creatorTokenAccount: PublicKey;
  payoutAccount: PublicKey;
  /**
   * The payout account's owner (its token account `owner`), which the program reads to refuse
   * accounts of the program or the delegate; by default the creator.
   */
  payoutOwner?: PublicKey;
  usdcMint: PublicKey;
  terms: AgentTerms;
  collateralUsdc: bigint;
}

/** `register_agent` alone; it needs the signing-key proof right before it (see registerAgentInstructions). */
export function registerAgentInstruction(input: RegisterAgentInput): TransactionInstruction {
  const agent = agentPda(input.agentId, input.programId);
  return buildInstruction(
    "register_agent",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent,
      collateralVault: collateralVaultPda(agent, input.programId),
      escrowVault: escrowVaultPda(agent, input.programId),
      creatorTokenAccount: input.creatorTokenAccount,
      payoutAccount: input.payoutAccount,
      payoutOwner: input.payoutOwner ?? input.creator,
      usdcMint: input.usdcMint,
    },
    { agentId: input.agentId, terms: input.terms, collateralUsdc: input.collateralUsdc },
    input.programId,
  );
}

/**
 * The Ed25519 verification of `signingKeyProof`, the signature of `signingKey` over
 * `signingKeyProofDigest(agent, creator)`: it must come right before `register_agent`, or an
 * `update_agent` that sets `signingKey`.
 */
export function signingKeyProofInstruction(input: {
  agent: PublicKey;
  creator: PublicKey;
  signingKey: Uint8Array;
  signingKeyProof: Uint8Array;
}): TransactionInstruction {
  return ed25519VerifyInstruction(
    input.signingKey,
    input.signingKeyProof,
    signingKeyProofDigest(input.agent, input.creator),
  );
}

/**
 * `[Ed25519 verification of the signing-key proof, register_agent]`, to be sent in this order in
 * one transaction. `signingKeyProof` is the signature of `terms.signingKey` over
 * `signingKeyProofDigest(agentPda(agentId), creator)`: the proof that the creator holds the key.
 */
export function registerAgentInstructions(
  input: RegisterAgentInput & { signingKeyProof: Uint8Array },
): [TransactionInstruction, TransactionInstruction] {
  return [
    signingKeyProofInstruction({
      agent: agentPda(input.agentId, input.programId),
      creator: input.creator,
      signingKey: input.terms.signingKey,
      signingKeyProof: input.signingKeyProof,
    }),
    registerAgentInstruction(input),
  ];
}

export interface UpdateAgentInput extends ProgramOption {
  creator: PublicKey;
  agent: PublicKey;
  payoutAccount: PublicKey;
  /** The payout account's owner; by default the creator (see RegisterAgentInput.payoutOwner). */
  payoutOwner?: PublicKey;
  terms: AgentTerms;
}

/** `update_agent` alone: enough when the terms keep the agent's signing key. */
export function updateAgentInstruction(input: UpdateAgentInput): TransactionInstruction {
  return buildInstruction(
    "update_agent",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent: input.agent,
      payoutAccount: input.payoutAccount,
      payoutOwner: input.payoutOwner ?? input.creator,
    },
    { terms: input.terms },
    input.programId,
  );
}

/**
 * `update_agent`, preceded by the Ed25519 verification of `signingKeyProof` when one is given:
 * the program requires it when `terms.signingKey` differs from the agent's key, and only then.
 */
export function updateAgentInstructions(
  input: UpdateAgentInput & { signingKeyProof?: Uint8Array },
): TransactionInstruction[] {
  const update = updateAgentInstruction(input);
  if (!input.signingKeyProof) return [update];
  return [
    signingKeyProofInstruction({
      agent: input.agent,
      creator: input.creator,
      signingKey: input.terms.signingKey,
      signingKeyProof: input.signingKeyProof,
    }),
    update,
  ];
}

export function topUpCollateralInstruction(input: {
  creator: PublicKey;
  agent: PublicKey;
  creatorTokenAccount: PublicKey;
  usdcMint: PublicKey;
  amountUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "top_up_collateral",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent: input.agent,
      collateralVault: collateralVaultPda(input.agent, input.programId),
      creatorTokenAccount: input.creatorTokenAccount,
      usdcMint: input.usdcMint,
    },
    { amountUsdc: input.amountUsdc },
    input.programId,
  );
}

export function retireAgentInstruction(input: { creator: PublicKey; agent: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction("retire_agent", { creator: input.creator, agent: input.agent }, {}, input.programId);
}

export function withdrawCollateralInstruction(input: {
  creator: PublicKey;
  agent: PublicKey;
  creatorTokenAccount: PublicKey;
  usdcMint: PublicKey;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "withdraw_collateral",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent: input.agent,
      collateralVault: collateralVaultPda(input.agent, input.programId),
      creatorTokenAccount: input.creatorTokenAccount,
      usdcMint: input.usdcMint,
    },
    {},
    input.programId,
  );
}

// ---------------------------------------------------------------------------------------------
// Executions

/**
 * Opens the escrow of one execution. `payer` is the wallet that owns `payerTokenAccount`: it
 * fixes the subscription account the program checks. `maxAmountUsdc` is the price the payer was
 * quoted: the program refuses (PriceAboveMaximum) to charge more, e.g. after `update_agent` raised
 * the price or another call took the last included call of a hybrid plan.
 */
export function openEscrowInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  executionId: Uint8Array;
  apiKeyId: Uint8Array;
  requestHash: Uint8Array;
  maxAmountUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "open_escrow",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      escrowVault: escrowVaultPda(input.agent, input.programId),
      escrow: escrowPda(input.executionId, input.programId),
      payerTokenAccount: input.payerTokenAccount,
      subscription: subscriptionPda(input.agent, input.payer, input.programId),
      delegate: delegatePda(input.programId),
      usdcMint: input.usdcMint,
    },
    {
      executionId: input.executionId,
      apiKeyId: input.apiKeyId,
      requestHash: input.requestHash,
      maxAmountUsdc: input.maxAmountUsdc,
    },
    input.programId,
  );
}

/** What identifies an open escrow for the instructions that close it (all in the Escrow account). */
export interface EscrowRef {
  executionId: Uint8Array;
  agent: PublicKey;
  /** The wallet that pays (the owner of `payerTokenAccount`). */
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  /** Paid the escrow's rent (the relayer that opened it) and gets it back. */
  rentPayer: PublicKey;
}

/** The Ed25519 signature verification precompile. */
export const ED25519_PROGRAM_ID = new PublicKey("Ed25519SigVerify111111111111111111111111111");

/** Offsets of solana-ed25519-program's layout for one signature carried in the instruction. */
const ED25519_DATA_START = 2 + 14;
const ED25519_PUBKEY_OFFSET = ED25519_DATA_START;
const ED25519_SIGNATURE_OFFSET = ED25519_PUBKEY_OFFSET + 32;
const ED25519_MESSAGE_OFFSET = ED25519_SIGNATURE_OFFSET + 64;
/** Instruction index meaning "this instruction's own data". */
const THIS_INSTRUCTION = 0xffff;

/**
 * The Ed25519 precompile instruction that verifies `signature` by `signingKey` over `digest`,
 * byte for byte what solana-ed25519-program's `new_ed25519_instruction_with_signature` builds:
 * `[1, 0]`, then the offsets (signature 48, public key 16, message 112, message size, every
 * instruction index 0xFFFF: "this instruction"), then the key, the signature and the message.
 * It must come right before `settle` (over the result digest) and `register_agent` (over the
 * signing-key proof digest).
 */
export function ed25519VerifyInstruction(
  signingKey: Uint8Array,
  signature: Uint8Array,
  digest: Uint8Array,
): TransactionInstruction {
  requireLength("signingKey", signingKey, 32);
  requireLength("signature", signature, 64);
  requireLength("digest", digest, 32);
  const data = Buffer.alloc(ED25519_MESSAGE_OFFSET + digest.length);
  data.writeUInt8(1, 0); // one signature
  data.writeUInt8(0, 1); // padding
  data.writeUInt16LE(ED25519_SIGNATURE_OFFSET, 2);
  data.writeUInt16LE(THIS_INSTRUCTION, 4);
  data.writeUInt16LE(ED25519_PUBKEY_OFFSET, 6);
  data.writeUInt16LE(THIS_INSTRUCTION, 8);
  data.writeUInt16LE(ED25519_MESSAGE_OFFSET, 10);
  data.writeUInt16LE(digest.length, 12);
  data.writeUInt16LE(THIS_INSTRUCTION, 14);
  data.set(signingKey, ED25519_PUBKEY_OFFSET);
  data.set(signature, ED25519_SIGNATURE_OFFSET);
  data.set(digest, ED25519_MESSAGE_OFFSET);
  return new TransactionInstruction({ programId: ED25519_PROGRAM_ID, keys: [], data });
}

export interface SettleInput extends ProgramOption {
  relayer: PublicKey;
  usdcMint: PublicKey;
  escrow: EscrowRef;
  /** The agent's payout account (Agent.payoutAccount). */
  payoutAccount: PublicKey;
  /** `outputHash(output)`. */
  resultHash: Uint8Array;
  /** Which fee shard (0 ‥ FEE_SHARD_COUNT - 1) receives the fee. */
  feeShardIndex: number;
}

/** `settle` alone; it needs `ed25519VerifyInstruction` right before it (see settleInstructions). */
export function settleInstruction(input: SettleInput): TransactionInstruction {
  const { escrow } = input;
  return buildInstruction(
    "settle",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: escrow.agent,
      escrow: escrowPda(escrow.executionId, input.programId),
      rentPayer: escrow.rentPayer,
      receipt: receiptPda(escrow.executionId, input.programId),
      escrowVault: escrowVaultPda(escrow.agent, input.programId),
      payoutAccount: input.payoutAccount,
      feeShard: feeShardPda(input.feeShardIndex, input.programId),
      usdcMint: input.usdcMint,
    },
    { resultHash: input.resultHash, feeShardIndex: input.feeShardIndex },
    input.programId,
  );
}

/**
 * `[Ed25519 verification, settle]`, to be sent in this order in one transaction. The digest is
 * computed here from the escrow's execution id and agent, `requestHash` (Escrow.requestHash) and
 * `resultHash`, exactly as the program recomputes it.
 */
export function settleInstructions(
  input: SettleInput & {
    /** The escrow's request hash (Escrow.requestHash). */
    requestHash: Uint8Array;
    /** The agent's registered Ed25519 key (Agent.signingKey). */
    signingKey: Uint8Array;
    /** The creator's signature over the result digest. */
    signature: Uint8Array;
  },
): [TransactionInstruction, TransactionInstruction] {
  const digest = resultDigest(input.escrow.executionId, input.escrow.agent, input.requestHash, input.resultHash);
  return [ed25519VerifyInstruction(input.signingKey, input.signature, digest), settleInstruction(input)];
}

/**
 * Returns the escrow to its payer. `withSubscription` passes the payer's subscription, which the
 * program requires when the escrow used an included call of a hybrid plan (Escrow.usedIncludedCall).
 */
export function refundInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  escrow: EscrowRef;
  reason: RefundReason;
  withSubscription: boolean;
} & ProgramOption): TransactionInstruction {
  const { escrow } = input;
  return buildInstruction(
    "refund",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: escrow.agent,
      escrow: escrowPda(escrow.executionId, input.programId),
      rentPayer: escrow.rentPayer,
      escrowVault: escrowVaultPda(escrow.agent, input.programId),
      payerTokenAccount: escrow.payerTokenAccount,
      subscription: input.withSubscription ? subscriptionPda(escrow.agent, escrow.payer, input.programId) : null,
      usdcMint: input.usdcMint,
    },
    { reason: input.reason },
    input.programId,
  );
}

/** The payer takes back an escrow nobody settled by its deadline; signed by `escrow.payer`. */
export function reclaimInstruction(input: {
  usdcMint: PublicKey;
  escrow: EscrowRef;
  withSubscription: boolean;
} & ProgramOption): TransactionInstruction {
  const { escrow } = input;
  return buildInstruction(
    "reclaim",
    {
      payer: escrow.payer,
      market: marketPda(input.programId),
      agent: escrow.agent,
      escrow: escrowPda(escrow.executionId, input.programId),
      rentPayer: escrow.rentPayer,
      escrowVault: escrowVaultPda(escrow.agent, input.programId),
      payerTokenAccount: escrow.payerTokenAccount,
      subscription: input.withSubscription ? subscriptionPda(escrow.agent, escrow.payer, input.programId) : null,
      usdcMint: input.usdcMint,
    },
    {},
    input.programId,
  );
}

/** `maxAmountUsdc` is the period price the payer was shown: the program refuses to charge more. */
export function subscribeInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  payoutAccount: PublicKey;
  feeShardIndex: number;
  maxAmountUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "subscribe",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      subscription: subscriptionPda(input.agent, input.payer, input.programId),
      payerTokenAccount: input.payerTokenAccount,
      delegate: delegatePda(input.programId),
      payoutAccount: input.payoutAccount,
      feeShard: feeShardPda(input.feeShardIndex, input.programId),
      usdcMint: input.usdcMint,
    },
    { feeShardIndex: input.feeShardIndex, maxAmountUsdc: input.maxAmountUsdc },
    input.programId,
  );
}

// ---------------------------------------------------------------------------------------------
// Disputes and receipts

export function openDisputeInstruction(input: {
  payer: PublicKey;
  agent: PublicKey;
  executionId: Uint8Array;
  evidenceHash: Uint8Array;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "open_dispute",
    {
      payer: input.payer,
      market: marketPda(input.programId),
      agent: input.agent,
      receipt: receiptPda(input.executionId, input.programId),
      dispute: disputePda(input.executionId, input.programId),
    },
    { evidenceHash: input.evidenceHash },
    input.programId,
  );
}

export function resolveDisputeInstruction(input: {
  arbiter: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  executionId: Uint8Array;
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  upheld: boolean;
  slashUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "resolve_dispute",
    {
      arbiter: input.arbiter,
      market: marketPda(input.programId),
      agent: input.agent,
      dispute: disputePda(input.executionId, input.programId),
      payer: input.payer,
      payerTokenAccount: input.payerTokenAccount,
      collateralVault: collateralVaultPda(input.agent, input.programId),
      usdcMint: input.usdcMint,
    },
    { upheld: input.upheld, slashUsdc: input.slashUsdc },
    input.programId,
  );
}

/** Anyone may send it once the dispute window has passed: the rent goes back to `rentPayer`. */
export function closeReceiptInstruction(
  input: { executionId: Uint8Array; rentPayer: PublicKey } & ProgramOption,
): TransactionInstruction {
  return buildInstruction(
    "close_receipt",
    {
      market: marketPda(input.programId),
      receipt: receiptPda(input.executionId, input.programId),
      rentPayer: input.rentPayer,
    },
    {},
    input.programId,
  );
}
