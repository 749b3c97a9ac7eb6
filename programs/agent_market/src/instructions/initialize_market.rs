use anchor_lang::prelude::*;
// The loader's id is all that is used; solana-program marks the module deprecated in favour of a
// crate Anchor does not depend on.
#[allow(deprecated)]
use anchor_lang::solana_program::bpf_loader_upgradeable;
use anchor_spl::token::{Mint, TokenAccount};

use crate::{
    constants::{DELEGATE_SEED, FEE_SHARD_COUNT, MARKET_SEED, MAX_EXECUTION_SECS},
    error::AgentMarketError,
    events::MarketInitialized,
    state::{Market, MarketParams},
};

/// Only the program's upgrade authority may create the market, so no one can take it between a
/// deploy and the deployer's `initialize_market`.
#[event_cpi]
#[derive(Accounts)]
pub struct InitializeMarket<'info> {
    #[account(mut)]
    pub authority: Signer<'info>,
    /// The upgradeable loader's ProgramData account of this program, which names its upgrade
    /// authority; its address is derived from the program id, so no other account passes.
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(authority.key()) @ AgentMarketError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    #[account(init, payer = authority, space = 8 + Market::INIT_SPACE, seeds = [MARKET_SEED], bump)]
    pub market: Account<'info, Market>,
    pub usdc_mint: Account<'info, Mint>,
    #[account(constraint = treasury.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch)]
    pub treasury: Account<'info, TokenAccount>,
    pub system_program: Program<'info, System>,
}

/// The last escrow of a retired agent opens at the latest when it retires, or when the last
/// subscription sold for it expires (`withdraw_collateral` counts the cooldown from the later of
/// the two); it can settle up to max execution time + grace after that (`settle` accepts the
/// deadline itself) and be disputed up to the dispute window after settling (`open_dispute`
/// accepts the window's last second). Withdrawal must come strictly after that last second, so
/// no dispute can open against an emptied vault.
pub fn validate_params(params: &MarketParams) -> Result<()> {
    let last_dispute_after_secs =
        u64::from(MAX_EXECUTION_SECS) + u64::from(params.escrow_grace_secs) + u64::from(params.dispute_window_secs);
    require!(
        params.min_collateral_usdc > 0
            && params.dispute_window_secs > 0
            && u64::from(params.collateral_cooldown_secs) > last_dispute_after_secs,
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
        pending_authority: Pubkey::default(),
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
