//! A market on a fresh native chain, with a creator, a registered agent and a funded payer.
#![allow(dead_code)]

pub mod batch;
pub mod scene;

use std::collections::HashMap;

use agent_market::{error::AgentMarketError, AgentTerms, Escrow, MarketParams, Pricing, RefundReason};
use anchor_lang::{error::ErrorCode, prelude::Pubkey};
use litesvm::types::{TransactionMetadata, TransactionResult};
use localnet::{
    chain::{Chain, MarketKeypairs, MarketSetup, USDC},
    market::{pda, result_digest, signing_key_proof_digest, EscrowRef, MarketKeys, ResultBinding},
};
use solana_instruction::{error::InstructionError, Instruction};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction_error::TransactionError;

pub const SOL: u64 = 1_000_000_000;
pub const MIN_COLLATERAL_USDC: u64 = 100 * USDC;
pub const ESCROW_GRACE_SECS: u32 = 60;
pub const DISPUTE_WINDOW_SECS: u32 = 3 * 24 * 3600;
pub const COLLATERAL_COOLDOWN_SECS: u32 = 7 * 24 * 3600;
pub const MAX_EXECUTION_SECS: u32 = 30;
pub const PRICE_USDC: u64 = 250_000;
/// The development market's floor (docs/program.md, "Minimum price per call").
pub const MIN_PRICE_PER_CALL_USDC: u64 = 10_000;
/// The `max_amount_usdc` of calls whose test is not about the maximum.
pub const NO_MAXIMUM: u64 = u64::MAX;

pub fn market_params() -> MarketParams {
    MarketParams {
        relayer: Pubkey::default(),
        arbiter: Pubkey::default(),
        min_collateral_usdc: MIN_COLLATERAL_USDC,
        min_price_per_call_usdc: MIN_PRICE_PER_CALL_USDC,
        escrow_grace_secs: ESCROW_GRACE_SECS,
        dispute_window_secs: DISPUTE_WINDOW_SECS,
        collateral_cooldown_secs: COLLATERAL_COOLDOWN_SECS,
        escrows_paused: false,
    }
}

pub struct Creator {
    pub wallet: Keypair,
    pub token_account: Pubkey,
}

pub struct AgentFixture {
    pub agent_id: [u8; 16],
    pub address: Pubkey,
    pub signing: Keypair,
    pub payout_account: Pubkey,
    pub creator: Creator,
}

pub struct Payer {
    pub wallet: Keypair,
    pub token_account: Pubkey,
}

pub struct TestMarket {
    pub chain: Chain,
    pub market: MarketSetup,
    /// The last state seen of every escrow the tests opened, by execution id: what a creator was
    /// asked to sign for, still known once the escrow has closed.
    opened: HashMap<[u8; 16], Escrow>,
}

pub fn random_id() -> [u8; 16] {
    Keypair::new().pubkey().to_bytes()[..16].try_into().unwrap()
}

pub fn terms(signing: &Keypair, pricing: Pricing) -> AgentTerms {
    AgentTerms {
        signing_key: signing.pubkey().to_bytes(),
        endpoint: "https://agent.example.com".to_string(),
        listing_hash: [7; 32],
        pricing,
        max_execution_secs: MAX_EXECUTION_SECS,
    }
}

/// The Ed25519 verification of `signing`'s signature over the signing-key proof of `agent` and
/// `creator`: what must come right before `register_agent`, or an `update_agent` changing the key.
pub fn signing_key_proof_ix(signing: &Keypair, agent: &Pubkey, creator: &Pubkey) -> Instruction {
    let signature: [u8; 64] = signing.sign_message(&signing_key_proof_digest(agent, creator)).into();
    MarketKeys::verify_signing_key_proof(&signing.pubkey().to_bytes(), &signature, agent, creator)
}

impl TestMarket {
    pub fn new() -> Self {
        Self::with_params(market_params())
    }

    pub fn with_params(params: MarketParams) -> Self {
        let mut chain = Chain::new();
        let market = MarketSetup::bootstrap(&mut chain, MarketKeypairs::random(), params).expect("bootstrap market");
        TestMarket {
            chain,
            market,
            opened: HashMap::new(),
        }
    }

