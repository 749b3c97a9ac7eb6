//! Solana JSON-RPC methods over the ledger, answering in the shapes a cluster returns.

use {
    crate::{
        history::TransactionSummary,
        ledger::{Commitment, Ledger, Rejection, TokenBalance, TransactionRecord, SLOTS_PER_EPOCH},
    },
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    serde_json::{json, Value},
    solana_account::Account,
    solana_hash::Hash,
    solana_message::{compiled_instruction::CompiledInstruction, VersionedMessage},
    solana_pubkey::Pubkey,
    solana_signature::Signature,
    solana_transaction::versioned::VersionedTransaction,
    spl_token::solana_program::program_pack::Pack,
    std::str::FromStr,
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

/// Positional parameters with typed accessors that answer `invalid params` on misuse.
pub struct Params<'a>(&'a [Value]);

impl<'a> Params<'a> {
    pub fn new(params: &'a Value) -> Result<Self, RpcError> {
        match params {
            Value::Array(values) => Ok(Params(values)),
            Value::Null => Ok(Params(&[])),
            _ => Err(RpcError::invalid_params("params must be an array")),
        }
    }

    pub fn get(&self, index: usize) -> Option<&'a Value> {
        self.0.get(index).filter(|value| !value.is_null())
    }

    pub fn str(&self, index: usize, what: &str) -> Result<&'a str, RpcError> {
        self.get(index)
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params(format!("expected {what} as a string at position {index}")))
    }

    pub fn parse<T: FromStr>(&self, index: usize, what: &str) -> Result<T, RpcError> {
        let text = self.str(index, what)?;
        text.parse()
            .map_err(|_| RpcError::invalid_params(format!("invalid {what}: {text}")))
    }

    /// An array of at most `max` strings at `index`, each parsed as a `what`.
    pub fn list<T: FromStr>(&self, index: usize, what: &str, max: usize) -> Result<Vec<T>, RpcError> {
        let values = self
            .get(index)
            .and_then(Value::as_array)
            .ok_or_else(|| RpcError::invalid_params(format!("expected an array of {what}s at position {index}")))?;
        if values.len() > max {
            return Err(RpcError::invalid_params(format!("too many {what}s (at most {max})")));
        }
        values
            .iter()
            .map(|value| {
                value
                    .as_str()
                    .and_then(|text| text.parse().ok())
                    .ok_or_else(|| RpcError::invalid_params(format!("invalid {what} {value}")))
            })
            .collect()
    }

    pub fn pubkey(&self, index: usize) -> Result<Pubkey, RpcError> {
        self.parse(index, "address")
    }

    pub fn u64(&self, index: usize, what: &str) -> Result<u64, RpcError> {
        self.get(index).and_then(Value::as_u64).ok_or_else(|| {
            RpcError::invalid_params(format!("expected {what} as an unsigned integer at position {index}"))
        })
    }

    /// The configuration object at `index`, empty when absent.
    pub fn config(&self, index: usize) -> Result<Config<'a>, RpcError> {
        match self.get(index) {
            None => Ok(Config(None)),
            Some(Value::Object(map)) => Ok(Config(Some(map))),
            Some(_) => Err(RpcError::invalid_params(format!(
                "expected a configuration object at position {index}"
            ))),
        }
    }

    pub fn commitment(&self, index: usize) -> Result<Commitment, RpcError> {
        self.config(index)?.commitment()
    }
}

pub struct Config<'a>(Option<&'a serde_json::Map<String, Value>>);

