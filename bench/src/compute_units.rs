//! Compute units and heap each instruction of an execution uses on localnet's meter, alone and at
//! the largest batch, against the cluster's limits: the figures docs/program.md gives and the
//! estimates `@agent-market/program` sizes its compute budget from (sdk/program's
//! compute-budget.ts, whose test checks them against the same meter).
//!
//! Each transaction asks for the whole 1,400,000 units so that nothing is cut short; the units
//! are what the program's top-level invocation reports (its CPIs and event self-invocations
//! included), the heap its bump allocator's high-water mark. Units are the meter's: syscalls at
//! the runtime's costs plus an allowance for the program's own code (docs/localnet.md,
//! "Metering"), an estimate of an SBF run, not a measurement of one.
//!
//! Part of what an instruction uses depends on its seeds: each address the program finds by
//! search costs 1,500 units for every candidate bump it tries past the first, and how many it
//! tries depends on the execution id, the agent and the payer. So each row also says how many
//! further candidates its searches took and what it used at the first candidate of each (the
//! event authority's, each escrow's and each subscription's): the base the SDK's estimates start
//! from, the same in every run, where the units themselves move with the scene's random keys.
//!
//! Run: `npm run bench:units`.

// The scene's account labels serve `execution-cost` only.
#[allow(dead_code)]
mod scene;

use agent_market::{RefundReason, ESCROW_SEED, ID as PROGRAM_ID, MAX_OPEN_BATCH, MAX_SETTLE_BATCH, SUBSCRIPTION_SEED};
use localnet::meter;
use scene::{Scene, PRICE_USDC};
use solana_compute_budget_interface::ComputeBudgetInstruction;
use solana_instruction::Instruction;
use solana_signer::Signer;
use solana_transaction::Transaction;

/// The most a transaction may ask for.
const MAX_TRANSACTION_UNITS: u32 = 1_400_000;
/// What an instruction gets when its transaction asks for nothing.
const DEFAULT_INSTRUCTION_UNITS: u64 = 200_000;
/// The heap an Anchor program's default allocator has, whatever the transaction asks for.
const HEAP_BYTES: u64 = 32 * 1024;
/// What the runtime charges for each candidate bump a search tries: one `create_program_address`.
const SEARCH_TRY_UNITS: u64 = 1_500;

struct Row {
    instruction: String,
    items: usize,
    units: u64,
    /// Candidate bumps the program's searches tried past the first of each.
    further_tries: u64,
    heap_bytes: u64,
}

/// Candidates a search for the address of `seeds` tries past the first.
fn further_tries(seeds: &[&[u8]]) -> u64 {
    255 - u64::from(solana_pubkey::Pubkey::find_program_address(seeds, &PROGRAM_ID).1)
}

/// Further candidates of the searches an instruction of the program makes: the event authority's,
/// and, for an open, each escrow's and each payer's subscription's.
fn searches(scene: &Scene, opened: &[[u8; 16]]) -> u64 {
    let subscription = further_tries(&[SUBSCRIPTION_SEED, scene.agent.as_ref(), scene.payer.pubkey().as_ref()]);
    further_tries(&[b"__event_authority"])
        + opened
            .iter()
            .map(|id| further_tries(&[ESCROW_SEED, id]) + subscription)
            .sum::<u64>()
}

