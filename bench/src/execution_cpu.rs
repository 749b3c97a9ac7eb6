//! CPU the `localnet` binary spends per marketplace execution, as the relayer drives it: per
//! execution one `sendTransaction` of open_escrow, one `getMultipleAccounts` of its escrow and
//! one `sendTransaction` of settle, each kind sent as a JSON-RPC batch over a keep-alive
//! connection, and one `getSignatureStatuses` of the batch's signatures. CPU is read from
//! /proc: the chain thread's, and the whole process's. Work done once a slot (producing the
//! block, saving the ledger) is shared by the executions of that slot, so `--rate` paces them
//! as a relayer under load would, and `--ledger DIR` saves the ledger as `npm start` does.
//!
//! Run: `sh scripts/cargo.sh run --profile host-release --locked -p agent-market-bench --bin
//! execution-cpu -- [executions] [--rate per_second] [localnet arguments]` after building
//! localnet with the same profile. `LOCALNET_BIN` overrides the binary (a wrapper script may
//! run it under a profiler).

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
        time::{Duration, Instant},
    },
};

/// Executions per batch: their two transactions make the 100 signatures of one status poll.
const BATCH: usize = 50;
/// Transactions per `sendTransaction` batch, under localnet's 50 KB request limit.
const SEND_BATCH: usize = 25;
const WARMUP_EXECUTIONS: usize = 500;
const DEFAULT_EXECUTIONS: usize = 5_000;
const PAYERS: usize = 16;

