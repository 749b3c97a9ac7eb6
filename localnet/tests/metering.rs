//! A natively running program is metered and limited as on a cluster: compute units for its
//! syscalls and its own code, heap as SBF's bump allocator holds it, the transaction's compute
//! limit and heap frame.

use {
    anchor_lang::solana_program::{
        account_info::AccountInfo, entrypoint::ProgramResult, hash::hashv, msg, program::invoke, sysvar::clock::Clock,
        sysvar::Sysvar,
    },
    litesvm::types::{FailedTransactionMetadata, TransactionMetadata},
    localnet::{
        chain::{Chain, MarketSetup},
        genesis,
        heap::HeapLayout,
        market::pda,
        meter::{self, ALLOWANCE},
        native::add_native_program_with_heap,
    },
    solana_compute_budget_interface::ComputeBudgetInstruction,
    solana_instruction::{error::InstructionError, AccountMeta, Instruction},
    solana_keypair::Keypair,
    solana_pubkey::Pubkey,
    solana_signer::Signer,
    solana_transaction_error::TransactionError,
    std::cell::Cell,
};

/// What the probe program does, by the first byte of its instruction data.
mod op {
    pub const NOTHING: u8 = 0;
    /// Allocates the little-endian u32 after it, in bytes.
    pub const ALLOCATE: u8 = 1;
    /// Logs a one-letter message the little-endian u32 after it times.
    pub const LOG: u8 = 2;
    pub const CREATE_PROGRAM_ADDRESS: u8 = 3;
    /// Hashes a 64-byte and a 3-byte slice, the little-endian u32 after it times.
    pub const HASH: u8 = 4;
    pub const CLOCK: u8 = 5;
    /// Moves `TRANSFER_LAMPORTS` from its first account to its second through the System Program.
    pub const TRANSFER: u8 = 6;
}

const TRANSFER_LAMPORTS: u64 = 1_000_000;

/// Hashes the probe computed on this thread (each test runs on its own thread).
fn hashes_made() -> u32 {
    HASHES.with(Cell::get)
}

thread_local! {
    static HASHES: Cell<u32> = const { Cell::new(0) };
}

fn probe(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let argument = || u32::from_le_bytes(data[1..5].try_into().unwrap());
    match data[0] {
        op::NOTHING => {}
        op::ALLOCATE => drop(std::hint::black_box(Vec::<u8>::with_capacity(argument() as usize))),
        op::LOG => (0..argument()).for_each(|_| msg!("x")),
        op::CREATE_PROGRAM_ADDRESS => drop(std::hint::black_box(Pubkey::create_program_address(
            &[b"probe"],
            program_id,
        ))),
        op::HASH => (0..argument()).for_each(|_| {
            std::hint::black_box(hashv(&[&[7; 64], &[1; 3]]));
            HASHES.set(HASHES.get() + 1);
        }),
        op::CLOCK => drop(std::hint::black_box(Clock::get()?)),
        op::TRANSFER => invoke(
            &solana_system_interface::instruction::transfer(accounts[0].key, accounts[1].key, TRANSFER_LAMPORTS),
            accounts,
        )?,
        _ => unreachable!("unknown op"),
    }
    Ok(())
}

struct Probe {
    chain: Chain,
    payer: Keypair,
    /// Allocates from the whole heap frame the transaction requests.
    program_id: Pubkey,
    /// Allocates from the entrypoint's default 32 KiB, whatever frame is requested.
    default_heap_program_id: Pubkey,
}

impl Probe {
    fn new() -> Self {
        let mut chain = Chain::new();
        let program_id = Pubkey::new_unique();
        add_native_program_with_heap(&mut chain.svm, program_id, probe, HeapLayout::RequestedFrame);
        let default_heap_program_id = Pubkey::new_unique();
        add_native_program_with_heap(
            &mut chain.svm,
            default_heap_program_id,
            probe,
            HeapLayout::EntrypointDefault,
        );
        let payer = chain.funded_keypair(10_000_000_000);
        Probe {
            chain,
            payer,
            program_id,
            default_heap_program_id,
        }
    }

    fn instruction(&self, op: u8, argument: u32) -> Instruction {
        self.instruction_for(self.program_id, op, argument)
    }

