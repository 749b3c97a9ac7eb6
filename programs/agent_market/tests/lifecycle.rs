//! Every instruction's success path through real signed transactions, balances to the unit.
mod common;

use agent_market::{
    error::AgentMarketError, events, fees::split, Agent, AgentStatus, Dispute, Escrow, Market, MarketParams, Pricing,
    RefundReason, Subscription,
};
use common::{batch::LogMirror, *};
use localnet::{
    chain::{events, USDC},
    market::pda,
};
use solana_signer::Signer;

#[test]
fn market_is_initialized_with_its_params_and_fee_shards() {
    let t = TestMarket::new();
    let market: Market = t.chain.anchor_account(&pda::market()).expect("market");
    assert_eq!(market.authority, t.market.authority.pubkey());
    assert_eq!(market.relayer, t.market.relayer.pubkey());
    assert_eq!(market.arbiter, t.market.arbiter.pubkey());
    assert_eq!(market.usdc_mint, t.usdc_mint());
    assert_eq!(market.treasury, t.market.keys.treasury);
    assert_eq!(market.min_collateral_usdc, MIN_COLLATERAL_USDC);
    assert_eq!(market.min_price_per_call_usdc, MIN_PRICE_PER_CALL_USDC);
    assert_eq!(market.dispute_window_secs, DISPUTE_WINDOW_SECS);
    for index in 0..agent_market::FEE_SHARD_COUNT {
        let shard = t.chain.token(&pda::fee_shard(index)).expect("fee shard");
        assert_eq!(shard.owner, pda::market());
        assert_eq!(shard.mint, t.usdc_mint());
    }
}

#[test]
fn update_market_changes_params_and_authority() {
    let mut t = TestMarket::new();
    let new_authority = t.chain.funded_keypair(SOL);
    let params = agent_market::MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        min_collateral_usdc: 5 * USDC,
        escrows_paused: true,
        ..market_params()
    };
    let authority = t.market.authority.insecure_clone();
    let meta = ok(t.chain.send(
        &[t.market.keys.update_market(params.clone(), new_authority.pubkey())],
        &authority,
        &[],
    ));
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.authority, authority.pubkey());
    assert_eq!(market.pending_authority, new_authority.pubkey());
    assert_eq!(market.min_collateral_usdc, 5 * USDC);
    assert!(market.escrows_paused);
    assert_eq!(events::<events::MarketUpdated>(&meta).len(), 1);
    ok(t.chain.send(
        &[t.market.keys.accept_market_authority(new_authority.pubkey())],
        &new_authority,
        &[],
    ));
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.authority, new_authority.pubkey());

    // The old authority no longer can.
    let result = t.chain.send(
        &[t.market.keys.update_market(params, authority.pubkey())],
        &authority,
        &[],
    );
    assert_program_error(&result, AgentMarketError::NotMarketAuthority);
}

#[test]
fn register_agent_locks_collateral_in_the_agent_vault() {
    let mut t = TestMarket::new();
    let creator = t.creator(150 * USDC);
    let creator_token_account = creator.token_account;
    let (result, agent) = t.try_register(creator, Pricing::PayPerUse { price_usdc: PRICE_USDC }, 120 * USDC);
    let meta = ok(result);
    assert_eq!(t.balance(&creator_token_account), 30 * USDC);
    assert_eq!(t.balance(&pda::collateral_vault(&agent.address)), 120 * USDC);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 0);
    let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
    assert_eq!(stored.creator, agent.creator.wallet.pubkey());
    assert_eq!(stored.signing_key, agent.signing.pubkey().to_bytes());
    assert_eq!(stored.collateral_usdc, 120 * USDC);
    assert_eq!(stored.status, AgentStatus::Active);
    let registered = events::<events::AgentRegistered>(&meta);
    assert_eq!(registered.len(), 1);
    assert_eq!(registered[0].collateral_usdc, 120 * USDC);
}

