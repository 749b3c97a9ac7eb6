//! A node served in-process over real HTTP and WebSocket, with fast slots.
#![allow(dead_code)]

use {
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    localnet::{genesis, history::DEFAULT_RETAIN_TRANSACTIONS, node::Node, pubsub, server::router, timing::Timing},
    serde_json::{json, Value},
    solana_hash::Hash,
    solana_keypair::Keypair,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{
        io::{Read, Write},
        net::{SocketAddr, TcpStream},
        str::FromStr,
        time::{Duration, Instant},
    },
};

pub const SLOT_MS: u64 = 50;

/// A JSON-RPC client of a node at `address`.
pub struct Rpc {
    pub address: SocketAddr,
}

/// A node served in-process.
pub struct TestNode {
    pub rpc: Rpc,
    pub ws_address: SocketAddr,
    pub runtime: tokio::runtime::Runtime,
}

impl std::ops::Deref for TestNode {
    type Target = Rpc;
    fn deref(&self) -> &Rpc {
        &self.rpc
    }
}

impl TestNode {
    pub fn start() -> Self {
        Self::start_with(Timing::INSTANT, SLOT_MS)
    }

    /// A node with `timing` and slots of `slot_ms`.
    pub fn start_with(timing: Timing, slot_ms: u64) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let node = Node::start(
            move || {
                let mut state = genesis::start(
                    None,
                    None,
                    slot_ms,
                    DEFAULT_RETAIN_TRANSACTIONS,
                    genesis::GenesisMarket::Initialized,
                )?;
                state.ledger.set_timing(timing);
                Ok(state)
            },
            Duration::from_millis(slot_ms),
        )
        .unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let address = listener.local_addr().unwrap();
        let ws_listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let ws_address = ws_listener.local_addr().unwrap();
        let pubsub_node = node.clone();
        runtime.spawn(async move { axum::serve(listener, router(node, timing.rpc_latency, timing.seed)).await });
        runtime.spawn(async move { axum::serve(ws_listener, pubsub::router(pubsub_node)).await });
        TestNode {
            rpc: Rpc { address },
            ws_address,
            runtime,
        }
    }
}

impl Rpc {
    /// Posts `body` and returns the HTTP status and the body.
    pub fn post(&self, body: &[u8]) -> (u16, String) {
        let mut stream = TcpStream::connect(self.address).unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.address,
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        // The server may answer (413) before reading a large body; a broken pipe is fine.
        let _ = stream.write_all(body);
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response.split(' ').nth(1).unwrap().parse().unwrap();
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default();
        (status, body)
    }

    /// Sends `request` (a whole HTTP/1.1 request) as it is and returns the whole response.
    pub fn raw(&self, request: &str) -> String {
        let mut stream = TcpStream::connect(self.address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    pub fn call(&self, method: &str, params: Value) -> Value {
        let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let (status, body) = self.post(request.to_string().as_bytes());
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    pub fn result(&self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    pub fn blockhash(&self) -> Hash {
        Hash::from_str(
            self.result("getLatestBlockhash", json!([]))["value"]["blockhash"]
                .as_str()
                .unwrap(),
        )
        .unwrap()
    }

    pub fn send(&self, transaction: &Transaction) -> Value {
        self.send_with(transaction, json!({}))
    }

    /// `sendTransaction` with more of its configuration (`maxRetries`, `skipPreflight`).
    pub fn send_with(&self, transaction: &Transaction, mut config: Value) -> Value {
        let encoded = BASE64.encode(bincode::serialize(transaction).unwrap());
        config["encoding"] = json!("base64");
        self.call("sendTransaction", json!([encoded, config]))
    }

    pub fn funded(&self, lamports: u64) -> Keypair {
        let keypair = Keypair::new();
        self.result("requestAirdrop", json!([keypair.pubkey().to_string(), lamports]));
        keypair
    }

    pub fn wait_for(&self, signature: &str, status: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.result("getSignatureStatuses", json!([[signature]]))["value"][0].clone();
            if value["confirmationStatus"] == status {
                return value;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{signature} never reached {status}: {value}"
            );
            std::thread::sleep(Duration::from_millis(SLOT_MS / 2));
        }
    }
}

pub fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}
