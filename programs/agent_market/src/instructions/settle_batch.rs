use anchor_lang::prelude::*;
use anchor_lang::solana_program::sysvar::instructions as instructions_sysvar;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::{
    batch_event::emit_settled_batch,
    constants::{
        AGENT_SEED, ESCROW_VAULT_SEED, FEE_SHARD_COUNT, FEE_SHARD_SEED, MARKET_SEED, MAX_SETTLE_BATCH, RECEIPT_LOG_SEED,
    },
    error::AgentMarketError,
    events::EscrowsSettledToLog,
    fees::{split, Split},
    signature::{require_preceding_batch_ed25519, result_digest, ResultBinding},
    state::{Agent, Charge, Escrow, Market, ReceiptLeaf, ReceiptLog},
    transfers::pay_from_agent_vault,
};

/// Settles up to `MAX_SETTLE_BATCH` escrows of one agent, passed as writable remaining accounts
/// in the order of `result_hashes`, each with the hash of the output its creator answered and the
/// units it reports having used: `units` holds one count per escrow, or nothing when every count
/// is 0, so that a batch of fixed-price calls carries no bytes for them in a transaction of 1,232.
/// A fixed-price call pays its whole escrow whatever it reports; a metered one pays
/// `units × price_per_unit_usdc` and gets the rest of its escrow back in this instruction, to its
/// payer token account, passed after the escrows once for each escrow with something to return,
/// in the escrows' order. The transaction must carry, just before this instruction, an
/// Ed25519 precompile instruction verifying the agent's signature over the batch digest, or one
/// signature per escrow over its result digest; each result digest binds its escrow (nonce,
/// payer, token account, amount), so no signature settles an escrow it was not given for. The creator's shares and the fees go out in one
/// transfer each; every execution becomes a leaf of the agent's receipt log instead of a receipt
/// account, and every escrow's rent goes back to the relayer that paid it.
#[event_cpi]
#[derive(Accounts)]
#[instruction(result_hashes: Vec<[u8; 32]>, units: Vec<u64>, fee_shard_index: u8)]
pub struct SettleBatch<'info> {
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
    #[account(mut, seeds = [RECEIPT_LOG_SEED, agent.key().as_ref()], bump = receipt_log.load()?.bump)]
    pub receipt_log: AccountLoader<'info, ReceiptLog>,
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
}

/// Reads a batched escrow: an account of this program holding an `Escrow` (only `open_escrow`
/// creates one, at its execution's address, so no address derivation is needed) of this agent,
/// whose rent the signing relayer paid, still before its deadline.
fn read_escrow(info: &AccountInfo, agent: &Pubkey, relayer: &Pubkey, now: i64) -> Result<Escrow> {
    require_keys_eq!(*info.owner, crate::ID, ErrorCode::AccountOwnedByWrongProgram);
    require!(info.is_writable, AgentMarketError::EscrowNotWritable);
    let escrow = Escrow::try_deserialize(&mut &info.try_borrow_data()?[..])?;
    require_keys_eq!(escrow.agent, *agent, AgentMarketError::EscrowAgentMismatch);
    require_keys_eq!(escrow.rent_payer, *relayer, AgentMarketError::BatchRentPayerNotRelayer);
    require_gte!(escrow.deadline, now, AgentMarketError::EscrowExpired);
    Ok(escrow)
}

/// Closes a batched escrow as `close =` would: its rent to `destination`, its data gone, back to
/// the system program, so that nothing can read it as an escrow again.
fn close_to(info: &AccountInfo, destination: &AccountInfo) -> Result<()> {
    let rent_lamports = info.lamports();
    **destination.try_borrow_mut_lamports()? = destination
        .lamports()
        .checked_add(rent_lamports)
        .ok_or(AgentMarketError::MathOverflow)?;
    **info.try_borrow_mut_lamports()? = 0;
    info.assign(&System::id());
    info.realloc(0, false)?;
    Ok(())
}

