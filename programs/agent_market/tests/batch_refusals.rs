//! Every way `settle_batch` can be misused is refused with its own error, and moves no balance
//! and closes no escrow.
mod common;

use agent_market::{error::AgentMarketError, MAX_SETTLE_BATCH};
use anchor_lang::error::ErrorCode;
use common::{batch::*, *};
use litesvm::types::TransactionResult;
use localnet::{
    chain::USDC,
    market::{pda, EscrowRef},
};
use solana_instruction::{AccountMeta, Instruction};
use solana_keypair::Keypair;
use solana_signer::Signer;

struct Bench {
    t: TestMarket,
    agent: AgentFixture,
    payer: Payer,
    escrows: Vec<EscrowRef>,
}

impl Bench {
    fn new(count: usize) -> Self {
        let mut t = TestMarket::new();
        let agent = t.agent();
        let payer = t.payer(100 * USDC, 100 * USDC);
        t.create_receipt_log(&agent);
        let escrows = t.open_many(&agent, &payer, count);
        Bench {
            t,
            agent,
            payer,
            escrows,
        }
    }

    fn ixs(&self, escrows: &[EscrowRef], signer: &Keypair, signing: Signing) -> Vec<Instruction> {
        self.t.settle_batch_ixs(&self.agent, escrows, signer, signing)
    }

    /// Sends `instructions` as the relayer and asserts nothing moved: balances, escrows, the log.
    fn refused(&mut self, instructions: Vec<Instruction>) -> TransactionResult {
        let watched = [
            self.agent.payout_account,
            pda::fee_shard(0),
            pda::escrow_vault(&self.agent.address),
            self.payer.token_account,
        ];
        let before = self.t.balances(&watched);
        let leaves_before = self.t.chain.receipt_log(&self.agent.address).map(|log| log.leaf_count);
        let result = self.t.send_as_relayer(&instructions);
        assert_eq!(self.t.balances(&watched), before, "balances moved");
        for escrow in &self.escrows {
            assert!(
                self.t.chain.account(&pda::escrow(&escrow.execution_id)).is_some(),
                "escrow closed"
            );
        }
        assert_eq!(
            self.t.chain.receipt_log(&self.agent.address).map(|log| log.leaf_count),
            leaves_before
        );
        result
    }
}

#[test]
fn a_batch_signed_by_another_key_is_refused() {
    for signing in [Signing::Batch, Signing::PerCall] {
        let mut b = Bench::new(3);
        let impostor = Keypair::new();
        let instructions = b.ixs(&b.escrows, &impostor, signing);
        let result = b.refused(instructions);
        assert_program_error(&result, AgentMarketError::SignerKeyMismatch);
    }
}

#[test]
fn a_signature_over_other_results_is_refused() {
    for signing in [Signing::Batch, Signing::PerCall] {
        let mut b = Bench::new(3);
        let mut instructions = b.ixs(&b.escrows, &b.agent.signing, signing);
        // The relayer claims another result for the second execution than the creator signed.
        let execution_ids: Vec<[u8; 16]> = b.escrows.iter().map(|escrow| escrow.execution_id).collect();
        let mut result_hashes: Vec<[u8; 32]> = execution_ids.iter().map(result_hash).collect();
        result_hashes[1] = [0xEE; 32];
        instructions[1] = b.t.market.keys.settle_batch(
            b.agent.address,
            b.agent.payout_account,
            &execution_ids,
            result_hashes,
            vec![],
            0,
        );
        let result = b.refused(instructions);
        assert_program_error(&result, AgentMarketError::DigestMismatch);
    }
}

#[test]
fn units_other_than_the_signed_ones_are_refused() {
    for signing in [Signing::Batch, Signing::PerCall] {
        let mut b = Bench::new(3);
        let mut instructions = b.ixs(&b.escrows, &b.agent.signing, signing);
        // The creator signed 0 units for every execution; the relayer claims 7 for the last.
        let execution_ids: Vec<[u8; 16]> = b.escrows.iter().map(|escrow| escrow.execution_id).collect();
        let result_hashes = execution_ids.iter().map(result_hash).collect();
        instructions[1] = b.t.market.keys.settle_batch(
            b.agent.address,
            b.agent.payout_account,
            &execution_ids,
            result_hashes,
            vec![0, 0, 7],
            0,
        );
        let result = b.refused(instructions);
        assert_program_error(&result, AgentMarketError::DigestMismatch);
    }
}

#[test]
fn units_that_do_not_match_the_escrows_in_number_are_refused() {
    let mut b = Bench::new(3);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let execution_ids: Vec<[u8; 16]> = b.escrows.iter().map(|escrow| escrow.execution_id).collect();
    instructions[1] = b.t.market.keys.settle_batch(
        b.agent.address,
        b.agent.payout_account,
        &execution_ids,
        execution_ids.iter().map(result_hash).collect(),
        vec![0, 0],
        0,
    );
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::UnitsCountMismatch);
}

#[test]
fn a_batch_signature_over_the_escrows_in_another_order_is_refused() {
    let mut b = Bench::new(3);
    let mut reordered = b.escrows.clone();
    reordered.swap(0, 2);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    instructions[1] = b.ixs(&reordered, &b.agent.signing, Signing::Batch).remove(1);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::DigestMismatch);
}

#[test]
fn per_call_signatures_for_fewer_escrows_than_the_batch_are_refused() {
    let mut b = Bench::new(3);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    instructions[0] = batch_verification(&b.t, &b.agent.signing, &b.agent.address, &b.escrows[..2], Signing::PerCall);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::BatchSignatureCountMismatch);
}

