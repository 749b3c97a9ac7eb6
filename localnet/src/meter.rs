//! Compute units for a natively running program: what SBF would have charged it.
//!
//! Two parts. The syscalls a program makes are charged what the runtime charges for them,
//! with the costs read from the transaction's own `SVMTransactionExecutionCost` (agave's
//! `solana-program-runtime`, through the invoke context), and the formulas of agave's
//! `solana-bpf-loader-program` syscalls. The program's own instructions between syscalls cannot
//! be counted natively: an `ALLOWANCE` per invocation, per account and per CPI stands for them,
//! chosen from published SBF measurements (see `Allowance`). Units go into the transaction's
//! compute meter, so the runtime's own accounting enforces the limit and reports the total.

use {
    crate::native::current,
    solana_instruction::error::InstructionError,
    solana_program_runtime::execution_budget::SVMTransactionExecutionCost,
    solana_sha256_hasher::Digest,
    std::{cell::Cell, panic::resume_unwind},
};

/// Units a native program is charged for its own code, which the native run cannot count.
///
/// Measured on SBF by Anchor's benchmark (`bench/COMPUTE_UNITS.md`, Anchor 0.31.0 on Solana
/// 2.1.0: programs whose instructions take 1, 2, 4 and 8 accounts of one kind), fitted as a base
/// per instruction plus a cost per account. Each figure is charged with `MARGIN_PERCENT` on top.
#[derive(Clone, Copy, Debug)]
pub struct Allowance {
    /// Entering the program: entrypoint, instruction dispatch, the handler's frame. The largest
    /// base of the fitted series (`program1..8`: 779 − 138).
    pub invocation_units: u64,
    /// An account owned by the program itself (`Account<T>`: owner and discriminator checks,
    /// Borsh in and out): the largest per-account slope of those series (`boxedAccountUnsized`).
    pub program_account_units: u64,
    /// An account owned by SPL Token or Token-2022 (unpacked as a token account or mint):
    /// `interfaceAccountToken1..4`'s slope, the larger of token account and mint.
    pub token_account_units: u64,
    /// Any other account (signer, system account, program, unchecked): `accountInfo1..8`'s slope.
    pub other_account_units: u64,
    /// Building and making a CPI, beyond what the runtime charges for it: `accountEmptyInit`'s
    /// slope (4,234, one `init` CPI per account) less `accountEmpty`'s slope (360), the CPI's
    /// `invoke_units` (1,000), the System Program's create_account (150) and `Rent::get` (124).
    pub cpi_units: u64,
    /// Added to each figure above.
    pub margin_percent: u64,
}

pub const ALLOWANCE: Allowance = Allowance {
    invocation_units: 641,
    program_account_units: 435,
    token_account_units: 1_615,
    other_account_units: 336,
    cpi_units: 2_600,
    margin_percent: 25,
};

impl Allowance {
    /// `measured_units` with the margin, rounded up.
    pub fn charged(&self, measured_units: u64) -> u64 {
        measured_units
            .saturating_mul(100u64.saturating_add(self.margin_percent))
            .div_ceil(100)
    }
}

thread_local! {
    /// Why the running native invocation was stopped in the middle of its code.
    static STOPPED: Cell<Option<InstructionError>> = const { Cell::new(None) };
}

/// Marker payload of the unwind that stops a native program.
struct Stopped;

/// Stops the running native program at once with `err`, as SBF aborts it: the unwind reaches
/// the invocation's `catch_unwind`, which answers `err` (see `take_stop`).
pub(crate) fn stop(err: InstructionError) -> ! {
    STOPPED.set(Some(err));
    // `resume_unwind`, not `panic!`: no panic hook, no message on stderr.
    resume_unwind(Box::new(Stopped))
}

/// The reason the invocation that just unwound was stopped, if it was stopped by `stop`.
pub(crate) fn take_stop() -> Option<InstructionError> {
    STOPPED.take()
}

/// Charges the running native invocation `units`; out of units, it stops with
/// `ComputationalBudgetExceeded` as SBF does.
pub(crate) fn charge(units: u64) {
    if current().consume_checked(units).is_err() {
        stop(InstructionError::ComputationalBudgetExceeded);
    }
}

pub(crate) fn cost() -> SVMTransactionExecutionCost {
    *current().get_execution_cost()
}

