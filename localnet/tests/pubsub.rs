//! PubSub over a real WebSocket: every subscription kind, commitment timing, and limits.

mod common;

use {
    common::{TestNode, SLOT_MS},
    futures_util::{SinkExt, StreamExt},
    localnet::pubsub::MAX_SUBSCRIPTIONS_PER_CONNECTION,
    serde_json::{json, Value},
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::time::Duration,
    tokio_tungstenite::{connect_async, tungstenite::Message, MaybeTlsStream, WebSocketStream},
};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

struct Client<'a> {
    node: &'a TestNode,
    socket: Socket,
    next_id: u64,
}

impl<'a> Client<'a> {
    fn connect(node: &'a TestNode) -> Self {
        let url = format!("ws://{}", node.ws_address);
        let (socket, _) = node.runtime.block_on(connect_async(url)).expect("connect");
        Client {
            node,
            socket,
            next_id: 0,
        }
    }

    /// Sends a request and returns its answer (notifications that arrive first are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        self.node
            .runtime
            .block_on(self.socket.send(Message::Text(request.into())))
            .unwrap();
        loop {
            let message = self.next_message(Duration::from_secs(5)).expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn subscribe(&mut self, method: &str, params: Value) -> u64 {
        let answer = self.request(method, params);
        answer["result"]
            .as_u64()
            .unwrap_or_else(|| panic!("{method}: {answer}"))
    }

    fn next_message(&mut self, within: Duration) -> Option<Value> {
        let socket = &mut self.socket;
        self.node.runtime.block_on(async {
            loop {
                match tokio::time::timeout(within, socket.next()).await {
                    Ok(Some(Ok(Message::Text(text)))) => return Some(serde_json::from_str(&text).unwrap()),
                    Ok(Some(Ok(_))) => continue,
                    _ => return None,
                }
            }
        })
    }

    /// The next notification of `subscription`, skipping others.
    fn notification(&mut self, subscription: u64) -> Value {
        loop {
            let message = self
                .next_message(Duration::from_secs(5))
                .unwrap_or_else(|| panic!("no notification for {subscription}"));
            if message["params"]["subscription"] == subscription {
                return message;
            }
        }
    }
}

fn transfer(node: &TestNode, to: &Pubkey) -> (Transaction, String) {
    let payer = node.funded(1_000_000_000);
    let instruction = solana_system_interface::instruction::transfer(&payer.pubkey(), to, 777);
    let transaction =
        Transaction::new_signed_with_payer(&[instruction], Some(&payer.pubkey()), &[&payer], node.blockhash());
    let signature = transaction.signatures[0].to_string();
    (transaction, signature)
}

#[test]
fn slot_notifications_follow_the_chain() {
    let node = TestNode::start();
    let mut client = Client::connect(&node);
    let subscription = client.subscribe("slotSubscribe", json!([]));
    let first = client.notification(subscription)["params"]["result"].clone();
    let second = client.notification(subscription)["params"]["result"].clone();
    assert_eq!(second["slot"].as_u64().unwrap(), first["slot"].as_u64().unwrap() + 1);
    assert_eq!(second["parent"], first["slot"]);
    assert_eq!(client.request("slotUnsubscribe", json!([subscription]))["result"], true);
}

#[test]
fn signature_notifications_arrive_at_the_requested_commitment_and_end_the_subscription() {
    let node = TestNode::start();
    let mut client = Client::connect(&node);
    let (transaction, signature) = transfer(&node, &Pubkey::new_unique());
    let processed = client.subscribe("signatureSubscribe", json!([signature, { "commitment": "processed" }]));
    let confirmed = client.subscribe("signatureSubscribe", json!([signature, { "commitment": "confirmed" }]));
    let sent_in_slot = node
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    assert!(node.send(&transaction)["result"].is_string());

    let first = client.notification(processed);
    assert_eq!(first["method"], "signatureNotification");
    assert_eq!(first["params"]["result"]["value"], json!({ "err": null }));
    let second = client.notification(confirmed);
    let tx_slot = second["params"]["result"]["context"]["slot"].as_u64().unwrap();
    assert!(tx_slot >= sent_in_slot);
    // Confirmed means at least one slot after the transaction's.
    let now = node
        .result("getSlot", json!([{ "commitment": "processed" }]))
        .as_u64()
        .unwrap();
    assert!(
        now > tx_slot,
        "confirmed at slot {now} for a transaction of slot {tx_slot}"
    );

    // The subscription ended with its notification.
    assert_eq!(
        client.request("signatureUnsubscribe", json!([confirmed]))["error"]["code"],
        -32602
    );
    // Subscribing to a transaction that already reached the commitment answers at once.
    node.wait_for(&signature, "confirmed");
    let late = client.subscribe("signatureSubscribe", json!([signature, { "commitment": "confirmed" }]));
    assert_eq!(
        client.notification(late)["params"]["result"]["value"]["err"],
        Value::Null
    );
}

#[test]
fn logs_and_account_notifications_report_what_a_transaction_did() {
    let node = TestNode::start();
    let mut client = Client::connect(&node);
    let recipient = Pubkey::new_unique();
    let logs = client.subscribe(
        "logsSubscribe",
        json!([{ "mentions": [recipient.to_string()] }, { "commitment": "confirmed" }]),
    );
    let account = client.subscribe(
        "accountSubscribe",
        json!([recipient.to_string(), { "commitment": "processed", "encoding": "base64" }]),
    );
    let (transaction, signature) = transfer(&node, &recipient);
    node.send(&transaction);

    let update = client.notification(account);
    assert_eq!(update["params"]["result"]["value"]["lamports"], 777);
    let logged = client.notification(logs)["params"]["result"]["value"].clone();
    assert_eq!(logged["signature"], signature);
    assert_eq!(logged["err"], Value::Null);
    assert!(logged["logs"][0]
        .as_str()
        .unwrap()
        .starts_with("Program 11111111111111111111111111111111 invoke"));
}

#[test]
fn bad_messages_get_errors_and_a_flood_of_subscriptions_is_capped() {
    let node = TestNode::start();
    let mut client = Client::connect(&node);
    node.runtime
        .block_on(client.socket.send(Message::Text("{not json".into())))
        .unwrap();
    assert_eq!(
        client.next_message(Duration::from_secs(5)).unwrap()["error"]["code"],
        -32700
    );
    assert_eq!(client.request("noSuchSubscribe", json!([]))["error"]["code"], -32601);
    assert_eq!(
        client.request("signatureSubscribe", json!(["not a signature"]))["error"]["code"],
        -32602
    );
    assert_eq!(
        client.request("logsSubscribe", json!([{ "mentions": [] }]))["error"]["code"],
        -32602
    );

    let subscriptions: Vec<u64> = (0..MAX_SUBSCRIPTIONS_PER_CONNECTION)
        .map(|_| client.subscribe("accountSubscribe", json!([Pubkey::new_unique().to_string()])))
        .collect();
    let refused = client.request("accountSubscribe", json!([Pubkey::new_unique().to_string()]));
    assert_eq!(refused["error"]["code"], -32603);

    // The connection, and the node, keep serving; freeing one subscription makes room.
    assert_eq!(
        client.request("accountUnsubscribe", json!([subscriptions[0]]))["result"],
        true
    );
    let slot = client.subscribe("slotSubscribe", json!([]));
    client.notification(slot);
    assert_eq!(node.result("getHealth", json!([])), "ok");
    std::thread::sleep(Duration::from_millis(SLOT_MS));
}

/// web3.js closes an idle socket with code 1000 and reconnects forever after any other ending
/// (1006 when the TCP connection drops without the closing handshake), so the node must answer
/// the client's Close frame.
#[test]
fn a_close_from_the_client_is_answered_with_a_close() {
    use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame};

    let node = TestNode::start();
    let mut client = Client::connect(&node);
    client.subscribe("slotSubscribe", json!([]));
    let socket = &mut client.socket;
    let answer = node.runtime.block_on(async {
        socket
            .send(Message::Close(Some(CloseFrame {
                code: CloseCode::Normal,
                reason: "idle".into(),
            })))
            .await
            .unwrap();
        loop {
            match tokio::time::timeout(Duration::from_secs(5), socket.next()).await {
                Ok(Some(Ok(Message::Close(frame)))) => return Some(frame),
                Ok(Some(Ok(_))) => continue,
                _ => return None,
            }
        }
    });
    let frame = answer
        .expect("a Close frame before the connection ends")
        .expect("a close code");
    assert_eq!(frame.code, CloseCode::Normal);
}