#[test]
fn a_per_call_entry_reading_its_message_from_another_instruction_is_refused() {
    let mut b = Bench::new(3);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::PerCall);
    // The second entry's message instruction index: 0 is the verification itself here, so the
    // precompile still checks the same bytes, but only "this instruction" (u16::MAX) is accepted.
    let message_instruction = 2 + 14 + 12;
    instructions[0].data[message_instruction..message_instruction + 2].copy_from_slice(&0u16.to_le_bytes());
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::MalformedEd25519Instruction);
}

#[test]
fn a_batch_without_a_verification_before_it_is_refused() {
    let mut b = Bench::new(2);
    let instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(vec![instructions[1].clone()]);
    assert_program_error(&result, AgentMarketError::MissingEd25519Instruction);
}

#[test]
fn an_escrow_of_another_agent_is_refused() {
    let mut b = Bench::new(2);
    let other = b.t.agent();
    let payer = b.t.payer(10 * USDC, 10 * USDC);
    let foreign = b.t.open_many(&other, &payer, 1);
    let mut escrows = b.escrows.clone();
    escrows.extend(foreign.iter().cloned());
    let instructions = b.ixs(&escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::EscrowAgentMismatch);
    assert!(b.t.chain.account(&pda::escrow(&foreign[0].execution_id)).is_some());
}

#[test]
fn an_expired_escrow_is_refused() {
    let mut b = Bench::new(2);
    b.t.chain
        .advance_clock(i64::from(MAX_EXECUTION_SECS + ESCROW_GRACE_SECS) + 1);
    let instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::EscrowExpired);
}

#[test]
fn a_duplicated_escrow_is_refused() {
    let mut b = Bench::new(2);
    let escrows = vec![b.escrows[0].clone(), b.escrows[1].clone(), b.escrows[0].clone()];
    let instructions = b.ixs(&escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::DuplicateEscrow);
}

#[test]
fn a_batch_over_the_limit_is_refused() {
    let mut b = Bench::new(usize::from(MAX_SETTLE_BATCH) + 1);
    let instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::BatchTooLarge);
}

#[test]
fn an_empty_batch_is_refused() {
    let mut b = Bench::new(0);
    let instructions = b.ixs(&[], &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::EmptyBatch);
}

#[test]
fn result_hashes_that_do_not_match_the_escrows_in_number_are_refused() {
    let mut b = Bench::new(2);
    // Two result hashes, one account: the second escrow is missing.
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    instructions[1].accounts.pop();
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::ResultHashCountMismatch);

    // One result hash, two escrows, the signature over the first alone: the second escrow passed
    // without its result hash is an account after the escrows, which only a metered escrow's
    // return may be, and this fixed-price escrow returns nothing.
    let mut instructions = b.ixs(&b.escrows[..1], &b.agent.signing, Signing::Batch);
    instructions[1]
        .accounts
        .push(AccountMeta::new(pda::escrow(&b.escrows[1].execution_id), false));
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::ReturnAccountMismatch);
}

#[test]
fn a_read_only_escrow_is_refused() {
    let mut b = Bench::new(2);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let last = instructions[1].accounts.len() - 1;
    instructions[1].accounts[last].is_writable = false;
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::EscrowNotWritable);
}

#[test]
fn an_account_that_is_not_an_escrow_of_the_program_is_refused() {
    let mut b = Bench::new(1);
    let mut instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    // The payer's token account, owned by the token program, in place of the escrow.
    let last = instructions[1].accounts.len() - 1;
    instructions[1].accounts[last].pubkey = b.payer.token_account;
    let result = b.refused(instructions.clone());
    assert_anchor_error(&result, ErrorCode::AccountOwnedByWrongProgram);
    // The agent's own account is the program's, but it is not an escrow.
    instructions[1].accounts[last].pubkey = b.agent.address;
    b.t.chain.svm.expire_blockhash();
    let result = b.refused(instructions);
    assert_anchor_error(&result, ErrorCode::AccountDiscriminatorMismatch);
}

#[test]
fn escrows_whose_rent_another_relayer_paid_are_refused() {
    let mut b = Bench::new(2);
    // The market changes relayer: the escrows' rent is owed to the former one, so the new one
    // cannot settle them in a batch and take it.
    let new_relayer = b.t.chain.funded_keypair(10 * SOL);
    let params = agent_market::MarketParams {
        relayer: new_relayer.pubkey(),
        arbiter: b.t.market.arbiter.pubkey(),
        ..market_params()
    };
    let authority = b.t.market.authority.insecure_clone();
    let update = b.t.market.keys.update_market(params, authority.pubkey());
    ok(b.t.chain.send(&[update], &authority, &[]));
    b.t.market.relayer = new_relayer.insecure_clone();
    b.t.market.keys.relayer = new_relayer.pubkey();
    let instructions = b.ixs(&b.escrows, &b.agent.signing, Signing::Batch);
    let result = b.refused(instructions);
    assert_program_error(&result, AgentMarketError::BatchRentPayerNotRelayer);
}

#[test]
fn an_agent_without_a_receipt_log_cannot_batch() {
    let mut t = TestMarket::new();
    let agent = t.agent();
    let payer = t.payer(10 * USDC, 10 * USDC);
    let escrows = t.open_many(&agent, &payer, 1);
    let instructions = t.settle_batch_ixs(&agent, &escrows, &agent.signing, Signing::Batch);
    let result = t.send_as_relayer(&instructions);
    // A zero-copy account that does not exist is still the system program's.
    assert_anchor_error(&result, ErrorCode::AccountOwnedByWrongProgram);
    assert!(t.chain.account(&pda::escrow(&escrows[0].execution_id)).is_some());
}
