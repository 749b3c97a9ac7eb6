//! The append-only Merkle accumulator behind a receipt log: a tree of fixed height kept as its
//! frontier (the right-most complete subtree at each level), so that appending a leaf and
//! computing the root touch one hash per level and never the earlier leaves.
//!
//! Leaves and inner nodes are hashed under different prefix bytes, so that no inner node can be
//! presented as a leaf. An empty leaf is 32 zero bytes, which no SHA-256 output is known to equal.

use anchor_lang::solana_program::hash::hashv;

pub type Hash = [u8; 32];

pub const LEAF_PREFIX: u8 = 0;
pub const NODE_PREFIX: u8 = 1;

pub fn node(left: &Hash, right: &Hash) -> Hash {
    hashv(&[&[NODE_PREFIX], left, right]).to_bytes()
}

/// Appends `leaf` as leaf number `count` of the tree of height `frontier.len()`, which must have
/// room for it. Returns the tree's root when this leaf fills it, since the frontier alone then
/// no longer determines it.
pub fn append(frontier: &mut [Hash], count: u64, leaf: Hash) -> Option<Hash> {
    let mut subtree = leaf;
    let mut index = count;
    for sibling in frontier.iter_mut() {
        if index & 1 == 0 {
            *sibling = subtree;
            return None;
        }
        subtree = node(sibling, &subtree);
        index >>= 1;
    }
    Some(subtree)
}

/// The root of a tree of height `frontier.len()` holding `count` leaves, fewer than it can hold:
/// each level combines the frontier's complete subtree on the left where `count` has that bit
/// set, and an empty subtree on the right otherwise.
pub fn root(frontier: &[Hash], count: u64) -> Hash {
    let mut subtree = [0; 32];
    let mut empty = [0; 32];
    let mut size = count;
    for left in frontier {
        subtree = if size & 1 == 1 {
            node(left, &subtree)
        } else {
            node(&subtree, &empty)
        };
        empty = node(&empty, &empty);
        size >>= 1;
    }
    subtree
}

/// The root that `leaf` at position `index` leads to through `proof`, its siblings from the
/// bottom up.
pub fn root_from_proof(leaf: Hash, index: u64, proof: &[Hash]) -> Hash {
    let mut subtree = leaf;
    let mut position = index;
    for sibling in proof {
        subtree = if position & 1 == 0 {
            node(&subtree, sibling)
        } else {
            node(sibling, &subtree)
        };
        position >>= 1;
    }
    subtree
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root and every leaf's proof computed level by level from all the leaves, padded with
    /// empty subtrees: what an indexer rebuilds from the events.
    fn full_tree(leaves: &[Hash], height: usize) -> (Hash, Vec<Vec<Hash>>) {
        let mut levels = vec![leaves.to_vec()];
        let mut empty = [0; 32];
        let mut empties = vec![];
        for _ in 0..height {
            empties.push(empty);
            let below = levels.last().unwrap();
            let above = below
                .chunks(2)
                .map(|pair| node(&pair[0], pair.get(1).unwrap_or(&empty)))
                .collect();
            levels.push(above);
            empty = node(&empty, &empty);
        }
        let root = levels[height].first().copied().unwrap_or(empty);
        let proofs = (0..leaves.len())
            .map(|index| {
                (0..height)
                    .map(|level| {
                        let sibling = (index >> level) ^ 1;
                        levels[level].get(sibling).copied().unwrap_or(empties[level])
                    })
                    .collect()
            })
            .collect();
        (root, proofs)
    }

    fn leaf(n: u8) -> Hash {
        hashv(&[&[LEAF_PREFIX], &[n]]).to_bytes()
    }

    #[test]
    fn frontier_root_matches_the_full_tree_at_every_size_and_proofs_verify() {
        const HEIGHT: usize = 4;
        let mut frontier = [[0; 32]; HEIGHT];
        let mut leaves = vec![];
        assert_eq!(root(&frontier, 0), full_tree(&[], HEIGHT).0);
        for n in 0..(1u8 << HEIGHT) {
            let filled = append(&mut frontier, u64::from(n), leaf(n));
            leaves.push(leaf(n));
            let (expected, proofs) = full_tree(&leaves, HEIGHT);
            if leaves.len() == 1 << HEIGHT {
                assert_eq!(filled, Some(expected), "the last leaf returns the full root");
            } else {
                assert_eq!(filled, None);
                assert_eq!(
                    root(&frontier, leaves.len() as u64),
                    expected,
                    "{} leaves",
                    leaves.len()
                );
            }
            for (index, proof) in proofs.iter().enumerate() {
                assert_eq!(root_from_proof(leaves[index], index as u64, proof), expected);
                assert_ne!(root_from_proof(leaves[index], index as u64 ^ 1, proof), expected);
            }
        }
    }
}
