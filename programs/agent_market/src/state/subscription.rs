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
    /// Bought under subscription pricing: every call until `expires_at` is covered, whatever the
    /// agent's pricing is now. False for a hybrid plan, whose `included_calls_remaining` are.
    pub covers_every_call: bool,
}

impl Subscription {
    pub fn is_active(&self, now: i64) -> bool {
        now < self.expires_at
    }

    /// Whether the subscription pays for a call made at `now`: the terms it was bought under are
    /// honoured until it expires, whatever pricing the agent has switched to since.
    pub fn covers_call(&self, now: i64) -> bool {
        self.is_active(now) && (self.covers_every_call || self.included_calls_remaining > 0)
    }
}
