//! The golden vectors in tests/vectors/golden.json, which the TypeScript client's tests
//! (sdk/program/test) check too, so that the two sides cannot drift: result digests, SHA-256 of
//! canonical JSON texts, an Ed25519 signature and its precompile instruction, every PDA, and
//! every instruction builder of `localnet::market` for fixed inputs.
//!
//! This checks every Rust-computable field against the Rust implementation. Run with
//! `WRITE_GOLDEN=1` to rewrite those fields instead (inputs are left as they are):
//! `WRITE_GOLDEN=1 sh scripts/cargo.sh test -p localnet --test vectors`.

use std::{fs, path::PathBuf, str::FromStr};

use agent_market::{
    error::AgentMarketError,
    signature::{
        require_ed25519_verified, result_digest, signing_key_proof_digest, ResultBinding, VerificationErrors,
        SIGNING_KEY_PROOF,
    },
    AgentTerms, Escrow, MarketParams, OpenEscrowItem, Pricing, ReceiptLeaf, RefundReason, ID as PROGRAM_ID,
};
use anchor_lang::solana_program::hash::hashv;
use localnet::{
    market::{pda, EscrowRef, MarketKeys},
    open_batch::OpenBatchEntry,
};
use serde_json::{json, Value};
use solana_instruction::Instruction;
use solana_keypair::keypair_from_seed;
use solana_pubkey::Pubkey;
use solana_signer::Signer;

/// The errors settle_batch reports for a call's own signature (one precompile entry over one
/// result digest), which the program no longer names as a constant.
const RESULT_SIGNATURE: VerificationErrors = VerificationErrors {
    missing: AgentMarketError::MissingEd25519Instruction,
    key_mismatch: AgentMarketError::SignerKeyMismatch,
    digest_mismatch: AgentMarketError::DigestMismatch,
};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/golden.json")
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(hex: &str) -> Vec<u8> {
    assert!(hex.len() % 2 == 0, "odd-length hex {hex:?}");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or_else(|_| panic!("bad hex {hex:?}")))
        .collect()
}

fn hex_array<const N: usize>(value: &Value) -> [u8; N] {
    let hex = value
        .as_str()
        .unwrap_or_else(|| panic!("expected a hex string, got {value}"));
    from_hex(hex)
        .try_into()
        .unwrap_or_else(|_| panic!("expected {N} bytes: {hex}"))
}

fn pubkey(value: &Value) -> Pubkey {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("expected a base58 address, got {value}"));
    Pubkey::from_str(text).unwrap_or_else(|_| panic!("bad address {text:?}"))
}

fn u64_of(value: &Value) -> u64 {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("expected a u64 decimal string, got {value}"))
}

/// A decimal u64 per element of the JSON array `value` (empty when `value` is an empty array).
fn u64s_of(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected an array of u64 decimal strings, got {value}"))
        .iter()
        .map(u64_of)
        .collect()
}

fn u32_of(value: &Value) -> u32 {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or_else(|| panic!("expected a u32, got {value}"))
}

fn u8_of(value: &Value) -> u8 {
    value
        .as_u64()
        .and_then(|n| u8::try_from(n).ok())
        .unwrap_or_else(|| panic!("expected a u8, got {value}"))
}

fn bool_of(value: &Value) -> bool {
    value
        .as_bool()
        .unwrap_or_else(|| panic!("expected a boolean, got {value}"))
}

fn sha256_hex(text: &str) -> String {
    to_hex(&hashv(&[text.as_bytes()]).to_bytes())
}

/// Compares golden fields with computed values, or sets them when writing.
struct Checker {
    write: bool,
    mismatches: Vec<String>,
}

impl Checker {
    fn field(&mut self, what: &str, slot: &mut Value, computed: Value) {
        if *slot != computed {
            if self.write {
                *slot = computed;
            } else {
                self.mismatches
                    .push(format!("{what}: golden {slot}, computed {computed}"));
            }
        }
    }
}

fn instruction_json(ix: &Instruction) -> (Value, Value, Value) {
    let accounts = ix
        .accounts
        .iter()
        .map(|meta| json!({ "pubkey": meta.pubkey.to_string(), "is_signer": meta.is_signer, "is_writable": meta.is_writable }))
        .collect();
    (
        json!(ix.program_id.to_string()),
        Value::Array(accounts),
        json!(to_hex(&ix.data)),
    )
}

