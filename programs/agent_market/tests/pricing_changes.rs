//! A subscription is honoured on the terms it was bought under until it expires: after its agent
//! switches pricing or retires, and with the collateral locked until then. Periods are at most a
//! year and a payer holds at most one period ahead, so one payment never buys unbounded covered
//! calls nor locks a creator's collateral for longer.
mod common;

use agent_market::{error::AgentMarketError, Escrow, Pricing, Subscription, MAX_SUBSCRIPTION_PERIOD_SECS};
use common::*;
use localnet::{chain::USDC, market::pda};
use solana_signer::Signer;

const PERIOD_SECS: u32 = 30 * 24 * 3600;
const PERIOD_PRICE_USDC: u64 = 5 * USDC;
const OVERAGE_USDC: u64 = 300_000;

fn unlimited() -> Pricing {
    Pricing::Subscription {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: PERIOD_SECS,
    }
}

fn hybrid(included_calls: u32) -> Pricing {
    Pricing::Hybrid {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: PERIOD_SECS,
        included_calls,
        overage_price_usdc: OVERAGE_USDC,
    }
}

fn set_pricing(t: &mut TestMarket, agent: &AgentFixture, pricing: Pricing) {
    let creator = agent.creator.wallet.insecure_clone();
    let update = t.market.keys.update_agent(
        creator.pubkey(),
        agent.address,
        agent.payout_account,
        creator.pubkey(),
        terms(&agent.signing, pricing),
    );
    ok(t.chain.send(&[update], &creator, &[]));
}

fn retire(t: &mut TestMarket, agent: &AgentFixture) {
    let creator = agent.creator.wallet.insecure_clone();
    let retire = t.market.keys.retire_agent(creator.pubkey(), agent.address);
    ok(t.chain.send(&[retire], &creator, &[]));
}

fn subscription(t: &TestMarket, agent: &AgentFixture, payer: &Payer) -> Subscription {
    t.chain
        .anchor_account(&pda::subscription(&agent.address, &payer.wallet.pubkey()))
        .expect("subscription")
}

/// Opens and settles a call, returning what its escrow charged.
fn call(t: &mut TestMarket, agent: &AgentFixture, payer: &Payer) -> u64 {
    let (result, escrow) = t.open(agent, payer);
    ok(result);
    let stored: Escrow = t.chain.anchor_account(&pda::escrow(&escrow.execution_id)).unwrap();
    ok(t.settle(&escrow, agent));
    stored.amount_usdc
}

/// Opens a call that must fail with `error`, moving no USDC of the payer, the agent or the fee shard.
fn refused_call(t: &mut TestMarket, agent: &AgentFixture, payer: &Payer, error: AgentMarketError) {
    let watched = [
        payer.token_account,
        agent.payout_account,
        pda::escrow_vault(&agent.address),
        pda::fee_shard(0),
    ];
    let before = t.balances(&watched);
    let (result, _) = t.open(agent, payer);
    assert_program_error(&result, error);
    assert_eq!(t.balances(&watched), before, "balances moved");
}

#[test]
fn unlimited_subscription_is_honoured_after_a_switch_to_pay_per_use_until_it_expires() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(unlimited());
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    set_pricing(&mut t, &agent, Pricing::PayPerUse { price_usdc: PRICE_USDC });

    let paid = t.balance(&payer.token_account);
    for _ in 0..3 {
        assert_eq!(call(&mut t, &agent, &payer), 0);
    }
    assert_eq!(t.balance(&payer.token_account), paid);

    // Once it expires, the pricing of the day applies.
    t.chain.advance_clock(i64::from(PERIOD_SECS));
    assert_eq!(call(&mut t, &agent, &payer), PRICE_USDC);
    assert_eq!(t.balance(&payer.token_account), paid - PRICE_USDC);
}