/// One keep-alive HTTP/1.1 connection speaking JSON-RPC.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl Connection {
    fn open(host: &str) -> Self {
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

    fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.post(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        result(method, response)
    }

    /// Batches of calls of `method`, one call per element of `params` and at most `size` calls
    /// a batch; answers in order.
    fn batch(&mut self, method: &str, params: &[Value], size: usize) -> Vec<Value> {
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

    fn send(&mut self, transaction: &Transaction) -> Value {
        self.call("sendTransaction", send_params(transaction))
    }

    fn blockhash(&mut self) -> solana_hash::Hash {
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

/// `sendTransaction` as the relayer sends it.
fn send_params(transaction: &Transaction) -> Value {
    let encoded = BASE64.encode(bincode::serialize(transaction).expect("a transaction serializes"));
    json!([encoded, { "encoding": "base64", "skipPreflight": false, "preflightCommitment": "processed", "maxRetries": 0 }])
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

fn start_localnet(args: &[String]) -> Node {
    let binary = std::env::var("LOCALNET_BIN").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        format!("{target}/host-release/localnet")
    });
    let mut child = Command::new(&binary)
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

/// Nanoseconds on CPU of one thread, from its schedstat.
fn thread_cpu_ns(pid: u32, tid: &str) -> u64 {
    let schedstat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).expect("a thread's schedstat");
    schedstat
        .split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("schedstat starts with the time on CPU")
}

/// (the chain thread's, every thread's) nanoseconds on CPU.
fn cpu_ns(pid: u32) -> (u64, u64) {
    let mut chain = 0;
    let mut all = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads") {
        let tid = task.expect("a thread").file_name().into_string().expect("a thread id");
        let ns = thread_cpu_ns(pid, &tid);
        all += ns;
        let name = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
        if name.trim() == "chain" {
            chain = ns;
        }
    }
    (chain, all)
}

/// The same key in every run, so that runs do the same work: verifying a signature takes
/// variable time, and finding a PDA's bump depends on its seeds.
fn keypair(index: u8) -> Keypair {
    Keypair::new_from_array([index; 32])
}

/// A payer with SOL, test USDC and an allowance to the market.
fn payer(connection: &mut Connection, wallet: Keypair, mint: &Pubkey, usdc: u64) -> (Keypair, Pubkey) {
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

struct Market {
    keys: MarketKeys,
    relayer: Keypair,
    agent: Pubkey,
    signing: Keypair,
    payout_account: Pubkey,
    payers: Vec<(Keypair, Pubkey)>,
    sequence: u64,
}

impl Market {
    fn setup(connection: &mut Connection) -> Self {
        let config = connection.call("localnet_marketConfig", json!([]));
        let address = |field: &str| Pubkey::from_str(config[field].as_str().expect("an address")).expect("an address");
        let mint = address("usdcMint");
        let (keypairs, _, _) = load_config(None).expect("the development config");
        let keys = MarketKeys {
            authority: keypairs.authority.pubkey(),
            relayer: keypairs.relayer.pubkey(),
            arbiter: keypairs.arbiter.pubkey(),
            usdc_mint: mint,
            treasury: address("treasury"),
        };
        let (creator, payout_account) = payer(connection, keypair(1), &mint, 1_000_000_000);
        let signing = keypair(2);
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
            payout_account,
            payout_account,
            terms,
            100_000_000,
        );
        let blockhash = connection.blockhash();
        connection.send(&Transaction::new_signed_with_payer(
            &[register],
            Some(&creator.pubkey()),
            &[&creator],
            blockhash,
        ));
        let payers = (0..PAYERS as u8)
            .map(|index| payer(connection, keypair(3 + index), &mint, 1_000_000_000_000))
            .collect();
        Market {
            keys,
            relayer: keypairs.relayer,
            agent: pda::agent(&agent_id),
            signing,
            payout_account,
            payers,
            sequence: 0,
        }
    }

    /// Runs `count` executions in batches of `BATCH`, at most `rate` a second.
    fn execute(&mut self, connection: &mut Connection, count: usize, rate: Option<f64>) {
        let started = Instant::now();
        for round in 0..count.div_ceil(BATCH) {
            if let Some(rate) = rate {
                let due = started + Duration::from_secs_f64((round * BATCH) as f64 / rate);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            let blockhash = connection.blockhash();
            let mut opens = Vec::with_capacity(BATCH);
            let mut reads = Vec::with_capacity(BATCH);
            let mut settles = Vec::with_capacity(BATCH);
            for index in 0..BATCH {
                self.sequence += 1;
                let (wallet, token_account) = &self.payers[index % PAYERS];
                let mut execution_id = [0u8; 16];
                execution_id[..8].copy_from_slice(&self.sequence.to_le_bytes());
                let request_hash = [3; 32];
                let result_hash = [4; 32];
                let open = self.keys.open_escrow(
                    self.agent,
                    wallet.pubkey(),
                    *token_account,
                    execution_id,
                    [5; 16],
                    request_hash,
                );
                let escrow = EscrowRef {
                    execution_id,
                    agent: self.agent,
                    payer: wallet.pubkey(),
                    payer_token_account: *token_account,
                    rent_payer: self.relayer.pubkey(),
                };
                let digest = result_digest(&execution_id, &self.agent, &request_hash, &result_hash);
                let signature: [u8; 64] = self.signing.sign_message(&digest).into();
                let settle = [
                    MarketKeys::verify_result_signature(&self.signing.pubkey().to_bytes(), &signature, &digest),
                    self.keys.settle(
                        &escrow,
                        self.payout_account,
                        result_hash,
                        execution_id[0] % FEE_SHARD_COUNT,
                    ),
                ];
                let relayer = &self.relayer;
                opens.push(send_params(&Transaction::new_signed_with_payer(
                    &[open],
                    Some(&relayer.pubkey()),
                    &[relayer],
                    blockhash,
                )));
                reads.push(json!([
                    [pda::escrow(&execution_id).to_string()],
                    { "commitment": "processed", "encoding": "base64" }
                ]));
                settles.push(send_params(&Transaction::new_signed_with_payer(
                    &settle,
                    Some(&relayer.pubkey()),
                    &[relayer],
                    blockhash,
                )));
            }
            let mut signatures = connection.batch("sendTransaction", &opens, SEND_BATCH);
            let escrows = connection.batch("getMultipleAccounts", &reads, BATCH);
            assert!(
                escrows.iter().all(|escrow| !escrow["value"][0].is_null()),
                "every escrow is open"
            );
            signatures.extend(connection.batch("sendTransaction", &settles, SEND_BATCH));
            let statuses = connection.call(
                "getSignatureStatuses",
                json!([signatures, { "searchTransactionHistory": true }]),
            );
            assert!(
                statuses["value"]
                    .as_array()
                    .is_some_and(|statuses| statuses.iter().all(|status| status["err"].is_null())),
                "every transaction succeeded"
            );
        }
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let executions = match args.first().map(|count| count.parse()) {
        Some(Ok(count)) => {
            args.remove(0);
            count
        }
        Some(Err(_)) | None => DEFAULT_EXECUTIONS,
    };
    let rate = args.iter().position(|arg| arg == "--rate").map(|at| {
        let rate: f64 = args
            .get(at + 1)
            .and_then(|rate| rate.parse().ok())
            .expect("--rate takes executions a second");
        args.drain(at..at + 2);
        rate
    });
    let node = start_localnet(&args);
    let pid = node.child.id();
    let mut connection = Connection::open(&node.host);
    let mut market = Market::setup(&mut connection);
    market.execute(&mut connection, WARMUP_EXECUTIONS, None);

    let (chain_before, all_before) = cpu_ns(pid);
    let started = Instant::now();
    market.execute(&mut connection, executions, rate);
    let elapsed = started.elapsed();
    let (chain_after, all_after) = cpu_ns(pid);
    let executions = executions.div_ceil(BATCH) * BATCH;
    let per_execution = |ns: u64| ns as f64 / executions as f64 / 1e3;
    println!(
        "{executions} executions in {:.2} s: localnet CPU per execution {:.1} µs on the chain thread, {:.1} µs in all",
        elapsed.as_secs_f64(),
        per_execution(chain_after - chain_before),
        per_execution(all_after - all_before),
    );
}
