//! `open_escrow_batch`: several escrows of one agent opened in one instruction, each exactly as
//! `open_escrow` would open it, all or none.
mod common;

use agent_market::{
    error::AgentMarketError, events::EscrowOpened, Escrow, OpenEscrowItem, Pricing, Subscription, MAX_OPEN_BATCH,
};
use common::{
    batch::{assert_already_in_use, Signing},
    scene::replace_account,
    *,
};
use litesvm::types::TransactionResult;
use localnet::{
    chain::{events, USDC},
    market::{pda, EscrowRef},
    open_batch::OpenBatchEntry,
};
use solana_instruction::Instruction;
use solana_signer::Signer;

const API_KEY_ID: [u8; 16] = [9; 16];

fn entry(payer: &Payer, execution_id: [u8; 16], max_amount_usdc: u64) -> OpenBatchEntry {
    OpenBatchEntry {
        payer: payer.wallet.pubkey(),
        payer_token_account: payer.token_account,
        item: OpenEscrowItem {
            execution_id,
            api_key_id: API_KEY_ID,
            request_hash: request_hash(&execution_id),
            max_amount_usdc,
        },
    }
}

fn open_batch_ix(t: &TestMarket, agent: &AgentFixture, entries: &[OpenBatchEntry]) -> Instruction {
    t.market.keys.open_escrow_batch(agent.address, entries)
}

/// One entry per payer, each a fresh execution with no maximum.
fn entries_for(payers: &[&Payer]) -> Vec<OpenBatchEntry> {
    payers
        .iter()
        .map(|payer| entry(payer, random_id(), NO_MAXIMUM))
        .collect()
}

fn escrow_at(t: &TestMarket, execution_id: &[u8; 16]) -> Escrow {
    t.chain.anchor_account(&pda::escrow(execution_id)).expect("escrow")
}

/// A batched escrow read field by field against the one `open_escrow` created in the same
/// transaction: what differs is only what the item and its payer say.
fn assert_same_escrow(t: &TestMarket, batch_entry: &OpenBatchEntry, single: &[u8; 16]) {
    let batched = &batch_entry.item.execution_id;
    let (a, b) = (escrow_at(t, batched), escrow_at(t, single));
    assert_eq!(a.execution_id, *batched);
    assert_eq!(a.agent, b.agent);
    assert_eq!(a.payer, batch_entry.payer);
    assert_eq!(a.payer_token_account, batch_entry.payer_token_account);
    assert_eq!(a.api_key_id, b.api_key_id);
    assert_eq!(a.amount_usdc, b.amount_usdc);
    assert_eq!(a.request_hash, request_hash(batched));
    assert_eq!(a.opened_at, b.opened_at);
    assert_eq!(a.deadline, b.deadline);
    assert_eq!(a.rent_payer, b.rent_payer);
    assert_eq!(a.used_included_call, b.used_included_call);
    assert_eq!(a.bump, pda_bump(batched));
    let (account_a, account_b) = (
        t.chain.account(&pda::escrow(batched)).unwrap(),
        t.chain.account(&pda::escrow(single)).unwrap(),
    );
    assert_eq!(account_a.lamports, account_b.lamports, "rent");
    assert_eq!(account_a.owner, account_b.owner);
    assert_eq!(account_a.data.len(), account_b.data.len());
}

fn pda_bump(execution_id: &[u8; 16]) -> u8 {
    anchor_lang::prelude::Pubkey::find_program_address(&[agent_market::ESCROW_SEED, execution_id], &agent_market::ID).1
}