fn market_params(value: &Value) -> MarketParams {
    MarketParams {
        relayer: pubkey(&value["relayer"]),
        arbiter: pubkey(&value["arbiter"]),
        min_collateral_usdc: u64_of(&value["min_collateral_usdc"]),
        min_price_per_call_usdc: u64_of(&value["min_price_per_call_usdc"]),
        escrow_grace_secs: u32_of(&value["escrow_grace_secs"]),
        dispute_window_secs: u32_of(&value["dispute_window_secs"]),
        collateral_cooldown_secs: u32_of(&value["collateral_cooldown_secs"]),
        escrows_paused: bool_of(&value["escrows_paused"]),
    }
}

fn pricing(value: &Value) -> Pricing {
    match value["kind"].as_str() {
        Some("PayPerUse") => Pricing::PayPerUse {
            price_usdc: u64_of(&value["price_usdc"]),
        },
        Some("Subscription") => Pricing::Subscription {
            period_price_usdc: u64_of(&value["period_price_usdc"]),
            period_secs: u32_of(&value["period_secs"]),
        },
        Some("Hybrid") => Pricing::Hybrid {
            period_price_usdc: u64_of(&value["period_price_usdc"]),
            period_secs: u32_of(&value["period_secs"]),
            included_calls: u32_of(&value["included_calls"]),
            overage_price_usdc: u64_of(&value["overage_price_usdc"]),
        },
        _ => panic!("unknown pricing {value}"),
    }
}

fn agent_terms(value: &Value) -> AgentTerms {
    AgentTerms {
        signing_key: hex_array(&value["signing_key"]),
        endpoint: value["endpoint"].as_str().expect("endpoint").to_owned(),
        listing_hash: hex_array(&value["listing_hash"]),
        pricing: pricing(&value["pricing"]),
        max_execution_secs: u32_of(&value["max_execution_secs"]),
    }
}

fn refund_reason(value: &Value) -> RefundReason {
    match value.as_str() {
        Some("Timeout") => RefundReason::Timeout,
        Some("CreatorError") => RefundReason::CreatorError,
        Some("InvalidSignature") => RefundReason::InvalidSignature,
        Some("OutputInvalid") => RefundReason::OutputInvalid,
        Some("RelayerError") => RefundReason::RelayerError,
        _ => panic!("unknown refund reason {value}"),
    }
}