#[test]
fn unlimited_subscription_is_honoured_after_a_switch_to_hybrid_beyond_its_included_calls() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(unlimited());
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    set_pricing(&mut t, &agent, hybrid(1));

    let paid = t.balance(&payer.token_account);
    for _ in 0..3 {
        assert_eq!(call(&mut t, &agent, &payer), 0);
    }
    assert_eq!(t.balance(&payer.token_account), paid);
    // Its period is not renewed on the new terms while it still covers every call.
    let before = t.balances(&[payer.token_account, agent.payout_account]);
    assert_program_error(
        &t.subscribe(&agent, &payer),
        AgentMarketError::SubscriptionTermsChanged,
    );
    assert_eq!(t.balances(&[payer.token_account, agent.payout_account]), before);

    t.chain.advance_clock(i64::from(PERIOD_SECS));
    assert_eq!(call(&mut t, &agent, &payer), OVERAGE_USDC);
    // Expired, it is replaced by a period of the hybrid plan.
    ok(t.subscribe(&agent, &payer));
    let renewed = subscription(&t, &agent, &payer);
    assert!(!renewed.covers_every_call);
    assert_eq!(renewed.included_calls_remaining, 1);
}

#[test]
fn hybrid_subscription_after_a_switch_to_unlimited_covers_only_its_included_calls() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(hybrid(2));
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    set_pricing(&mut t, &agent, unlimited());

    assert_program_error(
        &t.subscribe(&agent, &payer),
        AgentMarketError::SubscriptionTermsChanged,
    );
    for _ in 0..2 {
        assert_eq!(call(&mut t, &agent, &payer), 0);
    }
    refused_call(&mut t, &agent, &payer, AgentMarketError::SubscriptionRequired);

    // With no included call left it covers nothing, and a period of the new plan replaces it.
    ok(t.subscribe(&agent, &payer));
    assert!(subscription(&t, &agent, &payer).covers_every_call);
    assert_eq!(call(&mut t, &agent, &payer), 0);
}

#[test]
fn hybrid_included_calls_are_honoured_after_a_switch_to_pay_per_use() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(hybrid(1));
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    set_pricing(&mut t, &agent, Pricing::PayPerUse { price_usdc: PRICE_USDC });
    assert_eq!(call(&mut t, &agent, &payer), 0);
    assert_eq!(call(&mut t, &agent, &payer), PRICE_USDC);
}

#[test]
fn a_retired_agent_honours_live_subscriptions_until_they_expire_and_no_other_call() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(unlimited());
    let payer = t.payer(20 * USDC, 20 * USDC);
    let stranger = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    let expires_at = subscription(&t, &agent, &payer).expires_at;
    retire(&mut t, &agent);

    assert_eq!(call(&mut t, &agent, &payer), 0);
    refused_call(&mut t, &agent, &stranger, AgentMarketError::AgentRetired);
    let before = t.balances(&[stranger.token_account, agent.payout_account]);
    assert_program_error(&t.subscribe(&agent, &stranger), AgentMarketError::AgentRetired);
    assert_eq!(t.balances(&[stranger.token_account, agent.payout_account]), before);

    t.chain.advance_clock(expires_at - t.chain.now() - 1);
    assert_eq!(
        call(&mut t, &agent, &payer),
        0,
        "the subscription's last second is covered"
    );
    t.chain.advance_clock(1);
    refused_call(&mut t, &agent, &payer, AgentMarketError::AgentRetired);
}

#[test]
fn a_retired_hybrid_agent_honours_included_calls_and_takes_no_overage() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(hybrid(1));
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    retire(&mut t, &agent);
    assert_eq!(call(&mut t, &agent, &payer), 0);
    refused_call(&mut t, &agent, &payer, AgentMarketError::AgentRetired);
}

