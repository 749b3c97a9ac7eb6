use anchor_lang::prelude::*;
use anchor_lang::solana_program::sysvar::instructions as instructions_sysvar;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    constants::{
        AGENT_SEED, ESCROW_SEED, ESCROW_VAULT_SEED, FEE_SHARD_COUNT, FEE_SHARD_SEED, MARKET_SEED, RECEIPT_SEED,
    },
    error::AgentMarketError,
    events::EscrowSettled,
    fees::{split, Split},
    signature::{require_preceding_ed25519, result_digest, RESULT_SIGNATURE},
    state::{Agent, Escrow, Market, Receipt},
    transfers::pay_from_agent_vault,
};

/// Pays the creator and the marketplace for a verified result. The transaction must carry, just
/// before this instruction, an Ed25519 precompile instruction verifying the agent's signature
/// over this execution's result digest.
#[event_cpi]
#[derive(Accounts)]
#[instruction(result_hash: [u8; 32], fee_shard_index: u8)]
pub struct Settle<'info> {
    #[account(mut)]
    pub relayer: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED],
        bump = market.bump,
        has_one = relayer @ AgentMarketError::NotRelayer,
        has_one = usdc_mint @ AgentMarketError::InvalidMint,
        constraint = fee_shard_index < FEE_SHARD_COUNT @ AgentMarketError::FeeShardOutOfRange,
    )]
    pub market: Box<Account<'info, Market>>,
    #[account(
        seeds = [AGENT_SEED, agent.agent_id.as_ref()],
        bump = agent.bump,
        has_one = payout_account @ AgentMarketError::PayoutAccountMismatch,
    )]
    pub agent: Box<Account<'info, Agent>>,
    #[account(
        mut,
        seeds = [ESCROW_SEED, escrow.execution_id.as_ref()],
        bump = escrow.bump,
        has_one = agent @ AgentMarketError::EscrowAgentMismatch,
        has_one = rent_payer @ AgentMarketError::RentPayerMismatch,
        close = rent_payer,
    )]
    pub escrow: Box<Account<'info, Escrow>>,
    /// CHECK: receives the escrow's rent; `has_one` on the escrow pins it to the account that paid.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
    #[account(
        init,
        payer = relayer,
        space = 8 + Receipt::INIT_SPACE,
        seeds = [RECEIPT_SEED, escrow.execution_id.as_ref()],
        bump,
    )]
    pub receipt: Box<Account<'info, Receipt>>,
    #[account(mut, seeds = [ESCROW_VAULT_SEED, agent.key().as_ref()], bump = agent.escrow_vault_bump)]
    pub escrow_vault: Box<Account<'info, TokenAccount>>,
    #[account(mut)]
    pub payout_account: Box<Account<'info, TokenAccount>>,
    #[account(
        mut,
        seeds = [FEE_SHARD_SEED, &[fee_shard_index]],
        bump = market.fee_shard_bumps[usize::from(fee_shard_index)],
    )]
    pub fee_shard: Box<Account<'info, TokenAccount>>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    /// CHECK: the instructions sysvar, read to find the Ed25519 verification.
    #[account(address = instructions_sysvar::ID @ AgentMarketError::InvalidInstructionsSysvar)]
    pub instructions: UncheckedAccount<'info>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handle_settle(ctx: Context<Settle>, result_hash: [u8; 32], _fee_shard_index: u8) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let escrow = &ctx.accounts.escrow;
    require_gte!(escrow.deadline, now, AgentMarketError::EscrowExpired);

    let digest = result_digest(&escrow.execution_id, &escrow.agent, &escrow.request_hash, &result_hash);
    require_preceding_ed25519(
        &ctx.accounts.instructions.to_account_info(),
        &ctx.accounts.agent.signing_key,
        &digest,
        &RESULT_SIGNATURE,
    )?;

    let Split {
        creator_share_usdc,
        fee_usdc,
    } = split(escrow.amount_usdc);
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.escrow_vault,
        ctx.accounts.payout_account.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        creator_share_usdc,
    )?;
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.escrow_vault,
        ctx.accounts.fee_shard.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        fee_usdc,
    )?;

    let escrow = &ctx.accounts.escrow;
    ctx.accounts.receipt.set_inner(Receipt {
        execution_id: escrow.execution_id,
        agent: escrow.agent,
        payer: escrow.payer,
        payer_token_account: escrow.payer_token_account,
        amount_usdc: escrow.amount_usdc,
        fee_usdc,
        result_hash,
        settled_at: now,
        rent_payer: ctx.accounts.relayer.key(),
        disputed: false,
        bump: ctx.bumps.receipt,
    });
    emit_cpi!(EscrowSettled {
        execution_id: escrow.execution_id,
        agent: escrow.agent,
        payer: escrow.payer,
        api_key_id: escrow.api_key_id,
        amount_usdc: escrow.amount_usdc,
        creator_share_usdc,
        fee_usdc,
        result_hash,
        settled_at: now,
    });
    Ok(())
}
