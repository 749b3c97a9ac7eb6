//! The JSON-RPC server over real HTTP: shapes, commitment, history, and bad input.

mod common;

use {
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    common::{error_code, TestNode, SLOT_MS},
    localnet::server::{DEV_METHOD_FROM_BROWSER, MAX_REQUEST_BODY_BYTES},
    serde_json::{json, Value},
    solana_hash::Hash,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{str::FromStr, time::Duration},
};

#[test]
fn cluster_info_methods_answer_in_cluster_shapes() {
    let node = TestNode::start();
    assert_eq!(node.result("getHealth", json!([])), "ok");
    assert!(node.result("getVersion", json!([]))["solana-core"].is_string());
    assert!(Hash::from_str(node.result("getGenesisHash", json!([])).as_str().unwrap()).is_ok());
    let latest = node.result("getLatestBlockhash", json!([{ "commitment": "confirmed" }]));
    assert!(latest["context"]["slot"].is_u64());
    assert!(latest["value"]["lastValidBlockHeight"].as_u64().unwrap() >= 150);
    let blockhash = latest["value"]["blockhash"].clone();
    assert_eq!(node.result("isBlockhashValid", json!([blockhash]))["value"], true);
    assert_eq!(
        node.result("isBlockhashValid", json!([Hash::new_unique().to_string()]))["value"],
        false
    );
    let epoch = node.result("getEpochInfo", json!([]));
    for field in [
        "absoluteSlot",
        "blockHeight",
        "epoch",
        "slotIndex",
        "slotsInEpoch",
        "transactionCount",
    ] {
        assert!(epoch[field].is_u64(), "{field}: {epoch}");
    }
    assert_eq!(
        node.result("getMinimumBalanceForRentExemption", json!([165])),
        2_039_280
    );
}

#[test]
fn slots_advance_and_commitment_levels_lag_as_on_a_cluster() {
    let node = TestNode::start();
    let first = node
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    std::thread::sleep(Duration::from_millis(SLOT_MS * 40));
    let processed = node
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    assert!(
        processed > first + 30,
        "slots advance with wall time: {first} -> {processed}"
    );
    // Slots keep ticking between calls, so compare each level against its own reading.
    let finalized = node
        .result("getSlot", json!([{ "commitment": "finalized" }]))
        .as_u64()
        .unwrap();
    assert!(
        finalized + 32 >= processed && finalized + 32 <= processed + 5,
        "finalized {finalized}, processed {processed}"
    );
}

#[test]
fn a_transfer_is_processed_then_confirmed_then_finalized_with_full_metadata() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let transfer = solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, 12_345);
    let transaction =
        Transaction::new_signed_with_payer(&[transfer], Some(&payer.pubkey()), &[&payer], node.blockhash());
    let signature = node.send(&transaction)["result"].as_str().unwrap().to_string();
    assert_eq!(signature, transaction.signatures[0].to_string());

    node.wait_for(&signature, "confirmed");
    let finalized = node.wait_for(&signature, "finalized");
    assert_eq!(finalized["confirmations"], Value::Null);
    assert_eq!(finalized["err"], Value::Null);
    assert_eq!(finalized["status"], json!({ "Ok": null }));

    let record = node.result(
        "getTransaction",
        json!([signature, { "encoding": "json", "commitment": "confirmed" }]),
    );
    assert_eq!(record["meta"]["fee"], 5_000);
    assert_eq!(record["meta"]["err"], Value::Null);
    assert_eq!(record["meta"]["preBalances"][0], 1_000_000_000);
    assert_eq!(record["meta"]["postBalances"][0], 1_000_000_000 - 12_345 - 5_000);
    assert_eq!(record["meta"]["postBalances"][1], 12_345);
    assert_eq!(record["transaction"]["signatures"][0], signature);
    assert_eq!(record["version"], "legacy");
    assert!(record["meta"]["logMessages"][0]
        .as_str()
        .unwrap()
        .starts_with("Program 11111111111111111111111111111111 invoke"));
    let base64 = node.result("getTransaction", json!([signature, { "encoding": "base64" }]));
    assert_eq!(base64["transaction"][1], "base64");

    assert_eq!(
        node.result("getBalance", json!([recipient.to_string()]))["value"],
        12_345
    );
    let history = node.result("getSignaturesForAddress", json!([recipient.to_string()]));
    assert_eq!(history[0]["signature"], signature);
    assert_eq!(history[0]["confirmationStatus"], "finalized");
}

