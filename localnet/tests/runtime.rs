//! The native chain behaves like a cluster where the program's guarantees depend on it.

use agent_market::{events::MarketUpdated, MarketParams};
use litesvm::types::TransactionResult;
use localnet::{
    chain::{events, Chain, MarketKeypairs, MarketSetup, USDC},
    market::pda,
};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;

fn params() -> MarketParams {
    MarketParams {
        relayer: Default::default(),
        arbiter: Default::default(),
        min_collateral_usdc: 100 * USDC,
        min_price_per_call_usdc: 10_000,
        escrow_grace_secs: 60,
        dispute_window_secs: 86_400,
        collateral_cooldown_secs: 7 * 86_400,
        escrows_paused: false,
    }
}

fn market() -> (Chain, MarketSetup) {
    let mut chain = Chain::new();
    let market = MarketSetup::bootstrap(&mut chain, MarketKeypairs::random(), params()).expect("bootstrap");
    (chain, market)
}

fn update(chain: &mut Chain, market: &MarketSetup, signer: &Keypair) -> TransactionResult {
    let params = MarketParams {
        relayer: market.relayer.pubkey(),
        arbiter: market.arbiter.pubkey(),
        ..params()
    };
    chain.send(
        &[market.keys.update_market(params, market.authority.pubkey())],
        signer,
        &[],
    )
}

/// A correctly signed `update_market` by the authority, against `blockhash`.
fn signed_update(market: &MarketSetup, blockhash: solana_hash::Hash) -> Transaction {
    let params = MarketParams {
        relayer: market.relayer.pubkey(),
        arbiter: market.arbiter.pubkey(),
        ..params()
    };
    let authority = &market.authority;
    Transaction::new_signed_with_payer(
        &[market.keys.update_market(params, authority.pubkey())],
        Some(&authority.pubkey()),
        &[authority],
        blockhash,
    )
}

#[test]
fn program_logs_and_events_reach_the_transaction() {
    let (mut chain, market) = market();
    let authority = market.authority.insecure_clone();
    let meta = update(&mut chain, &market, &authority).expect("update_market");
    let program = agent_market::ID.to_string();
    assert_eq!(meta.logs[0], format!("Program {program} invoke [1]"));
    assert!(
        meta.logs
            .contains(&"Program log: Instruction: UpdateMarket".to_string()),
        "{:#?}",
        meta.logs
    );
    // emit_cpi! invokes the program itself, one level deeper.
    assert!(
        meta.logs.contains(&format!("Program {program} invoke [2]")),
        "{:#?}",
        meta.logs
    );
    assert_eq!(meta.logs.last(), Some(&format!("Program {program} success")));
    let updated = events::<MarketUpdated>(&meta);
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0].market, pda::market());
}

#[test]
fn program_errors_are_logged_as_anchor_reports_them() {
    let (mut chain, market) = market();
    let outsider = chain.funded_keypair(1_000_000_000);
    let mut instruction = market.keys.update_market(
        MarketParams {
            relayer: market.relayer.pubkey(),
            arbiter: market.arbiter.pubkey(),
            ..params()
        },
        outsider.pubkey(),
    );
    instruction.accounts[0].pubkey = outsider.pubkey();
    let failed = chain
        .send(&[instruction], &outsider, &[])
        .expect_err("not the authority");
    assert!(
        failed.meta.logs.iter().any(|line| line
            .starts_with("Program log: AnchorError caused by account: market. Error Code: NotMarketAuthority.")),
        "{:#?}",
        failed.meta.logs
    );
}

#[test]
fn a_transaction_with_a_wrong_signature_is_rejected() {
    let (mut chain, market) = market();
    let mut transaction = signed_update(&market, chain.svm.latest_blockhash());
    transaction.signatures[0] = Keypair::new().sign_message(&transaction.message_data());
    let failed = chain.svm.send_transaction(transaction).expect_err("forged signature");
    assert_eq!(failed.err, TransactionError::SignatureFailure);
}

#[test]
fn a_transaction_with_an_unknown_blockhash_is_rejected() {
    let (mut chain, market) = market();
    let transaction = signed_update(&market, solana_hash::Hash::new_unique());
    let failed = chain.svm.send_transaction(transaction).expect_err("unknown blockhash");
    assert_eq!(failed.err, TransactionError::BlockhashNotFound);
}

#[test]
fn each_signature_pays_the_fee() {
    let (mut chain, market) = market();
    let authority = market.authority.insecure_clone();
    let before = chain.lamports(&authority.pubkey());
    update(&mut chain, &market, &authority).expect("update_market");
    assert_eq!(chain.lamports(&authority.pubkey()), before - 5_000);
}
