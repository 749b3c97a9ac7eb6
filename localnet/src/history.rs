//! The transaction history: records on disk, an index in memory.
//!
//! A record (the transaction, its balances, logs and inner instructions: kilobytes) is written
//! to a file as soon as it is processed and read back when `getTransaction` asks for it. Memory
//! keeps only what the other history methods answer from: per signature its slot, block time,
//! error and file offset, and per address the transactions that mention it.
//!
//! Retention bounds both: past `retain_transactions`, the oldest records leave the index, as
//! on a cluster node that no longer holds that history (a signature beyond it has a null status
//! and a null transaction). A record whose blockhash may still be valid is never dropped, so a
//! replay is always refused. Once the dropped records take as much of the file as the kept
//! ones, a background thread copies the kept ones into a new file while the chain goes on; the
//! chain thread then copies what it appended meanwhile and swaps the files.
//!
//! The file starts with `MAGIC`; each record is framed by its length (u32) and CRC-32 (u32). A
//! record cut short by a crash ends the file and is dropped when it is opened. A file without
//! `MAGIC` (as written before framing) is read as bincode records one after another and
//! rewritten framed.

use {
    crate::ledger::{TransactionRecord, MAX_PROCESSING_AGE},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_transaction_error::TransactionError,
    std::{
        collections::{HashMap, VecDeque},
        fs::{self, File, OpenOptions},
        io::{self, BufReader, Read},
        os::unix::fs::FileExt,
        path::{Path, PathBuf},
        sync::{
            atomic::{AtomicU64, Ordering},
            mpsc,
        },
    },
};

/// Transactions kept by default (about 50,000 executions): an index of about 65 MB, measured in
/// docs/performance.md.
pub const DEFAULT_RETAIN_TRANSACTIONS: usize = 100_000;

const MAGIC: &[u8; 8] = b"AMTXREC1";
const FRAME_HEADER_BYTES: u64 = 4 + 4;
/// Dropped bytes below this never start a compaction, however few records are kept.
const MIN_COMPACTION_BYTES: u64 = 64 * 1024;
const COPY_CHUNK_BYTES: usize = 1 << 20;

/// What the history keeps in memory about a transaction.
#[derive(Clone, Debug)]
pub struct TransactionSummary {
    pub signature: Signature,
    pub slot: u64,
    pub block_time: i64,
    /// Boxed: nearly every transaction succeeds, and an error is several words.
    pub err: Option<Box<TransactionError>>,
}

struct Entry {
    summary: TransactionSummary,
    /// Where the record's frame starts, counted from the first byte ever written (see
    /// `History::base`), so that a compaction moves no entry.
    offset: u64,
}

/// The copy of the kept records that a background thread is making.
struct Compaction {
    /// The first kept record and the end of the file when the copy began (logical offsets).
    from: u64,
    to: u64,
    done: mpsc::Receiver<io::Result<File>>,
}

pub struct History {
    file: File,
    /// The file's path; `None` for a history without `--ledger`, kept in an unlinked file.
    path: Option<PathBuf>,
    /// The logical offset of the file's first byte after `MAGIC`.
    base: u64,
    /// The logical offset of the file's end.
    end: u64,
    /// Kept transactions, oldest first; the first has sequence number `first_sequence`.
    entries: VecDeque<Entry>,
    first_sequence: u64,
    by_signature: HashMap<Signature, u64>,
    /// Sequence numbers of the transactions that mention each address, oldest first. Those
    /// below `first_sequence` are swept out now and then (`sweep_addresses`).
    by_address: HashMap<Pubkey, VecDeque<u64>>,
    dropped_since_sweep: usize,
    /// 0 keeps every transaction.
    retain_transactions: usize,
    compaction: Option<Compaction>,
    /// A record as it is framed, reused.
    frame: Vec<u8>,
}

/// A frame's record, then the addresses it loaded from lookup tables, which records framed
/// before v0 transactions were resolved do not carry.
fn decode(payload: &[u8]) -> bincode::Result<TransactionRecord> {
    let mut rest = payload;
    let mut record: TransactionRecord = bincode::deserialize_from(&mut rest)?;
    if !rest.is_empty() {
        record.loaded_addresses = bincode::deserialize(rest)?;
    }
    Ok(record)
}

fn invalid(path: &Path, err: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}: {err}", path.display()))
}