/// `sol_sha256` over slices of these lengths: a base, and per slice half a unit a byte but
/// never less than a memory operation (agave's `SyscallHash`).
pub fn sha256_units(cost: &SVMTransactionExecutionCost, slice_lengths: impl Iterator<Item = usize>) -> u64 {
    slice_lengths.fold(cost.sha256_base_cost, |units, len| {
        let slice_units = cost
            .mem_op_base_cost
            .max(cost.sha256_byte_cost.saturating_mul(len as u64 / 2));
        units.saturating_add(slice_units)
    })
}

/// `bytes` moved between the program and the runtime, at `cpi_bytes_per_unit`.
pub fn byte_units(cost: &SVMTransactionExecutionCost, bytes: usize) -> u64 {
    (bytes as u64).checked_div(cost.cpi_bytes_per_unit).unwrap_or(u64::MAX)
}

/// Receives every digest computed on the host (see the patched `solana-sha256-hasher`) and
/// charges those a native program computed itself.
pub(crate) fn on_digest(digest: Digest<'_>) {
    if !crate::heap::is_metered() {
        return;
    }
    crate::native::checkpoint();
    let cost = cost();
    charge(match digest {
        // Each try of `find_program_address` is one, as `sol_try_find_program_address` charges.
        Digest::ProgramAddress => cost.create_program_address_units,
        Digest::Slices(vals) => sha256_units(&cost, vals.iter().map(|val| val.len())),
        // Not a syscall on SBF (a program hashing with `sha2` itself): charged as one slice,
        // far less than the instructions it would take there.
        Digest::Stream { bytes, .. } => sha256_units(&cost, std::iter::once(bytes as usize)),
    });
}

/// What one invocation of a native program used, read from the lines it logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvocationUsage {
    pub program_id: String,
    /// Units consumed, those of the CPIs it made included (as the BPF loader counts them).
    pub compute_units: u64,
    /// Units the transaction had left when the invocation began.
    pub compute_units_available: u64,
    /// Heap bytes it held at its end (a bump allocator's high-water mark).
    pub heap_bytes: u64,
    pub heap_capacity_bytes: u64,
}

/// The invocations of native programs in a transaction's logs, in the order they returned.
pub fn usage(logs: &[String]) -> Vec<InvocationUsage> {
    logs.windows(2)
        .filter_map(|pair| {
            let (program_id, compute_units, compute_units_available) =
                parse_usage_line(&pair[0], "consumed", "compute units")?;
            let (heap_program_id, heap_bytes, heap_capacity_bytes) = parse_usage_line(&pair[1], "used", "heap bytes")?;
            (heap_program_id == program_id).then(|| InvocationUsage {
                program_id: program_id.to_string(),
                compute_units,
                compute_units_available,
                heap_bytes,
                heap_capacity_bytes,
            })
        })
        .collect()
}

/// `Program <id> <verb> <n> of <m> <unit>` as `(id, n, m)`.
fn parse_usage_line<'a>(line: &'a str, verb: &str, unit: &str) -> Option<(&'a str, u64, u64)> {
    let rest = line.strip_prefix("Program ")?.strip_suffix(unit)?;
    let mut words = rest.split_whitespace();
    let program_id = words.next()?;
    (words.next()? == verb).then_some(())?;
    let used = words.next()?.parse().ok()?;
    (words.next()? == "of").then_some(())?;
    let available = words.next()?.parse().ok()?;
    words.next().is_none().then_some((program_id, used, available))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_charges_each_slice_at_least_a_memory_operation() {
        let cost = SVMTransactionExecutionCost::default();
        assert_eq!(sha256_units(&cost, [].into_iter()), 85);
        assert_eq!(sha256_units(&cost, [1, 32, 64].into_iter()), 85 + 10 + 16 + 32);
    }

    #[test]
    fn usage_pairs_each_consumed_line_with_its_heap_line() {
        let logs: Vec<String> = [
            "Program A invoke [1]",
            "Program T invoke [2]",
            "Program T consumed 4645 of 180000 compute units",
            "Program T success",
            "Program A consumed 25000 of 200000 compute units",
            "Program A used 1200 of 32760 heap bytes",
            "Program A success",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            usage(&logs),
            vec![InvocationUsage {
                program_id: "A".to_string(),
                compute_units: 25_000,
                compute_units_available: 200_000,
                heap_bytes: 1_200,
                heap_capacity_bytes: 32_760,
            }]
        );
    }

    #[test]
    fn allowance_adds_its_margin_rounding_up() {
        assert_eq!(ALLOWANCE.charged(641), 802);
        assert_eq!(ALLOWANCE.charged(100), 125);
    }
}
