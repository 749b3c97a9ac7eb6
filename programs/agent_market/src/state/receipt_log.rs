use anchor_lang::prelude::*;
use anchor_lang::solana_program::hash::hashv;

use crate::{
    constants::{RECEIPT_CHECKPOINTS, RECEIPT_CHECKPOINT_SECS, RECEIPT_FILLED_TREES, RECEIPT_ROOT_HISTORY, RECEIPT_TREE_DEPTH},
    error::AgentMarketError,
    fees::split,
    receipt_tree::{self, Hash, LEAF_PREFIX},
};

/// One agent's receipts of batched settlements, as the leaves of append-only Merkle trees of
/// 2^`RECEIPT_TREE_DEPTH` leaves each. Only the frontier of the tree being filled and recent
/// roots are stored: the leaves themselves travel in `EscrowsSettledToLog` events, from which
/// anyone rebuilds a proof. Created once per agent, so the rent per execution tends to zero.
#[account(zero_copy)]
pub struct ReceiptLog {
    pub agent: Pubkey,
    /// Leaves appended across all trees; the next leaf's index. Leaf `i` is leaf
    /// `i % 2^RECEIPT_TREE_DEPTH` of tree `i / 2^RECEIPT_TREE_DEPTH`.
    pub leaf_count: u64,
    /// Roots recorded, one per batch; the next goes to `recent_roots[root_count % RECEIPT_ROOT_HISTORY]`.
    pub root_count: u64,
    /// Trees filled; the next one's root goes to `filled_roots[filled_tree_count % RECEIPT_FILLED_TREES]`.
    pub filled_tree_count: u64,
    /// Checkpoints recorded; the next goes to `checkpoint_roots[checkpoint_count % RECEIPT_CHECKPOINTS]`.
    pub checkpoint_count: u64,
    /// When the last checkpoint was recorded (the chain's clock).
    pub last_checkpoint_at: i64,
    pub frontier: [[u8; 32]; RECEIPT_TREE_DEPTH as usize],
    pub recent_roots: [[u8; 32]; RECEIPT_ROOT_HISTORY as usize],
    pub filled_roots: [[u8; 32]; RECEIPT_FILLED_TREES as usize],
    pub checkpoint_roots: [[u8; 32]; RECEIPT_CHECKPOINTS as usize],
    /// When each filled tree received its last leaf.
    pub filled_at: [i64; RECEIPT_FILLED_TREES as usize],
    pub bump: u8,
    pub padding: [u8; 7],
}

const TREE_LEAVES: u64 = 1 << RECEIPT_TREE_DEPTH;

impl ReceiptLog {
    pub const SPACE: usize = 8 + std::mem::size_of::<ReceiptLog>();

    /// Appends `leaf` and returns its index. When it fills the current tree, the tree's root is
    /// kept among the filled roots, in place of the oldest, which must be past the dispute
    /// window: a payer can still prove any execution it may dispute.
    pub fn append(&mut self, leaf: Hash, now: i64, dispute_window_secs: u32) -> Result<u64> {
        let index = self.leaf_count;
        if let Some(filled_root) = receipt_tree::append(&mut self.frontier, index % TREE_LEAVES, leaf) {
            let slot = (self.filled_tree_count % u64::from(RECEIPT_FILLED_TREES)) as usize;
            if self.filled_tree_count >= u64::from(RECEIPT_FILLED_TREES) {
                let window_ends_at = self.filled_at[slot]
                    .checked_add(i64::from(dispute_window_secs))
                    .ok_or(AgentMarketError::MathOverflow)?;
                require_gt!(now, window_ends_at, AgentMarketError::ReceiptLogFull);
            }
            self.filled_roots[slot] = filled_root;
            self.filled_at[slot] = now;
            self.filled_tree_count += 1;
        }
        self.leaf_count = index.checked_add(1).ok_or(AgentMarketError::MathOverflow)?;
        Ok(index)
    }

    /// Records the current tree's root among the recent roots, once per batch, and also as a
    /// checkpoint when `RECEIPT_CHECKPOINT_SECS` have passed since the last one. Returns the root
    /// and whether it is a checkpoint.
    pub fn record_root(&mut self, now: i64) -> Result<(Hash, bool)> {
        let root = receipt_tree::root(&self.frontier, self.leaf_count % TREE_LEAVES);
        self.recent_roots[(self.root_count % u64::from(RECEIPT_ROOT_HISTORY)) as usize] = root;
        self.root_count = self.root_count.checked_add(1).ok_or(AgentMarketError::MathOverflow)?;
        let due_at = self
            .last_checkpoint_at
            .checked_add(i64::from(RECEIPT_CHECKPOINT_SECS))
            .ok_or(AgentMarketError::MathOverflow)?;
        let checkpoint = self.checkpoint_count == 0 || now >= due_at;
        if checkpoint {
            self.checkpoint_roots[(self.checkpoint_count % u64::from(RECEIPT_CHECKPOINTS)) as usize] = root;
            self.checkpoint_count = self.checkpoint_count.checked_add(1).ok_or(AgentMarketError::MathOverflow)?;
            self.last_checkpoint_at = now;
        }
        Ok((root, checkpoint))
    }

