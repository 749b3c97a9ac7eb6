//! One market on the native chain with one pay-per-use agent (its receipt log created) and one
//! payer who approved the market: the scene the on-chain cost benchmarks build their
//! transactions in.

use std::collections::HashMap;

use agent_market::{
    signature::{batch_digest, result_digest, ResultBinding},
    AgentTerms, Escrow, OpenEscrowItem, Pricing, RefundReason, FEE_SHARD_COUNT,
};
use anchor_lang::prelude::Pubkey;
use localnet::{
    chain::{Chain, MarketKeypairs, MarketSetup, USDC},
    market::{pda, signing_key_proof_digest, EscrowRef, MarketKeys},
    open_batch::OpenBatchEntry,
};
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

/// The most a transaction may weigh on a cluster.
pub const PACKET_DATA_SIZE: usize = 1232;
pub const PRICE_USDC: u64 = 250_000;

pub struct Scene {
    pub chain: Chain,
    pub market: MarketSetup,
    pub agent: Pubkey,
    pub agent_signing: Keypair,
    pub payout_account: Pubkey,
    pub payer: Keypair,
    pub payer_token_account: Pubkey,
    pub labels: HashMap<Pubkey, &'static str>,
}

impl Scene {
    pub fn new() -> Self {
        let mut chain = Chain::new();
        let params = agent_market::MarketParams {
            relayer: Pubkey::default(),
            arbiter: Pubkey::default(),
            min_collateral_usdc: 100 * USDC,
            min_price_per_call_usdc: 10_000,
            escrow_grace_secs: 60,
            dispute_window_secs: 3 * 86_400,
            collateral_cooldown_secs: 7 * 86_400,
            escrows_paused: false,
        };
        let market = MarketSetup::bootstrap(&mut chain, MarketKeypairs::random(), params).expect("bootstrap market");
        let mint = market.keys.usdc_mint;

        let creator = chain.funded_keypair(10_000_000_000);
        let creator_token_account = chain.token_account(&creator, &creator.pubkey(), &mint);
        chain.mint_to(&market.mint_authority, &mint, &creator_token_account, 100 * USDC);
        let agent_id = [42; 16];
        let agent_signing = Keypair::new();
        let terms = AgentTerms {
            signing_key: agent_signing.pubkey().to_bytes(),
            endpoint: "https://agent.example.com/v1".into(),
            listing_hash: [1; 32],
            pricing: Pricing::PayPerUse { price_usdc: PRICE_USDC },
            max_execution_secs: 30,
        };
        let agent = pda::agent(&agent_id);
        let proof: [u8; 64] = agent_signing
            .sign_message(&signing_key_proof_digest(&agent, &creator.pubkey()))
            .into();
        let register = [
            MarketKeys::verify_signing_key_proof(&agent_signing.pubkey().to_bytes(), &proof, &agent, &creator.pubkey()),
            market.keys.register_agent(
                creator.pubkey(),
                agent_id,
                creator_token_account,
                creator_token_account,
                creator.pubkey(),
                terms,
                100 * USDC,
            ),
        ];
        chain.send(&register, &creator, &[]).expect("register agent");
        let create_log = market.keys.create_receipt_log(market.relayer.pubkey(), agent);
        chain
            .send(&[create_log], &market.relayer, &[])
            .expect("create the receipt log");

        let payer = chain.funded_keypair(10_000_000_000);
        let payer_token_account = chain.token_account(&payer, &payer.pubkey(), &mint);
        chain.mint_to(&market.mint_authority, &mint, &payer_token_account, 1_000_000 * USDC);
        chain
            .approve_market(&payer, &payer_token_account, &mint, u64::MAX)
            .expect("approve");

        let mut labels = HashMap::from([
            (market.relayer.pubkey(), "relayer (fee payer)"),
            (pda::market(), "market config"),
            (agent, "agent"),
            (pda::escrow_vault(&agent), "agent escrow vault"),
            (pda::receipt_log(&agent), "agent receipt log"),
            (creator_token_account, "creator payout account"),
            (payer_token_account, "payer USDC account"),
            (pda::subscription(&agent, &payer.pubkey()), "payer's subscription PDA"),
            (pda::delegate(), "delegate PDA"),
            (mint, "USDC mint"),
            (pda::event_authority(), "event authority"),
            (agent_market::ID, "agent_market program"),
            (spl_token::ID, "SPL Token program"),
            (
                Pubkey::from_str_const("11111111111111111111111111111111"),
                "System program",
            ),
            (
                Pubkey::from_str_const("Sysvar1nstructions1111111111111111111111111"),
                "instructions sysvar",
            ),
            (
                Pubkey::from_str_const("Ed25519SigVerify111111111111111111111111111"),
                "Ed25519 precompile",
            ),
        ]);
        for index in 0..FEE_SHARD_COUNT {
            labels.insert(pda::fee_shard(index), "fee shard (1 of 8)");
        }
        Scene {
            chain,
            market,
            agent,
            agent_signing,
            payout_account: creator_token_account,
            payer,
            payer_token_account,
            labels,
        }
    }

    pub fn escrow_ref(&self, execution_id: [u8; 16]) -> EscrowRef {
        EscrowRef {
            execution_id,
            agent: self.agent,
            payer: self.payer.pubkey(),
            payer_token_account: self.payer_token_account,
            rent_payer: self.market.relayer.pubkey(),
        }
    }

