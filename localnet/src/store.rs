//! `--ledger DIR`: the chain on disk, so that a restart keeps balances, accounts and history.
//!
//! Saved at most once a slot, when something changed. Accounts (every one but programs and
//! sysvars, which a fresh chain brings back) are a snapshot, `accounts.bin`, and a log,
//! `accounts.log`, of the accounts each later save found written: a save costs what changed, not
//! every account the chain holds. The log names the snapshot it extends (length and CRC-32) and is
//! folded into a new snapshot once it outgrows it. `state.json` (slots, blockhashes, clock) is
//! replaced atomically; `transactions.bin` is the transaction history (`history`), which the
//! chain writes as it processes and a save flushes. A crash loses at most the last slot: a log
//! batch and a record are checksummed, and one cut short is dropped at the next start.

use {
    crate::{
        history::History,
        ledger::{Ledger, LedgerState},
    },
    solana_account::Account,
    solana_pubkey::Pubkey,
    std::{
        collections::HashMap,
        fs::{self, File, OpenOptions},
        io::{self, Write},
        path::{Path, PathBuf},
    },
};

const ACCOUNTS: &str = "accounts.bin";
const ACCOUNT_LOG: &str = "accounts.log";
const TRANSACTIONS: &str = "transactions.bin";
const STATE: &str = "state.json";

/// `accounts.log` starts with this, then the length (u64) and CRC-32 (u32) of its snapshot.
const LOG_MAGIC: &[u8; 8] = b"AMACCLOG";
const LOG_HEADER_BYTES: usize = 8 + 8 + 4;
/// Each batch: its payload's length (u32) and CRC-32 (u32), then the payload.
const BATCH_HEADER_BYTES: usize = 4 + 4;
/// A log shorter than this is never folded into a new snapshot, however small the snapshot.
const MIN_COMPACTION_BYTES: u64 = 1 << 20;

/// A ledger read back from disk.
pub struct Saved {
    pub state: LedgerState,
    pub accounts: Vec<(Pubkey, Account)>,
    pub history: History,
}

/// Which `accounts.bin` a log extends.
#[derive(Clone, Copy, PartialEq, Eq)]
struct SnapshotId {
    bytes: u64,
    crc32: u32,
}

impl SnapshotId {
    fn of(snapshot: &[u8]) -> Self {
        SnapshotId {
            bytes: snapshot.len() as u64,
            crc32: crc32fast::hash(snapshot),
        }
    }

    fn log_header(&self) -> [u8; LOG_HEADER_BYTES] {
        let mut header = [0u8; LOG_HEADER_BYTES];
        header[..8].copy_from_slice(LOG_MAGIC);
        header[8..16].copy_from_slice(&self.bytes.to_le_bytes());
        header[16..].copy_from_slice(&self.crc32.to_le_bytes());
        header
    }
}

/// The log being appended to, and its length in bytes.
struct AccountLog {
    file: File,
    bytes: u64,
}