#[test]
fn token_methods_report_balances_and_filters_find_accounts() {
    let node = TestNode::start();
    let config = node.result("localnet_marketConfig", json!([]));
    let mint = Pubkey::from_str(config["usdcMint"].as_str().unwrap()).unwrap();
    let owner = node.funded(1_000_000_000);
    let minted = node.result("localnet_mintUsdc", json!([owner.pubkey().to_string(), 2_500_000]));
    let source = Pubkey::from_str(minted["tokenAccount"].as_str().unwrap()).unwrap();
    let balance = node.result("getTokenAccountBalance", json!([source.to_string()]));
    assert_eq!(
        balance["value"],
        json!({ "amount": "2500000", "decimals": 6, "uiAmount": 2.5, "uiAmountString": "2.5" })
    );

    let recipient = Pubkey::new_unique();
    let destination = spl_associated_token_account_client::address::get_associated_token_address(&recipient, &mint);
    let instructions = [
        spl_associated_token_account_client::instruction::create_associated_token_account_idempotent(
            &owner.pubkey(),
            &recipient,
            &mint,
            &spl_token::ID,
        ),
        spl_token::instruction::transfer_checked(
            &spl_token::ID,
            &source,
            &mint,
            &destination,
            &owner.pubkey(),
            &[],
            1_000_000,
            6,
        )
        .unwrap(),
    ];
    let transaction =
        Transaction::new_signed_with_payer(&instructions, Some(&owner.pubkey()), &[&owner], node.blockhash());
    let signature = node.send(&transaction)["result"].as_str().unwrap().to_string();
    node.wait_for(&signature, "confirmed");
    let meta = node.result("getTransaction", json!([signature, { "commitment": "confirmed" }]))["meta"].clone();
    let post: Vec<(String, String)> = meta["postTokenBalances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|balance| {
            (
                balance["owner"].as_str().unwrap().to_string(),
                balance["uiTokenAmount"]["amount"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        post.contains(&(owner.pubkey().to_string(), "1500000".to_string())),
        "{post:?}"
    );
    assert!(
        post.contains(&(recipient.to_string(), "1000000".to_string())),
        "{post:?}"
    );
    assert!(
        !meta["innerInstructions"].as_array().unwrap().is_empty(),
        "the ATA program's CPIs are recorded"
    );

    let by_owner = node.result(
        "getTokenAccountsByOwner",
        json!([recipient.to_string(), { "mint": mint.to_string() }, { "encoding": "jsonParsed" }]),
    );
    assert_eq!(by_owner["value"][0]["pubkey"], destination.to_string());
    assert_eq!(
        by_owner["value"][0]["account"]["data"]["parsed"]["info"]["tokenAmount"]["amount"],
        "1000000"
    );

    // Token accounts of this mint owned by the recipient: dataSize plus two memcmp filters.
    let filters = json!([{ "dataSize": 165 }, { "memcmp": { "offset": 0, "bytes": mint.to_string() } }, { "memcmp": { "offset": 32, "bytes": recipient.to_string() } }]);
    let found = node.result(
        "getProgramAccounts",
        json!([spl_token::ID.to_string(), { "filters": filters, "encoding": "base64" }]),
    );
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["pubkey"], destination.to_string());
}

/// A funded payer (1 SOL) and its signed transfer of 5 SOL, which the system program refuses.
fn overdraft(node: &TestNode) -> (Keypair, Transaction) {
    let payer = node.funded(1_000_000_000);
    let transfer =
        solana_system_interface::instruction::transfer(&payer.pubkey(), &Pubkey::new_unique(), 5_000_000_000);
    let transaction =
        Transaction::new_signed_with_payer(&[transfer], Some(&payer.pubkey()), &[&payer], node.blockhash());
    (payer, transaction)
}

#[test]
fn failed_preflight_returns_the_simulation_and_charges_nothing() {
    let node = TestNode::start();
    let (payer, transaction) = overdraft(&node);
    let response = node.send(&transaction);
    assert_eq!(error_code(&response), -32002);
    assert_eq!(
        response["error"]["data"]["err"],
        json!({ "InstructionError": [0, { "Custom": 1 }] })
    );
    assert!(response["error"]["data"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|line| line.as_str().unwrap().contains("insufficient lamports")));
    assert_eq!(
        node.result("getBalance", json!([payer.pubkey().to_string()]))["value"],
        1_000_000_000
    );
    let status = node.result("getSignatureStatuses", json!([[transaction.signatures[0].to_string()]]));
    assert_eq!(status["value"][0], Value::Null);
}

#[test]
fn a_transaction_failing_without_preflight_is_recorded_with_its_error_and_fee() {
    let node = TestNode::start();
    let (payer, transaction) = overdraft(&node);
    let encoded = BASE64.encode(bincode::serialize(&transaction).unwrap());
    let signature = node.result(
        "sendTransaction",
        json!([encoded, { "encoding": "base64", "skipPreflight": true }]),
    );
    let status = node.result("getSignatureStatuses", json!([[signature]]))["value"][0].clone();
    assert_eq!(status["err"], json!({ "InstructionError": [0, { "Custom": 1 }] }));
    assert_eq!(
        node.result("getBalance", json!([payer.pubkey().to_string()]))["value"],
        1_000_000_000 - 5_000
    );
}

#[test]
fn forged_signatures_stale_blockhashes_and_replays_are_refused() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let transfer = solana_system_interface::instruction::transfer(&payer.pubkey(), &Pubkey::new_unique(), 1);

    let mut forged =
        Transaction::new_signed_with_payer(&[transfer.clone()], Some(&payer.pubkey()), &[&payer], node.blockhash());
    forged.signatures[0] = Keypair::new().sign_message(&forged.message_data());
    assert_eq!(error_code(&node.send(&forged)), -32003);

    let stale = Transaction::new_signed_with_payer(
        &[transfer.clone()],
        Some(&payer.pubkey()),
        &[&payer],
        Hash::new_unique(),
    );
    let response = node.send(&stale);
    assert_eq!(error_code(&response), -32002);
    assert_eq!(response["error"]["data"]["err"], "BlockhashNotFound");

    let once = Transaction::new_signed_with_payer(&[transfer], Some(&payer.pubkey()), &[&payer], node.blockhash());
    assert!(node.send(&once)["result"].is_string());
    let replay = node.send(&once);
    assert_eq!(response_err(&replay), "AlreadyProcessed");
}

