//! A creator's signature settles the one escrow it was given for (execute protocol version 2):
//! the same execution id opened again, for another payer, after a settlement or after a refund,
//! needs a signature of its own, and every settlement of a reused id is its own leaf, disputable
//! on its own. Each refusal leaves every balance as it was.
mod common;

use agent_market::{error::AgentMarketError, events, Dispute};
use anchor_lang::prelude::Pubkey;
use common::{
    batch::{batch_verification, LogMirror, Signing},
    *,
};
use localnet::{
    chain::{events, USDC},
    market::{pda, EscrowRef},
};
use solana_signer::Signer;

struct Reuse {
    t: TestMarket,
    agent: AgentFixture,
    execution_id: [u8; 16],
    mirror: LogMirror,
}

impl Reuse {
    fn new() -> Self {
        let mut t = TestMarket::new();
        let agent = t.agent();
        t.ensure_receipt_log(&agent.address);
        Reuse {
            t,
            agent,
            execution_id: random_id(),
            mirror: LogMirror::default(),
        }
    }

    fn open(&mut self, payer: &Payer) -> EscrowRef {
        let (result, escrow) = self.t.open_id(&self.agent, payer, self.execution_id);
        ok(result);
        escrow
    }

    /// The creator's signature for `escrow` as it stands: what it answers the relayer.
    fn sign(&self, escrow: &EscrowRef) -> ([u8; 64], [u8; 32]) {
        let digest = self.t.digest_of(escrow, 0);
        (self.agent.signing.sign_message(&digest).into(), digest)
    }

    /// Settles `escrow` alone under `signed`, whichever escrow it was made for.
    fn settle_under(&mut self, escrow: &EscrowRef, (signature, digest): ([u8; 64], [u8; 32])) -> litesvm::types::TransactionResult {
        let key = self.agent.signing.pubkey();
        let instructions = self
            .t
            .settle_ixs_with(escrow, signature, &key, &digest, self.agent.payout_account, 0);
        let result = self.t.send_as_relayer(&instructions);
        if let Ok(meta) = &result {
            self.mirror.add(meta);
        }
        result
    }

    fn watched(&self, payers: &[&Payer]) -> Vec<Pubkey> {
        let mut watched = vec![
            pda::escrow_vault(&self.agent.address),
            self.agent.payout_account,
            pda::fee_shard(0),
        ];
        watched.extend(payers.iter().map(|payer| payer.token_account));
        watched
    }
}

#[test]
fn a_signature_given_for_one_payer_does_not_settle_the_id_opened_again_for_another() {
    let mut s = Reuse::new();
    let a = s.t.payer(10 * USDC, 10 * USDC);
    let b = s.t.payer(10 * USDC, 10 * USDC);
    let escrow_a = s.open(&a);
    let signed_for_a = s.sign(&escrow_a);
    let batch_signed_for_a =
        batch_verification(&s.t, &s.agent.signing, &s.agent.address, &[escrow_a.clone()], Signing::Batch);
    ok(s.settle_under(&escrow_a, signed_for_a));

    // The relayer opens the same execution id again, charging B, and presents A's signature.
    let escrow_b = s.open(&b);
    let watched = s.watched(&[&a, &b]);
    let before = s.t.balances(&watched);
    let result = s.settle_under(&escrow_b, signed_for_a);
    assert_program_error(&result, AgentMarketError::DigestMismatch);
    // The same signature inside a batch signature over A's digest is refused alike.
    let mut instructions = s.t.settle_ixs(&escrow_b, &s.agent.signing, s.agent.payout_account, 0);
    instructions[0] = batch_signed_for_a;
    assert_program_error(&s.t.send_as_relayer(&instructions), AgentMarketError::DigestMismatch);
    assert_eq!(s.t.balances(&watched), before, "balances moved");

    // B's escrow goes back to B whole; B was never charged for A's result.
    ok(s.t.refund(&escrow_b, false));
    assert_eq!(s.t.balance(&b.token_account), 10 * USDC);
}

#[test]
fn a_reused_id_settles_only_under_a_new_signature_and_each_settlement_is_disputable() {
    let mut s = Reuse::new();
    let payer = s.t.payer(10 * USDC, 10 * USDC);
    let first = s.open(&payer);
    let first_signature = s.sign(&first);
    ok(s.settle_under(&first, first_signature));

    let second = s.open(&payer);
    let watched = s.watched(&[&payer]);
    let before = s.t.balances(&watched);
    assert_program_error(&s.settle_under(&second, first_signature), AgentMarketError::DigestMismatch);
    assert_eq!(s.t.balances(&watched), before, "balances moved");
    let second_signature = s.sign(&second);
    ok(s.settle_under(&second, second_signature));

    // Two leaves of one execution id, with their own nonces: neither shadows the other.
    let nonces: Vec<u64> = s.mirror.leaves.iter().map(|leaf| leaf.nonce).collect();
    assert_eq!(nonces, [0, 1]);
    assert!(s.mirror.leaves.iter().all(|leaf| leaf.execution_id == s.execution_id));
    for leaf_index in 0..2 {
        let instruction = s.t.dispute_ix(&s.agent, &s.mirror, leaf_index, [3; 32]);
        let meta = ok(s.t.chain.send(&[instruction], &payer.wallet, &[]));
        let opened = events::<events::DisputeOpened>(&meta);
        assert_eq!((opened[0].leaf_index, opened[0].execution_id), (leaf_index as u64, s.execution_id));
        let dispute: Dispute = s
            .t
            .chain
            .anchor_account(&pda::dispute(&s.agent.address, leaf_index as u64))
            .unwrap();
        assert_eq!((dispute.amount_usdc, dispute.resolved), (PRICE_USDC, false));
    }
}

#[test]
fn a_signature_made_before_a_refund_does_not_settle_the_id_opened_again() {
    let mut s = Reuse::new();
    let payer = s.t.payer(10 * USDC, 10 * USDC);
    let refunded = s.open(&payer);
    let signed_before_refund = s.sign(&refunded);
    ok(s.t.refund(&refunded, false));

    let reopened = s.open(&payer);
    let watched = s.watched(&[&payer]);
    let before = s.t.balances(&watched);
    assert_program_error(
        &s.settle_under(&reopened, signed_before_refund),
        AgentMarketError::DigestMismatch,
    );
    assert_eq!(s.t.balances(&watched), before, "balances moved");
    assert!(s.mirror.leaves.is_empty());
}
