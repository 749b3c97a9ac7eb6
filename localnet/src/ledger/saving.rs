//! What a saved ledger is made of, and a ledger restored from it.

use {
    super::Ledger,
    crate::{chain::Chain, history::History, timing::Inflight},
    serde::{Deserialize, Serialize},
    solana_account::{Account, AccountSharedData, ReadableAccount},
    solana_hash::Hash,
    solana_pubkey::Pubkey,
    std::{
        collections::{HashMap, HashSet, VecDeque},
        io,
    },
};

/// What a ledger saves besides accounts and transactions.
#[derive(Serialize, Deserialize)]
pub struct LedgerState {
    pub slot: u64,
    pub block_height: u64,
    pub genesis_hash: Hash,
    pub genesis_unix: i64,
    pub clock_offset_secs: i64,
    pub slot_ms: u64,
    pub blockhashes: Vec<(Hash, u64)>,
    pub transaction_count: u64,
}

impl Ledger {
    /// A ledger as it was saved: `accounts` over a fresh chain, and its history.
    pub fn restore(mut chain: Chain, state: LedgerState, accounts: Vec<(Pubkey, Account)>, history: History) -> Self {
        chain.svm = Self::configure(std::mem::take(&mut chain.svm));
        for (address, account) in accounts {
            chain.svm.set_account(address, account).expect("a saved account loads");
        }
        let mut ledger = Ledger {
            chain,
            slot: state.slot,
            block_height: state.block_height,
            genesis_hash: state.genesis_hash,
            genesis_unix: state.genesis_unix,
            clock_offset_secs: state.clock_offset_secs,
            slot_ms: state.slot_ms,
            blockhashes: state.blockhashes.into(),
            history,
            transaction_count: state.transaction_count,
            events: Vec::new(),
            unsaved: false,
            written: HashSet::new(),
            rewrite_all: false,
            undo: HashMap::new(),
            undo_order: VecDeque::new(),
            inflight: Inflight::default(),
            // In memory only, as a validator's prioritization-fee cache.
            priority_fees: Default::default(),
        };
        ledger.sync_clock();
        ledger
    }

    pub fn state(&self) -> LedgerState {
        LedgerState {
            slot: self.slot,
            block_height: self.block_height,
            genesis_hash: self.genesis_hash,
            genesis_unix: self.genesis_unix,
            clock_offset_secs: self.clock_offset_secs,
            slot_ms: self.slot_ms,
            blockhashes: self.blockhashes.iter().copied().collect(),
            transaction_count: self.transaction_count,
        }
    }

    /// Accounts a saved ledger must keep: programs and sysvars come back with a fresh chain.
    /// Borrowed: they serialize as `(Pubkey, Account)` pairs do, without a copy of every
    /// account (program binaries included) first.
    pub fn saved_accounts(&self) -> Vec<(&Pubkey, &AccountSharedData)> {
        self.chain
            .svm
            .accounts_db()
            .inner
            .iter()
            .filter(|(_, account)| is_saved(account))
            .collect()
    }

    /// The accounts transactions wrote since the last save, each with its state now; `None`
    /// for one a saved ledger no longer keeps (closed).
    pub fn written_accounts(&self) -> Vec<(&Pubkey, Option<&AccountSharedData>)> {
        let accounts = &self.chain.svm.accounts_db().inner;
        self.written
            .iter()
            .map(|address| (address, accounts.get(address).filter(|account| is_saved(account))))
            .collect()
    }

    /// Whether the next save must write every account instead of `written_accounts`.
    pub fn rewrites_all(&self) -> bool {
        self.rewrite_all
    }

    /// Flushes the transactions processed since the last call to disk.
    pub fn sync_history(&self) -> io::Result<()> {
        self.history.sync()
    }

    /// Whether anything changed since the last `mark_saved`.
    pub fn unsaved(&self) -> bool {
        self.unsaved
    }

    pub fn mark_saved(&mut self) {
        self.unsaved = false;
        self.written.clear();
        self.rewrite_all = false;
    }
}

/// Whether a saved ledger keeps `account`: programs and sysvars come back with a fresh chain,
/// and an account without lamports no longer exists.
fn is_saved(account: &AccountSharedData) -> bool {
    account.lamports() > 0 && !account.executable() && account.owner() != &solana_sdk_ids::sysvar::ID
}
