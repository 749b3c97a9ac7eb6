use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, TokenAccount};

use crate::{
    constants::{DELEGATE_SEED, FEE_SHARD_COUNT, MARKET_SEED, MAX_EXECUTION_SECS},
    error::AgentMarketError,
    events::MarketInitialized,
    state::{Market, MarketParams},
};

#[event_cpi]
#[derive(Accounts)]
pub struct InitializeMarket<'info> {
    #[account(mut)]
    pub authority: Signer<'info>,
    #[account(init, payer = authority, space = 8 + Market::INIT_SPACE, seeds = [MARKET_SEED], bump)]
    pub market: Account<'info, Market>,
    pub usdc_mint: Account<'info, Mint>,
    #[account(constraint = treasury.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch)]
    pub treasury: Account<'info, TokenAccount>,
    pub system_program: Program<'info, System>,
}

/// A payer may open a dispute until the window closes, and the last escrow of a retired agent
/// settles at most max execution time + grace after retirement, so collateral must stay locked
/// at least that long for every dispute to find it.
pub fn validate_params(params: &MarketParams) -> Result<()> {
    let longest_exposure_secs =
        u64::from(MAX_EXECUTION_SECS) + u64::from(params.escrow_grace_secs) + u64::from(params.dispute_window_secs);
    require!(
        params.min_collateral_usdc > 0
            && params.dispute_window_secs > 0
            && u64::from(params.collateral_cooldown_secs) >= longest_exposure_secs,
        AgentMarketError::InvalidMarketParams
    );
    Ok(())
}

pub fn handle_initialize_market(ctx: Context<InitializeMarket>, params: MarketParams) -> Result<()> {
    validate_params(&params)?;
    let (_, delegate_bump) = Pubkey::find_program_address(&[DELEGATE_SEED], ctx.program_id);
    ctx.accounts.market.set_inner(Market {
        authority: ctx.accounts.authority.key(),
        relayer: params.relayer,
        arbiter: params.arbiter,
        treasury: ctx.accounts.treasury.key(),
        usdc_mint: ctx.accounts.usdc_mint.key(),
        min_collateral_usdc: params.min_collateral_usdc,
        min_price_per_call_usdc: params.min_price_per_call_usdc,
        escrow_grace_secs: params.escrow_grace_secs,
        dispute_window_secs: params.dispute_window_secs,
        collateral_cooldown_secs: params.collateral_cooldown_secs,
        escrows_paused: params.escrows_paused,
        bump: ctx.bumps.market,
        delegate_bump,
        fee_shard_bumps: [0; FEE_SHARD_COUNT as usize],
    });
    emit_cpi!(MarketInitialized {
        market: ctx.accounts.market.key(),
        authority: ctx.accounts.authority.key(),
        usdc_mint: ctx.accounts.usdc_mint.key(),
        treasury: ctx.accounts.treasury.key(),
        params,
    });
    Ok(())
}
