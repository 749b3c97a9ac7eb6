use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, COLLATERAL_VAULT_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::CollateralWithdrawn,
    state::{Agent, AgentStatus, Market},
    transfers::pay_from_agent_vault,
};

#[event_cpi]
#[derive(Accounts)]
pub struct WithdrawCollateral<'info> {
    pub creator: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump, has_one = usdc_mint @ AgentMarketError::InvalidMint)]
    pub market: Box<Account<'info, Market>>,
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = creator @ AgentMarketError::NotAgentCreator,
        constraint = agent.status == AgentStatus::Retired @ AgentMarketError::AgentNotRetired,
        constraint = agent.open_disputes == 0 @ AgentMarketError::OpenDisputes,
    )]
    pub agent: Box<Account<'info, Agent>>,
    #[account(mut, seeds = [COLLATERAL_VAULT_SEED, agent.key().as_ref()], bump = agent.collateral_vault_bump)]
    pub collateral_vault: Box<Account<'info, TokenAccount>>,
    #[account(
        mut,
        constraint = creator_token_account.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch,
        constraint = creator_token_account.owner == creator.key() @ AgentMarketError::TokenAccountOwnerMismatch,
    )]
    pub creator_token_account: Box<Account<'info, TokenAccount>>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
}

pub fn handle_withdraw_collateral(ctx: Context<WithdrawCollateral>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    // Covered calls of subscriptions sold before retirement open escrows until they expire.
    let agent = &ctx.accounts.agent;
    let unlocks_at = agent
        .retired_at
        .max(agent.subscriptions_expire_at)
        .checked_add(i64::from(ctx.accounts.market.collateral_cooldown_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gte!(now, unlocks_at, AgentMarketError::CollateralCooldownActive);
    // The cooldown covers escrows opened under the market's grace of today; one opened under a
    // longer grace since lowered is covered by its own deadline.
    let last_dispute_at = agent
        .last_escrow_deadline
        .checked_add(i64::from(ctx.accounts.market.dispute_window_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gt!(now, last_dispute_at, AgentMarketError::EscrowsStillDisputable);
    let amount_usdc = ctx.accounts.agent.collateral_usdc;
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.collateral_vault,
        ctx.accounts.creator_token_account.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        amount_usdc,
    )?;
    ctx.accounts.agent.collateral_usdc = 0;
    emit_cpi!(CollateralWithdrawn {
        agent: ctx.accounts.agent.key(),
        amount_usdc,
    });
    Ok(())
}
