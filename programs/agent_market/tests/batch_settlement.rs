//! `settle_batch` on the success path: escrows of one agent settled together pay each
//! execution's exact 99/1 split summed, in one transfer each, close every escrow to the relayer,
//! and append one leaf per execution to the agent's receipt log instead of a receipt account.
mod common;

use agent_market::{events, fees::split, Pricing, MAX_SETTLE_BATCH};
use common::{batch::*, *};
use localnet::{
    chain::{events, USDC},
    market::{pda, EscrowRef},
};
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

/// A price whose 1% is not whole, so that the fee of a sum differs from the sum of the fees.
const ODD_PRICE_USDC: u64 = 10_099;
const SIGNATURE_FEE_LAMPORTS: u64 = 5_000;
const MAX_TRANSACTION_BYTES: usize = 1_232;

struct Setup {
    t: TestMarket,
    agent: AgentFixture,
    payer: Payer,
}

fn setup() -> Setup {
    let mut t = TestMarket::new();
    let agent = t.agent_with(Pricing::PayPerUse {
        price_usdc: ODD_PRICE_USDC,
    });
    let payer = t.payer(100 * USDC, 100 * USDC);
    t.create_receipt_log(&agent);
    Setup { t, agent, payer }
}

fn escrow_rents(t: &TestMarket, escrows: &[EscrowRef]) -> u64 {
    escrows
        .iter()
        .map(|escrow| t.chain.lamports(&pda::escrow(&escrow.execution_id)))
        .sum()
}

/// Settles `count` escrows in one batch under `signing`, checks every balance to the unit and
/// the log, and returns the lamports the relayer paid in transaction fees.
fn settle_and_check(s: &mut Setup, mirror: &mut LogMirror, count: usize, signing: Signing) -> u64 {
    let escrows = s.t.open_many(&s.agent, &s.payer, count);
    let watched = [
        s.agent.payout_account,
        pda::fee_shard(0),
        pda::escrow_vault(&s.agent.address),
        s.payer.token_account,
    ];
    let [payout, fees, vault, payer] = <[u64; 4]>::try_from(s.t.balances(&watched)).unwrap();
    let relayer_lamports = s.t.chain.lamports(&s.t.relayer().pubkey());
    let rents = escrow_rents(&s.t, &escrows);

    let meta = s.t.settle_batch(&s.agent, &escrows, signing);

    let fee_each = split(ODD_PRICE_USDC).fee_usdc;
    let n = count as u64;
    assert_eq!(
        s.t.balances(&watched),
        vec![
            payout + n * (ODD_PRICE_USDC - fee_each),
            fees + n * fee_each,
            vault - n * ODD_PRICE_USDC,
            payer
        ]
    );
    for escrow in &escrows {
        assert!(
            s.t.chain.account(&pda::escrow(&escrow.execution_id)).is_none(),
            "escrow closed"
        );
    }
    let fees_paid = relayer_lamports + rents - s.t.chain.lamports(&s.t.relayer().pubkey());

    let settled = mirror.add(&meta);
    assert_eq!(settled.leaves.len(), count, "one leaf per execution");
    let log = s.t.chain.receipt_log(&s.agent.address).unwrap();
    assert_eq!(log.leaf_count, mirror.leaves.len() as u64);
    let root = mirror.tree.root();
    assert_eq!(s.t.latest_log_root(&s.agent), root, "rebuilt root matches the account");
    assert_eq!(settled.log_root, root);
    for (leaf, escrow) in settled.leaves.iter().zip(&escrows) {
        assert_eq!(leaf.execution_id, escrow.execution_id);
        assert_eq!(
            (leaf.payer, leaf.payer_token_account),
            (s.payer.wallet.pubkey(), s.payer.token_account)
        );
        assert_eq!(
            (leaf.amount_usdc, split(leaf.amount_usdc).fee_usdc),
            (ODD_PRICE_USDC, fee_each)
        );
        assert_eq!(leaf.result_hash, result_hash(&escrow.execution_id));
        assert_eq!(leaf.request_hash, request_hash(&escrow.execution_id));
        assert_eq!(leaf.api_key_id, [9; 16]);
    }
    // The old path's event is not emitted for a batch.
    fees_paid
}

#[test]
fn batches_of_1_8_and_max_pay_each_executions_split_summed_and_append_their_leaves() {
    for count in [1, 8, usize::from(MAX_SETTLE_BATCH)] {
        let mut s = setup();
        let mut mirror = LogMirror::default();
        let fees_paid = settle_and_check(&mut s, &mut mirror, count, Signing::Batch);
        // One transaction signature and one verified by the precompile, whatever the batch size.
        assert_eq!(fees_paid, 2 * SIGNATURE_FEE_LAMPORTS, "batch of {count}");
        // The next batch appends after the first, and the root still matches.
        settle_and_check(&mut s, &mut mirror, 3, Signing::Batch);
    }
}

#[test]
fn summed_splits_differ_from_the_split_of_the_sum_and_the_batch_pays_the_former() {
    let fee_each = split(ODD_PRICE_USDC).fee_usdc;
    assert_ne!(8 * fee_each, split(8 * ODD_PRICE_USDC).fee_usdc);
    let mut s = setup();
    let before = s.t.balance(&pda::fee_shard(0));
    let escrows = s.t.open_many(&s.agent, &s.payer, 8);
    s.t.settle_batch(&s.agent, &escrows, Signing::Batch);
    assert_eq!(s.t.balance(&pda::fee_shard(0)) - before, 8 * fee_each);
}

