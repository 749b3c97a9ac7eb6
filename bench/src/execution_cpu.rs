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

mod localnet_rpc;

use {
    agent_market::FEE_SHARD_COUNT,
    anchor_lang::prelude::Pubkey,
    localnet::market::{pda, result_digest, EscrowRef, MarketKeys},
    localnet_rpc::{payer, send_params, start_localnet, Connection, Market, PRICE_USDC},
    serde_json::json,
    solana_keypair::Keypair,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::time::{Duration, Instant},
};

/// Executions per batch: their two transactions make the 100 signatures of one status poll.
const BATCH: usize = 50;
/// Transactions per `sendTransaction` batch, under localnet's 50 KB request limit.
const SEND_BATCH: usize = 25;
const WARMUP_EXECUTIONS: usize = 500;
const DEFAULT_EXECUTIONS: usize = 5_000;
const PAYERS: usize = 16;

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

struct Executions {
    keys: MarketKeys,
    relayer: Keypair,
    agent: Pubkey,
    signing: Keypair,
    payout_account: Pubkey,
    payers: Vec<(Keypair, Pubkey)>,
    sequence: u64,
}

impl Executions {
    fn setup(connection: &mut Connection) -> Self {
        let market = Market::development(connection);
        let mint = market.keys.usdc_mint;
        let creator = payer(connection, keypair(1), &mint, 1_000_000_000);
        let signing = keypair(2);
        let agent = market.register_agent(connection, &creator, &signing);
        let payers = (0..PAYERS as u8)
            .map(|index| payer(connection, keypair(3 + index), &mint, 1_000_000_000_000))
            .collect();
        Executions {
            keys: market.keys,
            relayer: market.relayer,
            agent,
            signing,
            payout_account: creator.1,
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
                    PRICE_USDC,
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
    let mut market = Executions::setup(&mut connection);
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
