//! `max_amount_usdc` of `open_escrow` and `subscribe`: the program never charges more than the
//! price the payer was quoted, whatever changed on chain since.
mod common;

use agent_market::{error::AgentMarketError, Escrow, Pricing, Subscription};
use common::*;
use localnet::{chain::USDC, market::pda};
use solana_signer::Signer;

#[test]
fn open_escrow_charging_more_than_the_maximum_fails_and_moves_nothing() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let execution_id = random_id();
    let instruction = t.open_escrow_ix_at_most(&agent, &payer, execution_id, PRICE_USDC - 1);
    let result = t.send_as_relayer(&[instruction]);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 0);
    assert!(t.chain.account(&pda::escrow(&execution_id)).is_none());
}

#[test]
fn open_escrow_at_exactly_the_maximum_charges_the_price() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let execution_id = random_id();
    let instruction = t.open_escrow_ix_at_most(&agent, &payer, execution_id, PRICE_USDC);
    ok(t.send_as_relayer(&[instruction]));
    let escrow: Escrow = t.chain.anchor_account(&pda::escrow(&execution_id)).unwrap();
    assert_eq!(escrow.amount_usdc, PRICE_USDC);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC - PRICE_USDC);
}

#[test]
fn a_price_raised_by_update_agent_after_the_quote_is_refused() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let quoted_usdc = PRICE_USDC;
    let creator = agent.creator.wallet.insecure_clone();
    let raise = t.update_ix(
        &agent,
        agent.payout_account,
        terms(
            &agent.signing,
            Pricing::PayPerUse {
                price_usdc: 2 * PRICE_USDC,
            },
        ),
    );
    ok(t.chain.send(&[raise], &creator, &[]));

    let execution_id = random_id();
    let instruction = t.open_escrow_ix_at_most(&agent, &payer, execution_id, quoted_usdc);
    let result = t.send_as_relayer(&[instruction]);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 0);
    assert!(t.chain.account(&pda::escrow(&execution_id)).is_none());
}

#[test]
fn a_hybrid_call_quoted_as_included_is_refused_once_another_call_took_the_last_one() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(Pricing::Hybrid {
        period_price_usdc: USDC,
        period_secs: 3600,
        included_calls: 1,
        overage_price_usdc: PRICE_USDC,
    });
    let payer = t.payer(10 * USDC, 10 * USDC);
    let subscribe = t.market.keys.subscribe(
        agent.address,
        payer.wallet.pubkey(),
        payer.token_account,
        agent.payout_account,
        0,
        USDC,
    );
    ok(t.send_as_relayer(&[subscribe]));
    let subscription_address = pda::subscription(&agent.address, &payer.wallet.pubkey());

    // Two calls were both quoted as covered (0); the first takes the only included call.
    let first = t.open_escrow_ix_at_most(&agent, &payer, random_id(), 0);
    ok(t.send_as_relayer(&[first]));
    let balance_usdc = t.balance(&payer.token_account);

    let execution_id = random_id();
    let second = t.open_escrow_ix_at_most(&agent, &payer, execution_id, 0);
    let result = t.send_as_relayer(&[second]);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
    assert_eq!(t.balance(&payer.token_account), balance_usdc);
    assert!(t.chain.account(&pda::escrow(&execution_id)).is_none());
    let subscription: Subscription = t.chain.anchor_account(&subscription_address).unwrap();
    assert_eq!(subscription.included_calls_remaining, 0);
}

#[test]
fn subscribe_above_the_maximum_fails_and_moves_nothing() {
    let mut t = TestMarket::new();
    let period_price_usdc = 10 * USDC;
    let agent = t.agent_with(Pricing::Subscription {
        period_price_usdc,
        period_secs: 3600,
    });
    let payer = t.payer(20 * USDC, 20 * USDC);
    let watched = [payer.token_account, agent.payout_account, pda::fee_shard(0)];
    let before = t.balances(&watched);
    let subscribe = t.market.keys.subscribe(
        agent.address,
        payer.wallet.pubkey(),
        payer.token_account,
        agent.payout_account,
        0,
        period_price_usdc - 1,
    );
    let result = t.send_as_relayer(&[subscribe]);
    assert_program_error(&result, AgentMarketError::PriceAboveMaximum);
    assert_eq!(t.balances(&watched), before);
    assert!(t
        .chain
        .account(&pda::subscription(&agent.address, &payer.wallet.pubkey()))
        .is_none());
}