#[test]
fn one_signature_per_call_verifies_as_the_fallback() {
    for count in [1, 8] {
        let mut s = setup();
        let mut mirror = LogMirror::default();
        let fees_paid = settle_and_check(&mut s, &mut mirror, count, Signing::PerCall);
        assert_eq!(
            fees_paid,
            (1 + count as u64) * SIGNATURE_FEE_LAMPORTS,
            "batch of {count}"
        );
    }
}

#[test]
fn escrows_opened_at_different_prices_each_pay_their_own_split() {
    let mut s = setup();
    let mut mirror = LogMirror::default();
    let escrows = s.t.open_many(&s.agent, &s.payer, 2);
    // The price changes between opens: each escrow keeps the amount it holds.
    let creator = s.agent.creator.wallet.insecure_clone();
    let cheaper_terms = terms(
        &s.agent.signing,
        Pricing::PayPerUse {
            price_usdc: MIN_PRICE_PER_CALL_USDC,
        },
    );
    ok(s.t.chain.send(
        &[s.t.update_ix(&s.agent, s.agent.payout_account, cheaper_terms)],
        &creator,
        &[],
    ));
    let cheaper = s.t.open_many(&s.agent, &s.payer, 1);
    let all: Vec<EscrowRef> = escrows.into_iter().chain(cheaper).collect();
    let before = s.t.balance(&pda::fee_shard(0));
    let meta = s.t.settle_batch(&s.agent, &all, Signing::Batch);
    mirror.add(&meta);
    let expected = 2 * split(ODD_PRICE_USDC).fee_usdc + split(MIN_PRICE_PER_CALL_USDC).fee_usdc;
    assert_eq!(s.t.balance(&pda::fee_shard(0)) - before, expected);
    assert_eq!(mirror.leaves[2].amount_usdc, MIN_PRICE_PER_CALL_USDC);
}

#[test]
fn anyone_may_create_a_receipt_log_once_and_pays_its_rent() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let stranger = t.chain.funded_keypair(SOL);
    let instruction = t.market.keys.create_receipt_log(stranger.pubkey(), agent.address);
    let meta = ok(t.chain.send(&[instruction.clone()], &stranger, &[]));
    let rent = t.chain.lamports(&pda::receipt_log(&agent.address));
    assert_eq!(
        t.chain.lamports(&stranger.pubkey()),
        SOL - SIGNATURE_FEE_LAMPORTS - rent
    );
    let created = events::<events::ReceiptLogCreated>(&meta);
    assert_eq!(created.len(), 1);
    assert_eq!((created[0].payer, created[0].rent_lamports), (stranger.pubkey(), rent));
    let log = t.chain.receipt_log(&agent.address).unwrap();
    assert_eq!((log.agent, log.leaf_count, log.root_count), (agent.address, 0, 0));

    // A second creation of the same log fails in the system program: the account is in use.
    assert_already_in_use(&t.chain.send(&[instruction], &stranger, &[]));
    assert_eq!(t.chain.lamports(&pda::receipt_log(&agent.address)), rent);
}

fn legacy_size(instructions: &[Instruction], fee_payer: &Keypair) -> usize {
    let transaction = Transaction::new_signed_with_payer(
        instructions,
        Some(&fee_payer.pubkey()),
        &[fee_payer],
        Default::default(),
    );
    bincode::serialize(&transaction).unwrap().len()
}

#[test]
fn rent_signatures_and_transaction_size_per_settled_execution() {
    let mut s = setup();
    let log_rent = s.t.chain.lamports(&pda::receipt_log(&s.agent.address));
    let relayer = s.t.relayer().insecure_clone();
    println!(
        "receipt log: {} bytes, {log_rent} lamports of rent once per agent",
        agent_market::ReceiptLog::SPACE
    );
    println!("| batch | signatures (batch / per call) | legacy tx bytes (batch / per call) | log rent per execution after 1 batch / 10,000 executions | receipts |");
    for count in [1usize, 8, usize::from(MAX_SETTLE_BATCH)] {
        let escrows = s.t.open_many(&s.agent, &s.payer, count);
        let batch =
            s.t.settle_batch_ixs(&s.agent, &escrows, &s.agent.signing, Signing::Batch);
        let per_call =
            s.t.settle_batch_ixs(&s.agent, &escrows, &s.agent.signing, Signing::PerCall);
        let (batch_bytes, per_call_bytes) = (legacy_size(&batch, &relayer), legacy_size(&per_call, &relayer));
        if count <= 8 {
            assert!(
                batch_bytes <= MAX_TRANSACTION_BYTES,
                "a batch of {count} fits a legacy transaction: {batch_bytes}"
            );
        }
        ok(s.t.send_as_relayer(&batch));
        println!(
            "| {count} | 2 / {} | {batch_bytes} / {per_call_bytes} | {} / {} | 0 |",
            1 + count,
            log_rent / count as u64,
            log_rent / 10_000
        );
    }
}
