//! The client side of batched settlement: the instructions that create a receipt log, settle a
//! batch and dispute from the log, the Ed25519 verifications a batch needs, and the tree a payer
//! or an indexer rebuilds from `EscrowsSettledToLog` events to prove an execution.

use {
    crate::market::{pda, program_ix, MarketKeys},
    agent_market::{
        accounts, instruction,
        receipt_tree::{node, Hash},
        signature::{result_digest, ResultBinding},
        DisputedLeaf, Escrow, ReceiptLeaf, ID as PROGRAM_ID, RECEIPT_TREE_DEPTH,
    },
    solana_instruction::{AccountMeta, Instruction},
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
};

const ED25519_OFFSETS_LEN: usize = 14;
const THIS_INSTRUCTION: u16 = u16::MAX;

impl MarketKeys {
    pub fn create_receipt_log(&self, payer: Pubkey, agent: Pubkey) -> Instruction {
        program_ix(
            accounts::CreateReceiptLog {
                payer,
                agent,
                receipt_log: pda::receipt_log(&agent),
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::CreateReceiptLog {},
        )
    }

    /// `settle_batch` of the escrows of `execution_ids`, all of `agent`, in the order of
    /// `result_hashes`, with the units each reported (empty: 0 for every one) and nothing to return.
    pub fn settle_batch(
        &self,
        agent: Pubkey,
        payout_account: Pubkey,
        execution_ids: &[[u8; 16]],
        result_hashes: Vec<[u8; 32]>,
        units: Vec<u64>,
        fee_shard_index: u8,
    ) -> Instruction {
        self.settle_batch_returning(agent, payout_account, execution_ids, result_hashes, units, fee_shard_index, &[])
    }

    /// `settle_batch` as above, with `returns`: the payer token account of each metered escrow
    /// whose charge leaves something to return, in the escrows' order.
    #[allow(clippy::too_many_arguments)]
    pub fn settle_batch_returning(
        &self,
        agent: Pubkey,
        payout_account: Pubkey,
        execution_ids: &[[u8; 16]],
        result_hashes: Vec<[u8; 32]>,
        units: Vec<u64>,
        fee_shard_index: u8,
        returns: &[Pubkey],
    ) -> Instruction {
        let mut settle = program_ix(
            accounts::SettleBatch {
                relayer: self.relayer,
                market: pda::market(),
                agent,
                receipt_log: pda::receipt_log(&agent),
                escrow_vault: pda::escrow_vault(&agent),
                payout_account,
                fee_shard: pda::fee_shard(fee_shard_index),
                usdc_mint: self.usdc_mint,
                instructions: solana_sdk_ids::sysvar::instructions::ID,
                token_program: spl_token::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::SettleBatch {
                result_hashes,
                units,
                fee_shard_index,
            },
        );
        settle.accounts.extend(
            execution_ids
                .iter()
                .map(|execution_id| AccountMeta::new(pda::escrow(execution_id), false)),
        );
        settle
            .accounts
            .extend(returns.iter().map(|token_account| AccountMeta::new(*token_account, false)));
        settle
    }

    /// A lone result settled as the relayer settles it, as a batch of one: `signing` (the agent's
    /// key) signs the result digest of `escrow`, as the program recorded it, with `result_hash`
    /// and no units; the precompile verifies it; `settle_batch` pays.
    pub fn settle_one(
        &self,
        escrow: &Escrow,
        result_hash: [u8; 32],
        signing: &Keypair,
        payout_account: Pubkey,
        fee_shard_index: u8,
    ) -> [Instruction; 2] {
        let digest = result_digest(&ResultBinding {
            escrow,
            result_hash: &result_hash,
            units: 0,
        });
        let signature: [u8; 64] = signing.sign_message(&digest).into();
        [
            Self::verify_signatures(&signing.pubkey().to_bytes(), &[signature], &[digest]),
            self.settle_batch(
                escrow.agent,
                payout_account,
                &[escrow.execution_id],
                vec![result_hash],
                vec![],
                fee_shard_index,
            ),
        ]
    }

    /// The payer's dispute of the execution of `leaf`, leaf number `leaf_index` of `agent`'s log.
    pub fn open_dispute(
        &self,
        agent: Pubkey,
        leaf: ReceiptLeaf,
        leaf_index: u64,
        proof: Vec<[u8; 32]>,
        evidence_hash: [u8; 32],
    ) -> Instruction {
        program_ix(
            accounts::OpenDispute {
                payer: leaf.payer,
                market: pda::market(),
                agent,
                receipt_log: pda::receipt_log(&agent),
                dispute: pda::dispute(&agent, leaf_index),
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::OpenDispute {
                leaf: DisputedLeaf::from(&leaf),
                leaf_index,
                proof,
                evidence_hash,
            },
        )
    }

    /// An Ed25519 precompile instruction verifying one key's `signatures` over `messages` of 32
    /// bytes each, the key carried once: one entry is a batch signature, one per escrow the
    /// per-call fallback of `settle_batch`.
    pub fn verify_signatures(signing_key: &[u8; 32], signatures: &[[u8; 64]], messages: &[[u8; 32]]) -> Instruction {
        assert_eq!(signatures.len(), messages.len());
        let public_key_offset = 2 + ED25519_OFFSETS_LEN * signatures.len();
        let mut data = vec![signatures.len() as u8, 0];
        let mut payload = signing_key.to_vec();
        for (signature, message) in signatures.iter().zip(messages) {
            let signature_offset = public_key_offset + payload.len();
            payload.extend_from_slice(signature);
            let message_offset = public_key_offset + payload.len();
            payload.extend_from_slice(message);
            for field in [
                signature_offset as u16,
                THIS_INSTRUCTION,
                public_key_offset as u16,
                THIS_INSTRUCTION,
                message_offset as u16,
                message.len() as u16,
                THIS_INSTRUCTION,
            ] {
                data.extend_from_slice(&field.to_le_bytes());
            }
        }
        data.extend_from_slice(&payload);
        Instruction {
            program_id: solana_sdk_ids::ed25519_program::ID,
            accounts: vec![],
            data,
        }
    }
}

/// The leaves of one tree of a receipt log, as an indexer or a payer rebuilds them from the
/// events (leaf `i` of the log is leaf `i % 2^RECEIPT_TREE_DEPTH` of its tree).
#[derive(Clone, Debug, Default)]
pub struct ReceiptTree {
    pub leaves: Vec<Hash>,
}

impl ReceiptTree {
    /// Every level from the leaves up, each padded on the right with the empty subtree of its
    /// height; the last level is the root.
    fn levels(&self) -> (Vec<Vec<Hash>>, Vec<Hash>) {
        let mut levels = vec![self.leaves.clone()];
        let mut empties = vec![[0; 32]];
        for _ in 0..RECEIPT_TREE_DEPTH {
            let empty = *empties.last().unwrap();
            let below = levels.last().unwrap();
            let above = below
                .chunks(2)
                .map(|pair| node(&pair[0], pair.get(1).unwrap_or(&empty)))
                .collect();
            levels.push(above);
            empties.push(node(&empty, &empty));
        }
        (levels, empties)
    }

    pub fn root(&self) -> Hash {
        let (levels, empties) = self.levels();
        levels[usize::from(RECEIPT_TREE_DEPTH)]
            .first()
            .copied()
            .unwrap_or(empties[usize::from(RECEIPT_TREE_DEPTH)])
    }

    /// The siblings of leaf `index` from the bottom up: what `open_dispute_from_log` takes.
    pub fn proof(&self, index: usize) -> Vec<Hash> {
        let (levels, empties) = self.levels();
        (0..usize::from(RECEIPT_TREE_DEPTH))
            .map(|level| {
                levels[level]
                    .get((index >> level) ^ 1)
                    .copied()
                    .unwrap_or(empties[level])
            })
            .collect()
    }
}

impl crate::chain::Chain {
    /// The receipt log of `agent`, read as the program lays it out.
    pub fn receipt_log(&self, agent: &Pubkey) -> Option<agent_market::ReceiptLog> {
        let account = self.account(&pda::receipt_log(agent))?;
        Some(anchor_lang::__private::bytemuck::pod_read_unaligned(
            account.data.get(8..)?,
        ))
    }
}
