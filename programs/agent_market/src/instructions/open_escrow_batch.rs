use anchor_lang::prelude::*;
use anchor_lang::system_program::{self, Allocate, Assign, CreateAccount, Transfer};
use anchor_spl::token::{Mint, Token, TokenAccount};

use super::open_escrow::price_call;
use crate::{
    constants::{AGENT_SEED, DELEGATE_SEED, ESCROW_SEED, ESCROW_VAULT_SEED, MARKET_SEED, MAX_OPEN_BATCH, SUBSCRIPTION_SEED},
    error::AgentMarketError,
    events::EscrowOpened,
    state::{Agent, CallPrice, Escrow, Market, Subscription},
    transfers::{pull_from_payer, require_funds},
};

/// Remaining accounts per item: the escrow to create, the payer's token account, the payer's
/// subscription to the agent (which may not exist).
pub const OPEN_BATCH_ACCOUNTS_PER_ITEM: usize = 3;

/// One execution of a batched open: exactly `open_escrow`'s arguments.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenEscrowItem {
    pub execution_id: [u8; 16],
    pub api_key_id: [u8; 16],
    pub request_hash: [u8; 32],
    pub max_amount_usdc: u64,
}

/// Opens up to `MAX_OPEN_BATCH` escrows of one agent, each under `open_escrow`'s rules, with the
/// accounts of item `i` at remaining accounts `3i‥3i+2` (escrow, payer token account,
/// subscription). The relayer pays every escrow's rent and gets it back when the escrow closes.
#[event_cpi]
#[derive(Accounts)]
pub struct OpenEscrowBatch<'info> {
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
    /// CHECK: the PDA payers approve as delegate; it only signs the transfers and holds no data.
    #[account(seeds = [DELEGATE_SEED], bump = market.delegate_bump)]
    pub delegate: UncheckedAccount<'info>,
    pub usdc_mint: Box<Account<'info, Mint>>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

/// A subscription read once per batch, so that two items on it see each other's included calls.
struct TrackedSubscription<'info> {
    info: &'info AccountInfo<'info>,
    subscription: Option<Subscription>,
    used_included_call: bool,
}

/// A payer token account read once per batch, with what the batch pulls from it so far.
struct TrackedPayer<'info> {
    account: Account<'info, TokenAccount>,
    pulled_usdc: u64,
}

/// What the checks decided for one item, before anything moves.
struct PlannedEscrow {
    payer_index: usize,
    escrow_bump: u8,
    price: CallPrice,
}

/// Creates the escrow account at its PDA as `init` does, also when someone sent lamports to the
/// address ahead (a plain `create_account` would then fail).
fn create_escrow_account<'info>(
    relayer: &AccountInfo<'info>,
    escrow: &AccountInfo<'info>,
    system_program_info: &AccountInfo<'info>,
    seeds: &[&[u8]],
) -> Result<()> {
    let space = 8 + Escrow::INIT_SPACE;
    let rent_lamports = Rent::get()?.minimum_balance(space);
    let current_lamports = escrow.lamports();
    if current_lamports == 0 {
        return system_program::create_account(
            CpiContext::new_with_signer(
                system_program_info.clone(),
                CreateAccount {
                    from: relayer.clone(),
                    to: escrow.clone(),
                },
                &[seeds],
            ),
            rent_lamports,
            space as u64,
            &crate::ID,
        );
    }
    let top_up_lamports = rent_lamports.saturating_sub(current_lamports);
    if top_up_lamports > 0 {
        system_program::transfer(
            CpiContext::new(
                system_program_info.clone(),
                Transfer {
                    from: relayer.clone(),
                    to: escrow.clone(),
                },
            ),
            top_up_lamports,
        )?;
    }
    system_program::allocate(
        CpiContext::new_with_signer(
            system_program_info.clone(),
            Allocate {
                account_to_allocate: escrow.clone(),
            },
            &[seeds],
        ),
        space as u64,
    )?;
    system_program::assign(
        CpiContext::new_with_signer(
            system_program_info.clone(),
            Assign {
                account_to_assign: escrow.clone(),
            },
            &[seeds],
        ),
        &crate::ID,
    )
}

