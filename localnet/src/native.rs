//! Runs a host-compiled Solana program as a LiteSVM builtin, the way the BPF loader would run
//! its SBF build.
//!
//! Per instruction: the instruction's accounts are serialized exactly as the loader serializes
//! them for a program's entrypoint, deserialized into `AccountInfo`s, handed to the program's
//! `entry`, and the changes are committed back under the runtime's rules (a read-only account
//! that was changed fails the instruction, as on a cluster). Syscalls the program makes natively
//! (`invoke_signed`, sysvars, logs, return data, stack height) reach the runtime through
//! `solana_sysvar::program_stubs`, installed once per process.
//!
//! What differs from an SBF run: compute units are not metered (each native instruction charges
//! a flat `NATIVE_INSTRUCTION_CU`), and stack and heap limits are not enforced.

use {
    litesvm::LiteSVM,
    solana_account::Account,
    solana_account_info::AccountInfo,
    solana_instruction::{
        error::{InstructionError, UNSUPPORTED_SYSVAR},
        Instruction,
    },
    solana_program_entrypoint::{deserialize, ProgramResult, SUCCESS},
    solana_program_error::ProgramError,
    solana_program_runtime::{
        declare_process_instruction, invoke_context::InvokeContext, serialization::serialize_parameters,
        solana_sbpf::vm::ContextObject, stable_log,
    },
    solana_pubkey::Pubkey,
    solana_stable_layout::stable_instruction::StableInstruction,
    solana_sysvar::program_stubs::{set_syscall_stubs, SyscallStubs},
    solana_timings::ExecuteTimings,
    std::{
        cell::RefCell,
        collections::{HashMap, HashSet},
        panic::{catch_unwind, AssertUnwindSafe},
        sync::{Arc, Once, OnceLock, RwLock},
    },
};

/// A program's entrypoint as Anchor generates it (`program::entry`).
pub type Entrypoint = for<'info> fn(&Pubkey, &'info [AccountInfo<'info>], &[u8]) -> ProgramResult;

/// Compute units charged per native instruction; the real cost is only known on SBF.
pub const NATIVE_INSTRUCTION_CU: u64 = 1;

fn registry() -> &'static RwLock<HashMap<Pubkey, Entrypoint>> {
    static PROGRAMS: OnceLock<RwLock<HashMap<Pubkey, Entrypoint>>> = OnceLock::new();
    PROGRAMS.get_or_init(Default::default)
}

/// Deploys `entry` at `program_id` in `svm` as a native program.
pub fn add_native_program(svm: &mut LiteSVM, program_id: Pubkey, entry: Entrypoint) {
    static STUBS: Once = Once::new();
    STUBS.call_once(|| {
        set_syscall_stubs(Box::new(RuntimeStubs));
    });
    registry()
        .write()
        .expect("native program registry poisoned")
        .insert(program_id, entry);
    svm.add_builtin(program_id, NativeProgram::vm);
    // The runtime dispatches straight to a builtin only when its program account is owned by
    // the native loader; litesvm 0.6 marks it as owned by the BPF loader.
    let lamports = svm.minimum_balance_for_rent_exemption(1);
    svm.set_account(
        program_id,
        Account {
            lamports,
            data: vec![0],
            owner: solana_sdk_ids::native_loader::id(),
            executable: true,
            rent_epoch: 0,
        },
    )
    .expect("program account is valid");
}

declare_process_instruction!(NativeProgram, NATIVE_INSTRUCTION_CU, |invoke_context| {
    process(invoke_context)
});

thread_local! {
    /// The invoke contexts of the native instructions running on this thread, innermost last.
    static CONTEXTS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// The first failure of a cross-program invocation in the running transaction. On a
    /// cluster such a failure ends the transaction at once, whatever the caller does next.
    static CPI_FAILURE: RefCell<Option<InstructionError>> = const { RefCell::new(None) };
    /// Signer addresses by program and seeds. Deriving one checks that it is off the curve,
    /// which costs more than the rest of a CPI, and the same few PDAs (delegate, vaults, event
    /// authority) sign in every execution.
    static SIGNERS: RefCell<HashMap<Vec<u8>, Pubkey>> = RefCell::new(HashMap::new());
}