#[test]
fn batches_open_escrows_as_open_escrow_would_then_settle_in_one_batch() {
    for size in [1usize, 8, usize::from(MAX_OPEN_BATCH)] {
        let mut t = TestMarket::new();
        let agent = t.agent();
        let payers: Vec<Payer> = (0..=size).map(|_| t.payer(10 * USDC, 10 * USDC)).collect();
        let (single_payer, batch_payers) = payers.split_last().unwrap();
        let entries = entries_for(&batch_payers.iter().collect::<Vec<_>>());
        let single_id = random_id();
        let relayer_lamports = t.chain.lamports(&t.relayer().pubkey());

        let open_one = t.open_escrow_ix(&agent, single_payer, single_id);
        let open_batch = open_batch_ix(&t, &agent, &entries);
        let meta = ok(t.send_as_relayer(&[open_one, open_batch]));

        let opened = events::<EscrowOpened>(&meta);
        assert_eq!(opened.len(), size + 1, "one EscrowOpened per execution");
        for (batch_entry, event) in entries.iter().zip(&opened[1..]) {
            assert_eq!(event.execution_id, batch_entry.item.execution_id);
            assert_eq!(event.payer, batch_entry.payer);
            assert_eq!(event.amount_usdc, PRICE_USDC);
            assert_same_escrow(&t, batch_entry, &single_id);
        }
        for payer in &payers {
            assert_eq!(t.balance(&payer.token_account), 10 * USDC - PRICE_USDC);
        }
        let vault = pda::escrow_vault(&agent.address);
        assert_eq!(t.balance(&vault), PRICE_USDC * (size as u64 + 1));
        let rent = t.chain.lamports(&pda::escrow(&single_id));
        assert_eq!(
            t.chain.lamports(&t.relayer().pubkey()),
            relayer_lamports - rent * (size as u64 + 1) - 5_000,
            "the relayer pays each escrow's rent and one signature"
        );

        t.create_receipt_log(&agent);
        let refs: Vec<EscrowRef> = entries
            .iter()
            .zip(batch_payers)
            .map(|(batch_entry, payer)| t.escrow_ref(&agent, payer, batch_entry.item.execution_id))
            .collect();
        t.settle_batch(&agent, &refs, Signing::Batch);
        assert_eq!(t.balance(&vault), PRICE_USDC);
        assert!(refs
            .iter()
            .all(|escrow| t.chain.account(&pda::escrow(&escrow.execution_id)).is_none()));
    }
}

#[test]
fn items_sharing_a_token_account_each_pull_their_amount_against_the_running_balance() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(2 * PRICE_USDC, 10 * USDC);
    let entries = vec![entry(&payer, random_id(), NO_MAXIMUM), entry(&payer, random_id(), NO_MAXIMUM)];
    ok(t.send_as_relayer(&[open_batch_ix(&t, &agent, &entries)]));
    assert_eq!(t.balance(&payer.token_account), 0);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 2 * PRICE_USDC);

    // A third call would need more than the balance left after the first two of its batch.
    t.chain.mint_to(
        &t.market.mint_authority.insecure_clone(),
        &t.usdc_mint(),
        &payer.token_account,
        2 * PRICE_USDC + PRICE_USDC / 2,
    );
    let entries: Vec<_> = (0..3).map(|_| entry(&payer, random_id(), NO_MAXIMUM)).collect();
    let result = refused_and_unmoved(&mut t, &agent, &[&payer], &entries);
    assert_program_error(&result, AgentMarketError::InsufficientBalance);

    let payer = t.payer(10 * USDC, PRICE_USDC + PRICE_USDC / 2);
    let entries = vec![entry(&payer, random_id(), NO_MAXIMUM), entry(&payer, random_id(), NO_MAXIMUM)];
    let result = refused_and_unmoved(&mut t, &agent, &[&payer], &entries);
    assert_program_error(&result, AgentMarketError::InsufficientAllowance);
}

/// Sends the batch, asserts it failed with no token balance moved and no escrow created, and
/// returns its result.
fn refused_and_unmoved(
    t: &mut TestMarket,
    agent: &AgentFixture,
    payers: &[&Payer],
    entries: &[OpenBatchEntry],
) -> TransactionResult {
    let instruction = open_batch_ix(t, agent, entries);
    refused_instruction_and_unmoved(t, agent, payers, entries, instruction)
}

fn refused_instruction_and_unmoved(
    t: &mut TestMarket,
    agent: &AgentFixture,
    payers: &[&Payer],
    entries: &[OpenBatchEntry],
    instruction: Instruction,
) -> TransactionResult {
    let mut watched: Vec<_> = payers.iter().map(|payer| payer.token_account).collect();
    watched.push(pda::escrow_vault(&agent.address));
    let before = t.balances(&watched);
    let result = t.send_as_relayer(&[instruction]);
    assert!(result.is_err(), "batch should be refused");
    assert_eq!(t.balances(&watched), before, "balances moved");
    for batch_entry in entries {
        assert!(t.chain.account(&pda::escrow(&batch_entry.item.execution_id)).is_none());
    }
    result
}

