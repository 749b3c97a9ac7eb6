//! The local chain's state machine: the SVM, slots that advance with wall time, the recent
//! blockhashes a transaction may use, and the history of transactions with their metadata
//! (kept on disk, see `history`).
//!
//! One thread owns a `Ledger` (the SVM and natively running programs are single-threaded);
//! the RPC server hands it work over a channel. Here: the slots, the clock and the blockhashes;
//! what it records of transactions in `records`, how it runs them in `transactions`, and what
//! it saves in `saving`.

mod priority_fees;
mod records;
mod saving;
mod transactions;

pub use {
    priority_fees::RECENT_SLOTS,
    records::{account_keys, DropRefusal, LedgerEvent, Rejection, TokenBalance, TransactionRecord},
    saving::LedgerState,
};

use {
    crate::{
        chain::Chain,
        history::History,
        timing::{Inflight, Timing, RETRY_MS},
    },
    solana_account::{Account, AccountSharedData},
    solana_hash::Hash,
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_sysvar::slot_hashes::SlotHashes,
    std::{
        collections::{HashMap, HashSet, VecDeque},
        io,
    },
};

/// How many blocks a blockhash stays usable, as on a cluster.
pub const MAX_PROCESSING_AGE: u64 = 150;
/// Slots between `processed` and `finalized`.
pub const FINALIZATION_DEPTH: u64 = 32;
pub const LAMPORTS_PER_SIGNATURE: u64 = 5_000;
pub const SLOTS_PER_EPOCH: u64 = 432_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commitment {
    Processed,
    Confirmed,
    Finalized,
}

pub struct Ledger {
    pub chain: Chain,
    slot: u64,
    block_height: u64,
    genesis_hash: Hash,
    genesis_unix: i64,
    clock_offset_secs: i64,
    slot_ms: u64,
    /// Recent blockhashes, oldest first, with the last block height at which each is valid.
    blockhashes: VecDeque<(Hash, u64)>,
    history: History,
    transaction_count: u64,
    events: Vec<LedgerEvent>,
    /// Accounts or the clock changed since the ledger was last saved.
    unsaved: bool,
    /// Accounts transactions wrote since the last save, which an incremental save writes.
    written: HashSet<Pubkey>,
    /// The next save must write every account: a new chain.
    rewrite_all: bool,
    /// What each transaction not yet finalized found in the accounts it could write, so that
    /// `drop_transaction` can take it back as an abandoned fork would.
    undo: HashMap<Signature, Vec<(Pubkey, Option<AccountSharedData>)>>,
    /// The same transactions with their slots, oldest first, for pruning at finalization.
    undo_order: VecDeque<(u64, Signature)>,
    /// Sent transactions waiting for their slot, with cluster-like timing.
    inflight: Inflight,
    /// The unit prices recent transactions paid.
    priority_fees: priority_fees::PriorityFees,
}

impl Ledger {
    /// How sent transactions are treated from now on (today's instant node by default).
    pub fn set_timing(&mut self, timing: Timing) {
        self.inflight = Inflight::new(timing);
    }

    pub fn new(mut chain: Chain, genesis_unix: i64, slot_ms: u64, history: History) -> Self {
        chain.svm = Self::configure(std::mem::take(&mut chain.svm));
        let genesis_hash = chain.svm.latest_blockhash();
        let mut ledger = Ledger {
            chain,
            slot: 0,
            block_height: 0,
            genesis_hash,
            genesis_unix,
            clock_offset_secs: 0,
            slot_ms,
            blockhashes: VecDeque::new(),
            history,
            transaction_count: 0,
            events: Vec::new(),
            unsaved: true,
            written: HashSet::new(),
            rewrite_all: true,
            undo: HashMap::new(),
            undo_order: VecDeque::new(),
            inflight: Inflight::default(),
            priority_fees: Default::default(),
        };
        ledger.blockhashes.push_back((genesis_hash, MAX_PROCESSING_AGE));
        ledger.sync_clock();
        ledger
    }

    /// Blockhash age and duplicate signatures are checked by the ledger, against its recent
    /// blockhashes and its history (which keeps every transaction whose blockhash may still be
    /// valid); LiteSVM only knows its latest blockhash.
    fn configure(svm: litesvm::LiteSVM) -> litesvm::LiteSVM {
        svm.with_blockhash_check(false).with_transaction_history(0)
    }

