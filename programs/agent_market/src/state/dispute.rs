use anchor_lang::prelude::*;

/// A payer's claim against one leaf of an agent's receipt log. It outlives its resolution until
/// the leaf's dispute window has passed, so that the same leaf cannot be disputed twice.
#[account]
#[derive(InitSpace)]
pub struct Dispute {
    pub agent: Pubkey,
    /// The disputed leaf's index in the agent's receipt log: with the agent, what the dispute's
    /// address is derived from, since an execution id alone does not name one settlement.
    pub leaf_index: u64,
    pub execution_id: [u8; 16],
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    /// What the disputed settlement charged (a metered call's returned part was never paid).
    pub amount_usdc: u64,
    /// SHA-256 of the evidence the payer submitted off-chain.
    pub evidence_hash: [u8; 32],
    pub opened_at: i64,
    /// When the disputed execution settled: its dispute window runs from here.
    pub settled_at: i64,
    pub resolved: bool,
    pub upheld: bool,
    /// What the ruling moved from the agent's collateral to the payer (0 unless upheld), and
    /// when: the account tells the whole outcome while it lives, so nobody needs the address's
    /// transaction history, which anyone can pad.
    pub slashed_usdc: u64,
    pub resolved_at: i64,
    pub bump: u8,
}