#[test]
fn register_agent_below_minimum_collateral_fails() {
    let mut t = TestMarket::new();
    let creator = t.creator(MIN_COLLATERAL_USDC);
    let creator_token_account = creator.token_account;
    let (result, agent) = t.try_register(
        creator,
        Pricing::PayPerUse { price_usdc: PRICE_USDC },
        MIN_COLLATERAL_USDC - 1,
    );
    assert_program_error(&result, AgentMarketError::CollateralBelowMinimum);
    assert_eq!(t.balance(&creator_token_account), MIN_COLLATERAL_USDC);
    assert!(t.chain.account(&agent.address).is_none());
}

#[test]
fn open_escrow_then_settle_pays_99_percent_to_creator_and_1_percent_to_a_fee_shard() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 5 * USDC);
    t.ensure_receipt_log(&agent.address);
    let relayer_lamports = t.chain.lamports(&t.relayer().pubkey());

    let (result, escrow) = t.open(&agent, &payer);
    let meta = ok(result);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC - PRICE_USDC);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), PRICE_USDC);
    assert_eq!(
        t.chain.token(&payer.token_account).unwrap().delegated_amount,
        5 * USDC - PRICE_USDC
    );
    let stored: Escrow = t.chain.anchor_account(&pda::escrow(&escrow.execution_id)).unwrap();
    assert_eq!(stored.amount_usdc, PRICE_USDC);
    assert_eq!(stored.payer, payer.wallet.pubkey());
    assert_eq!(stored.api_key_id, [9; 16]);
    assert_eq!(
        stored.deadline,
        stored.opened_at + i64::from(MAX_EXECUTION_SECS + ESCROW_GRACE_SECS)
    );
    assert_eq!(stored.nonce, 0, "the agent's first escrow");
    let opened = events::<events::EscrowOpened>(&meta);
    assert_eq!(opened.len(), 1);
    assert_eq!(
        (opened[0].amount_usdc, opened[0].nonce, opened[0].payer_token_account),
        (PRICE_USDC, 0, payer.token_account)
    );
    let agent_state: Agent = t.chain.anchor_account(&agent.address).unwrap();
    assert_eq!(agent_state.escrows_opened, 1);

    let creator_before = t.balance(&agent.payout_account);
    let meta = ok(t.settle(&escrow, &agent));
    let fee = PRICE_USDC / 100;
    assert_eq!(t.balance(&agent.payout_account), creator_before + PRICE_USDC - fee);
    assert_eq!(t.balance(&pda::fee_shard(0)), fee);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 0);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC - PRICE_USDC);
    assert!(
        t.chain.account(&pda::escrow(&escrow.execution_id)).is_none(),
        "escrow closed"
    );
    let settled = events::<events::EscrowsSettledToLog>(&meta);
    assert_eq!(settled.len(), 1);
    assert_eq!(
        (settled[0].first_leaf_index, settled[0].leaves.len(), settled[0].leaves[0].nonce),
        (0, 1, 0)
    );
    assert_eq!(split(settled[0].leaves[0].amount_usdc).fee_usdc, fee);

    // The relayer paid three signatures' fees (the open, the settlement and the creator's
    // signature the precompile checked) and got the escrow's rent back: it holds nothing per call.
    assert_eq!(t.chain.lamports(&t.relayer().pubkey()), relayer_lamports - 3 * 5_000);
}

