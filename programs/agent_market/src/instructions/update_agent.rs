use anchor_lang::prelude::*;
use anchor_spl::token::TokenAccount;

use crate::{
    constants::{AGENT_SEED, MARKET_SEED},
    error::AgentMarketError,
    events::AgentUpdated,
    instructions::register_agent::validate_terms,
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
}

/// New terms apply to escrows opened afterwards; open escrows keep the amount they hold.
pub fn handle_update_agent(ctx: Context<UpdateAgent>, terms: AgentTerms) -> Result<()> {
    validate_terms(&terms, &ctx.accounts.market)?;
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
