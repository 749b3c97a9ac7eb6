//! `localnet --ledger DIR` keeps balances, accounts and history across a restart, even one
//! that killed the process.

mod common;

use {
    common::Rpc,
    serde_json::{json, Value},
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{
        io::{BufRead, BufReader},
        path::Path,
        process::{Child, Command, Stdio},
        time::Duration,
    },
};

const SLOT_MS: u64 = 50;

/// A running node, killed when dropped so that a failing test leaves no process behind.
struct Running(Child);

impl Running {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts the binary on free ports and reads the line it prints once serving.
fn spawn(ledger: &Path) -> (Running, Rpc) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_localnet"))
        .args(["--port", "0", "--slot-ms", &SLOT_MS.to_string(), "--ledger"])
        .arg(ledger)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start localnet");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("unexpected first line: {line}"));
    let port = ready["rpcPort"].as_u64().unwrap();
    (
        Running(child),
        Rpc {
            address: format!("127.0.0.1:{port}").parse().unwrap(),
        },
    )
}

#[test]
fn a_killed_node_restarts_with_its_balances_accounts_and_history() {
    let ledger = std::env::temp_dir().join(format!("localnet-restart-{}", solana_keypair::Keypair::new().pubkey()));
    let (mut first, rpc) = spawn(&ledger);
    let payer = rpc.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let minted = rpc.result("localnet_mintUsdc", json!([recipient.to_string(), 4_200_000]));
    let transfer = solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, 31_337);
    let transaction =
        Transaction::new_signed_with_payer(&[transfer], Some(&payer.pubkey()), &[&payer], rpc.blockhash());
    let signature = rpc.send(&transaction)["result"].as_str().unwrap().to_string();
    rpc.wait_for(&signature, "confirmed");
    let slot_before = rpc
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    // The ledger is saved every slot; give it two, then kill without a chance to flush.
    std::thread::sleep(Duration::from_millis(3 * SLOT_MS));
    first.kill();

    let (mut second, rpc) = spawn(&ledger);
    let slot_after = rpc
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    assert!(
        slot_after >= slot_before,
        "slots continue: {slot_before} then {slot_after}"
    );
    assert_eq!(
        rpc.result("getBalance", json!([recipient.to_string()]))["value"],
        31_337
    );
    let token_account = minted["tokenAccount"].as_str().unwrap();
    assert_eq!(
        rpc.result("getTokenAccountBalance", json!([token_account]))["value"]["amount"],
        "4200000"
    );
    let record = rpc.result("getTransaction", json!([signature, { "commitment": "confirmed" }]));
    assert_eq!(record["meta"]["postBalances"][1], 31_337);
    let history = rpc.result("getSignaturesForAddress", json!([recipient.to_string()]));
    assert_eq!(
        history.as_array().unwrap().len(),
        2,
        "the mint and the transfer: {history}"
    );

    // The restarted chain takes new transactions.
    let again = solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, 1);
    let transaction = Transaction::new_signed_with_payer(&[again], Some(&payer.pubkey()), &[&payer], rpc.blockhash());
    assert!(rpc.send(&transaction)["result"].is_string());
    second.kill();
    std::fs::remove_dir_all(&ledger).unwrap();
}
