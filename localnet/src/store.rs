//! `--ledger DIR`: the chain on disk, so that a restart keeps balances, accounts and history.
//!
//! Saved at most once a slot, when something changed: `accounts.bin` (every account but
//! programs and sysvars, which a fresh chain brings back) and `state.json` (slots, blockhashes,
//! clock) are replaced atomically; `transactions.bin` grows by the new records. A crash loses
//! at most the last slot.

use {
    crate::ledger::{Ledger, LedgerState, TransactionRecord},
    solana_account::Account,
    solana_pubkey::Pubkey,
    std::{
        fs::{self, File, OpenOptions},
        io::{self, BufReader, BufWriter, Write},
        path::{Path, PathBuf},
    },
};

const ACCOUNTS: &str = "accounts.bin";
const TRANSACTIONS: &str = "transactions.bin";
const STATE: &str = "state.json";

/// A ledger read back from disk.
pub struct Saved {
    pub state: LedgerState,
    pub accounts: Vec<(Pubkey, Account)>,
    pub records: Vec<TransactionRecord>,
}

pub struct Store {
    dir: PathBuf,
    /// Records already in `transactions.bin`.
    records_written: usize,
    /// `accounts.bin` as last written: each save serializes into the same memory instead of
    /// faulting in a fresh buffer as large as every account.
    accounts: Vec<u8>,
}

fn invalid(path: &Path, err: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}: {err}", path.display()))
}

fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let partial = path.with_extension("partial");
    let mut file = File::create(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(partial, path)
}

impl Store {
    pub fn open(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            records_written: 0,
            accounts: Vec::new(),
        })
    }

    /// The saved ledger, or `None` for an empty directory.
    pub fn load(&mut self) -> io::Result<Option<Saved>> {
        let state_path = self.dir.join(STATE);
        if !state_path.exists() {
            return Ok(None);
        }
        let state: LedgerState =
            serde_json::from_slice(&fs::read(&state_path)?).map_err(|err| invalid(&state_path, err))?;
        let accounts_path = self.dir.join(ACCOUNTS);
        let accounts = bincode::deserialize(&fs::read(&accounts_path)?).map_err(|err| invalid(&accounts_path, err))?;
        let transactions_path = self.dir.join(TRANSACTIONS);
        let mut records = Vec::new();
        if transactions_path.exists() {
            let mut reader = BufReader::new(File::open(&transactions_path)?);
            loop {
                match bincode::deserialize_from::<_, TransactionRecord>(&mut reader) {
                    Ok(record) => records.push(record),
                    Err(err) => match *err {
                        bincode::ErrorKind::Io(ref io) if io.kind() == io::ErrorKind::UnexpectedEof => break,
                        _ => return Err(invalid(&transactions_path, err)),
                    },
                }
            }
        }
        self.records_written = records.len();
        Ok(Some(Saved {
            state,
            accounts,
            records,
        }))
    }

    /// Writes what changed since the last save.
    pub fn save(&mut self, ledger: &mut Ledger) -> io::Result<()> {
        if !ledger.unsaved() {
            return replace(
                &self.dir.join(STATE),
                &serde_json::to_vec(&ledger.state()).map_err(io::Error::other)?,
            );
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(TRANSACTIONS))?;
        let mut appended = BufWriter::new(file);
        for record in ledger.records_since(self.records_written) {
            bincode::serialize_into(&mut appended, record).map_err(io::Error::other)?;
        }
        appended.into_inner().map_err(|err| err.into_error())?.sync_all()?;
        self.records_written = ledger.record_count();
        self.accounts.clear();
        bincode::serialize_into(&mut self.accounts, &ledger.saved_accounts()).map_err(io::Error::other)?;
        replace(&self.dir.join(ACCOUNTS), &self.accounts)?;
        replace(
            &self.dir.join(STATE),
            &serde_json::to_vec(&ledger.state()).map_err(io::Error::other)?,
        )?;
        ledger.mark_saved();
        Ok(())
    }
}