/// Builds instruction `name` with `localnet::market` from the shared inputs and the case's args.
fn build_instruction(inputs: &Value, name: &str, args: &Value) -> Instruction {
    let keys = &inputs["keys"];
    let market = MarketKeys {
        authority: pubkey(&keys["authority"]),
        relayer: pubkey(&keys["relayer"]),
        arbiter: pubkey(&keys["arbiter"]),
        usdc_mint: pubkey(&keys["usdc_mint"]),
        treasury: pubkey(&keys["treasury"]),
    };
    let creator = pubkey(&keys["creator"]);
    let creator_token_account = pubkey(&keys["creator_token_account"]);
    let payout_account = pubkey(&keys["payout_account"]);
    let payer = pubkey(&keys["payer"]);
    let payer_token_account = pubkey(&keys["payer_token_account"]);
    let agent_id: [u8; 16] = hex_array(&inputs["agent_id"]);
    let agent = pda::agent(&agent_id);
    let execution_id: [u8; 16] = hex_array(&inputs["execution_id"]);
    let leaf_index = u64_of(&inputs["leaf_index"]);
    let escrow = EscrowRef {
        execution_id,
        agent,
        payer,
        payer_token_account,
        rent_payer: market.relayer,
    };
    match name {
        "initialize_market" => market.initialize_market(market_params(&args["params"])),
        "update_market" => market.update_market(market_params(&args["params"]), pubkey(&keys["new_authority"])),
        "accept_market_authority" => market.accept_market_authority(pubkey(&keys["new_authority"])),
        "create_fee_shard" => market.create_fee_shard(u8_of(&args["index"])),
        "sweep_fees" => market.sweep_fees(u8_of(&args["index"])),
        "register_agent" => market.register_agent(
            creator,
            agent_id,
            creator_token_account,
            payout_account,
            creator,
            agent_terms(&args["terms"]),
            u64_of(&args["collateral_usdc"]),
        ),
        "update_agent" => market.update_agent(creator, agent, payout_account, creator, agent_terms(&args["terms"])),
        "top_up_collateral" => {
            market.top_up_collateral(creator, agent, creator_token_account, u64_of(&args["amount_usdc"]))
        }
        "retire_agent" => market.retire_agent(creator, agent),
        "withdraw_collateral" => market.withdraw_collateral(creator, agent, creator_token_account),
        "open_escrow" => market.open_escrow(
            agent,
            payer,
            payer_token_account,
            execution_id,
            hex_array(&inputs["api_key_id"]),
            hex_array(&inputs["request_hash"]),
            u64_of(&args["max_amount_usdc"]),
        ),
        "refund" => market.refund(
            &escrow,
            refund_reason(&args["reason"]),
            bool_of(&args["with_subscription"]),
        ),
        "reclaim" => market.reclaim(&escrow, bool_of(&args["with_subscription"])),
        "subscribe" => market.subscribe(
            agent,
            payer,
            payer_token_account,
            payout_account,
            u8_of(&args["fee_shard_index"]),
            u64_of(&args["max_amount_usdc"]),
        ),
        "open_dispute" => market.open_dispute(
            agent,
            ReceiptLeaf {
                execution_id,
                nonce: u64_of(&args["nonce"]),
                payer,
                payer_token_account,
                api_key_id: hex_array(&inputs["api_key_id"]),
                amount_usdc: u64_of(&args["amount_usdc"]),
                charged_usdc: u64_of(&args["charged_usdc"]),
                returned_usdc: u64_of(&args["returned_usdc"]),
                units: u64_of(&args["units"]),
                request_hash: hex_array(&inputs["request_hash"]),
                result_hash: hex_array(&inputs["result_hash"]),
                settled_at: u64_of(&args["settled_at"]) as i64,
            },
            leaf_index,
            args["proof"].as_array().expect("proof").iter().map(hex_array).collect(),
            hex_array(&inputs["evidence_hash"]),
        ),
        "resolve_dispute" => market.resolve_dispute(
            agent,
            leaf_index,
            payer_token_account,
            bool_of(&args["upheld"]),
            u64_of(&args["slash_usdc"]),
        ),
        "close_dispute" => market.close_dispute(agent, leaf_index, payer),
        "create_receipt_log" => market.create_receipt_log(market.relayer, agent),
        "settle_batch" => {
            let execution_ids: Vec<[u8; 16]> = args["execution_ids"]
                .as_array()
                .expect("execution_ids")
                .iter()
                .map(hex_array)
                .collect();
            let result_hashes = args["result_hashes"]
                .as_array()
                .expect("result_hashes")
                .iter()
                .map(hex_array)
                .collect();
            market.settle_batch(
                agent,
                payout_account,
                &execution_ids,
                result_hashes,
                u64s_of(&args["units"]),
                u8_of(&args["fee_shard_index"]),
            )
        }
        "open_escrow_batch" => {
            let entries: Vec<OpenBatchEntry> = args["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|item| OpenBatchEntry {
                    payer: pubkey(&item["payer"]),
                    payer_token_account: pubkey(&item["payer_token_account"]),
                    item: OpenEscrowItem {
                        execution_id: hex_array(&item["execution_id"]),
                        api_key_id: hex_array(&item["api_key_id"]),
                        request_hash: hex_array(&item["request_hash"]),
                        max_amount_usdc: u64_of(&item["max_amount_usdc"]),
                    },
                })
                .collect();
            market.open_escrow_batch(agent, &entries)
        }
        other => panic!("no builder for instruction {other}"),
    }
}

