use anchor_lang::prelude::*;

use crate::{
    constants::AGENT_SEED,
    error::AgentMarketError,
    events::AgentRetired,
    state::{Agent, AgentStatus},
};

/// Stops new escrows for the agent; open ones can still settle or be refunded.
#[event_cpi]
#[derive(Accounts)]
pub struct RetireAgent<'info> {
    pub creator: Signer<'info>,
    #[account(
        mut,
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = creator @ AgentMarketError::NotAgentCreator,
        constraint = agent.status == AgentStatus::Active @ AgentMarketError::AgentRetired,
    )]
    pub agent: Account<'info, Agent>,
}

pub fn handle_retire_agent(ctx: Context<RetireAgent>) -> Result<()> {
    let retired_at = Clock::get()?.unix_timestamp;
    let agent = &mut ctx.accounts.agent;
    agent.status = AgentStatus::Retired;
    agent.retired_at = retired_at;
    emit_cpi!(AgentRetired {
        agent: agent.key(),
        retired_at,
    });
    Ok(())
}
