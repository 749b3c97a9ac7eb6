//! What the ledger says of transactions: their records and token balances, the events it
//! reports, and why it refused to process or to drop one.

use {
    litesvm::types::FailedTransactionMetadata,
    serde::{Deserialize, Serialize},
    solana_message::{inner_instruction::InnerInstructionsList, v0::LoadedAddresses},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_transaction::versioned::VersionedTransaction,
    solana_transaction_context::TransactionReturnData,
    solana_transaction_error::TransactionError,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenBalance {
    pub account_index: u8,
    pub mint: Pubkey,
    pub owner: Pubkey,
    pub amount: u64,
    pub decimals: u8,
}

/// A processed transaction and what it did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TransactionRecord {
    pub slot: u64,
    pub block_time: i64,
    pub transaction: VersionedTransaction,
    pub err: Option<TransactionError>,
    pub fee: u64,
    pub pre_balances: Vec<u64>,
    pub post_balances: Vec<u64>,
    pub pre_token_balances: Vec<TokenBalance>,
    pub post_token_balances: Vec<TokenBalance>,
    pub logs: Vec<String>,
    pub inner_instructions: InnerInstructionsList,
    pub compute_units_consumed: u64,
    pub return_data: TransactionReturnData,
    /// The addresses a v0 transaction loaded from lookup tables, as they were when it ran (a
    /// table may be closed since). Not part of the record's bincode: the history writes it
    /// after the record, so that records written before it read back with none.
    #[serde(skip)]
    pub loaded_addresses: LoadedAddresses,
}

impl TransactionRecord {
    /// Every account the transaction names, in the order its instructions and balances index
    /// them: the static keys, then the loaded writable ones, then the loaded read-only ones.
    pub fn account_keys(&self) -> Vec<Pubkey> {
        account_keys(&self.transaction, &self.loaded_addresses)
    }
}

/// A transaction's static keys followed by what it loaded from lookup tables.
pub fn account_keys(transaction: &VersionedTransaction, loaded: &LoadedAddresses) -> Vec<Pubkey> {
    let mut keys = transaction.message.static_account_keys().to_vec();
    keys.extend_from_slice(&loaded.writable);
    keys.extend_from_slice(&loaded.readonly);
    keys
}

/// What happened on the chain, for subscriptions: drained by the node after each job.
#[derive(Clone, Debug)]
pub enum LedgerEvent {
    Processed {
        signature: Signature,
        slot: u64,
        writable: Vec<Pubkey>,
    },
    Slot {
        slot: u64,
    },
}

/// Why a transaction was not processed.
#[derive(Clone, Debug)]
pub enum Rejection {
    /// The simulation before sending failed (preflight); nothing was charged.
    Preflight(FailedTransactionMetadata),
    /// The runtime refused it before execution (signatures, blockhash, fee payer).
    Refused(TransactionError),
}

/// Why `drop_transaction` refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropRefusal {
    NotFound,
    /// Finalized: no fork can take it away any more.
    Finalized,
    /// A later transaction wrote an account it wrote: dropping it alone would leave that one
    /// built on state that never existed.
    Dependent(Signature),
}
