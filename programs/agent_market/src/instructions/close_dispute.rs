use anchor_lang::prelude::*;

use crate::{
    constants::{DISPUTE_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::DisputeClosed,
    state::{Dispute, Market},
};

/// Returns a resolved dispute's rent to its payer once the disputed leaf's window has passed:
/// from then on no dispute of that leaf can open, so its record has nothing left to prevent.
/// Anyone may send it; it only ever pays the payer.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseDispute<'info> {
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Box<Account<'info, Market>>,
    #[account(
        mut,
        seeds = [DISPUTE_SEED, dispute.agent.as_ref(), &dispute.leaf_index.to_le_bytes()],
        bump = dispute.bump,
        has_one = payer @ AgentMarketError::DisputePayerMismatch,
        constraint = dispute.resolved @ AgentMarketError::DisputeNotResolved,
        close = payer,
    )]
    pub dispute: Box<Account<'info, Dispute>>,
    /// CHECK: the disputing wallet, which gets the dispute's rent back; pinned by `has_one`.
    #[account(mut)]
    pub payer: UncheckedAccount<'info>,
}

pub fn handle_close_dispute(ctx: Context<CloseDispute>) -> Result<()> {
    let dispute = &ctx.accounts.dispute;
    let window_ends_at = dispute
        .settled_at
        .checked_add(i64::from(ctx.accounts.market.dispute_window_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gt!(
        Clock::get()?.unix_timestamp,
        window_ends_at,
        AgentMarketError::DisputeWindowOpen
    );
    emit_cpi!(DisputeClosed {
        execution_id: dispute.execution_id,
        agent: dispute.agent,
        leaf_index: dispute.leaf_index,
        payer: dispute.payer,
    });
    Ok(())
}
