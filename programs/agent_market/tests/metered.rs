//! Metered pricing: an escrow holds the most a call may cost, `min(caller's maximum, price per
//! unit × max units per call)` in whole units; `settle_batch` charges the units the creator
//! signed, split 99/1 exactly, and returns the rest to the payer's token account in the same
//! instruction. Units above the call's maximum are refused and leave the escrow to be refunded.
mod common;

use agent_market::{error::AgentMarketError, events, fees::split, Escrow, Pricing, Subscription};
use anchor_lang::prelude::Pubkey;
use common::{batch::*, *};
use localnet::{
    chain::{events, USDC},
    market::{batch_digest, pda, EscrowRef, MarketKeys},
};
use solana_instruction::Instruction;
use solana_signer::Signer;

/// 0.001023 USDC a unit: a price whose 1% is not whole at most unit counts.
const PRICE_PER_UNIT_USDC: u64 = 1_023;
const MAX_UNITS: u64 = 500;

fn metered() -> Pricing {
    Pricing::Metered {
        price_per_unit_usdc: PRICE_PER_UNIT_USDC,
        max_units_per_call: MAX_UNITS,
    }
}

/// The payer's handle again: the tests keep one while the setup lends out the market.
fn copy(payer: &Payer) -> Payer {
    Payer {
        wallet: payer.wallet.insecure_clone(),
        token_account: payer.token_account,
    }
}

struct Setup {
    t: TestMarket,
    agent: AgentFixture,
    payers: Vec<Payer>,
}

fn setup() -> Setup {
    let mut t = TestMarket::new();
    let agent = t.agent_with(metered());
    let payers = (0..3).map(|_| t.payer(100 * USDC, 100 * USDC)).collect();
    t.create_receipt_log(&agent);
    Setup { t, agent, payers }
}

/// Opens one escrow of `payer` that accepts paying at most `max_amount_usdc`.
fn open_at_most(t: &mut TestMarket, agent: &AgentFixture, payer: &Payer, max_amount_usdc: u64) -> EscrowRef {
    let execution_id = random_id();
    let instruction = t.open_escrow_ix_at_most(agent, payer, execution_id, max_amount_usdc);
    ok(t.send_as_relayer(&[instruction]));
    let escrow = t.escrow_ref(agent, payer, execution_id);
    t.remember(&escrow);
    escrow
}

/// The batch signature over `escrows` each reporting its `units`, then `settle_batch` with
/// `returns` as the return accounts.
fn settle_ixs(t: &TestMarket, agent: &AgentFixture, escrows: &[EscrowRef], units: &[u64], returns: &[Pubkey]) -> Vec<Instruction> {
    let digests: Vec<[u8; 32]> = escrows
        .iter()
        .zip(units)
        .map(|(escrow, units)| t.digest_of(escrow, *units))
        .collect();
    let message = batch_digest(&agent.address, &digests);
    let signature: [u8; 64] = agent.signing.sign_message(&message).into();
    let execution_ids: Vec<[u8; 16]> = escrows.iter().map(|escrow| escrow.execution_id).collect();
    vec![
        MarketKeys::verify_signatures(&agent.signing.pubkey().to_bytes(), &[signature], &[message]),
        t.market.keys.settle_batch_returning(
            agent.address,
            agent.payout_account,
            &execution_ids,
            execution_ids.iter().map(result_hash).collect(),
            units.to_vec(),
            0,
            returns,
        ),
    ]
}

/// The relayer buys one period of `agent`'s subscription for `payer`.
fn watched(s: &Setup) -> Vec<Pubkey> {
    let mut accounts = vec![
        s.agent.payout_account,
        pda::fee_shard(0),
        pda::escrow_vault(&s.agent.address),
    ];
    accounts.extend(s.payers.iter().map(|payer| payer.token_account));
    accounts
}

