use anchor_lang::prelude::*;
use anchor_spl::token::TokenAccount;

use crate::{
    constants::MARKET_SEED,
    error::AgentMarketError,
    events::MarketUpdated,
    instructions::initialize_market::validate_params,
    state::{Market, MarketParams},
};

#[event_cpi]
#[derive(Accounts)]
pub struct UpdateMarket<'info> {
    pub authority: Signer<'info>,
    #[account(mut, seeds = [MARKET_SEED], bump = market.bump, has_one = authority @ AgentMarketError::NotMarketAuthority)]
    pub market: Account<'info, Market>,
    #[account(constraint = treasury.mint == market.usdc_mint @ AgentMarketError::TokenAccountMintMismatch)]
    pub treasury: Account<'info, TokenAccount>,
}

/// Sets the parameters and proposes `new_authority`, which takes over only when it signs
/// `accept_market_authority`: a mistyped key can never lock the market. Proposing the current
/// authority withdraws any proposal.
pub fn handle_update_market(ctx: Context<UpdateMarket>, params: MarketParams, new_authority: Pubkey) -> Result<()> {
    validate_params(&params)?;
    let market = &mut ctx.accounts.market;
    market.pending_authority = if new_authority == market.authority {
        Pubkey::default()
    } else {
        new_authority
    };
    market.relayer = params.relayer;
    market.arbiter = params.arbiter;
    market.treasury = ctx.accounts.treasury.key();
    market.min_collateral_usdc = params.min_collateral_usdc;
    market.min_price_per_call_usdc = params.min_price_per_call_usdc;
    market.escrow_grace_secs = params.escrow_grace_secs;
    market.dispute_window_secs = params.dispute_window_secs;
    market.collateral_cooldown_secs = params.collateral_cooldown_secs;
    market.escrows_paused = params.escrows_paused;
    emit_cpi!(MarketUpdated {
        market: market.key(),
        authority: market.authority,
        treasury: market.treasury,
        params,
        pending_authority: market.pending_authority,
    });
    Ok(())
}
