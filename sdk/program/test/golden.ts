// tests/vectors/golden.json, shared with localnet/tests/vectors.rs (which computes its
// Rust-side fields).
import { readFileSync } from "node:fs";

import { PublicKey, type TransactionInstruction } from "@solana/web3.js";

import {
  acceptMarketAuthorityInstruction,
  agentPda,
  closeDisputeInstruction,
  createFeeShardInstruction,
  createReceiptLogInstruction,
  fromHex,
  initializeMarketInstruction,
  openDisputeInstruction,
  openEscrowBatchInstruction,
  openEscrowInstruction,
  reclaimInstruction,
  refundInstruction,
  registerAgentInstruction,
  resolveDisputeInstruction,
  retireAgentInstruction,
  settleBatchInstruction,
  subscribeInstruction,
  sweepFeesInstruction,
  topUpCollateralInstruction,
  updateAgentInstruction,
  updateMarketInstruction,
  withdrawCollateralInstruction,
  type AgentTerms,
  type EscrowRef,
  type MarketParams,
  type Pricing,
  type RefundReason,
} from "../src/index.js";

export interface GoldenAccountMeta {
  pubkey: string;
  is_signer: boolean;
  is_writable: boolean;
}

export interface GoldenInstructionCase {
  name: string;
  args: Record<string, unknown>;
  program_id: string;
  accounts: GoldenAccountMeta[];
  data: string;
}

export interface Golden {
  program_id: string;
  /** Execute protocol v2: the escrow's fields, the result hash and the units; integers as decimal strings. */
  result_digest: {
    execution_id: string;
    agent: string;
    nonce: string;
    payer: string;
    payer_token_account: string;
    amount_usdc: string;
    request_hash: string;
    result_hash: string;
    units: string;
    digest: string;
  }[];
  /** Signed by the `ed25519` key. */
  signing_key_proof: { agent: string; creator: string; digest: string; signature: string; instruction_data: string }[];
  canonical_json: { name: string; input: string; canonical: string; sha256: string }[];
  request_hash: { name: string; task: string; parameters: string; canonical: string; request_hash: string }[];
  ed25519: {
    seed: string;
    public_key: string;
    public_key_base58: string;
    empty_message_signature: string;
    message: string;
    signature: string;
    instruction_data: string;
  };
  pdas: {
    market: string;
    delegate: string;
    event_authority: string;
    fee_shards: string[];
    agents: { agent_id: string; agent: string; collateral_vault: string; escrow_vault: string }[];
    executions: { execution_id: string; escrow: string }[];
    /** Disputes are keyed by the agent and the disputed leaf's index (u64, decimal). */
    disputes: { agent: string; leaf_index: string; dispute: string }[];
    subscriptions: { agent: string; payer: string; subscription: string }[];
  };
  instructions: {
    keys: Record<
      | "authority"
      | "relayer"
      | "arbiter"
      | "usdc_mint"
      | "treasury"
      | "creator"
      | "creator_token_account"
      | "payout_account"
      | "payer"
      | "payer_token_account"
      | "new_authority",
      string
    >;
    agent_id: string;
    execution_id: string;
    api_key_id: string;
    request_hash: string;
    result_hash: string;
    evidence_hash: string;
    /** The disputed leaf's index (u64, decimal), for open_dispute, resolve_dispute and close_dispute. */
    leaf_index: string;
    cases: GoldenInstructionCase[];
  };
}

export const GOLDEN_PATH = new URL("../../../tests/vectors/golden.json", import.meta.url);
export const golden: Golden = JSON.parse(readFileSync(GOLDEN_PATH, "utf8")) as Golden;
/** The program id the vectors were built at (localnet's, the IDL's address). */
export const GOLDEN_PROGRAM_ID = new PublicKey(golden.program_id);

type Json = Record<string, unknown>;

const inputs = golden.instructions;
const key = (name: keyof typeof inputs.keys) => new PublicKey(inputs.keys[name]);
const agentId = fromHex(inputs.agent_id);
const agent = agentPda(agentId, GOLDEN_PROGRAM_ID);
const executionId = fromHex(inputs.execution_id);
const escrow: EscrowRef = {
  executionId,
  agent,
  payer: key("payer"),
  payerTokenAccount: key("payer_token_account"),
  rentPayer: key("relayer"),
};