    pub fn usdc_mint(&self) -> Pubkey {
        self.market.keys.usdc_mint
    }

    pub fn relayer(&self) -> &Keypair {
        &self.market.relayer
    }

    /// A wallet with SOL and `usdc` of test USDC in its associated token account.
    pub fn wallet_with_usdc(&mut self, usdc: u64) -> (Keypair, Pubkey) {
        let wallet = self.chain.funded_keypair(10 * SOL);
        let mint = self.usdc_mint();
        let token_account = self.chain.token_account(&wallet, &wallet.pubkey(), &mint);
        if usdc > 0 {
            self.chain
                .mint_to(&self.market.mint_authority, &mint, &token_account, usdc);
        }
        (wallet, token_account)
    }

    pub fn creator(&mut self, usdc: u64) -> Creator {
        let (wallet, token_account) = self.wallet_with_usdc(usdc);
        Creator { wallet, token_account }
    }

    /// A payer holding `usdc` that approved the market for `allowance_usdc`.
    pub fn payer(&mut self, usdc: u64, allowance_usdc: u64) -> Payer {
        let (wallet, token_account) = self.wallet_with_usdc(usdc);
        let mint = self.usdc_mint();
        self.chain
            .approve_market(&wallet, &token_account, &mint, allowance_usdc)
            .expect("approve");
        Payer { wallet, token_account }
    }

    pub fn try_register(
        &mut self,
        creator: Creator,
        pricing: Pricing,
        collateral_usdc: u64,
    ) -> (TransactionResult, AgentFixture) {
        let agent_id = random_id();
        let payout_account = creator.token_account;
        self.try_register_paying_to(creator, agent_id, payout_account, pricing, collateral_usdc)
    }

    /// Registers agent `agent_id` with the creator's share going to `payout_account`.
    pub fn try_register_paying_to(
        &mut self,
        creator: Creator,
        agent_id: [u8; 16],
        payout_account: Pubkey,
        pricing: Pricing,
        collateral_usdc: u64,
    ) -> (TransactionResult, AgentFixture) {
        let signing = Keypair::new();
        let instructions = [
            signing_key_proof_ix(&signing, &pda::agent(&agent_id), &creator.wallet.pubkey()),
            self.market.keys.register_agent(
                creator.wallet.pubkey(),
                agent_id,
                creator.token_account,
                payout_account,
                self.token_owner(&payout_account),
                terms(&signing, pricing),
                collateral_usdc,
            ),
        ];
        let result = self.chain.send(&instructions, &creator.wallet, &[]);
        let agent = AgentFixture {
            agent_id,
            address: pda::agent(&agent_id),
            signing,
            payout_account,
            creator,
        };
        (result, agent)
    }

    /// The owner recorded in token account `address`, or the default key when it does not exist.
    pub fn token_owner(&self, address: &Pubkey) -> Pubkey {
        self.chain
            .account(address)
            .and_then(|account| account.data.get(32..64).map(|owner| Pubkey::try_from(owner).unwrap()))
            .unwrap_or_default()
    }

    /// `update_agent` by the agent's creator with the payout account's owner read from the chain;
    /// a new signing key needs `signing_key_proof_ix` before it.
    pub fn update_ix(&self, agent: &AgentFixture, payout_account: Pubkey, terms: AgentTerms) -> Instruction {
        self.market.keys.update_agent(
            agent.creator.wallet.pubkey(),
            agent.address,
            payout_account,
            self.token_owner(&payout_account),
            terms,
        )
    }

    /// A pay-per-use agent at `PRICE_USDC` with the minimum collateral.
    pub fn agent(&mut self) -> AgentFixture {
        self.agent_with(Pricing::PayPerUse { price_usdc: PRICE_USDC })
    }

    pub fn agent_with(&mut self, pricing: Pricing) -> AgentFixture {
        let creator = self.creator(MIN_COLLATERAL_USDC);
        let (result, agent) = self.try_register(creator, pricing, MIN_COLLATERAL_USDC);
        result.expect("register agent");
        agent
    }

