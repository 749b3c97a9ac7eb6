//! What `register_agent` and `update_agent` refuse in an agent's terms: prices under the market's
//! minimum price per call, and a payout account the program itself owns.
mod common;

use agent_market::{error::AgentMarketError, Agent, MarketParams, Pricing};
use anchor_lang::{error::ErrorCode, prelude::Pubkey};
use common::*;
use litesvm::types::TransactionResult;
use localnet::{chain::USDC, market::pda};
use solana_signer::Signer;

/// Registers an agent with `pricing`, asserting that a refusal left the creator's USDC alone and
/// created no agent.
fn register(t: &mut TestMarket, pricing: Pricing) -> TransactionResult {
    let creator = t.creator(MIN_COLLATERAL_USDC);
    let creator_token_account = creator.token_account;
    let (result, agent) = t.try_register(creator, pricing, MIN_COLLATERAL_USDC);
    if result.is_err() {
        assert_eq!(t.balance(&creator_token_account), MIN_COLLATERAL_USDC);
        assert!(t.chain.account(&agent.address).is_none());
    }
    result
}

fn hybrid(period_price_usdc: u64, included_calls: u32, overage_price_usdc: u64) -> Pricing {
    Pricing::Hybrid {
        period_price_usdc,
        period_secs: 3600,
        included_calls,
        overage_price_usdc,
    }
}

#[test]
fn pay_per_use_price_below_the_minimum_is_refused_and_the_minimum_accepted() {
    let mut t = TestMarket::new();
    let result = register(
        &mut t,
        Pricing::PayPerUse {
            price_usdc: MIN_PRICE_PER_CALL_USDC - 1,
        },
    );
    assert_program_error(&result, AgentMarketError::PriceBelowMinimum);
    ok(register(
        &mut t,
        Pricing::PayPerUse {
            price_usdc: MIN_PRICE_PER_CALL_USDC,
        },
    ));
}

#[test]
fn hybrid_overage_price_below_the_minimum_is_refused() {
    let mut t = TestMarket::new();
    let result = register(&mut t, hybrid(USDC, 10, MIN_PRICE_PER_CALL_USDC - 1));
    assert_program_error(&result, AgentMarketError::OveragePriceBelowMinimum);
    ok(register(&mut t, hybrid(USDC, 10, MIN_PRICE_PER_CALL_USDC)));
}

#[test]
fn hybrid_period_price_below_the_minimum_per_included_call_is_refused() {
    let mut t = TestMarket::new();
    let included_calls = 100;
    let floor_usdc = MIN_PRICE_PER_CALL_USDC * u64::from(included_calls);
    let result = register(&mut t, hybrid(floor_usdc - 1, included_calls, MIN_PRICE_PER_CALL_USDC));
    assert_program_error(&result, AgentMarketError::PeriodPriceBelowMinimum);
    ok(register(
        &mut t,
        hybrid(floor_usdc, included_calls, MIN_PRICE_PER_CALL_USDC),
    ));
}

#[test]
fn hybrid_with_the_most_included_calls_cannot_overflow_the_floor() {
    let mut t = TestMarket::new();
    let result = register(&mut t, hybrid(u64::MAX, u32::MAX, MIN_PRICE_PER_CALL_USDC));
    // u32::MAX calls at 0.01 USDC is about 42.9 million USDC: well under u64::MAX units.
    ok(result);
    let result = register(
        &mut t,
        hybrid(
            MIN_PRICE_PER_CALL_USDC * u64::from(u32::MAX) - 1,
            u32::MAX,
            MIN_PRICE_PER_CALL_USDC,
        ),
    );
    assert_program_error(&result, AgentMarketError::PeriodPriceBelowMinimum);
}

#[test]
fn unlimited_subscription_period_price_must_cover_one_call() {
    let mut t = TestMarket::new();
    let result = register(
        &mut t,
        Pricing::Subscription {
            period_price_usdc: MIN_PRICE_PER_CALL_USDC - 1,
            period_secs: 3600,
        },
    );
    assert_program_error(&result, AgentMarketError::PeriodPriceBelowMinimum);
    ok(register(
        &mut t,
        Pricing::Subscription {
            period_price_usdc: MIN_PRICE_PER_CALL_USDC,
            period_secs: 3600,
        },
    ));
}

#[test]
fn update_agent_below_the_minimum_is_refused_and_keeps_the_terms() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let creator = agent.creator.wallet.insecure_clone();
    for (pricing, error) in [
        (
            Pricing::PayPerUse {
                price_usdc: MIN_PRICE_PER_CALL_USDC - 1,
            },
            AgentMarketError::PriceBelowMinimum,
        ),
        (hybrid(USDC, 1, 1), AgentMarketError::OveragePriceBelowMinimum),
        (
            hybrid(MIN_PRICE_PER_CALL_USDC - 1, 1, MIN_PRICE_PER_CALL_USDC),
            AgentMarketError::PeriodPriceBelowMinimum,
        ),
    ] {
        let update = t.update_ix(&agent, agent.payout_account, terms(&agent.signing, pricing));
        assert_program_error(&t.chain.send(&[update], &creator, &[]), error);
        let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
        assert_eq!(stored.pricing, Pricing::PayPerUse { price_usdc: PRICE_USDC });
    }
}

#[test]
fn a_raised_minimum_applies_to_the_next_registration() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    let params = MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        min_price_per_call_usdc: PRICE_USDC + 1,
        ..market_params()
    };
    ok(t.chain.send(
        &[t.market.keys.update_market(params, authority.pubkey())],
        &authority,
        &[],
    ));
    let result = register(&mut t, Pricing::PayPerUse { price_usdc: PRICE_USDC });
    assert_program_error(&result, AgentMarketError::PriceBelowMinimum);
}

