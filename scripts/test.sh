#!/bin/sh
# Runs every test suite (Rust tests, then the IDL check) and ends with one line totalling them:
# "tests: N passed, M failed". Exits non-zero if anything failed.
set -u
here=$(dirname "$0")
log=$(mktemp)
trap 'rm -f "$log" "$log.status"' EXIT

{ sh "$here/cargo.sh" test --workspace --locked 2>&1; echo $? >"$log.status"; } | tee "$log"
rust_status=$(cat "$log.status")

sh "$here/cargo.sh" run --quiet -p agent-market-idl --locked -- --check
idl_status=$?

awk -v idl="$idl_status" '
  /^test result:/ { passed += $4; failed += $6 }
  END {
    if (idl == 0) passed += 1; else failed += 1
    printf "tests: %d passed, %d failed\n", passed, failed
  }' "$log"

[ "$rust_status" -eq 0 ] && [ "$idl_status" -eq 0 ]
