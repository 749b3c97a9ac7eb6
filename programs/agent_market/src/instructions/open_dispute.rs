use anchor_lang::prelude::*;

use crate::{
    constants::{AGENT_SEED, DISPUTE_SEED, MARKET_SEED, RECEIPT_SEED},
    error::AgentMarketError,
    events::DisputeOpened,
    state::{Agent, Dispute, Market, Receipt},
};

/// The payer of a settled execution contests it, within the dispute window. The receipt binds
/// the dispute to that payer, agent and execution.
#[event_cpi]
#[derive(Accounts)]
pub struct OpenDispute<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Account<'info, Market>,
    #[account(mut, seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Account<'info, Agent>,
    #[account(
        mut,
        seeds = [RECEIPT_SEED, receipt.execution_id.as_ref()],
        bump = receipt.bump,
        has_one = payer @ AgentMarketError::ReceiptPayerMismatch,
        has_one = agent @ AgentMarketError::ReceiptAgentMismatch,
        constraint = !receipt.disputed @ AgentMarketError::AlreadyDisputed,
    )]
    pub receipt: Account<'info, Receipt>,
    #[account(
        init,
        payer = payer,
        space = 8 + Dispute::INIT_SPACE,
        seeds = [DISPUTE_SEED, receipt.execution_id.as_ref()],
        bump,
    )]
    pub dispute: Account<'info, Dispute>,
    pub system_program: Program<'info, System>,
}

pub fn handle_open_dispute(ctx: Context<OpenDispute>, evidence_hash: [u8; 32]) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let receipt = &mut ctx.accounts.receipt;
    let window_ends_at = receipt
        .settled_at
        .checked_add(i64::from(ctx.accounts.market.dispute_window_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gte!(window_ends_at, now, AgentMarketError::DisputeWindowClosed);
    receipt.disputed = true;

    let agent = &mut ctx.accounts.agent;
    agent.open_disputes = agent
        .open_disputes
        .checked_add(1)
        .ok_or(AgentMarketError::MathOverflow)?;
    ctx.accounts.dispute.set_inner(Dispute {
        execution_id: receipt.execution_id,
        agent: receipt.agent,
        payer: receipt.payer,
        payer_token_account: receipt.payer_token_account,
        amount_usdc: receipt.amount_usdc,
        evidence_hash,
        opened_at: now,
        bump: ctx.bumps.dispute,
    });
    emit_cpi!(DisputeOpened {
        execution_id: receipt.execution_id,
        agent: receipt.agent,
        payer: receipt.payer,
        amount_usdc: receipt.amount_usdc,
        evidence_hash,
        opened_at: now,
    });
    Ok(())
}
