//! What the benchmarks that drive the `localnet` binary over HTTP share: starting it, a
//! keep-alive JSON-RPC connection, funded payers, and the market with one registered agent.

use {
    agent_market::{AgentTerms, Pricing},
    anchor_lang::prelude::Pubkey,
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    localnet::{
        genesis::load_config,
        market::{pda, signing_key_proof_digest, MarketKeys},
    },
    serde_json::{json, Value},
    solana_keypair::Keypair,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{
        io::{BufRead, BufReader, Read, Write},
        net::TcpStream,
        process::{Child, Command, Stdio},
        str::FromStr,
    },
};

/// The agent's price: the development market's minimum price per call.
pub const PRICE_USDC: u64 = 10_000;

/// One keep-alive HTTP/1.1 connection speaking JSON-RPC.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl Connection {
    pub fn open(host: &str) -> Self {
        let stream = TcpStream::connect(host).expect("connect to localnet");
        stream.set_nodelay(true).expect("set TCP_NODELAY");
        Connection {
            reader: BufReader::new(stream.try_clone().expect("clone the stream")),
            writer: stream,
            host: host.to_string(),
        }
    }

    fn post(&mut self, body: &Value) -> Value {
        let body = body.to_string();
        write!(
            self.writer,
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        )
        .expect("send a request");
        let mut content_length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("read a header");
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                content_length = value.trim().parse().expect("a content length");
            }
        }
        let mut body = vec![0; content_length];
        self.reader.read_exact(&mut body).expect("read the body");
        serde_json::from_slice(&body).expect("a JSON answer")
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.post(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        result(method, response)
    }

    /// Batches of calls of `method`, one call per element of `params` and at most `size` calls
    /// a batch; answers in order.
    pub fn batch(&mut self, method: &str, params: &[Value], size: usize) -> Vec<Value> {
        params
            .chunks(size)
            .flat_map(|chunk| self.post_batch(method, chunk))
            .collect()
    }

    fn post_batch(&mut self, method: &str, params: &[Value]) -> Vec<Value> {
        let requests: Vec<Value> = params
            .iter()
            .enumerate()
            .map(|(id, params)| json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .collect();
        let Value::Array(mut answers) = self.post(&Value::Array(requests)) else {
            panic!("{method}: a batch answered without an array");
        };
        answers.sort_by_key(|answer| answer["id"].as_u64());
        answers.into_iter().map(|answer| result(method, answer)).collect()
    }

    pub fn send(&mut self, transaction: &Transaction) -> Value {
        self.call("sendTransaction", send_params(transaction))
    }

    pub fn blockhash(&mut self) -> solana_hash::Hash {
        let value = self.call("getLatestBlockhash", json!([{ "commitment": "processed" }]));
        solana_hash::Hash::from_str(value["value"]["blockhash"].as_str().expect("a blockhash")).expect("a blockhash")
    }
}

fn result(method: &str, mut response: Value) -> Value {
    if let Some(error) = response.get("error") {
        panic!("{method} failed: {error}");
    }
    response["result"].take()
}

/// `sendTransaction` as the relayer sends it (preflight on).
pub fn send_params(transaction: &Transaction) -> Value {
    let encoded = BASE64.encode(bincode::serialize(transaction).expect("a transaction serializes"));
    json!([encoded, { "encoding": "base64", "skipPreflight": false, "preflightCommitment": "processed", "maxRetries": 0 }])
}

/// The running `localnet` binary, killed when dropped.
pub struct Node {
    pub child: Child,
    pub host: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The host-release `localnet`, or `LOCALNET_BIN`.
pub fn localnet_binary() -> String {
    std::env::var("LOCALNET_BIN").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        format!("{target}/host-release/localnet")
    })
}

/// Starts `localnet_binary()` on a free port with `args`.
pub fn start_localnet(args: &[String]) -> Node {
    spawn_localnet(&localnet_binary(), args)
}

