use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, ESCROW_SEED, ESCROW_VAULT_SEED, MARKET_SEED, SUBSCRIPTION_SEED},
    error::AgentMarketError,
    events::EscrowRefunded,
    state::{Agent, Escrow, Market, RefundReason, Subscription},
    transfers::pay_from_agent_vault,
};

/// Returns an escrow to its payer when the execution failed. Shared by `refund` and `reclaim`.
pub fn return_escrow<'info>(
    token_program: &Program<'info, Token>,
    escrow: &Escrow,
    escrow_vault: &Account<'info, TokenAccount>,
    payer_token_account: &Account<'info, TokenAccount>,
    usdc_mint: &Account<'info, Mint>,
    agent: &Account<'info, Agent>,
    subscription: Option<&mut Account<'info, Subscription>>,
) -> Result<()> {
    if escrow.used_included_call {
        let subscription = subscription.ok_or(AgentMarketError::SubscriptionMismatch)?;
        subscription.included_calls_remaining = subscription.included_calls_remaining.saturating_add(1);
    }
    pay_from_agent_vault(
        token_program,
        escrow_vault,
        payer_token_account.to_account_info(),
        usdc_mint,
        agent,
        escrow.amount_usdc,
    )
}

#[event_cpi]
#[derive(Accounts)]
pub struct Refund<'info> {
    pub relayer: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = relayer @ AgentMarketError::NotRelayer,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
    )]
    pub market: Box<Account<'info, Market>>,
    #[account(seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        mut,
        seeds = [ESCROW_SEED, escrow.execution_id.as_ref()],
        bump = escrow.bump,
        has_one = agent @ AgentMarketError::EscrowAgentMismatch,
        has_one = payer_token_account @ AgentMarketError::PayerTokenAccountMismatch,
        has_one = rent_payer @ AgentMarketError::RentPayerMismatch,
        close = rent_payer,
    )]
    pub escrow: Box<Account<'info, Escrow>>,
    /// CHECK: receives the escrow's rent; `has_one` on the escrow pins it to the account that paid.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
    #[account(mut, seeds = [ESCROW_VAULT_SEED, agent.key().as_ref()], bump = agent.escrow_vault_bump)]
    pub escrow_vault: Box<Account<'info, TokenAccount>>,
    #[account(mut)]
    pub payer_token_account: Box<Account<'info, TokenAccount>>,
    /// Required when the escrow used an included call of a hybrid subscription, which is given back.
    #[account(mut, seeds = [SUBSCRIPTION_SEED, agent.key().as_ref(), escrow.payer.as_ref()], bump = subscription.bump)]
    pub subscription: Option<Box<Account<'info, Subscription>>>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
}

pub fn handle_refund(ctx: Context<Refund>, reason: RefundReason) -> Result<()> {
    return_escrow(
        &ctx.accounts.token_program,
        &ctx.accounts.escrow,
        &ctx.accounts.escrow_vault,
        &ctx.accounts.payer_token_account,
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        ctx.accounts.subscription.as_deref_mut(),
    )?;
    let escrow = &ctx.accounts.escrow;
    emit_cpi!(EscrowRefunded {
        execution_id: escrow.execution_id,
        agent: escrow.agent,
        payer: escrow.payer,
        api_key_id: escrow.api_key_id,
        amount_usdc: escrow.amount_usdc,
        reason,
        refunded_at: Clock::get()?.unix_timestamp,
    });
    Ok(())
}