#[test]
fn settlement_split_holds_on_chain_for_edge_amounts() {
    // One mint's supply cannot pass u64::MAX and the creator's collateral is minted too, so the
    // largest amount on chain leaves room for it; `fees::tests` covers u64::MAX itself.
    for amount_usdc in [1, 99, 100, 101, 1_234_567, u64::MAX - MIN_COLLATERAL_USDC] {
        // A market without a price floor, so that the smallest amounts can be listed.
        let mut t = TestMarket::with_params(MarketParams {
            min_price_per_call_usdc: 1,
            ..market_params()
        });
        let agent = t.agent_with(Pricing::PayPerUse {
            price_usdc: amount_usdc,
        });
        let payer = t.payer(amount_usdc, amount_usdc);
        let (result, escrow) = t.open(&agent, &payer);
        ok(result);
        let creator_before = t.balance(&agent.payout_account);
        ok(t.settle(&escrow, &agent));
        let creator_share = t.balance(&agent.payout_account) - creator_before;
        let fee = t.balance(&pda::fee_shard(0));
        assert_eq!(fee, amount_usdc / 100, "amount {amount_usdc}");
        assert_eq!(
            creator_share.checked_add(fee),
            Some(amount_usdc),
            "amount {amount_usdc}"
        );
        assert_eq!(split(amount_usdc).fee_usdc, fee);
        assert_eq!(t.balance(&payer.token_account), 0);
    }
}

#[test]
fn refund_returns_the_escrow_to_the_payer() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    let meta = ok(t.refund(&escrow, false));
    assert_eq!(t.balance(&payer.token_account), USDC);
    assert_eq!(t.balance(&pda::escrow_vault(&agent.address)), 0);
    assert!(t.chain.account(&pda::escrow(&escrow.execution_id)).is_none());
    let refunded = events::<events::EscrowRefunded>(&meta);
    assert_eq!(refunded.len(), 1);
    assert_eq!(refunded[0].reason, RefundReason::CreatorError);
    assert_eq!(refunded[0].amount_usdc, PRICE_USDC);
}

#[test]
fn payer_reclaims_an_unsettled_escrow_only_after_its_deadline() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    let reclaim = t.market.keys.reclaim(&escrow, false);

    t.chain.advance_clock(i64::from(MAX_EXECUTION_SECS + ESCROW_GRACE_SECS));
    let result = t.chain.send(&[reclaim.clone()], &payer.wallet, &[]);
    assert_program_error(&result, AgentMarketError::EscrowNotExpired);
    assert_eq!(t.balance(&payer.token_account), USDC - PRICE_USDC);

    // Once the deadline has passed the relayer can no longer settle, and the payer can reclaim.
    t.chain.advance_clock(1);
    let result = t.settle(&escrow, &agent);
    assert_program_error(&result, AgentMarketError::EscrowExpired);
    let meta = ok(t.chain.send(&[reclaim], &payer.wallet, &[]));
    assert_eq!(t.balance(&payer.token_account), USDC);
    assert!(t.chain.account(&pda::escrow(&escrow.execution_id)).is_none());
    assert_eq!(events::<events::EscrowReclaimed>(&meta).len(), 1);
}

#[test]
fn subscription_pays_the_period_at_once_and_covers_calls_until_it_expires() {
    let mut t = TestMarket::new();
    let period_price = 10 * USDC;
    let period_secs = 30 * 24 * 3600;
    let agent = t.agent_with(Pricing::Subscription {
        period_price_usdc: period_price,
        period_secs,
    });
    let payer = t.payer(25 * USDC, 25 * USDC);

    // No subscription yet: the call is refused, nothing moves.
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::SubscriptionRequired);

    let creator_before = t.balance(&agent.payout_account);
    let subscribe = t.market.keys.subscribe(
        agent.address,
        payer.wallet.pubkey(),
        payer.token_account,
        agent.payout_account,
        3,
        period_price,
    );
    let meta = ok(t.send_as_relayer(&[subscribe.clone()]));
    assert_eq!(t.balance(&payer.token_account), 15 * USDC);
    assert_eq!(
        t.balance(&agent.payout_account),
        creator_before + period_price - period_price / 100
    );
    assert_eq!(t.balance(&pda::fee_shard(3)), period_price / 100);
    let subscription: Subscription = t
        .chain
        .anchor_account(&pda::subscription(&agent.address, &payer.wallet.pubkey()))
        .unwrap();
    assert_eq!(subscription.expires_at, t.chain.now() + i64::from(period_secs));
    assert_eq!(events::<events::Subscribed>(&meta).len(), 1);

    // Covered calls open zero-amount escrows, so every execution is still recorded on-chain.
    let (result, escrow) = t.open(&agent, &payer);
    let meta = ok(result);
    assert_eq!(events::<events::EscrowOpened>(&meta)[0].amount_usdc, 0);
    ok(t.settle(&escrow, &agent));
    assert_eq!(t.balance(&payer.token_account), 15 * USDC);

    // A second period extends the first.
    ok(t.send_as_relayer(&[subscribe]));
    let extended: Subscription = t
        .chain
        .anchor_account(&pda::subscription(&agent.address, &payer.wallet.pubkey()))
        .unwrap();
    assert_eq!(extended.expires_at, subscription.expires_at + i64::from(period_secs));

    t.chain.advance_clock(2 * i64::from(period_secs));
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::SubscriptionRequired);
}

