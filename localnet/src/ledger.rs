//! The local chain's state machine: the SVM, slots that advance with wall time, the recent
//! blockhashes a transaction may use, and the history of transactions with their metadata
//! (kept on disk, see `history`).
//!
//! One thread owns a `Ledger` (the SVM and natively running programs are single-threaded);
//! the RPC server hands it work over a channel.

use {
    crate::{
        chain::Chain,
        history::{History, TransactionSummary},
        timing::{Inflight, Timing, RETRY_MS},
    },
    litesvm::types::{FailedTransactionMetadata, TransactionMetadata},
    serde::{Deserialize, Serialize},
    solana_account::{Account, AccountSharedData, ReadableAccount},
    solana_hash::Hash,
    solana_instruction::Instruction,
    solana_keypair::Keypair,
    solana_message::inner_instruction::InnerInstructionsList,
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_signer::Signer,
    solana_transaction::{versioned::VersionedTransaction, Transaction},
    solana_transaction_context::TransactionReturnData,
    solana_transaction_error::TransactionError,
    spl_token::solana_program::program_pack::Pack,
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenBalance {
    pub account_index: u8,
    pub mint: Pubkey,
    pub owner: Pubkey,
    pub amount: u64,
    pub decimals: u8,
}

/// A processed transaction and what it did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TransactionRecord {
    pub slot: u64,
    pub block_time: i64,
    pub transaction: VersionedTransaction,
    pub err: Option<TransactionError>,
    pub fee: u64,
    pub pre_balances: Vec<u64>,
    pub post_balances: Vec<u64>,
    pub pre_token_balances: Vec<TokenBalance>,
    pub post_token_balances: Vec<TokenBalance>,
    pub logs: Vec<String>,
    pub inner_instructions: InnerInstructionsList,
    pub compute_units_consumed: u64,
    pub return_data: TransactionReturnData,
}

/// What happened on the chain, for subscriptions: drained by the node after each job.
#[derive(Clone, Debug)]
pub enum LedgerEvent {
    Processed {
        signature: Signature,
        slot: u64,
        writable: Vec<Pubkey>,
    },
    Slot {
        slot: u64,
    },
}

/// Why a transaction was not processed.
#[derive(Clone, Debug)]
pub enum Rejection {
    /// The simulation before sending failed (preflight); nothing was charged.
    Preflight(FailedTransactionMetadata),
    /// The runtime refused it before execution (signatures, blockhash, fee payer).
    Refused(TransactionError),
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
    /// The next save must write every account: a new chain, or a transaction that loaded
    /// accounts from lookup tables (the ledger does not resolve those addresses).
    rewrite_all: bool,
    /// What each transaction not yet finalized found in the accounts it could write, so that
    /// `drop_transaction` can take it back as an abandoned fork would.
    undo: HashMap<Signature, Vec<(Pubkey, Option<AccountSharedData>)>>,
    /// The same transactions with their slots, oldest first, for pruning at finalization.
    undo_order: VecDeque<(u64, Signature)>,
    /// Sent transactions waiting for their slot, with cluster-like timing.
    inflight: Inflight,
}

