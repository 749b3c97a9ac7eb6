use anchor_lang::prelude::*;

use crate::state::{MarketParams, Pricing, ReceiptLeaf, RefundReason};

#[event]
pub struct MarketInitialized {
    pub market: Pubkey,
    pub authority: Pubkey,
    pub usdc_mint: Pubkey,
    pub treasury: Pubkey,
    pub params: MarketParams,
}

#[event]
pub struct MarketUpdated {
    pub market: Pubkey,
    pub authority: Pubkey,
    pub treasury: Pubkey,
    pub params: MarketParams,
    /// The proposed authority; the default key when none is proposed.
    pub pending_authority: Pubkey,
}

#[event]
pub struct MarketAuthorityAccepted {
    pub market: Pubkey,
    pub previous_authority: Pubkey,
    pub authority: Pubkey,
}

#[event]
pub struct FeeShardCreated {
    pub fee_shard: Pubkey,
    pub index: u8,
}

#[event]
pub struct FeesSwept {
    pub fee_shard: Pubkey,
    pub treasury: Pubkey,
    pub amount_usdc: u64,
}

#[event]
pub struct AgentRegistered {
    pub agent: Pubkey,
    pub agent_id: [u8; 16],
    pub creator: Pubkey,
    pub signing_key: [u8; 32],
    pub payout_account: Pubkey,
    pub endpoint: String,
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
    pub collateral_usdc: u64,
    pub registered_at: i64,
}

#[event]
pub struct AgentUpdated {
    pub agent: Pubkey,
    pub signing_key: [u8; 32],
    pub payout_account: Pubkey,
    pub endpoint: String,
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
}

#[event]
pub struct CollateralToppedUp {
    pub agent: Pubkey,
    pub amount_usdc: u64,
    pub collateral_usdc: u64,
}

#[event]
pub struct AgentRetired {
    pub agent: Pubkey,
    pub retired_at: i64,
}

#[event]
pub struct CollateralWithdrawn {
    pub agent: Pubkey,
    pub amount_usdc: u64,
}

#[event]
pub struct EscrowOpened {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub nonce: u64,
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub api_key_id: [u8; 16],
    /// Held: a fixed-price call's price, or the most a metered call may cost.
    pub amount_usdc: u64,
    /// 0 for a fixed-price call; otherwise what each unit costs at settlement.
    pub price_per_unit_usdc: u64,
    /// The most units a metered call may be charged for (0 for a fixed-price call).
    pub max_units: u64,
    pub request_hash: [u8; 32],
    pub used_included_call: bool,
    pub opened_at: i64,
    pub deadline: i64,
}

#[event]
pub struct EscrowRefunded {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub api_key_id: [u8; 16],
    pub amount_usdc: u64,
    pub reason: RefundReason,
    pub refunded_at: i64,
}

#[event]
pub struct EscrowReclaimed {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub api_key_id: [u8; 16],
    pub amount_usdc: u64,
    pub reclaimed_at: i64,
}

#[event]
pub struct Subscribed {
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub amount_usdc: u64,
    pub creator_share_usdc: u64,
    pub fee_usdc: u64,
    pub expires_at: i64,
    pub included_calls_remaining: u32,
}

#[event]
pub struct DisputeOpened {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub leaf_index: u64,
    pub payer: Pubkey,
    pub amount_usdc: u64,
    pub evidence_hash: [u8; 32],
    pub opened_at: i64,
}

#[event]
pub struct DisputeResolved {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub leaf_index: u64,
    pub payer: Pubkey,
    pub upheld: bool,
    pub slashed_usdc: u64,
    pub resolved_at: i64,
}

/// A resolved dispute's record is gone, its leaf's dispute window having passed: its rent went
/// back to the payer.
#[event]
pub struct DisputeClosed {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub leaf_index: u64,
    pub payer: Pubkey,
}

#[event]
pub struct ReceiptLogCreated {
    pub agent: Pubkey,
    pub receipt_log: Pubkey,
    /// Paid the log's rent, once for all the agent's batched settlements.
    pub payer: Pubkey,
    pub rent_lamports: u64,
}

/// Every execution one `settle_batch` settled, in log order: leaf `first_leaf_index + i` of the
/// agent's receipt log is `leaves[i]`, and `log_root` the log's root once the whole batch was
/// appended, so that an indexer rebuilds the leaves and checks its tree against the chain, and a
/// payer builds the proof `open_dispute` needs. Each execution's split follows from its amount.
/// One event a batch, not one an execution: every event is a self-invocation whose units and heap
/// a batch of 16 could not afford (docs/program.md, "Batch limits").
#[event]
pub struct EscrowsSettledToLog {
    pub agent: Pubkey,
    pub first_leaf_index: u64,
    pub log_root: [u8; 32],
    /// The log also keeps `log_root` as a checkpoint (`RECEIPT_CHECKPOINT_SECS`): a proof built
    /// against it stays valid for `RECEIPT_CHECKPOINTS` checkpoints, not 64 batches.
    pub checkpoint: bool,
    pub leaves: Vec<ReceiptLeaf>,
}
