use anchor_lang::prelude::*;

use crate::{
    constants::{AGENT_SEED, DISPUTE_SEED, MARKET_SEED, RECEIPT_LOG_SEED},
    error::AgentMarketError,
    events::DisputeOpened,
    state::{Agent, Dispute, DisputedLeaf, Market, ReceiptLog},
};

/// The payer of a settled execution contests it within the dispute window, proving the
/// settlement with its leaf's fields and a Merkle proof against a root the agent's receipt log
/// holds. The signer stands as the leaf's payer: anyone else's signature proves no leaf. The dispute lives at an address derived from the agent and the leaf's index, never from
/// the execution id: an id opened twice is settled into two leaves, each disputable on its own.
/// Its rent, paid by the payer, goes back to the payer once it is resolved and the window passed.
#[event_cpi]
#[derive(Accounts)]
#[instruction(leaf: DisputedLeaf, leaf_index: u64)]
pub struct OpenDispute<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Box<Account<'info, Market>>,
    #[account(mut, seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(seeds = [RECEIPT_LOG_SEED, agent.key().as_ref()], bump = receipt_log.load()?.bump)]
    pub receipt_log: AccountLoader<'info, ReceiptLog>,
    /// Exists already when this leaf was disputed before: its record stays until the window ends.
    /// Only a record just created holds no payer.
    #[account(
        init_if_needed,
        payer = payer,
        space = 8 + Dispute::INIT_SPACE,
        seeds = [DISPUTE_SEED, agent.key().as_ref(), &leaf_index.to_le_bytes()],
        bump,
        constraint = dispute.payer == Pubkey::default() @ AgentMarketError::AlreadyDisputed,
    )]
    pub dispute: Box<Account<'info, Dispute>>,
    pub system_program: Program<'info, System>,
}

pub fn handle_open_dispute(
    ctx: Context<OpenDispute>,
    disputed: DisputedLeaf,
    leaf_index: u64,
    proof: Vec<[u8; 32]>,
    evidence_hash: [u8; 32],
) -> Result<()> {
    let leaf = disputed.of(ctx.accounts.payer.key());
    let agent_key = ctx.accounts.agent.key();
    let proven = ctx
        .accounts
        .receipt_log
        .load()?
        .proves(leaf.hash(&agent_key), leaf_index, &proof)?;
    require!(proven, AgentMarketError::UnknownReceiptRoot);
    let now = Clock::get()?.unix_timestamp;
    let window_ends_at = leaf
        .settled_at
        .checked_add(i64::from(ctx.accounts.market.dispute_window_secs))
        .ok_or(AgentMarketError::MathOverflow)?;
    require_gte!(window_ends_at, now, AgentMarketError::DisputeWindowClosed);

    let agent = &mut ctx.accounts.agent;
    agent.open_disputes = agent
        .open_disputes
        .checked_add(1)
        .ok_or(AgentMarketError::MathOverflow)?;
    ctx.accounts.dispute.set_inner(Dispute {
        agent: agent_key,
        leaf_index,
        execution_id: leaf.execution_id,
        payer: leaf.payer,
        payer_token_account: leaf.payer_token_account,
        amount_usdc: leaf.charged_usdc,
        evidence_hash,
        opened_at: now,
        settled_at: leaf.settled_at,
        resolved: false,
        upheld: false,
        slashed_usdc: 0,
        resolved_at: 0,
        bump: ctx.bumps.dispute,
    });
    emit_cpi!(DisputeOpened {
        execution_id: leaf.execution_id,
        agent: agent_key,
        leaf_index,
        payer: leaf.payer,
        amount_usdc: leaf.charged_usdc,
        evidence_hash,
        opened_at: now,
    });
    Ok(())
}
