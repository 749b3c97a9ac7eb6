//! Who holds the market: only the program's upgrade authority creates it, so nobody can take it
//! between a deploy and the deployer's `initialize_market`, and `update_market` hands it over in
//! two steps, the proposed key accepting.
mod common;

use agent_market::{error::AgentMarketError, events, Market};
use anchor_lang::error::ErrorCode;
use common::*;
use localnet::{
    chain::{events, Chain, MarketKeypairs, MarketSetup},
    market::pda,
};
use solana_account::Account;
use solana_keypair::Keypair;
use solana_signer::Signer;

/// A chain with the program deployed by `MarketKeypairs::authority`, the mint and the treasury,
/// and no market yet.
fn deployed() -> (Chain, MarketSetup) {
    let mut chain = Chain::new();
    let setup = MarketSetup::mint_only(&mut chain, MarketKeypairs::random());
    (chain, setup)
}

/// `initialize_market` sent by `signer` as authority, with this program data account.
fn initialize_as(chain: &mut Chain, setup: &MarketSetup, signer: &Keypair) -> litesvm::types::TransactionResult {
    let mut keys = setup.keys.clone();
    keys.authority = signer.pubkey();
    let params = agent_market::MarketParams {
        relayer: setup.relayer.pubkey(),
        arbiter: setup.arbiter.pubkey(),
        ..market_params()
    };
    chain.send(&[keys.initialize_market(params)], signer, &[])
}

#[test]
fn only_the_upgrade_authority_initializes_the_market() {
    let (mut chain, setup) = deployed();
    let front_runner = chain.funded_keypair(10 * SOL);
    let result = initialize_as(&mut chain, &setup, &front_runner);
    assert_program_error(&result, AgentMarketError::NotUpgradeAuthority);
    assert!(chain.account(&pda::market()).is_none());
    // Only the failed transaction's fee left the front-runner: no market rent was taken.
    assert_eq!(chain.lamports(&front_runner.pubkey()), 10 * SOL - 5_000);

    let authority = setup.authority.insecure_clone();
    ok(initialize_as(&mut chain, &setup, &authority));
    let market: Market = chain.anchor_account(&pda::market()).expect("market");
    assert_eq!(market.authority, authority.pubkey());
    assert_eq!(market.pending_authority, Default::default());
}

#[test]
fn a_program_data_account_at_another_address_is_refused() {
    let (mut chain, setup) = deployed();
    let front_runner = chain.funded_keypair(10 * SOL);
    // A look-alike ProgramData account naming the front-runner, owned by the loader.
    let genuine = chain.svm.get_account(&pda::program_data()).expect("program data");
    let mut forged_data = genuine.data.clone();
    forged_data[13..45].copy_from_slice(front_runner.pubkey().as_ref());
    let forged = Keypair::new().pubkey();
    chain
        .svm
        .set_account(
            forged,
            Account {
                data: forged_data,
                ..genuine
            },
        )
        .unwrap();
    let mut instruction = {
        let mut keys = setup.keys.clone();
        keys.authority = front_runner.pubkey();
        keys.initialize_market(market_params())
    };
    scene::replace_account(&mut instruction, pda::program_data(), forged);
    let result = chain.send(&[instruction], &front_runner, &[]);
    assert_anchor_error(&result, ErrorCode::ConstraintSeeds);
    assert!(chain.account(&pda::market()).is_none());
}

#[test]
fn an_immutable_program_has_no_authority_to_initialize_the_market() {
    let (mut chain, setup) = deployed();
    chain.set_upgrade_authority(None);
    let authority = setup.authority.insecure_clone();
    let result = initialize_as(&mut chain, &setup, &authority);
    assert_program_error(&result, AgentMarketError::NotUpgradeAuthority);
    assert!(chain.account(&pda::market()).is_none());
}

#[test]
fn update_market_proposes_and_only_the_proposed_key_accepts() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    let proposed = t.chain.funded_keypair(SOL);
    let outsider = t.chain.funded_keypair(SOL);
    let params = agent_market::MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        ..market_params()
    };
    let meta = ok(t.chain.send(
        &[t.market.keys.update_market(params.clone(), proposed.pubkey())],
        &authority,
        &[],
    ));
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.authority, authority.pubkey(), "a proposal hands nothing over");
    assert_eq!(market.pending_authority, proposed.pubkey());
    let updated = events::<events::MarketUpdated>(&meta);
    assert_eq!(updated[0].authority, authority.pubkey());
    assert_eq!(updated[0].pending_authority, proposed.pubkey());

    // Nobody but the proposed key accepts.
    let result = t.chain.send(
        &[t.market.keys.accept_market_authority(outsider.pubkey())],
        &outsider,
        &[],
    );
    assert_program_error(&result, AgentMarketError::NotProposedAuthority);
    let unchanged: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(unchanged.authority, authority.pubkey());
    assert_eq!(unchanged.pending_authority, proposed.pubkey());

    let meta = ok(t.chain.send(
        &[t.market.keys.accept_market_authority(proposed.pubkey())],
        &proposed,
        &[],
    ));
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.authority, proposed.pubkey());
    assert_eq!(market.pending_authority, Default::default());
    let accepted = events::<events::MarketAuthorityAccepted>(&meta);
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0].previous_authority, authority.pubkey());
    assert_eq!(accepted[0].authority, proposed.pubkey());

    // The old authority no longer can, and the proposal cannot be accepted twice.
    let result = t.chain.send(
        &[t.market.keys.update_market(params, authority.pubkey())],
        &authority,
        &[],
    );
    assert_program_error(&result, AgentMarketError::NotMarketAuthority);
    let result = t.chain.send(
        &[t.market.keys.accept_market_authority(proposed.pubkey())],
        &proposed,
        &[],
    );
    assert_program_error(&result, AgentMarketError::NotProposedAuthority);
}

#[test]
fn proposing_the_current_authority_withdraws_a_proposal() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    let proposed = t.chain.funded_keypair(SOL);
    let params = agent_market::MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        ..market_params()
    };
    for new_authority in [proposed.pubkey(), authority.pubkey()] {
        ok(t.chain.send(
            &[t.market.keys.update_market(params.clone(), new_authority)],
            &authority,
            &[],
        ));
    }
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.pending_authority, Default::default());
    let result = t.chain.send(
        &[t.market.keys.accept_market_authority(proposed.pubkey())],
        &proposed,
        &[],
    );
    assert_program_error(&result, AgentMarketError::NotProposedAuthority);
    let market: Market = t.chain.anchor_account(&pda::market()).unwrap();
    assert_eq!(market.authority, authority.pubkey());
}
