//! Metering as a JSON-RPC client sees it: units in simulations, sends and the history, the
//! compute limit refusing a transaction, the priority fee, and the recent prioritization fees.

mod common;

use {
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    common::{error_code, TestNode, SLOT_MS},
    localnet::{chain::MarketSetup, genesis},
    serde_json::{json, Value},
    solana_compute_budget_interface::ComputeBudgetInstruction,
    solana_instruction::Instruction,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
};

fn signed(node: &TestNode, instructions: &[Instruction], payer: &Keypair) -> Transaction {
    Transaction::new_signed_with_payer(instructions, Some(&payer.pubkey()), &[payer], node.blockhash())
}

fn encoded(transaction: &Transaction) -> String {
    BASE64.encode(bincode::serialize(transaction).unwrap())
}

fn simulate(node: &TestNode, transaction: &Transaction) -> Value {
    node.result(
        "simulateTransaction",
        json!([encoded(transaction), { "encoding": "base64" }]),
    )["value"]
        .clone()
}

/// The market's `create_fee_shard(0)` by its authority under a limit of `units`, which its
/// allowance alone exceeds.
fn starved_market_instruction(units: u32) -> (Vec<Instruction>, Keypair) {
    let (keypairs, _faucet, _params) = genesis::load_config(None).expect("the default config");
    let setup = MarketSetup::existing(keypairs);
    let instructions = vec![
        ComputeBudgetInstruction::set_compute_unit_limit(units),
        setup.keys.create_fee_shard(0),
    ];
    (instructions, setup.authority)
}

#[test]
fn a_transaction_over_its_compute_limit_is_refused_in_preflight_and_simulation() {
    let node = TestNode::start();
    let (instructions, authority) = starved_market_instruction(1_000);
    let transaction = signed(&node, &instructions, &authority);
    let exceeded = json!({ "InstructionError": [1, "ComputationalBudgetExceeded"] });

    let simulation = simulate(&node, &transaction);
    assert_eq!(simulation["err"], exceeded, "{simulation}");
    assert_eq!(simulation["unitsConsumed"], 1_000);

    let refused = node.send(&transaction);
    assert_eq!(error_code(&refused), -32002, "{refused}");
    assert_eq!(refused["error"]["data"]["err"], exceeded);
    assert_eq!(refused["error"]["data"]["unitsConsumed"], 1_000);

    // Sent without preflight it lands, failed, having used its whole limit.
    let signature = node.send_with(&transaction, json!({ "skipPreflight": true }))["result"]
        .as_str()
        .unwrap()
        .to_string();
    node.wait_for(&signature, "confirmed");
    for encoding in ["json", "base64"] {
        let landed = node.result(
            "getTransaction",
            json!([signature, { "commitment": "confirmed", "encoding": encoding }]),
        );
        assert_eq!(landed["meta"]["err"], exceeded);
        assert_eq!(landed["meta"]["computeUnitsConsumed"], 1_000, "{encoding}");
    }
}

#[test]
fn units_fees_and_prioritization_fees_answer_as_on_a_cluster() {
    let node = TestNode::start();
    let payer = node.funded(10_000_000_000);
    // The airdrop paid no priority fee: let its slot pass, so the transfer's slot has only it.
    std::thread::sleep(std::time::Duration::from_millis(SLOT_MS * 3));
    let recipient = Pubkey::new_unique();
    let instructions = [
        ComputeBudgetInstruction::set_compute_unit_limit(10_000),
        ComputeBudgetInstruction::set_compute_unit_price(1_000_000),
        solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, 1_000_000),
    ];
    let transaction = signed(&node, &instructions, &payer);
    // 1,000,000 µlamports × 10,000 units: 10,000 lamports on top of the signature's 5,000.
    let message = BASE64.encode(transaction.message_data());
    let fee = node.result("getFeeForMessage", json!([message]))["value"].clone();
    assert_eq!(fee, 15_000);

    let simulated = simulate(&node, &transaction)["unitsConsumed"].as_u64().unwrap();
    assert!(simulated > 0);
    let before = node.result("getBalance", json!([payer.pubkey().to_string()]))["value"]
        .as_u64()
        .unwrap();
    let signature = node.send(&transaction)["result"].as_str().unwrap().to_string();
    node.wait_for(&signature, "confirmed");
    let landed = node.result(
        "getTransaction",
        json!([signature, { "commitment": "confirmed", "encoding": "json" }]),
    );
    assert_eq!(landed["meta"]["computeUnitsConsumed"], simulated);
    assert_eq!(landed["meta"]["fee"], 15_000);
    let after = node.result("getBalance", json!([payer.pubkey().to_string()]))["value"]
        .as_u64()
        .unwrap();
    assert_eq!(before - after, 15_000 + 1_000_000);

    let slot = landed["slot"].as_u64().unwrap();
    for accounts in [json!([]), json!([[payer.pubkey().to_string()]])] {
        let fees = node.result("getRecentPrioritizationFees", accounts);
        let fees = fees.as_array().unwrap();
        assert!(!fees.is_empty() && fees.len() <= 150);
        let in_slot = fees.iter().find(|fee| fee["slot"] == slot).expect("the slot is recent");
        assert_eq!(in_slot["prioritizationFee"], 1_000_000);
    }
    let too_many: Vec<String> = (0..129).map(|_| Pubkey::new_unique().to_string()).collect();
    let refused = node.call("getRecentPrioritizationFees", json!([too_many]));
    assert_eq!(error_code(&refused), -32602);
}