/// Registers a running native instruction's context, and sends `msg!` output to its logs.
struct ContextGuard {
    previous_log_sink: Option<fn(&str)>,
}

impl ContextGuard {
    fn enter(invoke_context: &mut InvokeContext) -> Self {
        let address = invoke_context as *mut InvokeContext as usize;
        CONTEXTS.with(|contexts| contexts.borrow_mut().push(address));
        let previous_log_sink = solana_msg::set_log_sink(Some(log_to_current_instruction));
        ContextGuard { previous_log_sink }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        solana_msg::set_log_sink(self.previous_log_sink);
        CONTEXTS.with(|contexts| contexts.borrow_mut().pop());
    }
}

fn log_to_current_instruction(message: &str) {
    stable_log::program_log(&current().get_log_collector(), message);
}

/// The invoke context of the innermost running native instruction.
///
/// Sound because a context outlives every instruction it runs, and syscalls are only made
/// from inside `process`, which registered it on this thread.
fn current<'a, 'b>() -> &'a mut InvokeContext<'b> {
    let address = CONTEXTS.with(|contexts| {
        *contexts
            .borrow()
            .last()
            .expect("a syscall was made outside of a native instruction")
    });
    unsafe { &mut *(address as *mut InvokeContext) }
}

fn record_cpi_failure(err: InstructionError) -> ProgramError {
    let program_error = ProgramError::try_from(err.clone()).unwrap_or(ProgramError::Custom(u32::MAX));
    CPI_FAILURE.with(|failure| {
        failure.borrow_mut().get_or_insert(err);
    });
    program_error
}

fn process(invoke_context: &mut InvokeContext) -> Result<(), InstructionError> {
    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    let program_id = *instruction_context.get_last_program_key(transaction_context)?;
    let entry = *registry()
        .read()
        .expect("native program registry poisoned")
        .get(&program_id)
        .ok_or(InstructionError::UnsupportedProgramId)?;

    let mask_out_rent_epoch = invoke_context.get_feature_set().mask_out_rent_epoch_in_vm_serialization;
    let (mut parameters, _regions, _metadata) =
        serialize_parameters(transaction_context, instruction_context, true, mask_out_rent_epoch)?;
    // SAFETY: `parameters` is the loader's serialization of this instruction and outlives every
    // use of the views below, which all end before this function returns.
    let (_, account_infos, instruction_data) = unsafe { deserialize(parameters.as_slice_mut().as_mut_ptr()) };
    let account_infos_for_entry: &[AccountInfo] =
        unsafe { std::mem::transmute::<&[AccountInfo], &[AccountInfo]>(&account_infos) };

    let is_outermost = invoke_context.get_stack_height() == 1;
    if is_outermost {
        CPI_FAILURE.with(|failure| failure.borrow_mut().take());
    }
    let outcome = {
        let _guard = ContextGuard::enter(invoke_context);
        catch_unwind(AssertUnwindSafe(|| {
            entry(&program_id, account_infos_for_entry, instruction_data)
        }))
    };
    if let Some(err) = CPI_FAILURE.with(|failure| failure.borrow().clone()) {
        return Err(err);
    }
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(program_error)) => return Err(InstructionError::from(u64::from(program_error))),
        Err(_) => return Err(InstructionError::ProgramFailedToComplete),
    }
    commit(invoke_context, &account_infos)
}

