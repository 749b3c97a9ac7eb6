//! `localnet`: Agent Market's local chain. Serves the native SVM (agent_market, SPL Token,
//! Associated Token, Ed25519, Memo) over Solana JSON-RPC on 127.0.0.1.
//!
//! Usage: localnet [--port N] [--slot-ms N] [--config FILE] [--ledger DIR] [--retain-transactions N]
//!                 [--without-market] [--profile instant|devnet-like] [--process-at send|slot] [--drop-rate F]
//!                 [--rpc-latency-ms N] [--rpc-jitter-ms N] [--seed N]
//!   JSON-RPC on 127.0.0.1:N (default 8899) and PubSub on N+1, as clients expect; --port 0
//!   picks a free pair. Once serving, one JSON line on stdout gives both URLs and the market's
//!   addresses. With --ledger, state and history persist in DIR across restarts. The history
//!   keeps the newest N transactions (default 100,000; 0 keeps all). --without-market starts a
//!   fresh chain with the program, the USDC mint and funded keys but no market, for
//!   `agent-market admin init` to create as on a cluster.
//!   --profile devnet-like gives cluster-like timing (see `timing`): transactions run at the next
//!   slot, 2% of them are lost, and each RPC exchange takes 80 ± 40 ms. The other flags change one
//!   setting of the profile, whatever their order; --seed makes drops and jitter reproducible.

use {
    localnet::{
        genesis::{self, GenesisMarket},
        history::DEFAULT_RETAIN_TRANSACTIONS,
        node::Node,
        pubsub, server,
        timing::{Timing, PROFILES},
    },
    serde_json::json,
    std::{path::PathBuf, process::ExitCode, time::Duration},
    tokio::net::TcpListener,
};

struct Args {
    port: u16,
    slot_ms: u64,
    config: Option<PathBuf>,
    ledger: Option<PathBuf>,
    retain_transactions: usize,
    timing: Timing,
    market: GenesisMarket,
}

const USAGE: &str = "usage: localnet [--port N] [--slot-ms N] [--config FILE] [--ledger DIR] [--retain-transactions N]
                [--without-market] [--profile instant|devnet-like] [--process-at send|slot] [--drop-rate F]
                [--rpc-latency-ms N] [--rpc-jitter-ms N] [--seed N]";

/// Settings given one by one, applied over the profile's.
#[derive(Default)]
struct TimingFlags {
    at_slot_boundary: Option<bool>,
    drop_rate: Option<f64>,
    seed: Option<u64>,
    latency_ms: Option<u64>,
    jitter_ms: Option<u64>,
}

fn milliseconds(flag: &str, text: String) -> Result<u64, String> {
    text.parse().map_err(|_| format!("{flag} takes milliseconds"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 8899,
        slot_ms: 400,
        config: None,
        ledger: None,
        retain_transactions: DEFAULT_RETAIN_TRANSACTIONS,
        timing: Timing::INSTANT,
        market: GenesisMarket::Initialized,
    };
    let mut flags = TimingFlags::default();
    let mut words = std::env::args().skip(1);
    while let Some(flag) = words.next() {
        let mut value = || words.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => args.port = value()?.parse().map_err(|_| "--port takes a port number".to_string())?,
            "--slot-ms" => {
                args.slot_ms = value()?
                    .parse()
                    .map_err(|_| "--slot-ms takes milliseconds".to_string())?;
                if args.slot_ms == 0 {
                    return Err("--slot-ms must be positive".into());
                }
            }
            "--config" => args.config = Some(PathBuf::from(value()?)),
            "--without-market" => args.market = GenesisMarket::Absent,
            "--ledger" => args.ledger = Some(PathBuf::from(value()?)),
            "--retain-transactions" => {
                args.retain_transactions = value()?
                    .parse()
                    .map_err(|_| "--retain-transactions takes a number of transactions (0: all)".to_string())?
            }
            "--profile" => {
                let name = value()?;
                args.timing =
                    Timing::profile(&name).ok_or_else(|| format!("--profile takes one of {}", PROFILES.join(", ")))?;
            }
            "--process-at" => {
                flags.at_slot_boundary = Some(match value()?.as_str() {
                    "send" => false,
                    "slot" => true,
                    _ => return Err("--process-at takes send or slot".into()),
                })
            }
            "--drop-rate" => {
                let rate: f64 = value()?
                    .parse()
                    .map_err(|_| "--drop-rate takes a fraction from 0 to 1".to_string())?;
                if !(0.0..=1.0).contains(&rate) {
                    return Err("--drop-rate takes a fraction from 0 to 1".into());
                }
                flags.drop_rate = Some(rate);
            }
            "--seed" => {
                flags.seed = Some(
                    value()?
                        .parse()
                        .map_err(|_| "--seed takes an unsigned integer".to_string())?,
                )
            }
            "--rpc-latency-ms" => flags.latency_ms = Some(milliseconds(&flag, value()?)?),
            "--rpc-jitter-ms" => flags.jitter_ms = Some(milliseconds(&flag, value()?)?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let timing = &mut args.timing;
    timing.at_slot_boundary = flags.at_slot_boundary.unwrap_or(timing.at_slot_boundary);
    timing.drop_rate = flags.drop_rate.unwrap_or(timing.drop_rate);
    timing.rpc_latency.latency_ms = flags.latency_ms.unwrap_or(timing.rpc_latency.latency_ms);
    timing.rpc_latency.jitter_ms = flags.jitter_ms.unwrap_or(timing.rpc_latency.jitter_ms);
    if timing.rpc_latency.jitter_ms > timing.rpc_latency.latency_ms {
        return Err("--rpc-jitter-ms may not exceed --rpc-latency-ms".into());
    }
    // Without --seed, each run loses other transactions.
    timing.seed = flags.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|since| since.as_nanos() as u64)
            .unwrap_or_default()
    });
    Ok(args)
}