pub fn handle_open_escrow_batch<'info>(
    ctx: Context<'_, '_, 'info, 'info, OpenEscrowBatch<'info>>,
    items: Vec<OpenEscrowItem>,
) -> Result<()> {
    require!(!items.is_empty(), AgentMarketError::EmptyOpenBatch);
    require_gte!(usize::from(MAX_OPEN_BATCH), items.len(), AgentMarketError::OpenBatchTooLarge);
    let remaining = ctx.remaining_accounts;
    require_eq!(
        remaining.len(),
        items.len() * OPEN_BATCH_ACCOUNTS_PER_ITEM,
        AgentMarketError::OpenBatchAccountCountMismatch
    );
    for (position, item) in items.iter().enumerate() {
        require!(
            items[..position]
                .iter()
                .all(|earlier| earlier.execution_id != item.execution_id),
            AgentMarketError::DuplicateExecutionId
        );
    }

    let now = Clock::get()?.unix_timestamp;
    let agent_key = ctx.accounts.agent.key();
    let usdc_mint = ctx.accounts.usdc_mint.key();
    let delegate = ctx.accounts.delegate.key();
    let deadline = now
        .checked_add(i64::from(ctx.accounts.agent.max_execution_secs))
        .and_then(|t| t.checked_add(i64::from(ctx.accounts.market.escrow_grace_secs)))
        .ok_or(AgentMarketError::MathOverflow)?;

    // Every check, in item order, before any account is created or any USDC moves.
    let mut payers: Vec<TrackedPayer<'info>> = Vec::new();
    let mut subscriptions: Vec<TrackedSubscription<'info>> = Vec::new();
    let mut planned: Vec<PlannedEscrow> = Vec::with_capacity(items.len());
    for (item, accounts) in items.iter().zip(remaining.chunks_exact(OPEN_BATCH_ACCOUNTS_PER_ITEM)) {
        let (escrow_info, token_info, subscription_info) = (&accounts[0], &accounts[1], &accounts[2]);
        let (escrow_address, escrow_bump) =
            Pubkey::find_program_address(&[ESCROW_SEED, item.execution_id.as_ref()], ctx.program_id);
        require_keys_eq!(*escrow_info.key, escrow_address, AgentMarketError::EscrowAddressMismatch);
        require!(escrow_info.is_writable, AgentMarketError::EscrowNotWritable);

        let payer_index = match payers.iter().position(|tracked| tracked.account.key() == *token_info.key) {
            Some(index) => index,
            None => {
                let account = Account::<TokenAccount>::try_from(token_info)?;
                require_keys_eq!(account.mint, usdc_mint, AgentMarketError::TokenAccountMintMismatch);
                require!(token_info.is_writable, ErrorCode::ConstraintMut);
                payers.push(TrackedPayer { account, pulled_usdc: 0 });
                payers.len() - 1
            }
        };
        let payer = payers[payer_index].account.owner;

        let (subscription_address, _) = Pubkey::find_program_address(
            &[SUBSCRIPTION_SEED, agent_key.as_ref(), payer.as_ref()],
            ctx.program_id,
        );
        require_keys_eq!(
            *subscription_info.key,
            subscription_address,
            AgentMarketError::SubscriptionAddressMismatch
        );
        let subscription_index = match subscriptions.iter().position(|tracked| tracked.info.key == subscription_info.key) {
            Some(index) => index,
            None => {
                let subscription = if subscription_info.owner == ctx.program_id {
                    Some(Subscription::try_deserialize(&mut &subscription_info.try_borrow_data()?[..])?)
                } else {
                    None
                };
                subscriptions.push(TrackedSubscription {
                    info: subscription_info,
                    subscription,
                    used_included_call: false,
                });
                subscriptions.len() - 1
            }
        };
        let tracked_subscription = &mut subscriptions[subscription_index];
        // As for `open_escrow`: the payer agreed to a quote, and an included call an earlier item
        // of the batch took first must not charge this one more than it.
        let price = price_call(
            &ctx.accounts.agent,
            tracked_subscription.subscription.as_mut(),
            now,
            item.max_amount_usdc,
        )?;
        if price.used_included_call {
            require!(subscription_info.is_writable, ErrorCode::ConstraintMut);
            tracked_subscription.used_included_call = true;
        }

        // Items sharing a token account are checked against what the earlier ones pull from it.
        let tracked_payer = &mut payers[payer_index];
        tracked_payer.pulled_usdc = tracked_payer
            .pulled_usdc
            .checked_add(price.amount_usdc)
            .ok_or(AgentMarketError::MathOverflow)?;
        require_funds(&tracked_payer.account, &delegate, tracked_payer.pulled_usdc)?;
        planned.push(PlannedEscrow {
            payer_index,
            escrow_bump,
            price,
        });
    }

    for tracked in subscriptions.iter().filter(|tracked| tracked.used_included_call) {
        if let Some(subscription) = &tracked.subscription {
            subscription.try_serialize(&mut &mut tracked.info.try_borrow_mut_data()?[..])?;
        }
    }

    let relayer = ctx.accounts.relayer.to_account_info();
    let system_program_info = ctx.accounts.system_program.to_account_info();
    for ((item, accounts), plan) in items
        .iter()
        .zip(remaining.chunks_exact(OPEN_BATCH_ACCOUNTS_PER_ITEM))
        .zip(&planned)
    {
        let escrow_info = &accounts[0];
        let bump = [plan.escrow_bump];
        let seeds: &[&[u8]] = &[ESCROW_SEED, item.execution_id.as_ref(), &bump];
        create_escrow_account(&relayer, escrow_info, &system_program_info, seeds)?;

        let payer_account = &payers[plan.payer_index].account;
        let nonce = ctx.accounts.agent.record_escrow(deadline)?;
        pull_from_payer(
            &ctx.accounts.token_program,
            payer_account,
            ctx.accounts.escrow_vault.to_account_info(),
            &ctx.accounts.usdc_mint,
            ctx.accounts.delegate.to_account_info(),
            ctx.accounts.market.delegate_bump,
            plan.price.amount_usdc,
        )?;

        let escrow = Escrow {
            execution_id: item.execution_id,
            agent: agent_key,
            nonce,
            payer: payer_account.owner,
            payer_token_account: payer_account.key(),
            api_key_id: item.api_key_id,
            amount_usdc: plan.price.amount_usdc,
            price_per_unit_usdc: plan.price.price_per_unit_usdc,
            max_units: plan.price.max_units,
            request_hash: item.request_hash,
            opened_at: now,
            deadline,
            rent_payer: relayer.key(),
            used_included_call: plan.price.used_included_call,
            bump: plan.escrow_bump,
        };
        escrow.try_serialize(&mut &mut escrow_info.try_borrow_mut_data()?[..])?;
        emit_cpi!(EscrowOpened {
            execution_id: item.execution_id,
            agent: agent_key,
            nonce,
            payer: escrow.payer,
            payer_token_account: escrow.payer_token_account,
            api_key_id: item.api_key_id,
            amount_usdc: plan.price.amount_usdc,
            price_per_unit_usdc: plan.price.price_per_unit_usdc,
            max_units: plan.price.max_units,
            request_hash: item.request_hash,
            used_included_call: plan.price.used_included_call,
            opened_at: now,
            deadline,
        });
    }
    Ok(())
}
