use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, COLLATERAL_VAULT_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::CollateralToppedUp,
    state::{Agent, AgentStatus, Market},
    transfers::pay_from_signer,
};

#[event_cpi]
#[derive(Accounts)]
pub struct TopUpCollateral<'info> {
    pub creator: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump, has_one = usdc_mint @ AgentMarketError::InvalidMint)]
    pub market: Box<Account<'info, Market>>,
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = creator @ AgentMarketError::NotAgentCreator,
        constraint = agent.status == AgentStatus::Active @ AgentMarketError::AgentRetired,
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

pub fn handle_top_up_collateral(ctx: Context<TopUpCollateral>, amount_usdc: u64) -> Result<()> {
    require_gt!(amount_usdc, 0, AgentMarketError::InvalidAmount);
    pay_from_signer(
        &ctx.accounts.token_program,
        &ctx.accounts.creator_token_account,
        ctx.accounts.collateral_vault.to_account_info(),
        &ctx.accounts.usdc_mint,
        ctx.accounts.creator.to_account_info(),
        amount_usdc,
    )?;
    let agent = &mut ctx.accounts.agent;
    agent.collateral_usdc = agent
        .collateral_usdc
        .checked_add(amount_usdc)
        .ok_or(AgentMarketError::MathOverflow)?;
    emit_cpi!(CollateralToppedUp {
        agent: agent.key(),
        amount_usdc,
        collateral_usdc: agent.collateral_usdc,
    });
    Ok(())
}
