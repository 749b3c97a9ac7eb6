//! Resident memory (RSS) of the `localnet` binary as marketplace executions accumulate, each
//! as the relayer drives it (see `executions`). Several nodes run side by side on the same
//! workload, each with its own arguments, so the figures and their ratios come from one run:
//!
//! - `--retain-transactions 0`: every record kept on disk, the index of all in memory;
//! - a retention: the default (`DEFAULT_RETAIN_TRANSACTIONS` transactions) or
//!   `--retain-transactions N`, which lets a short run reach the plateau;
//! - with `LOCALNET_BASELINE_BIN`, another binary with its default arguments: a build from
//!   before the history moved to disk keeps every record in memory.
//!
//! Run: `sh scripts/cargo.sh run --profile host-release --locked -p agent-market-bench --bin
//! localnet-memory -- [executions at each checkpoint…] [--retain-transactions N] [--ledger]
//! [--without-keep-all]`. `--without-keep-all` leaves out the keep-all node, whose growth a
//! shorter run already shows, so a long run to a million executions has the machine to the
//! retained node. Run after building localnet with
//! the same profile (`LOCALNET_BIN` overrides it). `--ledger` gives each node a ledger
//! directory in the temporary folder, as `npm start` does; without it the history lives in an
//! unlinked temporary file.

mod executions;
mod localnet_rpc;

use {
    executions::Executions,
    localnet::history::DEFAULT_RETAIN_TRANSACTIONS,
    localnet_rpc::{spawn_localnet, start_localnet, Connection},
    std::time::Instant,
};

const DEFAULT_CHECKPOINTS: [usize; 3] = [10_000, 50_000, 100_000];

/// The node's resident memory in KiB, from /proc.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the node's status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in kB")
}

struct Setup {
    name: String,
    /// `None`: `localnet_rpc::localnet_binary()`.
    binary: Option<String>,
    args: Vec<String>,
}

/// RSS after starting, then at each checkpoint: (executions, KiB, seconds since the start).
fn measure(setup: &Setup, checkpoints: &[usize], ledger: bool) -> Vec<(usize, u64, f64)> {
    let dir = std::env::temp_dir().join(format!("localnet-memory-{}-{}", std::process::id(), setup.name));
    let mut args = setup.args.clone();
    if ledger {
        args.extend(["--ledger".to_string(), dir.display().to_string()]);
    }
    let node = match &setup.binary {
        Some(binary) => spawn_localnet(binary, &args),
        None => start_localnet(&args),
    };
    let pid = node.child.id();
    let mut connection = Connection::open(&node.host);
    let mut market = Executions::setup(&mut connection);
    let started = Instant::now();
    let mut figures = vec![(0, rss_kib(pid), 0.0)];
    let mut done = 0;
    for &checkpoint in checkpoints {
        market.execute(&mut connection, checkpoint - done, None);
        done = checkpoint;
        figures.push((checkpoint, rss_kib(pid), started.elapsed().as_secs_f64()));
        eprintln!(
            "{}: {checkpoint} executions, RSS {} MiB",
            setup.name,
            figures.last().expect("pushed").1 / 1024
        );
    }
    drop(node);
    let _ = std::fs::remove_dir_all(&dir);
    figures
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let retain_transactions = match args.iter().position(|arg| arg == "--retain-transactions") {
        Some(at) => {
            let value = args.get(at + 1).expect("--retain-transactions takes a number").clone();
            args.drain(at..at + 2);
            value.parse().expect("--retain-transactions takes a number")
        }
        None => DEFAULT_RETAIN_TRANSACTIONS,
    };
    let ledger = args.iter().any(|arg| arg == "--ledger");
    let keep_all = !args.iter().any(|arg| arg == "--without-keep-all");
    let mut checkpoints: Vec<usize> = args
        .iter()
        .filter(|arg| !["--ledger", "--without-keep-all"].contains(&arg.as_str()))
        .map(|arg| arg.parse().expect("checkpoints are numbers of executions"))
        .collect();
    if checkpoints.is_empty() {
        checkpoints = DEFAULT_CHECKPOINTS.to_vec();
    }
    checkpoints.sort_unstable();
    let mut setups = Vec::new();
    if let Ok(baseline) = std::env::var("LOCALNET_BASELINE_BIN") {
        setups.push(Setup {
            name: "baseline".into(),
            binary: Some(baseline),
            args: Vec::new(),
        });
    }
    if keep_all {
        setups.push(Setup {
            name: "keep-all".into(),
            binary: None,
            args: vec!["--retain-transactions".into(), "0".into()],
        });
    }
    setups.push(Setup {
        name: format!("retain-{retain_transactions}"),
        binary: None,
        args: vec!["--retain-transactions".into(), retain_transactions.to_string()],
    });
    let results: Vec<Vec<(usize, u64, f64)>> = std::thread::scope(|scope| {
        let running: Vec<_> = setups
            .iter()
            .map(|setup| scope.spawn(|| measure(setup, &checkpoints, ledger)))
            .collect();
        running
            .into_iter()
            .map(|handle| handle.join().expect("a node measured"))
            .collect()
    });

    println!(
        "localnet RSS in MiB ({} history; an execution is two transactions)",
        if ledger { "--ledger" } else { "temporary-file" },
    );
    let names: Vec<&str> = setups.iter().map(|setup| setup.name.as_str()).collect();
    let first = names[0];
    let mut header = format!("| executions | {} |", names.join(" | "));
    for name in &names[1..] {
        header.push_str(&format!(" {name} / {first} |"));
    }
    println!("{header}");
    println!("|{}", " --- |".repeat(1 + 2 * names.len() - 1));
    for (row, (executions, _, _)) in results[0].iter().enumerate() {
        let rss: Vec<u64> = results.iter().map(|figures| figures[row].1).collect();
        let mut line = format!("| {executions} |");
        for kib in &rss {
            line.push_str(&format!(" {:.1} |", *kib as f64 / 1024.0));
        }
        for kib in &rss[1..] {
            line.push_str(&format!(" {:.2} |", *kib as f64 / rss[0] as f64));
        }
        println!("{line}");
    }
    for (name, figures) in names.iter().zip(&results) {
        let (executions, _, seconds) = figures.last().expect("a checkpoint");
        println!("{name}: {executions} executions in {seconds:.0} s");
    }
}
