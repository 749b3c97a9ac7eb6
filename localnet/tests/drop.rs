//! `localnet_dropTransaction`: a transaction taken back before finalization, as an abandoned
//! fork does, leaves the history and its effects; a finalized or depended-on one stays; a dropped
//! one can land again.

mod common;

use {
    common::{error_code, TestNode, SLOT_MS},
    serde_json::{json, Value},
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::time::Duration,
};

fn transfer(node: &TestNode, payer: &solana_keypair::Keypair, recipient: &Pubkey, lamports: u64) -> String {
    let instruction = solana_system_interface::instruction::transfer(&payer.pubkey(), recipient, lamports);
    let transaction =
        Transaction::new_signed_with_payer(&[instruction], Some(&payer.pubkey()), &[payer], node.blockhash());
    node.send(&transaction)["result"].as_str().unwrap().to_string()
}

#[test]
fn a_dropped_transaction_leaves_the_history_and_its_effects() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let signature = transfer(&node, &payer, &recipient, 12_345);
    node.wait_for(&signature, "confirmed");
    assert_eq!(
        node.result("getBalance", json!([recipient.to_string()]))["value"],
        12_345
    );

    let dropped = node.result("localnet_dropTransaction", json!([signature]));
    assert_eq!(dropped["signature"], signature);
    assert!(dropped["slot"].is_u64());

    let transaction = node.result(
        "getTransaction",
        json!([signature, { "encoding": "json", "commitment": "confirmed" }]),
    );
    assert_eq!(transaction, Value::Null);
    let statuses = node.result(
        "getSignatureStatuses",
        json!([[signature], { "searchTransactionHistory": true }]),
    );
    assert_eq!(statuses["value"][0], Value::Null);
    let history = node.result(
        "getSignaturesForAddress",
        json!([recipient.to_string(), { "commitment": "confirmed" }]),
    );
    assert_eq!(history, json!([]));
    // The transfer and its fee are undone: the payer holds what it held before.
    assert_eq!(node.result("getBalance", json!([recipient.to_string()]))["value"], 0);
    assert_eq!(
        node.result("getBalance", json!([payer.pubkey().to_string()]))["value"],
        1_000_000_000
    );

    // Gone is gone: a second drop finds nothing.
    let again = node.call("localnet_dropTransaction", json!([signature]));
    assert_eq!(error_code(&again), -32602, "{again}");
}

#[test]
fn a_finalized_transaction_cannot_be_dropped() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let signature = transfer(&node, &payer, &Pubkey::new_unique(), 1_000);
    node.wait_for(&signature, "finalized");
    let refused = node.call("localnet_dropTransaction", json!([signature]));
    assert_eq!(error_code(&refused), -32602, "{refused}");
    assert!(
        refused["error"]["message"].as_str().unwrap().contains("finalized"),
        "{refused}"
    );
    assert!(node
        .result("getTransaction", json!([signature, { "encoding": "json" }]))
        .is_object());
}

#[test]
fn a_transaction_a_later_one_built_on_cannot_be_dropped_alone() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let first = transfer(&node, &payer, &recipient, 1_000);
    std::thread::sleep(Duration::from_millis(SLOT_MS * 2));
    let second = transfer(&node, &payer, &recipient, 2_000);
    node.wait_for(&second, "confirmed");
    let refused = node.call("localnet_dropTransaction", json!([first]));
    assert_eq!(error_code(&refused), -32602, "{refused}");
    assert!(
        refused["error"]["message"].as_str().unwrap().contains(&second),
        "{refused}"
    );
    // The newest one can go; then the first one can too.
    node.result("localnet_dropTransaction", json!([second]));
    node.result("localnet_dropTransaction", json!([first]));
    assert_eq!(node.result("getBalance", json!([recipient.to_string()]))["value"], 0);
}

#[test]
fn a_dropped_transaction_sent_again_is_recorded_once() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let instruction = solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, 7_000);
    let transaction =
        Transaction::new_signed_with_payer(&[instruction], Some(&payer.pubkey()), &[&payer], node.blockhash());
    let signature = node.send(&transaction)["result"].as_str().unwrap().to_string();
    node.wait_for(&signature, "confirmed");
    node.result("localnet_dropTransaction", json!([signature]));

    // Its blockhash is still valid: the same transaction lands again, as on another fork.
    assert_eq!(node.send(&transaction)["result"], signature);
    node.wait_for(&signature, "confirmed");
    assert_eq!(
        node.result("getBalance", json!([recipient.to_string()]))["value"],
        7_000
    );
    let history = node.result(
        "getSignaturesForAddress",
        json!([recipient.to_string(), { "commitment": "confirmed" }]),
    );
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["signature"], signature);
    assert!(node
        .result(
            "getTransaction",
            json!([signature, { "encoding": "json", "commitment": "confirmed" }])
        )
        .is_object());
}
