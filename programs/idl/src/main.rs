//! Builds the Anchor IDL of `programs/agent_market` from the program's source and writes it to
//! `programs/agent_market/idl/agent_market.json`; with `--check`, compares instead.
//!
//! This is what `anchor idl build` does, without the Anchor CLI: `anchor-lang-idl`'s builder runs
//! `cargo test __anchor_private_print_idl --features idl-build` in the program directory and
//! assembles the JSON the generated tests print. The nested cargo inherits this process's
//! environment, so `CARGO_TARGET_DIR` (the shared build cache) is honoured, and it compiles with
//! the same flags as an ordinary build so that it reuses the dependencies already built there.
//!
//! Usage:
//!   cargo run -p agent-market-idl              regenerate the committed IDL
//!   cargo run -p agent-market-idl -- --check   fail if the committed IDL is stale

use std::{
    env, fs,
    path::{Path, PathBuf},
    process::ExitCode,
    time::Instant,
};

use anchor_lang_idl::build::IdlBuilder;
use anyhow::{bail, Context, Result};

/// Same settings as `[features]` in Anchor.toml (`resolution = true`, `skip-lint = false`).
const RESOLUTION: bool = true;
const SKIP_LINT: bool = false;

const USAGE: &str = "\
usage: agent-market-idl [--check]

Builds the IDL of programs/agent_market from source and writes it to
programs/agent_market/idl/agent_market.json (pretty JSON).

  --check   build the IDL and compare it with the committed file instead of writing;
            exits 1 when they differ
  -h, --help

Environment: CARGO_TARGET_DIR is passed to the nested `cargo test`; ANCHOR_LOG=1 prints
that test's output.";