#[test]
fn malformed_batches_are_refused_each_with_its_error_and_nothing_moves() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(100 * USDC, 100 * USDC);
    let other = t.payer(10 * USDC, 10 * USDC);

    let result = refused_and_unmoved(&mut t, &agent, &[&payer], &[]);
    assert_program_error(&result, AgentMarketError::EmptyOpenBatch);

    let oversized: Vec<_> = (0..=MAX_OPEN_BATCH).map(|_| entry(&payer, random_id(), NO_MAXIMUM)).collect();
    let result = refused_and_unmoved(&mut t, &agent, &[&payer], &oversized);
    assert_program_error(&result, AgentMarketError::OpenBatchTooLarge);

    let execution_id = random_id();
    let duplicated = vec![entry(&payer, execution_id, NO_MAXIMUM), entry(&other, execution_id, NO_MAXIMUM)];
    let result = refused_and_unmoved(&mut t, &agent, &[&payer, &other], &duplicated);
    assert_program_error(&result, AgentMarketError::DuplicateExecutionId);

    let entries = entries_for(&[&payer, &other]);
    let mut missing_account = open_batch_ix(&t, &agent, &entries);
    missing_account.accounts.pop();
    let result = refused_instruction_and_unmoved(&mut t, &agent, &[&payer, &other], &entries, missing_account);
    assert_program_error(&result, AgentMarketError::OpenBatchAccountCountMismatch);

    // The second item's escrow at another execution id's address.
    let entries = entries_for(&[&payer, &other]);
    let mut misplaced = open_batch_ix(&t, &agent, &entries);
    let elsewhere = pda::escrow(&random_id());
    replace_account(&mut misplaced, pda::escrow(&entries[1].item.execution_id), elsewhere);
    let result = refused_instruction_and_unmoved(&mut t, &agent, &[&payer, &other], &entries, misplaced);
    assert_program_error(&result, AgentMarketError::EscrowAddressMismatch);

    // The second payer's subscription left out: another payer's address in its place.
    let entries = entries_for(&[&payer, &other]);
    let mut wrong_subscription = open_batch_ix(&t, &agent, &entries);
    let other_subscription = pda::subscription(&agent.address, &other.wallet.pubkey());
    let last = wrong_subscription.accounts.len() - 1;
    wrong_subscription.accounts[last].pubkey = pda::subscription(&agent.address, &payer.wallet.pubkey());
    assert_ne!(wrong_subscription.accounts.last().unwrap().pubkey, other_subscription);
    let result = refused_instruction_and_unmoved(&mut t, &agent, &[&payer, &other], &entries, wrong_subscription);
    assert_program_error(&result, AgentMarketError::SubscriptionAddressMismatch);

    // An execution id already opened: the system program refuses the second creation.
    let (opened, escrow) = t.open(&agent, &payer);
    ok(opened);
    let entries = vec![entry(&other, random_id(), NO_MAXIMUM), entry(&other, escrow.execution_id, NO_MAXIMUM)];
    let result = t.send_as_relayer(&[open_batch_ix(&t, &agent, &entries)]);
    assert_already_in_use(&result);
    assert_eq!(t.balance(&other.token_account), 10 * USDC);
    assert!(t.chain.account(&pda::escrow(&entries[0].item.execution_id)).is_none());
}

#[test]
fn a_price_above_an_items_maximum_refuses_the_whole_batch() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let other = t.payer(10 * USDC, 10 * USDC);
    let entries = vec![
        entry(&payer, random_id(), PRICE_USDC),
        entry(&other, random_id(), PRICE_USDC - 1),
    ];
    let result = refused_and_unmoved(&mut t, &agent, &[&payer, &other], &entries);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
}

#[test]
fn an_escrow_address_someone_funded_ahead_still_opens() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let entries = entries_for(&[&payer]);
    let address = pda::escrow(&entries[0].item.execution_id);
    let funder = t.chain.funded_keypair(SOL);
    let transfer = solana_system_interface::instruction::transfer(&funder.pubkey(), &address, SOL / 1_000);
    ok(t.chain.send(&[transfer], &funder, &[]));
    ok(t.send_as_relayer(&[open_batch_ix(&t, &agent, &entries)]));
    let escrow = escrow_at(&t, &entries[0].item.execution_id);
    assert_eq!(escrow.amount_usdc, PRICE_USDC);
    let single = random_id();
    ok(t.send_as_relayer(&[t.open_escrow_ix(&agent, &payer, single)]));
    assert_eq!(t.chain.lamports(&address), t.chain.lamports(&pda::escrow(&single)), "topped up to rent");
}

