use anchor_lang::prelude::*;
use anchor_spl::token::{self, Mint, Token, TokenAccount, TransferChecked};

use crate::{
    constants::{FEE_SHARD_COUNT, FEE_SHARD_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::FeesSwept,
    state::Market,
};

/// Moves one fee shard's balance to the treasury. Anyone may call it: the destination is fixed.
#[event_cpi]
#[derive(Accounts)]
#[instruction(index: u8)]
pub struct SweepFees<'info> {
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = treasury @ AgentMarketError::TreasuryMismatch,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
        constraint = index < FEE_SHARD_COUNT @ AgentMarketError::FeeShardOutOfRange,
    )]
    pub market: Account<'info, Market>,
    #[account(mut, seeds = [FEE_SHARD_SEED, &[index]], bump = market.fee_shard_bumps[usize::from(index)])]
    pub fee_shard: Account<'info, TokenAccount>,
    #[account(mut)]
    pub treasury: Account<'info, TokenAccount>,
    pub usdc_mint: Account<'info, Mint>,
    pub token_program: Program<'info, Token>,
}

pub fn handle_sweep_fees(ctx: Context<SweepFees>, _index: u8) -> Result<()> {
    let amount_usdc = ctx.accounts.fee_shard.amount;
    if amount_usdc > 0 {
        let seeds: &[&[u8]] = &[MARKET_SEED, &[ctx.accounts.market.bump]];
        token::transfer_checked(
            CpiContext::new_with_signer(
                ctx.accounts.token_program.to_account_info(),
                TransferChecked {
                    from: ctx.accounts.fee_shard.to_account_info(),
                    mint: ctx.accounts.usdc_mint.to_account_info(),
                    to: ctx.accounts.treasury.to_account_info(),
                    authority: ctx.accounts.market.to_account_info(),
                },
                &[seeds],
            ),
            amount_usdc,
            ctx.accounts.usdc_mint.decimals,
        )?;
    }
    emit_cpi!(FeesSwept {
        fee_shard: ctx.accounts.fee_shard.key(),
        treasury: ctx.accounts.treasury.key(),
        amount_usdc,
    });
    Ok(())
}
