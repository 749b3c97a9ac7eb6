//! The chain a node starts with: a fresh one from a development config (known keys, the USDC
//! mint, the market and its fee shards, a funded faucet), or the one saved in `--ledger DIR`.

use {
    crate::{
        chain::{Chain, MarketKeypairs, MarketSetup},
        history::History,
        ledger::Ledger,
        node::NodeState,
        store::Store,
    },
    agent_market::MarketParams,
    serde::Deserialize,
    solana_keypair::Keypair,
    solana_signer::Signer,
    std::path::Path,
};

/// The development config committed beside this crate; its keys are public by design.
pub const DEFAULT_CONFIG: &str = include_str!("../dev-config.json");
const FAUCET_LAMPORTS: u64 = 500_000 * 1_000_000_000;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DevKeypairs {
    authority: Vec<u8>,
    relayer: Vec<u8>,
    arbiter: Vec<u8>,
    mint_authority: Vec<u8>,
    usdc_mint: Vec<u8>,
    faucet: Vec<u8>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DevMarket {
    min_collateral_usdc: u64,
    min_price_per_call_usdc: u64,
    escrow_grace_secs: u32,
    dispute_window_secs: u32,
    collateral_cooldown_secs: u32,
}

/// The development keys and market settings a fresh chain starts from.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DevConfig {
    keypairs: DevKeypairs,
    market: DevMarket,
}

fn keypair(name: &str, bytes: &[u8]) -> Result<Keypair, String> {
    Keypair::try_from(bytes).map_err(|err| format!("keypairs.{name} is not a 64-byte keypair: {err}"))
}

/// Reads a config file, or the default one.
pub fn load_config(path: Option<&Path>) -> Result<(MarketKeypairs, Keypair, MarketParams), String> {
    let text = match path {
        Some(path) => std::fs::read_to_string(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?,
        None => DEFAULT_CONFIG.to_string(),
    };
    let config: DevConfig = serde_json::from_str(&text).map_err(|err| format!("invalid config: {err}"))?;
    let keys = &config.keypairs;
    let keypairs = MarketKeypairs {
        authority: keypair("authority", &keys.authority)?,
        relayer: keypair("relayer", &keys.relayer)?,
        arbiter: keypair("arbiter", &keys.arbiter)?,
        mint_authority: keypair("mintAuthority", &keys.mint_authority)?,
        usdc_mint: keypair("usdcMint", &keys.usdc_mint)?,
    };
    let faucet = keypair("faucet", &keys.faucet)?;
    let params = MarketParams {
        relayer: keypairs.relayer.pubkey(),
        arbiter: keypairs.arbiter.pubkey(),
        min_collateral_usdc: config.market.min_collateral_usdc,
        min_price_per_call_usdc: config.market.min_price_per_call_usdc,
        escrow_grace_secs: config.market.escrow_grace_secs,
        dispute_window_secs: config.market.dispute_window_secs,
        collateral_cooldown_secs: config.market.collateral_cooldown_secs,
        escrows_paused: false,
    };
    Ok((keypairs, faucet, params))
}

/// Whether a fresh chain starts with the market initialized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenesisMarket {
    /// The market and its fee shards, with the config's parameters: ready for agents.
    Initialized,
    /// Only the program, the USDC mint and the funded keys, as a cluster is once the program is
    /// deployed: the market is for `agent-market admin init` and `admin shards` to create.
    Absent,
}

/// A fresh chain: the USDC mint, the market and its fee shards (unless `market` says otherwise),
/// and a funded faucet.
fn genesis(
    keypairs: MarketKeypairs,
    faucet: Keypair,
    params: MarketParams,
    slot_ms: u64,
    history: History,
    market: GenesisMarket,
) -> NodeState {
    let mut chain = Chain::new();
    let market = match market {
        GenesisMarket::Initialized => MarketSetup::bootstrap(&mut chain, keypairs, params),
        GenesisMarket::Absent => Ok(MarketSetup::mint_only(&mut chain, keypairs)),
    }
    .unwrap_or_else(|failed| {
        panic!(
            "initializing the market failed: {:?}\n{}",
            failed.err,
            failed.meta.pretty_logs()
        )
    });
    chain
        .svm
        .airdrop(&faucet.pubkey(), FAUCET_LAMPORTS)
        .expect("fund the faucet");
    let genesis_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs() as i64;
    NodeState {
        ledger: Ledger::new(chain, genesis_unix, slot_ms, history),
        market,
        faucet,
        pubsub: Default::default(),
        store: None,
    }
}

/// The node's starting state: the ledger saved in `ledger_dir` if there is one, else a fresh
/// chain (saved there at once when a directory is given) with or without its market. The
/// transaction history keeps at most `retain_transactions` (0: all), in `ledger_dir` or else in
/// a temporary file.
pub fn start(
    config: Option<&Path>,
    ledger_dir: Option<&Path>,
    slot_ms: u64,
    retain_transactions: usize,
    market: GenesisMarket,
) -> Result<NodeState, String> {
    let (keypairs, faucet, params) = load_config(config)?;
    let Some(dir) = ledger_dir else {
        let history = History::temporary(retain_transactions)
            .map_err(|err| format!("cannot create the transaction history: {err}"))?;
        return Ok(genesis(keypairs, faucet, params, slot_ms, history, market));
    };
    let mut store = Store::open(dir).map_err(|err| format!("cannot open the ledger {}: {err}", dir.display()))?;
    let saved = store
        .load(retain_transactions)
        .map_err(|err| format!("cannot read the ledger {}: {err}", dir.display()))?;
    let mut state = match saved {
        Some(saved) => {
            let ledger = Ledger::restore(Chain::new(), saved.state, saved.accounts, saved.history);
            let market = MarketSetup::existing(keypairs);
            let stored: Option<agent_market::Market> = ledger.chain.anchor_account(&crate::market::pda::market());
            // A chain saved before its market was initialized has none yet, whatever `market`
            // says now; one that has a market must have this config's mint.
            if stored.is_some_and(|stored| stored.usdc_mint != market.keys.usdc_mint) {
                return Err(format!("the ledger in {} was made with another config", dir.display()));
            }
            NodeState {
                ledger,
                market,
                faucet,
                pubsub: Default::default(),
                store: None,
            }
        }
        None => {
            let history = store
                .new_history(retain_transactions)
                .map_err(|err| format!("cannot create the ledger {}: {err}", dir.display()))?;
            genesis(keypairs, faucet, params, slot_ms, history, market)
        }
    };
    store
        .save(&mut state.ledger)
        .map_err(|err| format!("cannot save the ledger {}: {err}", dir.display()))?;
    state.store = Some(store);
    Ok(state)
}