/// Writes what the program did to its `AccountInfo`s back into the transaction, refusing
/// changes to read-only accounts as the loader does. `account_infos` are the instruction's
/// accounts in order, as the entrypoint deserializes them.
fn commit(invoke_context: &mut InvokeContext, account_infos: &[AccountInfo]) -> Result<(), InstructionError> {
    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    for (index, info) in (0..instruction_context.get_number_of_instruction_accounts()).zip(account_infos) {
        // A duplicate shares the data of the account's first occurrence, committed there.
        if instruction_context.is_instruction_account_duplicate(index)?.is_some() {
            continue;
        }
        let mut account = instruction_context.try_borrow_instruction_account(transaction_context, index)?;
        let data = info
            .try_borrow_data()
            .map_err(|_| InstructionError::AccountBorrowFailed)?;
        if !account.is_writable() {
            if account.get_lamports() != info.lamports() {
                return Err(InstructionError::ReadonlyLamportChange);
            }
            if account.get_data() != &data[..] {
                return Err(InstructionError::ReadonlyDataModified);
            }
            if account.get_owner() != info.owner {
                return Err(InstructionError::ModifiedProgramId);
            }
            continue;
        }
        if account.get_lamports() != info.lamports() {
            account.set_lamports(info.lamports())?;
        }
        if account.get_data() != &data[..] {
            account.set_data_from_slice(&data)?;
        }
        if account.get_owner() != info.owner {
            account.set_owner(info.owner.as_ref())?;
        }
    }
    Ok(())
}

fn read_sysvar<T: Clone>(sysvar: Result<Arc<T>, InstructionError>, var_addr: *mut u8) -> u64 {
    match sysvar {
        Ok(value) => {
            // SAFETY: the program passes a pointer to a `T` it owns, as the syscall requires.
            unsafe { *(var_addr as *mut T) = T::clone(&value) };
            SUCCESS
        }
        Err(_) => UNSUPPORTED_SYSVAR,
    }
}

/// The syscalls a natively running program makes, served by the current invoke context.
struct RuntimeStubs;

impl SyscallStubs for RuntimeStubs {
    fn sol_log(&self, message: &str) {
        log_to_current_instruction(message);
    }

    fn sol_log_data(&self, fields: &[&[u8]]) {
        stable_log::program_data(&current().get_log_collector(), fields);
    }

    fn sol_log_compute_units(&self) {
        let invoke_context = current();
        let remaining = invoke_context.get_remaining();
        stable_log::program_log(
            &invoke_context.get_log_collector(),
            &format!("consumption: {remaining} units remaining"),
        );
    }

    fn sol_remaining_compute_units(&self) -> u64 {
        current().get_remaining()
    }

    fn sol_invoke_signed(
        &self,
        instruction: &Instruction,
        account_infos: &[AccountInfo],
        signers_seeds: &[&[&[u8]]],
    ) -> ProgramResult {
        invoke_signed(instruction, account_infos, signers_seeds).map_err(record_cpi_failure)
    }

    fn sol_get_clock_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_clock(), var_addr)
    }

    fn sol_get_epoch_schedule_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_epoch_schedule(), var_addr)
    }

    fn sol_get_epoch_rewards_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_epoch_rewards(), var_addr)
    }

    #[allow(deprecated)]
    fn sol_get_fees_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_fees(), var_addr)
    }

    fn sol_get_rent_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_rent(), var_addr)
    }

    fn sol_get_last_restart_slot(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(current().get_sysvar_cache().get_last_restart_slot(), var_addr)
    }

    fn sol_get_return_data(&self) -> Option<(Pubkey, Vec<u8>)> {
        let (program_id, data) = current().transaction_context.get_return_data();
        Some((*program_id, data.to_vec()))
    }

    fn sol_set_return_data(&self, data: &[u8]) {
        let transaction_context = &mut *current().transaction_context;
        let program_id = transaction_context
            .get_current_instruction_context()
            .and_then(|context| context.get_last_program_key(transaction_context).copied());
        if let Ok(program_id) = program_id {
            // Oversized return data fails the syscall on a cluster; record it the same way.
            if let Err(err) = transaction_context.set_return_data(program_id, data.to_vec()) {
                record_cpi_failure(err);
            }
        }
    }

    fn sol_get_stack_height(&self) -> u64 {
        current().get_stack_height() as u64
    }
}

/// Derived signer addresses kept at most; past that the memo starts over, so addresses used
/// once (an escrow's, a receipt's) cannot make it grow without bound.
const MAX_REMEMBERED_SIGNERS: usize = 1_024;