fn check(golden: &mut Value, c: &mut Checker) {
    c.field("program_id", &mut golden["program_id"], json!(PROGRAM_ID.to_string()));

    for (i, case) in golden["result_digest"]
        .as_array_mut()
        .expect("result_digest")
        .iter_mut()
        .enumerate()
    {
        // Only the fields the digest binds matter; the rest of the account is left empty.
        let escrow = Escrow {
            execution_id: hex_array(&case["execution_id"]),
            agent: pubkey(&case["agent"]),
            nonce: u64_of(&case["nonce"]),
            payer: pubkey(&case["payer"]),
            payer_token_account: pubkey(&case["payer_token_account"]),
            api_key_id: [0; 16],
            amount_usdc: u64_of(&case["amount_usdc"]),
            price_per_unit_usdc: 0,
            max_units: 0,
            request_hash: hex_array(&case["request_hash"]),
            opened_at: 0,
            deadline: 0,
            rent_payer: Pubkey::default(),
            used_included_call: false,
            bump: 0,
        };
        let digest = result_digest(&ResultBinding {
            escrow: &escrow,
            result_hash: &hex_array(&case["result_hash"]),
            units: u64_of(&case["units"]),
        });
        c.field(
            &format!("result_digest[{i}].digest"),
            &mut case["digest"],
            json!(to_hex(&digest)),
        );
    }

    // Rust has no RFC 8785 canonicalizer here: TypeScript checks the canonical texts, Rust their hashes.
    for (i, case) in golden["canonical_json"]
        .as_array_mut()
        .expect("canonical_json")
        .iter_mut()
        .enumerate()
    {
        let hash = sha256_hex(case["canonical"].as_str().expect("canonical"));
        c.field(&format!("canonical_json[{i}].sha256"), &mut case["sha256"], json!(hash));
    }
    for (i, case) in golden["request_hash"]
        .as_array_mut()
        .expect("request_hash")
        .iter_mut()
        .enumerate()
    {
        let canonical = case["canonical"].as_str().expect("canonical").to_owned();
        assert!(
            canonical.starts_with("{\"parameters\":") && canonical.contains(",\"task\":"),
            "request_hash[{i}].canonical is not the canonical form of {{task, parameters}}"
        );
        c.field(
            &format!("request_hash[{i}].request_hash"),
            &mut case["request_hash"],
            json!(sha256_hex(&canonical)),
        );
    }

    let message = hex_array::<32>(&golden["result_digest"][0]["digest"]);
    let ed = &mut golden["ed25519"];
    let keypair = keypair_from_seed(&from_hex(ed["seed"].as_str().expect("seed"))).expect("keypair from seed");
    let public_key = keypair.pubkey().to_bytes();
    let signature: [u8; 64] = keypair.sign_message(&message).into();
    let empty_signature: [u8; 64] = keypair.sign_message(&[]).into();
    let verify = MarketKeys::verify_result_signature(&public_key, &signature, &message);
    assert_eq!(verify.program_id, solana_sdk_ids::ed25519_program::ID);
    assert!(verify.accounts.is_empty());
    require_ed25519_verified(
        &verify.program_id,
        &verify.data,
        &public_key,
        &message,
        &RESULT_SIGNATURE,
    )
    .expect("the program accepts the precompile instruction");
    c.field("ed25519.public_key", &mut ed["public_key"], json!(to_hex(&public_key)));
    c.field(
        "ed25519.public_key_base58",
        &mut ed["public_key_base58"],
        json!(keypair.pubkey().to_string()),
    );
    c.field(
        "ed25519.empty_message_signature",
        &mut ed["empty_message_signature"],
        json!(to_hex(&empty_signature)),
    );
    c.field("ed25519.message", &mut ed["message"], json!(to_hex(&message)));
    c.field("ed25519.signature", &mut ed["signature"], json!(to_hex(&signature)));
    c.field(
        "ed25519.instruction_data",
        &mut ed["instruction_data"],
        json!(to_hex(&verify.data)),
    );

    // The signing-key proof, signed by the same key as the ed25519 vector.
    for (i, case) in golden["signing_key_proof"]
        .as_array_mut()
        .expect("signing_key_proof")
        .iter_mut()
        .enumerate()
    {
        let (agent, creator) = (pubkey(&case["agent"]), pubkey(&case["creator"]));
        let digest = signing_key_proof_digest(&agent, &creator);
        let signature: [u8; 64] = keypair.sign_message(&digest).into();
        let verify = MarketKeys::verify_signing_key_proof(&public_key, &signature, &agent, &creator);
        require_ed25519_verified(
            &verify.program_id,
            &verify.data,
            &public_key,
            &digest,
            &SIGNING_KEY_PROOF,
        )
        .expect("the program accepts the proof's precompile instruction");
        c.field(
            &format!("signing_key_proof[{i}].digest"),
            &mut case["digest"],
            json!(to_hex(&digest)),
        );
        c.field(
            &format!("signing_key_proof[{i}].signature"),
            &mut case["signature"],
            json!(to_hex(&signature)),
        );
        c.field(
            &format!("signing_key_proof[{i}].instruction_data"),
            &mut case["instruction_data"],
            json!(to_hex(&verify.data)),
        );
    }

    let pdas = &mut golden["pdas"];
    c.field("pdas.market", &mut pdas["market"], json!(pda::market().to_string()));
    c.field(
        "pdas.delegate",
        &mut pdas["delegate"],
        json!(pda::delegate().to_string()),
    );
    c.field(
        "pdas.event_authority",
        &mut pdas["event_authority"],
        json!(pda::event_authority().to_string()),
    );
    let shards: Vec<Value> = (0..agent_market::FEE_SHARD_COUNT)
        .map(|i| json!(pda::fee_shard(i).to_string()))
        .collect();
    c.field("pdas.fee_shards", &mut pdas["fee_shards"], Value::Array(shards));
    for (i, case) in pdas["agents"].as_array_mut().expect("agents").iter_mut().enumerate() {
        let agent = pda::agent(&hex_array(&case["agent_id"]));
        c.field(
            &format!("pdas.agents[{i}].agent"),
            &mut case["agent"],
            json!(agent.to_string()),
        );
        let collateral_vault = pda::collateral_vault(&agent).to_string();
        c.field(
            &format!("pdas.agents[{i}].collateral_vault"),
            &mut case["collateral_vault"],
            json!(collateral_vault),
        );
        let escrow_vault = pda::escrow_vault(&agent).to_string();
        c.field(
            &format!("pdas.agents[{i}].escrow_vault"),
            &mut case["escrow_vault"],
            json!(escrow_vault),
        );
    }
    for (i, case) in pdas["executions"]
        .as_array_mut()
        .expect("executions")
        .iter_mut()
        .enumerate()
    {
        let execution_id = hex_array(&case["execution_id"]);
        c.field(
            &format!("pdas.executions[{i}].escrow"),
            &mut case["escrow"],
            json!(pda::escrow(&execution_id).to_string()),
        );
    }
    for (i, case) in pdas["disputes"]
        .as_array_mut()
        .expect("disputes")
        .iter_mut()
        .enumerate()
    {
        let dispute = pda::dispute(&pubkey(&case["agent"]), u64_of(&case["leaf_index"]));
        c.field(
            &format!("pdas.disputes[{i}].dispute"),
            &mut case["dispute"],
            json!(dispute.to_string()),
        );
    }
    for (i, case) in pdas["subscriptions"]
        .as_array_mut()
        .expect("subscriptions")
        .iter_mut()
        .enumerate()
    {
        let subscription = pda::subscription(&pubkey(&case["agent"]), &pubkey(&case["payer"]));
        c.field(
            &format!("pdas.subscriptions[{i}].subscription"),
            &mut case["subscription"],
            json!(subscription.to_string()),
        );
    }

    let inputs = golden["instructions"].clone();
    let cases = golden["instructions"]["cases"]
        .as_array_mut()
        .expect("instructions.cases");
    for (i, case) in cases.iter_mut().enumerate() {
        let name = case["name"].as_str().expect("name").to_owned();
        let (program_id, accounts, data) = build_instruction_json(&inputs, &name, &case["args"]);
        let what = format!("instructions.cases[{i}] ({name})");
        c.field(&format!("{what}.program_id"), &mut case["program_id"], program_id);
        c.field(&format!("{what}.accounts"), &mut case["accounts"], accounts);
        c.field(&format!("{what}.data"), &mut case["data"], data);
    }
}