    pub fn open_tx(&self, execution_id: [u8; 16]) -> Transaction {
        let instruction = self.market.keys.open_escrow(
            self.agent,
            self.payer.pubkey(),
            self.payer_token_account,
            execution_id,
            [3; 16],
            [4; 32],
            PRICE_USDC,
        );
        self.relayer_tx(&[instruction])
    }

    /// `open_escrow_batch` items of the scene's payer for `ids`, at the agent's price.
    pub fn open_entries(&self, ids: &[[u8; 16]]) -> Vec<OpenBatchEntry> {
        ids.iter()
            .map(|id| OpenBatchEntry {
                payer: self.payer.pubkey(),
                payer_token_account: self.payer_token_account,
                item: OpenEscrowItem {
                    execution_id: *id,
                    api_key_id: [3; 16],
                    request_hash: [4; 32],
                    max_amount_usdc: PRICE_USDC,
                },
            })
            .collect()
    }

    /// The open escrow of `execution_id`, as the program recorded it.
    pub fn escrow(&self, execution_id: [u8; 16]) -> Escrow {
        self.chain
            .anchor_account(&pda::escrow(&execution_id))
            .expect("the escrow is open")
    }

    /// The creator's one signature over the batch digest of the open escrows `ids` (result
    /// `result_hash` each, no units), verified by the precompile, then their `settle_batch`.
    pub fn settle_batch_ixs(&self, ids: &[[u8; 16]], result_hash: [u8; 32], fee_shard_index: u8) -> Vec<Instruction> {
        let digests: Vec<[u8; 32]> = ids
            .iter()
            .map(|id| {
                result_digest(&ResultBinding {
                    escrow: &self.escrow(*id),
                    result_hash: &result_hash,
                    units: 0,
                })
            })
            .collect();
        let digest = batch_digest(&self.agent, &digests);
        let signature: [u8; 64] = self.agent_signing.sign_message(&digest).into();
        vec![
            MarketKeys::verify_signatures(&self.agent_signing.pubkey().to_bytes(), &[signature], &[digest]),
            self.market.keys.settle_batch(
                self.agent,
                self.payout_account,
                ids,
                vec![result_hash; ids.len()],
                vec![],
                fee_shard_index,
            ),
        ]
    }

    /// The settlement of the open escrow of `execution_id` alone: a batch of one, as the relayer
    /// settles a lone result.
    pub fn settle_tx(&self, execution_id: [u8; 16]) -> Transaction {
        let shard = execution_id[0] % FEE_SHARD_COUNT;
        self.relayer_tx(&self.market.keys.settle_one(
            &self.escrow(execution_id),
            [5; 32],
            &self.agent_signing,
            self.payout_account,
            shard,
        ))
    }

    pub fn refund_tx(&self, execution_id: [u8; 16]) -> Transaction {
        self.relayer_tx(&[self
            .market
            .keys
            .refund(&self.escrow_ref(execution_id), RefundReason::Timeout, false)])
    }

    pub fn relayer_tx(&self, instructions: &[solana_instruction::Instruction]) -> Transaction {
        Transaction::new_signed_with_payer(
            instructions,
            Some(&self.market.relayer.pubkey()),
            &[&self.market.relayer],
            self.chain.svm.latest_blockhash(),
        )
    }

    pub fn send(&mut self, transaction: Transaction) {
        if let Err(failed) = self.chain.svm.send_transaction(transaction) {
            panic!("{:?}\n{}", failed.err, failed.meta.pretty_logs());
        }
    }

    pub fn label(&self, address: &Pubkey) -> String {
        self.labels
            .get(address)
            .map_or_else(|| address.to_string(), |label| (*label).to_string())
    }

    pub fn describe(&mut self, name: &str, execution_id: [u8; 16], transaction: &Transaction) -> usize {
        self.labels
            .insert(pda::escrow(&execution_id), "escrow (this execution)");
        let bytes = bincode::serialized_size(transaction).expect("serialize") as usize;
        let message = &transaction.message;
        let precompile_signatures: usize = message
            .instructions
            .iter()
            .filter(|instruction| {
                message.account_keys[instruction.program_id_index as usize]
                    == Pubkey::from_str_const("Ed25519SigVerify111111111111111111111111111")
            })
            .map(|instruction| instruction.data.first().copied().unwrap_or(0) as usize)
            .sum();
        println!(
            "\n{name}: {bytes} bytes ({:.0}% of {PACKET_DATA_SIZE}), {} transaction signature(s) + {precompile_signatures} verified by the Ed25519 precompile, {} accounts",
            100.0 * bytes as f64 / PACKET_DATA_SIZE as f64,
            transaction.signatures.len(),
            message.account_keys.len(),
        );
        for (index, key) in message.account_keys.iter().enumerate() {
            let access = match (message.is_signer(index), message.is_maybe_writable(index, None)) {
                (true, true) => "signer, writes",
                (true, false) => "signer",
                (false, true) => "writes",
                (false, false) => "reads",
            };
            println!("  {access:<15} {}", self.label(key));
        }
        precompile_signatures + transaction.signatures.len()
    }
}

