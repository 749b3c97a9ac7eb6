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
//! The program is charged what SBF would have charged it (`meter`): its syscalls at the
//! runtime's costs, and an allowance for its own code. Its heap is counted as SBF's bump allocator
//! would hold it (`heap`). Either running out stops it as SBF does: `ComputationalBudgetExceeded`,
//! or `ProgramFailedToComplete` after "memory allocation failed, out of memory". Each invocation
//! logs "Program <id> consumed <n> of <m> compute units" as the BPF loader does, and the heap it
//! used ("Program <id> used <n> of <m> heap bytes"). Stack use is not checked.

use {
    crate::{
        heap::{self, HeapLayout, Metering},
        meter::{self, byte_units, ALLOWANCE},
    },
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
        declare_process_instruction, execution_budget::SVMTransactionExecutionCost, invoke_context::InvokeContext,
        serialization::serialize_parameters, solana_sbpf::vm::ContextObject, stable_log,
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

fn registry() -> &'static RwLock<HashMap<Pubkey, (Entrypoint, HeapLayout)>> {
    static PROGRAMS: OnceLock<RwLock<HashMap<Pubkey, (Entrypoint, HeapLayout)>>> = OnceLock::new();
    PROGRAMS.get_or_init(Default::default)
}

/// Deploys `entry` at `program_id` in `svm` as a native program whose SBF build uses the
/// entrypoint's default allocator (32 KiB of heap, whatever frame is requested), as Anchor's do.
pub fn add_native_program(svm: &mut LiteSVM, program_id: Pubkey, entry: Entrypoint) {
    add_native_program_with_heap(svm, program_id, entry, HeapLayout::EntrypointDefault);
}

