//! Methods that need the node's own keys: `requestAirdrop`, and the development methods,
//! namespaced `localnet_`: test USDC, the clock, the market's keys, and dropping a transaction
//! before finalization (what an abandoned fork does, for clients that must survive one).

use {
    crate::{
        ledger::DropRefusal,
        market::pda,
        node::NodeState,
        rpc::{Params, RpcError},
    },
    agent_market::FEE_BPS,
    serde_json::{json, Value},
    solana_signature::Signature,
    solana_signer::Signer,
    spl_associated_token_account_client::{
        address::get_associated_token_address, instruction::create_associated_token_account_idempotent,
    },
};

pub fn dispatch(state: &mut NodeState, method: &str, params: &Value) -> Option<Result<Value, RpcError>> {
    let result = match method {
        "requestAirdrop" => request_airdrop(state, params),
        "localnet_mintUsdc" => mint_usdc(state, params),
        "localnet_advanceClock" => advance_clock(state, params),
        "localnet_marketConfig" => Ok(market_config(state)),
        "localnet_dropTransaction" => drop_transaction(state, params),
        _ => return None,
    };
    Some(result)
}

/// `[address, lamports]`: a transfer from the faucet, answered with its signature.
fn request_airdrop(state: &mut NodeState, params: &Value) -> Result<Value, RpcError> {
    let params = Params::new(params)?;
    let address = params.pubkey(0)?;
    let lamports = params.u64(1, "lamports")?;
    let transfer = solana_system_interface::instruction::transfer(&state.faucet.pubkey(), &address, lamports);
    let faucet = state.faucet.insecure_clone();
    state
        .ledger
        .send_instructions(&[transfer], &faucet, &[])
        .map(|signature| json!(signature.to_string()))
        .map_err(|rejection| RpcError::new(-32603, format!("airdrop failed: {rejection:?}")))
}

/// `[owner, amount_usdc]`: mints test USDC (base units, 6 decimals) into the owner's
/// associated token account, creating it if needed.
fn mint_usdc(state: &mut NodeState, params: &Value) -> Result<Value, RpcError> {
    let params = Params::new(params)?;
    let owner = params.pubkey(0)?;
    let amount_usdc = params.u64(1, "amount in USDC base units")?;
    let market = &state.market;
    let mint = market.keys.usdc_mint;
    let token_account = get_associated_token_address(&owner, &mint);
    let mint_authority = market.mint_authority.pubkey();
    let instructions = [
        create_associated_token_account_idempotent(&mint_authority, &owner, &mint, &spl_token::ID),
        spl_token::instruction::mint_to(&spl_token::ID, &mint, &token_account, &mint_authority, &[], amount_usdc)
            .map_err(|err| RpcError::invalid_params(err.to_string()))?,
    ];
    let signature = state
        .ledger
        .send_instructions(&instructions, &market.mint_authority, &[])
        .map_err(|rejection| RpcError::new(-32002, format!("minting test USDC failed: {rejection:?}")))?;
    Ok(json!({
        "signature": signature.to_string(),
        "tokenAccount": token_account.to_string(),
        "balance": state.ledger.chain.token_balance(&token_account).to_string(),
    }))
}

/// `[{"seconds": n}]` moves the clock forward; `[{"slots": n}]` produces n blocks at once.
fn advance_clock(state: &mut NodeState, params: &Value) -> Result<Value, RpcError> {
    let params = Params::new(params)?;
    let config = params.config(0)?;
    match (config.u64("seconds")?, config.u64("slots")?) {
        (Some(seconds), None) => state.ledger.advance_clock_secs(seconds as i64),
        (None, Some(slots)) => (0..slots).for_each(|_| state.ledger.advance_slot()),
        _ => return Err(RpcError::invalid_params("expected {\"seconds\": n} or {\"slots\": n}")),
    }
    Ok(json!({ "slot": state.ledger.slot(), "unixTimestamp": state.ledger.now_unix() }))
}

/// `[signature]`: takes back a transaction that is not finalized (see `Ledger::drop_transaction`).
/// Only on a chain kept in memory: a saved ledger's history is append-only.
fn drop_transaction(state: &mut NodeState, params: &Value) -> Result<Value, RpcError> {
    let params = Params::new(params)?;
    let signature: Signature = params.parse(0, "signature")?;
    if state.store.is_some() {
        return Err(RpcError::new(
            -32603,
            "localnet_dropTransaction is not available with --ledger",
        ));
    }
    match state.ledger.drop_transaction(&signature) {
        Ok(slot) => Ok(json!({ "signature": signature.to_string(), "slot": slot })),
        Err(DropRefusal::NotFound) => Err(RpcError::invalid_params("no such transaction")),
        Err(DropRefusal::Finalized) => Err(RpcError::invalid_params("the transaction is finalized")),
        Err(DropRefusal::Dependent(later)) => Err(RpcError::invalid_params(format!(
            "a later transaction ({later}) wrote an account this one wrote"
        ))),
    }
}

fn market_config(state: &NodeState) -> Value {
    let keys = &state.market.keys;
    json!({
        "programId": agent_market::ID.to_string(),
        "market": pda::market().to_string(),
        "usdcMint": keys.usdc_mint.to_string(),
        "treasury": keys.treasury.to_string(),
        "authority": keys.authority.to_string(),
        "relayer": keys.relayer.to_string(),
        "arbiter": keys.arbiter.to_string(),
        "delegate": pda::delegate().to_string(),
        "feeBps": FEE_BPS,
        "faucet": state.faucet.pubkey().to_string(),
    })
}
