use anchor_lang::prelude::*;

use crate::{
    constants::{AGENT_SEED, RECEIPT_LOG_SEED},
    events::ReceiptLogCreated,
    state::{Agent, ReceiptLog},
};

/// Creates an agent's receipt log, which `settle_batch` needs. Anyone may call it and pays the
/// log's rent, once per agent: the log holds no funds and no authority, so whoever creates it
/// (the relayer before an agent's first batch, or the creator) gains nothing over anyone else.
#[event_cpi]
#[derive(Accounts)]
pub struct CreateReceiptLog<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    #[account(seeds = [AGENT_SEED, agent.agent_id.as_ref()], bump = agent.bump)]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        init,
        payer = payer,
        space = ReceiptLog::SPACE,
        seeds = [RECEIPT_LOG_SEED, agent.key().as_ref()],
        bump,
    )]
    pub receipt_log: AccountLoader<'info, ReceiptLog>,
    pub system_program: Program<'info, System>,
}

pub fn handle_create_receipt_log(ctx: Context<CreateReceiptLog>) -> Result<()> {
    let mut log = ctx.accounts.receipt_log.load_init()?;
    log.agent = ctx.accounts.agent.key();
    log.bump = ctx.bumps.receipt_log;
    drop(log);
    emit_cpi!(ReceiptLogCreated {
        agent: ctx.accounts.agent.key(),
        receipt_log: ctx.accounts.receipt_log.key(),
        payer: ctx.accounts.payer.key(),
        rent_lamports: ctx.accounts.receipt_log.to_account_info().lamports(),
    });
    Ok(())
}