    fn instruction_for(&self, program_id: Pubkey, op: u8, argument: u32) -> Instruction {
        let mut data = vec![op];
        data.extend_from_slice(&argument.to_le_bytes());
        Instruction::new_with_bytes(
            program_id,
            &data,
            vec![
                AccountMeta::new(self.payer.pubkey(), true),
                AccountMeta::new(Pubkey::new_unique(), false),
                AccountMeta::new_readonly(solana_system_interface::program::ID, false),
            ],
        )
    }

    fn send(&mut self, instructions: &[Instruction]) -> Result<TransactionMetadata, FailedTransactionMetadata> {
        let payer = self.payer.insecure_clone();
        self.chain.send(instructions, &payer, &[])
    }

    /// Units the probe's own invocation consumed doing `op` once, from its log line.
    fn units(&mut self, op: u8) -> u64 {
        let meta = self.send(&[self.instruction(op, 1)]).expect("probe runs");
        let usage = meter::usage(&meta.logs);
        assert_eq!(usage.len(), 1, "{:#?}", meta.logs);
        usage[0].compute_units
    }
}

fn instruction_error(
    result: Result<TransactionMetadata, FailedTransactionMetadata>,
) -> (u8, InstructionError, Vec<String>) {
    match result {
        Err(FailedTransactionMetadata {
            err: TransactionError::InstructionError(index, err),
            meta,
        }) => (index, err, meta.logs),
        other => panic!("expected an instruction error: {other:?}"),
    }
}

#[test]
fn an_invocation_is_charged_its_allowance_and_the_default_limit_is_a_programs() {
    let mut probe = Probe::new();
    let meta = probe.send(&[probe.instruction(op::NOTHING, 0)]).unwrap();
    // The payer and the new account: other accounts; the System Program too.
    let expected = ALLOWANCE.charged(ALLOWANCE.invocation_units + 3 * ALLOWANCE.other_account_units);
    let usage = meter::usage(&meta.logs);
    assert_eq!(usage[0].compute_units, expected);
    // 200,000 as for any program that is not a builtin (a builtin gets 3,000 under SIMD-0170).
    assert_eq!(usage[0].compute_units_available, 200_000);
    assert_eq!(meta.compute_units_consumed, expected);
    assert!(meta.logs.contains(&format!(
        "Program {} consumed {expected} of 200000 compute units",
        probe.program_id
    )));
}

#[test]
fn syscalls_cost_what_the_runtime_charges_for_them() {
    let mut probe = Probe::new();
    let nothing = probe.units(op::NOTHING);
    let extra = |probe: &mut Probe, op| probe.units(op) - nothing;
    // create_program_address_units.
    assert_eq!(extra(&mut probe, op::CREATE_PROGRAM_ADDRESS), 1_500);
    // sha256_base_cost, then per slice max(mem_op_base_cost, sha256_byte_cost × len / 2).
    assert_eq!(extra(&mut probe, op::HASH), 85 + 32 + 10);
    // sysvar_base_cost plus the size of Clock.
    assert_eq!(extra(&mut probe, op::CLOCK), 100 + 40);
    // invoke_units, the allowance for making a CPI, and the System Program's own 150 units.
    assert_eq!(
        extra(&mut probe, op::TRANSFER),
        1_000 + ALLOWANCE.charged(ALLOWANCE.cpi_units) + 150
    );
    let meta = probe.send(&[probe.instruction(op::LOG, 3)]).unwrap();
    // syscall_base_cost (or the message's length, when longer) per msg!.
    assert_eq!(meter::usage(&meta.logs)[0].compute_units - nothing, 300);
}

#[test]
fn an_instruction_over_its_compute_limit_is_refused_and_stops_where_it_ran_out() {
    let mut probe = Probe::new();
    let payer = probe.payer.pubkey();
    let balance = probe.chain.lamports(&payer);
    // 2,000 hashes at 127 units each: over the default 200,000.
    let hashing = probe.instruction(op::HASH, 2_000);
    let (index, err, logs) = instruction_error(probe.send(&[hashing.clone()]));
    assert_eq!((index, err), (0, InstructionError::ComputationalBudgetExceeded));
    assert!(logs.contains(&format!(
        "Program {} consumed 200000 of 200000 compute units",
        probe.program_id
    )));
    // Stopped at the hash it could not pay for, as SBF stops it.
    let allowance = ALLOWANCE.charged(ALLOWANCE.invocation_units + 3 * ALLOWANCE.other_account_units);
    assert_eq!(u64::from(hashes_made()), (200_000 - allowance) / 127);
    // Only the fee was taken.
    assert_eq!(probe.chain.lamports(&payer), balance - 5_000);

    let raised = ComputeBudgetInstruction::set_compute_unit_limit(300_000);
    let meta = probe.send(&[raised, hashing]).expect("a raised limit lets it through");
    assert_eq!(meter::usage(&meta.logs)[0].compute_units, allowance + 2_000 * 127);
}

