use anchor_lang::prelude::*;
use anchor_lang::solana_program::sysvar::instructions as instructions_sysvar;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{
        AGENT_SEED, COLLATERAL_VAULT_SEED, ESCROW_VAULT_SEED, MARKET_SEED, MAX_ENDPOINT_LEN, MAX_EXECUTION_SECS,
    },
    error::AgentMarketError,
    events::AgentRegistered,
    signature::{require_preceding_ed25519, signing_key_proof_digest, SIGNING_KEY_PROOF},
    state::{Agent, AgentStatus, AgentTerms, Market},
    transfers::pay_from_signer,
};

#[event_cpi]
#[derive(Accounts)]
#[instruction(agent_id: [u8; 16])]
pub struct RegisterAgent<'info> {
    #[account(mut)]
    pub creator: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump, has_one = usdc_mint @ AgentMarketError::InvalidMint)]
    pub market: Box<Account<'info, Market>>,
    #[account(init, payer = creator, space = 8 + Agent::INIT_SPACE, seeds = [AGENT_SEED, agent_id.as_ref()], bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        init,
        payer = creator,
        seeds = [COLLATERAL_VAULT_SEED, agent.key().as_ref()],
        bump,
        token::mint = usdc_mint,
        token::authority = agent,
    )]
    pub collateral_vault: Box<Account<'info, TokenAccount>>,
    #[account(
        init,
        payer = creator,
        seeds = [ESCROW_VAULT_SEED, agent.key().as_ref()],
        bump,
        token::mint = usdc_mint,
        token::authority = agent,
    )]
    pub escrow_vault: Box<Account<'info, TokenAccount>>,
    /// The creator's USDC account the collateral comes from.
    #[account(
        mut,
        constraint = creator_token_account.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch,
        constraint = creator_token_account.owner == creator.key() @ AgentMarketError::TokenAccountOwnerMismatch,
    )]
    pub creator_token_account: Box<Account<'info, TokenAccount>>,
    /// Never a token account of the agent (its vaults) or of the market (its fee shards): the
    /// creator's share paid there could not leave again.
    #[account(
        constraint = payout_account.mint == usdc_mint.key() @ AgentMarketError::TokenAccountMintMismatch,
        constraint = payout_account.owner != agent.key() @ AgentMarketError::PayoutAccountOwnedByProgram,
        constraint = payout_account.owner != market.key() @ AgentMarketError::PayoutAccountOwnedByProgram,
    )]
    pub payout_account: Box<Account<'info, TokenAccount>>,
    /// CHECK: the payout account's owner, passed so its own owner can be read: never an account of
    /// this program (any agent, whose vaults it signs for, or the market) nor the delegate PDA.
    #[account(
        constraint = payout_owner.key() == payout_account.owner @ AgentMarketError::PayoutOwnerMismatch,
        constraint = *payout_owner.owner != crate::ID @ AgentMarketError::PayoutAccountOwnedByProgram,
        constraint = !market.is_delegate(payout_owner.key) @ AgentMarketError::PayoutAccountOwnedByProgram,
    )]
    pub payout_owner: UncheckedAccount<'info>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    /// CHECK: the instructions sysvar, read to find the signing-key proof's Ed25519 verification.
    #[account(address = instructions_sysvar::ID @ AgentMarketError::InvalidInstructionsSysvar)]
    pub instructions: UncheckedAccount<'info>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn validate_terms(terms: &AgentTerms, market: &Market) -> Result<()> {
    require!(
        !terms.endpoint.is_empty() && terms.endpoint.len() <= usize::from(MAX_ENDPOINT_LEN),
        AgentMarketError::InvalidEndpoint
    );
    require!(terms.signing_key != [0; 32], AgentMarketError::InvalidSigningKey);
    require!(terms.pricing.is_valid(), AgentMarketError::InvalidPricing);
    terms.pricing.require_period_at_most_max()?;
    terms.pricing.require_min_price(market.min_price_per_call_usdc)?;
    require!(
        terms.max_execution_secs > 0 && terms.max_execution_secs <= MAX_EXECUTION_SECS,
        AgentMarketError::InvalidMaxExecutionTime
    );
    Ok(())
}

/// The instruction just before must be the Ed25519 verification of the signing key's signature
/// over the signing-key proof of this agent and creator: without it anyone could register a
/// stranger's key and endpoint with their own payout account and be paid for the stranger's work.
pub fn require_signing_key_proof(
    instructions: &AccountInfo,
    signing_key: &[u8; 32],
    agent: &Pubkey,
    creator: &Pubkey,
) -> Result<()> {
    require_preceding_ed25519(
        instructions,
        signing_key,
        &signing_key_proof_digest(agent, creator),
        &SIGNING_KEY_PROOF,
    )
}

pub fn handle_register_agent(
    ctx: Context<RegisterAgent>,
    agent_id: [u8; 16],
    terms: AgentTerms,
    collateral_usdc: u64,
) -> Result<()> {
    validate_terms(&terms, &ctx.accounts.market)?;
    require_signing_key_proof(
        &ctx.accounts.instructions,
        &terms.signing_key,
        &ctx.accounts.agent.key(),
        ctx.accounts.creator.key,
    )?;
    require_gte!(
        collateral_usdc,
        ctx.accounts.market.min_collateral_usdc,
        AgentMarketError::CollateralBelowMinimum
    );
    pay_from_signer(
        &ctx.accounts.token_program,
        &ctx.accounts.creator_token_account,
        ctx.accounts.collateral_vault.to_account_info(),
        &ctx.accounts.usdc_mint,
        ctx.accounts.creator.to_account_info(),
        collateral_usdc,
    )?;
    let registered_at = Clock::get()?.unix_timestamp;
    let AgentTerms {
        signing_key,
        endpoint,
        listing_hash,
        pricing,
        max_execution_secs,
    } = terms;
    ctx.accounts.agent.set_inner(Agent {
        creator: ctx.accounts.creator.key(),
        agent_id,
        signing_key,
        payout_account: ctx.accounts.payout_account.key(),
        endpoint: endpoint.clone(),
        listing_hash,
        pricing,
        max_execution_secs,
        collateral_usdc,
        status: AgentStatus::Active,
        registered_at,
        retired_at: 0,
        open_disputes: 0,
        bump: ctx.bumps.agent,
        collateral_vault_bump: ctx.bumps.collateral_vault,
        escrow_vault_bump: ctx.bumps.escrow_vault,
        subscriptions_expire_at: 0,
        escrows_opened: 0,
        last_escrow_deadline: 0,
    });
    emit_cpi!(AgentRegistered {
        agent: ctx.accounts.agent.key(),
        agent_id,
        creator: ctx.accounts.creator.key(),
        signing_key,
        payout_account: ctx.accounts.payout_account.key(),
        endpoint,
        listing_hash,
        pricing,
        max_execution_secs,
        collateral_usdc,
        registered_at,
    });
    Ok(())
}
