//! Marketplace executions as the relayer drives them over JSON-RPC: per execution one
//! `sendTransaction` of open_escrow, one `getMultipleAccounts` of its escrow and one
//! `sendTransaction` of settle, each kind in batches, and one `getSignatureStatuses` of a
//! batch's signatures.

use {
    crate::localnet_rpc::{payer, send_params, Connection, Market, PRICE_USDC},
    agent_market::FEE_SHARD_COUNT,
    anchor_lang::prelude::Pubkey,
    localnet::market::{pda, result_digest, EscrowRef, MarketKeys},
    serde_json::json,
    solana_keypair::Keypair,
    solana_signer::Signer,
    solana_transaction::Transaction,
    std::time::{Duration, Instant},
};

/// Executions per batch: their two transactions make the 100 signatures of one status poll.
pub const BATCH: usize = 50;
/// Transactions per `sendTransaction` batch, under localnet's 50 KB request limit.
const SEND_BATCH: usize = 25;
const PAYERS: usize = 16;
/// The relayer pays the rent of every receipt, which stays until its dispute window has passed
/// and the receipts here are never closed: its SOL is topped up from the faucet every so many
/// rounds, so a run of a million executions does not run dry.
const TOP_UP_EVERY_ROUNDS: usize = 100;
const TOP_UP_LAMPORTS: u64 = 50 * 1_000_000_000;
/// With `close_receipts`, the settled receipts are closed every so many rounds, after the chain's
/// clock is moved past the development market's 3-day dispute window.
const CLOSE_EVERY_ROUNDS: usize = 20;
const PAST_DISPUTE_WINDOW_SECS: u64 = 4 * 24 * 3600;
/// close_receipt instructions per transaction.
const CLOSES_PER_TRANSACTION: usize = 16;

/// The same key in every run, so that runs do the same work: verifying a signature takes
/// variable time, and finding a PDA's bump depends on its seeds.
fn keypair(index: u8) -> Keypair {
    Keypair::new_from_array([index; 32])
}

pub struct Executions {
    keys: MarketKeys,
    relayer: Keypair,
    agent: Pubkey,
    signing: Keypair,
    payout_account: Pubkey,
    payers: Vec<(Keypair, Pubkey)>,
    sequence: u64,
    /// Settled receipts waiting to be closed; `None`: they are left open.
    unclosed: Option<Vec<[u8; 16]>>,
}

impl Executions {
    /// With `close_receipts`, the receipts are closed as the relayer's closer does once their
    /// dispute window has passed, so that a long run keeps the chain state of a marketplace in its
    /// steady state instead of every receipt it ever settled; the chain's clock jumps days ahead
    /// at each closing. Without, they stay open.
    pub fn setup(connection: &mut Connection, close_receipts: bool) -> Self {
        let market = Market::development(connection);
        let mint = market.keys.usdc_mint;
        let creator = payer(connection, keypair(1), &mint, 1_000_000_000);
        let signing = keypair(2);
        let agent = market.register_agent(connection, &creator, &signing);
        let payers = (0..PAYERS as u8)
            .map(|index| payer(connection, keypair(3 + index), &mint, 1_000_000_000_000))
            .collect();
        Executions {
            keys: market.keys,
            relayer: market.relayer,
            agent,
            signing,
            payout_account: creator.1,
            payers,
            sequence: 0,
            unclosed: close_receipts.then(Vec::new),
        }
    }

    fn close_receipts(&mut self, connection: &mut Connection) {
        let Some(unclosed) = self.unclosed.as_mut() else {
            return;
        };
        let ids = std::mem::take(unclosed);
        connection.call(
            "localnet_advanceClock",
            json!([{ "seconds": PAST_DISPUTE_WINDOW_SECS }]),
        );
        let blockhash = connection.blockhash();
        let relayer = &self.relayer;
        let closes: Vec<_> = ids
            .chunks(CLOSES_PER_TRANSACTION)
            .map(|chunk| {
                let instructions: Vec<_> = chunk
                    .iter()
                    .map(|id| self.keys.close_receipt(*id, relayer.pubkey()))
                    .collect();
                send_params(&Transaction::new_signed_with_payer(
                    &instructions,
                    Some(&relayer.pubkey()),
                    &[relayer],
                    blockhash,
                ))
            })
            .collect();
        let signatures = connection.batch("sendTransaction", &closes, SEND_BATCH);
        assert_succeeded(connection, signatures, "every receipt closed");
    }

