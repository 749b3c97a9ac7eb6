//! The transaction history keeps records on disk and an index in memory, bounded by
//! `--retain-transactions`: older transactions are answered as a node without that history
//! answers, the file is compacted while the chain goes on, and a restart reads it back.

use {
    localnet::{
        genesis,
        ledger::{Ledger, TransactionRecord, MAX_PROCESSING_AGE},
        node::NodeState,
        rpc,
    },
    serde_json::{json, Value},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_signer::Signer,
    std::{
        fs,
        path::{Path, PathBuf},
        sync::atomic::{AtomicU64, Ordering},
    },
};

const SLOT_MS: u64 = 400;

/// A ledger directory, removed when the test ends.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Self {
        Dir(std::env::temp_dir().join(format!("localnet-history-test-{}", Pubkey::new_unique())))
    }

    fn transactions(&self) -> PathBuf {
        self.0.join("transactions.bin")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn start(dir: Option<&Path>, retain_transactions: usize) -> NodeState {
    genesis::start(
        None,
        dir,
        SLOT_MS,
        retain_transactions,
        genesis::GenesisMarket::Initialized,
    )
    .unwrap()
}

/// `count` transfers from the faucet, each to `to` with a different amount; their signatures.
fn transfers(state: &mut NodeState, to: &Pubkey, count: u64) -> Vec<Signature> {
    static NEXT_AMOUNT: AtomicU64 = AtomicU64::new(1_000_000);
    (0..count)
        .map(|index| {
            let lamports = NEXT_AMOUNT.fetch_add(1, Ordering::Relaxed);
            let instruction = solana_system_interface::instruction::transfer(&state.faucet.pubkey(), to, lamports);
            state
                .ledger
                .send_instructions(&[instruction], &state.faucet, &[])
                .unwrap_or_else(|_| panic!("transfer {index}"))
        })
        .collect()
}

/// Produces enough slots that every transaction so far has an expired blockhash.
fn expire(ledger: &mut Ledger) {
    for _ in 0..=MAX_PROCESSING_AGE + 1 {
        ledger.advance_slot();
    }
}

fn call(ledger: &mut Ledger, method: &str, params: Value) -> Value {
    rpc::dispatch(ledger, method, &params).unwrap()
}

fn record(ledger: &Ledger, signature: &Signature) -> Option<TransactionRecord> {
    ledger.transaction(signature).unwrap()
}

#[test]
fn records_come_back_from_disk_with_their_metadata() {
    let mut state = start(None, 0);
    let recipient = Pubkey::new_unique();
    let signatures = transfers(&mut state, &recipient, 3);
    for signature in &signatures {
        let record = record(&state.ledger, signature).expect("a kept record");
        assert_eq!(record.transaction.signatures[0], *signature);
        assert!(!record.logs.is_empty(), "with its logs");
        assert_eq!(record.fee, 5_000);
    }
    state.ledger.advance_slot();
    let found = call(
        &mut state.ledger,
        "getTransaction",
        json!([signatures[1].to_string(), { "commitment": "confirmed" }]),
    );
    assert_eq!(found["transaction"]["signatures"][0], signatures[1].to_string());
    let history = call(
        &mut state.ledger,
        "getSignaturesForAddress",
        json!([recipient.to_string()]),
    );
    let listed: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["signature"].as_str().unwrap())
        .collect();
    let newest_first: Vec<String> = signatures.iter().rev().map(ToString::to_string).collect();
    assert_eq!(listed, newest_first);
}

#[test]
fn past_retention_the_oldest_are_answered_as_a_node_without_that_history() {
    let mut state = start(None, 4);
    let recipient = Pubkey::new_unique();
    let signatures = transfers(&mut state, &recipient, 10);
    expire(&mut state.ledger);
    assert_eq!(state.ledger.history().len(), 4);

    let (dropped, kept) = signatures.split_at(6);
    for signature in dropped {
        assert!(record(&state.ledger, signature).is_none());
        let found = call(
            &mut state.ledger,
            "getTransaction",
            json!([signature.to_string(), { "commitment": "confirmed" }]),
        );
        assert_eq!(found, Value::Null);
    }
    let statuses = call(
        &mut state.ledger,
        "getSignatureStatuses",
        json!([[dropped[0].to_string(), kept[0].to_string()], { "searchTransactionHistory": true }]),
    );
    assert_eq!(statuses["value"][0], Value::Null);
    assert_eq!(statuses["value"][1]["confirmationStatus"], "finalized");
    let history = call(
        &mut state.ledger,
        "getSignaturesForAddress",
        json!([recipient.to_string()]),
    );
    let listed: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["signature"].as_str().unwrap())
        .collect();
    let newest_first: Vec<String> = kept.iter().rev().map(ToString::to_string).collect();
    assert_eq!(listed, newest_first);
    // A cursor the history no longer keeps finds nothing, as on a cluster.
    let before_dropped = call(
        &mut state.ledger,
        "getSignaturesForAddress",
        json!([recipient.to_string(), { "before": dropped[5].to_string() }]),
    );
    assert_eq!(before_dropped, json!([]));
}