/// Deploys `entry` at `program_id` in `svm` as a native program allocating from `heap`.
pub fn add_native_program_with_heap(svm: &mut LiteSVM, program_id: Pubkey, entry: Entrypoint, heap: HeapLayout) {
    static STUBS: Once = Once::new();
    STUBS.call_once(|| {
        set_syscall_stubs(Box::new(RuntimeStubs));
        solana_sha256_hasher::set_digest_observer(meter::on_digest);
    });
    registry()
        .write()
        .expect("native program registry poisoned")
        .insert(program_id, (entry, heap));
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

// Nothing flat: `process` charges the allowance and the syscalls (see `meter`).
declare_process_instruction!(NativeProgram, 0, |invoke_context| { process(invoke_context) });

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

/// Registers a running native instruction's context, sends `msg!` output to its logs, and gives
/// it a heap frame of its own.
struct ContextGuard {
    previous_log_sink: Option<fn(&str)>,
    outer_heap: heap::Frame,
}

impl ContextGuard {
    fn enter(invoke_context: &mut InvokeContext, heap_capacity_bytes: u64) -> Self {
        let address = invoke_context as *mut InvokeContext as usize;
        CONTEXTS.with(|contexts| contexts.borrow_mut().push(address));
        let previous_log_sink = solana_msg::set_log_sink(Some(log_to_current_instruction));
        let outer_heap = heap::start_frame(heap_capacity_bytes);
        ContextGuard {
            previous_log_sink,
            outer_heap,
        }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        heap::restore(self.outer_heap);
        solana_msg::set_log_sink(self.previous_log_sink);
        CONTEXTS.with(|contexts| contexts.borrow_mut().pop());
    }
}

/// A syscall made by the running native program: stops it if its heap already ran out, charges
/// it `units` (given the transaction's costs), and does the runtime's `work`, whose allocations
/// are not the program's.
fn syscall<T>(
    units: impl FnOnce(&SVMTransactionExecutionCost) -> u64,
    work: impl FnOnce(&mut InvokeContext) -> T,
) -> T {
    checkpoint();
    meter::charge(units(&meter::cost()));
    let _runtime = Metering::set(false);
    work(current())
}

/// Stops the running native program if it has allocated past its heap, as SBF stops it at the
/// allocation (natively it is only noticed at its next syscall, hash, or return).
pub(crate) fn checkpoint() {
    if heap::frame().is_exhausted() {
        meter::stop(out_of_memory());
    }
}

fn out_of_memory() -> InstructionError {
    let _runtime = Metering::set(false);
    stable_log::program_log(
        &current().get_log_collector(),
        "Error: memory allocation failed, out of memory",
    );
    InstructionError::ProgramFailedToComplete
}

fn log_to_current_instruction(message: &str) {
    if !heap::is_metered() {
        stable_log::program_log(&current().get_log_collector(), message);
        return;
    }
    syscall(
        |cost| cost.syscall_base_cost.max(message.len() as u64),
        |invoke_context| stable_log::program_log(&invoke_context.get_log_collector(), message),
    );
}

/// The invoke context of the innermost running native instruction.
///
/// Sound because a context outlives every instruction it runs, and syscalls are only made
/// from inside `process`, which registered it on this thread.
pub(crate) fn current<'a, 'b>() -> &'a mut InvokeContext<'b> {
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
    let (entry, heap_layout) = *registry()
        .read()
        .expect("native program registry poisoned")
        .get(&program_id)
        .ok_or(InstructionError::UnsupportedProgramId)?;

    // Counted from here as the loader counts them, the heap frame's cost included: a frame
    // above 32 KiB costs when the loader creates the VM.
    let units_before = invoke_context.get_remaining();
    let frame_bytes = invoke_context.get_compute_budget().heap_size;
    let heap_units =
        solana_bpf_loader_program::calculate_heap_cost(frame_bytes, invoke_context.get_execution_cost().heap_cost);
    invoke_context
        .consume_checked(heap_units)
        .map_err(|_| InstructionError::ComputationalBudgetExceeded)?;
    let allowance_units = invocation_allowance(invoke_context, &program_id)?;

    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    let mask_out_rent_epoch = invoke_context.get_feature_set().mask_out_rent_epoch_in_vm_serialization;
    let (mut parameters, _regions, _metadata) =
        serialize_parameters(transaction_context, instruction_context, true, mask_out_rent_epoch)?;
    let input = parameters.as_slice_mut().as_mut_ptr();

    let is_outermost = invoke_context.get_stack_height() == 1;
    if is_outermost {
        CPI_FAILURE.with(|failure| failure.borrow_mut().take());
    }
    let outcome = {
        let _guard = ContextGuard::enter(invoke_context, heap_layout.capacity_bytes(frame_bytes));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            meter::charge(allowance_units);
            // The entrypoint's deserialization allocates on the program's heap on SBF too.
            let _program = Metering::set(true);
            // SAFETY: `parameters` is the loader's serialization of this instruction and outlives
            // every use of the views below, which all end before `process` returns.
            let (_, account_infos, instruction_data) = unsafe { deserialize(input) };
            let account_infos_for_entry: &[AccountInfo] =
                unsafe { std::mem::transmute::<&[AccountInfo], &[AccountInfo]>(&account_infos) };
            let result = entry(&program_id, account_infos_for_entry, instruction_data);
            (result, account_infos)
        }));
        let heap_frame = heap::frame();
        let outcome = match outcome {
            Ok(_) if heap_frame.is_exhausted() => Err(out_of_memory()),
            Ok((result, account_infos)) => Ok((result, account_infos)),
            Err(_) => Err(meter::take_stop().unwrap_or(InstructionError::ProgramFailedToComplete)),
        };
        log_usage(invoke_context, &program_id, units_before, &heap_frame);
        outcome
    };
    if let Some(err) = CPI_FAILURE.with(|failure| failure.borrow().clone()) {
        return Err(err);
    }
    match outcome? {
        (Ok(()), account_infos) => commit(invoke_context, &account_infos),
        (Err(program_error), _) => Err(InstructionError::from(u64::from(program_error))),
    }
}

/// What the program's own code is charged for an invocation (see `meter::Allowance`): a base,
/// and each distinct account by what owns it.
fn invocation_allowance(invoke_context: &InvokeContext, program_id: &Pubkey) -> Result<u64, InstructionError> {
    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    let mut measured_units = ALLOWANCE.invocation_units;
    for index in 0..instruction_context.get_number_of_instruction_accounts() {
        if instruction_context.is_instruction_account_duplicate(index)?.is_some() {
            continue;
        }
        let account = instruction_context.try_borrow_instruction_account(transaction_context, index)?;
        let owner = account.get_owner();
        let account_units = if owner == program_id {
            ALLOWANCE.program_account_units
        } else if *owner == spl_token::ID || *owner == TOKEN_2022_ID {
            ALLOWANCE.token_account_units
        } else {
            ALLOWANCE.other_account_units
        };
        measured_units = measured_units.saturating_add(account_units);
    }
    Ok(ALLOWANCE.charged(measured_units))
}

const TOKEN_2022_ID: Pubkey = solana_pubkey::pubkey!("TokenzQdBNbLqP5VEhdkAS5EPFLC1PpmtqeFMtvdRK7");