/// The PDA `program` signs for with `seeds`, as `Pubkey::create_program_address` derives it.
fn signer_address(seeds: &[&[u8]], program: &Pubkey) -> Result<Pubkey, InstructionError> {
    // Each seed is prefixed with its length, so that no two lists of seeds share a key.
    let mut key = Vec::with_capacity(32 + seeds.iter().map(|seed| 8 + seed.len()).sum::<usize>());
    key.extend_from_slice(program.as_ref());
    for seed in seeds {
        key.extend_from_slice(&(seed.len() as u64).to_le_bytes());
        key.extend_from_slice(seed);
    }
    if let Some(address) = SIGNERS.with(|signers| signers.borrow().get(&key).copied()) {
        return Ok(address);
    }
    let address = Pubkey::create_program_address(seeds, program).map_err(|_| InstructionError::InvalidSeeds)?;
    SIGNERS.with(|signers| {
        let mut signers = signers.borrow_mut();
        if signers.len() >= MAX_REMEMBERED_SIGNERS {
            signers.clear();
        }
        signers.insert(key, address);
    });
    Ok(address)
}

/// A cross-program invocation made by a native program, with the runtime's checks: signer and
/// writable privileges, PDA signers derived from the caller, and account changes carried both
/// ways across the call.
fn invoke_signed(
    instruction: &Instruction,
    account_infos: &[AccountInfo],
    signers_seeds: &[&[&[u8]]],
) -> Result<(), InstructionError> {
    let invoke_context = current();
    let caller = {
        let transaction_context = &*invoke_context.transaction_context;
        *transaction_context
            .get_current_instruction_context()?
            .get_last_program_key(transaction_context)?
    };
    let signers = signers_seeds
        .iter()
        .map(|seeds| signer_address(seeds, &caller))
        .collect::<Result<Vec<_>, _>>()?;
    let stable_instruction = StableInstruction::from(instruction.clone());
    let (instruction_accounts, program_indices) = invoke_context.prepare_instruction(&stable_instruction, &signers)?;

    // The callee sees what the caller has written so far.
    let mut returned = Vec::with_capacity(instruction_accounts.len());
    {
        let transaction_context = &*invoke_context.transaction_context;
        let instruction_context = transaction_context.get_current_instruction_context()?;
        let mut synced = HashSet::new();
        for instruction_account in &instruction_accounts {
            if !synced.insert(instruction_account.index_in_caller) {
                continue;
            }
            let key = transaction_context.get_key_of_account_at_index(instruction_account.index_in_transaction)?;
            let info_index = account_infos
                .iter()
                .position(|info| info.key == key)
                .ok_or(InstructionError::MissingAccount)?;
            let info = &account_infos[info_index];
            let mut account = instruction_context
                .try_borrow_instruction_account(transaction_context, instruction_account.index_in_caller)?;
            if account.get_lamports() != info.lamports() {
                account.set_lamports(info.lamports())?;
            }
            let data = info
                .try_borrow_data()
                .map_err(|_| InstructionError::AccountBorrowFailed)?;
            if account.get_data() != &data[..] {
                account.set_data_from_slice(&data)?;
            }
            if account.get_owner() != info.owner {
                account.set_owner(info.owner.as_ref())?;
            }
            if instruction_account.is_writable {
                returned.push((instruction_account.index_in_caller, info_index));
            }
        }
    }

    let mut compute_units_consumed = 0;
    invoke_context.process_instruction(
        &instruction.data,
        &instruction_accounts,
        &program_indices,
        &mut compute_units_consumed,
        &mut ExecuteTimings::default(),
    )?;

    // The caller sees what the callee wrote.
    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    for (index_in_caller, info_index) in returned {
        let account = instruction_context.try_borrow_instruction_account(transaction_context, index_in_caller)?;
        let info = &account_infos[info_index];
        **info
            .try_borrow_mut_lamports()
            .map_err(|_| InstructionError::AccountBorrowFailed)? = account.get_lamports();
        if info.owner != account.get_owner() {
            info.assign(account.get_owner());
        }
        let new_data = account.get_data();
        if info.data_len() != new_data.len() {
            info.realloc(new_data.len(), false)
                .map_err(|_| InstructionError::InvalidRealloc)?;
        }
        info.try_borrow_mut_data()
            .map_err(|_| InstructionError::AccountBorrowFailed)?
            .copy_from_slice(new_data);
    }
    Ok(())
}
