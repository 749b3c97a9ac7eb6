use anchor_lang::prelude::*;
use anchor_lang::solana_program::sysvar::instructions as instructions_sysvar;
use anchor_spl::token::TokenAccount;

use crate::{
    constants::{AGENT_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::AgentUpdated,
    instructions::register_agent::{require_signing_key_proof, validate_terms},
    state::{Agent, AgentStatus, AgentTerms, Market},
};

#[event_cpi]
#[derive(Accounts)]
pub struct UpdateAgent<'info> {
    pub creator: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = creator @ AgentMarketError::NotAgentCreator,
        constraint = agent.status == AgentStatus::Active @ AgentMarketError::AgentRetired,
    )]
    pub agent: Account<'info, Agent>,
    /// Never a token account of the agent (its vaults) or of the market (its fee shards): the
    /// creator's share paid there could not leave again.
    #[account(
        constraint = payout_account.mint == market.usdc_mint @ AgentMarketError::TokenAccountMintMismatch,
        constraint = payout_account.owner != agent.key() @ AgentMarketError::PayoutAccountOwnedByProgram,
        constraint = payout_account.owner != market.key() @ AgentMarketError::PayoutAccountOwnedByProgram,
    )]
    pub payout_account: Account<'info, TokenAccount>,
    /// CHECK: the payout account's owner, passed so its own owner can be read: never an account of
    /// this program (any agent, whose vaults it signs for, or the market) nor the delegate PDA.
    #[account(
        constraint = payout_owner.key() == payout_account.owner @ AgentMarketError::PayoutOwnerMismatch,
        constraint = *payout_owner.owner != crate::ID @ AgentMarketError::PayoutAccountOwnedByProgram,
        constraint = !market.is_delegate(payout_owner.key) @ AgentMarketError::PayoutAccountOwnedByProgram,
    )]
    pub payout_owner: UncheckedAccount<'info>,
    /// CHECK: the instructions sysvar, read to find the signing-key proof when the key changes.
    #[account(address = instructions_sysvar::ID @ AgentMarketError::InvalidInstructionsSysvar)]
    pub instructions: UncheckedAccount<'info>,
}

/// New terms apply to escrows opened afterwards; open escrows keep the amount they hold. A new
/// signing key needs its proof, as at registration; keeping the key needs none.
pub fn handle_update_agent(ctx: Context<UpdateAgent>, terms: AgentTerms) -> Result<()> {
    validate_terms(&terms, &ctx.accounts.market)?;
    if terms.signing_key != ctx.accounts.agent.signing_key {
        require_signing_key_proof(
            &ctx.accounts.instructions,
            &terms.signing_key,
            &ctx.accounts.agent.key(),
            ctx.accounts.creator.key,
        )?;
    }
    let agent = &mut ctx.accounts.agent;
    agent.signing_key = terms.signing_key;
    agent.payout_account = ctx.accounts.payout_account.key();
    agent.endpoint = terms.endpoint.clone();
    agent.listing_hash = terms.listing_hash;
    agent.pricing = terms.pricing;
    agent.max_execution_secs = terms.max_execution_secs;
    emit_cpi!(AgentUpdated {
        agent: agent.key(),
        signing_key: terms.signing_key,
        payout_account: agent.payout_account,
        endpoint: terms.endpoint,
        listing_hash: terms.listing_hash,
        pricing: terms.pricing,
        max_execution_secs: terms.max_execution_secs,
    });
    Ok(())
}