const leafIndex = BigInt(inputs.leaf_index);

/** The shared inputs of the instruction cases, as this package's values. */
export const goldenInputs = { agentId, agent, executionId, escrow, leafIndex };


const marketParams = (v: Json): MarketParams => ({
  relayer: new PublicKey(v.relayer as string),
  arbiter: new PublicKey(v.arbiter as string),
  minCollateralUsdc: BigInt(v.min_collateral_usdc as string),
  minPricePerCallUsdc: BigInt(v.min_price_per_call_usdc as string),
  escrowGraceSecs: v.escrow_grace_secs as number,
  disputeWindowSecs: v.dispute_window_secs as number,
  collateralCooldownSecs: v.collateral_cooldown_secs as number,
  escrowsPaused: v.escrows_paused as boolean,
});
const pricing = (v: Json): Pricing => {
  switch (v.kind) {
    case "PayPerUse":
      return { kind: "PayPerUse", priceUsdc: BigInt(v.price_usdc as string) };
    case "Subscription":
      return {
        kind: "Subscription",
        periodPriceUsdc: BigInt(v.period_price_usdc as string),
        periodSecs: v.period_secs as number,
      };
    case "Hybrid":
      return {
        kind: "Hybrid",
        periodPriceUsdc: BigInt(v.period_price_usdc as string),
        periodSecs: v.period_secs as number,
        includedCalls: v.included_calls as number,
        overagePriceUsdc: BigInt(v.overage_price_usdc as string),
      };
    default:
      throw new Error(`unknown pricing ${String(v.kind)}`);
  }
};
const terms = (v: Json): AgentTerms => ({
  signingKey: fromHex(v.signing_key as string),
  endpoint: v.endpoint as string,
  listingHash: fromHex(v.listing_hash as string),
  pricing: pricing(v.pricing as Json),
  maxExecutionSecs: v.max_execution_secs as number,
});

/**
 * Builds golden case `c` for the program at `programId` (GOLDEN_PROGRAM_ID for the vectors' own):
 * the agent and the escrow are that program's too, so that every derived address is the same
 * derivation under it.
 */