    /// Whether `root` is one of the recorded roots still kept: recent, a checkpoint, or of a filled tree.
    pub fn holds_root(&self, root: &Hash) -> bool {
        let recent = self.root_count.min(u64::from(RECEIPT_ROOT_HISTORY)) as usize;
        let checkpoints = self.checkpoint_count.min(u64::from(RECEIPT_CHECKPOINTS)) as usize;
        let filled = self.filled_tree_count.min(u64::from(RECEIPT_FILLED_TREES)) as usize;
        self.recent_roots[..recent].contains(root)
            || self.checkpoint_roots[..checkpoints].contains(root)
            || self.filled_roots[..filled].contains(root)
    }

    /// Whether leaf number `leaf_index` with these siblings leads to a root the log holds.
    pub fn proves(&self, leaf: Hash, leaf_index: u64, proof: &[Hash]) -> Result<bool> {
        require_eq!(
            proof.len(),
            usize::from(RECEIPT_TREE_DEPTH),
            AgentMarketError::InvalidProofLength
        );
        Ok(self.holds_root(&receipt_tree::root_from_proof(leaf, leaf_index % TREE_LEAVES, proof)))
    }
}

/// What a receipt log's leaf commits to for one settled execution: the escrow's record (its
/// nonce included, so two settlements of one execution id are two distinct leaves), the result
/// and the units the creator signed, what the settlement charged and returned, and when it was
/// settled. The agent is the log's; the fee follows from the charge.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct ReceiptLeaf {
    pub execution_id: [u8; 16],
    pub nonce: u64,
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub api_key_id: [u8; 16],
    /// What the escrow held.
    pub amount_usdc: u64,
    /// Split 99/1 between the creator and the marketplace: the whole amount for a fixed-price
    /// call, `units × price_per_unit_usdc` for a metered one.
    pub charged_usdc: u64,
    /// Back to the payer's token account in the settlement: `amount_usdc - charged_usdc`.
    pub returned_usdc: u64,
    pub units: u64,
    pub request_hash: [u8; 32],
    pub result_hash: [u8; 32],
    pub settled_at: i64,
}

/// A leaf as its payer disputes it: every field but the payer, who signs `open_dispute` and so
/// stands in for it. Leaving the 32 bytes out is what fits a dispute (the leaf, its proof of
/// `RECEIPT_TREE_DEPTH` hashes, the evidence hash and the compute budget) in one transaction.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq, Eq)]
pub struct DisputedLeaf {
    pub execution_id: [u8; 16],
    pub nonce: u64,
    pub payer_token_account: Pubkey,
    pub api_key_id: [u8; 16],
    pub amount_usdc: u64,
    pub charged_usdc: u64,
    pub returned_usdc: u64,
    pub units: u64,
    pub request_hash: [u8; 32],
    pub result_hash: [u8; 32],
    pub settled_at: i64,
}

impl DisputedLeaf {
    /// The leaf `payer` would have been paid back from: only the true payer's leads to a root.
    pub fn of(&self, payer: Pubkey) -> ReceiptLeaf {
        ReceiptLeaf {
            execution_id: self.execution_id,
            nonce: self.nonce,
            payer,
            payer_token_account: self.payer_token_account,
            api_key_id: self.api_key_id,
            amount_usdc: self.amount_usdc,
            charged_usdc: self.charged_usdc,
            returned_usdc: self.returned_usdc,
            units: self.units,
            request_hash: self.request_hash,
            result_hash: self.result_hash,
            settled_at: self.settled_at,
        }
    }
}

impl From<&ReceiptLeaf> for DisputedLeaf {
    fn from(leaf: &ReceiptLeaf) -> Self {
        DisputedLeaf {
            execution_id: leaf.execution_id,
            nonce: leaf.nonce,
            payer_token_account: leaf.payer_token_account,
            api_key_id: leaf.api_key_id,
            amount_usdc: leaf.amount_usdc,
            charged_usdc: leaf.charged_usdc,
            returned_usdc: leaf.returned_usdc,
            units: leaf.units,
            request_hash: leaf.request_hash,
            result_hash: leaf.result_hash,
            settled_at: leaf.settled_at,
        }
    }
}

