//! What one execution costs on chain: its transactions, their signatures and sizes, the
//! accounts each one reads and writes, the rent each account type holds while it exists, and
//! the time the native chain takes for an execution against a plain USDC transfer.
//!
//! Run: `npm run bench`.

// The batch builders serve `batch-cost` and `compute-units` only.
#[allow(dead_code)]
mod scene;

use std::time::Instant;

use agent_market::{state::ReceiptLog, Agent, Dispute, Escrow, Market, Subscription, FEE_SHARD_COUNT};
use anchor_lang::Space;
use localnet::chain::Chain;
use scene::Scene;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

const TIMED_EXECUTIONS: usize = 2_000;

fn rent_table(chain: &Chain) {
    let rows: [(&str, usize, &str); 8] = [
        (
            "escrow",
            8 + Escrow::INIT_SPACE,
            "per execution, from open_escrow until settle/refund/reclaim",
        ),
        (
            "receipt log",
            ReceiptLog::SPACE,
            "per agent: every settled execution is one of its leaves",
        ),
        ("subscription", 8 + Subscription::INIT_SPACE, "per payer and agent"),
        (
            "dispute",
            8 + Dispute::INIT_SPACE,
            "per disputed settlement, until resolved and past its window",
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
    println!("\nRent held by each account type (paid by: escrow, receipt log, subscription = relayer; dispute = payer; agent and vaults = creator; market and shards = authority)");
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
    signatures += scene.describe("2. Ed25519 verify + settle_batch of one", execution_id, &settle);
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
    println!("\nNo account written by open_escrow or settle_batch is shared by all executions: the market config is read-only, escrowed USDC sits in the agent's vault, and fees go to one of {FEE_SHARD_COUNT} shards.");

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
        "  execution (open+settle of one) {:>9.1} /s    {:>7.1} µs each  = {:.2}x a transfer",
        TIMED_EXECUTIONS as f64 / execution_secs,
        1e6 * execution_secs / TIMED_EXECUTIONS as f64,
        execution_secs / transfer_secs
    );
}