fn build_instruction_json(inputs: &Value, name: &str, args: &Value) -> (Value, Value, Value) {
    instruction_json(&build_instruction(inputs, name, args))
}

#[test]
fn golden_vectors_match_the_rust_implementation() {
    let path = golden_path();
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut golden: Value = serde_json::from_str(&text).expect("golden.json is JSON");
    let mut checker = Checker {
        write: std::env::var_os("WRITE_GOLDEN").is_some_and(|v| v == "1"),
        mismatches: Vec::new(),
    };
    check(&mut golden, &mut checker);
    if checker.write {
        fs::write(&path, serde_json::to_string_pretty(&golden).expect("serialize") + "\n").expect("write golden.json");
    } else {
        assert!(
            checker.mismatches.is_empty(),
            "{} golden field(s) differ from the Rust implementation (rewrite them with WRITE_GOLDEN=1):\n{}",
            checker.mismatches.len(),
            checker.mismatches.join("\n")
        );
    }
}

/// Every instruction of the program has a golden case, so no builder goes unchecked.
#[test]
fn every_instruction_has_a_golden_case() {
    let golden: Value =
        serde_json::from_str(&fs::read_to_string(golden_path()).expect("read golden.json")).expect("JSON");
    let idl: Value = serde_json::from_str(
        &fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../programs/agent_market/idl/agent_market.json"),
        )
        .expect("read the IDL"),
    )
    .expect("JSON");
    let covered: Vec<&str> = golden["instructions"]["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| case["name"].as_str().expect("name"))
        .collect();
    for ix in idl["instructions"].as_array().expect("instructions") {
        let name = ix["name"].as_str().expect("name");
        assert!(covered.contains(&name), "no golden case for instruction {name}");
    }
}
