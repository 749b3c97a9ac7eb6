use anchor_lang::prelude::*;

use crate::constants::MAX_ENDPOINT_LEN;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum Pricing {
    /// Every call pays `price_usdc`.
    PayPerUse { price_usdc: u64 },
    /// A period's subscription covers every call in it; calls without one are refused.
    Subscription { period_price_usdc: u64, period_secs: u32 },
    /// A period's subscription covers `included_calls`; other calls pay `overage_price_usdc`.
    Hybrid {
        period_price_usdc: u64,
        period_secs: u32,
        included_calls: u32,
        overage_price_usdc: u64,
    },
}

impl Pricing {
    pub fn is_valid(&self) -> bool {
        match *self {
            Pricing::PayPerUse { price_usdc } => price_usdc > 0,
            Pricing::Subscription {
                period_price_usdc,
                period_secs,
            } => period_price_usdc > 0 && period_secs > 0,
            Pricing::Hybrid {
                period_price_usdc,
                period_secs,
                included_calls,
                overage_price_usdc,
            } => period_price_usdc > 0 && period_secs > 0 && included_calls > 0 && overage_price_usdc > 0,
        }
    }
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum AgentStatus {
    Active,
    Retired,
}

#[account]
#[derive(InitSpace)]
pub struct Agent {
    pub creator: Pubkey,
    pub agent_id: [u8; 16],
    /// Ed25519 public key that signs results.
    pub signing_key: [u8; 32],
    /// USDC account that receives the creator's share.
    pub payout_account: Pubkey,
    #[max_len(MAX_ENDPOINT_LEN as usize)]
    pub endpoint: String,
    /// SHA-256 of the off-chain listing (name, description, tags, schemas).
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
    pub collateral_usdc: u64,
    pub status: AgentStatus,
    pub registered_at: i64,
    pub retired_at: i64,
    pub open_disputes: u32,
    pub bump: u8,
    pub collateral_vault_bump: u8,
    pub escrow_vault_bump: u8,
}

/// The listing terms a creator sets at registration and may change with `update_agent`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct AgentTerms {
    pub signing_key: [u8; 32],
    pub endpoint: String,
    pub listing_hash: [u8; 32],
    pub pricing: Pricing,
    pub max_execution_secs: u32,
}