fn response_err(response: &Value) -> Value {
    response["error"]["data"]["err"].clone()
}

#[test]
fn bad_requests_get_standard_errors_and_the_server_keeps_serving() {
    let node = TestNode::start();
    let (status, body) = node.post(b"{not json");
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32700);

    assert_eq!(error_code(&node.call("noSuchMethod", json!([]))), -32601);
    assert_eq!(error_code(&node.call("getBalance", json!([]))), -32602);
    assert_eq!(error_code(&node.call("getBalance", json!(["not an address"]))), -32602);
    assert_eq!(
        error_code(&node.call("getBalance", json!({ "named": "params" }))),
        -32602
    );
    assert_eq!(error_code(&node.call("getSignatureStatuses", json!([["xyz"]]))), -32602);
    assert_eq!(
        error_code(&node.call("sendTransaction", json!(["AAAA", { "encoding": "base64" }]))),
        -32602
    );
    assert_eq!(
        error_code(&node.call("sendTransaction", json!(["!!!", { "encoding": "base64" }]))),
        -32602
    );
    assert_eq!(
        error_code(&node.call(
            "getAccountInfo",
            json!([Pubkey::new_unique().to_string(), { "encoding": "nope" }])
        )),
        -32602
    );

    let (status, body) = node.post(br#"{"jsonrpc":"1.0","id":7,"method":"getHealth"}"#);
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32600);

    let (status, body) = node.post(b"[]");
    assert_eq!(
        (
            status,
            serde_json::from_str::<Value>(&body).unwrap()["error"]["code"].clone()
        ),
        (200, json!(-32600))
    );

    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"getHealth"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#;
    let answers: Value = serde_json::from_str(&node.post(batch).1).unwrap();
    assert_eq!(answers[0]["result"], "ok");
    assert_eq!(answers[1]["error"]["code"], -32601);

    let oversized = vec![b' '; MAX_REQUEST_BODY_BYTES + 1];
    assert_eq!(node.post(&oversized).0, 413);

    assert_eq!(node.result("getHealth", json!([])), "ok");
}

