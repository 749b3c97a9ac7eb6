//! Bad input and attacks: each asserts the exact error and that no balance moved.
mod common;

use agent_market::{error::AgentMarketError, RefundReason};
use anchor_lang::{error::ErrorCode, prelude::Pubkey};
use common::{scene::*, *};
use localnet::{
    chain::USDC,
    market::{pda, EscrowRef},
};
use solana_instruction::error::InstructionError;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction_error::TransactionError;

#[test]
fn open_escrow_without_the_relayer_signature_fails() {
    let mut s = Scene::new();
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        let relayer = s.t.relayer().pubkey();
        instruction
            .accounts
            .iter_mut()
            .filter(|meta| meta.pubkey == relayer)
            .for_each(|meta| meta.is_signer = false);
        s.t.chain.send(&[instruction], &outsider, &[])
    });
    assert_anchor_error(&result, ErrorCode::AccountNotSigner);
}

#[test]
fn open_escrow_signed_by_another_relayer_fails() {
    let mut s = Scene::new();
    let impostor = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        replace_account(&mut instruction, s.t.relayer().pubkey(), impostor.pubkey());
        s.t.chain.send(&[instruction], &impostor, &[])
    });
    assert_program_error(&result, AgentMarketError::NotRelayer);
}

#[test]
fn agent_account_of_the_right_layout_owned_by_another_program_is_refused() {
    let mut s = Scene::new();
    let mut forged = s.t.chain.account(&s.agent.address).unwrap();
    forged.owner = Pubkey::new_unique();
    let forged_address = Pubkey::new_unique();
    s.t.chain.svm.set_account(forged_address, forged).unwrap();
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        replace_account(&mut instruction, s.agent.address, forged_address);
        s.t.send_as_relayer(&[instruction])
    });
    assert_anchor_error(&result, ErrorCode::AccountOwnedByWrongProgram);
}

#[test]
fn fake_token_program_is_refused() {
    let mut s = Scene::new();
    // An executable program that is not SPL Token.
    let fake_token_program = Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        replace_account(&mut instruction, spl_token_id(), fake_token_program);
        s.t.send_as_relayer(&[instruction])
    });
    assert_anchor_error(&result, ErrorCode::InvalidProgramId);
}

fn spl_token_id() -> Pubkey {
    Pubkey::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
}

#[test]
fn fake_usdc_mint_is_refused() {
    let mut s = Scene::new();
    let mint_authority = s.t.chain.funded_keypair(SOL);
    let fake_mint = s.t.chain.create_mint(&mint_authority, &mint_authority.pubkey());
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        replace_account(&mut instruction, s.t.usdc_mint(), fake_mint);
        s.t.send_as_relayer(&[instruction])
    });
    assert_program_error(&result, AgentMarketError::InvalidMint);
}

#[test]
fn payer_token_account_of_another_mint_is_refused() {
    let mut s = Scene::new();
    let mint_authority = s.t.chain.funded_keypair(SOL);
    let other_mint = s.t.chain.create_mint(&mint_authority, &mint_authority.pubkey());
    let payer_wallet = s.payer.wallet.insecure_clone();
    let other_account =
        s.t.chain
            .token_account(&payer_wallet, &payer_wallet.pubkey(), &other_mint);
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        replace_account(&mut instruction, s.payer.token_account, other_account);
        s.t.send_as_relayer(&[instruction])
    });
    assert_program_error(&result, AgentMarketError::TokenAccountMintMismatch);
}

#[test]
fn open_escrow_above_the_allowance_fails_with_insufficient_allowance() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, PRICE_USDC - 1);
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::InsufficientAllowance);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC);
}

#[test]
fn open_escrow_without_any_approval_fails_with_insufficient_allowance() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let (wallet, token_account) = t.wallet_with_usdc(10 * USDC);
    let payer = Payer { wallet, token_account };
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::InsufficientAllowance);
    assert_eq!(t.balance(&payer.token_account), 10 * USDC);
}

#[test]
fn open_escrow_above_the_balance_fails_with_insufficient_balance() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(PRICE_USDC - 1, 10 * USDC);
    let (result, _) = t.open(&agent, &payer);
    assert_program_error(&result, AgentMarketError::InsufficientBalance);
    assert_eq!(t.balance(&payer.token_account), PRICE_USDC - 1);
}

#[test]
fn reusing_an_open_execution_id_fails() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let instruction = s.t.open_escrow_ix(&s.agent, &s.payer, s.escrow.execution_id);
        s.t.send_as_relayer(&[instruction])
    });
    // The system program refuses to create an account that exists: AccountAlreadyInUse.
    assert!(
        matches!(result, Err(ref failed) if failed.err == TransactionError::InstructionError(0, InstructionError::Custom(0))),
        "{result:?}"
    );
}

#[test]
fn subscription_address_other_than_the_payers_pda_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instruction = s.t.open_escrow_ix(&s.agent, &s.payer, random_id());
        let subscription = pda::subscription(&s.agent.address, &s.payer.wallet.pubkey());
        replace_account(&mut instruction, subscription, Pubkey::new_unique());
        s.t.send_as_relayer(&[instruction])
    });
    assert_anchor_error(&result, ErrorCode::ConstraintSeeds);
}