/// Why `drop_transaction` refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropRefusal {
    NotFound,
    /// Finalized: no fork can take it away any more.
    Finalized,
    /// A later transaction wrote an account it wrote: dropping it alone would leave that one
    /// built on state that never existed.
    Dependent(Signature),
}

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

    pub fn history(&self) -> &History {
        &self.history
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

    pub fn fee_for(&self, transaction: &VersionedTransaction) -> u64 {
        let message = &transaction.message;
        let keys = message.static_account_keys();
        let precompile_signatures: u64 = message
            .instructions()
            .iter()
            .filter(|instruction| {
                let program = keys.get(instruction.program_id_index as usize);
                program == Some(&solana_sdk_ids::ed25519_program::ID)
                    || program == Some(&solana_sdk_ids::secp256k1_program::ID)
            })
            .map(|instruction| u64::from(instruction.data.first().copied().unwrap_or(0)))
            .sum();
        (u64::from(message.header().num_required_signatures) + precompile_signatures) * LAMPORTS_PER_SIGNATURE
    }

    pub fn simulate(
        &mut self,
        transaction: VersionedTransaction,
        verify_signatures: bool,
    ) -> Result<TransactionMetadata, FailedTransactionMetadata> {
        if verify_signatures {
            return self.chain.svm.simulate_transaction(transaction).map(|info| info.meta);
        }
        let svm = std::mem::take(&mut self.chain.svm).with_sigverify(false);
        let result = svm.simulate_transaction(transaction).map(|info| info.meta);
        self.chain.svm = svm.with_sigverify(true);
        result
    }

    /// Processes a transaction as a leader would: blockhash age, then signatures (checked by
    /// the SVM before anything runs), then execution, recorded with its metadata.
    pub fn send(&mut self, transaction: VersionedTransaction, preflight: bool) -> Result<Signature, Rejection> {
        let signature = transaction.signatures[0];
        if self.history.summary(&signature).is_some() {
            return Err(Rejection::Refused(TransactionError::AlreadyProcessed));
        }
        if !self.is_blockhash_valid(transaction.message.recent_blockhash()) {
            return Err(Rejection::Refused(TransactionError::BlockhashNotFound));
        }
        self.execute(transaction, preflight)
    }

    /// A transaction from `sendTransaction`. With instant timing, `send`. Otherwise the checks
    /// an RPC node makes before forwarding it (a replay, the blockhash, and with `preflight` a
    /// simulation on the current state, signatures included) answer at once; past them it may be
    /// lost (`Timing::drop_rate`; sent again by the node itself up to `max_retries` times), and
    /// it runs within the call or, `at_slot_boundary`, at the start of the next slot.
    pub fn submit(
        &mut self,
        transaction: VersionedTransaction,
        preflight: bool,
        max_retries: Option<u64>,
    ) -> Result<Signature, Rejection> {
        if self.inflight.timing().is_instant() {
            return self.send(transaction, preflight);
        }
        let signature = transaction.signatures[0];
        if self.history.summary(&signature).is_some() {
            return Err(Rejection::Refused(TransactionError::AlreadyProcessed));
        }
        if !self.is_blockhash_valid(transaction.message.recent_blockhash()) {
            return Err(Rejection::Refused(TransactionError::BlockhashNotFound));
        }
        if preflight {
            if let Err(failed) = self.chain.svm.simulate_transaction(transaction.clone()) {
                return Err(match failed.err {
                    TransactionError::InstructionError(..) => Rejection::Preflight(failed),
                    err => Rejection::Refused(err),
                });
            }
        }
        if self.inflight.drops(&signature, self.slot) {
            let at = self.slot + self.retry_slots();
            self.inflight.retry(transaction, at, max_retries);
            return Ok(signature);
        }
        if self.inflight.timing().at_slot_boundary {
            self.inflight.enqueue(transaction);
            return Ok(signature);
        }
        self.send(transaction, false)
    }

    /// Signs `instructions` with the newest blockhash and sends them, for transactions the node
    /// makes itself (airdrops, test USDC), so they are in the history like any other.
    pub fn send_instructions(
        &mut self,
        instructions: &[Instruction],
        payer: &Keypair,
        signers: &[&Keypair],
    ) -> Result<Signature, Rejection> {
        let mut all_signers = vec![payer];
        all_signers.extend(
            signers
                .iter()
                .copied()
                .filter(|signer| signer.pubkey() != payer.pubkey()),
        );
        let transaction = Transaction::new_signed_with_payer(
            instructions,
            Some(&payer.pubkey()),
            &all_signers,
            self.latest_blockhash().0,
        );
        self.send(VersionedTransaction::from(transaction), true)
    }

    /// Replaces the accounts a transaction wrote with compact copies (see `compact`). Programs
    /// and sysvars are left alone: storing them again would reload them.
    fn compact_written(&mut self, writable: &[Pubkey]) {
        for key in writable {
            let Some(account) = self.chain.svm.accounts_db().inner.get(key) else {
                continue;
            };
            if account.capacity() == account.data().len()
                || account.executable()
                || solana_sdk_ids::sysvar::check_id(account.owner())
            {
                continue;
            }
            let compacted = Account::from(compact(account));
            self.chain
                .svm
                .set_account(*key, compacted)
                .expect("a data account stores as it is");
        }
    }

    /// Runs a transaction once. A failed one is either undone (preflight: on a cluster the
    /// simulation would have stopped it, and a failure changes nothing but the fee payer's
    /// balance) or recorded with its error and fee.
    fn execute(&mut self, transaction: VersionedTransaction, preflight: bool) -> Result<Signature, Rejection> {
        let keys: Vec<Pubkey> = transaction.message.static_account_keys().to_vec();
        let pre_balances: Vec<u64> = keys.iter().map(|key| self.chain.lamports(key)).collect();
        let pre_token_balances = self.token_balances(&keys);
        let fee_payer_before = self.chain.svm.get_account(&keys[0]);
        let fee = self.fee_for(&transaction);
        let before: Vec<(Pubkey, Option<AccountSharedData>)> = keys
            .iter()
            .enumerate()
            .filter(|(index, _)| transaction.message.is_maybe_writable(*index, None))
            .map(|(_, key)| (*key, self.chain.svm.accounts_db().inner.get(key).map(compact)))
            .collect();
        let (err, meta) = match self.chain.svm.send_transaction(transaction.clone()) {
            Ok(meta) => (None, meta),
            Err(failed) => {
                // Only an instruction failure is included in a block (and pays its fee).
                if !matches!(failed.err, TransactionError::InstructionError(..)) {
                    return Err(Rejection::Refused(failed.err));
                }
                if preflight {
                    if let Some(account) = fee_payer_before {
                        self.chain
                            .svm
                            .set_account(keys[0], account)
                            .expect("restore the fee payer");
                    }
                    return Err(Rejection::Preflight(failed));
                }
                (Some(failed.err), failed.meta)
            }
        };
        let post_balances = keys.iter().map(|key| self.chain.lamports(key)).collect();
        let post_token_balances = self.token_balances(&keys);
        let signature = transaction.signatures[0];
        let writable: Vec<Pubkey> = keys
            .iter()
            .enumerate()
            .filter(|(index, _)| transaction.message.is_maybe_writable(*index, None))
            .map(|(_, key)| *key)
            .collect();
        self.compact_written(&writable);
        if transaction
            .message
            .address_table_lookups()
            .is_some_and(|lookups| !lookups.is_empty())
        {
            self.rewrite_all = true;
        } else {
            self.written.extend(writable.iter().copied());
        }
        self.events.push(LedgerEvent::Processed {
            signature,
            slot: self.slot,
            writable,
        });
        self.transaction_count += 1;
        self.unsaved = true;
        self.undo.insert(signature, before);
        self.undo_order.push_back((self.slot, signature));
        let record = TransactionRecord {
            slot: self.slot,
            block_time: self.now_unix(),
            transaction,
            err,
            fee,
            pre_balances,
            post_balances,
            pre_token_balances,
            post_token_balances,
            logs: meta.logs,
            inner_instructions: meta.inner_instructions,
            compute_units_consumed: meta.compute_units_consumed,
            return_data: meta.return_data,
        };
        if let Err(err) = self.history.append(&record, self.slot) {
            history_failed(err);
        }
        Ok(signature)
    }

    fn token_balances(&self, keys: &[Pubkey]) -> Vec<TokenBalance> {
        let accounts = &self.chain.svm.accounts_db().inner;
        keys.iter()
            .enumerate()
            .filter_map(|(index, key)| {
                // Read in place: copying every account would copy program binaries too.
                let account = accounts.get(key)?;
                if account.owner() != &spl_token::ID || account.data().len() != spl_token::state::Account::LEN {
                    return None;
                }
                let token = spl_token::state::Account::unpack(account.data()).ok()?;
                Some(TokenBalance {
                    account_index: index as u8,
                    mint: token.mint,
                    owner: token.owner,
                    amount: token.amount,
                    decimals: self.mint_decimals(&token.mint)?,
                })
            })
            .collect()
    }

    pub fn mint_decimals(&self, mint: &Pubkey) -> Option<u8> {
        let account = self.chain.account(mint)?;
        spl_token::state::Mint::unpack(&account.data)
            .ok()
            .map(|mint| mint.decimals)
    }

    /// Takes back a transaction that is not finalized, as a cluster does when the fork that
    /// included it is abandoned: it leaves the history (getTransaction, statuses and address
    /// histories no longer know it) and the accounts it could write get back what they held
    /// before it, its fee included. Refused once finalized, or when a later transaction wrote
    /// one of those accounts. Answers the slot it had been processed in.
    pub fn drop_transaction(&mut self, signature: &Signature) -> Result<u64, DropRefusal> {
        let slot = self.history.summary(signature).ok_or(DropRefusal::NotFound)?.slot;
        if self.commitment_of(slot) == Commitment::Finalized {
            return Err(DropRefusal::Finalized);
        }
        // Every transaction after a not finalized one is not finalized either, so `undo` holds
        // the accounts each of them could write: no record has to be read from disk.
        let position = self
            .undo_order
            .iter()
            .rposition(|(_, other)| other == signature)
            .ok_or(DropRefusal::Finalized)?;
        let before = &self.undo[signature];
        for (_, later) in self.undo_order.iter().skip(position + 1) {
            let wrote_same = self.undo[later]
                .iter()
                .any(|(key, _)| before.iter().any(|(address, _)| address == key));
            if wrote_same {
                return Err(DropRefusal::Dependent(*later));
            }
        }
        let before = self.undo.remove(signature).expect("checked above");
        for (address, account) in before {
            // An account the transaction created goes back to not existing: no lamports.
            let account = account.map(Account::from).unwrap_or_default();
            self.chain
                .svm
                .set_account(address, account)
                .expect("restore an account");
            self.written.insert(address);
        }
        self.undo_order.remove(position);
        match self.history.remove(signature) {
            Ok(removed) => debug_assert!(removed, "a transaction with a summary is kept"),
            Err(err) => history_failed(err),
        }
        self.transaction_count -= 1;
        self.unsaved = true;
        Ok(slot)
    }

    /// What the history keeps in memory about a transaction: enough for its status.
    pub fn transaction_summary(&self, signature: &Signature) -> Option<&TransactionSummary> {
        self.history.summary(signature)
    }

    /// A transaction's whole record, read from disk.
    pub fn transaction(&self, signature: &Signature) -> io::Result<Option<TransactionRecord>> {
        self.history.record(signature)
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

/// Whether a saved ledger keeps `account`: programs and sysvars come back with a fresh chain,
/// and an account without lamports no longer exists.
/// `account` with its data in a buffer of its own size. When a program in the VM writes an
/// account's data, the runtime gives the buffer 10 KiB of spare capacity (room to grow in place);
/// kept as is, every such account would hold that much more, and so would each of the 32 slots of
/// undo snapshots sharing the buffers, growing with the transaction rate.
fn compact(account: &AccountSharedData) -> AccountSharedData {
    if account.capacity() == account.data().len() {
        return account.clone();
    }
    AccountSharedData::from(Account {
        lamports: account.lamports(),
        data: account.data().to_vec(),
        owner: *account.owner(),
        executable: account.executable(),
        rent_epoch: account.rent_epoch(),
    })
}

fn is_saved(account: &AccountSharedData) -> bool {
    account.lamports() > 0 && !account.executable() && account.owner() != &solana_sdk_ids::sysvar::ID
}