impl ReceiptLeaf {
    /// `SHA-256(0x00 ‖ execution_id ‖ agent ‖ nonce ‖ payer ‖ payer_token_account ‖ api_key_id ‖
    /// amount_usdc ‖ charged_usdc ‖ fee_usdc ‖ returned_usdc ‖ units ‖ request_hash ‖ result_hash
    /// ‖ settled_at)`, integers little-endian, the fee that of the charge.
    pub fn hash(&self, agent: &Pubkey) -> Hash {
        let fee_usdc = split(self.charged_usdc).fee_usdc;
        hashv(&[
            &[LEAF_PREFIX],
            &self.execution_id,
            agent.as_ref(),
            &self.nonce.to_le_bytes(),
            self.payer.as_ref(),
            self.payer_token_account.as_ref(),
            &self.api_key_id,
            &self.amount_usdc.to_le_bytes(),
            &self.charged_usdc.to_le_bytes(),
            &fee_usdc.to_le_bytes(),
            &self.returned_usdc.to_le_bytes(),
            &self.units.to_le_bytes(),
            &self.request_hash,
            &self.result_hash,
            &self.settled_at.to_le_bytes(),
        ])
        .to_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::__private::bytemuck::Zeroable;

    const WINDOW_SECS: u32 = 3 * 24 * 3600;

    /// A log whose current tree lacks one leaf, after `filled` trees, the oldest kept filled at 0.
    fn log_one_leaf_short(filled: u64) -> ReceiptLog {
        let mut log = ReceiptLog::zeroed();
        log.filled_tree_count = filled;
        log.leaf_count = (filled + 1) * TREE_LEAVES - 1;
        log
    }

    #[test]
    fn the_leaf_that_fills_a_tree_keeps_its_root_and_starts_the_next() {
        let mut log = log_one_leaf_short(0);
        assert_eq!(log.append([7; 32], 100, WINDOW_SECS).unwrap(), TREE_LEAVES - 1);
        assert_eq!((log.filled_tree_count, log.filled_at[0]), (1, 100));
        let filled_root = log.filled_roots[0];
        assert!(log.holds_root(&filled_root));
        // The next leaf is leaf 0 of a new tree.
        log.append([8; 32], 101, WINDOW_SECS).unwrap();
        let empty_sibling_root = {
            let mut frontier = [[0; 32]; RECEIPT_TREE_DEPTH as usize];
            receipt_tree::append(&mut frontier, 0, [8; 32]);
            receipt_tree::root(&frontier, 1)
        };
        assert_eq!(log.record_root(101).unwrap().0, empty_sibling_root);
        assert!(log.holds_root(&filled_root) && log.holds_root(&empty_sibling_root));
        assert!(!log.holds_root(&[0; 32]), "unused slots hold nothing");
    }

    #[test]
    fn a_checkpoint_outlives_the_recent_roots_and_comes_once_a_minute() {
        let mut log = ReceiptLog::zeroed();
        let mut now = 1_000;
        log.append([1; 32], now, WINDOW_SECS).unwrap();
        let (first, checkpoint) = log.record_root(now).unwrap();
        assert!(checkpoint, "a log's first root is a checkpoint");
        // Two batches a second for far more than 64 batches: a checkpoint each minute only.
        let mut checkpoints = 1;
        for batch in 0..(2 * u64::from(RECEIPT_ROOT_HISTORY)) {
            if batch % 2 == 0 {
                now += 1;
            }
            log.append([2; 32], now, WINDOW_SECS).unwrap();
            if log.record_root(now).unwrap().1 {
                checkpoints += 1;
            }
        }
        assert_eq!(checkpoints, 2, "at 0 s and at 60 s");
        assert_eq!(log.last_checkpoint_at, 1_060);
        assert!(log.holds_root(&first), "the first checkpoint is held 128 batches later");
        // 64 more checkpoints push it out.
        for _ in 0..RECEIPT_CHECKPOINTS {
            now += i64::from(RECEIPT_CHECKPOINT_SECS);
            log.append([3; 32], now, WINDOW_SECS).unwrap();
            assert!(log.record_root(now).unwrap().1);
        }
        assert!(!log.holds_root(&first));
    }

    #[test]
    fn a_filled_root_is_dropped_only_past_the_dispute_window() {
        let filled = u64::from(RECEIPT_FILLED_TREES);
        let mut log = log_one_leaf_short(filled);
        log.filled_at[0] = 1_000;
        log.filled_roots[0] = [9; 32];
        let window_ends_at = 1_000 + i64::from(WINDOW_SECS);
        assert_eq!(
            log.append([7; 32], window_ends_at, WINDOW_SECS).unwrap_err(),
            AgentMarketError::ReceiptLogFull.into()
        );
        let mut log = log_one_leaf_short(filled);
        log.filled_at[0] = 1_000;
        log.append([7; 32], window_ends_at + 1, WINDOW_SECS).unwrap();
        assert_eq!(
            (log.filled_tree_count, log.filled_at[0]),
            (filled + 1, window_ends_at + 1)
        );
        assert_ne!(log.filled_roots[0], [9; 32]);
    }
}