#[test]
fn settle_without_an_ed25519_instruction_fails() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let instructions = s.settle_ixs_signed_by(&s.agent.signing);
        s.t.send_as_relayer(&instructions[1..])
    });
    assert_program_error(&result, AgentMarketError::MissingEd25519Instruction);
}

#[test]
fn settle_preceded_by_another_program_instead_of_ed25519_fails() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        let relayer = s.t.relayer().pubkey();
        instructions[0] = solana_system_interface::instruction::transfer(&relayer, &relayer, 1);
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::MissingEd25519Instruction);
}

#[test]
fn settle_with_a_signature_by_another_key_fails() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let instructions = s.settle_ixs_signed_by(&Keypair::new());
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::SignerKeyMismatch);
}

#[test]
fn settle_with_a_forged_signature_under_the_agents_key_fails_in_the_precompile() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        // Flip one bit of the signature, which sits after the 16-byte header and the key.
        instructions[0].data[16 + 32] ^= 1;
        s.t.send_as_relayer(&instructions)
    });
    let failed = result.expect_err("forged signature must fail");
    assert!(
        matches!(
            failed.err,
            TransactionError::InstructionError(0, InstructionError::Custom(_))
        ),
        "expected the Ed25519 precompile (instruction 0) to fail, got {:?}",
        failed.err
    );
}

#[test]
fn settle_with_a_valid_signature_over_another_executions_digest_fails() {
    let mut s = Scene::new();
    let (result, other) = s.t.open(&s.agent, &s.payer);
    ok(result);
    s.watched.push(pda::escrow_vault(&s.agent.address));
    let result = s.unchanged(|s| {
        let other_digest = s.t.digest_of(&other, 0);
        let signature: [u8; 64] = s.agent.signing.sign_message(&other_digest).into();
        let instructions = s.t.settle_ixs_with(
            &s.escrow,
            signature,
            &s.agent.signing.pubkey(),
            &other_digest,
            s.agent.payout_account,
            0,
        );
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::DigestMismatch);
}

#[test]
fn ed25519_instruction_reading_its_data_from_another_instruction_is_refused() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        let mut instructions = s.settle_ixs_signed_by(&s.agent.signing);
        // Point the message offset's instruction index at the Ed25519 instruction itself (0)
        // rather than "this instruction": valid for the precompile, not accepted by settle.
        instructions[0].data[2 + 12..2 + 14].copy_from_slice(&0u16.to_le_bytes());
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::MalformedEd25519Instruction);
}

#[test]
fn settling_execution_a_with_the_accounts_of_agent_b_fails() {
    let mut s = Scene::new();
    let other_agent = s.t.agent();
    s.t.ensure_receipt_log(&other_agent.address);
    s.watched
        .extend([pda::escrow_vault(&other_agent.address), other_agent.payout_account]);
    let result = s.unchanged(|s| {
        let crossed = EscrowRef {
            agent: other_agent.address,
            ..s.escrow.clone()
        };
        let instructions =
            s.t.settle_ixs(&crossed, &other_agent.signing, other_agent.payout_account, 0);
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::EscrowAgentMismatch);
}

#[test]
fn settle_paying_another_account_than_the_agents_payout_fails() {
    let mut s = Scene::new();
    let (_, thief_account) = s.t.wallet_with_usdc(0);
    let result = s.unchanged(|s| {
        let instructions = s.t.settle_ixs(&s.escrow, &s.agent.signing, thief_account, 0);
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::PayoutAccountMismatch);
}

#[test]
fn settle_into_a_fee_shard_out_of_range_fails() {
    let mut s = Scene::new();
    let result = s.unchanged(|s| {
        // No account can exist at an out-of-range shard's address; pass a real token account
        // there so that the index itself is what gets refused.
        let out_of_range = agent_market::FEE_SHARD_COUNT;
        let mut instructions =
            s.t.settle_ixs(&s.escrow, &s.agent.signing, s.agent.payout_account, out_of_range);
        replace_account(&mut instructions[1], pda::fee_shard(out_of_range), pda::fee_shard(0));
        s.t.send_as_relayer(&instructions)
    });
    assert_program_error(&result, AgentMarketError::FeeShardOutOfRange);
}

#[test]
fn settle_twice_fails_and_pays_once() {
    let mut s = Scene::new();
    s.settle();
    let result = s.unchanged(|s| {
        let instructions = s.settle_ixs_signed_by(&s.agent.signing);
        s.t.send_as_relayer(&instructions)
    });
    // The closed escrow's address belongs to the system program again.
    assert_anchor_error(&result, ErrorCode::AccountOwnedByWrongProgram);
}

#[test]
fn settle_after_refund_fails() {
    let mut s = Scene::new();
    let escrow = s.escrow.clone();
    ok(s.t.refund(&escrow, false));
    let result = s.unchanged(|s| {
        let instructions = s.settle_ixs_signed_by(&s.agent.signing);
        s.t.send_as_relayer(&instructions)
    });
    // The closed escrow's address belongs to the system program again.
    assert_anchor_error(&result, ErrorCode::AccountOwnedByWrongProgram);
}

#[test]
fn refund_after_settle_fails() {
    let mut s = Scene::new();
    s.settle();
    let escrow = s.escrow.clone();
    let result = s.unchanged(|s| s.t.refund(&escrow, false));
    assert_anchor_error(&result, ErrorCode::AccountNotInitialized);
}

#[test]
fn refund_to_another_token_account_than_the_payers_fails() {
    let mut s = Scene::new();
    let (_, thief_account) = s.t.wallet_with_usdc(0);
    let result = s.unchanged(|s| {
        let diverted = EscrowRef {
            payer_token_account: thief_account,
            ..s.escrow.clone()
        };
        let instruction = s.t.market.keys.refund(&diverted, RefundReason::Timeout, false);
        s.t.send_as_relayer(&[instruction])
    });
    assert_program_error(&result, AgentMarketError::PayerTokenAccountMismatch);
}

#[test]
fn reclaim_by_someone_other_than_the_payer_fails() {
    let mut s = Scene::new();
    s.t.chain.advance_clock(3600);
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let stolen = EscrowRef {
            payer: outsider.pubkey(),
            ..s.escrow.clone()
        };
        let instruction = s.t.market.keys.reclaim(&stolen, false);
        s.t.chain.send(&[instruction], &outsider, &[])
    });
    assert_program_error(&result, AgentMarketError::NotEscrowPayer);
}

