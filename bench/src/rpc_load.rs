//! `sendTransaction` over HTTP against the `localnet` binary: transactions per second and
//! p50/p99 latency for plain USDC transfers and for executions (open_escrow, a read of the
//! escrow, whose nonce the creator signs, then its settlement as a batch of one), at 1, 16 and 64
//! concurrent clients. Latencies are the two sends'. Each client keeps one HTTP/1.1 connection open, as a pooled client does.
//!
//! Run: `npm run bench:rpc` (builds localnet with the host-release profile first).

// Shared by the benchmarks; this one sends no batches.
#[allow(dead_code)]
mod localnet_rpc;

use {
    agent_market::{Escrow, FEE_SHARD_COUNT},
    anchor_lang::{prelude::Pubkey, AccountDeserialize},
    base64::{engine::general_purpose::STANDARD, Engine},
    localnet::market::{pda, MarketKeys},
    serde_json::json,
    localnet_rpc::{payer, start_localnet, Connection, Market, PRICE_USDC},
    solana_keypair::Keypair,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::{
        sync::Arc,
        time::{Duration, Instant},
    },
};

const LEVELS: [usize; 3] = [1, 16, 64];
const TRANSFERS_PER_LEVEL: usize = 4_000;
const PAIRS_PER_LEVEL: usize = 1_000;

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

/// One execution: its open, and what its settlement is signed with once the escrow is read.
struct Pair {
    open: Transaction,
    execution_id: [u8; 16],
    keys: MarketKeys,
    relayer: Keypair,
    signing: Keypair,
    payout_account: Pubkey,
    blockhash: solana_hash::Hash,
}

/// Sends the open, reads the escrow as the relayer does, then sends its settlement.
fn execute(connection: &mut Connection, pair: &Pair) -> Vec<Duration> {
    let opened = timed(connection, &pair.open);
    let read = connection.call(
        "getMultipleAccounts",
        json!([[pda::escrow(&pair.execution_id).to_string()], { "commitment": "processed", "encoding": "base64" }]),
    );
    let data = read["value"][0]["data"][0].as_str().expect("the escrow is open");
    let escrow = Escrow::try_deserialize(&mut STANDARD.decode(data).expect("base64").as_slice()).expect("an escrow");
    let settle = pair.keys.settle_one(
        &escrow,
        [4; 32],
        &pair.signing,
        pair.payout_account,
        pair.execution_id[0] % FEE_SHARD_COUNT,
    );
    let settle = Transaction::new_signed_with_payer(&settle, Some(&pair.relayer.pubkey()), &[&pair.relayer], pair.blockhash);
    vec![opened, timed(connection, &settle)]
}

fn main() {
    let node = start_localnet(&[]);
    let mut setup = Connection::open(&node.host);
    let market = Market::development(&mut setup);
    let keys = &market.keys;
    let relayer = &market.relayer;
    let mint = keys.usdc_mint;

    // An agent, and payers: one per client so their transfers never share a source account.
    let creator = payer(&mut setup, Keypair::new(), &mint, 1_000_000_000);
    let creator_token_account = creator.1;
    let signing = Keypair::new();
    let agent = market.register_agent(&mut setup, &creator, &signing);
    market.create_receipt_log(&mut setup, &agent);
    let payers: Vec<(Keypair, Pubkey)> = (0..64)
        .map(|_| payer(&mut setup, Keypair::new(), &mint, 1_000_000_000_000))
        .collect();
    let sink = payer(&mut setup, Keypair::new(), &mint, 0).1;

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
                let open = keys.open_escrow(
                    agent,
                    wallet.pubkey(),
                    *token_account,
                    execution_id,
                    [5; 16],
                    [3; 32],
                    PRICE_USDC,
                );
                Pair {
                    open: Transaction::new_signed_with_payer(&[open], Some(&relayer.pubkey()), &[&relayer], blockhash),
                    execution_id,
                    keys: keys.clone(),
                    relayer: relayer.insecure_clone(),
                    signing: signing.insecure_clone(),
                    payout_account: creator_token_account,
                    blockhash,
                }
            })
            .collect();
        let (elapsed, latencies) = drive(&node.host, clients, pairs, execute);
        report("open + settle of one", clients, elapsed, &latencies);
    }
}
