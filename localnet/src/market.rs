//! A Rust client of the agent_market program: its addresses, one builder per instruction, and
//! the bootstrap of a market on a fresh chain.

use {
    agent_market::{accounts, constants::*, instruction, AgentTerms, MarketParams, RefundReason, ID as PROGRAM_ID},
    anchor_lang::{InstructionData, ToAccountMetas},
    solana_instruction::Instruction,
    solana_pubkey::Pubkey,
};

pub use agent_market::signature::{batch_digest, result_digest, signing_key_proof_digest, ResultBinding};

/// Program-derived addresses of the program.
pub mod pda {
    use super::*;

    fn find(seeds: &[&[u8]]) -> Pubkey {
        Pubkey::find_program_address(seeds, &PROGRAM_ID).0
    }

    pub fn market() -> Pubkey {
        find(&[MARKET_SEED])
    }
    pub fn delegate() -> Pubkey {
        find(&[DELEGATE_SEED])
    }
    pub fn event_authority() -> Pubkey {
        find(&[b"__event_authority"])
    }
    pub fn fee_shard(index: u8) -> Pubkey {
        find(&[FEE_SHARD_SEED, &[index]])
    }
    pub fn agent(agent_id: &[u8; 16]) -> Pubkey {
        find(&[AGENT_SEED, agent_id])
    }
    pub fn collateral_vault(agent: &Pubkey) -> Pubkey {
        find(&[COLLATERAL_VAULT_SEED, agent.as_ref()])
    }
    pub fn escrow_vault(agent: &Pubkey) -> Pubkey {
        find(&[ESCROW_VAULT_SEED, agent.as_ref()])
    }
    pub fn escrow(execution_id: &[u8; 16]) -> Pubkey {
        find(&[ESCROW_SEED, execution_id])
    }
    pub fn receipt_log(agent: &Pubkey) -> Pubkey {
        find(&[RECEIPT_LOG_SEED, agent.as_ref()])
    }
    /// The dispute of leaf `leaf_index` of `agent`'s receipt log.
    pub fn dispute(agent: &Pubkey, leaf_index: u64) -> Pubkey {
        find(&[DISPUTE_SEED, agent.as_ref(), &leaf_index.to_le_bytes()])
    }
    pub fn subscription(agent: &Pubkey, payer: &Pubkey) -> Pubkey {
        find(&[SUBSCRIPTION_SEED, agent.as_ref(), payer.as_ref()])
    }
    /// The upgradeable loader's ProgramData account of the program, which names its upgrade
    /// authority.
    pub fn program_data() -> Pubkey {
        Pubkey::find_program_address(&[PROGRAM_ID.as_ref()], &solana_sdk_ids::bpf_loader_upgradeable::ID).0
    }
}

pub(crate) fn program_ix(accounts: impl ToAccountMetas, data: impl InstructionData) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: accounts.to_account_metas(None),
        data: data.data(),
    }
}

/// The addresses an instruction of the market needs besides its own.
#[derive(Clone, Debug)]
pub struct MarketKeys {
    pub authority: Pubkey,
    pub relayer: Pubkey,
    pub arbiter: Pubkey,
    pub usdc_mint: Pubkey,
    pub treasury: Pubkey,
}

/// What identifies an escrow for the instructions that close it.
#[derive(Clone, Debug)]
pub struct EscrowRef {
    pub execution_id: [u8; 16],
    pub agent: Pubkey,
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub rent_payer: Pubkey,
}

