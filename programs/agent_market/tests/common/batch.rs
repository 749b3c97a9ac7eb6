//! Batched settlement for tests: escrows opened one by one, settled together under one batch
//! signature or one signature per call, and the receipt log tree rebuilt from the events.

use agent_market::{events::EscrowsSettledToLog, ReceiptLeaf, RECEIPT_ROOT_HISTORY};
use litesvm::types::{TransactionMetadata, TransactionResult};
use localnet::{
    chain::events,
    market::{batch_digest, EscrowRef, MarketKeys},
    receipt_log::ReceiptTree,
};
use solana_instruction::{error::InstructionError, Instruction};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction_error::TransactionError;

use super::*;

/// How the creator's key signs a batch.
#[derive(Clone, Copy)]
pub enum Signing {
    /// Once, over the batch digest.
    Batch,
    /// Once per escrow, over its result digest.
    PerCall,
}

/// The Ed25519 verification by `signer` of `escrows`' results (units 0), as `signing` says.
pub fn batch_verification(t: &TestMarket, signer: &Keypair, agent: &Pubkey, escrows: &[EscrowRef], signing: Signing) -> Instruction {
    let digests: Vec<[u8; 32]> = escrows.iter().map(|escrow| t.digest_of(escrow, 0)).collect();
    let messages = match signing {
        Signing::Batch => vec![batch_digest(agent, &digests)],
        Signing::PerCall => digests,
    };
    let signatures: Vec<[u8; 64]> = messages
        .iter()
        .map(|message| signer.sign_message(message).into())
        .collect();
    MarketKeys::verify_signatures(&signer.pubkey().to_bytes(), &signatures, &messages)
}

/// Asserts the transaction failed in the system program because `init` met an account that
/// exists: AccountAlreadyInUse.
pub fn assert_already_in_use(result: &TransactionResult) {
    assert!(
        matches!(result, Err(failed) if matches!(failed.err, TransactionError::InstructionError(_, InstructionError::Custom(0)))),
        "expected AccountAlreadyInUse, got {:?}",
        result.as_ref().map(|_| ())
    );
}

impl TestMarket {
    /// The relayer creates `agent`'s receipt log, paying its rent.
    pub fn create_receipt_log(&mut self, agent: &AgentFixture) -> TransactionMetadata {
        let instruction = self
            .market
            .keys
            .create_receipt_log(self.relayer().pubkey(), agent.address);
        ok(self.send_as_relayer(&[instruction]))
    }

    pub fn open_many(&mut self, agent: &AgentFixture, payer: &Payer, count: usize) -> Vec<EscrowRef> {
        (0..count)
            .map(|_| {
                let (result, escrow) = self.open(agent, payer);
                ok(result);
                escrow
            })
            .collect()
    }

    /// The verification by `signer`, then `settle_batch` of `escrows` to fee shard 0.
    pub fn settle_batch_ixs(
        &self,
        agent: &AgentFixture,
        escrows: &[EscrowRef],
        signer: &Keypair,
        signing: Signing,
    ) -> Vec<Instruction> {
        let execution_ids: Vec<[u8; 16]> = escrows.iter().map(|escrow| escrow.execution_id).collect();
        let result_hashes = execution_ids.iter().map(result_hash).collect();
        vec![
            batch_verification(self, signer, &agent.address, escrows, signing),
            self.market
                .keys
                .settle_batch(agent.address, agent.payout_account, &execution_ids, result_hashes, vec![], 0),
        ]
    }

    pub fn settle_batch(
        &mut self,
        agent: &AgentFixture,
        escrows: &[EscrowRef],
        signing: Signing,
    ) -> TransactionMetadata {
        let instructions = self.settle_batch_ixs(agent, escrows, &agent.signing, signing);
        ok(self.send_as_relayer(&instructions))
    }

    /// The payer's dispute of leaf `index` of `agent`'s log, proven against the tree `mirror`
    /// holds now.
    pub fn dispute_ix(&self, agent: &AgentFixture, mirror: &LogMirror, index: usize, evidence_hash: [u8; 32]) -> Instruction {
        self.market.keys.open_dispute(
            agent.address,
            mirror.leaves[index].clone(),
            index as u64,
            mirror.tree.proof(index),
            evidence_hash,
        )
    }

    /// The root `settle_batch` recorded last in `agent`'s log.
    pub fn latest_log_root(&self, agent: &AgentFixture) -> [u8; 32] {
        let log = self.chain.receipt_log(&agent.address).expect("receipt log");
        let slot = (log.root_count - 1) % u64::from(RECEIPT_ROOT_HISTORY);
        log.recent_roots[slot as usize]
    }
}

/// The leaves of every execution a set of batches settled, in log order, and the tree they form.
#[derive(Default)]
pub struct LogMirror {
    pub leaves: Vec<ReceiptLeaf>,
    pub tree: ReceiptTree,
}

impl LogMirror {
    /// Adds the executions a batch transaction settled, checking they land at the next indexes;
    /// returns the batch's one event.
    pub fn add(&mut self, meta: &TransactionMetadata) -> EscrowsSettledToLog {
        let mut settled = events::<EscrowsSettledToLog>(meta);
        assert_eq!(settled.len(), 1, "one event a batch");
        let event = settled.remove(0);
        assert_eq!(event.first_leaf_index, self.leaves.len() as u64, "leaf index");
        for leaf in &event.leaves {
            self.tree.leaves.push(leaf.hash(&event.agent));
            self.leaves.push(leaf.clone());
        }
        event
    }
}
