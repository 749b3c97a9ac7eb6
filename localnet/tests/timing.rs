//! Cluster-like timing (`--profile devnet-like` and its flags): transactions run at the next
//! slot boundary, some are lost, RPC exchanges take time, blockhashes expire; and the default
//! node keeps running a transaction within its `sendTransaction` call.

mod common;

use {
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    common::{error_code, TestNode},
    localnet::timing::{Inflight, RpcLatency, Timing},
    serde_json::{json, Value},
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{
        process::Command,
        time::{Duration, Instant},
    },
};

const SLOT_MS: u64 = 100;

fn slot_boundary() -> Timing {
    Timing {
        at_slot_boundary: true,
        ..Timing::INSTANT
    }
}

fn transfer(node: &TestNode, payer: &Keypair, lamports: u64) -> Transaction {
    let instruction = solana_system_interface::instruction::transfer(&payer.pubkey(), &Pubkey::new_unique(), lamports);
    Transaction::new_signed_with_payer(&[instruction], Some(&payer.pubkey()), &[payer], node.blockhash())
}

fn encoded(transaction: &Transaction) -> String {
    BASE64.encode(bincode::serialize(transaction).unwrap())
}

/// Sends `transaction` and, in the same batch (one turn of the chain thread), asks its status
/// and the slot: what the chain did within the call.
fn send_and_look(node: &TestNode, transaction: &Transaction) -> (Value, u64) {
    let signature = transaction.signatures[0].to_string();
    let batch = json!([
        { "jsonrpc": "2.0", "id": 1, "method": "sendTransaction", "params": [encoded(transaction), { "encoding": "base64" }] },
        { "jsonrpc": "2.0", "id": 2, "method": "getSignatureStatuses", "params": [[signature]] },
        { "jsonrpc": "2.0", "id": 3, "method": "getSlot", "params": [{ "commitment": "processed" }] },
    ]);
    let (status, body) = node.post(batch.to_string().as_bytes());
    assert_eq!(status, 200, "{body}");
    let answers: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answers[0]["result"], signature, "{answers}");
    (
        answers[1]["result"]["value"][0].clone(),
        answers[2]["result"].as_u64().unwrap(),
    )
}

fn status(node: &TestNode, signature: &str) -> (Value, u64) {
    let answer = node.result("getSignatureStatuses", json!([[signature]]));
    (answer["value"][0].clone(), answer["context"]["slot"].as_u64().unwrap())
}

#[test]
fn by_default_a_sent_transaction_is_processed_within_the_call() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let (status, slot) = send_and_look(&node, &transfer(&node, &payer, 1_000));
    assert_eq!(status["confirmationStatus"], "processed");
    assert_eq!(status["slot"], slot);
}

