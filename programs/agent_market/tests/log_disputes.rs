//! Disputes of settled executions: the payer proves its settlement with the leaf's fields and a
//! Merkle proof against a root the agent's receipt log holds, within the window, once per leaf;
//! the arbiter resolves it.
mod common;

use agent_market::{error::AgentMarketError, events, Agent, Dispute, ReceiptLeaf, RECEIPT_ROOT_HISTORY};
use common::{batch::*, *};
use litesvm::types::TransactionResult;
use localnet::{
    chain::{events, USDC},
    market::pda,
};
use solana_signer::Signer;
use solana_transaction::Transaction;

const EVIDENCE: [u8; 32] = [5; 32];

/// An agent whose log holds one batch of 4 executions of one payer.
struct Settled {
    t: TestMarket,
    agent: AgentFixture,
    payer: Payer,
    mirror: LogMirror,
}

impl Settled {
    fn new() -> Self {
        let mut t = TestMarket::new();
        let agent = t.agent();
        let payer = t.payer(100 * USDC, 100 * USDC);
        t.create_receipt_log(&agent);
        let mut mirror = LogMirror::default();
        let escrows = t.open_many(&agent, &payer, 4);
        let meta = t.settle_batch(&agent, &escrows, Signing::Batch);
        mirror.add(&meta);
        Settled {
            t,
            agent,
            payer,
            mirror,
        }
    }

    fn dispute_ix(
        &self,
        leaf: ReceiptLeaf,
        leaf_index: usize,
        proof: Vec<[u8; 32]>,
    ) -> solana_instruction::Instruction {
        self.t
            .market
            .keys
            .open_dispute(self.agent.address, leaf, leaf_index as u64, proof, EVIDENCE)
    }

    /// The payer disputes leaf `index` with the proof from the tree as it stands.
    fn dispute(&mut self, index: usize) -> TransactionResult {
        let instruction = self.dispute_ix(self.mirror.leaves[index].clone(), index, self.mirror.tree.proof(index));
        let payer = self.payer.wallet.insecure_clone();
        self.t.chain.send(&[instruction], &payer, &[])
    }

    fn open_disputes(&self) -> u32 {
        let agent: Agent = self.t.chain.anchor_account(&self.agent.address).unwrap();
        agent.open_disputes
    }
}

#[test]
fn a_valid_proof_opens_the_dispute_and_the_arbiter_resolves_it() {
    let mut s = Settled::new();
    let leaf = s.mirror.leaves[2].clone();
    let payer_lamports = s.t.chain.lamports(&s.payer.wallet.pubkey());
    let meta = ok(s.dispute(2));
    let opened = events::<events::DisputeOpened>(&meta);
    assert_eq!(opened.len(), 1);
    assert_eq!(
        (opened[0].execution_id, opened[0].amount_usdc),
        (leaf.execution_id, PRICE_USDC)
    );
    assert_eq!(s.open_disputes(), 1);
    let dispute: Dispute = s.t.chain.anchor_account(&pda::dispute(&s.agent.address, 2)).unwrap();
    assert_eq!(
        (
            dispute.agent,
            dispute.payer,
            dispute.payer_token_account,
            dispute.amount_usdc,
            dispute.evidence_hash
        ),
        (
            s.agent.address,
            s.payer.wallet.pubkey(),
            s.payer.token_account,
            PRICE_USDC,
            EVIDENCE
        )
    );
    assert_eq!(
        (dispute.leaf_index, dispute.execution_id, dispute.settled_at, dispute.resolved),
        (2, leaf.execution_id, leaf.settled_at, false)
    );
    // The dispute's rent is the payer's only deposit.
    let deposit = s.t.chain.lamports(&pda::dispute(&s.agent.address, 2));
    assert_eq!(
        s.t.chain.lamports(&s.payer.wallet.pubkey()),
        payer_lamports - 5_000 - deposit
    );

    // Upheld: the collateral pays the payer back, as for a dispute of a receipt.
    let before = s.t.balance(&s.payer.token_account);
    let arbiter = s.t.market.arbiter.insecure_clone();
    let resolve = s
        .t
        .market
        .keys
        .resolve_dispute(s.agent.address, 2, s.payer.token_account, true, PRICE_USDC);
    let meta = ok(s.t.chain.send(&[resolve], &arbiter, &[]));
    assert_eq!(events::<events::DisputeResolved>(&meta)[0].slashed_usdc, PRICE_USDC);
    assert_eq!(s.t.balance(&s.payer.token_account), before + PRICE_USDC);
    assert_eq!(s.open_disputes(), 0);

    // A second dispute of the same leaf stays refused after the first is resolved.
    let result = s.dispute(2);
    assert_program_error(&result, AgentMarketError::AlreadyDisputed);
    // The dispute's rent goes back to the payer once the window has passed.
    s.t.chain.advance_clock(i64::from(DISPUTE_WINDOW_SECS) + 1);
    let close = s.t.market.keys.close_dispute(s.agent.address, 2, s.payer.wallet.pubkey());
    let relayer = s.t.relayer().insecure_clone();
    let before = s.t.chain.lamports(&s.payer.wallet.pubkey());
    ok(s.t.chain.send(&[close], &relayer, &[]));
    assert_eq!(s.t.chain.lamports(&s.payer.wallet.pubkey()), before + deposit);
}

