//! Marketplace executions as the relayer drives a lone result: per execution one
//! `sendTransaction` of open_escrow, one `getMultipleAccounts` of its escrow (whose nonce the
//! creator signs) and one `sendTransaction` of its settlement as a batch of one, each kind in
//! batches, and one `getSignatureStatuses` of a batch's signatures.

use {
    crate::localnet_rpc::{payer, send_params, Connection, Market, PRICE_USDC},
    agent_market::{Escrow, FEE_SHARD_COUNT},
    anchor_lang::{prelude::Pubkey, AccountDeserialize},
    base64::{engine::general_purpose::STANDARD, Engine},
    localnet::market::{pda, MarketKeys},
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
/// The relayer pays every transaction's fees: its SOL is topped up from the faucet every so many
/// rounds, so a run of a million executions does not run dry.
const TOP_UP_EVERY_ROUNDS: usize = 100;
const TOP_UP_LAMPORTS: u64 = 50 * 1_000_000_000;

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
}

impl Executions {
    pub fn setup(connection: &mut Connection) -> Self {
        let market = Market::development(connection);
        let mint = market.keys.usdc_mint;
        let creator = payer(connection, keypair(1), &mint, 1_000_000_000);
        let signing = keypair(2);
        let agent = market.register_agent(connection, &creator, &signing);
        market.create_receipt_log(connection, &agent);
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
        }
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
            for index in 0..BATCH {
                self.sequence += 1;
                let (wallet, token_account) = &self.payers[index % PAYERS];
                let mut execution_id = [0u8; 16];
                execution_id[..8].copy_from_slice(&self.sequence.to_le_bytes());
                let request_hash = [3; 32];
                let open = self.keys.open_escrow(
                    self.agent,
                    wallet.pubkey(),
                    *token_account,
                    execution_id,
                    [5; 16],
                    request_hash,
                    PRICE_USDC,
                );
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
            }
            let mut signatures = connection.batch("sendTransaction", &opens, SEND_BATCH);
            let escrows = connection.batch("getMultipleAccounts", &reads, BATCH);
            let settles: Vec<_> = escrows.iter().map(|read| self.settle_params(read, blockhash)).collect();
            signatures.extend(connection.batch("sendTransaction", &settles, SEND_BATCH));
            assert_succeeded(connection, signatures, "every transaction succeeded");
        }
    }

    /// The settlement of the escrow in a `getMultipleAccounts` answer, signed by the creator over
    /// its digest (which binds the nonce the chain gave it).
    fn settle_params(&self, read: &serde_json::Value, blockhash: solana_hash::Hash) -> serde_json::Value {
        let data = read["value"][0]["data"][0].as_str().expect("every escrow is open");
        let bytes = STANDARD.decode(data).expect("base64");
        let escrow = Escrow::try_deserialize(&mut bytes.as_slice()).expect("an escrow");
        let shard = escrow.execution_id[0] % FEE_SHARD_COUNT;
        let settle = self
            .keys
            .settle_one(&escrow, [4; 32], &self.signing, self.payout_account, shard);
        send_params(&Transaction::new_signed_with_payer(
            &settle,
            Some(&self.relayer.pubkey()),
            &[&self.relayer],
            blockhash,
        ))
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