#[test]
fn hybrid_covers_included_calls_then_charges_overage_and_gives_back_refunded_calls() {
    let mut t = TestMarket::new();
    let overage = 300_000;
    let agent = t.agent_with(Pricing::Hybrid {
        period_price_usdc: 5 * USDC,
        period_secs: 3600,
        included_calls: 2,
        overage_price_usdc: overage,
    });
    let payer = t.payer(10 * USDC, 10 * USDC);

    // Without a subscription, a hybrid call pays the overage price.
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC - overage);
    ok(t.refund(&escrow, false));

    let subscribe = t.market.keys.subscribe(
        agent.address,
        payer.wallet.pubkey(),
        payer.token_account,
        agent.payout_account,
        1,
        5 * USDC,
    );
    ok(t.send_as_relayer(&[subscribe]));
    assert_eq!(t.balance(&payer.token_account), 5 * USDC);

    let (result, first) = t.open(&agent, &payer);
    ok(result);
    // A refunded covered call gives its included call back.
    ok(t.refund(&first, true));
    for _ in 0..2 {
        let (result, escrow) = t.open(&agent, &payer);
        ok(result);
        ok(t.settle(&escrow, &agent));
    }
    assert_eq!(t.balance(&payer.token_account), 5 * USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    let stored: Escrow = t.chain.anchor_account(&pda::escrow(&escrow.execution_id)).unwrap();
    assert_eq!(stored.amount_usdc, overage);
    assert_eq!(t.balance(&payer.token_account), 5 * USDC - overage);
}

