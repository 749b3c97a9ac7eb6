use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, COLLATERAL_VAULT_SEED, DISPUTE_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::DisputeResolved,
    state::{Agent, Dispute, Market},
    transfers::pay_from_agent_vault,
};

/// The arbiter rules on a dispute. Upheld: up to `slash_usdc` of the agent's collateral, and
/// never more than it holds, goes to the payer. The dispute's record stays, resolved, until its
/// leaf's window has passed (`close_dispute`), so that the leaf cannot be disputed again.
#[event_cpi]
#[derive(Accounts)]
pub struct ResolveDispute<'info> {
    pub arbiter: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = arbiter @ AgentMarketError::NotArbiter,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
    )]
    pub market: Box<Account<'info, Market>>,
    #[account(mut, seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        mut,
        seeds = [DISPUTE_SEED, dispute.agent.as_ref(), &dispute.leaf_index.to_le_bytes()],
        bump = dispute.bump,
        has_one = agent @ AgentMarketError::DisputeAgentMismatch,
        has_one = payer_token_account @ AgentMarketError::PayerTokenAccountMismatch,
        constraint = !dispute.resolved @ AgentMarketError::DisputeAlreadyResolved,
    )]
    pub dispute: Box<Account<'info, Dispute>>,
    #[account(mut)]
    pub payer_token_account: Box<Account<'info, TokenAccount>>,
    #[account(mut, seeds = [COLLATERAL_VAULT_SEED, agent.key().as_ref()], bump = agent.collateral_vault_bump)]
    pub collateral_vault: Box<Account<'info, TokenAccount>>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
}

pub fn handle_resolve_dispute(ctx: Context<ResolveDispute>, upheld: bool, slash_usdc: u64) -> Result<()> {
    require!(upheld == (slash_usdc > 0), AgentMarketError::InvalidSlashAmount);
    let slashed_usdc = slash_usdc.min(ctx.accounts.agent.collateral_usdc);
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.collateral_vault,
        ctx.accounts.payer_token_account.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        slashed_usdc,
    )?;
    let agent = &mut ctx.accounts.agent;
    agent.collateral_usdc = agent
        .collateral_usdc
        .checked_sub(slashed_usdc)
        .ok_or(AgentMarketError::MathOverflow)?;
    agent.open_disputes = agent
        .open_disputes
        .checked_sub(1)
        .ok_or(AgentMarketError::MathOverflow)?;
    let resolved_at = Clock::get()?.unix_timestamp;
    let dispute = &mut ctx.accounts.dispute;
    dispute.resolved = true;
    dispute.upheld = upheld;
    dispute.slashed_usdc = slashed_usdc;
    dispute.resolved_at = resolved_at;
    emit_cpi!(DisputeResolved {
        execution_id: dispute.execution_id,
        agent: dispute.agent,
        leaf_index: dispute.leaf_index,
        payer: dispute.payer,
        upheld,
        slashed_usdc,
        resolved_at,
    });
    Ok(())
}
