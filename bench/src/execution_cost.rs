//! What one execution costs on chain: its transactions, their signatures and sizes, the
//! accounts each one reads and writes, the rent each account type holds while it exists, and
//! the time the native chain takes for an execution against a plain USDC transfer.
//!
//! Run: `npm run bench`.

use std::{collections::HashMap, time::Instant};

use agent_market::{
    Agent, AgentTerms, Dispute, Escrow, Market, Pricing, Receipt, RefundReason, Subscription, FEE_SHARD_COUNT,
};
use anchor_lang::{prelude::Pubkey, Space};
use localnet::{
    chain::{Chain, MarketKeypairs, MarketSetup, USDC},
    market::{pda, result_digest, signing_key_proof_digest, EscrowRef, MarketKeys},
};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

/// The most a transaction may weigh on a cluster.
const PACKET_DATA_SIZE: usize = 1232;
const TIMED_EXECUTIONS: usize = 2_000;
const PRICE_USDC: u64 = 250_000;

struct Scene {
    chain: Chain,
    market: MarketSetup,
    agent: Pubkey,
    agent_signing: Keypair,
    payout_account: Pubkey,
    payer: Keypair,
    payer_token_account: Pubkey,
    labels: HashMap<Pubkey, &'static str>,
}

impl Scene {
    fn new() -> Self {
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

    fn escrow_ref(&self, execution_id: [u8; 16]) -> EscrowRef {
        EscrowRef {
            execution_id,
            agent: self.agent,
            payer: self.payer.pubkey(),
            payer_token_account: self.payer_token_account,
            rent_payer: self.market.relayer.pubkey(),
        }
    }

    fn open_tx(&self, execution_id: [u8; 16]) -> Transaction {
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

    fn settle_tx(&self, execution_id: [u8; 16]) -> Transaction {
        let escrow = self.escrow_ref(execution_id);
        let result_hash = [5; 32];
        let digest = result_digest(&execution_id, &self.agent, &[4; 32], &result_hash);
        let signature: [u8; 64] = self.agent_signing.sign_message(&digest).into();
        let shard = execution_id[0] % FEE_SHARD_COUNT;
        self.relayer_tx(&[
            MarketKeys::verify_result_signature(&self.agent_signing.pubkey().to_bytes(), &signature, &digest),
            self.market
                .keys
                .settle(&escrow, self.payout_account, result_hash, shard),
        ])
    }

    fn refund_tx(&self, execution_id: [u8; 16]) -> Transaction {
        self.relayer_tx(&[self
            .market
            .keys
            .refund(&self.escrow_ref(execution_id), RefundReason::Timeout, false)])
    }

    fn relayer_tx(&self, instructions: &[solana_instruction::Instruction]) -> Transaction {
        Transaction::new_signed_with_payer(
            instructions,
            Some(&self.market.relayer.pubkey()),
            &[&self.market.relayer],
            self.chain.svm.latest_blockhash(),
        )
    }

    fn send(&mut self, transaction: Transaction) {
        if let Err(failed) = self.chain.svm.send_transaction(transaction) {
            panic!("{:?}\n{}", failed.err, failed.meta.pretty_logs());
        }
    }

    fn label(&self, address: &Pubkey) -> String {
        self.labels
            .get(address)
            .map_or_else(|| address.to_string(), |label| (*label).to_string())
    }

    fn describe(&mut self, name: &str, execution_id: [u8; 16], transaction: &Transaction) -> usize {
        self.labels
            .insert(pda::escrow(&execution_id), "escrow (this execution)");
        self.labels
            .insert(pda::receipt(&execution_id), "receipt (this execution)");
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

fn rent_table(chain: &Chain) {
    let rows: [(&str, usize, &str); 8] = [
        (
            "escrow",
            8 + Escrow::INIT_SPACE,
            "per execution, from open_escrow until settle/refund/reclaim",
        ),
        (
            "receipt",
            8 + Receipt::INIT_SPACE,
            "per settled execution, until close_receipt after the dispute window",
        ),
        ("subscription", 8 + Subscription::INIT_SPACE, "per payer and agent"),
        (
            "dispute",
            8 + Dispute::INIT_SPACE,
            "per disputed execution, until resolved",
        ),
        ("agent", 8 + Agent::INIT_SPACE, "per agent"),
        (
            "agent vault (SPL token account)",
            165,
            "two per agent: collateral and escrow",
        ),
        ("fee shard (SPL token account)", 165, "eight per market"),
        ("market config", 8 + Market::INIT_SPACE, "one"),
    ];
    println!("\nRent held by each account type (paid by: escrow, receipt, subscription = relayer; dispute = payer; agent and vaults = creator; market and shards = authority)");
    println!("  {:<34} {:>6} {:>14}  {}", "account", "bytes", "rent (SOL)", "lives");
    for (name, bytes, lives) in rows {
        let lamports = chain.svm.minimum_balance_for_rent_exemption(bytes);
        println!("  {name:<34} {bytes:>6} {:>14.9}  {lives}", lamports as f64 / 1e9);
    }
}

fn main() {
    let mut scene = Scene::new();

    println!("Agent Market: the on-chain cost of one pay-per-use execution");
    let execution_id = [0xA5; 16];
    let open = scene.open_tx(execution_id);
    let settle = scene.settle_tx(execution_id);
    let mut signatures = scene.describe("1. open_escrow", execution_id, &open);
    scene.send(open);
    signatures += scene.describe("2. Ed25519 verify + settle", execution_id, &settle);
    scene.send(settle);
    println!("\nSettled execution: 2 transactions, {signatures} signatures in all.");

    let failed_id = [0x5A; 16];
    let open = scene.open_tx(failed_id);
    scene.send(open);
    let refund = scene.refund_tx(failed_id);
    scene.describe(
        "Failed execution, 2. refund (after the same open_escrow)",
        failed_id,
        &refund,
    );
    scene.send(refund);
    println!("\nNo account written by open_escrow or settle is shared by all executions: the market config is read-only, escrowed USDC sits in the agent's vault, and fees go to one of {FEE_SHARD_COUNT} shards.");

    rent_table(&scene.chain);

    // Throughput of the native chain: executions against plain USDC transfers, same process.
    let mint = scene.market.keys.usdc_mint;
    let sink = scene.chain.token_account(&scene.payer, &Keypair::new().pubkey(), &mint);
    let started = Instant::now();
    for round in 0..TIMED_EXECUTIONS {
        let transfer = spl_token::instruction::transfer_checked(
            &spl_token::ID,
            &scene.payer_token_account,
            &mint,
            &sink,
            &scene.payer.pubkey(),
            &[],
            1 + round as u64,
            6,
        )
        .expect("transfer");
        let transaction = Transaction::new_signed_with_payer(
            &[transfer],
            Some(&scene.payer.pubkey()),
            &[&scene.payer],
            scene.chain.svm.latest_blockhash(),
        );
        scene.send(transaction);
    }
    let transfer_secs = started.elapsed().as_secs_f64();

    let started = Instant::now();
    for round in 0..TIMED_EXECUTIONS {
        let mut execution_id = [0u8; 16];
        execution_id[..8].copy_from_slice(&(round as u64 + 1).to_le_bytes());
        let open = scene.open_tx(execution_id);
        scene.send(open);
        let settle = scene.settle_tx(execution_id);
        scene.send(settle);
    }
    let execution_secs = started.elapsed().as_secs_f64();
    println!("\nNative chain, {TIMED_EXECUTIONS} of each, one thread:");
    println!(
        "  plain USDC transfer (baseline) {:>9.1} tx/s  {:>7.1} µs each",
        TIMED_EXECUTIONS as f64 / transfer_secs,
        1e6 * transfer_secs / TIMED_EXECUTIONS as f64
    );
    println!(
        "  execution (open_escrow+settle) {:>9.1} /s    {:>7.1} µs each  = {:.2}x a transfer",
        TIMED_EXECUTIONS as f64 / execution_secs,
        1e6 * execution_secs / TIMED_EXECUTIONS as f64,
        execution_secs / transfer_secs
    );
}