#[test]
fn a_web_page_may_call_the_node_as_a_clusters_public_rpc_allows() {
    let node = TestNode::start();
    let preflight = node.raw(&format!(
        "OPTIONS / HTTP/1.1\r\nHost: {}\r\nOrigin: https://market.example\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, solana-client\r\nConnection: close\r\n\r\n",
        node.address
    ));
    let head = preflight.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 204"), "{preflight}");
    assert!(head.contains("access-control-allow-origin: *\r\n"), "{preflight}");
    assert!(
        head.contains("access-control-allow-methods: get, post, options\r\n"),
        "{preflight}"
    );
    assert!(
        head.contains("access-control-allow-headers: content-type, solana-client\r\n"),
        "{preflight}"
    );

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"getHealth"}"#;
    let answer = node.raw(&format!(
        "POST / HTTP/1.1\r\nHost: {}\r\nOrigin: https://market.example\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        node.address,
        body.len()
    ));
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: *\r\n"),
        "{answer}"
    );
    assert!(answer.contains(r#""result":"ok""#), "{answer}");
}

/// A POST from a web page at `origin`, answered as JSON.
fn post_from_page(node: &TestNode, origin: &str, body: &str) -> Value {
    let answer = node.raw(&format!(
        "POST / HTTP/1.1\r\nHost: {}\r\nOrigin: {origin}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        node.address,
        body.len()
    ));
    let (_, json) = answer.split_once("\r\n\r\n").expect("a body");
    serde_json::from_str(json).unwrap_or_else(|_| panic!("{answer}"))
}

#[test]
fn a_web_page_is_refused_the_development_methods_and_served_the_standard_ones() {
    let node = TestNode::start();
    let wallet = Pubkey::new_unique();
    for origin in ["https://evil.example", "http://127.0.0.1:5173"] {
        for (method, params) in [
            ("localnet_mintUsdc", json!([wallet.to_string(), 1_000_000])),
            ("localnet_advanceClock", json!([3600])),
            ("localnet_marketConfig", json!([])),
            (
                "localnet_dropTransaction",
                json!(["1111111111111111111111111111111111111111111111111111111111111111"]),
            ),
        ] {
            let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }).to_string();
            let answer = post_from_page(&node, origin, &body);
            assert_eq!(answer["id"], 7, "{answer}");
            assert_eq!(answer["error"]["code"], DEV_METHOD_FROM_BROWSER, "{answer}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{method} is a development method")),
                "{answer}"
            );
        }
        // Standard methods, and each request of a batch on its own, are still served.
        let batch = json!([
            { "jsonrpc": "2.0", "id": 1, "method": "getHealth" },
            { "jsonrpc": "2.0", "id": 2, "method": "localnet_mintUsdc", "params": [wallet.to_string(), 1] },
            { "jsonrpc": "2.0", "id": 3, "method": "getBalance", "params": [wallet.to_string()] },
        ])
        .to_string();
        let answers = post_from_page(&node, origin, &batch);
        assert_eq!(answers[0]["result"], "ok");
        assert_eq!(answers[1]["error"]["code"], DEV_METHOD_FROM_BROWSER);
        assert_eq!(answers[2]["result"]["value"], 0);
    }
    // A script (no Origin) still may mint, and finds that no page minted anything before it.
    let minted = node.result("localnet_mintUsdc", json!([wallet.to_string(), 1_000_000]));
    assert_eq!(minted["balance"], "1000000");
}

