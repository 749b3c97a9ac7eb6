//! The only ways USDC leaves a payer or an agent's vaults.

use anchor_lang::prelude::*;
use anchor_spl::token::{self, Mint, Token, TokenAccount, TransferChecked};

use crate::{
    constants::{AGENT_SEED, DELEGATE_SEED},
    error::AgentMarketError,
    state::Agent,
};

/// Refuses a payment the payer's account cannot cover, naming which limit is short.
pub fn require_funds(payer_token_account: &TokenAccount, delegate: &Pubkey, amount_usdc: u64) -> Result<()> {
    require_gte!(
        payer_token_account.amount,
        amount_usdc,
        AgentMarketError::InsufficientBalance
    );
    let allowance_usdc = match payer_token_account.delegate {
        anchor_lang::solana_program::program_option::COption::Some(approved) if approved == *delegate => {
            payer_token_account.delegated_amount
        }
        _ => 0,
    };
    require_gte!(allowance_usdc, amount_usdc, AgentMarketError::InsufficientAllowance);
    Ok(())
}

/// Moves `amount_usdc` out of the payer's account through the delegate approval it gave the
/// market's delegate PDA.
pub fn pull_from_payer<'info>(
    token_program: &Program<'info, Token>,
    payer_token_account: &Account<'info, TokenAccount>,
    to: AccountInfo<'info>,
    usdc_mint: &Account<'info, Mint>,
    delegate: AccountInfo<'info>,
    delegate_bump: u8,
    amount_usdc: u64,
) -> Result<()> {
    if amount_usdc == 0 {
        return Ok(());
    }
    let seeds: &[&[u8]] = &[DELEGATE_SEED, &[delegate_bump]];
    token::transfer_checked(
        CpiContext::new_with_signer(
            token_program.to_account_info(),
            TransferChecked {
                from: payer_token_account.to_account_info(),
                mint: usdc_mint.to_account_info(),
                to,
                authority: delegate,
            },
            &[seeds],
        ),
        amount_usdc,
        usdc_mint.decimals,
    )
}

/// Moves `amount_usdc` out of one of the agent's vaults, which the agent PDA owns.
pub fn pay_from_agent_vault<'info>(
    token_program: &Program<'info, Token>,
    vault: &Account<'info, TokenAccount>,
    to: AccountInfo<'info>,
    usdc_mint: &Account<'info, Mint>,
    agent: &Account<'info, Agent>,
    amount_usdc: u64,
) -> Result<()> {
    if amount_usdc == 0 {
        return Ok(());
    }
    let seeds: &[&[u8]] = &[AGENT_SEED, &agent.agent_id, &[agent.bump]];
    token::transfer_checked(
        CpiContext::new_with_signer(
            token_program.to_account_info(),
            TransferChecked {
                from: vault.to_account_info(),
                mint: usdc_mint.to_account_info(),
                to,
                authority: agent.to_account_info(),
            },
            &[seeds],
        ),
        amount_usdc,
        usdc_mint.decimals,
    )
}

/// Moves `amount_usdc` from an account whose owner signs this transaction.
pub fn pay_from_signer<'info>(
    token_program: &Program<'info, Token>,
    from: &Account<'info, TokenAccount>,
    to: AccountInfo<'info>,
    usdc_mint: &Account<'info, Mint>,
    owner: AccountInfo<'info>,
    amount_usdc: u64,
) -> Result<()> {
    token::transfer_checked(
        CpiContext::new(
            token_program.to_account_info(),
            TransferChecked {
                from: from.to_account_info(),
                mint: usdc_mint.to_account_info(),
                to,
                authority: owner,
            },
        ),
        amount_usdc,
        usdc_mint.decimals,
    )
}