export function buildGoldenCase(c: GoldenInstructionCase, programId: PublicKey): TransactionInstruction {
  const a = c.args;
  const usdcMint = key("usdc_mint");
  const agent = agentPda(agentId, programId);
  const escrow: EscrowRef = { ...goldenInputs.escrow, agent };
  switch (c.name) {
    case "initialize_market":
      return initializeMarketInstruction({
        programId,
        authority: key("authority"),
        usdcMint,
        treasury: key("treasury"),
        params: marketParams(a.params as Json),
      });
    case "update_market":
      return updateMarketInstruction({
        programId,
        authority: key("authority"),
        treasury: key("treasury"),
        params: marketParams(a.params as Json),
        newAuthority: key("new_authority"),
      });
    case "accept_market_authority":
      return acceptMarketAuthorityInstruction({ programId, newAuthority: key("new_authority") });
    case "create_fee_shard":
      return createFeeShardInstruction({ programId, authority: key("authority"), usdcMint, index: a.index as number });
    case "sweep_fees":
      return sweepFeesInstruction({ programId, treasury: key("treasury"), usdcMint, index: a.index as number });
    case "register_agent":
      return registerAgentInstruction({
        programId,
        creator: key("creator"),
        agentId,
        creatorTokenAccount: key("creator_token_account"),
        payoutAccount: key("payout_account"),
        payoutOwner: key("creator"),
        usdcMint,
        terms: terms(a.terms as Json),
        collateralUsdc: BigInt(a.collateral_usdc as string),
      });
    case "update_agent":
      return updateAgentInstruction({
        programId,
        creator: key("creator"),
        agent,
        payoutAccount: key("payout_account"),
        payoutOwner: key("creator"),
        terms: terms(a.terms as Json),
      });
    case "top_up_collateral":
      return topUpCollateralInstruction({
        programId,
        creator: key("creator"),
        agent,
        creatorTokenAccount: key("creator_token_account"),
        usdcMint,
        amountUsdc: BigInt(a.amount_usdc as string),
      });
    case "retire_agent":
      return retireAgentInstruction({ programId, creator: key("creator"), agent });
    case "withdraw_collateral":
      return withdrawCollateralInstruction({
        programId,
        creator: key("creator"),
        agent,
        creatorTokenAccount: key("creator_token_account"),
        usdcMint,
      });
    case "open_escrow":
      return openEscrowInstruction({
        programId,
        relayer: key("relayer"),
        usdcMint,
        agent,
        payer: key("payer"),
        payerTokenAccount: key("payer_token_account"),
        executionId,
        apiKeyId: fromHex(inputs.api_key_id),
        requestHash: fromHex(inputs.request_hash),
        maxAmountUsdc: BigInt(a.max_amount_usdc as string),
      });
    case "refund":
      return refundInstruction({
        programId,
        relayer: key("relayer"),
        usdcMint,
        escrow,
        reason: a.reason as RefundReason,
        withSubscription: a.with_subscription as boolean,
      });
    case "reclaim":
      return reclaimInstruction({ programId, usdcMint, escrow, withSubscription: a.with_subscription as boolean });
    case "subscribe":
      return subscribeInstruction({
        programId,
        relayer: key("relayer"),
        usdcMint,
        agent,
        payer: key("payer"),
        payerTokenAccount: key("payer_token_account"),
        payoutAccount: key("payout_account"),
        feeShardIndex: a.fee_shard_index as number,
        maxAmountUsdc: BigInt(a.max_amount_usdc as string),
      });
    case "open_dispute":
      return openDisputeInstruction({
        programId,
        agent,
        leaf: {
          executionId,
          nonce: BigInt(a.nonce as string),
          payer: key("payer"),
          payerTokenAccount: key("payer_token_account"),
          apiKeyId: fromHex(inputs.api_key_id),
          amountUsdc: BigInt(a.amount_usdc as string),
          chargedUsdc: BigInt(a.charged_usdc as string),
          returnedUsdc: BigInt(a.returned_usdc as string),
          units: BigInt(a.units as string),
          requestHash: fromHex(inputs.request_hash),
          resultHash: fromHex(inputs.result_hash),
          settledAt: BigInt(a.settled_at as string),
        },
        leafIndex,
        proof: (a.proof as string[]).map(fromHex),
        evidenceHash: fromHex(inputs.evidence_hash),
      });
    case "resolve_dispute":
      return resolveDisputeInstruction({
        programId,
        arbiter: key("arbiter"),
        usdcMint,
        agent,
        leafIndex,
        payerTokenAccount: key("payer_token_account"),
        upheld: a.upheld as boolean,
        slashUsdc: BigInt(a.slash_usdc as string),
      });
    case "close_dispute":
      return closeDisputeInstruction({ programId, agent, leafIndex, payer: key("payer") });
    case "create_receipt_log":
      return createReceiptLogInstruction({ programId, payer: key("relayer"), agent });
    case "settle_batch":
      return settleBatchInstruction({
        programId,
        relayer: key("relayer"),
        usdcMint,
        agent,
        payoutAccount: key("payout_account"),
        executionIds: (a.execution_ids as string[]).map(fromHex),
        // As localnet's builder takes them: a result hash per escrow, and units per escrow or none (all 0).
        items: (a.result_hashes as string[]).map((hash, i) => ({ resultHash: fromHex(hash), units: BigInt((a.units as string[])[i] ?? "0") })),
        feeShardIndex: a.fee_shard_index as number,
      });
    case "open_escrow_batch":
      return openEscrowBatchInstruction({
        programId,
        relayer: key("relayer"),
        usdcMint,
        agent,
        items: (a.items as Json[]).map((item) => ({
          payer: new PublicKey(item.payer as string),
          payerTokenAccount: new PublicKey(item.payer_token_account as string),
          executionId: fromHex(item.execution_id as string),
          apiKeyId: fromHex(item.api_key_id as string),
          requestHash: fromHex(item.request_hash as string),
          maxAmountUsdc: BigInt(item.max_amount_usdc as string),
        })),
      });
    default:
      throw new Error(`no builder for ${c.name}`);
  }
}

