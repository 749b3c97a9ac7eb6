//! What the ledger recorded of transactions: signature statuses, a transaction, an address's history.

use {
    super::{
        accounts::ui_token_amount, transactions::encode_return_data, with_context, Params, RpcError, RpcResult,
        MAX_SIGNATURES_FOR_ADDRESS, MAX_SIGNATURE_STATUSES,
    },
    crate::{
        base58,
        history::TransactionSummary,
        ledger::{Commitment, Ledger, TokenBalance, TransactionRecord},
    },
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    serde_json::{json, Value},
    solana_message::{compiled_instruction::CompiledInstruction, VersionedMessage},
    solana_signature::Signature,
};

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

pub(super) fn get_signature_statuses(ledger: &Ledger, params: &Params) -> RpcResult {
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
        "data": base58::encode(&instruction.data),
        "stackHeight": stack_height,
    })
}

fn encode_message(message: &VersionedMessage) -> Value {
    let header = message.header();
    let mut encoded = json!({
        "accountKeys": message.static_account_keys().iter().map(|key| base58::encode(key.as_ref())).collect::<Vec<_>>(),
        "header": {
            "numRequiredSignatures": header.num_required_signatures,
            "numReadonlySignedAccounts": header.num_readonly_signed_accounts,
            "numReadonlyUnsignedAccounts": header.num_readonly_unsigned_accounts,
        },
        "recentBlockhash": base58::encode(message.recent_blockhash().as_ref()),
        "instructions": message.instructions().iter().map(|instruction| encode_instruction(instruction, Some(1))).collect::<Vec<_>>(),
    });
    if let VersionedMessage::V0(message) = message {
        encoded["addressTableLookups"] = json!(message
            .address_table_lookups
            .iter()
            .map(|lookup| json!({
                "accountKey": base58::encode(lookup.account_key.as_ref()),
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
            "mint": base58::encode(balance.mint.as_ref()),
            "owner": base58::encode(balance.owner.as_ref()),
            "programId": base58::encode(spl_token::ID.as_ref()),
            "uiTokenAmount": ui_token_amount(balance.amount, balance.decimals),
        }))
        .collect::<Vec<_>>())
}

fn encode_transaction_record(record: &TransactionRecord, base64: bool) -> Value {
    let transaction = if base64 {
        json!([
            BASE64.encode(bincode::serialize(&record.transaction).expect("a processed transaction serializes")),
            "base64"
        ])
    } else {
        json!({
            "signatures": record.transaction.signatures.iter().map(|signature| base58::encode(signature.as_ref())).collect::<Vec<_>>(),
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
        "loadedAddresses": {
            "writable": record.loaded_addresses.writable.iter().map(|key| base58::encode(key.as_ref())).collect::<Vec<_>>(),
            "readonly": record.loaded_addresses.readonly.iter().map(|key| base58::encode(key.as_ref())).collect::<Vec<_>>(),
        },
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

pub(super) fn get_transaction(ledger: &Ledger, params: &Params) -> RpcResult {
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

pub(super) fn get_signatures_for_address(ledger: &Ledger, params: &Params) -> RpcResult {
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
                "signature": base58::encode(record.signature.as_ref()),
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
