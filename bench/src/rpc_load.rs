//! `sendTransaction` over HTTP against the `localnet` binary: transactions per second and
//! p50/p99 latency for plain USDC transfers and for open_escrow+settle pairs, at 1, 16 and 64
//! concurrent clients. Each client keeps one HTTP/1.1 connection open, as a pooled client does.
//!
//! Run: `npm run bench:rpc` (builds localnet with the host-release profile first).

use {
    agent_market::{AgentTerms, Pricing, FEE_SHARD_COUNT},
    anchor_lang::prelude::Pubkey,
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    localnet::{
        genesis::load_config,
        market::{pda, result_digest, EscrowRef, MarketKeys},
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
        sync::Arc,
        time::{Duration, Instant},
    },
};

const LEVELS: [usize; 3] = [1, 16, 64];
const TRANSFERS_PER_LEVEL: usize = 4_000;
const PAIRS_PER_LEVEL: usize = 1_000;

/// One keep-alive HTTP/1.1 connection speaking JSON-RPC.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl Connection {
    fn open(host: &str) -> Self {
        let stream = TcpStream::connect(host).expect("connect to localnet");
        stream.set_nodelay(true).unwrap();
        Connection {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
            host: host.to_string(),
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
        write!(
            self.writer,
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        )
        .unwrap();
        let mut content_length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                content_length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; content_length];
        self.reader.read_exact(&mut body).unwrap();
        let response: Value = serde_json::from_slice(&body).unwrap();
        if let Some(error) = response.get("error") {
            panic!("{method} failed: {error}");
        }
        response["result"].clone()
    }

    fn send(&mut self, transaction: &Transaction) {
        let encoded = BASE64.encode(bincode::serialize(transaction).unwrap());
        self.call("sendTransaction", json!([encoded, { "encoding": "base64" }]));
    }

    fn blockhash(&mut self) -> solana_hash::Hash {
        let value = self.call("getLatestBlockhash", json!([]));
        solana_hash::Hash::from_str(value["value"]["blockhash"].as_str().unwrap()).unwrap()
    }
}