fn main() -> ExitCode {
    let mut check = false;
    for arg in env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("agent-market-idl: unknown argument `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("agent-market-idl: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Returns `Ok(false)` when `--check` found a difference.
fn run(check: bool) -> Result<bool> {
    let workspace = workspace_root()?;
    let program_dir = workspace.join("programs/agent_market");
    let idl_path = program_dir.join("idl/agent_market.json");

    prepare_cargo_env();
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    eprintln!(
        "agent-market-idl: building the IDL of {} (target dir {})",
        program_dir.display(),
        target_dir.display()
    );

    let started = Instant::now();
    let mut cargo_args = vec!["--lib".to_string()];
    if check {
        cargo_args.push("--locked".to_string());
    }
    let idl = IdlBuilder::new()
        .program_path(program_dir.clone())
        .resolution(RESOLUTION)
        .skip_lint(SKIP_LINT)
        .cargo_args(cargo_args)
        .build()
        .map_err(|err| {
            // The builder's own message points at the Anchor CLI, which is not used here.
            if err.to_string().starts_with("Building IDL failed") {
                anyhow::anyhow!(
                    "`cargo test __anchor_private_print_idl --features idl-build` failed in {} \
                     (compile errors, if any, are above; rerun with ANCHOR_LOG=1 to see the \
                     test output)",
                    program_dir.display()
                )
            } else {
                err
            }
        })?;
    let mut fresh = serde_json::to_string_pretty(&idl).context("serializing the IDL")?;
    fresh.push('\n');
    eprintln!(
        "agent-market-idl: built in {:.1}s: {} instructions, {} accounts, {} events, {} errors, \
         {} types, {} constants",
        started.elapsed().as_secs_f64(),
        idl.instructions.len(),
        idl.accounts.len(),
        idl.events.len(),
        idl.errors.len(),
        idl.types.len(),
        idl.constants.len(),
    );

    let shown = idl_path.strip_prefix(&workspace).unwrap_or(&idl_path);
    if !check {
        if fs::read_to_string(&idl_path).ok().as_deref() == Some(fresh.as_str()) {
            eprintln!("agent-market-idl: {} is unchanged", shown.display());
        } else {
            fs::create_dir_all(idl_path.parent().expect("idl path has a parent"))?;
            fs::write(&idl_path, &fresh).with_context(|| format!("writing {}", idl_path.display()))?;
            eprintln!("agent-market-idl: wrote {}", shown.display());
        }
        return Ok(true);
    }

    let committed = match fs::read_to_string(&idl_path) {
        Ok(text) => text,
        Err(err) => bail!(
            "cannot read {}: {err}; generate it with `npm run idl`",
            idl_path.display()
        ),
    };
    if committed == fresh {
        eprintln!("agent-market-idl: {} is up to date", shown.display());
        return Ok(true);
    }

    let fresh_path = target_dir.join("agent_market.idl.fresh.json");
    let saved = fs::create_dir_all(&target_dir)
        .and_then(|()| fs::write(&fresh_path, &fresh))
        .is_ok();
    eprintln!(
        "agent-market-idl: {} is out of date: it differs from the IDL built from the program \
         source.",
        shown.display()
    );
    eprintln!("{}", first_difference(&committed, &fresh));
    if saved {
        eprintln!(
            "  see all of it: diff -u {} {}",
            idl_path.display(),
            fresh_path.display()
        );
    }
    eprintln!("  fix: run `npm run idl` (or `cargo run -p agent-market-idl`) and commit the result");
    Ok(false)
}

/// The workspace root: the nearest directory, from the current one up, holding `Anchor.toml`.
/// Found at run time because clones at different paths share one build cache, so a path
/// compiled into the binary could name another clone.
fn workspace_root() -> Result<PathBuf> {
    let current = std::env::current_dir().context("cannot read the current directory")?;
    current
        .ancestors()
        .find(|dir| dir.join("Anchor.toml").is_file() && dir.join("programs/agent_market/Cargo.toml").is_file())
        .map(Path::to_path_buf)
        .with_context(|| {
            format!(
                "no Agent Market workspace (Anchor.toml) at or above {}",
                current.display()
            )
        })
}

/// Make the nested `cargo test` use the same toolchain as this process and avoid a bug in
/// `anchor-lang-idl` 0.1.x: when `RUSTUP_TOOLCHAIN` is set it passes the literal argument
/// `+{toolchain}` to cargo (and may try to `rustup toolchain install` it). Instead, unset it and
/// put the directory of the cargo that ran us (`$CARGO`, set by `cargo run`) first on `PATH`.
///
/// Also keep the compiler flags of an ordinary build: the builder sets `RUSTFLAGS=-A warnings`,
/// and different flags make cargo compile a second copy of every dependency (the whole
/// Solana/LiteSVM tree the program's dev-dependencies pull in). Cargo reads
/// `CARGO_ENCODED_RUSTFLAGS` before `RUSTFLAGS`, so setting it to the caller's flags (possibly
/// none) lets the IDL build reuse what `cargo build`/`cargo test` already compiled.
///
/// Runs at the start of `main`, before any other thread exists.
fn prepare_cargo_env() {
    env::remove_var("RUSTUP_TOOLCHAIN");
    if env::var_os("CARGO_ENCODED_RUSTFLAGS").is_none() {
        let flags = env::var("RUSTFLAGS").unwrap_or_default();
        let encoded = flags.split_whitespace().collect::<Vec<_>>().join("\x1f");
        env::set_var("CARGO_ENCODED_RUSTFLAGS", encoded);
    }
    let Some(cargo) = env::var_os("CARGO").map(PathBuf::from) else {
        return;
    };
    let Some(bin_dir) = cargo.parent().filter(|dir| dir.is_absolute()) else {
        return;
    };
    let mut paths = vec![bin_dir.to_path_buf()];
    if let Some(path) = env::var_os("PATH") {
        paths.extend(env::split_paths(&path));
    }
    if let Ok(joined) = env::join_paths(paths) {
        env::set_var("PATH", joined);
    }
}

/// A short hint: the first line that differs, with its number.
fn first_difference(committed: &str, fresh: &str) -> String {
    let mut committed_lines = committed.lines();
    let mut fresh_lines = fresh.lines();
    let mut line = 1;
    loop {
        match (committed_lines.next(), fresh_lines.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (None, None) => return "  the files differ only in line endings or the final newline".into(),
            (a, b) => {
                return format!(
                    "  first difference at line {line}:\n    committed: {}\n    built:     {}",
                    a.unwrap_or("<end of file>"),
                    b.unwrap_or("<end of file>")
                )
            }
        }
    }
}
