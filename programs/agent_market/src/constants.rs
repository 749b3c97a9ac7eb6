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
pub const RECEIPT_SEED: &[u8] = b"receipt";
#[constant]
pub const SUBSCRIPTION_SEED: &[u8] = b"subscription";
#[constant]
pub const DISPUTE_SEED: &[u8] = b"dispute";
/// The PDA every payer approves as SPL Token delegate of its USDC account.
#[constant]
pub const DELEGATE_SEED: &[u8] = b"delegate";
#[constant]
pub const FEE_SHARD_SEED: &[u8] = b"fee_shard";

/// The marketplace fee: 1% of every payment, rounded down. No instruction can change it.
#[constant]
pub const FEE_BPS: u64 = 100;
#[constant]
pub const BPS_DENOMINATOR: u64 = 10_000;

/// Fees land in one of these token accounts so that settlements of different executions do
/// not all write the same account; `sweep_fees` moves them to the treasury.
#[constant]
pub const FEE_SHARD_COUNT: u8 = 8;

/// Domain tag of the result digest the creator signs (docs/execute-protocol.md).
#[constant]
pub const RESULT_DIGEST_DOMAIN: &[u8] = b"agentmarket/result/v1";

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