#[test]
fn at_slot_boundary_a_transaction_runs_in_the_next_slot_is_confirmed_one_later_and_finalized_32_later() {
    let node = TestNode::start_with(slot_boundary(), SLOT_MS);
    let payer = node.funded(1_000_000_000);
    let transaction = transfer(&node, &payer, 1_000);
    let signature = transaction.signatures[0].to_string();
    let (within_call, sent_in) = send_and_look(&node, &transaction);
    assert_eq!(within_call, Value::Null, "nothing runs before the slot ends");

    let started = Instant::now();
    let mut seen = Vec::new();
    loop {
        let (value, slot) = status(&node, &signature);
        if !value.is_null() {
            let processed_in = value["slot"].as_u64().unwrap();
            assert!(processed_in > sent_in, "processed in {processed_in}, sent in {sent_in}");
            let expected = match slot - processed_in {
                0 => "processed",
                1..=31 => "confirmed",
                _ => "finalized",
            };
            assert_eq!(value["confirmationStatus"], expected, "at slot {slot}: {value}");
            seen.push(expected);
            if expected == "finalized" {
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never finalized: {seen:?}");
        std::thread::sleep(Duration::from_millis(SLOT_MS / 4));
    }
    assert!(seen.contains(&"confirmed"), "{seen:?}");
}

#[test]
fn at_slot_boundary_the_preflight_still_answers_at_once() {
    let node = TestNode::start_with(slot_boundary(), SLOT_MS);
    let payer = node.funded(1_000_000_000);
    // More lamports than the payer has: the simulation fails, nothing is queued.
    let response = node.send(&transfer(&node, &payer, 2_000_000_000));
    assert_eq!(error_code(&response), -32002);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Transaction simulation failed"),
        "{response}"
    );
    let mut forged = transfer(&node, &payer, 1_000);
    forged.signatures[0] = Signature::from([7u8; 64]);
    let response = node.send(&forged);
    assert_eq!(error_code(&response), -32003);
    assert_eq!(
        response["error"]["message"],
        "Transaction signature verification failure"
    );
}

#[test]
fn blockhashes_expire_after_150_blocks_and_a_transaction_using_one_is_refused() {
    let node = TestNode::start_with(slot_boundary(), SLOT_MS);
    let payer = node.funded(1_000_000_000);
    let batch = json!([
        { "jsonrpc": "2.0", "id": 1, "method": "getLatestBlockhash", "params": [{ "commitment": "processed" }] },
        { "jsonrpc": "2.0", "id": 2, "method": "getBlockHeight", "params": [{ "commitment": "processed" }] },
    ]);
    let (_, body) = node.post(batch.to_string().as_bytes());
    let answers: Value = serde_json::from_str(&body).unwrap();
    let latest = &answers[0]["result"]["value"];
    let height = answers[1]["result"].as_u64().unwrap();
    assert_eq!(latest["lastValidBlockHeight"].as_u64().unwrap(), height + 150);
    let transaction = transfer(&node, &payer, 1_000);
    let blockhash = transaction.message.recent_blockhash.to_string();
    assert_eq!(node.result("isBlockhashValid", json!([blockhash]))["value"], true);

    node.result("localnet_advanceClock", json!([{ "slots": 151 }]));
    assert_eq!(node.result("isBlockhashValid", json!([blockhash]))["value"], false);
    let response = node.send(&transaction);
    assert_eq!(error_code(&response), -32002);
    assert_eq!(
        response["error"]["message"],
        "Transaction simulation failed: Blockhash not found"
    );
    assert_eq!(response["error"]["data"]["err"], "BlockhashNotFound");
}

#[test]
fn a_dropped_transaction_is_accepted_and_never_processed() {
    let timing = Timing {
        drop_rate: 1.0,
        ..slot_boundary()
    };
    let node = TestNode::start_with(timing, SLOT_MS);
    // The airdrop is the node's own: never lost.
    let payer = node.funded(1_000_000_000);
    let transaction = transfer(&node, &payer, 1_000);
    let signature = node.send(&transaction)["result"].as_str().unwrap().to_string();
    assert_eq!(signature, transaction.signatures[0].to_string());
    std::thread::sleep(Duration::from_millis(4 * SLOT_MS));
    assert_eq!(status(&node, &signature).0, Value::Null);
    assert_eq!(
        node.result("getBalance", json!([payer.pubkey().to_string()]))["value"],
        1_000_000_000
    );
}

#[test]
fn rebroadcasting_the_same_bytes_gets_a_dropped_transaction_through() {
    let timing = Timing {
        drop_rate: 0.5,
        seed: 11,
        ..Timing::INSTANT
    };
    let node = TestNode::start_with(timing, SLOT_MS);
    let payer = node.funded(1_000_000_000);
    let mut dropped = 0;
    for _ in 0..20 {
        let transaction = transfer(&node, &payer, 1_000);
        let signature = transaction.signatures[0].to_string();
        let mut sends = 0;
        while status(&node, &signature).0.is_null() {
            assert!(sends < 30, "{signature} never landed");
            node.send_with(&transaction, json!({ "maxRetries": 0 }));
            sends += 1;
        }
        dropped += sends - 1;
    }
    assert!((5..=60).contains(&dropped), "{dropped} drops in 20 transactions at 50%");
}

#[test]
fn a_lost_send_is_sent_again_by_the_node_unless_max_retries_is_0() {
    let timing = Timing {
        drop_rate: 0.5,
        seed: 3,
        ..slot_boundary()
    };
    // Retries every 2 s: 4 slots of 500 ms.
    let node = TestNode::start_with(timing, 500);
    let payer = node.funded(1_000_000_000);
    let retried: Vec<String> = (0..12)
        .map(|_| {
            node.send(&transfer(&node, &payer, 1_000))["result"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let not_retried: Vec<String> = (0..12)
        .map(|_| {
            node.send_with(&transfer(&node, &payer, 1_000), json!({ "maxRetries": 0 }))["result"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let started = Instant::now();
    while retried.iter().any(|signature| status(&node, signature).0.is_null()) {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the node's retries never got every transaction through"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let lost = not_retried
        .iter()
        .filter(|signature| status(&node, signature).0.is_null())
        .count();
    assert!((1..12).contains(&lost), "{lost} of 12 sent once at 50% were lost");
}

#[test]
fn drops_follow_the_seed_the_signature_and_the_send_count() {
    let signatures: Vec<Signature> = (0..2_000u64)
        .map(|n| {
            Signature::from(std::array::from_fn::<u8, 64, _>(|i| {
                (n >> (8 * (i % 8))) as u8 ^ i as u8
            }))
        })
        .collect();
    let decide = |seed: u64, rate: f64| -> Vec<bool> {
        let mut inflight = Inflight::new(Timing {
            drop_rate: rate,
            seed,
            ..Timing::INSTANT
        });
        signatures
            .iter()
            .map(|signature| inflight.drops(signature, 0))
            .collect()
    };
    assert_eq!(decide(5, 0.1), decide(5, 0.1));
    assert_ne!(decide(5, 0.1), decide(6, 0.1));
    let lost = decide(5, 0.1).iter().filter(|dropped| **dropped).count();
    assert!((140..=260).contains(&lost), "{lost} of 2000 at 10%");
    assert!(decide(5, 0.0).iter().all(|dropped| !dropped));
    assert!(decide(5, 1.0).iter().all(|dropped| *dropped));
    // A second send of the same signature draws anew.
    let mut inflight = Inflight::new(Timing {
        drop_rate: 0.5,
        seed: 5,
        ..Timing::INSTANT
    });
    let signature = signatures[0];
    let draws: Vec<bool> = (0..64).map(|_| inflight.drops(&signature, 0)).collect();
    assert!(draws.contains(&true) && draws.contains(&false), "{draws:?}");
}

#[test]
fn rpc_latency_stays_within_its_jitter() {
    let latency = RpcLatency {
        latency_ms: 100,
        jitter_ms: 30,
    };
    let delays: Vec<u64> = (0..1_000).map(|nth| latency.delay(3, nth).as_millis() as u64).collect();
    assert!(delays.iter().all(|delay| (70..=130).contains(delay)), "{delays:?}");
    assert!(delays.iter().any(|delay| *delay < 80) && delays.iter().any(|delay| *delay > 120));

    let node = TestNode::start_with(
        Timing {
            rpc_latency: latency,
            ..Timing::INSTANT
        },
        SLOT_MS,
    );
    for _ in 0..5 {
        let started = Instant::now();
        node.result("getSlot", json!([]));
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(70), "{took:?}");
        assert!(took < Duration::from_millis(400), "{took:?}");
    }
}

fn localnet(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_localnet"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_flags_are_checked() {
    for (args, message) in [
        (
            &["--profile", "mainnet"][..],
            "--profile takes one of instant, devnet-like",
        ),
        (&["--drop-rate", "1.5"][..], "--drop-rate takes a fraction from 0 to 1"),
        (&["--process-at", "later"][..], "--process-at takes send or slot"),
        (
            &["--rpc-latency-ms", "10", "--rpc-jitter-ms", "20"][..],
            "--rpc-jitter-ms may not exceed --rpc-latency-ms",
        ),
    ] {
        let output = localnet(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with(&format!("localnet: {message}\n")), "{stderr}");
    }
}
