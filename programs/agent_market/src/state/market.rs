use anchor_lang::prelude::*;

use crate::constants::{DELEGATE_SEED, FEE_SHARD_COUNT};

/// The marketplace's configuration. Read-only on the execution path (`open_escrow`, `settle`).
#[account]
#[derive(InitSpace)]
pub struct Market {
    pub authority: Pubkey,
    /// Signs `open_escrow`, `settle`, `refund` and `subscribe`.
    pub relayer: Pubkey,
    /// Resolves disputes.
    pub arbiter: Pubkey,
    /// USDC account that swept fees go to.
    pub treasury: Pubkey,
    pub usdc_mint: Pubkey,
    pub min_collateral_usdc: u64,
    /// Floor of every price per call an agent may set, sized to cover the relayer's network cost
    /// of an execution (docs/program.md, "Minimum price per call").
    pub min_price_per_call_usdc: u64,
    /// Time after an agent's max execution time before the payer may reclaim an escrow.
    pub escrow_grace_secs: u32,
    /// Time after settlement during which the payer may open a dispute.
    pub dispute_window_secs: u32,
    /// Time after retirement before collateral can be withdrawn.
    pub collateral_cooldown_secs: u32,
    pub escrows_paused: bool,
    pub bump: u8,
    pub delegate_bump: u8,
    /// Bumps of the fee shard token accounts; 0 for a shard not created yet.
    pub fee_shard_bumps: [u8; FEE_SHARD_COUNT as usize],
    /// The authority `update_market` proposed, which becomes the authority when it signs
    /// `accept_market_authority`; the default key when none is proposed.
    pub pending_authority: Pubkey,
}

/// Settings an authority chooses at `initialize_market` and may change with `update_market`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct MarketParams {
    pub relayer: Pubkey,
    pub arbiter: Pubkey,
    pub min_collateral_usdc: u64,
    pub min_price_per_call_usdc: u64,
    pub escrow_grace_secs: u32,
    pub dispute_window_secs: u32,
    pub collateral_cooldown_secs: u32,
    pub escrows_paused: bool,
}

impl Market {
    /// Whether `key` is the delegate PDA every payer approves (its bump is recorded here, so
    /// this costs one hash instead of a search).
    pub fn is_delegate(&self, key: &Pubkey) -> bool {
        Pubkey::create_program_address(&[DELEGATE_SEED, &[self.delegate_bump]], &crate::ID)
            .is_ok_and(|delegate| delegate == *key)
    }
}