#[test]
fn an_escrow_holds_the_whole_units_the_smaller_of_the_two_maximums_buys() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    let by_agent = open_at_most(&mut s.t, &s.agent, &payer, NO_MAXIMUM);
    let escrow: Escrow = s.t.escrow_state(&by_agent);
    assert_eq!(
        (escrow.amount_usdc, escrow.price_per_unit_usdc, escrow.max_units),
        (PRICE_PER_UNIT_USDC * MAX_UNITS, PRICE_PER_UNIT_USDC, MAX_UNITS)
    );
    // The caller's maximum binds, rounded down to whole units: 7.9 units' worth holds 7.
    let by_caller = open_at_most(&mut s.t, &s.agent, &payer, PRICE_PER_UNIT_USDC * 8 - 1);
    let escrow = s.t.escrow_state(&by_caller);
    assert_eq!((escrow.amount_usdc, escrow.max_units), (PRICE_PER_UNIT_USDC * 7, 7));
    assert_eq!(
        s.t.balance(&payer.token_account),
        100 * USDC - PRICE_PER_UNIT_USDC * (MAX_UNITS + 7)
    );
}

#[test]
fn a_maximum_below_one_unit_opens_no_escrow() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    let before = s.t.balances(&watched(&s));
    let execution_id = random_id();
    let instruction = s.t.open_escrow_ix_at_most(&s.agent, &payer, execution_id, PRICE_PER_UNIT_USDC - 1);
    assert_program_error(&s.t.send_as_relayer(&[instruction]), AgentMarketError::PriceAboveMaximum);
    assert!(s.t.chain.account(&pda::escrow(&execution_id)).is_none());
    assert_eq!(s.t.balances(&watched(&s)), before);
}

#[test]
fn a_call_is_charged_its_units_split_exactly_and_the_rest_goes_back_in_the_same_instruction() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    let escrow = open_at_most(&mut s.t, &s.agent, &payer, NO_MAXIMUM);
    let before = s.t.balances(&watched(&s));
    let units = 137;
    let charged = units * PRICE_PER_UNIT_USDC;
    let held = MAX_UNITS * PRICE_PER_UNIT_USDC;
    let instructions = settle_ixs(&s.t, &s.agent, &[escrow.clone()], &[units], &[payer.token_account]);
    let meta = ok(s.t.send_as_relayer(&instructions));
    let after = s.t.balances(&watched(&s));
    let expected = split(charged);
    assert_eq!(after[0] - before[0], expected.creator_share_usdc);
    assert_eq!(after[1] - before[1], expected.fee_usdc);
    assert_eq!(before[2] - after[2], held, "the vault keeps nothing of the escrow");
    assert_eq!(after[3] - before[3], held - charged, "the rest is back with the payer");
    assert!(s.t.chain.account(&pda::escrow(&escrow.execution_id)).is_none());

    let event = &events::<events::EscrowsSettledToLog>(&meta)[0];
    let leaf = &event.leaves[0];
    assert_eq!(
        (leaf.amount_usdc, leaf.units, leaf.charged_usdc, leaf.returned_usdc),
        (held, units, charged, held - charged)
    );
}

#[test]
fn zero_units_charge_nothing_and_return_everything() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    let escrow = open_at_most(&mut s.t, &s.agent, &payer, NO_MAXIMUM);
    let before = s.t.balances(&watched(&s));
    let instructions = settle_ixs(&s.t, &s.agent, &[escrow], &[0], &[payer.token_account]);
    let meta = ok(s.t.send_as_relayer(&instructions));
    let after = s.t.balances(&watched(&s));
    assert_eq!((after[0], after[1]), (before[0], before[1]));
    assert_eq!(after[3] - before[3], MAX_UNITS * PRICE_PER_UNIT_USDC);
    let leaf = &events::<events::EscrowsSettledToLog>(&meta)[0].leaves[0];
    assert_eq!((leaf.charged_usdc, leaf.returned_usdc), (0, MAX_UNITS * PRICE_PER_UNIT_USDC));
}

#[test]
fn units_above_the_calls_maximum_are_refused_and_the_escrow_is_refunded_whole() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    // The caller's maximum allows 10 units, fewer than the agent's 500.
    let escrow = open_at_most(&mut s.t, &s.agent, &payer, 10 * PRICE_PER_UNIT_USDC);
    let before = s.t.balances(&watched(&s));
    for units in [11, MAX_UNITS, u64::MAX] {
        let instructions = settle_ixs(&s.t, &s.agent, &[escrow.clone()], &[units], &[]);
        assert_program_error(&s.t.send_as_relayer(&instructions), AgentMarketError::UnitsAboveMaximum);
    }
    assert_eq!(s.t.balances(&watched(&s)), before);
    ok(s.t.refund(&escrow, false));
    assert_eq!(
        s.t.balance(&payer.token_account) - before[3],
        10 * PRICE_PER_UNIT_USDC
    );
}