/// A new file with only `MAGIC`, at `path` or, without one, unlinked in the temporary folder.
fn create(path: Option<&Path>) -> io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let file = match path {
        Some(path) => OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?,
        None => {
            let path = std::env::temp_dir().join(format!(
                "localnet-history-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
            // The open handle keeps it; nothing is left behind when the process ends.
            fs::remove_file(&path)?;
            file
        }
    };
    file.write_all_at(MAGIC, 0)?;
    Ok(file)
}

fn partial(path: &Path) -> PathBuf {
    path.with_extension("partial")
}

/// Copies `bytes` bytes at `from` in `source` to `to` in `target`.
fn copy_range(source: &File, from: u64, target: &File, to: u64, bytes: u64) -> io::Result<()> {
    let mut chunk = vec![0u8; COPY_CHUNK_BYTES.min(bytes as usize)];
    let mut copied = 0;
    while copied < bytes {
        let length = chunk.len().min((bytes - copied) as usize);
        source.read_exact_at(&mut chunk[..length], from + copied)?;
        target.write_all_at(&chunk[..length], to + copied)?;
        copied += length as u64;
    }
    Ok(())
}

impl History {
    fn with_file(file: File, path: Option<PathBuf>, retain_transactions: usize) -> Self {
        History {
            file,
            path,
            base: 0,
            end: 0,
            entries: VecDeque::new(),
            first_sequence: 0,
            by_signature: HashMap::new(),
            by_address: HashMap::new(),
            dropped_since_sweep: 0,
            retain_transactions,
            compaction: None,
            frame: Vec::new(),
        }
    }

    /// An empty history in an unlinked temporary file.
    pub fn temporary(retain_transactions: usize) -> io::Result<Self> {
        Ok(Self::with_file(create(None)?, None, retain_transactions))
    }

    /// An empty history at `path`, replacing any file there.
    pub fn create(path: &Path, retain_transactions: usize) -> io::Result<Self> {
        Ok(Self::with_file(
            create(Some(path))?,
            Some(path.to_path_buf()),
            retain_transactions,
        ))
    }

    /// The history saved at `path` (empty if there is none), indexed; `slot` is the chain's,
    /// which decides what retention may drop.
    pub fn open(path: &Path, retain_transactions: usize, slot: u64) -> io::Result<Self> {
        let mut bytes = match File::open(path) {
            Ok(file) => BufReader::new(file),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Self::create(path, retain_transactions),
            Err(err) => return Err(err),
        };
        let mut magic = [0u8; MAGIC.len()];
        let framed = match bytes.read_exact(&mut magic) {
            Ok(()) => &magic == MAGIC,
            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => false,
            Err(err) => return Err(err),
        };
        let mut history = if framed {
            let file = OpenOptions::new().read(true).write(true).open(path)?;
            let mut history = Self::with_file(file, Some(path.to_path_buf()), retain_transactions);
            history.index_framed(bytes, path)?;
            history
        } else {
            drop(bytes);
            Self::rewrite_unframed(path, retain_transactions)?
        };
        history.retain(slot);
        Ok(history)
    }

    /// Indexes whole records after `MAGIC`; a record cut short or damaged ends the file, which
    /// is truncated there so that appended records follow whole ones.
    fn index_framed(&mut self, mut bytes: BufReader<File>, path: &Path) -> io::Result<()> {
        let mut payload = Vec::new();
        loop {
            let mut header = [0u8; FRAME_HEADER_BYTES as usize];
            if bytes.read_exact(&mut header).is_err() {
                break;
            }
            let length = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
            let crc32 = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
            payload.resize(length as usize, 0);
            if bytes.read_exact(&mut payload).is_err() || crc32fast::hash(&payload) != crc32 {
                break;
            }
            let record = decode(&payload).map_err(|err| invalid(path, err))?;
            let offset = self.end;
            self.end += FRAME_HEADER_BYTES + u64::from(length);
            self.index(&record, offset);
        }
        let valid = MAGIC.len() as u64 + self.end;
        if self.file.metadata()?.len() > valid {
            self.file.set_len(valid)?;
            self.file.sync_all()?;
        }
        Ok(())
    }

    /// Reads bincode records one after another, as written before framing, into a framed file
    /// that replaces it.
    fn rewrite_unframed(path: &Path, retain_transactions: usize) -> io::Result<Self> {
        let mut unframed = BufReader::new(File::open(path)?);
        let framed_path = partial(path);
        let mut history = Self::with_file(create(Some(&framed_path))?, Some(path.to_path_buf()), 0);
        loop {
            match bincode::deserialize_from::<_, TransactionRecord>(&mut unframed) {
                Ok(record) => history.append(&record, record.slot)?,
                Err(err) => match *err {
                    bincode::ErrorKind::Io(ref io) if io.kind() == io::ErrorKind::UnexpectedEof => break,
                    _ => return Err(invalid(path, err)),
                },
            }
        }
        history.file.sync_all()?;
        fs::rename(framed_path, path)?;
        history.retain_transactions = retain_transactions;
        Ok(history)
    }

    fn index(&mut self, record: &TransactionRecord, offset: u64) {
        let signature = record.transaction.signatures[0];
        let sequence = self.first_sequence + self.entries.len() as u64;
        for key in record.account_keys() {
            self.by_address.entry(key).or_default().push_back(sequence);
        }
        self.by_signature.insert(signature, sequence);
        self.entries.push_back(Entry {
            summary: TransactionSummary {
                signature,
                slot: record.slot,
                block_time: record.block_time,
                err: record.err.clone().map(Box::new),
            },
            offset,
        });
    }

    fn physical(&self, offset: u64) -> u64 {
        offset - self.base + MAGIC.len() as u64
    }

    /// Writes `record` at the end of the file (flushed by `sync`) and indexes it; `slot` is
    /// the chain's.
    pub fn append(&mut self, record: &TransactionRecord, slot: u64) -> io::Result<()> {
        self.frame.clear();
        self.frame.extend_from_slice(&[0u8; FRAME_HEADER_BYTES as usize]);
        bincode::serialize_into(&mut self.frame, record).map_err(io::Error::other)?;
        bincode::serialize_into(&mut self.frame, &record.loaded_addresses).map_err(io::Error::other)?;
        let payload = &self.frame[FRAME_HEADER_BYTES as usize..];
        let length = u32::try_from(payload.len()).map_err(io::Error::other)?;
        let crc32 = crc32fast::hash(payload);
        self.frame[..4].copy_from_slice(&length.to_le_bytes());
        self.frame[4..8].copy_from_slice(&crc32.to_le_bytes());
        self.file.write_all_at(&self.frame, self.physical(self.end))?;
        let offset = self.end;
        self.end += self.frame.len() as u64;
        self.index(record, offset);
        self.retain(slot);
        self.advance(slot)
    }

    /// Applies retention at `slot` and finishes or starts a compaction.
    pub fn advance(&mut self, slot: u64) -> io::Result<()> {
        self.retain(slot);
        self.finish_compaction()?;
        self.start_compaction()
    }

    /// Drops the oldest transactions past the retention whose blockhash has expired.
    fn retain(&mut self, slot: u64) {
        if self.retain_transactions == 0 {
            return;
        }
        while self.entries.len() > self.retain_transactions
            && self
                .entries
                .front()
                .is_some_and(|entry| entry.summary.slot + MAX_PROCESSING_AGE < slot)
        {
            let entry = self.entries.pop_front().expect("checked above");
            // A removed transaction sent again is indexed under its new sequence number.
            if self.by_signature.get(&entry.summary.signature) == Some(&self.first_sequence) {
                self.by_signature.remove(&entry.summary.signature);
            }
            self.first_sequence += 1;
            self.dropped_since_sweep += 1;
        }
        if self.dropped_since_sweep > self.entries.len().max(4096) {
            self.sweep_addresses();
        }
    }

    /// Removes dropped transactions from the per-address lists, and the addresses left with
    /// none (an escrow is mentioned by two transactions, then never again).
    fn sweep_addresses(&mut self) {
        let first = self.first_sequence;
        self.by_address.retain(|_, sequences| {
            while sequences.front().is_some_and(|sequence| *sequence < first) {
                sequences.pop_front();
            }
            if sequences.capacity() > 2 * sequences.len() + 8 {
                sequences.shrink_to_fit();
            }
            !sequences.is_empty()
        });
        self.by_address.shrink_to_fit();
        self.dropped_since_sweep = 0;
    }

    /// Starts copying the kept records to a new file once the dropped ones take as much room.
    fn start_compaction(&mut self) -> io::Result<()> {
        let Some(first) = self.entries.front() else {
            return Ok(());
        };
        let dropped = first.offset - self.base;
        if self.compaction.is_some() || dropped < MIN_COMPACTION_BYTES || dropped < self.end - first.offset {
            return Ok(());
        }
        let (from, to) = (first.offset, self.end);
        let source = self.file.try_clone()?;
        let source_from = self.physical(from);
        let target_path = self.path.as_deref().map(partial);
        let (sender, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("history-compaction".into())
            .spawn(move || {
                let copied = create(target_path.as_deref()).and_then(|target| {
                    copy_range(&source, source_from, &target, MAGIC.len() as u64, to - from)?;
                    Ok(target)
                });
                let _ = sender.send(copied);
            })?;
        self.compaction = Some(Compaction { from, to, done });
        Ok(())
    }

    /// Once the background copy is done: copies the records appended since, and swaps files.
    fn finish_compaction(&mut self) -> io::Result<()> {
        let Some(compaction) = &self.compaction else {
            return Ok(());
        };
        let target = match compaction.done.try_recv() {
            Ok(copied) => copied?,
            Err(mpsc::TryRecvError::Empty) => return Ok(()),
            Err(mpsc::TryRecvError::Disconnected) => return Err(io::Error::other("the compaction thread stopped")),
        };
        let (from, to) = (compaction.from, compaction.to);
        self.compaction = None;
        let magic = MAGIC.len() as u64;
        copy_range(&self.file, self.physical(to), &target, magic + to - from, self.end - to)?;
        if let Some(path) = &self.path {
            target.sync_all()?;
            fs::rename(partial(path), path)?;
        }
        self.file = target;
        self.base = from;
        Ok(())
    }

    /// Flushes appended records to disk.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    pub fn summary(&self, signature: &Signature) -> Option<&TransactionSummary> {
        let sequence = self.by_signature.get(signature)?;
        Some(&self.entries[(sequence - self.first_sequence) as usize].summary)
    }

    /// The record of a kept transaction, read from the file.
    pub fn record(&self, signature: &Signature) -> io::Result<Option<TransactionRecord>> {
        let Some(sequence) = self.by_signature.get(signature) else {
            return Ok(None);
        };
        let entry = &self.entries[(sequence - self.first_sequence) as usize];
        let at = self.physical(entry.offset);
        let mut header = [0u8; FRAME_HEADER_BYTES as usize];
        self.file.read_exact_at(&mut header, at)?;
        let length = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
        let mut payload = vec![0u8; length as usize];
        self.file.read_exact_at(&mut payload, at + FRAME_HEADER_BYTES)?;
        decode(&payload)
            .map(Some)
            .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))
    }

    /// Kept transactions that mention `address`, newest first, strictly before `before` and
    /// down to (excluding) `until`, at most `limit`.
    pub fn signatures_for(
        &self,
        address: &Pubkey,
        before: Option<&Signature>,
        until: Option<&Signature>,
        limit: usize,
    ) -> Vec<&TransactionSummary> {
        let Some(sequences) = self.by_address.get(address) else {
            return Vec::new();
        };
        let kept = sequences.partition_point(|sequence| *sequence < self.first_sequence);
        // A `before` or `until` the history no longer keeps (or never had) matches nothing, as
        // a signature searched for in vain would.
        let end = match before {
            None => sequences.len(),
            Some(before) => match self.by_signature.get(before) {
                Some(sequence) => sequences.partition_point(|other| other < sequence),
                None => return Vec::new(),
            },
        };
        let start = match until.and_then(|until| self.by_signature.get(until)) {
            Some(sequence) => sequences.partition_point(|other| other <= sequence),
            None => kept,
        }
        .max(kept);
        sequences
            .range(start.min(end)..end)
            .rev()
            .take(limit)
            .map(|sequence| &self.entries[(sequence - self.first_sequence) as usize].summary)
            .collect()
    }

    /// Takes a kept transaction out of the index: its signature and the lists of the addresses
    /// it mentions (read from its record) no longer know it. Its entry stays in place, so the
    /// sequence numbers of the others hold, and leaves with retention; its record stays in the
    /// file until a compaction passes it. Answers whether it was kept.
    pub fn remove(&mut self, signature: &Signature) -> io::Result<bool> {
        let Some(record) = self.record(signature)? else {
            return Ok(false);
        };
        let sequence = self.by_signature.remove(signature).expect("a record read is indexed");
        for key in record.account_keys() {
            let Some(sequences) = self.by_address.get_mut(&key) else {
                continue;
            };
            if let Ok(position) = sequences.binary_search(&sequence) {
                sequences.remove(position);
            }
            if sequences.is_empty() {
                self.by_address.remove(&key);
            }
        }
        Ok(true)
    }

    /// Transactions the index keeps.
    pub fn len(&self) -> usize {
        self.by_signature.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_signature.is_empty()
    }

    /// Bytes the file holds (dropped records not yet compacted away included).
    pub fn file_bytes(&self) -> u64 {
        MAGIC.len() as u64 + self.end - self.base
    }
}