/// Registers agent `agent_id` paying out to `payout_account`, asserting that a refusal left the
/// creator's USDC alone and created no agent.
fn register_paying_to(t: &mut TestMarket, agent_id: [u8; 16], payout_account: Pubkey) -> TransactionResult {
    let creator = t.creator(MIN_COLLATERAL_USDC);
    let creator_token_account = creator.token_account;
    let (result, agent) = t.try_register_paying_to(
        creator,
        agent_id,
        payout_account,
        Pricing::PayPerUse { price_usdc: PRICE_USDC },
        MIN_COLLATERAL_USDC,
    );
    assert_eq!(t.balance(&creator_token_account), MIN_COLLATERAL_USDC);
    assert!(t.chain.account(&agent.address).is_none());
    result
}

#[test]
fn register_agent_paying_out_to_a_token_account_its_agent_pda_owns_is_refused() {
    let mut t = TestMarket::new();
    // Anyone can open a USDC account for any address, the agent PDA of an id not registered yet
    // included; once the agent exists, nothing could move USDC out of it.
    let agent_id = random_id();
    let funder = t.chain.funded_keypair(SOL);
    let mint = t.usdc_mint();
    let owned_by_agent = t.chain.token_account(&funder, &pda::agent(&agent_id), &mint);
    let result = register_paying_to(&mut t, agent_id, owned_by_agent);
    assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
}

#[test]
fn register_agent_paying_out_to_its_own_vaults_fails_before_they_exist() {
    // The vaults are created by this very instruction, after Anchor has read the payout account:
    // it is refused as not initialised, and nothing is registered.
    for vault in [pda::escrow_vault, pda::collateral_vault] {
        let mut t = TestMarket::new();
        let agent_id = random_id();
        let result = register_paying_to(&mut t, agent_id, vault(&pda::agent(&agent_id)));
        assert_anchor_error(&result, ErrorCode::AccountNotInitialized);
    }
}

#[test]
fn register_agent_paying_out_to_a_fee_shard_is_refused() {
    let mut t = TestMarket::new();
    let result = register_paying_to(&mut t, random_id(), pda::fee_shard(0));
    assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
}

#[test]
fn update_agent_paying_out_to_a_vault_or_a_fee_shard_is_refused_and_keeps_the_payout() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let creator = agent.creator.wallet.insecure_clone();
    for owned in [
        pda::escrow_vault(&agent.address),
        pda::collateral_vault(&agent.address),
        pda::fee_shard(3),
    ] {
        let update = t.update_ix(
            &agent,
            owned,
            terms(&agent.signing, Pricing::PayPerUse { price_usdc: PRICE_USDC }),
        );
        let result = t.chain.send(&[update], &creator, &[]);
        assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
        let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
        assert_eq!(stored.payout_account, agent.payout_account);
    }
}

/// A USDC account of the payout owner `owner`, opened by a stranger (anyone can open one for any
/// address).
fn token_account_of(t: &mut TestMarket, owner: &Pubkey) -> Pubkey {
    let funder = t.chain.funded_keypair(SOL);
    let mint = t.usdc_mint();
    t.chain.token_account(&funder, owner, &mint)
}

#[test]
fn register_agent_paying_out_to_a_token_account_another_agent_owns_is_refused() {
    // Another agent's PDA signs for nothing it does not hold: USDC paid there would be stuck.
    let mut t = TestMarket::new();
    let other = t.agent();
    let owned_by_other_agent = token_account_of(&mut t, &other.address);
    let result = register_paying_to(&mut t, random_id(), owned_by_other_agent);
    assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
}

#[test]
fn register_agent_paying_out_to_a_token_account_the_delegate_owns_is_refused() {
    let mut t = TestMarket::new();
    let owned_by_delegate = token_account_of(&mut t, &pda::delegate());
    let result = register_paying_to(&mut t, random_id(), owned_by_delegate);
    assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
}

#[test]
fn update_agent_paying_out_to_another_agent_or_the_delegate_is_refused_and_keeps_the_payout() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let other = t.agent();
    let creator = agent.creator.wallet.insecure_clone();
    for owner in [other.address, pda::delegate()] {
        let owned = token_account_of(&mut t, &owner);
        let update = t.update_ix(
            &agent,
            owned,
            terms(&agent.signing, Pricing::PayPerUse { price_usdc: PRICE_USDC }),
        );
        let result = t.chain.send(&[update], &creator, &[]);
        assert_program_error(&result, AgentMarketError::PayoutAccountOwnedByProgram);
        let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
        assert_eq!(stored.payout_account, agent.payout_account);
    }
}

#[test]
fn a_payout_owner_that_does_not_own_the_payout_account_is_refused() {
    // The owner is passed so the program can read its owner; passing some other wallet instead
    // (to hide a program-owned owner) is refused.
    let mut t = TestMarket::new();
    let agent = t.agent();
    let other = t.agent();
    let creator = agent.creator.wallet.insecure_clone();
    let owned_by_other_agent = token_account_of(&mut t, &other.address);
    let update = t.market.keys.update_agent(
        creator.pubkey(),
        agent.address,
        owned_by_other_agent,
        creator.pubkey(),
        terms(&agent.signing, Pricing::PayPerUse { price_usdc: PRICE_USDC }),
    );
    let result = t.chain.send(&[update], &creator, &[]);
    assert_program_error(&result, AgentMarketError::PayoutOwnerMismatch);
    let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
    assert_eq!(stored.payout_account, agent.payout_account);
}
