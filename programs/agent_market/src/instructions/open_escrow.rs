use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{AGENT_SEED, DELEGATE_SEED, ESCROW_SEED, ESCROW_VAULT_SEED, MARKET_SEED, SUBSCRIPTION_SEED},
    error::AgentMarketError,
    events::EscrowOpened,
    state::{Agent, AgentStatus, CallPrice, Escrow, Market, Pricing, Subscription},
    transfers::{pull_from_payer, require_funds},
};

#[event_cpi]
#[derive(Accounts)]
#[instruction(execution_id: [u8; 16])]
pub struct OpenEscrow<'info> {
    #[account(mut)]
    pub relayer: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = relayer @ AgentMarketError::NotRelayer,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
        constraint = !market.escrows_paused @ AgentMarketError::EscrowsPaused,
    )]
    pub market: Box<Account<'info, Market>>,
    /// Writable: each open takes the agent's next escrow nonce and may push its last deadline.
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        constraint = agent.collateral_usdc >= market.min_collateral_usdc @ AgentMarketError::CollateralBelowMinimum,
    )]
    pub agent: Box<Account<'info, Agent>>,
    #[account(mut, seeds = [ESCROW_VAULT_SEED, agent.key().as_ref()], bump = agent.escrow_vault_bump)]
    pub escrow_vault: Box<Account<'info, TokenAccount>>,
    #[account(
        init,
        payer = relayer,
        space = 8 + Escrow::INIT_SPACE,
        seeds = [ESCROW_SEED, execution_id.as_ref()],
        bump,
    )]
    pub escrow: Box<Account<'info, Escrow>>,
    #[account(mut, constraint = payer_token_account.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch)]
    pub payer_token_account: Box<Account<'info, TokenAccount>>,
    /// CHECK: the payer's subscription to this agent, which may not exist. Its address is fixed
    /// by the seeds, so the relayer cannot leave out a subscription that covers the call.
    #[account(
        mut,
        seeds = [SUBSCRIPTION_SEED, agent.key().as_ref(), payer_token_account.owner.as_ref()],
        bump,
    )]
    pub subscription: UncheckedAccount<'info>,
    /// CHECK: the PDA payers approve as delegate; it only signs the transfer and holds no data.
    #[account(seeds = [DELEGATE_SEED], bump = market.delegate_bump)]
    pub delegate: UncheckedAccount<'info>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

/// What this call holds, and whether it uses one of a hybrid subscription's included calls. A
/// live subscription covers calls on the terms it was bought under, even after the agent switched
/// its pricing or retired (docs/program.md, "Pricing changes and retirement"); any other call
/// follows the agent's pricing now, and a retired agent takes none. The payer agreed to
/// `max_amount_usdc`: a price raised since, or an included call another execution took first,
/// must not charge more than it, and a metered call holds no more than it.
pub(crate) fn price_call(
    agent: &Agent,
    subscription: Option<&mut Subscription>,
    now: i64,
    max_amount_usdc: u64,
) -> Result<CallPrice> {
    if let Some(subscription) = subscription.filter(|subscription| subscription.covers_call(now)) {
        if subscription.covers_every_call {
            return Ok(CallPrice::fixed(0, false));
        }
        subscription.included_calls_remaining -= 1;
        return Ok(CallPrice::fixed(0, true));
    }
    require!(agent.status == AgentStatus::Active, AgentMarketError::AgentRetired);
    let price = match agent.pricing {
        Pricing::PayPerUse { price_usdc } => CallPrice::fixed(price_usdc, false),
        Pricing::Subscription { .. } => return err!(AgentMarketError::SubscriptionRequired),
        Pricing::Hybrid { overage_price_usdc, .. } => CallPrice::fixed(overage_price_usdc, false),
        Pricing::Metered {
            price_per_unit_usdc,
            max_units_per_call,
        } => CallPrice::metered(price_per_unit_usdc, max_units_per_call, max_amount_usdc)?,
    };
    require_gte!(max_amount_usdc, price.amount_usdc, AgentMarketError::PriceAboveMaximum);
    Ok(price)
}

pub fn handle_open_escrow(
    ctx: Context<OpenEscrow>,
    execution_id: [u8; 16],
    api_key_id: [u8; 16],
    request_hash: [u8; 32],
    max_amount_usdc: u64,
) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let payer = ctx.accounts.payer_token_account.owner;
    let subscription_info = ctx.accounts.subscription.to_account_info();
    let mut subscription = if subscription_info.owner == ctx.program_id {
        Some(Subscription::try_deserialize(
            &mut &subscription_info.try_borrow_data()?[..],
        )?)
    } else {
        None
    };
    let CallPrice {
        amount_usdc,
        used_included_call,
        price_per_unit_usdc,
        max_units,
    } = price_call(&ctx.accounts.agent, subscription.as_mut(), now, max_amount_usdc)?;
    if let (Some(subscription), true) = (&subscription, used_included_call) {
        subscription.try_serialize(&mut &mut subscription_info.try_borrow_mut_data()?[..])?;
    }

    require_funds(
        &ctx.accounts.payer_token_account,
        ctx.accounts.delegate.key,
        amount_usdc,
    )?;
    pull_from_payer(
        &ctx.accounts.token_program,
        &ctx.accounts.payer_token_account,
        ctx.accounts.escrow_vault.to_account_info(),
        &ctx.accounts.usdc_mint,
        ctx.accounts.delegate.to_account_info(),
        ctx.accounts.market.delegate_bump,
        amount_usdc,
    )?;

    let deadline = now
        .checked_add(i64::from(ctx.accounts.agent.max_execution_secs))
        .and_then(|t| t.checked_add(i64::from(ctx.accounts.market.escrow_grace_secs)))
        .ok_or(AgentMarketError::MathOverflow)?;
    let nonce = ctx.accounts.agent.record_escrow(deadline)?;
    let payer_token_account = ctx.accounts.payer_token_account.key();
    ctx.accounts.escrow.set_inner(Escrow {
        execution_id,
        agent: ctx.accounts.agent.key(),
        nonce,
        payer,
        payer_token_account,
        api_key_id,
        amount_usdc,
        price_per_unit_usdc,
        max_units,
        request_hash,
        opened_at: now,
        deadline,
        rent_payer: ctx.accounts.relayer.key(),
        used_included_call,
        bump: ctx.bumps.escrow,
    });
    emit_cpi!(EscrowOpened {
        execution_id,
        agent: ctx.accounts.agent.key(),
        nonce,
        payer,
        payer_token_account,
        api_key_id,
        amount_usdc,
        price_per_unit_usdc,
        max_units,
        request_hash,
        used_included_call,
        opened_at: now,
        deadline,
    });
    Ok(())
}
