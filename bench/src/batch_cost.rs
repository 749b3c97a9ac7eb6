//! What a settled execution costs the marketplace on chain, by batch size, measured in one run
//! on the native chain: `open_escrow` per call, then one `settle_batch` for N escrows of the agent
//! under one signature of the batch digest (a lone result is a batch of one), each execution a
//! leaf of the agent's receipt log (created once). Fees are the signatures each transaction pays for (the
//! transaction's own and those the precompile verifies, 5,000 lamports each); the relayer's SOL
//! is read before and after, so what it spent beyond the fees is rent still held.
//!
//! Batched opens too: the same with the opens grouped by `open_escrow_batch`, at most
//! `MAX_OPEN_BATCH` per transaction.
//!
//! Run: `npm run bench` (after `execution-cost`).

// The scene's account labels and transaction descriptions serve `execution-cost` only.
#[allow(dead_code)]
mod scene;

use agent_market::{state::ReceiptLog, FEE_SHARD_COUNT, MAX_OPEN_BATCH, MAX_SETTLE_BATCH};
use anchor_lang::prelude::Pubkey;
use scene::{Scene, PACKET_DATA_SIZE};
use solana_signer::Signer;
use solana_transaction::Transaction;

const LAMPORTS_PER_SIGNATURE: u64 = 5_000;
const RESULT_HASH: [u8; 32] = [5; 32];
const ED25519_PROGRAM: Pubkey = Pubkey::from_str_const("Ed25519SigVerify111111111111111111111111111");

/// Signatures a transaction is charged for: its own and those the Ed25519 precompile verifies.
fn charged_signatures(transaction: &Transaction) -> u64 {
    let message = &transaction.message;
    let precompile: u64 = message
        .instructions
        .iter()
        .filter(|instruction| {
            message.account_keys[instruction.program_id_index as usize] == ED25519_PROGRAM
        })
        .map(|instruction| u64::from(instruction.data.first().copied().unwrap_or(0)))
        .sum();
    transaction.signatures.len() as u64 + precompile
}

struct Row {
    design: String,
    executions: u64,
    fee_lamports: u64,
    rent_held_lamports: u64,
    open_bytes: usize,
    settle_bytes: usize,
}

fn size_note(bytes: usize) -> String {
    if bytes > PACKET_DATA_SIZE {
        format!("{bytes} (over {PACKET_DATA_SIZE}: v0 + lookup table)")
    } else {
        bytes.to_string()
    }
}

impl Row {
    fn print(&self) {
        println!(
            "  {:<46} {:>10} {:>16} {:>20}   {:<44} {}",
            self.design,
            self.executions,
            self.fee_lamports / self.executions,
            self.rent_held_lamports / self.executions,
            size_note(self.open_bytes),
            size_note(self.settle_bytes)
        );
    }
}

fn relayer_lamports(scene: &Scene) -> u64 {
    scene.chain.svm.get_balance(&scene.market.relayer.pubkey()).unwrap_or(0)
}

fn execution_id(round: u64, index: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&round.to_le_bytes());
    id[8..].copy_from_slice(&index.to_le_bytes());
    id
}

/// Opens `ids`, one `open_escrow` each without `open_batch`, else `open_escrow_batch` of up to
/// `open_batch`; returns the fees and the largest open transaction's size.
fn open_all(scene: &mut Scene, ids: &[[u8; 16]], open_batch: Option<usize>) -> (u64, usize) {
    let mut fee_lamports = 0;
    let mut open_bytes = 0;
    for chunk in ids.chunks(open_batch.unwrap_or(1)) {
        let open = if open_batch.is_none() {
            scene.open_tx(chunk[0])
        } else {
            let entries = scene.open_entries(chunk);
            scene.relayer_tx(&[scene.market.keys.open_escrow_batch(scene.agent, &entries)])
        };
        fee_lamports += charged_signatures(&open) * LAMPORTS_PER_SIGNATURE;
        open_bytes = open_bytes.max(bincode::serialized_size(&open).expect("serialize") as usize);
        scene.send(open);
    }
    (fee_lamports, open_bytes)
}

/// `batch` executions opened `open_batch` at a time (none: one `open_escrow` each), then settled
/// in one `settle_batch`.
fn batched(scene: &mut Scene, round: u64, batch: u64, open_batch: Option<usize>) -> Row {
    let before = relayer_lamports(scene);
    let ids: Vec<[u8; 16]> = (0..batch).map(|index| execution_id(round, index)).collect();
    let (mut fee_lamports, open_bytes) = open_all(scene, &ids, open_batch);
    let settle = scene.relayer_tx(&scene.settle_batch_ixs(&ids, RESULT_HASH, (round % u64::from(FEE_SHARD_COUNT)) as u8));
    fee_lamports += charged_signatures(&settle) * LAMPORTS_PER_SIGNATURE;
    let settle_bytes = bincode::serialized_size(&settle).expect("serialize") as usize;
    scene.send(settle);
    let spent = before - relayer_lamports(scene);
    let design = match open_batch {
        None => format!("batched: {batch} per settle_batch"),
        Some(open_batch) => format!("batched: {open_batch} per open, {batch} per settle"),
    };
    Row {
        design,
        executions: batch,
        fee_lamports,
        rent_held_lamports: spent - fee_lamports,
        open_bytes,
        settle_bytes,
    }
}

fn main() {
    let mut scene = Scene::new();
    let log_rent = scene.chain.svm.minimum_balance_for_rent_exemption(ReceiptLog::SPACE);

    println!("Agent Market: lamports per settled execution by batch size (one run)");
    println!(
        "  {:<46} {:>10} {:>16} {:>20}   {:<44} {}",
        "design", "executions", "fees/execution", "rent held/execution", "open transaction bytes", "settle transaction bytes"
    );
    for (round, batch) in [(2, 1), (3, 8), (4, u64::from(MAX_SETTLE_BATCH))] {
        batched(&mut scene, round, batch, None).print();
    }
    for (round, batch) in [(5, 1), (6, 8), (7, u64::from(MAX_SETTLE_BATCH))] {
        let open_batch = (batch as usize).min(usize::from(MAX_OPEN_BATCH));
        batched(&mut scene, round, batch, Some(open_batch)).print();
    }
    println!(
        "\nThe receipt log: {log_rent} lamports of rent once per agent ({} bytes), not per execution: \
         at most 10,000 lamports per execution from the agent's {}th batched execution on, and nothing per \
         call left once a dispute window has passed. Batched opens take at most {MAX_OPEN_BATCH} escrows a \
         transaction, all of one payer here (one payer per item costs 171 bytes an item). A batch of \
         {MAX_SETTLE_BATCH} is settle_batch's limit (docs/program.md).",
        ReceiptLog::SPACE,
        log_rent.div_ceil(10_000),
    );
}