#[test]
fn the_return_accounts_must_be_the_payers_of_the_escrows_with_something_to_return_in_order() {
    let mut s = setup();
    let (first, second) = (copy(&s.payers[0]), copy(&s.payers[1]));
    let escrows = [
        open_at_most(&mut s.t, &s.agent, &first, NO_MAXIMUM),
        open_at_most(&mut s.t, &s.agent, &second, NO_MAXIMUM),
    ];
    let units = [3, 4];
    let before = s.t.balances(&watched(&s));
    for (returns, why) in [
        (vec![], "none"),
        (vec![first.token_account], "one short"),
        (vec![second.token_account, first.token_account], "out of order"),
        (vec![first.token_account, first.token_account], "another payer's"),
        (
            vec![first.token_account, second.token_account, first.token_account],
            "one too many",
        ),
    ] {
        let instructions = settle_ixs(&s.t, &s.agent, &escrows, &units, &returns);
        let result = s.t.send_as_relayer(&instructions);
        assert!(result.is_err(), "{why}");
        assert_program_error(&result, AgentMarketError::ReturnAccountMismatch);
    }
    assert_eq!(s.t.balances(&watched(&s)), before);
    // A call that used every unit it held returns nothing and needs no account.
    let full = open_at_most(&mut s.t, &s.agent, &first, 2 * PRICE_PER_UNIT_USDC);
    let instructions = settle_ixs(&s.t, &s.agent, &[full], &[2], &[first.token_account]);
    assert_program_error(&s.t.send_as_relayer(&instructions), AgentMarketError::ReturnAccountMismatch);
}

#[test]
fn a_batch_of_mixed_units_settles_together_and_every_payer_gets_its_exact_rest() {
    let mut s = setup();
    let payers: Vec<Payer> = s.payers.iter().map(copy).collect();
    // Payer 0 twice (one call using every unit its maximum held), payers 1 and 2 once each.
    let plans: [(usize, u64, u64); 4] = [
        (0, NO_MAXIMUM, 0),
        (1, NO_MAXIMUM, 499),
        (0, 20 * PRICE_PER_UNIT_USDC, 20),
        (2, NO_MAXIMUM, 1),
    ];
    let escrows: Vec<EscrowRef> = plans
        .iter()
        .map(|(payer, max_amount_usdc, _)| open_at_most(&mut s.t, &s.agent, &payers[*payer], *max_amount_usdc))
        .collect();
    let units: Vec<u64> = plans.iter().map(|(_, _, units)| *units).collect();
    let held: Vec<u64> = escrows.iter().map(|escrow| s.t.escrow_state(escrow).amount_usdc).collect();
    let charged: Vec<u64> = units.iter().map(|units| units * PRICE_PER_UNIT_USDC).collect();
    let returns: Vec<Pubkey> = plans
        .iter()
        .zip(held.iter().zip(&charged))
        .filter(|(_, (held, charged))| held > charged)
        .map(|((payer, _, _), _)| payers[*payer].token_account)
        .collect();
    assert_eq!(returns.len(), 3, "the call that used its every unit returns nothing");

    let before = s.t.balances(&watched(&s));
    let instructions = settle_ixs(&s.t, &s.agent, &escrows, &units, &returns);
    let meta = ok(s.t.send_as_relayer(&instructions));
    let after = s.t.balances(&watched(&s));

    let creator: u64 = charged.iter().map(|charged| split(*charged).creator_share_usdc).sum();
    let fees: u64 = charged.iter().map(|charged| split(*charged).fee_usdc).sum();
    assert_eq!(after[0] - before[0], creator);
    assert_eq!(after[1] - before[1], fees);
    assert_eq!(before[2] - after[2], held.iter().sum::<u64>());
    for (index, payer) in payers.iter().enumerate() {
        let back: u64 = plans
            .iter()
            .zip(held.iter().zip(&charged))
            .filter(|((owner, _, _), _)| *owner == index)
            .map(|(_, (held, charged))| held - charged)
            .sum();
        assert_eq!(s.t.balance(&payer.token_account) - before[3 + index], back, "payer {index}");
    }
    // Conservation: what left the vault is exactly what reached the creator, the fees and the payers.
    assert_eq!(
        before[2] - after[2],
        (after[0] - before[0]) + (after[1] - before[1]) + after[3..].iter().zip(&before[3..]).map(|(a, b)| a - b).sum::<u64>()
    );
    let leaves = &events::<events::EscrowsSettledToLog>(&meta)[0].leaves;
    for (leaf, ((held, charged), units)) in leaves.iter().zip(held.iter().zip(&charged).zip(&units)) {
        assert_eq!(
            (leaf.amount_usdc, leaf.charged_usdc, leaf.returned_usdc, leaf.units),
            (*held, *charged, held - charged, *units)
        );
    }
}

