//! The one event of a settlement batch, emitted as `emit_cpi!` emits it (a self-invocation whose
//! data is the event tag, the event's discriminator and its Borsh bytes, signed by the event
//! authority) but serialized once, into a buffer of its exact size. `emit_cpi!` holds the event
//! three times over on the heap and grows its first buffer by doubling: for 16 leaves (3 KiB)
//! that is 12 KiB more of the 32 KiB an Anchor program has, and the batch of 16 would not fit
//! beside the copy SBF makes of every CPI's instruction (docs/program.md, "Batch limits").

use anchor_lang::{
    event::EVENT_IX_TAG_LE,
    prelude::*,
    solana_program::{
        instruction::{AccountMeta, Instruction},
        program::invoke_signed,
    },
    Discriminator,
};

use crate::events::EscrowsSettledToLog;

/// Borsh size of a `ReceiptLeaf`: fixed, as it holds no vector or string.
const LEAF_BYTES: usize = 16 + 8 + 32 + 32 + 16 + 8 + 8 + 8 + 8 + 32 + 32 + 8;
/// Borsh size of the event's fields before its leaves: agent, first leaf index, root, whether it
/// is a checkpoint, the leaves' count.
const HEAD_BYTES: usize = 32 + 8 + 32 + 1 + 4;

pub fn emit_settled_batch<'info>(event_authority: &AccountInfo<'info>, bump: u8, event: &EscrowsSettledToLog) -> Result<()> {
    let mut data = Vec::with_capacity(
        EVENT_IX_TAG_LE.len() + EscrowsSettledToLog::DISCRIMINATOR.len() + HEAD_BYTES + LEAF_BYTES * event.leaves.len(),
    );
    data.extend_from_slice(EVENT_IX_TAG_LE);
    data.extend_from_slice(EscrowsSettledToLog::DISCRIMINATOR);
    event.serialize(&mut data)?;
    let instruction = Instruction {
        program_id: crate::ID,
        accounts: vec![AccountMeta::new_readonly(*event_authority.key, true)],
        data,
    };
    invoke_signed(
        &instruction,
        std::slice::from_ref(event_authority),
        &[&[b"__event_authority", &[bump]]],
    )
    .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ReceiptLeaf;

    #[test]
    fn the_buffer_is_the_events_exact_size() {
        let leaf = ReceiptLeaf {
            execution_id: [1; 16],
            nonce: 2,
            payer: Pubkey::new_unique(),
            payer_token_account: Pubkey::new_unique(),
            api_key_id: [3; 16],
            amount_usdc: 4,
            charged_usdc: 3,
            returned_usdc: 1,
            units: 5,
            request_hash: [6; 32],
            result_hash: [7; 32],
            settled_at: 8,
        };
        assert_eq!(leaf.try_to_vec().unwrap().len(), LEAF_BYTES);
        let event = EscrowsSettledToLog {
            agent: Pubkey::new_unique(),
            first_leaf_index: 9,
            log_root: [10; 32],
            checkpoint: true,
            leaves: vec![leaf; 3],
        };
        assert_eq!(event.try_to_vec().unwrap().len(), HEAD_BYTES + 3 * LEAF_BYTES);
    }
}