    /// Runs `count` executions in batches of `BATCH`, at most `rate` a second.
    pub fn execute(&mut self, connection: &mut Connection, count: usize, rate: Option<f64>) {
        let started = Instant::now();
        for round in 0..count.div_ceil(BATCH) {
            if let Some(rate) = rate {
                let due = started + Duration::from_secs_f64((round * BATCH) as f64 / rate);
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
            }
            if round % TOP_UP_EVERY_ROUNDS == 0 {
                connection.call(
                    "requestAirdrop",
                    json!([self.relayer.pubkey().to_string(), TOP_UP_LAMPORTS]),
                );
            }
            let blockhash = connection.blockhash();
            let mut opens = Vec::with_capacity(BATCH);
            let mut reads = Vec::with_capacity(BATCH);
            let mut settles = Vec::with_capacity(BATCH);
            for index in 0..BATCH {
                self.sequence += 1;
                let (wallet, token_account) = &self.payers[index % PAYERS];
                let mut execution_id = [0u8; 16];
                execution_id[..8].copy_from_slice(&self.sequence.to_le_bytes());
                let request_hash = [3; 32];
                let result_hash = [4; 32];
                let open = self.keys.open_escrow(
                    self.agent,
                    wallet.pubkey(),
                    *token_account,
                    execution_id,
                    [5; 16],
                    request_hash,
                    PRICE_USDC,
                );
                let escrow = EscrowRef {
                    execution_id,
                    agent: self.agent,
                    payer: wallet.pubkey(),
                    payer_token_account: *token_account,
                    rent_payer: self.relayer.pubkey(),
                };
                let digest = result_digest(&execution_id, &self.agent, &request_hash, &result_hash);
                let signature: [u8; 64] = self.signing.sign_message(&digest).into();
                let settle = [
                    MarketKeys::verify_result_signature(&self.signing.pubkey().to_bytes(), &signature, &digest),
                    self.keys.settle(
                        &escrow,
                        self.payout_account,
                        result_hash,
                        execution_id[0] % FEE_SHARD_COUNT,
                    ),
                ];
                if let Some(unclosed) = self.unclosed.as_mut() {
                    unclosed.push(execution_id);
                }
                let relayer = &self.relayer;
                opens.push(send_params(&Transaction::new_signed_with_payer(
                    &[open],
                    Some(&relayer.pubkey()),
                    &[relayer],
                    blockhash,
                )));
                reads.push(json!([
                    [pda::escrow(&execution_id).to_string()],
                    { "commitment": "processed", "encoding": "base64" }
                ]));
                settles.push(send_params(&Transaction::new_signed_with_payer(
                    &settle,
                    Some(&relayer.pubkey()),
                    &[relayer],
                    blockhash,
                )));
            }
            let mut signatures = connection.batch("sendTransaction", &opens, SEND_BATCH);
            let escrows = connection.batch("getMultipleAccounts", &reads, BATCH);
            assert!(
                escrows.iter().all(|escrow| !escrow["value"][0].is_null()),
                "every escrow is open"
            );
            signatures.extend(connection.batch("sendTransaction", &settles, SEND_BATCH));
            assert_succeeded(connection, signatures, "every transaction succeeded");
            if round % CLOSE_EVERY_ROUNDS == CLOSE_EVERY_ROUNDS - 1 {
                self.close_receipts(connection);
            }
        }
    }
}

/// One status poll of `signatures`, as the relayer polls a batch: none may have failed.
fn assert_succeeded(connection: &mut Connection, signatures: Vec<serde_json::Value>, what: &str) {
    let statuses = connection.call(
        "getSignatureStatuses",
        json!([signatures, { "searchTransactionHistory": true }]),
    );
    assert!(
        statuses["value"]
            .as_array()
            .is_some_and(|statuses| statuses.iter().all(|status| status["err"].is_null())),
        "{what}"
    );
}