/// The lines the BPF loader logs when a program returns, and the heap it used.
fn log_usage(invoke_context: &InvokeContext, program_id: &Pubkey, units_before: u64, heap_frame: &heap::Frame) {
    let log_collector = invoke_context.get_log_collector();
    if let Some(collector) = &log_collector {
        let consumed = units_before.saturating_sub(invoke_context.get_remaining());
        let mut collector = collector.borrow_mut();
        collector.log(&format!(
            "Program {program_id} consumed {consumed} of {units_before} compute units"
        ));
        collector.log(&format!(
            "Program {program_id} used {} of {} heap bytes",
            heap_frame.used_bytes(),
            heap_frame.capacity_bytes()
        ));
    }
    let (return_program_id, return_data) = invoke_context.transaction_context.get_return_data();
    if !return_data.is_empty() {
        stable_log::program_return(&log_collector, return_program_id, return_data);
    }
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

/// A sysvar getter: the sysvar's size on top of the base, as agave's `get_sysvar` charges.
fn read_sysvar<T: Clone>(
    sysvar: impl FnOnce(&InvokeContext) -> Result<Arc<T>, InstructionError>,
    var_addr: *mut u8,
) -> u64 {
    syscall(
        |cost| cost.sysvar_base_cost.saturating_add(std::mem::size_of::<T>() as u64),
        |invoke_context| match sysvar(invoke_context) {
            Ok(value) => {
                // SAFETY: the program passes a pointer to a `T` it owns, as the syscall requires.
                unsafe { *(var_addr as *mut T) = T::clone(&value) };
                SUCCESS
            }
            Err(_) => UNSUPPORTED_SYSVAR,
        },
    )
}

/// The syscalls a natively running program makes, served by the current invoke context.
struct RuntimeStubs;

impl SyscallStubs for RuntimeStubs {
    fn sol_log(&self, message: &str) {
        log_to_current_instruction(message);
    }

    fn sol_log_data(&self, fields: &[&[u8]]) {
        let field_count = fields.len() as u64;
        let bytes = fields.iter().map(|field| field.len() as u64).sum::<u64>();
        syscall(
            |cost| {
                let per_field = cost.syscall_base_cost.saturating_mul(field_count);
                cost.syscall_base_cost.saturating_add(per_field).saturating_add(bytes)
            },
            |invoke_context| stable_log::program_data(&invoke_context.get_log_collector(), fields),
        );
    }

    fn sol_log_compute_units(&self) {
        syscall(
            |cost| cost.syscall_base_cost,
            |invoke_context| {
                let remaining = invoke_context.get_remaining();
                if let Some(collector) = invoke_context.get_log_collector() {
                    collector
                        .borrow_mut()
                        .log(&format!("Program consumption: {remaining} units remaining"));
                }
            },
        );
    }

    fn sol_remaining_compute_units(&self) -> u64 {
        syscall(
            |cost| cost.syscall_base_cost,
            |invoke_context| invoke_context.get_remaining(),
        )
    }

    fn sol_invoke_signed(
        &self,
        instruction: &Instruction,
        account_infos: &[AccountInfo],
        signers_seeds: &[&[&[u8]]],
    ) -> ProgramResult {
        syscall(
            |cost| {
                // The data is charged only under the feature that lifted the CPI size limit.
                let data_units = if current().get_feature_set().loosen_cpi_size_restriction {
                    byte_units(cost, instruction.data.len())
                } else {
                    0
                };
                ALLOWANCE
                    .charged(ALLOWANCE.cpi_units)
                    .saturating_add(cost.invoke_units)
                    .saturating_add(data_units)
            },
            |_| invoke_signed(instruction, account_infos, signers_seeds).map_err(record_cpi_failure),
        )
    }

    fn sol_get_clock_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(|invoke_context| invoke_context.get_sysvar_cache().get_clock(), var_addr)
    }

    fn sol_get_epoch_schedule_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(
            |invoke_context| invoke_context.get_sysvar_cache().get_epoch_schedule(),
            var_addr,
        )
    }

    fn sol_get_epoch_rewards_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(
            |invoke_context| invoke_context.get_sysvar_cache().get_epoch_rewards(),
            var_addr,
        )
    }

    #[allow(deprecated)]
    fn sol_get_fees_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(|invoke_context| invoke_context.get_sysvar_cache().get_fees(), var_addr)
    }

    fn sol_get_rent_sysvar(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(|invoke_context| invoke_context.get_sysvar_cache().get_rent(), var_addr)
    }

    fn sol_get_last_restart_slot(&self, var_addr: *mut u8) -> u64 {
        read_sysvar(
            |invoke_context| invoke_context.get_sysvar_cache().get_last_restart_slot(),
            var_addr,
        )
    }

    /// Charged for what the program's SBF build asks for: its whole buffer (`MAX_RETURN_DATA`)
    /// holds all there is, so that is the length copied.
    fn sol_get_return_data(&self) -> Option<(Pubkey, Vec<u8>)> {
        let length = current().transaction_context.get_return_data().1.len();
        syscall(
            |cost| {
                let copy_units = if length == 0 {
                    0
                } else {
                    byte_units(cost, length.saturating_add(std::mem::size_of::<Pubkey>()))
                };
                cost.syscall_base_cost.saturating_add(copy_units)
            },
            |invoke_context| {
                let (program_id, data) = invoke_context.transaction_context.get_return_data();
                Some((*program_id, data.to_vec()))
            },
        )
    }

    fn sol_set_return_data(&self, data: &[u8]) {
        syscall(
            |cost| byte_units(cost, data.len()).saturating_add(cost.syscall_base_cost),
            |invoke_context| {
                let transaction_context = &mut *invoke_context.transaction_context;
                let program_id = transaction_context
                    .get_current_instruction_context()
                    .and_then(|context| context.get_last_program_key(transaction_context).copied());
                if let Ok(program_id) = program_id {
                    // Oversized return data fails the syscall on a cluster; record it the same way.
                    if let Err(err) = transaction_context.set_return_data(program_id, data.to_vec()) {
                        record_cpi_failure(err);
                    }
                }
            },
        );
    }

    fn sol_get_stack_height(&self) -> u64 {
        syscall(
            |cost| cost.syscall_base_cost,
            |invoke_context| invoke_context.get_stack_height() as u64,
        )
    }

    unsafe fn sol_memcpy(&self, dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: the caller's contract, as for the syscall: `n` bytes, not overlapping.
        syscall(
            |cost| mem_op_units(cost, n),
            |_| unsafe { std::ptr::copy_nonoverlapping(src, dst, n) },
        );
    }

    unsafe fn sol_memmove(&self, dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: the caller's contract, as for the syscall: `n` bytes at each end.
        syscall(|cost| mem_op_units(cost, n), |_| unsafe { std::ptr::copy(src, dst, n) });
    }

    unsafe fn sol_memcmp(&self, s1: *const u8, s2: *const u8, n: usize, result: *mut i32) {
        syscall(
            |cost| mem_op_units(cost, n),
            |_| {
                // SAFETY: the caller's contract, as for the syscall: `n` readable bytes at each.
                let (left, right) = unsafe { (std::slice::from_raw_parts(s1, n), std::slice::from_raw_parts(s2, n)) };
                let difference = left
                    .iter()
                    .zip(right)
                    .find(|(a, b)| a != b)
                    .map_or(0, |(a, b)| i32::from(*a) - i32::from(*b));
                unsafe { *result = difference };
            },
        );
    }

    unsafe fn sol_memset(&self, s: *mut u8, c: u8, n: usize) {
        // SAFETY: the caller's contract, as for the syscall: `n` writable bytes.
        syscall(
            |cost| mem_op_units(cost, n),
            |_| unsafe { std::ptr::write_bytes(s, c, n) },
        );
    }
}