    /// `(slot, prioritizationFee)` for the recent slots, as `getRecentPrioritizationFees`
    /// answers for transactions writing `accounts` (see `priority_fees`).
    pub fn recent_prioritization_fees(&self, accounts: &[Pubkey]) -> Vec<(u64, u64)> {
        self.priority_fees.recent(self.slot, accounts)
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn slot(&self) -> u64 {
        self.slot
    }

    pub fn slot_at(&self, commitment: Commitment) -> u64 {
        match commitment {
            Commitment::Processed => self.slot,
            Commitment::Confirmed => self.slot.saturating_sub(1),
            Commitment::Finalized => self.slot.saturating_sub(FINALIZATION_DEPTH),
        }
    }

    pub fn block_height_at(&self, commitment: Commitment) -> u64 {
        self.block_height - (self.slot - self.slot_at(commitment)).min(self.block_height)
    }

    pub fn genesis_hash(&self) -> Hash {
        self.genesis_hash
    }

    pub fn transaction_count(&self) -> u64 {
        self.transaction_count
    }

    pub fn now_unix(&self) -> i64 {
        self.genesis_unix + (self.slot * self.slot_ms / 1000) as i64 + self.clock_offset_secs
    }

    /// The newest blockhash and the last block height at which it is valid.
    pub fn latest_blockhash(&self) -> (Hash, u64) {
        *self.blockhashes.back().expect("there is always a blockhash")
    }

    pub fn is_blockhash_valid(&self, blockhash: &Hash) -> bool {
        self.blockhashes
            .iter()
            .any(|(hash, last_valid)| hash == blockhash && *last_valid >= self.block_height)
    }

    /// Produces the next block: a new slot, block height, blockhash and clock.
    pub fn advance_slot(&mut self) {
        self.record_slot_hash();
        self.slot += 1;
        self.block_height += 1;
        self.chain.svm.expire_blockhash();
        self.blockhashes.push_back((
            self.chain.svm.latest_blockhash(),
            self.block_height + MAX_PROCESSING_AGE,
        ));
        while self
            .blockhashes
            .front()
            .is_some_and(|(_, last_valid)| *last_valid < self.block_height)
        {
            self.blockhashes.pop_front();
        }
        while let Some((slot, signature)) = self.undo_order.front().copied() {
            if slot + FINALIZATION_DEPTH > self.slot {
                break;
            }
            self.undo.remove(&signature);
            self.undo_order.pop_front();
        }
        self.sync_clock();
        if let Err(err) = self.history.advance(self.slot) {
            history_failed(err);
        }
        self.events.push(LedgerEvent::Slot { slot: self.slot });
        // What the leader of this slot received: a transaction it cannot run (its blockhash
        // expired meanwhile, its fee payer emptied) is lost without a trace, as on a cluster.
        for transaction in self.inflight.take(self.slot) {
            let _ = self.send(transaction, false);
        }
        for (transaction, left) in self.inflight.due_retries(self.slot) {
            if self.history.summary(&transaction.signatures[0]).is_some()
                || !self.is_blockhash_valid(transaction.message.recent_blockhash())
            {
                continue;
            }
            if self.inflight.drops(&transaction.signatures[0], self.slot) {
                let at = self.slot + self.retry_slots();
                self.inflight.retry(transaction, at, left);
            } else {
                let _ = self.send(transaction, false);
            }
        }
    }

    /// `RETRY_MS` in slots.
    fn retry_slots(&self) -> u64 {
        (RETRY_MS / self.slot_ms).max(1)
    }

    /// What happened since the last call.
    pub fn take_events(&mut self) -> Vec<LedgerEvent> {
        std::mem::take(&mut self.events)
    }

    /// Moves the clock forward by `secs` without producing blocks.
    pub fn advance_clock_secs(&mut self, secs: i64) {
        self.clock_offset_secs += secs;
        self.unsaved = true;
        self.sync_clock();
    }

    /// Adds the slot that ends now to the `SlotHashes` sysvar, as a cluster does: creating an
    /// address lookup table names a recent slot, which must be found there.
    fn record_slot_hash(&mut self) {
        let mut slot_hashes = self.chain.svm.get_sysvar::<SlotHashes>();
        slot_hashes.add(self.slot, self.latest_blockhash().0);
        self.chain.svm.set_sysvar(&slot_hashes);
    }

    fn sync_clock(&mut self) {
        let mut clock = self.chain.svm.get_sysvar::<solana_sysvar::clock::Clock>();
        clock.slot = self.slot;
        clock.unix_timestamp = self.now_unix();
        clock.epoch = self.slot / SLOTS_PER_EPOCH;
        self.chain.svm.set_sysvar(&clock);
    }

    pub fn account(&self, address: &Pubkey) -> Option<Account> {
        self.chain.account(address)
    }

    /// Every account, for scans such as `getProgramAccounts`.
    pub fn accounts(&self) -> impl Iterator<Item = (Pubkey, Account)> + '_ {
        self.chain
            .svm
            .accounts_db()
            .inner
            .iter()
            .map(|(address, account)| (*address, Account::from(account.clone())))
            .filter(|(_, account)| account.lamports > 0)
    }

    /// The commitment a transaction processed in `slot` has reached.
    pub fn commitment_of(&self, slot: u64) -> Commitment {
        match self.slot - slot {
            depth if depth >= FINALIZATION_DEPTH => Commitment::Finalized,
            0 => Commitment::Processed,
            _ => Commitment::Confirmed,
        }
    }
}

/// A history the chain cannot write is state it would lose: the node stops, as it does when
/// it cannot save.
fn history_failed(err: io::Error) -> ! {
    eprintln!("localnet: cannot write the transaction history: {err}");
    std::process::exit(1);
}
