use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, DELEGATE_SEED, FEE_SHARD_COUNT, FEE_SHARD_SEED, MARKET_SEED, SUBSCRIPTION_SEED},
    error::AgentMarketError,
    events::Subscribed,
    fees::{split, Split},
    state::{Agent, AgentStatus, Market, Pricing, Subscription},
    transfers::{pull_from_payer, require_funds},
};

/// Buys one period of the agent's subscription for the payer, paid through the delegate
/// approval and split 99/1 at once. Extends an active subscription by a period while at most one
/// period of it is left, so no payer keeps a retired agent's collateral locked for years ahead.
/// A live subscription bought under other pricing is replaced only once it covers no more calls.
/// Refused when the period price is above `max_amount_usdc`, the price the payer was shown.
#[event_cpi]
#[derive(Accounts)]
#[instruction(fee_shard_index: u8)]
pub struct Subscribe<'info> {
    #[account(mut)]
    pub relayer: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = relayer @ AgentMarketError::NotRelayer,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
        constraint = !market.escrows_paused @ AgentMarketError::EscrowsPaused,
        constraint = fee_shard_index < FEE_SHARD_COUNT @ AgentMarketError::FeeShardOutOfRange,
    )]
    pub market: Box<Account<'info, Market>>,
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = payout_account @ AgentMarketError::PayoutAccountMismatch,
        constraint = agent.status == AgentStatus::Active @ AgentMarketError::AgentRetired,
    )]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        init_if_needed,
        payer = relayer,
        space = 8 + Subscription::INIT_SPACE,
        seeds = [SUBSCRIPTION_SEED, agent.key().as_ref(), payer_token_account.owner.as_ref()],
        bump,
    )]
    pub subscription: Box<Account<'info, Subscription>>,
    #[account(mut, constraint = payer_token_account.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch)]
    pub payer_token_account: Box<Account<'info, TokenAccount>>,
    /// CHECK: the PDA payers approve as delegate; it only signs the transfers and holds no data.
    #[account(seeds = [DELEGATE_SEED], bump = market.delegate_bump)]
    pub delegate: UncheckedAccount<'info>,
    #[account(mut)]
    pub payout_account: Box<Account<'info, TokenAccount>>,
    #[account(
        mut,
        seeds = [FEE_SHARD_SEED, &[fee_shard_index]],
        bump = market.fee_shard_bumps[usize::from(fee_shard_index)],
    )]
    pub fee_shard: Box<Account<'info, TokenAccount>>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handle_subscribe(ctx: Context<Subscribe>, _fee_shard_index: u8, max_amount_usdc: u64) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let (amount_usdc, period_secs, included_calls) = match ctx.accounts.agent.pricing {
        Pricing::PayPerUse { .. } | Pricing::Metered { .. } => {
            return err!(AgentMarketError::PricingHasNoSubscription)
        }
        Pricing::Subscription {
            period_price_usdc,
            period_secs,
        } => (period_price_usdc, period_secs, 0),
        Pricing::Hybrid {
            period_price_usdc,
            period_secs,
            included_calls,
            ..
        } => (period_price_usdc, period_secs, included_calls),
    };
    require_gte!(max_amount_usdc, amount_usdc, AgentMarketError::PriceAboveMaximum);
    let covers_every_call = included_calls == 0;
    let period_secs = i64::from(period_secs);
    let subscription = &ctx.accounts.subscription;
    let extends = subscription.is_active(now) && subscription.covers_every_call == covers_every_call;
    if extends {
        let left_secs = subscription.expires_at.saturating_sub(now);
        require_gte!(period_secs, left_secs, AgentMarketError::SubscriptionPaidAhead);
    } else {
        require!(
            !subscription.covers_call(now),
            AgentMarketError::SubscriptionTermsChanged
        );
    }
    require_funds(
        &ctx.accounts.payer_token_account,
        ctx.accounts.delegate.key,
        amount_usdc,
    )?;
    let Split {
        creator_share_usdc,
        fee_usdc,
    } = split(amount_usdc);
    for (to, share_usdc) in [
        (ctx.accounts.payout_account.to_account_info(), creator_share_usdc),
        (ctx.accounts.fee_shard.to_account_info(), fee_usdc),
    ] {
        pull_from_payer(
            &ctx.accounts.token_program,
            &ctx.accounts.payer_token_account,
            to,
            &ctx.accounts.usdc_mint,
            ctx.accounts.delegate.to_account_info(),
            ctx.accounts.market.delegate_bump,
            share_usdc,
        )?;
    }

    let agent = ctx.accounts.agent.key();
    let payer = ctx.accounts.payer_token_account.owner;
    let subscription = &mut ctx.accounts.subscription;
    if extends {
        subscription.expires_at = subscription
            .expires_at
            .checked_add(period_secs)
            .ok_or(AgentMarketError::MathOverflow)?;
        subscription.included_calls_remaining = subscription.included_calls_remaining.saturating_add(included_calls);
    } else {
        subscription.agent = agent;
        subscription.payer = payer;
        subscription.period_started_at = now;
        subscription.expires_at = now.checked_add(period_secs).ok_or(AgentMarketError::MathOverflow)?;
        subscription.included_calls_remaining = included_calls;
        subscription.bump = ctx.bumps.subscription;
        subscription.covers_every_call = covers_every_call;
    }
    let agent_account = &mut ctx.accounts.agent;
    agent_account.subscriptions_expire_at = agent_account.subscriptions_expire_at.max(subscription.expires_at);
    emit_cpi!(Subscribed {
        agent,
        payer,
        amount_usdc,
        creator_share_usdc,
        fee_usdc,
        expires_at: subscription.expires_at,
        included_calls_remaining: subscription.included_calls_remaining,
    });
    Ok(())
}