pub struct Store {
    dir: PathBuf,
    /// `accounts.bin` as last written: each snapshot serializes into the same memory instead of
    /// faulting in a fresh buffer as large as every account.
    accounts: Vec<u8>,
    /// The snapshot on disk, once there is one.
    snapshot: Option<SnapshotId>,
    /// The log of that snapshot, once opened or created.
    log: Option<AccountLog>,
    /// A log batch as it is serialized, reused like `accounts`.
    batch: Vec<u8>,
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
            accounts: Vec::new(),
            snapshot: None,
            log: None,
            batch: Vec::new(),
        })
    }

    /// A new, empty history for a fresh chain, replacing any left in the directory.
    pub fn new_history(&self, retain_transactions: usize) -> io::Result<History> {
        History::create(&self.dir.join(TRANSACTIONS), retain_transactions)
    }

    /// The saved ledger, or `None` for an empty directory; its history keeps at most
    /// `retain_transactions` (0: all).
    pub fn load(&mut self, retain_transactions: usize) -> io::Result<Option<Saved>> {
        let state_path = self.dir.join(STATE);
        if !state_path.exists() {
            return Ok(None);
        }
        let state: LedgerState =
            serde_json::from_slice(&fs::read(&state_path)?).map_err(|err| invalid(&state_path, err))?;
        let accounts = self.load_accounts()?;
        let history = History::open(&self.dir.join(TRANSACTIONS), retain_transactions, state.slot)?;
        Ok(Some(Saved {
            state,
            accounts,
            history,
        }))
    }

    /// The snapshot with its log's batches applied in order. A log of another snapshot (left by
    /// a crash while a new snapshot replaced it) is ignored; a batch cut short or damaged ends
    /// the log, which is truncated there so that later batches follow whole ones.
    fn load_accounts(&mut self) -> io::Result<Vec<(Pubkey, Account)>> {
        let snapshot_path = self.dir.join(ACCOUNTS);
        let snapshot = fs::read(&snapshot_path)?;
        let id = SnapshotId::of(&snapshot);
        let listed: Vec<(Pubkey, Account)> =
            bincode::deserialize(&snapshot).map_err(|err| invalid(&snapshot_path, err))?;
        self.snapshot = Some(id);
        let log_path = self.dir.join(ACCOUNT_LOG);
        let log = match fs::read(&log_path) {
            Ok(log) => log,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(listed),
            Err(err) => return Err(err),
        };
        if log.len() < LOG_HEADER_BYTES || log[..LOG_HEADER_BYTES] != id.log_header() {
            return Ok(listed);
        }
        let mut accounts: HashMap<Pubkey, Account> = listed.into_iter().collect();
        let mut valid = LOG_HEADER_BYTES;
        while let Some(header) = log.get(valid..valid + BATCH_HEADER_BYTES) {
            let payload_bytes = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
            let crc32 = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
            let start = valid + BATCH_HEADER_BYTES;
            let Some(payload) = log.get(start..start + payload_bytes) else {
                break;
            };
            if crc32fast::hash(payload) != crc32 {
                break;
            }
            let batch: Vec<(Pubkey, Option<Account>)> =
                bincode::deserialize(payload).map_err(|err| invalid(&log_path, err))?;
            for (address, account) in batch {
                match account {
                    Some(account) => accounts.insert(address, account),
                    None => accounts.remove(&address),
                };
            }
            valid = start + payload_bytes;
        }
        let file = OpenOptions::new().append(true).open(&log_path)?;
        if valid < log.len() {
            file.set_len(valid as u64)?;
            file.sync_all()?;
        }
        self.log = Some(AccountLog {
            file,
            bytes: valid as u64,
        });
        Ok(accounts.into_iter().collect())
    }

    /// Writes what changed since the last save.
    pub fn save(&mut self, ledger: &mut Ledger) -> io::Result<()> {
        if !ledger.unsaved() {
            return replace(
                &self.dir.join(STATE),
                &serde_json::to_vec(&ledger.state()).map_err(io::Error::other)?,
            );
        }
        ledger.sync_history()?;
        let snapshot_due = ledger.rewrites_all()
            || match (&self.snapshot, &self.log) {
                (None, _) => true,
                (Some(snapshot), Some(log)) => log.bytes > snapshot.bytes.max(MIN_COMPACTION_BYTES),
                (Some(_), None) => false,
            };
        if snapshot_due {
            self.write_snapshot(ledger)?;
        } else {
            self.append_written(ledger)?;
        }
        replace(
            &self.dir.join(STATE),
            &serde_json::to_vec(&ledger.state()).map_err(io::Error::other)?,
        )?;
        ledger.mark_saved();
        Ok(())
    }

    /// Every saved account into a new `accounts.bin`, then an empty log that names it.
    fn write_snapshot(&mut self, ledger: &Ledger) -> io::Result<()> {
        self.accounts.clear();
        bincode::serialize_into(&mut self.accounts, &ledger.saved_accounts()).map_err(io::Error::other)?;
        replace(&self.dir.join(ACCOUNTS), &self.accounts)?;
        let id = SnapshotId::of(&self.accounts);
        self.snapshot = Some(id);
        self.start_log(id)
    }

    /// Replaces `accounts.log` with one holding only the header naming `snapshot`.
    fn start_log(&mut self, snapshot: SnapshotId) -> io::Result<()> {
        let path = self.dir.join(ACCOUNT_LOG);
        replace(&path, &snapshot.log_header())?;
        let file = OpenOptions::new().append(true).open(&path)?;
        self.log = Some(AccountLog {
            file,
            bytes: LOG_HEADER_BYTES as u64,
        });
        Ok(())
    }

    /// The accounts written since the last save as one batch at the end of the log.
    fn append_written(&mut self, ledger: &Ledger) -> io::Result<()> {
        let written = ledger.written_accounts();
        if written.is_empty() {
            return Ok(());
        }
        if self.log.is_none() {
            let snapshot = self.snapshot.expect("a log follows a snapshot");
            self.start_log(snapshot)?;
        }
        self.batch.clear();
        self.batch.extend_from_slice(&[0u8; BATCH_HEADER_BYTES]);
        bincode::serialize_into(&mut self.batch, &written).map_err(io::Error::other)?;
        let payload_bytes = self.batch.len() - BATCH_HEADER_BYTES;
        let payload_len = u32::try_from(payload_bytes).map_err(io::Error::other)?;
        let crc32 = crc32fast::hash(&self.batch[BATCH_HEADER_BYTES..]);
        self.batch[..4].copy_from_slice(&payload_len.to_le_bytes());
        self.batch[4..BATCH_HEADER_BYTES].copy_from_slice(&crc32.to_le_bytes());
        let log = self.log.as_mut().expect("started above");
        log.file.write_all(&self.batch)?;
        log.file.sync_data()?;
        log.bytes += self.batch.len() as u64;
        Ok(())
    }
}
