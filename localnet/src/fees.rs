//! The priority fee, which LiteSVM 0.7.1 does not charge (it passes a prioritization fee of 0
//! to `solana_fee::calculate_fee`): a cluster takes ceil(unit price in micro-lamports × the
//! requested unit limit / 1,000,000) lamports from the fee payer with the signature fee, before
//! anything runs, whatever the transaction then uses or does.

use {
    agave_feature_set::FeatureSet, litesvm::LiteSVM, solana_account::Account,
    solana_compute_budget::compute_budget_limits::ComputeBudgetLimits,
    solana_compute_budget_instruction::instructions_processor::process_compute_budget_instructions,
    solana_message::compiled_instruction::CompiledInstruction, solana_pubkey::Pubkey,
    solana_svm_transaction::instruction::SVMInstruction, solana_transaction_error::TransactionError,
    std::sync::OnceLock,
};

/// The features LiteSVM runs with (`LiteSVM::new`): all of them.
fn feature_set() -> &'static FeatureSet {
    static FEATURES: OnceLock<FeatureSet> = OnceLock::new();
    FEATURES.get_or_init(FeatureSet::all_enabled)
}

/// The unit limit, unit price and heap frame a message asks for, with the runtime's defaults
/// (200,000 units per instruction that is not a builtin's) and its refusals (duplicate or
/// malformed compute-budget instructions).
pub fn compute_budget(
    account_keys: &[Pubkey],
    instructions: &[CompiledInstruction],
) -> Result<ComputeBudgetLimits, TransactionError> {
    let instructions = instructions.iter().filter_map(|instruction| {
        let program_id = account_keys.get(usize::from(instruction.program_id_index))?;
        Some((program_id, SVMInstruction::from(instruction)))
    });
    process_compute_budget_instructions(instructions, feature_set())
}

/// The priority fee in lamports; none for a message the runtime will refuse anyway.
pub fn prioritization_fee_lamports(account_keys: &[Pubkey], instructions: &[CompiledInstruction]) -> u64 {
    compute_budget(account_keys, instructions)
        .map(|limits| limits.get_prioritization_fee())
        .unwrap_or(0)
}

/// Takes the priority fee from the fee payer before the transaction runs, so that LiteSVM's
/// check of the signature fee sees what is left, as a cluster checks the whole fee. Answers the
/// payer's account as it was, for `give_back` when the transaction is refused; none when there
/// was nothing to take or no payer to take it from (LiteSVM refuses that transaction itself).
pub fn take_priority_fee(
    svm: &mut LiteSVM,
    account_keys: &[Pubkey],
    instructions: &[CompiledInstruction],
) -> Result<Option<Account>, TransactionError> {
    let fee_lamports = prioritization_fee_lamports(account_keys, instructions);
    let Some(payer) = account_keys.first() else {
        return Ok(None);
    };
    let before = match svm.get_account(payer) {
        Some(account) if fee_lamports > 0 && account.lamports > 0 => account,
        _ => return Ok(None),
    };
    let lamports = before
        .lamports
        .checked_sub(fee_lamports)
        .ok_or(TransactionError::InsufficientFundsForFee)?;
    let mut charged = before.clone();
    charged.lamports = lamports;
    svm.set_account(*payer, charged)
        .map_err(|_| TransactionError::InsufficientFundsForFee)?;
    Ok(Some(before))
}

/// Puts back the fee payer's account that `take_priority_fee` answered.
pub fn give_back(svm: &mut LiteSVM, payer: Pubkey, before: Option<Account>) {
    if let Some(account) = before {
        svm.set_account(payer, account).expect("restore the fee payer");
    }
}

#[cfg(test)]
mod tests {
    use {super::*, solana_compute_budget_interface::ComputeBudgetInstruction, solana_message::Message};

    fn fee_of(instructions: &[solana_instruction::Instruction]) -> u64 {
        let payer = Pubkey::new_unique();
        let message = Message::new(instructions, Some(&payer));
        prioritization_fee_lamports(&message.account_keys, &message.instructions)
    }

    #[test]
    fn priority_fee_is_price_times_requested_limit_rounded_up() {
        let price = ComputeBudgetInstruction::set_compute_unit_price(3);
        let limit = ComputeBudgetInstruction::set_compute_unit_limit(100_001);
        // 3 µlamports × 100,001 units = 300,003 µlamports: 1 lamport once rounded up.
        assert_eq!(fee_of(&[price.clone(), limit]), 1);
        assert_eq!(fee_of(&[ComputeBudgetInstruction::set_compute_unit_limit(1_000)]), 0);
        // Without a limit, the default: 200,000 for an instruction that is not a builtin's, and
        // 3,000 for the compute-budget instruction, a builtin's (SIMD-0170).
        let other = solana_instruction::Instruction::new_with_bytes(Pubkey::new_unique(), &[], vec![]);
        assert_eq!(
            fee_of(&[ComputeBudgetInstruction::set_compute_unit_price(5_000_000), other]),
            1_015_000
        );
    }
}