#[test]
fn a_transaction_whose_blockhash_is_still_valid_is_kept_past_retention() {
    let mut state = start(None, 1);
    let recipient = Pubkey::new_unique();
    let signatures = transfers(&mut state, &recipient, 5);
    for _ in 0..MAX_PROCESSING_AGE {
        state.ledger.advance_slot();
    }
    assert_eq!(state.ledger.history().len(), 5, "a replay would still be accepted");
    let replay = record(&state.ledger, &signatures[0]).unwrap().transaction;
    assert!(matches!(
        state.ledger.send(replay, true),
        Err(localnet::ledger::Rejection::Refused(
            solana_transaction_error::TransactionError::AlreadyProcessed
        ))
    ));
    state.ledger.advance_slot();
    state.ledger.advance_slot();
    assert_eq!(state.ledger.history().len(), 1);
}

#[test]
fn the_file_is_compacted_while_the_chain_goes_on_and_a_restart_reads_it_back() {
    let dir = Dir::new();
    let mut state = start(Some(&dir.0), 20);
    let recipient = Pubkey::new_unique();
    transfers(&mut state, &recipient, 300);
    state.save();
    let full_bytes = fs::metadata(dir.transactions()).unwrap().len();
    expire(&mut state.ledger);
    // The copy runs in the background; the chain takes transactions meanwhile.
    let during = transfers(&mut state, &recipient, 30);
    let mut slots = 0;
    while state.ledger.history().file_bytes() >= full_bytes {
        std::thread::sleep(std::time::Duration::from_millis(5));
        state.ledger.advance_slot();
        slots += 1;
        assert!(slots < 2_000, "the compaction should have finished");
    }
    let after = transfers(&mut state, &recipient, 3);
    state.save();
    let on_disk = fs::metadata(dir.transactions()).unwrap().len();
    assert!(
        on_disk < full_bytes / 2,
        "{on_disk} bytes on disk after compaction, {full_bytes} before"
    );
    for signature in during.iter().chain(&after) {
        let kept = record(&state.ledger, signature).expect("kept through the compaction");
        assert_eq!(kept.transaction.signatures[0], *signature);
    }
    drop(state);

    let restarted = start(Some(&dir.0), 20);
    for signature in during.iter().chain(&after) {
        assert_eq!(
            record(&restarted.ledger, signature).map(|record| record.transaction.signatures[0]),
            Some(*signature)
        );
    }
}

#[test]
fn a_record_cut_short_by_a_crash_is_dropped_and_later_ones_follow_the_whole_ones() {
    let dir = Dir::new();
    let mut state = start(Some(&dir.0), 0);
    let recipient = Pubkey::new_unique();
    let signatures = transfers(&mut state, &recipient, 3);
    state.save();
    drop(state);
    let bytes = fs::read(dir.transactions()).unwrap();
    fs::write(dir.transactions(), &bytes[..bytes.len() - 3]).unwrap();

    let mut restarted = start(Some(&dir.0), 0);
    assert!(record(&restarted.ledger, &signatures[1]).is_some());
    assert!(
        record(&restarted.ledger, &signatures[2]).is_none(),
        "the record cut short"
    );
    let later = transfers(&mut restarted, &Pubkey::new_unique(), 1);
    restarted.save();
    drop(restarted);

    let again = start(Some(&dir.0), 0);
    assert!(record(&again.ledger, &signatures[1]).is_some());
    assert!(record(&again.ledger, &later[0]).is_some());
}

#[test]
fn a_history_written_before_framing_is_read_and_rewritten() {
    let dir = Dir::new();
    let mut state = start(Some(&dir.0), 0);
    let recipient = Pubkey::new_unique();
    let signatures = transfers(&mut state, &recipient, 4);
    state.save();
    // As ledgers were written before: bincode records one after another, nothing else.
    let mut unframed = Vec::new();
    for signature in &signatures {
        bincode::serialize_into(&mut unframed, &record(&state.ledger, signature).unwrap()).unwrap();
    }
    drop(state);
    fs::write(dir.transactions(), &unframed).unwrap();

    let restarted = start(Some(&dir.0), 0);
    for signature in &signatures {
        assert_eq!(
            record(&restarted.ledger, signature).unwrap().transaction.signatures[0],
            *signature
        );
    }
    assert_ne!(fs::read(dir.transactions()).unwrap(), unframed, "rewritten framed");
    drop(restarted);
    assert_eq!(start(Some(&dir.0), 0).ledger.history().len(), 4);
}

#[test]
fn without_a_ledger_directory_the_accounts_written_are_not_remembered_past_a_save() {
    let mut state = start(None, 1_000);
    transfers(&mut state, &Pubkey::new_unique(), 3);
    assert!(!state.ledger.written_accounts().is_empty());
    // What the node does at every slot boundary: with no store to write to, it must still let
    // go of what a save would have written.
    state.save();
    assert!(state.ledger.written_accounts().is_empty());
}