#[test]
fn a_dispute_of_a_metered_call_covers_what_was_charged() {
    let mut s = setup();
    let payer = copy(&s.payers[0]);
    let escrow = open_at_most(&mut s.t, &s.agent, &payer, NO_MAXIMUM);
    let instructions = settle_ixs(&s.t, &s.agent, &[escrow], &[42], &[payer.token_account]);
    let meta = ok(s.t.send_as_relayer(&instructions));
    let mut mirror = LogMirror::default();
    mirror.add(&meta);
    let dispute = s.t.dispute_ix(&s.agent, &mirror, 0, [5; 32]);
    let wallet = payer.wallet.insecure_clone();
    let meta = ok(s.t.chain.send(&[dispute], &wallet, &[]));
    assert_eq!(
        events::<events::DisputeOpened>(&meta)[0].amount_usdc,
        42 * PRICE_PER_UNIT_USDC
    );
    let stored: agent_market::Dispute = s.t.chain.anchor_account(&pda::dispute(&s.agent.address, 0)).unwrap();
    assert_eq!(stored.amount_usdc, 42 * PRICE_PER_UNIT_USDC);
}

#[test]
fn a_metered_call_under_a_live_subscription_is_covered_and_charges_nothing() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(Pricing::Subscription {
        period_price_usdc: 5 * USDC,
        period_secs: 30 * 24 * 3600,
    });
    let payer = t.payer(100 * USDC, 100 * USDC);
    t.create_receipt_log(&agent);
    ok(t.subscribe(&agent, &payer));
    let creator = agent.creator.wallet.insecure_clone();
    let update = t
        .market
        .keys
        .update_agent(creator.pubkey(), agent.address, agent.payout_account, creator.pubkey(), terms(&agent.signing, metered()));
    ok(t.chain.send(&[update], &creator, &[]));

    let escrow = open_at_most(&mut t, &agent, &payer, NO_MAXIMUM);
    let stored = t.escrow_state(&escrow);
    assert_eq!((stored.amount_usdc, stored.price_per_unit_usdc, stored.max_units), (0, 0, 0));
    let before = t.balance(&payer.token_account);
    let instructions = settle_ixs(&t, &agent, &[escrow], &[37], &[]);
    let meta = ok(t.send_as_relayer(&instructions));
    let leaf = &events::<events::EscrowsSettledToLog>(&meta)[0].leaves[0];
    assert_eq!((leaf.units, leaf.charged_usdc, leaf.returned_usdc), (37, 0, 0));
    assert_eq!(t.balance(&payer.token_account), before);
    let subscription: Subscription = t
        .chain
        .anchor_account(&pda::subscription(&agent.address, &payer.wallet.pubkey()))
        .unwrap();
    assert!(subscription.covers_every_call);

    // A payer without a subscription pays by the unit.
    let stranger = t.payer(10 * USDC, 10 * USDC);
    let escrow = open_at_most(&mut t, &agent, &stranger, NO_MAXIMUM);
    assert_eq!(t.escrow_state(&escrow).amount_usdc, MAX_UNITS * PRICE_PER_UNIT_USDC);
}

#[test]
fn metered_pricing_has_no_subscription_to_sell() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(metered());
    let payer = t.payer(100 * USDC, 100 * USDC);
    assert_program_error(&t.subscribe(&agent, &payer), AgentMarketError::PricingHasNoSubscription);
}

