use anchor_lang::prelude::*;

/// USDC held for one execution until it is settled, refunded or reclaimed.
#[account]
#[derive(InitSpace)]
pub struct Escrow {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    /// The agent's count of escrows opened before this one: never the same twice for an agent,
    /// and part of the digest the creator signs.
    pub nonce: u64,
    /// Owner of `payer_token_account`: the wallet that pays.
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    /// The API key that started the execution, for usage attribution.
    pub api_key_id: [u8; 16],
    pub amount_usdc: u64,
    /// SHA-256 of the canonical JSON of the task and parameters.
    pub request_hash: [u8; 32],
    pub opened_at: i64,
    /// After this the payer may reclaim the escrow and it can no longer be settled.
    pub deadline: i64,
    /// Paid the escrow's rent and gets it back when the escrow closes.
    pub rent_payer: Pubkey,
    /// The call used one of a hybrid subscription's included calls.
    pub used_included_call: bool,
    pub bump: u8,
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundReason {
    Timeout,
    CreatorError,
    InvalidSignature,
    OutputInvalid,
    RelayerError,
}
