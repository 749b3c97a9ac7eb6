use anchor_lang::prelude::*;

use crate::{
    constants::{AGENT_SEED, DISPUTE_SEED, MARKET_SEED, RECEIPT_LOG_SEED, RECEIPT_SEED},
    error::AgentMarketError,
    events::DisputeOpened,
    fees::split,
    state::{Agent, Dispute, Market, Receipt, ReceiptLeaf, ReceiptLog},
};

/// The payer of an execution settled by `settle_batch` contests it within the dispute window,
/// proving the execution with its leaf's fields and a Merkle proof against a root the agent's
/// receipt log holds. The execution's receipt account, which batched settlement never created,
/// is created here already disputed: it keeps a second dispute of the execution from opening
/// after the first is resolved, lets `resolve_dispute` and `close_receipt` work as for `settle`,
/// and its rent, paid by the payer, goes back to the payer once the window has passed.
#[event_cpi]
#[derive(Accounts)]
#[instruction(leaf: ReceiptLeaf)]
pub struct OpenDisputeFromLog<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    #[account(seeds = [MARKET_SEED], bump = market.bump)]
    pub market: Box<Account<'info, Market>>,
    #[account(mut, seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(seeds = [RECEIPT_LOG_SEED, agent.key().as_ref()], bump = receipt_log.load()?.bump)]
    pub receipt_log: AccountLoader<'info, ReceiptLog>,
    /// Exists already when this execution id was disputed before, or settled by `settle`.
    #[account(
        init_if_needed,
        payer = payer,
        space = 8 + Receipt::INIT_SPACE,
        seeds = [RECEIPT_SEED, leaf.execution_id.as_ref()],
        bump,
        constraint = receipt.rent_payer == Pubkey::default() @ AgentMarketError::AlreadyDisputed,
    )]
    pub receipt: Box<Account<'info, Receipt>>,
    #[account(
        init,
        payer = payer,
        space = 8 + Dispute::INIT_SPACE,
        seeds = [DISPUTE_SEED, leaf.execution_id.as_ref()],
        bump,
    )]
    pub dispute: Box<Account<'info, Dispute>>,
    pub system_program: Program<'info, System>,
}

pub fn handle_open_dispute_from_log(
    ctx: Context<OpenDisputeFromLog>,
    leaf: ReceiptLeaf,
    leaf_index: u64,
    proof: Vec<[u8; 32]>,
    evidence_hash: [u8; 32],
) -> Result<()> {
    require_keys_eq!(
        leaf.payer,
        ctx.accounts.payer.key(),
        AgentMarketError::ReceiptPayerMismatch
    );
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

    ctx.accounts.receipt.set_inner(Receipt {
        execution_id: leaf.execution_id,
        agent: agent_key,
        payer: leaf.payer,
        payer_token_account: leaf.payer_token_account,
        amount_usdc: leaf.amount_usdc,
        fee_usdc: split(leaf.amount_usdc).fee_usdc,
        result_hash: leaf.result_hash,
        settled_at: leaf.settled_at,
        rent_payer: leaf.payer,
        disputed: true,
        bump: ctx.bumps.receipt,
    });
    let agent = &mut ctx.accounts.agent;
    agent.open_disputes = agent
        .open_disputes
        .checked_add(1)
        .ok_or(AgentMarketError::MathOverflow)?;
    ctx.accounts.dispute.set_inner(Dispute {
        execution_id: leaf.execution_id,
        agent: agent_key,
        payer: leaf.payer,
        payer_token_account: leaf.payer_token_account,
        amount_usdc: leaf.amount_usdc,
        evidence_hash,
        opened_at: now,
        bump: ctx.bumps.dispute,
    });
    emit_cpi!(DisputeOpened {
        execution_id: leaf.execution_id,
        agent: agent_key,
        payer: leaf.payer,
        amount_usdc: leaf.amount_usdc,
        evidence_hash,
        opened_at: now,
    });
    Ok(())
}