#[test]
fn heap_past_the_frame_is_refused_and_a_larger_frame_lets_it_through() {
    let mut probe = Probe::new();
    let allocate = probe.instruction(op::ALLOCATE, 40_000);
    let (index, err, logs) = instruction_error(probe.send(&[allocate.clone()]));
    assert_eq!((index, err), (0, InstructionError::ProgramFailedToComplete));
    assert!(logs.contains(&"Program log: Error: memory allocation failed, out of memory".to_string()));
    let usage = meter::usage(&logs);
    assert!(usage[0].heap_bytes >= 40_000, "{usage:?}");
    assert_eq!(usage[0].heap_capacity_bytes, 32 * 1024 - 8);

    let frame = ComputeBudgetInstruction::request_heap_frame(64 * 1024);
    let meta = probe
        .send(&[frame.clone(), allocate])
        .expect("a larger frame lets it through");
    let usage = meter::usage(&meta.logs);
    assert!(usage[0].heap_bytes >= 40_000, "{usage:?}");
    assert_eq!(usage[0].heap_capacity_bytes, 64 * 1024 - 8);

    // The frame above 32 KiB costs heap_cost (8 units) per extra 32 KiB.
    let nothing = probe.instruction(op::NOTHING, 0);
    let small_frame = ComputeBudgetInstruction::request_heap_frame(32 * 1024);
    let in_small = probe.send(&[small_frame, nothing.clone()]).unwrap();
    let in_large = probe.send(&[frame.clone(), nothing]).unwrap();
    assert_eq!(in_large.compute_units_consumed - in_small.compute_units_consumed, 8);
    // Counted in the invocation's own figure too, as the loader counts it.
    let invocation_units = |meta: &TransactionMetadata| meter::usage(&meta.logs)[0].compute_units;
    assert_eq!(invocation_units(&in_large) - invocation_units(&in_small), 8);

    // The entrypoint's default allocator has 32 KiB whatever the frame, as on SBF.
    let default_heap = probe.instruction_for(probe.default_heap_program_id, op::ALLOCATE, 40_000);
    let (_, err, _) = instruction_error(probe.send(&[frame, default_heap]));
    assert_eq!(err, InstructionError::ProgramFailedToComplete);
}

#[test]
fn the_market_program_is_refused_under_a_tiny_limit_and_runs_under_the_default() {
    let mut chain = Chain::new();
    let (keypairs, _faucet, params) = genesis::load_config(None).expect("the default config");
    let setup = MarketSetup::mint_only(&mut chain, keypairs);
    let initialize = setup.keys.initialize_market(params);
    let tiny = ComputeBudgetInstruction::set_compute_unit_limit(3_000);
    let (index, err, _) = instruction_error(chain.send(&[tiny, initialize.clone()], &setup.authority, &[]));
    assert_eq!((index, err), (1, InstructionError::ComputationalBudgetExceeded));
    assert!(chain.account(&pda::market()).is_none(), "nothing changed");

    let meta = chain
        .send(&[initialize], &setup.authority, &[])
        .expect("initialize_market");
    let usage = meter::usage(&meta.logs);
    let market = usage
        .iter()
        .find(|usage| usage.program_id == agent_market::ID.to_string())
        .expect("the program's usage");
    assert!(
        market.compute_units > 3_000 && market.compute_units < 200_000,
        "{market:?}"
    );
    assert!(
        market.heap_bytes > 0 && market.heap_bytes < market.heap_capacity_bytes,
        "{market:?}"
    );
}

#[test]
fn the_fee_payer_pays_the_priority_fee_on_the_requested_limit() {
    let mut probe = Probe::new();
    let payer = probe.payer.pubkey();
    let before = probe.chain.lamports(&payer);
    let instructions = [
        ComputeBudgetInstruction::set_compute_unit_limit(50_000),
        ComputeBudgetInstruction::set_compute_unit_price(30_001),
        probe.instruction(op::NOTHING, 0),
    ];
    probe.send(&instructions).unwrap();
    // 30,001 µlamports × 50,000 units = 1,500,050,000 µlamports: 1,501 lamports, rounded up.
    assert_eq!(before - probe.chain.lamports(&payer), 5_000 + 1_501);
}