pub fn handle_settle_batch<'info>(
    ctx: Context<'_, '_, 'info, 'info, SettleBatch<'info>>,
    result_hashes: Vec<[u8; 32]>,
    units: Vec<u64>,
    _fee_shard_index: u8,
) -> Result<()> {
    require!(!result_hashes.is_empty(), AgentMarketError::EmptyBatch);
    require_gte!(
        usize::from(MAX_SETTLE_BATCH),
        result_hashes.len(),
        AgentMarketError::BatchTooLarge
    );
    require_gte!(
        ctx.remaining_accounts.len(),
        result_hashes.len(),
        AgentMarketError::ResultHashCountMismatch
    );
    let (escrow_infos, return_infos) = ctx.remaining_accounts.split_at(result_hashes.len());
    require!(
        units.is_empty() || units.len() == escrow_infos.len(),
        AgentMarketError::UnitsCountMismatch
    );
    let units_of = |position: usize| units.get(position).copied().unwrap_or(0);
    for (position, info) in escrow_infos.iter().enumerate() {
        require!(
            escrow_infos[..position].iter().all(|earlier| earlier.key != info.key),
            AgentMarketError::DuplicateEscrow
        );
    }

    let now = Clock::get()?.unix_timestamp;
    let agent_key = ctx.accounts.agent.key();
    let relayer_key = ctx.accounts.relayer.key();
    let escrows = escrow_infos
        .iter()
        .map(|info| read_escrow(info, &agent_key, &relayer_key, now))
        .collect::<Result<Vec<_>>>()?;
    let digests: Vec<[u8; 32]> = escrows
        .iter()
        .zip(&result_hashes)
        .enumerate()
        .map(|(position, (escrow, result_hash))| {
            result_digest(&ResultBinding {
                escrow,
                result_hash,
                units: units_of(position),
            })
        })
        .collect();
    require_preceding_batch_ed25519(
        &ctx.accounts.instructions.to_account_info(),
        &ctx.accounts.agent.signing_key,
        &agent_key,
        &digests,
    )?;

    // Each execution's exact split of its charge, summed: the batch pays what settling them one
    // by one would.
    let charges = escrows
        .iter()
        .enumerate()
        .map(|(position, escrow)| escrow.charge(units_of(position)))
        .collect::<Result<Vec<Charge>>>()?;
    let mut total = Split {
        creator_share_usdc: 0,
        fee_usdc: 0,
    };
    for charge in &charges {
        let Split {
            creator_share_usdc,
            fee_usdc,
        } = split(charge.charged_usdc);
        total.creator_share_usdc = total
            .creator_share_usdc
            .checked_add(creator_share_usdc)
            .ok_or(AgentMarketError::MathOverflow)?;
        total.fee_usdc = total
            .fee_usdc
            .checked_add(fee_usdc)
            .ok_or(AgentMarketError::MathOverflow)?;
    }
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.escrow_vault,
        ctx.accounts.payout_account.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        total.creator_share_usdc,
    )?;
    pay_from_agent_vault(
        &ctx.accounts.token_program,
        &ctx.accounts.escrow_vault,
        ctx.accounts.fee_shard.to_account_info(),
        &ctx.accounts.usdc_mint,
        &ctx.accounts.agent,
        total.fee_usdc,
    )?;
    let mut returns = return_infos.iter();
    for (escrow, charge) in escrows.iter().zip(&charges).filter(|(_, charge)| charge.returned_usdc > 0) {
        let to = returns
            .next()
            .filter(|info| *info.key == escrow.payer_token_account)
            .ok_or(AgentMarketError::ReturnAccountMismatch)?;
        pay_from_agent_vault(
            &ctx.accounts.token_program,
            &ctx.accounts.escrow_vault,
            to.clone(),
            &ctx.accounts.usdc_mint,
            &ctx.accounts.agent,
            charge.returned_usdc,
        )?;
    }
    require!(returns.next().is_none(), AgentMarketError::ReturnAccountMismatch);

    let leaves: Vec<ReceiptLeaf> = escrows
        .iter()
        .zip(&result_hashes)
        .zip(&charges)
        .enumerate()
        .map(|(position, ((escrow, result_hash), charge))| ReceiptLeaf {
            execution_id: escrow.execution_id,
            nonce: escrow.nonce,
            payer: escrow.payer,
            payer_token_account: escrow.payer_token_account,
            api_key_id: escrow.api_key_id,
            amount_usdc: escrow.amount_usdc,
            charged_usdc: charge.charged_usdc,
            returned_usdc: charge.returned_usdc,
            units: units_of(position),
            request_hash: escrow.request_hash,
            result_hash: *result_hash,
            settled_at: now,
        })
        .collect();
    let dispute_window_secs = ctx.accounts.market.dispute_window_secs;
    let (first_index, (log_root, checkpoint)) = {
        let mut log = ctx.accounts.receipt_log.load_mut()?;
        let first_index = log.leaf_count;
        for leaf in &leaves {
            log.append(leaf.hash(&agent_key), now, dispute_window_secs)?;
        }
        (first_index, log.record_root(now)?)
    };

    let relayer = ctx.accounts.relayer.to_account_info();
    for info in escrow_infos {
        close_to(info, &relayer)?;
    }
    emit_settled_batch(
        &ctx.accounts.event_authority,
        ctx.bumps.event_authority,
        &EscrowsSettledToLog {
            agent: agent_key,
            first_leaf_index: first_index,
            log_root,
            checkpoint,
            leaves,
        },
    )?;
    Ok(())
}