struct Node {
    child: Child,
    host: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_localnet() -> Node {
    let binary = std::env::var("LOCALNET_BIN").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        format!("{target}/host-release/localnet")
    });
    let mut child = Command::new(&binary)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {binary}: {err}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).expect("localnet's ready line");
    Node {
        child,
        host: format!("127.0.0.1:{}", ready["rpcPort"]),
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Runs `work` for every item on `clients` threads with a connection each; returns
/// (wall time, latency of each call).
fn drive<T: Send + Sync + 'static>(
    host: &str,
    clients: usize,
    items: Vec<T>,
    work: fn(&mut Connection, &T) -> Vec<Duration>,
) -> (Duration, Vec<Duration>) {
    let items = Arc::new(items);
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|client| {
            let items = Arc::clone(&items);
            let host = host.to_string();
            std::thread::spawn(move || {
                let mut connection = Connection::open(&host);
                items
                    .iter()
                    .skip(client)
                    .step_by(clients)
                    .flat_map(|item| work(&mut connection, item))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut latencies: Vec<Duration> = handles.into_iter().flat_map(|handle| handle.join().unwrap()).collect();
    let elapsed = started.elapsed();
    latencies.sort();
    (elapsed, latencies)
}

fn timed(connection: &mut Connection, transaction: &Transaction) -> Duration {
    let started = Instant::now();
    connection.send(transaction);
    started.elapsed()
}

fn report(name: &str, clients: usize, elapsed: Duration, latencies: &[Duration]) {
    println!(
        "  {name:<22} {clients:>3} clients  {:>8.0} tx/s   p50 {:>6.2} ms   p99 {:>6.2} ms",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(latencies, 0.50).as_secs_f64() * 1e3,
        percentile(latencies, 0.99).as_secs_f64() * 1e3,
    );
}

/// A payer with SOL, test USDC and an allowance to the market.
fn payer(connection: &mut Connection, mint: &Pubkey, usdc: u64) -> (Keypair, Pubkey) {
    let wallet = Keypair::new();
    connection.call(
        "requestAirdrop",
        json!([wallet.pubkey().to_string(), 10_000_000_000u64]),
    );
    let minted = connection.call("localnet_mintUsdc", json!([wallet.pubkey().to_string(), usdc]));
    let token_account = Pubkey::from_str(minted["tokenAccount"].as_str().unwrap()).unwrap();
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
    .unwrap();
    let blockhash = connection.blockhash();
    connection.send(&Transaction::new_signed_with_payer(
        &[approve],
        Some(&wallet.pubkey()),
        &[&wallet],
        blockhash,
    ));
    (wallet, token_account)
}

struct Pair {
    open: Transaction,
    settle: Transaction,
}

fn main() {
    let node = start_localnet();
    let mut setup = Connection::open(&node.host);
    let config = setup.call("localnet_marketConfig", json!([]));
    let mint = Pubkey::from_str(config["usdcMint"].as_str().unwrap()).unwrap();
    let (keypairs, _, _) = load_config(None).expect("the development config");
    let relayer = keypairs.relayer;
    let keys = MarketKeys {
        authority: keypairs.authority.pubkey(),
        relayer: relayer.pubkey(),
        arbiter: keypairs.arbiter.pubkey(),
        usdc_mint: mint,
        treasury: Pubkey::from_str(config["treasury"].as_str().unwrap()).unwrap(),
    };

    // An agent, and payers: one per client so their transfers never share a source account.
    let (creator, creator_token_account) = payer(&mut setup, &mint, 1_000_000_000);
    let signing = Keypair::new();
    let agent_id = [7; 16];
    let terms = AgentTerms {
        signing_key: signing.pubkey().to_bytes(),
        endpoint: "https://agent.example.com".into(),
        listing_hash: [1; 32],
        pricing: Pricing::PayPerUse { price_usdc: 10_000 },
        max_execution_secs: 60,
    };
    let register = keys.register_agent(
        creator.pubkey(),
        agent_id,
        creator_token_account,
        creator_token_account,
        terms,
        100_000_000,
    );
    let blockhash = setup.blockhash();
    setup.send(&Transaction::new_signed_with_payer(
        &[register],
        Some(&creator.pubkey()),
        &[&creator],
        blockhash,
    ));
    let agent = pda::agent(&agent_id);
    let payers: Vec<(Keypair, Pubkey)> = (0..64).map(|_| payer(&mut setup, &mint, 1_000_000_000_000)).collect();
    let sink = payer(&mut setup, &mint, 0).1;

    println!("sendTransaction over HTTP to localnet (preflight on, one keep-alive connection per client)");
    let mut sequence = 0u64;
    for clients in LEVELS {
        // Signed just before each level so the blockhash is fresh.
        let blockhash = setup.blockhash();
        let transfers: Vec<Transaction> = (0..TRANSFERS_PER_LEVEL)
            .map(|index| {
                sequence += 1;
                let (wallet, source) = &payers[index % clients];
                let transfer = spl_token::instruction::transfer_checked(
                    &spl_token::ID,
                    source,
                    &mint,
                    &sink,
                    &wallet.pubkey(),
                    &[],
                    sequence,
                    6,
                )
                .unwrap();
                Transaction::new_signed_with_payer(&[transfer], Some(&wallet.pubkey()), &[wallet], blockhash)
            })
            .collect();
        let (elapsed, latencies) = drive(&node.host, clients, transfers, |connection, transaction| {
            vec![timed(connection, transaction)]
        });
        report("USDC transfer", clients, elapsed, &latencies);
    }
    for clients in LEVELS {
        let blockhash = setup.blockhash();
        let pairs: Vec<Pair> = (0..PAIRS_PER_LEVEL)
            .map(|index| {
                sequence += 1;
                let (wallet, token_account) = &payers[index % 64];
                let mut execution_id = [0u8; 16];
                execution_id[..8].copy_from_slice(&sequence.to_le_bytes());
                let request_hash = [3; 32];
                let result_hash = [4; 32];
                let open = keys.open_escrow(
                    agent,
                    wallet.pubkey(),
                    *token_account,
                    execution_id,
                    [5; 16],
                    request_hash,
                );
                let escrow = EscrowRef {
                    execution_id,
                    agent,
                    payer: wallet.pubkey(),
                    payer_token_account: *token_account,
                    rent_payer: relayer.pubkey(),
                };
                let digest = result_digest(&execution_id, &agent, &request_hash, &result_hash);
                let signature: [u8; 64] = signing.sign_message(&digest).into();
                let settle = [
                    MarketKeys::verify_result_signature(&signing.pubkey().to_bytes(), &signature, &digest),
                    keys.settle(
                        &escrow,
                        creator_token_account,
                        result_hash,
                        execution_id[0] % FEE_SHARD_COUNT,
                    ),
                ];
                Pair {
                    open: Transaction::new_signed_with_payer(&[open], Some(&relayer.pubkey()), &[&relayer], blockhash),
                    settle: Transaction::new_signed_with_payer(
                        &settle,
                        Some(&relayer.pubkey()),
                        &[&relayer],
                        blockhash,
                    ),
                }
            })
            .collect();
        let (elapsed, latencies) = drive(&node.host, clients, pairs, |connection, pair| {
            vec![timed(connection, &pair.open), timed(connection, &pair.settle)]
        });
        report("open_escrow + settle", clients, elapsed, &latencies);
    }
}
