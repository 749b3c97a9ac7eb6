//! `localnet`: Agent Market's local chain. Serves the native SVM (agent_market, SPL Token,
//! Associated Token, Ed25519, Memo) over Solana JSON-RPC on 127.0.0.1.
//!
//! Usage: localnet [--port N] [--slot-ms N] [--config FILE]
//!   --port 0 picks a free port. Once serving, one JSON line on stdout gives the URL and the
//!   market's addresses.

use {
    localnet::{
        genesis::{genesis, load_config},
        node::Node,
        server,
    },
    serde_json::json,
    std::{path::PathBuf, process::ExitCode, time::Duration},
};

struct Args {
    port: u16,
    slot_ms: u64,
    config: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { port: 8899, slot_ms: 400, config: None };
    let mut words = std::env::args().skip(1);
    while let Some(flag) = words.next() {
        let mut value = || words.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => args.port = value()?.parse().map_err(|_| "--port takes a port number".to_string())?,
            "--slot-ms" => {
                args.slot_ms = value()?.parse().map_err(|_| "--slot-ms takes milliseconds".to_string())?;
                if args.slot_ms == 0 {
                    return Err("--slot-ms must be positive".into());
                }
            }
            "--config" => args.config = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("localnet: {message}\nusage: localnet [--port N] [--slot-ms N] [--config FILE]");
            return ExitCode::from(2);
        }
    };
    let (keypairs, faucet, params) = match load_config(args.config.as_deref()) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("localnet: {message}");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("localnet: cannot listen on 127.0.0.1:{}: {err}", args.port);
            return ExitCode::from(1);
        }
    };
    let slot_ms = args.slot_ms;
    let node = Node::start(move || genesis(keypairs, faucet, params, slot_ms), Duration::from_millis(slot_ms));
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
    let port = listener.local_addr().map(|address| address.port()).unwrap_or(args.port);
    println!("{}", json!({ "rpcUrl": format!("http://127.0.0.1:{port}"), "rpcPort": port, "market": market }));
    let served = axum::serve(listener, server::router(node))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("localnet: {err}");
            ExitCode::from(1)
        }
    }
}