#[test]
fn simulation_fees_multiple_accounts_encodings_and_history_paging() {
    let node = TestNode::start();
    let payer = node.funded(1_000_000_000);
    let recipient = Pubkey::new_unique();
    let transfer =
        |lamports: u64| solana_system_interface::instruction::transfer(&payer.pubkey(), &recipient, lamports);

    // Simulation changes nothing; unsigned with a stale blockhash it needs both options.
    let signed =
        Transaction::new_signed_with_payer(&[transfer(10)], Some(&payer.pubkey()), &[&payer], node.blockhash());
    let encoded = BASE64.encode(bincode::serialize(&signed).unwrap());
    let simulated = node.result(
        "simulateTransaction",
        json!([encoded, { "encoding": "base64", "sigVerify": true }]),
    );
    assert_eq!(simulated["value"]["err"], Value::Null);
    assert!(simulated["value"]["logs"][0].as_str().unwrap().contains("invoke [1]"));
    assert_eq!(node.result("getBalance", json!([recipient.to_string()]))["value"], 0);
    let mut unsigned = Transaction::new_with_payer(&[transfer(10)], Some(&payer.pubkey()));
    unsigned.message.recent_blockhash = Hash::new_unique();
    let encoded = BASE64.encode(bincode::serialize(&unsigned).unwrap());
    let stale = node.result("simulateTransaction", json!([encoded, { "encoding": "base64" }]));
    assert_eq!(stale["value"]["err"], "BlockhashNotFound");
    let replaced = node.result(
        "simulateTransaction",
        json!([encoded, { "encoding": "base64", "replaceRecentBlockhash": true }]),
    );
    assert_eq!(replaced["value"]["err"], Value::Null);
    assert!(replaced["value"]["replacementBlockhash"]["blockhash"].is_string());
    let both = node.call(
        "simulateTransaction",
        json!([encoded, { "encoding": "base64", "sigVerify": true, "replaceRecentBlockhash": true }]),
    );
    assert_eq!(error_code(&both), -32602);
    let mut forged = signed.clone();
    forged.signatures[0] = Keypair::new().sign_message(&forged.message_data());
    let encoded = BASE64.encode(bincode::serialize(&forged).unwrap());
    let refused = node.result(
        "simulateTransaction",
        json!([encoded, { "encoding": "base64", "sigVerify": true }]),
    );
    assert_eq!(refused["value"]["err"], "SignatureFailure");

    let message = BASE64.encode(signed.message_data());
    assert_eq!(node.result("getFeeForMessage", json!([message]))["value"], 5_000);

    // base58 transactions, and three of them to page through.
    let mut signatures = Vec::new();
    for lamports in [1_000_000, 2_000_000, 3_000_000] {
        let transaction = Transaction::new_signed_with_payer(
            &[transfer(lamports)],
            Some(&payer.pubkey()),
            &[&payer],
            node.blockhash(),
        );
        let encoded = bs58::encode(bincode::serialize(&transaction).unwrap()).into_string();
        signatures.push(
            node.result("sendTransaction", json!([encoded]))
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // History is read at `finalized` by default, as on a cluster: a loaded machine may not have
    // finalized the transfers yet, so the pages are read once the last one is.
    node.wait_for(&signatures[2], "finalized");
    let page = |config: Value| -> Vec<String> {
        node.result("getSignaturesForAddress", json!([recipient.to_string(), config]))
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["signature"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        page(json!({})),
        vec![signatures[2].clone(), signatures[1].clone(), signatures[0].clone()]
    );
    assert_eq!(page(json!({ "limit": 1 })), vec![signatures[2].clone()]);
    assert_eq!(
        page(json!({ "before": signatures[2] })),
        vec![signatures[1].clone(), signatures[0].clone()]
    );
    assert_eq!(
        page(json!({ "until": signatures[0] })),
        vec![signatures[2].clone(), signatures[1].clone()]
    );

    let missing = Pubkey::new_unique();
    let accounts = node.result(
        "getMultipleAccounts",
        json!([[recipient.to_string(), missing.to_string()], { "encoding": "base64" }]),
    );
    assert_eq!(accounts["value"][0]["lamports"], 6_000_000);
    assert_eq!(accounts["value"][1], Value::Null);

    let config = node.result("localnet_marketConfig", json!([]));
    let mint = config["usdcMint"].as_str().unwrap();
    let sliced = node.result(
        "getAccountInfo",
        json!([mint, { "encoding": "base64", "dataSlice": { "offset": 44, "length": 1 } }]),
    );
    assert_eq!(
        sliced["value"]["data"],
        json!(["Bg==", "base64"]),
        "byte 44 of a mint is its decimals, 6"
    );
    let base58 = node.result(
        "getAccountInfo",
        json!([mint, { "encoding": "base58", "dataSlice": { "offset": 44, "length": 1 } }]),
    );
    assert_eq!(base58["value"]["data"], "7");
    assert_eq!(base58["value"]["space"], 82);
}