/// The memory syscalls: at least a base, else by bytes at `cpi_bytes_per_unit`.
fn mem_op_units(cost: &SVMTransactionExecutionCost, n: usize) -> u64 {
    cost.mem_op_base_cost.max(byte_units(cost, n))
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

/// What agave's CPI charges for the callee's accounts: each distinct one's data at
/// `cpi_bytes_per_unit`, read from the caller's `AccountInfo` (or the account itself for a program).
fn cpi_account_units(
    invoke_context: &InvokeContext,
    instruction_accounts: &[solana_transaction_context::InstructionAccount],
    account_infos: &[AccountInfo],
) -> Result<u64, InstructionError> {
    let cost = invoke_context.get_execution_cost();
    let transaction_context = &*invoke_context.transaction_context;
    let instruction_context = transaction_context.get_current_instruction_context()?;
    let mut units = 0u64;
    for (index, instruction_account) in instruction_accounts.iter().enumerate() {
        if index != usize::from(instruction_account.index_in_callee) {
            continue;
        }
        let account = instruction_context
            .try_borrow_instruction_account(transaction_context, instruction_account.index_in_caller)?;
        #[allow(deprecated)]
        let data_len = if account.is_executable() {
            account.get_data().len()
        } else {
            account_infos
                .iter()
                .find(|info| info.key == account.get_key())
                .map_or(0, |info| info.data_len())
        };
        units = units.saturating_add(byte_units(cost, data_len));
    }
    Ok(units)
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
    meter::charge(cpi_account_units(invoke_context, &instruction_accounts, account_infos)?);

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