#[test]
fn collateral_stays_locked_until_the_last_subscription_expires_plus_the_cooldown() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(unlimited());
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    let expires_at = subscription(&t, &agent, &payer).expires_at;
    retire(&mut t, &agent);
    let creator = agent.creator.wallet.insecure_clone();
    let withdraw = t
        .market
        .keys
        .withdraw_collateral(creator.pubkey(), agent.address, agent.creator.token_account);
    let vault = pda::collateral_vault(&agent.address);

    // The cooldown counted from retirement has ended, but covered calls can still open escrows.
    t.chain.advance_clock(i64::from(COLLATERAL_COOLDOWN_SECS));
    assert!(t.chain.now() + 1 < expires_at + i64::from(COLLATERAL_COOLDOWN_SECS));
    let before = t.balances(&[vault, agent.creator.token_account]);
    assert_program_error(
        &t.chain.send(&[withdraw.clone()], &creator, &[]),
        AgentMarketError::CollateralCooldownActive,
    );
    t.chain
        .advance_clock(expires_at + i64::from(COLLATERAL_COOLDOWN_SECS) - 1 - t.chain.now());
    assert_program_error(
        &t.chain.send(&[withdraw.clone()], &creator, &[]),
        AgentMarketError::CollateralCooldownActive,
    );
    assert_eq!(t.balances(&[vault, agent.creator.token_account]), before);
    t.chain.advance_clock(1);
    ok(t.chain.send(&[withdraw], &creator, &[]));
    assert_eq!(t.balance(&vault), 0);
}

#[test]
fn a_subscription_is_bought_at_most_one_period_ahead() {
    let mut t = TestMarket::new();
    let agent = t.agent_with(unlimited());
    let payer = t.payer(20 * USDC, 20 * USDC);
    ok(t.subscribe(&agent, &payer));
    ok(t.subscribe(&agent, &payer));
    let watched = [payer.token_account, agent.payout_account, pda::fee_shard(0)];
    let before = t.balances(&watched);
    assert_program_error(
        &t.subscribe(&agent, &payer),
        AgentMarketError::SubscriptionPaidAhead,
    );
    assert_eq!(t.balances(&watched), before);
    // Once no more than a period is left, the next one can be bought.
    t.chain.advance_clock(i64::from(PERIOD_SECS));
    ok(t.subscribe(&agent, &payer));
}

#[test]
fn subscription_periods_longer_than_a_year_are_refused() {
    let mut t = TestMarket::new();
    for pricing in [
        Pricing::Subscription {
            period_price_usdc: PERIOD_PRICE_USDC,
            period_secs: MAX_SUBSCRIPTION_PERIOD_SECS + 1,
        },
        Pricing::Subscription {
            period_price_usdc: PERIOD_PRICE_USDC,
            period_secs: u32::MAX,
        },
        Pricing::Hybrid {
            period_price_usdc: PERIOD_PRICE_USDC,
            period_secs: MAX_SUBSCRIPTION_PERIOD_SECS + 1,
            included_calls: 1,
            overage_price_usdc: OVERAGE_USDC,
        },
    ] {
        let creator = t.creator(MIN_COLLATERAL_USDC);
        let creator_token_account = creator.token_account;
        let (result, agent) = t.try_register(creator, pricing, MIN_COLLATERAL_USDC);
        assert_program_error(&result, AgentMarketError::SubscriptionPeriodTooLong);
        assert_eq!(t.balance(&creator_token_account), MIN_COLLATERAL_USDC);
        assert!(t.chain.account(&agent.address).is_none());
    }
    let agent = t.agent_with(Pricing::Subscription {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: MAX_SUBSCRIPTION_PERIOD_SECS,
    });
    // update_agent applies the same bound.
    let creator = agent.creator.wallet.insecure_clone();
    let too_long = Pricing::Subscription {
        period_price_usdc: PERIOD_PRICE_USDC,
        period_secs: MAX_SUBSCRIPTION_PERIOD_SECS + 1,
    };
    let update = t.market.keys.update_agent(
        creator.pubkey(),
        agent.address,
        agent.payout_account,
        creator.pubkey(),
        terms(&agent.signing, too_long),
    );
    assert_program_error(
        &t.chain.send(&[update], &creator, &[]),
        AgentMarketError::SubscriptionPeriodTooLong,
    );
}