async fn wait(mut stopped: tokio::sync::watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// The JSON-RPC listener on `port` and the PubSub one on the next port; for port 0, the first
/// free pair.
async fn listen(port: u16) -> std::io::Result<(TcpListener, TcpListener)> {
    if port != 0 {
        let rpc = TcpListener::bind(("127.0.0.1", port)).await?;
        let ws = TcpListener::bind(("127.0.0.1", port + 1)).await?;
        return Ok((rpc, ws));
    }
    let mut last_error = None;
    for _ in 0..64 {
        let rpc = TcpListener::bind(("127.0.0.1", 0)).await?;
        let rpc_port = rpc.local_addr()?.port();
        if rpc_port == u16::MAX {
            continue;
        }
        match TcpListener::bind(("127.0.0.1", rpc_port + 1)).await {
            Ok(ws) => return Ok((rpc, ws)),
            Err(err) => last_error = Some(err),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("no free pair of ports")))
}

// One worker parses HTTP while the chain thread executes: on a small machine more workers only
// take CPU from the chain.
#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("localnet: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (listener, ws_listener) = match listen(args.port).await {
        Ok(listeners) => listeners,
        Err(err) => {
            eprintln!(
                "localnet: cannot listen on 127.0.0.1:{} and the port after it: {err}",
                args.port
            );
            return ExitCode::from(1);
        }
    };
    let Args {
        slot_ms,
        config,
        ledger,
        retain_transactions,
        timing,
        market,
        ..
    } = args;
    let node = match Node::start(
        move || {
            let mut state = genesis::start(
                config.as_deref(),
                ledger.as_deref(),
                slot_ms,
                retain_transactions,
                market,
            )?;
            state.ledger.set_timing(timing);
            Ok(state)
        },
        Duration::from_millis(slot_ms),
    ) {
        Ok(node) => node,
        Err(message) => {
            eprintln!("localnet: {message}");
            return ExitCode::from(2);
        }
    };
    let market = node
        .call(|state| {
            let keys = &state.market.keys;
            json!({
                "programId": agent_market::ID.to_string(),
                "usdcMint": keys.usdc_mint.to_string(),
                "treasury": keys.treasury.to_string(),
                "relayer": keys.relayer.to_string(),
            })
        })
        .await;
    let port = listener.local_addr().map(|address| address.port()).unwrap_or_default();
    println!(
        "{}",
        json!({
            "rpcUrl": format!("http://127.0.0.1:{port}"),
            "websocketUrl": format!("ws://127.0.0.1:{}", port + 1),
            "rpcPort": port,
            "market": market,
            "seed": timing.seed,
        })
    );
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let pubsub = axum::serve(ws_listener, pubsub::router(node.clone())).with_graceful_shutdown(wait(stopped.clone()));
    let node_for_save = node.clone();
    let rpc = axum::serve(listener, server::router(node, timing.rpc_latency, timing.seed))
        .with_graceful_shutdown(wait(stopped));
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        let _ = stop.send(true);
    });
    let (served, _) = tokio::join!(rpc, pubsub);
    node_for_save.call(|state| state.save()).await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("localnet: {err}");
            ExitCode::from(1)
        }
    }
}
