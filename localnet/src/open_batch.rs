//! The client side of `open_escrow_batch`: one instruction opening several escrows of one agent.

use {
    crate::market::{pda, program_ix, MarketKeys},
    agent_market::{accounts, instruction, OpenEscrowItem, ID as PROGRAM_ID},
    solana_instruction::{AccountMeta, Instruction},
    solana_pubkey::Pubkey,
};

/// One escrow of a batched open: who pays, and `open_escrow`'s arguments.
#[derive(Clone, Debug)]
pub struct OpenBatchEntry {
    pub payer: Pubkey,
    pub payer_token_account: Pubkey,
    pub item: OpenEscrowItem,
}

impl MarketKeys {
    /// `open_escrow_batch` of `entries`, all of `agent`: per entry its escrow, the payer's token
    /// account and the payer's subscription address, in the order of the items.
    pub fn open_escrow_batch(&self, agent: Pubkey, entries: &[OpenBatchEntry]) -> Instruction {
        let mut open = program_ix(
            accounts::OpenEscrowBatch {
                relayer: self.relayer,
                market: pda::market(),
                agent,
                escrow_vault: pda::escrow_vault(&agent),
                delegate: pda::delegate(),
                usdc_mint: self.usdc_mint,
                token_program: spl_token::ID,
                system_program: solana_system_interface::program::ID,
                event_authority: pda::event_authority(),
                program: PROGRAM_ID,
            },
            instruction::OpenEscrowBatch {
                items: entries.iter().map(|entry| entry.item).collect(),
            },
        );
        for entry in entries {
            open.accounts.extend([
                AccountMeta::new(pda::escrow(&entry.item.execution_id), false),
                AccountMeta::new(entry.payer_token_account, false),
                AccountMeta::new(pda::subscription(&agent, &entry.payer), false),
            ]);
        }
        open
    }
}