#[test]
fn reclaim_before_the_deadline_fails() {
    let mut s = Scene::new();
    let payer = s.payer.wallet.insecure_clone();
    let result = s.unchanged(|s| {
        let instruction = s.t.market.keys.reclaim(&s.escrow, false);
        s.t.chain.send(&[instruction], &payer, &[])
    });
    assert_program_error(&result, AgentMarketError::EscrowNotExpired);
}

#[test]
fn withdraw_with_an_open_dispute_fails() {
    let mut s = Scene::new();
    s.settle_and_dispute();
    let creator = s.agent.creator.wallet.insecure_clone();
    ok(s.t.chain.send(
        &[s.t.market.keys.retire_agent(creator.pubkey(), s.agent.address)],
        &creator,
        &[],
    ));
    s.t.chain.advance_clock(i64::from(COLLATERAL_COOLDOWN_SECS) + 1);
    s.watched.push(s.agent.creator.token_account);
    let result = s.unchanged(|s| {
        let instruction =
            s.t.market
                .keys
                .withdraw_collateral(creator.pubkey(), s.agent.address, s.agent.creator.token_account);
        s.t.chain.send(&[instruction], &creator, &[])
    });
    assert_program_error(&result, AgentMarketError::OpenDisputes);
}

#[test]
fn only_the_arbiter_resolves_disputes() {
    let mut s = Scene::new();
    s.settle_and_dispute();
    let payer = s.payer.wallet.insecure_clone();
    let result = s.unchanged(|s| {
        let mut instruction =
            s.t.market
                .keys
                .resolve_dispute(s.agent.address, 0, s.payer.token_account, true, USDC);
        replace_account(&mut instruction, s.t.market.arbiter.pubkey(), payer.pubkey());
        s.t.chain.send(&[instruction], &payer, &[])
    });
    assert_program_error(&result, AgentMarketError::NotArbiter);
}

#[test]
fn only_the_payer_of_a_settled_execution_opens_a_dispute_on_it() {
    let mut s = Scene::new();
    s.settle();
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let mut instruction = s.dispute_ix(0);
        replace_account(&mut instruction, s.payer.wallet.pubkey(), outsider.pubkey());
        s.t.chain.send(&[instruction], &outsider, &[])
    });
    // The signer stands as the leaf's payer: an outsider's leaf is in no root.
    assert_program_error(&result, AgentMarketError::UnknownReceiptRoot);
}

#[test]
fn only_the_creator_changes_retires_or_withdraws_an_agent() {
    let mut s = Scene::new();
    let outsider = s.t.chain.funded_keypair(SOL);
    let result = s.unchanged(|s| {
        let instruction = s.t.market.keys.retire_agent(outsider.pubkey(), s.agent.address);
        s.t.chain.send(&[instruction], &outsider, &[])
    });
    assert_program_error(&result, AgentMarketError::NotAgentCreator);
}

#[test]
fn market_params_that_would_free_collateral_before_disputes_close_are_refused() {
    let mut t = TestMarket::new();
    let authority = t.market.authority.insecure_clone();
    let params = agent_market::MarketParams {
        relayer: t.market.relayer.pubkey(),
        arbiter: t.market.arbiter.pubkey(),
        collateral_cooldown_secs: DISPUTE_WINDOW_SECS,
        ..market_params()
    };
    let result = t.chain.send(
        &[t.market.keys.update_market(params, authority.pubkey())],
        &authority,
        &[],
    );
    assert_program_error(&result, AgentMarketError::InvalidMarketParams);
}
