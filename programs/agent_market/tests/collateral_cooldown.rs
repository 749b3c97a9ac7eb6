//! The collateral cooldown ends strictly after the last second a dispute can open against a
//! retired agent: an escrow opened as it retires settles at its deadline (max execution time +
//! grace) and is disputed until the window's last second.
mod common;

use agent_market::{error::AgentMarketError, MarketParams, Pricing, MAX_EXECUTION_SECS as PROGRAM_MAX_EXECUTION_SECS};
use common::{batch::LogMirror, *};
use localnet::{chain::USDC, market::pda};
use solana_keypair::Keypair;
use solana_signer::Signer;

/// Seconds from retirement to the last second a dispute can open.
fn last_dispute_after_secs() -> u32 {
    PROGRAM_MAX_EXECUTION_SECS + ESCROW_GRACE_SECS + DISPUTE_WINDOW_SECS
}

fn with_cooldown(t: &TestMarket, collateral_cooldown_secs: u32) -> MarketParams {
    MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        collateral_cooldown_secs,
        ..market_params()
    }
}

#[test]
fn a_cooldown_ending_as_the_last_dispute_can_open_is_refused_one_second_more_accepted() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    for (cooldown_secs, refused) in [
        (DISPUTE_WINDOW_SECS, true),
        (last_dispute_after_secs(), true),
        (last_dispute_after_secs() + 1, false),
    ] {
        let update = t
            .market
            .keys
            .update_market(with_cooldown(&t, cooldown_secs), authority.pubkey());
        let result = t.chain.send(&[update], &authority, &[]);
        let market: agent_market::Market = t.chain.anchor_account(&pda::market()).unwrap();
        if refused {
            assert_program_error(&result, AgentMarketError::InvalidMarketParams);
            assert_eq!(market.collateral_cooldown_secs, COLLATERAL_COOLDOWN_SECS);
        } else {
            ok(result);
            assert_eq!(market.collateral_cooldown_secs, cooldown_secs);
        }
    }
}

#[test]
fn the_last_dispute_finds_the_collateral_at_the_shortest_cooldown() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    let update = t
        .market
        .keys
        .update_market(with_cooldown(&t, last_dispute_after_secs() + 1), authority.pubkey());
    ok(t.chain.send(&[update], &authority, &[]));

    // An agent taking the longest execution time the program allows.
    let creator = t.creator(MIN_COLLATERAL_USDC);
    let signing = Keypair::new();
    let agent_id = random_id();
    let mut slow = terms(&signing, Pricing::PayPerUse { price_usdc: PRICE_USDC });
    slow.max_execution_secs = PROGRAM_MAX_EXECUTION_SECS;
    let register = t.market.keys.register_agent(
        creator.wallet.pubkey(),
        agent_id,
        creator.token_account,
        creator.token_account,
        creator.wallet.pubkey(),
        slow,
        MIN_COLLATERAL_USDC,
    );
    let proof = signing_key_proof_ix(&signing, &pda::agent(&agent_id), &creator.wallet.pubkey());
    ok(t.chain.send(&[proof, register], &creator.wallet, &[]));
    let creator_wallet = creator.wallet.insecure_clone();
    let agent = AgentFixture {
        agent_id,
        address: pda::agent(&agent_id),
        signing,
        payout_account: creator.token_account,
        creator,
    };
    let payer = t.payer(10 * USDC, 10 * USDC);

    // The escrow opens in the second the agent retires, settles at its deadline, and is disputed
    // in the window's last second.
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    ok(t.chain.send(
        &[t.market.keys.retire_agent(creator_wallet.pubkey(), agent.address)],
        &creator_wallet,
        &[],
    ));
    t.chain
        .advance_clock(i64::from(PROGRAM_MAX_EXECUTION_SECS + ESCROW_GRACE_SECS));
    let mut mirror = LogMirror::default();
    mirror.add(&ok(t.settle(&escrow, &agent)));
    t.chain.advance_clock(i64::from(DISPUTE_WINDOW_SECS));

    let withdraw =
        t.market
            .keys
            .withdraw_collateral(creator_wallet.pubkey(), agent.address, agent.creator.token_account);
    let watched = [pda::collateral_vault(&agent.address), agent.creator.token_account];
    let before = t.balances(&watched);
    assert_program_error(
        &t.chain.send(&[withdraw.clone()], &creator_wallet, &[]),
        AgentMarketError::CollateralCooldownActive,
    );
    assert_eq!(t.balances(&watched), before);
    let payer_wallet = payer.wallet.insecure_clone();
    let dispute = t.dispute_ix(&agent, &mirror, 0, [1; 32]);
    ok(t.chain.send(&[dispute], &payer_wallet, &[]));

    // A second later the cooldown has ended, and the open dispute still holds the collateral.
    t.chain.advance_clock(1);
    assert_program_error(
        &t.chain.send(&[withdraw], &creator_wallet, &[]),
        AgentMarketError::OpenDisputes,
    );
    assert_eq!(t.balances(&watched), before);
}

#[test]
fn lowering_the_grace_does_not_free_collateral_before_the_escrows_opened_under_it_can_be_disputed() {
    const LONG_GRACE_SECS: u32 = 2 * 3600;
    let long = MarketParams {
        escrow_grace_secs: LONG_GRACE_SECS,
        collateral_cooldown_secs: PROGRAM_MAX_EXECUTION_SECS + LONG_GRACE_SECS + DISPUTE_WINDOW_SECS + 1,
        ..market_params()
    };
    let mut t = TestMarket::with_params(long);
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    let creator = agent.creator.wallet.insecure_clone();
    ok(t.chain.send(
        &[t.market.keys.retire_agent(creator.pubkey(), agent.address)],
        &creator,
        &[],
    ));

    // The authority lowers the grace, and the cooldown with it, while the escrow is open.
    let authority = t.market.authority.insecure_clone();
    let short = MarketParams {
        escrow_grace_secs: ESCROW_GRACE_SECS,
        ..with_cooldown(&t, last_dispute_after_secs() + 1)
    };
    ok(t.chain.send(&[t.market.keys.update_market(short, authority.pubkey())], &authority, &[]));

    // The relayer settles in the escrow's last second, under the longer grace it was opened with.
    t.chain
        .advance_clock(i64::from(MAX_EXECUTION_SECS + LONG_GRACE_SECS));
    let mut mirror = LogMirror::default();
    mirror.add(&ok(t.settle(&escrow, &agent)));

    // Past the shortened cooldown the payer may still dispute, so the collateral stays.
    t.chain.advance_clock(
        i64::from(last_dispute_after_secs() + 1) - i64::from(MAX_EXECUTION_SECS + LONG_GRACE_SECS),
    );
    let withdraw = t
        .market
        .keys
        .withdraw_collateral(creator.pubkey(), agent.address, agent.creator.token_account);
    let watched = [pda::collateral_vault(&agent.address), agent.creator.token_account];
    let before = t.balances(&watched);
    assert_program_error(
        &t.chain.send(&[withdraw], &creator, &[]),
        AgentMarketError::EscrowsStillDisputable,
    );
    assert_eq!(t.balances(&watched), before);
    ok(t.chain.send(&[t.dispute_ix(&agent, &mirror, 0, [1; 32])], &payer.wallet, &[]));
}
