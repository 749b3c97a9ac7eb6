//! Account reads: one, several, by owner or by program with filters, each encoded as a cluster does.

use {
    super::{with_context, Encoding, Params, RpcError, RpcResult, MAX_MULTIPLE_ACCOUNTS},
    crate::ledger::Ledger,
    base64::{engine::general_purpose::STANDARD as BASE64, Engine},
    serde_json::{json, Value},
    solana_account::Account,
    solana_pubkey::Pubkey,
    spl_token::solana_program::program_pack::Pack,
};

pub(super) struct AccountOptions {
    encoding: Encoding,
    data_slice: Option<(usize, usize)>,
}

impl AccountOptions {
    pub(super) fn from(params: &Params, index: usize) -> Result<Self, RpcError> {
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

pub(super) fn encode_account(ledger: &Ledger, account: &Account, options: &AccountOptions) -> Value {
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
        Encoding::Base58 => json!(crate::base58::encode(data)),
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

pub(super) fn ui_token_amount(amount: u64, decimals: u8) -> Value {
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

pub(super) fn get_multiple_accounts(ledger: &Ledger, params: &Params) -> RpcResult {
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

pub(super) fn get_token_account_balance(ledger: &Ledger, params: &Params) -> RpcResult {
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

pub(super) fn get_token_accounts_by_owner(ledger: &Ledger, params: &Params) -> RpcResult {
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

pub(super) fn get_program_accounts(ledger: &Ledger, params: &Params) -> RpcResult {
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