impl MarketKeys {
    pub fn initialize_market(&self, params: MarketParams) -> Instruction {
        program_ix(
            accounts::InitializeMarket {
                authority: self.authority,
                program_data: pda::program_data(),
                market: pda::market(),
                usdc_mint: self.usdc_mint,
                treasury: self.treasury,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::InitializeMarket { params },
        )
    }

    pub fn update_market(&self, params: MarketParams, new_authority: Pubkey) -> Instruction {
        program_ix(
            accounts::UpdateMarket {
                authority: self.authority,
                market: pda::market(),
                treasury: self.treasury,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::UpdateMarket { params, new_authority },
        )
    }

    /// The proposed authority's acceptance of the market.
    pub fn accept_market_authority(&self, new_authority: Pubkey) -> Instruction {
        program_ix(
            accounts::AcceptMarketAuthority {
                new_authority,
                market: pda::market(),
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::AcceptMarketAuthority {},
        )
    }

    pub fn create_fee_shard(&self, index: u8) -> Instruction {
        program_ix(
            accounts::CreateFeeShard {
                authority: self.authority,
                market: pda::market(),
                fee_shard: pda::fee_shard(index),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::CreateFeeShard { index },
        )
    }

    pub fn sweep_fees(&self, index: u8) -> Instruction {
        program_ix(
            accounts::SweepFees {
                market: pda::market(),
                fee_shard: pda::fee_shard(index),
                treasury: self.treasury,
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::SweepFees { index },
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn register_agent(
        &self,
        creator: Pubkey,
        agent_id: [u8; 16],
        creator_token_account: Pubkey,
        payout_account: Pubkey,
        payout_owner: Pubkey,
        terms: AgentTerms,
        collateral_usdc: u64,
    ) -> Instruction {
        let agent = pda::agent(&agent_id);
        program_ix(
            accounts::RegisterAgent {
                creator,
                market: pda::market(),
                agent,
                collateral_vault: pda::collateral_vault(&agent),
                escrow_vault: pda::escrow_vault(&agent),
                creator_token_account,
                payout_account,
                payout_owner,
                usdc_mint: self.usdc_mint,
                instructions: solana_sdk_ids::sysvar::instructions::ID,
                token_program: spl_token::ID,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::RegisterAgent {
                agent_id,
                terms,
                collateral_usdc,
            },
        )
    }

    pub fn update_agent(
        &self,
        creator: Pubkey,
        agent: Pubkey,
        payout_account: Pubkey,
        payout_owner: Pubkey,
        terms: AgentTerms,
    ) -> Instruction {
        program_ix(
            accounts::UpdateAgent {
                creator,
                market: pda::market(),
                agent,
                payout_account,
                payout_owner,
                instructions: solana_sdk_ids::sysvar::instructions::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::UpdateAgent { terms },
        )
    }

    pub fn top_up_collateral(
        &self,
        creator: Pubkey,
        agent: Pubkey,
        creator_token_account: Pubkey,
        amount_usdc: u64,
    ) -> Instruction {
        program_ix(
            accounts::TopUpCollateral {
                creator,
                market: pda::market(),
                agent,
                collateral_vault: pda::collateral_vault(&agent),
                creator_token_account,
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::TopUpCollateral { amount_usdc },
        )
    }

    pub fn retire_agent(&self, creator: Pubkey, agent: Pubkey) -> Instruction {
        program_ix(
            accounts::RetireAgent {
                creator,
                agent,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::RetireAgent {},
        )
    }

    pub fn withdraw_collateral(&self, creator: Pubkey, agent: Pubkey, creator_token_account: Pubkey) -> Instruction {
        program_ix(
            accounts::WithdrawCollateral {
                creator,
                market: pda::market(),
                agent,
                collateral_vault: pda::collateral_vault(&agent),
                creator_token_account,
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::WithdrawCollateral {},
        )
    }

    /// `max_amount_usdc` is the price the payer was quoted: the program refuses to charge more.
    #[allow(clippy::too_many_arguments)]
    pub fn open_escrow(
        &self,
        agent: Pubkey,
        payer: Pubkey,
        payer_token_account: Pubkey,
        execution_id: [u8; 16],
        api_key_id: [u8; 16],
        request_hash: [u8; 32],
        max_amount_usdc: u64,
    ) -> Instruction {
        program_ix(
            accounts::OpenEscrow {
                relayer: self.relayer,
                market: pda::market(),
                agent,
                escrow_vault: pda::escrow_vault(&agent),
                escrow: pda::escrow(&execution_id),
                payer_token_account,
                subscription: pda::subscription(&agent, &payer),
                delegate: pda::delegate(),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::OpenEscrow {
                execution_id,
                api_key_id,
                request_hash,
                max_amount_usdc,
            },
        )
    }

    /// The Ed25519 precompile instruction that must come right before `register_agent`, and before
    /// `update_agent` when it sets a new key: `signature` is the key's over
    /// `signing_key_proof_digest(agent, creator)`.
    pub fn verify_signing_key_proof(
        signing_key: &[u8; 32],
        signature: &[u8; 64],
        agent: &Pubkey,
        creator: &Pubkey,
    ) -> Instruction {
        let digest = signing_key_proof_digest(agent, creator);
        solana_ed25519_program::new_ed25519_instruction_with_signature(&digest, signature, signing_key)
    }

    /// The Ed25519 precompile instruction verifying one signature over `digest`: what comes right
    /// before the `settle_batch` of a lone result.
    pub fn verify_result_signature(signing_key: &[u8; 32], signature: &[u8; 64], digest: &[u8; 32]) -> Instruction {
        solana_ed25519_program::new_ed25519_instruction_with_signature(digest, signature, signing_key)
    }

    /// `subscription` is needed when the escrow used an included call of a hybrid plan.
    pub fn refund(&self, escrow: &EscrowRef, reason: RefundReason, with_subscription: bool) -> Instruction {
        program_ix(
            accounts::Refund {
                relayer: self.relayer,
                market: pda::market(),
                agent: escrow.agent,
                escrow: pda::escrow(&escrow.execution_id),
                rent_payer: escrow.rent_payer,
                escrow_vault: pda::escrow_vault(&escrow.agent),
                payer_token_account: escrow.payer_token_account,
                subscription: with_subscription.then(|| pda::subscription(&escrow.agent, &escrow.payer)),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::Refund { reason },
        )
    }

    pub fn reclaim(&self, escrow: &EscrowRef, with_subscription: bool) -> Instruction {
        program_ix(
            accounts::Reclaim {
                payer: escrow.payer,
                market: pda::market(),
                agent: escrow.agent,
                escrow: pda::escrow(&escrow.execution_id),
                rent_payer: escrow.rent_payer,
                escrow_vault: pda::escrow_vault(&escrow.agent),
                payer_token_account: escrow.payer_token_account,
                subscription: with_subscription.then(|| pda::subscription(&escrow.agent, &escrow.payer)),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::Reclaim {},
        )
    }

    /// `max_amount_usdc` is the period price the payer was shown: the program refuses to charge more.
    #[allow(clippy::too_many_arguments)]
    pub fn subscribe(
        &self,
        agent: Pubkey,
        payer: Pubkey,
        payer_token_account: Pubkey,
        payout_account: Pubkey,
        fee_shard_index: u8,
        max_amount_usdc: u64,
    ) -> Instruction {
        program_ix(
            accounts::Subscribe {
                relayer: self.relayer,
                market: pda::market(),
                agent,
                subscription: pda::subscription(&agent, &payer),
                payer_token_account,
                delegate: pda::delegate(),
                payout_account,
                fee_shard: pda::fee_shard(fee_shard_index),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::Subscribe {
                fee_shard_index,
                max_amount_usdc,
            },
        )
    }

    /// The arbiter's ruling on the dispute of leaf `leaf_index` of `agent`'s log.
    pub fn resolve_dispute(
        &self,
        agent: Pubkey,
        leaf_index: u64,
        payer_token_account: Pubkey,
        upheld: bool,
        slash_usdc: u64,
    ) -> Instruction {
        program_ix(
            accounts::ResolveDispute {
                arbiter: self.arbiter,
                market: pda::market(),
                agent,
                dispute: pda::dispute(&agent, leaf_index),
                payer_token_account,
                collateral_vault: pda::collateral_vault(&agent),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::ResolveDispute { upheld, slash_usdc },
        )
    }

    /// Returns the rent of a resolved dispute, past its leaf's window, to `payer`.
    pub fn close_dispute(&self, agent: Pubkey, leaf_index: u64, payer: Pubkey) -> Instruction {
        program_ix(
            accounts::CloseDispute {
                market: pda::market(),
                dispute: pda::dispute(&agent, leaf_index),
                payer,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::CloseDispute {},
        )
    }
}
