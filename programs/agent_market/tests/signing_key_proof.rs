//! Proof of possession of an agent's signing key: `register_agent`, and `update_agent` when it
//! sets a new key, need the key's signature over the signing-key proof of that agent and creator,
//! so no one can list a stranger's key and endpoint with their own payout account (agent cloning).
mod common;

use agent_market::{error::AgentMarketError, Agent, Pricing};
use anchor_lang::prelude::Pubkey;
use common::*;
use litesvm::types::TransactionResult;
use localnet::market::pda;
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_signer::Signer;

fn pay_per_use() -> Pricing {
    Pricing::PayPerUse { price_usdc: PRICE_USDC }
}

/// Registers a new agent whose key is `signing`, with `proof` (if any) before the instruction;
/// asserts that a refused registration took none of the creator's USDC and created no agent.
fn register_with(
    t: &mut TestMarket,
    signing: &Keypair,
    proof: impl FnOnce(&Pubkey, &Pubkey) -> Option<Instruction>,
) -> (TransactionResult, Pubkey) {
    let creator = t.creator(MIN_COLLATERAL_USDC);
    let agent_id = random_id();
    let agent = pda::agent(&agent_id);
    let register = t.market.keys.register_agent(
        creator.wallet.pubkey(),
        agent_id,
        creator.token_account,
        creator.token_account,
        creator.wallet.pubkey(),
        terms(signing, pay_per_use()),
        MIN_COLLATERAL_USDC,
    );
    let instructions: Vec<Instruction> = proof(&agent, &creator.wallet.pubkey())
        .into_iter()
        .chain([register])
        .collect();
    let result = t.chain.send(&instructions, &creator.wallet, &[]);
    if result.is_err() {
        assert_eq!(t.balance(&creator.token_account), MIN_COLLATERAL_USDC);
        assert!(t.chain.account(&agent).is_none());
    }
    (result, agent)
}

#[test]
fn register_agent_with_the_keys_proof_succeeds() {
    let mut t = TestMarket::new();
    let signing = Keypair::new();
    let (result, address) = register_with(&mut t, &signing, |agent, creator| {
        Some(signing_key_proof_ix(&signing, agent, creator))
    });
    ok(result);
    let agent: Agent = t.chain.anchor_account(&address).unwrap();
    assert_eq!(agent.signing_key, signing.pubkey().to_bytes());
}

#[test]
fn register_agent_without_a_proof_is_refused() {
    let mut t = TestMarket::new();
    let signing = Keypair::new();
    let (result, _) = register_with(&mut t, &signing, |_, _| None);
    assert_program_error(&result, AgentMarketError::MissingSigningKeyProof);
}

#[test]
fn register_agent_with_a_proof_by_another_key_is_refused() {
    let mut t = TestMarket::new();
    let victim_key = Keypair::new();
    let own_key = Keypair::new();
    let (result, _) = register_with(&mut t, &victim_key, |agent, creator| {
        Some(signing_key_proof_ix(&own_key, agent, creator))
    });
    assert_program_error(&result, AgentMarketError::SigningKeyProofKeyMismatch);
}

#[test]
fn register_agent_replaying_the_victims_proof_for_another_agent_or_creator_is_refused() {
    // The clone: the victim's listing is public, and so is the proof in its registration; it names
    // the victim's agent and wallet, so it proves nothing for the cloner's.
    let mut t = TestMarket::new();
    let victim = t.agent();
    let victim_proof = signing_key_proof_ix(&victim.signing, &victim.address, &victim.creator.wallet.pubkey());
    let (result, _) = register_with(&mut t, &victim.signing, |_, _| Some(victim_proof.clone()));
    assert_program_error(&result, AgentMarketError::SigningKeyProofDigestMismatch);

    let (result, _) = register_with(&mut t, &victim.signing, |agent, _| {
        Some(signing_key_proof_ix(
            &victim.signing,
            agent,
            &victim.creator.wallet.pubkey(),
        ))
    });
    assert_program_error(&result, AgentMarketError::SigningKeyProofDigestMismatch);

    let (result, _) = register_with(&mut t, &victim.signing, |_, creator| {
        Some(signing_key_proof_ix(&victim.signing, &victim.address, creator))
    });
    assert_program_error(&result, AgentMarketError::SigningKeyProofDigestMismatch);
}

fn update_to(
    t: &mut TestMarket,
    agent: &AgentFixture,
    new_key: &Keypair,
    proof: Option<Instruction>,
) -> TransactionResult {
    let update = t.update_ix(agent, agent.payout_account, terms(new_key, pay_per_use()));
    let instructions: Vec<Instruction> = proof.into_iter().chain([update]).collect();
    let creator = agent.creator.wallet.insecure_clone();
    t.chain.send(&instructions, &creator, &[])
}

fn stored_key(t: &TestMarket, agent: &AgentFixture) -> [u8; 32] {
    let stored: Agent = t.chain.anchor_account(&agent.address).unwrap();
    stored.signing_key
}

#[test]
fn update_agent_setting_a_new_key_without_its_proof_is_refused_and_keeps_the_key() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let new_key = Keypair::new();
    let result = update_to(&mut t, &agent, &new_key, None);
    assert_program_error(&result, AgentMarketError::MissingSigningKeyProof);
    assert_eq!(stored_key(&t, &agent), agent.signing.pubkey().to_bytes());

    // The old key's proof does not vouch for the new one.
    let old_proof = signing_key_proof_ix(&agent.signing, &agent.address, &agent.creator.wallet.pubkey());
    let result = update_to(&mut t, &agent, &new_key, Some(old_proof));
    assert_program_error(&result, AgentMarketError::SigningKeyProofKeyMismatch);
    assert_eq!(stored_key(&t, &agent), agent.signing.pubkey().to_bytes());
}

#[test]
fn update_agent_setting_a_new_key_with_its_proof_succeeds() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let new_key = Keypair::new();
    let proof = signing_key_proof_ix(&new_key, &agent.address, &agent.creator.wallet.pubkey());
    ok(update_to(&mut t, &agent, &new_key, Some(proof)));
    assert_eq!(stored_key(&t, &agent), new_key.pubkey().to_bytes());
}

#[test]
fn update_agent_keeping_the_key_needs_no_proof() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let same_key = agent.signing.insecure_clone();
    ok(update_to(&mut t, &agent, &same_key, None));
    assert_eq!(stored_key(&t, &agent), agent.signing.pubkey().to_bytes());
}
