//! The parameters of a JSON-RPC call: positional arguments, the configuration object, encodings.

use {super::RpcError, crate::ledger::Commitment, serde_json::Value, solana_pubkey::Pubkey, std::str::FromStr};

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
