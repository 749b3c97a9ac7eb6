use anchor_lang::prelude::*;

/// On-chain evidence of a settled execution, kept through the dispute window.
#[account]
#[derive(InitSpace)]
pub struct Receipt {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub amount_usdc: u64,
    pub fee_usdc: u64,
    pub result_hash: [u8; 32],
    pub settled_at: i64,
    pub rent_payer: Pubkey,
    pub disputed: bool,
    pub bump: u8,
}