    pub fn escrow_ref(&self, agent: &AgentFixture, payer: &Payer, execution_id: [u8; 16]) -> EscrowRef {
        EscrowRef {
            execution_id,
            agent: agent.address,
            payer: payer.wallet.pubkey(),
            payer_token_account: payer.token_account,
            rent_payer: self.market.relayer.pubkey(),
        }
    }

    pub fn open_escrow_ix(&self, agent: &AgentFixture, payer: &Payer, execution_id: [u8; 16]) -> Instruction {
        self.open_escrow_ix_at_most(agent, payer, execution_id, NO_MAXIMUM)
    }

    pub fn open_escrow_ix_at_most(
        &self,
        agent: &AgentFixture,
        payer: &Payer,
        execution_id: [u8; 16],
        max_amount_usdc: u64,
    ) -> Instruction {
        self.market.keys.open_escrow(
            agent.address,
            payer.wallet.pubkey(),
            payer.token_account,
            execution_id,
            [9; 16],
            request_hash(&execution_id),
            max_amount_usdc,
        )
    }

    pub fn send_as_relayer(&mut self, instructions: &[Instruction]) -> TransactionResult {
        let relayer = self.market.relayer.insecure_clone();
        self.chain.send(instructions, &relayer, &[])
    }

    pub fn open(&mut self, agent: &AgentFixture, payer: &Payer) -> (TransactionResult, EscrowRef) {
        self.open_id(agent, payer, random_id())
    }

    /// Opens an escrow for `execution_id`, which may have been opened (and closed) before.
    pub fn open_id(&mut self, agent: &AgentFixture, payer: &Payer, execution_id: [u8; 16]) -> (TransactionResult, EscrowRef) {
        let instruction = self.open_escrow_ix(agent, payer, execution_id);
        let result = self.send_as_relayer(&[instruction]);
        let escrow = self.escrow_ref(agent, payer, execution_id);
        if result.is_ok() {
            self.remember(&escrow);
        }
        (result, escrow)
    }

    /// Records the escrow's state as the chain holds it now, for `escrow_state` to give once it
    /// has closed.
    pub fn remember(&mut self, escrow: &EscrowRef) {
        let state: Escrow = self
            .chain
            .anchor_account(&pda::escrow(&escrow.execution_id))
            .expect("escrow is open");
        self.opened.insert(escrow.execution_id, state);
    }

    /// The escrow as the program recorded it: from the chain while it is open, else as last seen.
    pub fn escrow_state(&self, escrow: &EscrowRef) -> Escrow {
        self.chain
            .anchor_account(&pda::escrow(&escrow.execution_id))
            .or_else(|| self.opened.get(&escrow.execution_id).cloned())
            .expect("an escrow the tests opened")
    }

    /// The result digest the creator signs for `escrow`'s test result, reporting `units`.
    pub fn digest_of(&self, escrow: &EscrowRef, units: u64) -> [u8; 32] {
        result_digest(&ResultBinding {
            escrow: &self.escrow_state(escrow),
            result_hash: &result_hash(&escrow.execution_id),
            units,
        })
    }

    /// The Ed25519 verification by `signer` of `escrow`'s result digest, then `settle_batch` of
    /// that one escrow: how a lone result settles.
    pub fn settle_ixs(
        &self,
        escrow: &EscrowRef,
        signer: &Keypair,
        payout_account: Pubkey,
        fee_shard_index: u8,
    ) -> Vec<Instruction> {
        let digest = self.digest_of(escrow, 0);
        self.settle_ixs_with(escrow, signer.sign_message(&digest).into(), &signer.pubkey(), &digest, payout_account, fee_shard_index)
    }

