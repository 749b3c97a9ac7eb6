//! CPU the `localnet` binary spends per marketplace execution, as the relayer drives it: per
//! execution one `sendTransaction` of open_escrow, one `getMultipleAccounts` of its escrow and
//! one `sendTransaction` of its settlement (a batch of one), each kind sent as a JSON-RPC batch over a keep-alive
//! connection, and one `getSignatureStatuses` of the batch's signatures. CPU is read from
//! /proc: the chain thread's, and the whole process's. Work done once a slot (producing the
//! block, saving the ledger) is shared by the executions of that slot, so `--rate` paces them
//! as a relayer under load would, and `--ledger DIR` saves the ledger as `npm start` does.
//!
//! Run: `sh scripts/cargo.sh run --profile host-release --locked -p agent-market-bench --bin
//! execution-cpu -- [executions] [--rate per_second] [localnet arguments]` after building
//! localnet with the same profile. `LOCALNET_BIN` overrides the binary (a wrapper script may
//! run it under a profiler).

mod executions;
mod localnet_rpc;

use {
    executions::{Executions, BATCH},
    localnet_rpc::{start_localnet, Connection},
    std::time::Instant,
};

const WARMUP_EXECUTIONS: usize = 500;
const DEFAULT_EXECUTIONS: usize = 5_000;

/// Nanoseconds on CPU of one thread, from its schedstat.
fn thread_cpu_ns(pid: u32, tid: &str) -> u64 {
    let schedstat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).expect("a thread's schedstat");
    schedstat
        .split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("schedstat starts with the time on CPU")
}

/// (the chain thread's, every thread's) nanoseconds on CPU.
fn cpu_ns(pid: u32) -> (u64, u64) {
    let mut chain = 0;
    let mut all = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads") {
        let tid = task.expect("a thread").file_name().into_string().expect("a thread id");
        let ns = thread_cpu_ns(pid, &tid);
        all += ns;
        let name = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
        if name.trim() == "chain" {
            chain = ns;
        }
    }
    (chain, all)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let executions = match args.first().map(|count| count.parse()) {
        Some(Ok(count)) => {
            args.remove(0);
            count
        }
        Some(Err(_)) | None => DEFAULT_EXECUTIONS,
    };
    let rate = args.iter().position(|arg| arg == "--rate").map(|at| {
        let rate: f64 = args
            .get(at + 1)
            .and_then(|rate| rate.parse().ok())
            .expect("--rate takes executions a second");
        args.drain(at..at + 2);
        rate
    });
    let node = start_localnet(&args);
    let pid = node.child.id();
    let mut connection = Connection::open(&node.host);
    let mut market = Executions::setup(&mut connection);
    market.execute(&mut connection, WARMUP_EXECUTIONS, None);

    let (chain_before, all_before) = cpu_ns(pid);
    let started = Instant::now();
    market.execute(&mut connection, executions, rate);
    let elapsed = started.elapsed();
    let (chain_after, all_after) = cpu_ns(pid);
    let executions = executions.div_ceil(BATCH) * BATCH;
    let per_execution = |ns: u64| ns as f64 / executions as f64 / 1e3;
    println!(
        "{executions} executions in {:.2} s: localnet CPU per execution {:.1} µs on the chain thread, {:.1} µs in all",
        elapsed.as_secs_f64(),
        per_execution(chain_after - chain_before),
        per_execution(all_after - all_before),
    );
}