/// Sends `instructions` as the relayer with the largest unit limit; returns what the program's
/// top-level invocation used.
fn measure(scene: &mut Scene, name: &str, opened: &[[u8; 16]], items: usize, instructions: &[Instruction]) -> Row {
    let further_tries = searches(scene, opened);
    let mut all = vec![ComputeBudgetInstruction::set_compute_unit_limit(MAX_TRANSACTION_UNITS)];
    all.extend_from_slice(instructions);
    let transaction = Transaction::new_signed_with_payer(
        &all,
        Some(&scene.market.relayer.pubkey()),
        &[&scene.market.relayer],
        scene.chain.svm.latest_blockhash(),
    );
    let meta = match scene.chain.svm.send_transaction(transaction) {
        Ok(meta) => meta,
        Err(failed) => panic!("{name}: {:?}\n{}", failed.err, failed.meta.pretty_logs()),
    };
    scene.chain.svm.expire_blockhash();
    // Invocations are listed as they return: the one instruction of the program comes after its
    // event self-invocations, whose units and heap are its own.
    let program = PROGRAM_ID.to_string();
    let top_level = meter::usage(&meta.logs)
        .into_iter()
        .filter(|invocation| invocation.program_id == program)
        .last()
        .expect("the program ran");
    Row {
        instruction: name.to_string(),
        items,
        units: top_level.compute_units,
        further_tries,
        heap_bytes: top_level.heap_bytes,
    }
}

fn execution_id(round: u64, index: u64) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&round.to_le_bytes());
    id[8..].copy_from_slice(&index.to_le_bytes());
    id
}

fn main() {
    let mut scene = Scene::new();
    let mut rows = Vec::new();
    let mut round = 0;
    let mut next_ids = |count: usize| {
        round += 1;
        (0..count as u64).map(|index| execution_id(round, index)).collect::<Vec<_>>()
    };

    let ids = next_ids(1);
    let instruction = scene.market.keys.open_escrow(
        scene.agent,
        scene.payer.pubkey(),
        scene.payer_token_account,
        ids[0],
        [3; 16],
        [4; 32],
        PRICE_USDC,
    );
    rows.push(measure(&mut scene, "open_escrow", &ids, 1, &[instruction]));
    let instructions = scene.settle_batch_ixs(&ids, [5; 32], 0);
    rows.push(measure(&mut scene, "settle_batch", &[], 1, &instructions));

    for count in [1, 4, usize::from(MAX_OPEN_BATCH)] {
        let ids = next_ids(count);
        let open = scene.market.keys.open_escrow_batch(scene.agent, &scene.open_entries(&ids));
        rows.push(measure(&mut scene, "open_escrow_batch", &ids, count, &[open]));
    }
    for count in [4, 8, 12, usize::from(MAX_SETTLE_BATCH)] {
        let ids = next_ids(count);
        for chunk in ids.chunks(usize::from(MAX_OPEN_BATCH)) {
            let open = scene.market.keys.open_escrow_batch(scene.agent, &scene.open_entries(chunk));
            measure(&mut scene, "open_escrow_batch", chunk, chunk.len(), &[open]);
        }
        let instructions = scene.settle_batch_ixs(&ids, [5; 32], 0);
        rows.push(measure(&mut scene, "settle_batch", &[], count, &instructions));
    }
    let ids = next_ids(1);
    let open = scene.market.keys.open_escrow_batch(scene.agent, &scene.open_entries(&ids));
    measure(&mut scene, "open_escrow_batch", &ids, 1, &[open]);
    let refund = scene
        .market
        .keys
        .refund(&scene.escrow_ref(ids[0]), RefundReason::CreatorError, false);
    rows.push(measure(&mut scene, "refund", &[], 1, &[refund]));

    println!("Agent Market: compute units and heap per instruction on localnet's meter (an estimate of SBF: docs/localnet.md)");
    println!(
        "| instruction | escrows | units | of 200,000 (default) | of 1,400,000 | units per escrow | further candidates | units at first candidates | heap bytes | of {HEAP_BYTES} |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for row in &rows {
        println!(
            "| `{}` | {} | {} | {:.0}% | {:.0}% | {} | {} | {} | {} | {:.0}% |",
            row.instruction,
            row.items,
            row.units,
            100.0 * row.units as f64 / DEFAULT_INSTRUCTION_UNITS as f64,
            100.0 * row.units as f64 / f64::from(MAX_TRANSACTION_UNITS),
            row.units / row.items as u64,
            row.further_tries,
            row.units - SEARCH_TRY_UNITS * row.further_tries,
            row.heap_bytes,
            100.0 * row.heap_bytes as f64 / HEAP_BYTES as f64,
        );
    }
}
