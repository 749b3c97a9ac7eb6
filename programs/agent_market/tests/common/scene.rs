//! A market with one agent (its receipt log created) and a payer holding an open escrow, for
//! tests that attack it.

use anchor_lang::prelude::Pubkey;
use litesvm::types::TransactionResult;
use localnet::{
    chain::USDC,
    market::{pda, EscrowRef},
};
use solana_instruction::Instruction;
use solana_keypair::Keypair;

use super::{batch::LogMirror, *};

/// A market with one agent and a payer holding an open escrow.
pub struct Scene {
    pub t: TestMarket,
    pub agent: AgentFixture,
    pub payer: Payer,
    pub escrow: EscrowRef,
    pub watched: Vec<Pubkey>,
    /// The agent's log as the scene's settlements built it.
    pub mirror: LogMirror,
}

impl Scene {
    pub fn new() -> Self {
        let mut t = TestMarket::new();
        let agent = t.agent();
        t.ensure_receipt_log(&agent.address);
        let payer = t.payer(10 * USDC, 10 * USDC);
        let (result, escrow) = t.open(&agent, &payer);
        ok(result);
        let watched = vec![
            payer.token_account,
            pda::escrow_vault(&agent.address),
            agent.payout_account,
            pda::collateral_vault(&agent.address),
            pda::fee_shard(0),
        ];
        Scene {
            t,
            agent,
            payer,
            escrow,
            watched,
            mirror: LogMirror::default(),
        }
    }

    pub fn balances(&self) -> Vec<u64> {
        self.t.balances(&self.watched)
    }

    /// Runs `attempt` and asserts it left every watched balance as it was.
    pub fn unchanged(&mut self, attempt: impl FnOnce(&mut Self) -> TransactionResult) -> TransactionResult {
        let before = self.balances();
        let result = attempt(self);
        assert_eq!(self.balances(), before, "balances moved");
        result
    }

    pub fn settle_ixs_signed_by(&self, signer: &Keypair) -> Vec<Instruction> {
        self.t.settle_ixs(&self.escrow, signer, self.agent.payout_account, 0)
    }

    pub fn settle(&mut self) {
        let instructions = self.settle_ixs_signed_by(&self.agent.signing);
        let meta = ok(self.t.send_as_relayer(&instructions));
        self.mirror.add(&meta);
    }

    /// The dispute of leaf `leaf_index` of the scene's log, with its proof as the log stands.
    pub fn dispute_ix(&self, leaf_index: usize) -> Instruction {
        let leaf = self.mirror.leaves[leaf_index].clone();
        let proof = self.mirror.tree.proof(leaf_index);
        self.t
            .market
            .keys
            .open_dispute(self.agent.address, leaf, leaf_index as u64, proof, [1; 32])
    }

    /// Settles the escrow, then the payer disputes it.
    pub fn settle_and_dispute(&mut self) {
        self.settle();
        let payer = self.payer.wallet.insecure_clone();
        let instruction = self.dispute_ix(0);
        ok(self.t.chain.send(&[instruction], &payer, &[]));
    }
}

pub fn replace_account(instruction: &mut Instruction, from: Pubkey, to: Pubkey) {
    for meta in instruction.accounts.iter_mut().filter(|meta| meta.pubkey == from) {
        meta.pubkey = to;
    }
}
