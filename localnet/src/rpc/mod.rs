//! Solana JSON-RPC methods over the ledger, answering in the shapes a cluster returns: the node's
//! state here, accounts, transactions and their records in the submodules.

mod accounts;
mod params;
mod records;
mod transactions;

pub use {
    accounts::encode_account_value,
    params::{Encoding, Params},
    records::transaction_error,
};
use {
    accounts::{
        encode_account, get_multiple_accounts, get_program_accounts, get_token_account_balance,
        get_token_accounts_by_owner, AccountOptions,
    },
    records::{get_signature_statuses, get_signatures_for_address, get_transaction},
    transactions::{send_transaction, simulate_transaction},
};

use {
    crate::ledger::{Ledger, SLOTS_PER_EPOCH},
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    serde_json::{json, Value},
    solana_hash::Hash,
    solana_message::VersionedMessage,
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_transaction::versioned::VersionedTransaction,
};

/// The core version this node reports; its RPC shapes follow that release.
pub const CORE_VERSION: &str = "2.3.13";
/// The largest transaction a cluster accepts, in bytes.
const PACKET_DATA_SIZE: usize = 1232;
const MAX_MULTIPLE_ACCOUNTS: usize = 100;
const MAX_SIGNATURES_FOR_ADDRESS: usize = 1000;
const MAX_SIGNATURE_STATUSES: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
    pub fn parse_error() -> Self {
        Self::new(-32700, "Parse error")
    }
    pub fn invalid_request(detail: &str) -> Self {
        Self::new(-32600, format!("Invalid request: {detail}"))
    }
    pub fn method_not_found() -> Self {
        Self::new(-32601, "Method not found")
    }
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        Self::new(-32602, format!("Invalid params: {detail}"))
    }
}

type RpcResult = Result<Value, RpcError>;

/// Runs one JSON-RPC method against the ledger.
pub fn dispatch(ledger: &mut Ledger, method: &str, params: &Value) -> RpcResult {
    let params = Params::new(params)?;
    match method {
        "getHealth" => Ok(json!("ok")),
        "getVersion" => Ok(json!({ "solana-core": CORE_VERSION, "feature-set": 0 })),
        "getGenesisHash" => Ok(json!(ledger.genesis_hash().to_string())),
        "getSlot" => Ok(json!(ledger.slot_at(params.commitment(0)?))),
        "getBlockHeight" => Ok(json!(ledger.block_height_at(params.commitment(0)?))),
        "getEpochInfo" => get_epoch_info(ledger, &params),
        "getLatestBlockhash" => {
            let (blockhash, last_valid_block_height) = ledger.latest_blockhash();
            Ok(with_context(
                ledger,
                json!({ "blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height }),
            ))
        }
        "isBlockhashValid" => {
            let blockhash = params.parse::<Hash>(0, "blockhash")?;
            Ok(with_context(ledger, json!(ledger.is_blockhash_valid(&blockhash))))
        }
        "getMinimumBalanceForRentExemption" => {
            let data_len = params.u64(0, "data length")?;
            Ok(json!(ledger
                .chain
                .svm
                .minimum_balance_for_rent_exemption(data_len as usize)))
        }
        "getFeeForMessage" => get_fee_for_message(ledger, &params),
        "getRecentPrioritizationFees" => get_recent_prioritization_fees(ledger, &params),
        "getBalance" => {
            let address = params.pubkey(0)?;
            Ok(with_context(ledger, json!(ledger.chain.lamports(&address))))
        }
        "getAccountInfo" => {
            let address = params.pubkey(0)?;
            let options = AccountOptions::from(&params, 1)?;
            let value = ledger
                .account(&address)
                .map(|account| encode_account(ledger, &account, &options));
            Ok(with_context(ledger, json!(value)))
        }
        "getMultipleAccounts" => get_multiple_accounts(ledger, &params),
        "getTokenAccountBalance" => get_token_account_balance(ledger, &params),
        "getTokenAccountsByOwner" => get_token_accounts_by_owner(ledger, &params),
        "getProgramAccounts" => get_program_accounts(ledger, &params),
        "sendTransaction" => send_transaction(ledger, &params),
        "simulateTransaction" => simulate_transaction(ledger, &params),
        "getSignatureStatuses" => get_signature_statuses(ledger, &params),
        "getTransaction" => get_transaction(ledger, &params),
        "getSignaturesForAddress" => get_signatures_for_address(ledger, &params),
        _ => Err(RpcError::method_not_found()),
    }
}

fn with_context(ledger: &Ledger, value: Value) -> Value {
    // Moved in rather than through `json!`, which would copy the whole answer.
    let mut answer = json!({ "context": { "slot": ledger.slot(), "apiVersion": CORE_VERSION } });
    answer["value"] = value;
    answer
}

fn get_epoch_info(ledger: &Ledger, params: &Params) -> RpcResult {
    let commitment = params.commitment(0)?;
    let slot = ledger.slot_at(commitment);
    Ok(json!({
        "absoluteSlot": slot,
        "blockHeight": ledger.block_height_at(commitment),
        "epoch": slot / SLOTS_PER_EPOCH,
        "slotIndex": slot % SLOTS_PER_EPOCH,
        "slotsInEpoch": SLOTS_PER_EPOCH,
        "transactionCount": ledger.transaction_count(),
    }))
}

/// Addresses `getRecentPrioritizationFees` accepts at most, as agave's RPC.
const MAX_PRIORITIZATION_FEE_ADDRESSES: usize = 128;

fn get_recent_prioritization_fees(ledger: &Ledger, params: &Params) -> RpcResult {
    let accounts: Vec<Pubkey> = match params.get(0) {
        None | Some(Value::Null) => Vec::new(),
        Some(_) => params.list(0, "address", MAX_PRIORITIZATION_FEE_ADDRESSES)?,
    };
    let fees: Vec<Value> = ledger
        .recent_prioritization_fees(&accounts)
        .into_iter()
        .map(|(slot, fee)| json!({ "slot": slot, "prioritizationFee": fee }))
        .collect();
    Ok(json!(fees))
}

fn get_fee_for_message(ledger: &Ledger, params: &Params) -> RpcResult {
    let bytes = BASE64
        .decode(params.str(0, "message")?)
        .map_err(|_| RpcError::invalid_params("message must be base64"))?;
    let message: VersionedMessage =
        bincode::deserialize(&bytes).map_err(|_| RpcError::invalid_params("message does not deserialize"))?;
    let signatures = vec![Signature::default(); usize::from(message.header().num_required_signatures)];
    let fee = ledger.fee_for(&VersionedTransaction { signatures, message });
    Ok(with_context(ledger, json!(fee)))
}