/// Starts `binary` on a free port with `args`.
pub fn spawn_localnet(binary: &str, args: &[String]) -> Node {
    let mut child = Command::new(binary)
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {binary}: {err}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("localnet's stdout"))
        .read_line(&mut line)
        .expect("localnet's ready line");
    let ready: Value = serde_json::from_str(&line).expect("localnet's ready line");
    Node {
        child,
        host: format!("127.0.0.1:{}", ready["rpcPort"]),
    }
}

/// `wallet` with SOL, `usdc` test USDC and an unlimited allowance to the market; and its
/// USDC account.
pub fn payer(connection: &mut Connection, wallet: Keypair, mint: &Pubkey, usdc: u64) -> (Keypair, Pubkey) {
    connection.call(
        "requestAirdrop",
        json!([wallet.pubkey().to_string(), 10_000_000_000u64]),
    );
    let minted = connection.call("localnet_mintUsdc", json!([wallet.pubkey().to_string(), usdc]));
    let token_account =
        Pubkey::from_str(minted["tokenAccount"].as_str().expect("a token account")).expect("an address");
    let approve = spl_token::instruction::approve_checked(
        &spl_token::ID,
        &token_account,
        mint,
        &pda::delegate(),
        &wallet.pubkey(),
        &[],
        u64::MAX,
        6,
    )
    .expect("approve_checked");
    let blockhash = connection.blockhash();
    connection.send(&Transaction::new_signed_with_payer(
        &[approve],
        Some(&wallet.pubkey()),
        &[&wallet],
        blockhash,
    ));
    (wallet, token_account)
}

/// The development market localnet runs, with the relayer's keypair.
pub struct Market {
    pub keys: MarketKeys,
    pub relayer: Keypair,
}

impl Market {
    pub fn development(connection: &mut Connection) -> Self {
        let config = connection.call("localnet_marketConfig", json!([]));
        let address = |field: &str| Pubkey::from_str(config[field].as_str().expect("an address")).expect("an address");
        let (keypairs, _, _) = load_config(None).expect("the development config");
        Market {
            keys: MarketKeys {
                authority: keypairs.authority.pubkey(),
                relayer: keypairs.relayer.pubkey(),
                arbiter: keypairs.arbiter.pubkey(),
                usdc_mint: address("usdcMint"),
                treasury: address("treasury"),
            },
            relayer: keypairs.relayer,
        }
    }

    /// Registers a pay-per-use agent (0.01 USDC a call) of `creator`, paid to its USDC account,
    /// whose results `signing` signs; returns the agent's address.
    pub fn register_agent(
        &self,
        connection: &mut Connection,
        creator: &(Keypair, Pubkey),
        signing: &Keypair,
    ) -> Pubkey {
        let agent_id = [7; 16];
        let terms = AgentTerms {
            signing_key: signing.pubkey().to_bytes(),
            endpoint: "https://agent.example.com".into(),
            listing_hash: [1; 32],
            pricing: Pricing::PayPerUse { price_usdc: PRICE_USDC },
            max_execution_secs: 60,
        };
        let (creator, payout_account) = creator;
        let agent = pda::agent(&agent_id);
        let proof: [u8; 64] = signing
            .sign_message(&signing_key_proof_digest(&agent, &creator.pubkey()))
            .into();
        let register = [
            MarketKeys::verify_signing_key_proof(&signing.pubkey().to_bytes(), &proof, &agent, &creator.pubkey()),
            self.keys.register_agent(
                creator.pubkey(),
                agent_id,
                *payout_account,
                *payout_account,
                creator.pubkey(),
                terms,
                100_000_000,
            ),
        ];
        let blockhash = connection.blockhash();
        connection.send(&Transaction::new_signed_with_payer(
            &register,
            Some(&creator.pubkey()),
            &[creator],
            blockhash,
        ));
        agent
    }

    /// The relayer creates `agent`'s receipt log, which every settlement appends to.
    pub fn create_receipt_log(&self, connection: &mut Connection, agent: &Pubkey) {
        let blockhash = connection.blockhash();
        connection.send(&Transaction::new_signed_with_payer(
            &[self.keys.create_receipt_log(self.relayer.pubkey(), *agent)],
            Some(&self.relayer.pubkey()),
            &[&self.relayer],
            blockhash,
        ));
    }
}
