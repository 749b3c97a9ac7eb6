use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{FEE_SHARD_COUNT, FEE_SHARD_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::FeeShardCreated,
    state::Market,
};

#[event_cpi]
#[derive(Accounts)]
#[instruction(index: u8)]
pub struct CreateFeeShard<'info> {
    #[account(mut)]
    pub authority: Signer<'info>,
    #[account(
        mut,
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = authority @ AgentMarketError::NotMarketAuthority,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
        constraint = index < FEE_SHARD_COUNT @ AgentMarketError::FeeShardOutOfRange,
    )]
    pub market: Account<'info, Market>,
    #[account(
        init,
        payer = authority,
        seeds = [FEE_SHARD_SEED, &[index]],
        bump,
        token::mint = usdc_mint,
        token::authority = market,
    )]
    pub fee_shard: Account<'info, TokenAccount>,
    pub usdc_mint: Account<'info, Mint>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handle_create_fee_shard(ctx: Context<CreateFeeShard>, index: u8) -> Result<()> {
    ctx.accounts.market.fee_shard_bumps[usize::from(index)] = ctx.bumps.fee_shard;
    emit_cpi!(FeeShardCreated {
        fee_shard: ctx.accounts.fee_shard.key(),
        index,
    });
    Ok(())
}
