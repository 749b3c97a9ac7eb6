//! Accounts of the wrong type, accounts initialised twice and signatures left out: each asserts
//! the exact error and that no balance or state moved.
mod common;

use agent_market::{Agent, Market};
use anchor_lang::{error::ErrorCode, prelude::Pubkey};
use common::{scene::*, *};
use localnet::market::pda;
use solana_instruction::{error::InstructionError, Instruction};
use solana_signer::Signer;
use solana_transaction_error::TransactionError;

/// Clears the signer flag of `key` in `instruction`, as if its holder had not signed.
fn unsigned(mut instruction: Instruction, key: Pubkey) -> Instruction {
    instruction
        .accounts
        .iter_mut()
        .filter(|meta| meta.pubkey == key)
        .for_each(|meta| meta.is_signer = false);
    instruction
}

/// The system program's AccountAlreadyInUse, raised by `init` on an account that exists.
fn assert_already_in_use(result: &litesvm::types::TransactionResult) {
    assert!(
        matches!(result, Err(failed) if matches!(failed.err, TransactionError::InstructionError(_, InstructionError::Custom(0)))),
        "expected AccountAlreadyInUse, got {result:?}"
    );
}

#[test]
fn an_agent_passed_where_an_escrow_is_expected_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        replace_account(
            &mut instructions[1],
            pda::escrow(&s.escrow.execution_id),
            s.agent.address,
        );
        s.t.send_as_relayer(&instructions)
    });
    assert_anchor_error(&result, ErrorCode::AccountDiscriminatorMismatch);
    let agent: Agent = s.t.chain.anchor_account(&s.agent.address).unwrap();
    assert_eq!(agent.agent_id, s.agent.agent_id);
}

#[test]
fn re_initialising_the_market_fails_and_keeps_it() {
    let mut s = Scene::new();
    let before: Market = s.t.chain.anchor_account(&pda::market()).unwrap();
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let mut keys = s.t.market.keys.clone();
        keys.authority = outsider.pubkey();
        let params = agent_market::MarketParams {
            relayer: outsider.pubkey(),
            arbiter: outsider.pubkey(),
            ..market_params()
        };
        s.t.chain.send(&[keys.initialize_market(params)], &outsider, &[])
    });
    assert_already_in_use(&result);
    let after: Market = s.t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(after.authority, before.authority);
    assert_eq!(after.relayer, before.relayer);
    assert_eq!(after.arbiter, before.arbiter);
}

#[test]
fn re_registering_an_agent_id_fails_and_keeps_the_agent() {
    let mut s = Scene::new();
    let intruder = s.t.creator(MIN_COLLATERAL_USDC);
    s.watched.push(intruder.token_account);
    let agent_id = s.agent.agent_id;
    let result = s.unchanged(|s| {
        let intruder_wallet = intruder.wallet.insecure_clone();
        let proof = signing_key_proof_ix(&intruder_wallet, &s.agent.address, &intruder_wallet.pubkey());
        let register = s.t.market.keys.register_agent(
            intruder_wallet.pubkey(),
            agent_id,
            intruder.token_account,
            intruder.token_account,
            intruder_wallet.pubkey(),
            terms(
                &intruder_wallet,
                agent_market::Pricing::PayPerUse { price_usdc: PRICE_USDC },
            ),
            MIN_COLLATERAL_USDC,
        );
        s.t.chain.send(&[proof, register], &intruder_wallet, &[])
    });
    assert_already_in_use(&result);
    let agent: Agent = s.t.chain.anchor_account(&s.agent.address).unwrap();
    assert_eq!(agent.creator, s.agent.creator.wallet.pubkey());
    assert_eq!(agent.payout_account, s.agent.payout_account);
    assert_eq!(agent.signing_key, s.agent.signing.pubkey().to_bytes());
}

#[test]
fn settle_without_the_relayer_signature_fails() {
    let mut s = Scene::new();
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        instructions[1] = unsigned(instructions[1].clone(), s.t.relayer().pubkey());
        s.t.chain.send(&instructions, &outsider, &[])
    });
    assert_anchor_error(&result, ErrorCode::AccountNotSigner);
    assert!(s.t.chain.account(&pda::escrow(&s.escrow.execution_id)).is_some());
}

#[test]
fn resolve_dispute_without_the_arbiter_signature_fails() {
    let mut s = Scene::new();
    s.settle_and_dispute();
    let payer = s.payer.wallet.insecure_clone();
    let result = s.unchanged(|s| {
        let instruction =
            s.t.market
                .keys
                .resolve_dispute(s.agent.address, 0, s.payer.token_account, true, MIN_COLLATERAL_USDC);
        let instruction = unsigned(instruction, s.t.market.arbiter.pubkey());
        s.t.chain.send(&[instruction], &payer, &[])
    });
    assert_anchor_error(&result, ErrorCode::AccountNotSigner);
    let dispute: agent_market::Dispute = s.t.chain.anchor_account(&pda::dispute(&s.agent.address, 0)).unwrap();
    assert!(!dispute.resolved);
    let agent: Agent = s.t.chain.anchor_account(&s.agent.address).unwrap();
    assert_eq!((agent.open_disputes, agent.collateral_usdc), (1, MIN_COLLATERAL_USDC));
}

#[test]
fn withdraw_collateral_without_the_creator_signature_fails() {
    let mut s = Scene::new();
    let creator = s.agent.creator.wallet.insecure_clone();
    ok(s.t.chain.send(
        &[s.t.market.keys.retire_agent(creator.pubkey(), s.agent.address)],
        &creator,
        &[],
    ));
    s.t.chain.advance_clock(i64::from(COLLATERAL_COOLDOWN_SECS) + 1);
    s.watched.push(s.agent.creator.token_account);
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let instruction =
            s.t.market
                .keys
                .withdraw_collateral(creator.pubkey(), s.agent.address, s.agent.creator.token_account);
        let instruction = unsigned(instruction, creator.pubkey());
        s.t.chain.send(&[instruction], &outsider, &[])
    });
    assert_anchor_error(&result, ErrorCode::AccountNotSigner);
    let agent: Agent = s.t.chain.anchor_account(&s.agent.address).unwrap();
    assert_eq!(agent.collateral_usdc, MIN_COLLATERAL_USDC);
}