impl<'a> Config<'a> {
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.and_then(|map| map.get(key)).filter(|value| !value.is_null())
    }

    pub fn str(&self, key: &str) -> Result<Option<&'a str>, RpcError> {
        self.get(key)
            .map(|value| {
                value
                    .as_str()
                    .ok_or_else(|| RpcError::invalid_params(format!("{key} must be a string")))
            })
            .transpose()
    }

    pub fn bool(&self, key: &str) -> Result<bool, RpcError> {
        self.get(key)
            .map(|value| {
                value
                    .as_bool()
                    .ok_or_else(|| RpcError::invalid_params(format!("{key} must be a boolean")))
            })
            .transpose()
            .map(|value| value.unwrap_or(false))
    }

    pub fn u64(&self, key: &str) -> Result<Option<u64>, RpcError> {
        self.get(key)
            .map(|value| {
                value
                    .as_u64()
                    .ok_or_else(|| RpcError::invalid_params(format!("{key} must be an unsigned integer")))
            })
            .transpose()
    }

    pub fn commitment(&self) -> Result<Commitment, RpcError> {
        match self.str("commitment")? {
            None | Some("finalized") | Some("max") | Some("root") => Ok(Commitment::Finalized),
            Some("confirmed") | Some("single") | Some("singleGossip") => Ok(Commitment::Confirmed),
            Some("processed") | Some("recent") => Ok(Commitment::Processed),
            Some(other) => Err(RpcError::invalid_params(format!("unknown commitment {other}"))),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
pub enum Encoding {
    Base58,
    Base64,
    JsonParsed,
}

impl Encoding {
    pub fn from_config(config: &Config) -> Result<Self, RpcError> {
        match config.str("encoding")? {
            None | Some("base64") => Ok(Encoding::Base64),
            Some("base58") | Some("binary") => Ok(Encoding::Base58),
            Some("jsonParsed") => Ok(Encoding::JsonParsed),
            Some(other) => Err(RpcError::invalid_params(format!("unsupported encoding {other}"))),
        }
    }
}

struct AccountOptions {
    encoding: Encoding,
    data_slice: Option<(usize, usize)>,
}

impl AccountOptions {
    fn from(params: &Params, index: usize) -> Result<Self, RpcError> {
        let config = params.config(index)?;
        let encoding = Encoding::from_config(&config)?;
        let data_slice = match config.get("dataSlice") {
            None => None,
            Some(slice) => {
                let field = |name: &str| {
                    slice
                        .get(name)
                        .and_then(Value::as_u64)
                        .map(|value| value as usize)
                        .ok_or_else(|| {
                            RpcError::invalid_params(format!("dataSlice.{name} must be an unsigned integer"))
                        })
                };
                Some((field("offset")?, field("length")?))
            }
        };
        Ok(AccountOptions { encoding, data_slice })
    }
}

/// An account as `accountNotification` and `getAccountInfo` show it.
pub fn encode_account_value(ledger: &Ledger, account: &Account, encoding: Encoding) -> Value {
    encode_account(
        ledger,
        account,
        &AccountOptions {
            encoding,
            data_slice: None,
        },
    )
}

fn encode_account(ledger: &Ledger, account: &Account, options: &AccountOptions) -> Value {
    let data = match options.data_slice {
        Some((offset, length)) => account
            .data
            .get(offset.min(account.data.len())..(offset + length).min(account.data.len()))
            .unwrap_or(&[]),
        None => &account.data[..],
    };
    let encoded = match options.encoding {
        Encoding::JsonParsed if options.data_slice.is_none() => {
            parse_token_account(ledger, account).unwrap_or_else(|| json!([BASE64.encode(data), "base64"]))
        }
        Encoding::Base58 => json!(bs58::encode(data).into_string()),
        _ => json!([BASE64.encode(data), "base64"]),
    };
    json!({
        "data": encoded,
        "executable": account.executable,
        "lamports": account.lamports,
        "owner": account.owner.to_string(),
        "rentEpoch": account.rent_epoch,
        "space": account.data.len(),
    })
}

fn ui_token_amount(amount: u64, decimals: u8) -> Value {
    let scale = 10u64.pow(u32::from(decimals));
    let whole = amount / scale;
    let fraction = amount % scale;
    let ui_amount_string = if decimals == 0 || fraction == 0 {
        whole.to_string()
    } else {
        let digits = format!("{fraction:0width$}", width = decimals as usize);
        format!("{whole}.{}", digits.trim_end_matches('0'))
    };
    json!({
        "amount": amount.to_string(),
        "decimals": decimals,
        "uiAmount": amount as f64 / scale as f64,
        "uiAmountString": ui_amount_string,
    })
}

fn parse_token_account(ledger: &Ledger, account: &Account) -> Option<Value> {
    if account.owner != spl_token::ID || account.data.len() != spl_token::state::Account::LEN {
        return None;
    }
    let token = spl_token::state::Account::unpack(&account.data).ok()?;
    let decimals = ledger.mint_decimals(&token.mint)?;
    let state = match token.state {
        spl_token::state::AccountState::Initialized => "initialized",
        spl_token::state::AccountState::Frozen => "frozen",
        spl_token::state::AccountState::Uninitialized => "uninitialized",
    };
    let mut info = json!({
        "isNative": token.is_native(),
        "mint": token.mint.to_string(),
        "owner": token.owner.to_string(),
        "state": state,
        "tokenAmount": ui_token_amount(token.amount, decimals),
    });
    if let spl_token::solana_program::program_option::COption::Some(delegate) = token.delegate {
        info["delegate"] = json!(delegate.to_string());
        info["delegatedAmount"] = ui_token_amount(token.delegated_amount, decimals);
    }
    Some(json!({
        "program": "spl-token",
        "parsed": { "info": info, "type": "account" },
        "space": spl_token::state::Account::LEN,
    }))
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

fn get_multiple_accounts(ledger: &Ledger, params: &Params) -> RpcResult {
    let addresses: Vec<Pubkey> = params.list(0, "address", MAX_MULTIPLE_ACCOUNTS)?;
    let options = AccountOptions::from(params, 1)?;
    let values: Vec<Value> = addresses
        .iter()
        .map(|address| {
            ledger
                .account(address)
                .map_or(Value::Null, |account| encode_account(ledger, &account, &options))
        })
        .collect();
    Ok(with_context(ledger, Value::Array(values)))
}

fn get_token_account_balance(ledger: &Ledger, params: &Params) -> RpcResult {
    let address = params.pubkey(0)?;
    let not_a_token_account = || RpcError::invalid_params("Invalid param: could not find account");
    let account = ledger.account(&address).ok_or_else(not_a_token_account)?;
    if account.owner != spl_token::ID {
        return Err(RpcError::invalid_params("Invalid param: not a Token account"));
    }
    let token = spl_token::state::Account::unpack(&account.data).map_err(|_| not_a_token_account())?;
    let decimals = ledger.mint_decimals(&token.mint).ok_or_else(not_a_token_account)?;
    Ok(with_context(ledger, ui_token_amount(token.amount, decimals)))
}

fn get_token_accounts_by_owner(ledger: &Ledger, params: &Params) -> RpcResult {
    let owner = params.pubkey(0)?;
    let filter = params.config(1)?;
    let mint = filter
        .str("mint")?
        .map(|text| text.parse::<Pubkey>())
        .transpose()
        .map_err(|_| RpcError::invalid_params("invalid mint"))?;
    let program = filter
        .str("programId")?
        .map(|text| text.parse::<Pubkey>())
        .transpose()
        .map_err(|_| RpcError::invalid_params("invalid programId"))?;
    if mint.is_none() && program.is_none() {
        return Err(RpcError::invalid_params("expected a filter with mint or programId"));
    }
    if program.is_some_and(|program| program != spl_token::ID) {
        return Ok(with_context(ledger, json!([])));
    }
    let options = AccountOptions::from(params, 2)?;
    let mut found: Vec<Value> = ledger
        .accounts()
        .filter(|(_, account)| account.owner == spl_token::ID && account.data.len() == spl_token::state::Account::LEN)
        .filter_map(|(address, account)| {
            let token = spl_token::state::Account::unpack(&account.data).ok()?;
            (token.owner == owner && mint.is_none_or(|mint| token.mint == mint)).then(
                || json!({ "pubkey": address.to_string(), "account": encode_account(ledger, &account, &options) }),
            )
        })
        .collect();
    found.sort_by(|a, b| a["pubkey"].as_str().cmp(&b["pubkey"].as_str()));
    Ok(with_context(ledger, json!(found)))
}

enum Filter {
    DataSize(usize),
    Memcmp { offset: usize, bytes: Vec<u8> },
}

impl Filter {
    fn parse(value: &Value) -> Result<Self, RpcError> {
        if let Some(size) = value.get("dataSize") {
            return size
                .as_u64()
                .map(|size| Filter::DataSize(size as usize))
                .ok_or_else(|| RpcError::invalid_params("dataSize must be an unsigned integer"));
        }
        let memcmp = value
            .get("memcmp")
            .ok_or_else(|| RpcError::invalid_params("unknown filter"))?;
        let offset = memcmp
            .get("offset")
            .and_then(Value::as_u64)
            .ok_or_else(|| RpcError::invalid_params("memcmp.offset must be an unsigned integer"))?
            as usize;
        let text = memcmp
            .get("bytes")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("memcmp.bytes must be a string"))?;
        let bytes = match memcmp.get("encoding").and_then(Value::as_str) {
            Some("base64") => BASE64
                .decode(text)
                .map_err(|_| RpcError::invalid_params("memcmp.bytes is not base64"))?,
            None | Some("base58") => bs58::decode(text)
                .into_vec()
                .map_err(|_| RpcError::invalid_params("memcmp.bytes is not base58"))?,
            Some(other) => return Err(RpcError::invalid_params(format!("unsupported memcmp encoding {other}"))),
        };
        Ok(Filter::Memcmp { offset, bytes })
    }

    fn matches(&self, data: &[u8]) -> bool {
        match self {
            Filter::DataSize(size) => data.len() == *size,
            Filter::Memcmp { offset, bytes } => data.get(*offset..*offset + bytes.len()) == Some(&bytes[..]),
        }
    }
}

fn get_program_accounts(ledger: &Ledger, params: &Params) -> RpcResult {
    let program = params.pubkey(0)?;
    let config = params.config(1)?;
    let filters = match config.get("filters") {
        None => Vec::new(),
        Some(Value::Array(filters)) => filters.iter().map(Filter::parse).collect::<Result<_, _>>()?,
        Some(_) => return Err(RpcError::invalid_params("filters must be an array")),
    };
    let options = AccountOptions::from(params, 1)?;
    let mut found: Vec<Value> = ledger
        .accounts()
        .filter(|(_, account)| account.owner == program && filters.iter().all(|filter| filter.matches(&account.data)))
        .map(|(address, account)| json!({ "pubkey": address.to_string(), "account": encode_account(ledger, &account, &options) }))
        .collect();
    found.sort_by(|a, b| a["pubkey"].as_str().cmp(&b["pubkey"].as_str()));
    if config.bool("withContext")? {
        Ok(with_context(ledger, json!(found)))
    } else {
        Ok(json!(found))
    }
}

fn decode_transaction(params: &Params) -> Result<VersionedTransaction, RpcError> {
    let text = params.str(0, "transaction")?;
    let bytes = match params.config(1)?.str("encoding")? {
        None | Some("base58") => bs58::decode(text)
            .into_vec()
            .map_err(|_| RpcError::invalid_params("transaction is not base58"))?,
        Some("base64") => BASE64
            .decode(text)
            .map_err(|_| RpcError::invalid_params("transaction is not base64"))?,
        Some(other) => return Err(RpcError::invalid_params(format!("unsupported encoding {other}"))),
    };
    if bytes.len() > PACKET_DATA_SIZE {
        return Err(RpcError::invalid_params(format!(
            "base64 encoded solana_transaction::versioned::VersionedTransaction too large: {} bytes (max: encoded/raw {}/{PACKET_DATA_SIZE})",
            text.len(),
            PACKET_DATA_SIZE * 4 / 3 + 4
        )));
    }
    let transaction: VersionedTransaction = bincode::deserialize(&bytes)
        .map_err(|err| RpcError::invalid_params(format!("failed to deserialize transaction: {err}")))?;
    transaction
        .sanitize()
        .map_err(|err| RpcError::invalid_params(format!("invalid transaction: {err}")))?;
    Ok(transaction)
}

fn simulation_value(
    err: Option<Value>,
    logs: &[String],
    units: u64,
    return_data: &solana_transaction_context::TransactionReturnData,
) -> Value {
    json!({
        "err": err,
        "logs": logs,
        "accounts": null,
        "unitsConsumed": units,
        "returnData": encode_return_data(return_data),
        "innerInstructions": null,
        "replacementBlockhash": null,
    })
}

fn encode_return_data(return_data: &solana_transaction_context::TransactionReturnData) -> Value {
    if return_data.data.is_empty() {
        return Value::Null;
    }
    json!({ "programId": return_data.program_id.to_string(), "data": [BASE64.encode(&return_data.data), "base64"] })
}

fn send_transaction(ledger: &mut Ledger, params: &Params) -> RpcResult {
    let transaction = decode_transaction(params)?;
    let config = params.config(1)?;
    let preflight = !config.bool("skipPreflight")?;
    let max_retries = config.u64("maxRetries")?;
    match ledger.submit(transaction, preflight, max_retries) {
        Ok(signature) => Ok(json!(signature.to_string())),
        Err(Rejection::Preflight(failed)) => {
            let first_log = failed
                .meta
                .logs
                .iter()
                .rev()
                .find(|line| line.contains("failed"))
                .cloned();
            let mut error = RpcError::new(
                -32002,
                format!(
                    "Transaction simulation failed: Error processing Instruction: {}",
                    first_log.unwrap_or_else(|| failed.err.to_string())
                ),
            );
            error.data = Some(simulation_value(
                Some(transaction_error(&failed.err)),
                &failed.meta.logs,
                failed.meta.compute_units_consumed,
                &failed.meta.return_data,
            ));
            Err(error)
        }
        Err(Rejection::Refused(err)) => {
            let (code, message) = match err {
                solana_transaction_error::TransactionError::SignatureFailure => {
                    (-32003, "Transaction signature verification failure".to_string())
                }
                _ => (-32002, format!("Transaction simulation failed: {err}")),
            };
            let mut error = RpcError::new(code, message);
            error.data = Some(simulation_value(
                Some(transaction_error(&err)),
                &[],
                0,
                &Default::default(),
            ));
            Err(error)
        }
    }
}

fn simulate_transaction(ledger: &mut Ledger, params: &Params) -> RpcResult {
    let mut transaction = decode_transaction(params)?;
    let config = params.config(1)?;
    let verify_signatures = config.bool("sigVerify")?;
    let replace_blockhash = config.bool("replaceRecentBlockhash")?;
    if verify_signatures && replace_blockhash {
        return Err(RpcError::invalid_params(
            "sigVerify may not be used with replaceRecentBlockhash",
        ));
    }
    let replacement = if replace_blockhash {
        let (blockhash, last_valid_block_height) = ledger.latest_blockhash();
        transaction.message.set_recent_blockhash(blockhash);
        Some(json!({ "blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height }))
    } else if !ledger.is_blockhash_valid(transaction.message.recent_blockhash()) {
        let value = simulation_value(Some(json!("BlockhashNotFound")), &[], 0, &Default::default());
        return Ok(with_context(ledger, value));
    } else {
        None
    };
    let mut value = match ledger.simulate(transaction, verify_signatures) {
        Ok(meta) => simulation_value(None, &meta.logs, meta.compute_units_consumed, &meta.return_data),
        Err(failed) => simulation_value(
            Some(transaction_error(&failed.err)),
            &failed.meta.logs,
            failed.meta.compute_units_consumed,
            &failed.meta.return_data,
        ),
    };
    value["replacementBlockhash"] = json!(replacement);
    Ok(with_context(ledger, value))
}

pub fn transaction_error(err: &solana_transaction_error::TransactionError) -> Value {
    serde_json::to_value(err).unwrap_or_else(|_| json!(err.to_string()))
}

fn commitment_name(commitment: Commitment) -> &'static str {
    match commitment {
        Commitment::Processed => "processed",
        Commitment::Confirmed => "confirmed",
        Commitment::Finalized => "finalized",
    }
}

fn status_value(ledger: &Ledger, record: &TransactionSummary) -> Value {
    let commitment = ledger.commitment_of(record.slot);
    let confirmations = match commitment {
        Commitment::Finalized => Value::Null,
        _ => json!(ledger.slot() - record.slot),
    };
    let status = match &record.err {
        None => json!({ "Ok": null }),
        Some(err) => json!({ "Err": transaction_error(err) }),
    };
    json!({
        "slot": record.slot,
        "confirmations": confirmations,
        "err": record.err.as_deref().map(transaction_error),
        "status": status,
        "confirmationStatus": commitment_name(commitment),
    })
}

fn get_signature_statuses(ledger: &Ledger, params: &Params) -> RpcResult {
    let signatures: Vec<Signature> = params.list(0, "signature", MAX_SIGNATURE_STATUSES)?;
    let statuses: Vec<Value> = signatures
        .iter()
        .map(|signature| {
            ledger
                .transaction_summary(signature)
                .map_or(Value::Null, |record| status_value(ledger, record))
        })
        .collect();
    Ok(with_context(ledger, Value::Array(statuses)))
}

/// Whether a record is visible at `commitment`.
fn visible_at(ledger: &Ledger, record: &TransactionSummary, commitment: Commitment) -> bool {
    record.slot <= ledger.slot_at(commitment)
}

fn encode_instruction(instruction: &CompiledInstruction, stack_height: Option<u32>) -> Value {
    json!({
        "programIdIndex": instruction.program_id_index,
        "accounts": instruction.accounts,
        "data": bs58::encode(&instruction.data).into_string(),
        "stackHeight": stack_height,
    })
}

fn encode_message(message: &VersionedMessage) -> Value {
    let header = message.header();
    let mut encoded = json!({
        "accountKeys": message.static_account_keys().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "header": {
            "numRequiredSignatures": header.num_required_signatures,
            "numReadonlySignedAccounts": header.num_readonly_signed_accounts,
            "numReadonlyUnsignedAccounts": header.num_readonly_unsigned_accounts,
        },
        "recentBlockhash": message.recent_blockhash().to_string(),
        "instructions": message.instructions().iter().map(|instruction| encode_instruction(instruction, Some(1))).collect::<Vec<_>>(),
    });
    if let VersionedMessage::V0(message) = message {
        encoded["addressTableLookups"] = json!(message
            .address_table_lookups
            .iter()
            .map(|lookup| json!({
                "accountKey": lookup.account_key.to_string(),
                "writableIndexes": lookup.writable_indexes,
                "readonlyIndexes": lookup.readonly_indexes,
            }))
            .collect::<Vec<_>>());
    }
    encoded
}

fn encode_token_balances(balances: &[TokenBalance]) -> Value {
    json!(balances
        .iter()
        .map(|balance| json!({
            "accountIndex": balance.account_index,
            "mint": balance.mint.to_string(),
            "owner": balance.owner.to_string(),
            "programId": spl_token::ID.to_string(),
            "uiTokenAmount": ui_token_amount(balance.amount, balance.decimals),
        }))
        .collect::<Vec<_>>())
}

pub fn encode_transaction_record(record: &TransactionRecord, base64: bool) -> Value {
    let transaction = if base64 {
        json!([
            BASE64.encode(bincode::serialize(&record.transaction).expect("a processed transaction serializes")),
            "base64"
        ])
    } else {
        json!({
            "signatures": record.transaction.signatures.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "message": encode_message(&record.transaction.message),
        })
    };
    let inner_instructions: Vec<Value> = record
        .inner_instructions
        .iter()
        .enumerate()
        .filter(|(_, inner)| !inner.is_empty())
        .map(|(index, inner)| {
            json!({
                "index": index,
                "instructions": inner
                    .iter()
                    .map(|inner| encode_instruction(&inner.instruction, Some(u32::from(inner.stack_height))))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let status = match &record.err {
        None => json!({ "Ok": null }),
        Some(err) => json!({ "Err": transaction_error(err) }),
    };
    let version = match record.transaction.message {
        VersionedMessage::Legacy(_) => json!("legacy"),
        VersionedMessage::V0(_) => json!(0),
    };
    let mut meta = json!({
        "err": record.err.as_ref().map(transaction_error),
        "status": status,
        "fee": record.fee,
        "preBalances": record.pre_balances,
        "postBalances": record.post_balances,
        "innerInstructions": inner_instructions,
        "logMessages": record.logs,
        "preTokenBalances": encode_token_balances(&record.pre_token_balances),
        "postTokenBalances": encode_token_balances(&record.post_token_balances),
        "rewards": [],
        "loadedAddresses": { "writable": [], "readonly": [] },
        "computeUnitsConsumed": record.compute_units_consumed,
    });
    let return_data = encode_return_data(&record.return_data);
    if !return_data.is_null() {
        meta["returnData"] = return_data;
    }
    json!({
        "slot": record.slot,
        "blockTime": record.block_time,
        "transaction": transaction,
        "meta": meta,
        "version": version,
    })
}

fn get_transaction(ledger: &Ledger, params: &Params) -> RpcResult {
    let signature: Signature = params.parse(0, "signature")?;
    let config = params.config(1)?;
    let base64 = match config.str("encoding")? {
        None | Some("json") | Some("jsonParsed") => false,
        Some("base64") => true,
        Some(other) => return Err(RpcError::invalid_params(format!("unsupported encoding {other}"))),
    };
    let commitment = config.commitment()?;
    if commitment == Commitment::Processed {
        return Err(RpcError::invalid_params(
            "processed commitment is not supported for getTransaction",
        ));
    }
    if !ledger
        .transaction_summary(&signature)
        .is_some_and(|summary| visible_at(ledger, summary, commitment))
    {
        return Ok(Value::Null);
    }
    let Some(record) = ledger
        .transaction(&signature)
        .map_err(|err| RpcError::new(-32603, format!("cannot read the transaction: {err}")))?
    else {
        return Ok(Value::Null);
    };
    if let VersionedMessage::V0(_) = record.transaction.message {
        if config.u64("maxSupportedTransactionVersion")?.is_none() {
            return Err(RpcError::new(
                -32015,
                "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0",
            ));
        }
    }
    Ok(encode_transaction_record(&record, base64))
}

fn get_signatures_for_address(ledger: &Ledger, params: &Params) -> RpcResult {
    let address = params.pubkey(0)?;
    let config = params.config(1)?;
    let parse_signature = |key: &str| -> Result<Option<Signature>, RpcError> {
        config
            .str(key)?
            .map(|text| {
                text.parse()
                    .map_err(|_| RpcError::invalid_params(format!("invalid {key} signature")))
            })
            .transpose()
    };
    let before = parse_signature("before")?;
    let until = parse_signature("until")?;
    let limit = config.u64("limit")?.unwrap_or(MAX_SIGNATURES_FOR_ADDRESS as u64) as usize;
    if limit == 0 || limit > MAX_SIGNATURES_FOR_ADDRESS {
        return Err(RpcError::invalid_params(format!(
            "Invalid limit; max {MAX_SIGNATURES_FOR_ADDRESS}"
        )));
    }
    let commitment = config.commitment()?;
    let records = ledger
        .history()
        .signatures_for(&address, before.as_ref(), until.as_ref(), limit)
        .into_iter()
        .filter(|record| visible_at(ledger, record, commitment))
        .map(|record| {
            json!({
                "signature": record.signature.to_string(),
                "slot": record.slot,
                "err": record.err.as_deref().map(transaction_error),
                "memo": null,
                "blockTime": record.block_time,
                "confirmationStatus": commitment_name(ledger.commitment_of(record.slot)),
            })
        })
        .collect::<Vec<_>>();
    Ok(json!(records))
}