const PERIOD_PRICE_USDC: u64 = USDC;
const OVERAGE_USDC: u64 = 300_000;

fn subscribed_payer(t: &mut TestMarket, agent: &AgentFixture) -> Payer {
    let payer = t.payer(10 * USDC, 10 * USDC);
    let subscribe = t.market.keys.subscribe(
        agent.address,
        payer.wallet.pubkey(),
        payer.token_account,
        agent.payout_account,
        0,
        NO_MAXIMUM,
    );
    ok(t.send_as_relayer(&[subscribe]));
    payer
}

#[test]
fn a_call_a_subscription_covers_opens_at_zero_in_a_batch() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(Pricing::Subscription {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: 3600,
    });
    let payer = subscribed_payer(&mut t, &agent);
    let balance_usdc = t.balance(&payer.token_account);
    let entries = vec![entry(&payer, random_id(), 0), entry(&payer, random_id(), 0)];
    ok(t.send_as_relayer(&[open_batch_ix(&t, &agent, &entries)]));
    assert_eq!(t.balance(&payer.token_account), balance_usdc);
    for batch_entry in &entries {
        let escrow = escrow_at(&t, &batch_entry.item.execution_id);
        assert_eq!((escrow.amount_usdc, escrow.used_included_call), (0, false));
    }
}

#[test]
fn two_items_on_a_hybrid_subscription_with_one_included_call_left_take_it_once() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(Pricing::Hybrid {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: 3600,
        included_calls: 1,
        overage_price_usdc: OVERAGE_USDC,
    });
    let payer = subscribed_payer(&mut t, &agent);
    let subscription_address = pda::subscription(&agent.address, &payer.wallet.pubkey());
    let balance_usdc = t.balance(&payer.token_account);

    // Both quoted as included: the second finds the call taken and is refused, with the first.
    let quoted_included = vec![entry(&payer, random_id(), 0), entry(&payer, random_id(), 0)];
    let result = refused_and_unmoved(&mut t, &agent, &[&payer], &quoted_included);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
    let subscription: Subscription = t.chain.anchor_account(&subscription_address).unwrap();
    assert_eq!(subscription.included_calls_remaining, 1);

    let entries = vec![entry(&payer, random_id(), 0), entry(&payer, random_id(), OVERAGE_USDC)];
    ok(t.send_as_relayer(&[open_batch_ix(&t, &agent, &entries)]));
    let included = escrow_at(&t, &entries[0].item.execution_id);
    let overage = escrow_at(&t, &entries[1].item.execution_id);
    assert_eq!((included.amount_usdc, included.used_included_call), (0, true));
    assert_eq!((overage.amount_usdc, overage.used_included_call), (OVERAGE_USDC, false));
    assert_eq!(t.balance(&payer.token_account), balance_usdc - OVERAGE_USDC);
    let subscription: Subscription = t.chain.anchor_account(&subscription_address).unwrap();
    assert_eq!(subscription.included_calls_remaining, 0);
}

const MAX_TRANSACTION_BYTES: usize = 1_232;

fn legacy_size(instructions: &[Instruction], fee_payer: &solana_keypair::Keypair) -> usize {
    let transaction = solana_transaction::Transaction::new_signed_with_payer(
        instructions,
        Some(&fee_payer.pubkey()),
        &[fee_payer],
        Default::default(),
    );
    bincode::serialize(&transaction).unwrap().len()
}

/// The figures of docs/program.md, "Batched opens": a legacy transaction's size per batch size,
/// one payer per item (the worst case: no account shared between items).
#[test]
fn legacy_transaction_size_per_batch_size() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let relayer = t.relayer().insecure_clone();
    let payers: Vec<Payer> = (0..MAX_OPEN_BATCH).map(|_| t.payer(USDC, USDC)).collect();
    for count in 1..=usize::from(MAX_OPEN_BATCH) {
        let entries = entries_for(&payers[..count].iter().collect::<Vec<_>>());
        let bytes = legacy_size(&[open_batch_ix(&t, &agent, &entries)], &relayer);
        println!("open_escrow_batch of {count}: legacy transaction {bytes} bytes");
        if count <= 4 {
            assert!(bytes <= MAX_TRANSACTION_BYTES, "{count} items fit a legacy transaction: {bytes}");
        }
    }
}
