//! Agent Market's on-chain program: per-execution USDC escrow paid through a delegate approval,
//! settlement against the creator's Ed25519-signed result with the 99/1 split, refunds and
//! payer reclaims, subscriptions, creator collateral and disputes.
use anchor_lang::prelude::*;

pub mod batch_event;
pub mod constants;
pub mod error;
pub mod events;
pub mod fees;
pub mod instructions;
pub mod receipt_tree;
pub mod signature;
pub mod state;
pub mod transfers;

pub use constants::*;
pub use instructions::*;
pub use state::*;

declare_id!("AGMHgN88nwMre716av9HbUE1n1ZD5XTiWswtPVnBtz5R");

#[program]
pub mod agent_market {
    use super::*;

    pub fn initialize_market(ctx: Context<InitializeMarket>, params: MarketParams) -> Result<()> {
        handle_initialize_market(ctx, params)
    }

    pub fn update_market(ctx: Context<UpdateMarket>, params: MarketParams, new_authority: Pubkey) -> Result<()> {
        handle_update_market(ctx, params, new_authority)
    }

    pub fn accept_market_authority(ctx: Context<AcceptMarketAuthority>) -> Result<()> {
        handle_accept_market_authority(ctx)
    }

    pub fn create_fee_shard(ctx: Context<CreateFeeShard>, index: u8) -> Result<()> {
        handle_create_fee_shard(ctx, index)
    }

    pub fn sweep_fees(ctx: Context<SweepFees>, index: u8) -> Result<()> {
        handle_sweep_fees(ctx, index)
    }

    pub fn register_agent(
        ctx: Context<RegisterAgent>,
        agent_id: [u8; 16],
        terms: AgentTerms,
        collateral_usdc: u64,
    ) -> Result<()> {
        handle_register_agent(ctx, agent_id, terms, collateral_usdc)
    }

    pub fn update_agent(ctx: Context<UpdateAgent>, terms: AgentTerms) -> Result<()> {
        handle_update_agent(ctx, terms)
    }

    pub fn top_up_collateral(ctx: Context<TopUpCollateral>, amount_usdc: u64) -> Result<()> {
        handle_top_up_collateral(ctx, amount_usdc)
    }

    pub fn retire_agent(ctx: Context<RetireAgent>) -> Result<()> {
        handle_retire_agent(ctx)
    }

    pub fn withdraw_collateral(ctx: Context<WithdrawCollateral>) -> Result<()> {
        handle_withdraw_collateral(ctx)
    }

    pub fn open_escrow(
        ctx: Context<OpenEscrow>,
        execution_id: [u8; 16],
        api_key_id: [u8; 16],
        request_hash: [u8; 32],
        max_amount_usdc: u64,
    ) -> Result<()> {
        handle_open_escrow(ctx, execution_id, api_key_id, request_hash, max_amount_usdc)
    }

    pub fn open_escrow_batch<'info>(
        ctx: Context<'_, '_, 'info, 'info, OpenEscrowBatch<'info>>,
        items: Vec<OpenEscrowItem>,
    ) -> Result<()> {
        handle_open_escrow_batch(ctx, items)
    }

    pub fn create_receipt_log(ctx: Context<CreateReceiptLog>) -> Result<()> {
        handle_create_receipt_log(ctx)
    }

    pub fn settle_batch<'info>(
        ctx: Context<'_, '_, 'info, 'info, SettleBatch<'info>>,
        result_hashes: Vec<[u8; 32]>,
        units: Vec<u64>,
        fee_shard_index: u8,
    ) -> Result<()> {
        handle_settle_batch(ctx, result_hashes, units, fee_shard_index)
    }

    pub fn refund(ctx: Context<Refund>, reason: RefundReason) -> Result<()> {
        handle_refund(ctx, reason)
    }

    pub fn reclaim(ctx: Context<Reclaim>) -> Result<()> {
        handle_reclaim(ctx)
    }

    pub fn subscribe(ctx: Context<Subscribe>, fee_shard_index: u8, max_amount_usdc: u64) -> Result<()> {
        handle_subscribe(ctx, fee_shard_index, max_amount_usdc)
    }

    pub fn open_dispute(
        ctx: Context<OpenDispute>,
        leaf: DisputedLeaf,
        leaf_index: u64,
        proof: Vec<[u8; 32]>,
        evidence_hash: [u8; 32],
    ) -> Result<()> {
        handle_open_dispute(ctx, leaf, leaf_index, proof, evidence_hash)
    }

    pub fn resolve_dispute(ctx: Context<ResolveDispute>, upheld: bool, slash_usdc: u64) -> Result<()> {
        handle_resolve_dispute(ctx, upheld, slash_usdc)
    }

    pub fn close_dispute(ctx: Context<CloseDispute>) -> Result<()> {
        handle_close_dispute(ctx)
    }
}