#[test]
fn upheld_dispute_slashes_collateral_capped_and_blocks_withdrawal_while_open() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    let mut mirror = LogMirror::default();
    mirror.add(&ok(t.settle(&escrow, &agent)));

    let open_dispute = t.dispute_ix(&agent, &mirror, 0, [4; 32]);
    let meta = ok(t.chain.send(&[open_dispute.clone()], &payer.wallet, &[]));
    assert_eq!(events::<events::DisputeOpened>(&meta).len(), 1);
    let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
    assert_eq!(stored.open_disputes, 1);

    // Retired and past the cooldown, the creator still cannot withdraw while the dispute is open.
    let creator = agent.creator.wallet.insecure_clone();
    ok(t.chain.send(
        &[t.market.keys.retire_agent(creator.pubkey(), agent.address)],
        &creator,
        &[],
    ));
    t.chain.advance_clock(i64::from(COLLATERAL_COOLDOWN_SECS));
    let withdraw = t
        .market
        .keys
        .withdraw_collateral(creator.pubkey(), agent.address, agent.creator.token_account);
    assert_program_error(
        &t.chain.send(&[withdraw.clone()], &creator, &[]),
        AgentMarketError::OpenDisputes,
    );

    let payer_before = t.balance(&payer.token_account);
    let arbiter = t.market.arbiter.insecure_clone();
    let resolve = t
        .market
        .keys
        .resolve_dispute(agent.address, 0, payer.token_account, true, 1_000 * USDC);
    let meta = ok(t.chain.send(&[resolve.clone()], &arbiter, &[]));
    let resolved = events::<events::DisputeResolved>(&meta);
    assert_eq!(
        (resolved[0].upheld, resolved[0].slashed_usdc),
        (true, MIN_COLLATERAL_USDC)
    );
    assert_eq!(t.balance(&payer.token_account), payer_before + MIN_COLLATERAL_USDC);
    assert_eq!(t.balance(&pda::collateral_vault(&agent.address)), 0);
    let dispute: Dispute = t.chain.anchor_account(&pda::dispute(&agent.address, 0)).unwrap();
    assert_eq!((dispute.resolved, dispute.upheld, dispute.execution_id), (true, true, escrow.execution_id));
    // A resolved settlement cannot be disputed again, nor a dispute resolved twice.
    assert_program_error(
        &t.chain.send(&[open_dispute], &payer.wallet, &[]),
        AgentMarketError::AlreadyDisputed,
    );
    t.chain.advance_clock(1);
    assert_program_error(
        &t.chain.send(&[resolve], &arbiter, &[]),
        AgentMarketError::DisputeAlreadyResolved,
    );

    let creator_before = t.balance(&agent.creator.token_account);
    ok(t.chain.send(&[withdraw], &creator, &[]));
    assert_eq!(t.balance(&agent.creator.token_account), creator_before);
}

#[test]
fn rejected_dispute_slashes_nothing_and_disputes_close_with_the_window() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let mut mirror = LogMirror::default();
    for _ in 0..2 {
        let (result, escrow) = t.open(&agent, &payer);
        ok(result);
        mirror.add(&ok(t.settle(&escrow, &agent)));
    }

    let payer_lamports = t.chain.lamports(&payer.wallet.pubkey());
    ok(t.chain.send(&[t.dispute_ix(&agent, &mirror, 0, [4; 32])], &payer.wallet, &[]));
    let dispute_rent = t.chain.lamports(&pda::dispute(&agent.address, 0));
    assert_eq!(t.chain.lamports(&payer.wallet.pubkey()), payer_lamports - dispute_rent - 5_000);
    let arbiter = t.market.arbiter.insecure_clone();
    let stranger = t.chain.funded_keypair(SOL);
    let close = t.market.keys.close_dispute(agent.address, 0, payer.wallet.pubkey());
    assert_program_error(
        &t.chain.send(&[close.clone()], &stranger, &[]),
        AgentMarketError::DisputeNotResolved,
    );
    let reject = t.market.keys.resolve_dispute(agent.address, 0, payer.token_account, false, 0);
    let payer_before = t.balance(&payer.token_account);
    ok(t.chain.send(&[reject], &arbiter, &[]));
    assert_eq!(t.balance(&payer.token_account), payer_before);
    assert_eq!(t.balance(&pda::collateral_vault(&agent.address)), MIN_COLLATERAL_USDC);

    // Resolved, the record stays while the leaf could still be disputed.
    assert_program_error(
        &t.chain.send(&[close.clone()], &stranger, &[]),
        AgentMarketError::DisputeWindowOpen,
    );
    t.chain.advance_clock(i64::from(DISPUTE_WINDOW_SECS) + 1);
    let late = t.dispute_ix(&agent, &mirror, 1, [4; 32]);
    assert_program_error(
        &t.chain.send(&[late], &payer.wallet, &[]),
        AgentMarketError::DisputeWindowClosed,
    );

    // Anyone may close it then, and the rent goes to the payer who paid it.
    let payer_lamports = t.chain.lamports(&payer.wallet.pubkey());
    let meta = ok(t.chain.send(&[close], &stranger, &[]));
    assert_eq!(events::<events::DisputeClosed>(&meta).len(), 1);
    assert_eq!(t.chain.lamports(&payer.wallet.pubkey()), payer_lamports + dispute_rent);
    assert!(t.chain.account(&pda::dispute(&agent.address, 0)).is_none());
}

