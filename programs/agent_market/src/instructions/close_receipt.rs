use anchor_lang::prelude::*;

use crate::{
    constants::{MARKET_SEED, RECEIPT_SEED},
    error::AgentMarketError,
    events::ReceiptClosed,
    state::{Market, Receipt},
};

/// Returns a receipt's rent once its dispute window has passed. Anyone may call it: the rent
/// can only go back to the account that paid it.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseReceipt<'info> {
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        seeds = [RECEIPT_SEED, receipt.execution_id.as_ref()],
        bump = receipt.bump,
        has_one = rent_payer @ AgentMarketError::RentPayerMismatch,
        close = rent_payer,
    )]
    pub receipt: Account<'info, Receipt>,
    /// CHECK: receives the receipt's rent; `has_one` on the receipt pins it to the account that paid.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
}

pub fn handle_close_receipt(ctx: Context<CloseReceipt>) -> Result<()> {
    let receipt = &ctx.accounts.receipt;
    let window_ends_at = receipt
        .settled_at
        .checked_add(i64::from(ctx.accounts.market.dispute_window_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gt!(
        Clock::get()?.unix_timestamp,
        window_ends_at,
        AgentMarketError::DisputeWindowOpen
    );
    emit_cpi!(ReceiptClosed {
        execution_id: receipt.execution_id,
        agent: receipt.agent,
    });
    Ok(())
}
