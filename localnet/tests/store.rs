//! `--ledger DIR` saves accounts as a snapshot and a log of what each later save found written:
//! a save writes what changed, and a restart reads back exactly the accounts the chain held.

use {
    localnet::{genesis, history::DEFAULT_RETAIN_TRANSACTIONS, ledger::Ledger, node::NodeState, store::Store},
    solana_account::Account,
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    std::{
        collections::HashSet,
        fs,
        path::{Path, PathBuf},
    },
};

const SLOT_MS: u64 = 400;
/// An account this large makes each save that writes it a large log batch.
const LARGE_ACCOUNT_BYTES: u64 = 200 * 1024;

/// A ledger directory, removed when the test ends.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Self {
        Dir(std::env::temp_dir().join(format!("localnet-store-{}", Pubkey::new_unique())))
    }

    fn bytes(&self, name: &str) -> Vec<u8> {
        fs::read(self.0.join(name)).unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn start(dir: &Path) -> NodeState {
    genesis::start(
        None,
        Some(dir),
        SLOT_MS,
        DEFAULT_RETAIN_TRANSACTIONS,
        genesis::GenesisMarket::Initialized,
    )
    .unwrap()
}

/// The accounts a saved ledger keeps, in address order.
fn saved(ledger: &Ledger) -> Vec<(Pubkey, Account)> {
    let mut accounts: Vec<(Pubkey, Account)> = ledger
        .saved_accounts()
        .into_iter()
        .map(|(address, account)| (*address, Account::from(account.clone())))
        .collect();
    accounts.sort_by_key(|(address, _)| *address);
    accounts
}

/// The accounts the ledger in `dir` holds, read back as a restart reads them, in address order.
fn loaded(dir: &Path) -> Vec<(Pubkey, Account)> {
    let mut accounts = Store::open(dir)
        .unwrap()
        .load(DEFAULT_RETAIN_TRANSACTIONS)
        .unwrap()
        .expect("a saved ledger")
        .accounts;
    accounts.sort_by_key(|(address, _)| *address);
    accounts
}

/// A restarted chain holds one account no ledger saves: the one its runtime pays airdrops
/// from, made anew by every start. The restarted ledger's accounts without it.
fn saved_after_restart(restarted: &Ledger, dir: &Path) -> impl Fn(&Ledger) -> Vec<(Pubkey, Account)> {
    let on_disk: HashSet<Pubkey> = loaded(dir).into_iter().map(|(address, _)| address).collect();
    let made_at_start: HashSet<Pubkey> = saved(restarted)
        .into_iter()
        .map(|(address, _)| address)
        .filter(|address| !on_disk.contains(address))
        .collect();
    assert!(
        made_at_start.len() <= 1,
        "only the runtime's own account: {made_at_start:?}"
    );
    move |ledger| {
        saved(ledger)
            .into_iter()
            .filter(|(address, _)| !made_at_start.contains(address))
            .collect()
    }
}

/// The faucet sends `lamports` to `to`, creating it if it does not exist.
fn transfer(state: &mut NodeState, to: &Pubkey, lamports: u64) {
    let instruction = solana_system_interface::instruction::transfer(&state.faucet.pubkey(), to, lamports);
    state
        .ledger
        .send_instructions(&[instruction], &state.faucet, &[])
        .unwrap_or_else(|_| panic!("transfer to {to}"));
}

/// Moves every lamport of `from` to the faucet, which pays the fee: `from` no longer exists.
fn drain(state: &mut NodeState, from: &Keypair) {
    let lamports = state.ledger.chain.lamports(&from.pubkey());
    let instruction = solana_system_interface::instruction::transfer(&from.pubkey(), &state.faucet.pubkey(), lamports);
    state
        .ledger
        .send_instructions(&[instruction], &state.faucet, &[from])
        .unwrap_or_else(|_| panic!("drain {}", from.pubkey()));
}

/// A system-owned account of `LARGE_ACCOUNT_BYTES`, paid by the faucet.
fn create_large(state: &mut NodeState) -> Pubkey {
    let account = Keypair::new();
    let instruction = solana_system_interface::instruction::create_account(
        &state.faucet.pubkey(),
        &account.pubkey(),
        10_000_000_000,
        LARGE_ACCOUNT_BYTES,
        &solana_sdk_ids::system_program::ID,
    );
    state
        .ledger
        .send_instructions(&[instruction], &state.faucet, &[&account])
        .expect("create a large account");
    account.pubkey()
}

/// A new ledger in `dir` with a large account, saved.
fn large_and_saved(dir: &Path) -> (NodeState, Pubkey) {
    let mut state = start(dir);
    let large = create_large(&mut state);
    state.save();
    (state, large)
}

/// A new ledger in `dir` with one more account, funded by the faucet and saved.
fn funded_and_saved(dir: &Path) -> (NodeState, Pubkey) {
    let mut state = start(dir);
    let recipient = Pubkey::new_unique();
    transfer(&mut state, &recipient, 1_000_000);
    state.save();
    (state, recipient)
}

/// `funded_and_saved`, then a second save that adds 1 lamport to the recipient: the recipient,
/// and the accounts as the first save left them.
fn two_saves(dir: &Path) -> (Pubkey, Vec<(Pubkey, Account)>) {
    let (mut state, recipient) = funded_and_saved(dir);
    let before_last = saved(&state.ledger);
    transfer(&mut state, &recipient, 1);
    state.save();
    (recipient, before_last)
}

#[test]
fn a_save_appends_the_written_accounts_and_a_restart_reads_them_back() {
    let dir = Dir::new();
    let mut state = start(&dir.0);
    let snapshot = dir.bytes("accounts.bin");
    let empty_log = dir.bytes("accounts.log").len();

    let closed = Keypair::new();
    transfer(&mut state, &closed.pubkey(), 5_000_000);
    let recipients: Vec<Pubkey> = (0..3).map(|_| Pubkey::new_unique()).collect();
    for (index, recipient) in recipients.iter().enumerate() {
        transfer(&mut state, recipient, 1_000_000 + index as u64);
    }
    state.save();
    let after_first = dir.bytes("accounts.log").len();
    assert_eq!(dir.bytes("accounts.bin"), snapshot, "the snapshot is not rewritten");
    assert!(after_first > empty_log, "the log grows by the written accounts");
    // Four new system accounts and the faucet, not every account the chain holds.
    assert!(
        after_first - empty_log < snapshot.len() / 4,
        "a batch of {} bytes against a snapshot of {}",
        after_first - empty_log,
        snapshot.len()
    );

    drain(&mut state, &closed);
    transfer(&mut state, &recipients[0], 7);
    state.save();
    let expected = saved(&state.ledger);
    assert!(expected.iter().all(|(address, _)| *address != closed.pubkey()));
    drop(state);

    assert_eq!(loaded(&dir.0), expected);
    let restarted = start(&dir.0);
    assert_eq!(restarted.ledger.chain.lamports(&recipients[0]), 1_000_007);
    assert_eq!(restarted.ledger.chain.lamports(&closed.pubkey()), 0);
}

#[test]
fn a_log_that_outgrows_its_snapshot_is_folded_into_a_new_one() {
    let dir = Dir::new();
    let (mut state, large) = large_and_saved(&dir.0);
    let mut saves = 0;
    // Each save writes the large account again, so the log passes its 1 MiB floor in a few.
    while dir.bytes("accounts.log").len() as u64 <= 1 << 20 {
        transfer(&mut state, &large, 1 + saves);
        state.save();
        saves += 1;
        assert!(saves < 20, "the log should have passed 1 MiB");
    }
    let snapshot = dir.bytes("accounts.bin");
    transfer(&mut state, &large, 100);
    state.save();
    assert_ne!(dir.bytes("accounts.bin"), snapshot, "a new snapshot");
    // The header alone: magic, the snapshot's length and CRC-32.
    assert_eq!(dir.bytes("accounts.log").len(), 8 + 8 + 4, "an empty log");
    assert_eq!(loaded(&dir.0), saved(&state.ledger));
}

#[test]
fn a_batch_cut_short_by_a_crash_is_dropped_and_later_saves_follow_the_whole_ones() {
    let dir = Dir::new();
    let (recipient, before_last) = two_saves(&dir.0);
    // A write the crash cut short: the last batch lacks its final bytes.
    let log = dir.bytes("accounts.log");
    fs::write(dir.0.join("accounts.log"), &log[..log.len() - 3]).unwrap();

    assert_eq!(loaded(&dir.0), before_last);
    let mut restarted = start(&dir.0);
    assert_eq!(restarted.ledger.chain.lamports(&recipient), 1_000_000);
    let saved_now = saved_after_restart(&restarted.ledger, &dir.0);

    transfer(&mut restarted, &recipient, 2);
    restarted.save();
    assert_eq!(loaded(&dir.0), saved_now(&restarted.ledger));
    assert_eq!(start(&dir.0).ledger.chain.lamports(&recipient), 1_000_002);
}

#[test]
fn a_damaged_batch_ends_the_log() {
    let dir = Dir::new();
    let (_, before_last) = two_saves(&dir.0);
    let mut log = dir.bytes("accounts.log");
    let last = log.len() - 1;
    log[last] ^= 0xff;
    fs::write(dir.0.join("accounts.log"), &log).unwrap();

    assert_eq!(loaded(&dir.0), before_last);
}

#[test]
fn a_log_left_from_an_earlier_snapshot_is_not_applied() {
    let dir = Dir::new();
    let (mut state, large) = large_and_saved(&dir.0);
    transfer(&mut state, &large, 1);
    state.save();
    let stale_log = dir.bytes("accounts.log");
    let mut lamports = 1;
    while dir.bytes("accounts.log").len() >= stale_log.len() {
        lamports += 1;
        transfer(&mut state, &large, lamports);
        state.save();
    }
    // A crash between the new snapshot and its new log leaves the old log beside it.
    fs::write(dir.0.join("accounts.log"), &stale_log).unwrap();
    assert_eq!(loaded(&dir.0), saved(&state.ledger));
}

#[test]
fn a_ledger_saved_as_a_snapshot_alone_still_loads() {
    let dir = Dir::new();
    let (state, recipient) = funded_and_saved(&dir.0);
    let expected = saved(&state.ledger);
    drop(state);
    // As ledgers written before the log are: every account in accounts.bin, no accounts.log.
    fs::write(dir.0.join("accounts.bin"), bincode::serialize(&expected).unwrap()).unwrap();
    fs::remove_file(dir.0.join("accounts.log")).unwrap();

    assert_eq!(loaded(&dir.0), expected);
    let mut restarted = start(&dir.0);
    let saved_now = saved_after_restart(&restarted.ledger, &dir.0);
    transfer(&mut restarted, &recipient, 5);
    restarted.save();
    assert!(
        dir.0.join("accounts.log").exists(),
        "the first incremental save starts a log"
    );
    assert_eq!(loaded(&dir.0), saved_now(&restarted.ledger));
    assert_eq!(start(&dir.0).ledger.chain.lamports(&recipient), 1_000_005);
}

#[test]
fn a_chain_saved_before_its_market_existed_restarts_without_one() {
    let dir = Dir::new();
    let mut fresh = genesis::start(
        None,
        Some(&dir.0),
        SLOT_MS,
        DEFAULT_RETAIN_TRANSACTIONS,
        genesis::GenesisMarket::Absent,
    )
    .unwrap();
    let market = localnet::market::pda::market();
    assert!(fresh
        .ledger
        .chain
        .anchor_account::<agent_market::Market>(&market)
        .is_none());
    let mint = fresh.market.keys.usdc_mint;
    assert!(
        fresh.ledger.chain.account(&mint).is_some(),
        "the USDC mint exists without the market"
    );
    fresh.save();
    drop(fresh);
    // Restarted with the default (a market at genesis), the saved chain is what it was.
    let restarted = start(&dir.0);
    assert!(restarted
        .ledger
        .chain
        .anchor_account::<agent_market::Market>(&market)
        .is_none());
    assert!(restarted.ledger.chain.account(&mint).is_some());
}
