use anchor_lang::prelude::*;

/// A payer's claim against a settled execution, open until the arbiter resolves it.
#[account]
#[derive(InitSpace)]
pub struct Dispute {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub amount_usdc: u64,
    /// SHA-256 of the evidence the payer submitted off-chain.
    pub evidence_hash: [u8; 32],
    pub opened_at: i64,
    pub bump: u8,
}
