use anchor_lang::prelude::*;

/// A payer's subscription to one agent.
#[account]
#[derive(InitSpace)]
pub struct Subscription {
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub period_started_at: i64,
    pub expires_at: i64,
    /// Hybrid pricing only: included calls left before calls pay the overage price.
    pub included_calls_remaining: u32,
    pub bump: u8,
}

impl Subscription {
    pub fn is_active(&self, now: i64) -> bool {
        now < self.expires_at
    }
}
