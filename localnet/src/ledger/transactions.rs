//! Running transactions on the ledger: fees, simulation, sending with or without the
//! cluster-like timing, their records and token balances, and taking one back as a dropped fork.

use {
    super::{
        account_keys, history_failed, Commitment, DropRefusal, Ledger, LedgerEvent, Rejection, TokenBalance,
        TransactionRecord, LAMPORTS_PER_SIGNATURE,
    },
    crate::{chain::signed_transaction, fees, history::TransactionSummary},
    litesvm::types::{FailedTransactionMetadata, TransactionMetadata},
    solana_account::{Account, AccountSharedData, ReadableAccount},
    solana_address_lookup_table_interface::state::AddressLookupTable,
    solana_instruction::Instruction,
    solana_keypair::Keypair,
    solana_message::v0::LoadedAddresses,
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_transaction::versioned::VersionedTransaction,
    solana_transaction_error::TransactionError,
    spl_token::solana_program::program_pack::Pack,
    std::io,
};

impl Ledger {
    /// The signature fee (the transaction's signatures and those its precompile instructions
    /// check) and the priority fee.
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
        let signature_fee = (u64::from(message.header().num_required_signatures) + precompile_signatures)
            .saturating_mul(LAMPORTS_PER_SIGNATURE);
        signature_fee.saturating_add(fees::prioritization_fee_lamports(keys, message.instructions()))
    }

    pub fn simulate(
        &mut self,
        transaction: VersionedTransaction,
        verify_signatures: bool,
    ) -> Result<TransactionMetadata, FailedTransactionMetadata> {
        if verify_signatures {
            return self.simulate_with_priority_fee(transaction);
        }
        self.chain.svm = std::mem::take(&mut self.chain.svm).with_sigverify(false);
        let result = self.simulate_with_priority_fee(transaction);
        self.chain.svm = std::mem::take(&mut self.chain.svm).with_sigverify(true);
        result
    }

    /// A simulation whose fee payer must afford the priority fee too, as on a cluster; it
    /// changes nothing.
    fn simulate_with_priority_fee(
        &mut self,
        transaction: VersionedTransaction,
    ) -> Result<TransactionMetadata, FailedTransactionMetadata> {
        let message = &transaction.message;
        let keys = message.static_account_keys().to_vec();
        let payer_before =
            fees::take_priority_fee(&mut self.chain.svm, &keys, message.instructions()).map_err(|err| {
                FailedTransactionMetadata {
                    err,
                    meta: TransactionMetadata::default(),
                }
            })?;
        let result = self.chain.svm.simulate_transaction(transaction).map(|info| info.meta);
        fees::give_back(&mut self.chain.svm, keys[0], payer_before);
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
            if let Err(failed) = self.simulate_with_priority_fee(transaction.clone()) {
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
        let transaction = signed_transaction(instructions, payer, signers, self.latest_blockhash().0);
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
        // Resolved before it runs: the transaction itself may extend or close a table it loads from.
        let loaded_addresses = self.loaded_addresses(&transaction);
        let keys = account_keys(&transaction, &loaded_addresses);
        let writable: Vec<Pubkey> = transaction
            .message
            .static_account_keys()
            .iter()
            .enumerate()
            .filter(|(index, _)| transaction.message.is_maybe_writable(*index, None))
            .map(|(_, key)| *key)
            .chain(loaded_addresses.writable.iter().copied())
            .collect();
        let pre_balances: Vec<u64> = keys.iter().map(|key| self.chain.lamports(key)).collect();
        let pre_token_balances = self.token_balances(&keys);
        let fee_payer_before = self.chain.svm.get_account(&keys[0]);
        let fee = self.fee_for(&transaction);
        let before: Vec<(Pubkey, Option<AccountSharedData>)> = writable
            .iter()
            .map(|key| (*key, self.chain.svm.accounts_db().inner.get(key).map(compact)))
            .collect();
        let priority_fee_taken =
            fees::take_priority_fee(&mut self.chain.svm, &keys, transaction.message.instructions())
                .map_err(Rejection::Refused)?;
        let (err, meta) = match self.chain.svm.send_transaction(transaction.clone()) {
            Ok(meta) => (None, meta),
            Err(failed) => {
                // Only an instruction failure is included in a block (and pays its fee).
                if !matches!(failed.err, TransactionError::InstructionError(..)) {
                    fees::give_back(&mut self.chain.svm, keys[0], priority_fee_taken);
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
        self.compact_written(&writable);
        self.written.extend(writable.iter().copied());
        self.priority_fees.record(self.slot, &transaction, &writable);
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
            loaded_addresses,
        };
        if let Err(err) = self.history.append(&record, self.slot) {
            history_failed(err);
        }
        Ok(signature)
    }

    /// What a v0 transaction's lookups name in their tables now; none for a legacy one, or for
    /// a lookup the runtime will refuse (its table missing or an index past its end), which
    /// then runs nothing.
    fn loaded_addresses(&self, transaction: &VersionedTransaction) -> LoadedAddresses {
        let mut loaded = LoadedAddresses::default();
        let Some(lookups) = transaction.message.address_table_lookups() else {
            return loaded;
        };
        let accounts = &self.chain.svm.accounts_db().inner;
        for lookup in lookups {
            let Some(table) = accounts
                .get(&lookup.account_key)
                .and_then(|account| AddressLookupTable::deserialize(account.data()).ok())
            else {
                return LoadedAddresses::default();
            };
            let pick = |indexes: &[u8]| -> Option<Vec<Pubkey>> {
                indexes
                    .iter()
                    .map(|index| table.addresses.get(usize::from(*index)).copied())
                    .collect()
            };
            match (pick(&lookup.writable_indexes), pick(&lookup.readonly_indexes)) {
                (Some(writable), Some(readonly)) => {
                    loaded.writable.extend(writable);
                    loaded.readonly.extend(readonly);
                }
                _ => return LoadedAddresses::default(),
            }
        }
        loaded
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
}

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
