//! Sending and simulating transactions: decoding the wire bytes, and answering as a cluster does.

use {
    super::{records::transaction_error, with_context, Params, RpcError, RpcResult, PACKET_DATA_SIZE},
    crate::ledger::{Ledger, Rejection},
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    serde_json::{json, Value},
    solana_transaction::versioned::VersionedTransaction,
};

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

pub(super) fn encode_return_data(return_data: &solana_transaction_context::TransactionReturnData) -> Value {
    if return_data.data.is_empty() {
        return Value::Null;
    }
    json!({ "programId": return_data.program_id.to_string(), "data": [BASE64.encode(&return_data.data), "base64"] })
}

pub(super) fn send_transaction(ledger: &mut Ledger, params: &Params) -> RpcResult {
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

pub(super) fn simulate_transaction(ledger: &mut Ledger, params: &Params) -> RpcResult {
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
