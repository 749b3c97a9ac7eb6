//! Cluster-like timing: what a client of a real cluster sees and the default node hides.
//!
//! By default a sent transaction runs at once, inside the `sendTransaction` call, and every
//! transaction lands. A cluster instead forwards it to the leader, which includes it in a block at
//! the next slot; some transactions never reach a leader (dropped packets, a leader that is
//! skipped) and the RPC node reports nothing; and every call crosses a network. `Timing` says
//! which of these the node reproduces; `Inflight` holds the transactions waiting for their slot
//! and decides, reproducibly from a seed, which ones are lost.
//!
//! A lost send is lost for good only when the client asked the RPC node not to retry
//! (`maxRetries: 0`, what a client that rebroadcasts itself does). Otherwise the node, as an RPC
//! node's send service does, sends it again every `RETRY_MS`, each time as likely to be lost,
//! up to `maxRetries` times or until its blockhash expires.

use {
    crate::ledger::MAX_PROCESSING_AGE,
    solana_signature::Signature,
    solana_transaction::versioned::VersionedTransaction,
    std::{
        collections::{HashMap, HashSet},
        time::Duration,
    },
};

/// How the node treats sent transactions and RPC calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// A sent transaction runs at the next slot boundary rather than within the call.
    pub at_slot_boundary: bool,
    /// The fraction (0 to 1) of sent transactions that pass the preflight and are never processed.
    pub drop_rate: f64,
    /// Makes the drops, and the RPC jitter, the same from run to run.
    pub seed: u64,
    pub rpc_latency: RpcLatency,
}

/// Time added to each JSON-RPC exchange: `latency_ms`, give or take up to `jitter_ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RpcLatency {
    pub latency_ms: u64,
    pub jitter_ms: u64,
}

/// How often an RPC node sends again what it forwarded (agave's default retry rate).
pub const RETRY_MS: u64 = 2_000;

/// The named profiles of `--profile`.
pub const PROFILES: &[&str] = &["instant", "devnet-like"];

impl Timing {
    /// Today's local node: transactions run within the call, none is lost, no added latency.
    pub const INSTANT: Timing = Timing {
        at_slot_boundary: false,
        drop_rate: 0.0,
        seed: 0,
        rpc_latency: RpcLatency {
            latency_ms: 0,
            jitter_ms: 0,
        },
    };

    /// About what a client far from a public devnet RPC node sees (with 400 ms slots).
    pub const DEVNET_LIKE: Timing = Timing {
        at_slot_boundary: true,
        drop_rate: 0.02,
        seed: 0,
        rpc_latency: RpcLatency {
            latency_ms: 80,
            jitter_ms: 40,
        },
    };

    pub fn profile(name: &str) -> Option<Timing> {
        match name {
            "instant" => Some(Self::INSTANT),
            "devnet-like" => Some(Self::DEVNET_LIKE),
            _ => None,
        }
    }

    /// Whether sending takes the path of `Inflight` rather than today's.
    pub fn is_instant(&self) -> bool {
        !self.at_slot_boundary && self.drop_rate == 0.0
    }
}

impl Default for Timing {
    fn default() -> Self {
        Self::INSTANT
    }
}

/// SplitMix64's finalizer: a well-spread 64-bit hash of a 64-bit input.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A number in [0, 1) drawn from `x`.
pub fn unit(x: u64) -> f64 {
    (mix(x) >> 11) as f64 / (1u64 << 53) as f64
}

impl RpcLatency {
    /// The delay of the `nth` exchange: uniform within `latency_ms ± jitter_ms`, never negative.
    pub fn delay(&self, seed: u64, nth: u64) -> Duration {
        let spread = 2 * self.jitter_ms + 1;
        let offset = (mix(seed ^ mix(nth)) % spread) as i64 - self.jitter_ms as i64;
        Duration::from_millis((self.latency_ms as i64 + offset).max(0) as u64)
    }

    pub fn is_zero(&self) -> bool {
        self.latency_ms == 0 && self.jitter_ms == 0
    }
}

/// Transactions accepted and not yet processed, and how often each signature was sent.
#[derive(Default)]
pub struct Inflight {
    timing: Timing,
    queue: Vec<VersionedTransaction>,
    queued: HashSet<Signature>,
    /// Lost sends the node will send again: the slot it does, the transaction, and the retries
    /// left after that one (`None`: until its blockhash expires).
    retries: Vec<(u64, VersionedTransaction, Option<u64>)>,
    /// Per signature: the sends so far, and the slot of the first (to forget it once its
    /// blockhash has surely expired).
    sends: HashMap<Signature, (u64, u64)>,
}

impl Inflight {
    pub fn new(timing: Timing) -> Self {
        Inflight {
            timing,
            ..Default::default()
        }
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// Whether this send of `signature` is lost. Each send draws anew, from the seed, the
    /// signature and how many times it was sent before: a rebroadcast may get through where
    /// the first send did not, and the outcome does not depend on other clients' traffic.
    pub fn drops(&mut self, signature: &Signature, slot: u64) -> bool {
        if self.timing.drop_rate <= 0.0 {
            return false;
        }
        let (sends, _) = self.sends.entry(*signature).or_insert((0, slot));
        let nth = *sends;
        *sends += 1;
        let mut x = mix(self.timing.seed);
        for chunk in signature.as_ref().chunks(8) {
            x = mix(x ^ u64::from_le_bytes(chunk.try_into().expect("64 bytes in chunks of 8")));
        }
        unit(x ^ nth) < self.timing.drop_rate
    }

    /// Keeps a lost send to send it again at `slot`, if the client allows `max_retries` more.
    pub fn retry(&mut self, transaction: VersionedTransaction, slot: u64, max_retries: Option<u64>) {
        match max_retries {
            Some(0) => {}
            left => self.retries.push((slot, transaction, left.map(|left| left - 1))),
        }
    }

    /// The lost sends due at `slot`, with the retries each has left.
    pub fn due_retries(&mut self, slot: u64) -> Vec<(VersionedTransaction, Option<u64>)> {
        let (due, later) = std::mem::take(&mut self.retries)
            .into_iter()
            .partition(|(at, _, _)| *at <= slot);
        self.retries = later;
        due.into_iter()
            .map(|(_, transaction, left)| (transaction, left))
            .collect()
    }

    /// Keeps `transaction` for the next slot; a signature already waiting is kept once.
    pub fn enqueue(&mut self, transaction: VersionedTransaction) {
        if self.queued.insert(transaction.signatures[0]) {
            self.queue.push(transaction);
        }
    }

    /// The transactions for the slot that starts, in the order they came; forgets the sends of
    /// signatures whose blockhash has expired.
    pub fn take(&mut self, slot: u64) -> Vec<VersionedTransaction> {
        self.sends
            .retain(|_, (_, first_slot)| *first_slot + MAX_PROCESSING_AGE + 1 >= slot);
        self.queued.clear();
        std::mem::take(&mut self.queue)
    }
}