#[test]
fn a_second_dispute_while_the_first_is_open_is_refused() {
    let mut s = Settled::new();
    ok(s.dispute(0));
    assert_program_error(&s.dispute(0), AgentMarketError::AlreadyDisputed);
    assert_eq!(s.open_disputes(), 1);
}

#[test]
fn a_bad_proof_is_refused() {
    let mut s = Settled::new();
    let payer = s.payer.wallet.insecure_clone();
    let leaf = s.mirror.leaves[1].clone();
    // Another leaf's proof, a changed amount, another index, a proof one hash short.
    let mut richer = leaf.clone();
    richer.amount_usdc += 1;
    let attempts = [
        (
            s.dispute_ix(leaf.clone(), 1, s.mirror.tree.proof(0)),
            AgentMarketError::UnknownReceiptRoot,
        ),
        (
            s.dispute_ix(richer, 1, s.mirror.tree.proof(1)),
            AgentMarketError::UnknownReceiptRoot,
        ),
        (
            s.dispute_ix(leaf.clone(), 0, s.mirror.tree.proof(1)),
            AgentMarketError::UnknownReceiptRoot,
        ),
        (
            s.dispute_ix(leaf.clone(), 1, s.mirror.tree.proof(1)[1..].to_vec()),
            AgentMarketError::InvalidProofLength,
        ),
    ];
    for (instruction, error) in attempts {
        let result = s.t.chain.send(&[instruction], &payer, &[]);
        assert_program_error(&result, error);
    }
    assert_eq!(s.open_disputes(), 0);
    assert!(s.t.chain.account(&pda::dispute(&s.agent.address, 1)).is_none());
}

#[test]
fn a_dispute_outside_the_window_is_refused() {
    let mut s = Settled::new();
    s.t.chain.advance_clock(i64::from(DISPUTE_WINDOW_SECS) + 1);
    let result = s.dispute(3);
    assert_program_error(&result, AgentMarketError::DisputeWindowClosed);
}

#[test]
fn only_the_leafs_payer_may_dispute() {
    let mut s = Settled::new();
    let stranger = s.t.chain.funded_keypair(SOL);
    let leaf = s.mirror.leaves[0].clone();
    // The stranger signs with the true leaf's other fields: the signer stands as the payer, so the
    // leaf is not the one in the log.
    let mut instruction = s.dispute_ix(leaf.clone(), 0, s.mirror.tree.proof(0));
    instruction.accounts[0].pubkey = stranger.pubkey();
    let result = s.t.chain.send(&[instruction], &stranger, &[]);
    assert_program_error(&result, AgentMarketError::UnknownReceiptRoot);
    // The stranger names itself as the payer: the same.
    let forged = ReceiptLeaf {
        payer: stranger.pubkey(),
        ..leaf
    };
    let instruction = s.dispute_ix(forged, 0, s.mirror.tree.proof(0));
    let result = s.t.chain.send(&[instruction], &stranger, &[]);
    assert_program_error(&result, AgentMarketError::UnknownReceiptRoot);
}

#[test]
fn a_proof_against_a_recent_root_stays_valid_while_batches_append_then_expires() {
    let mut s = Settled::new();
    // The log's first root is a checkpoint, kept for a minute's worth of checkpoints: build the
    // proofs against the next batch's root, a recent root only (the same second: no checkpoint).
    let escrows = s.t.open_many(&s.agent, &s.payer, 1);
    let meta = s.t.settle_batch(&s.agent, &escrows, Signing::Batch);
    s.mirror.add(&meta);
    let early = [1, 2].map(|index| s.dispute_ix(s.mirror.leaves[index].clone(), index, s.mirror.tree.proof(index)));
    // RECEIPT_ROOT_HISTORY - 1 more batches keep the root the proofs were built against.
    for _ in 1..RECEIPT_ROOT_HISTORY {
        let escrows = s.t.open_many(&s.agent, &s.payer, 1);
        let meta = s.t.settle_batch(&s.agent, &escrows, Signing::Batch);
        s.mirror.add(&meta);
    }
    let payer = s.payer.wallet.insecure_clone();
    ok(s.t.chain.send(&[early[0].clone()], &payer, &[]));
    // One more batch and that root is gone; a proof against the current tree still works.
    let escrows = s.t.open_many(&s.agent, &s.payer, 1);
    let meta = s.t.settle_batch(&s.agent, &escrows, Signing::Batch);
    s.mirror.add(&meta);
    let result = s.t.chain.send(&[early[1].clone()], &payer, &[]);
    assert_program_error(&result, AgentMarketError::UnknownReceiptRoot);
    ok(s.dispute(2));
    assert_eq!(s.open_disputes(), 2);
}

#[test]
fn a_dispute_transaction_fits_the_transaction_size() {
    let s = Settled::new();
    let instruction = s.dispute_ix(s.mirror.leaves[0].clone(), 0, s.mirror.tree.proof(0));
    let payer = &s.payer.wallet;
    let transaction =
        Transaction::new_signed_with_payer(&[instruction], Some(&payer.pubkey()), &[payer], Default::default());
    let bytes = bincode::serialize(&transaction).unwrap().len();
    println!("open_dispute: {bytes} bytes in a legacy transaction");
    assert!(bytes <= 1_232, "{bytes} bytes");
}