#[test]
fn creator_tops_up_updates_retires_and_withdraws_after_the_cooldown() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let creator = agent.creator.wallet.insecure_clone();
    t.chain.mint_to(
        &t.market.mint_authority.insecure_clone(),
        &t.usdc_mint(),
        &agent.creator.token_account,
        50 * USDC,
    );

    let top_up =
        t.market
            .keys
            .top_up_collateral(creator.pubkey(), agent.address, agent.creator.token_account, 50 * USDC);
    ok(t.chain.send(&[top_up], &creator, &[]));
    assert_eq!(t.balance(&pda::collateral_vault(&agent.address)), 150 * USDC);

    let new_signing = solana_keypair::Keypair::new();
    let update = t.update_ix(
        &agent,
        agent.payout_account,
        terms(&new_signing, Pricing::PayPerUse { price_usdc: 2 * USDC }),
    );
    let proof = signing_key_proof_ix(&new_signing, &agent.address, &creator.pubkey());
    ok(t.chain.send(&[proof, update], &creator, &[]));
    let payer = t.payer(5 * USDC, 5 * USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    assert_eq!(t.balance(&payer.token_account), 3 * USDC);
    // Results must now be signed by the new key.
    t.ensure_receipt_log(&agent.address);
    let old_key = t.settle_ixs(&escrow, &agent.signing, agent.payout_account, 0);
    assert_program_error(&t.send_as_relayer(&old_key), AgentMarketError::SignerKeyMismatch);
    let new_key = t.settle_ixs(&escrow, &new_signing, agent.payout_account, 0);
    ok(t.send_as_relayer(&new_key));

    ok(t.chain.send(
        &[t.market.keys.retire_agent(creator.pubkey(), agent.address)],
        &creator,
        &[],
    ));
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::AgentRetired);

    let withdraw = t
        .market
        .keys
        .withdraw_collateral(creator.pubkey(), agent.address, agent.creator.token_account);
    t.chain.advance_clock(i64::from(COLLATERAL_COOLDOWN_SECS) - 1);
    assert_program_error(
        &t.chain.send(&[withdraw.clone()], &creator, &[]),
        AgentMarketError::CollateralCooldownActive,
    );
    t.chain.advance_clock(1);
    let before = t.balance(&agent.creator.token_account);
    ok(t.chain.send(&[withdraw], &creator, &[]));
    assert_eq!(t.balance(&agent.creator.token_account), before + 150 * USDC);
    assert_eq!(t.balance(&pda::collateral_vault(&agent.address)), 0);
}

#[test]
fn paused_market_refuses_new_escrows() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let params = agent_market::MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        escrows_paused: true,
        ..market_params()
    };
    let authority = t.market.authority.insecure_clone();
    ok(t.chain.send(
        &[t.market.keys.update_market(params, authority.pubkey())],
        &authority,
        &[],
    ));
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::EscrowsPaused);
    assert_eq!(t.balance(&payer.token_account), USDC);
}

#[test]
fn sweep_moves_a_fee_shard_to_the_treasury() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(USDC, USDC);
    let (result, escrow) = t.open(&agent, &payer);
    ok(result);
    ok(t.settle(&escrow, &agent));
    let fee = PRICE_USDC / 100;
    let anyone = t.chain.funded_keypair(SOL);
    let meta = ok(t.chain.send(&[t.market.keys.sweep_fees(0)], &anyone, &[]));
    assert_eq!(t.balance(&pda::fee_shard(0)), 0);
    assert_eq!(t.balance(&t.market.keys.treasury), fee);
    assert_eq!(events::<events::FeesSwept>(&meta)[0].amount_usdc, fee);
}
