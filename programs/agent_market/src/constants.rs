use anchor_lang::prelude::*;

#[constant]
pub const MARKET_SEED: &[u8] = b"market";
#[constant]
pub const AGENT_SEED: &[u8] = b"agent";
#[constant]
pub const COLLATERAL_VAULT_SEED: &[u8] = b"collateral_vault";
#[constant]
pub const ESCROW_VAULT_SEED: &[u8] = b"escrow_vault";
#[constant]
pub const ESCROW_SEED: &[u8] = b"escrow";
#[constant]
pub const SUBSCRIPTION_SEED: &[u8] = b"subscription";
#[constant]
pub const DISPUTE_SEED: &[u8] = b"dispute";
/// The PDA every payer approves as SPL Token delegate of its USDC account.
#[constant]
pub const DELEGATE_SEED: &[u8] = b"delegate";
#[constant]
pub const FEE_SHARD_SEED: &[u8] = b"fee_shard";
#[constant]
pub const RECEIPT_LOG_SEED: &[u8] = b"receipt_log";

/// The marketplace fee: 1% of every payment, rounded down. No instruction can change it.
#[constant]
pub const FEE_BPS: u64 = 100;
#[constant]
pub const BPS_DENOMINATOR: u64 = 10_000;

/// Fees land in one of these token accounts so that settlements of different executions do
/// not all write the same account; `sweep_fees` moves them to the treasury.
#[constant]
pub const FEE_SHARD_COUNT: u8 = 8;

/// Domain tag of the result digest the creator signs: execute protocol version 2, which binds
/// the signature to one escrow (docs/execute-protocol.md).
#[constant]
pub const RESULT_DIGEST_DOMAIN: &[u8] = b"agentmarket/result/v2";

/// Domain tag of the signing-key proof: the digest a signing key signs to show that whoever
/// registers it as an agent's key holds it (docs/program.md, "Signing-key proof").
#[constant]
pub const SIGNING_KEY_PROOF_DOMAIN: &[u8] = b"agentmarket/signing-key/v1";

#[constant]
pub const MAX_ENDPOINT_LEN: u16 = 200;
#[constant]
pub const MAX_EXECUTION_SECS: u32 = 900;
/// The longest subscription period a listing may sell: a year, leap years included. A retired
/// agent honours its live subscriptions until they expire, and its collateral stays locked until
/// then (docs/program.md, "Pricing changes and retirement").
#[constant]
pub const MAX_SUBSCRIPTION_PERIOD_SECS: u32 = 366 * 24 * 3600;

/// Domain tag of the batch digest: what an agent's signing key signs once for a whole
/// `settle_batch`, over the result digests of its executions in order (docs/program.md,
/// "Batched settlement").
#[constant]
pub const BATCH_DIGEST_DOMAIN: &[u8] = b"agentmarket/result-batch/v2";

/// The most escrows one `settle_batch` settles. The tightest bound is the 1,232-byte transaction:
/// 12 escrows fit a v0 transaction whose fixed accounts come from a lookup table, 8 a legacy
/// one; 16 leaves room for escrows loaded from a lookup table while staying far under the
/// compute (≈30,000 + 16 × 11,000 of 1,400,000 units) and account-lock (29 of 64) limits
/// (docs/program.md, "Batch limits").
#[constant]
pub const MAX_SETTLE_BATCH: u8 = 16;

/// The most escrows one `open_escrow_batch` opens (docs/program.md, "Batched opens"). The
/// transaction binds first: each item carries its new escrow's key and 72 bytes of arguments.
#[constant]
pub const MAX_OPEN_BATCH: u8 = 8;

/// Height of each tree of a receipt log: 2^18 leaves, and a proof of 18 hashes (576 bytes) that
/// fits a legacy `open_dispute_from_log` transaction beside the leaf's fields (20 would not).
#[constant]
pub const RECEIPT_TREE_DEPTH: u8 = 18;
/// Roots of the current tree a dispute proof may be built against: one is recorded per batch,
/// so a proof built against the newest root stays valid while 63 more batches land.
#[constant]
pub const RECEIPT_ROOT_HISTORY: u8 = 64;
/// Checkpoint roots kept beside the recent ones: a batch's root is also kept as a checkpoint when
/// `RECEIPT_CHECKPOINT_SECS` have passed since the last checkpoint, so a proof built against a
/// checkpoint stays valid for at least 64 minutes however busy the agent is (the 64 recent roots
/// last only 64 batches: under a minute at a few hundred settlements a minute).
#[constant]
pub const RECEIPT_CHECKPOINTS: u8 = 64;
#[constant]
pub const RECEIPT_CHECKPOINT_SECS: u32 = 60;
/// Final roots of filled trees kept: a tree's root may only be dropped once its last leaf is
/// past the dispute window, so one agent settles at most 64 × 2^18 executions per window
/// (≈65 a second sustained over 3 days) through its log; beyond, `settle_batch` is refused
/// and `settle` still works.
#[constant]
pub const RECEIPT_FILLED_TREES: u8 = 64;