    /// `settle_batch` of `escrow` alone, preceded by the verification of `signature` by `key` over
    /// `message`, whatever escrow that signature was made for.
    pub fn settle_ixs_with(
        &self,
        escrow: &EscrowRef,
        signature: [u8; 64],
        key: &Pubkey,
        message: &[u8; 32],
        payout_account: Pubkey,
        fee_shard_index: u8,
    ) -> Vec<Instruction> {
        vec![
            MarketKeys::verify_result_signature(&key.to_bytes(), &signature, message),
            self.market.keys.settle_batch(
                escrow.agent,
                payout_account,
                &[escrow.execution_id],
                vec![result_hash(&escrow.execution_id)],
                vec![],
                fee_shard_index,
            ),
        ]
    }

    /// Creates the agent's receipt log unless it exists: every settlement appends to it.
    pub fn ensure_receipt_log(&mut self, agent: &Pubkey) {
        if self.chain.account(&pda::receipt_log(agent)).is_none() {
            let instruction = self.market.keys.create_receipt_log(self.relayer().pubkey(), *agent);
            ok(self.send_as_relayer(&[instruction]));
        }
    }

    pub fn settle(&mut self, escrow: &EscrowRef, agent: &AgentFixture) -> TransactionResult {
        self.ensure_receipt_log(&agent.address);
        let instructions = self.settle_ixs(escrow, &agent.signing, agent.payout_account, 0);
        self.send_as_relayer(&instructions)
    }

    /// The relayer buys one period of `agent`'s subscription for `payer`, at any price.
    pub fn subscribe(&mut self, agent: &AgentFixture, payer: &Payer) -> TransactionResult {
        let instruction = self.market.keys.subscribe(
            agent.address,
            payer.wallet.pubkey(),
            payer.token_account,
            agent.payout_account,
            0,
            NO_MAXIMUM,
        );
        self.send_as_relayer(&[instruction])
    }

    pub fn refund(&mut self, escrow: &EscrowRef, with_subscription: bool) -> TransactionResult {
        let instruction = self
            .market
            .keys
            .refund(escrow, RefundReason::CreatorError, with_subscription);
        self.send_as_relayer(&[instruction])
    }

    pub fn balance(&self, token_account: &Pubkey) -> u64 {
        self.chain.token_balance(token_account)
    }

    pub fn balances(&self, accounts: &[Pubkey]) -> Vec<u64> {
        accounts.iter().map(|account| self.balance(account)).collect()
    }
}

/// A stand-in for SHA-256 of the request's canonical JSON, distinct per execution.
pub fn request_hash(execution_id: &[u8; 16]) -> [u8; 32] {
    let mut hash = [1u8; 32];
    hash[..16].copy_from_slice(execution_id);
    hash
}

pub fn result_hash(execution_id: &[u8; 16]) -> [u8; 32] {
    let mut hash = [2u8; 32];
    hash[16..].copy_from_slice(execution_id);
    hash
}

pub fn ok(result: TransactionResult) -> TransactionMetadata {
    match result {
        Ok(meta) => meta,
        Err(failed) => panic!("transaction failed: {:?}\n{}", failed.err, failed.meta.pretty_logs()),
    }
}

fn custom_code(result: &TransactionResult) -> Option<u32> {
    match result {
        Err(failed) => match &failed.err {
            TransactionError::InstructionError(_, InstructionError::Custom(code)) => Some(*code),
            _ => None,
        },
        Ok(_) => None,
    }
}

fn describe(result: &TransactionResult) -> String {
    match result {
        Ok(meta) => format!("succeeded\n{}", meta.pretty_logs()),
        Err(failed) => format!("{:?}\n{}", failed.err, failed.meta.pretty_logs()),
    }
}

/// Asserts the transaction failed with this program error.
pub fn assert_program_error(result: &TransactionResult, expected: AgentMarketError) {
    let code = u32::from(expected);
    assert_eq!(
        custom_code(result),
        Some(code),
        "expected {expected:?} ({code}), got {}",
        describe(result)
    );
}

/// Asserts the transaction failed with this Anchor framework error.
pub fn assert_anchor_error(result: &TransactionResult, expected: ErrorCode) {
    let code = u32::from(expected);
    assert_eq!(
        custom_code(result),
        Some(code),
        "expected {expected:?} ({code}), got {}",
        describe(result)
    );
}
