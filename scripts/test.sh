#!/bin/sh
# Runs every test suite (Rust tests, the IDL check, then the npm workspaces' builds and mocha
# tests, and the relayer's execution tests again on a devnet-like localnet) and ends with one
# line totalling them: "tests: N passed, M failed". Exits non-zero if anything failed.
set -u
here=$(dirname "$0")
log=$(mktemp)
npm_log=$(mktemp)
TEST_SERVICE_PIDS=""
trap 'rm -f "$log" "$log.status" "$npm_log" "$npm_log.status"; [ -z "$TEST_SERVICE_PIDS" ] || kill $TEST_SERVICE_PIDS 2>/dev/null' EXIT

{ sh "$here/cargo.sh" test --workspace --locked --no-fail-fast 2>&1; echo $? >"$log.status"; } | tee "$log"
rust_status=$(cat "$log.status")

sh "$here/cargo.sh" run --quiet -p agent-market-idl --locked -- --check
idl_status=$?

# npm runs from the repository root, where the workspaces are declared.
node "$here/build-ts.mjs"
npm_build_status=$?

# PostgreSQL and Redis for the suites below: the machine's own when they answer, else started here
# (the embedded PostgreSQL npm start runs; redis-server when installed) and stopped on exit.
services=$(node "$here/test-services.mjs") || exit 1
eval "$services"

# --ignore-scripts skips the workspaces' pretest steps (not their test scripts): the builds above
# already made the packages and, with `cargo test --workspace`, the localnet binary that
# @agent-market/tests spawns; its pretest `cargo build -p localnet` would relink it with other
# features for nothing.
{ (cd "$here/.." && npm test --workspaces --if-present --ignore-scripts) 2>&1; echo $? >"$npm_log.status"; } | tee "$npm_log"
npm_test_status=$(cat "$npm_log.status")

# The relayer's execution tests once more against a devnet-like localnet (docs/localnet.md):
# transactions processed at the next slot, some lost, RPC latency. Slots of 100 ms rather than a
# cluster's 400 keep this run to about three minutes: the cases that wait for a blockhash to
# expire wait 15 s instead of 60. The relayer's own waits are in milliseconds, not slots, so they
# are tried against a chain 4 times as fast; bench/ measures the 400 ms profile.
# Each file in a mocha process of its own: run together in one, the faults file's termination of
# database connections once raised an uncaught error in that process.
for file in relayer-execute.test.ts relayer-faults.test.ts; do
  { (cd "$here/../tests" && LOCALNET_PROFILE=devnet-like LOCALNET_SLOT_MS=100 npx mocha --no-config --import=tsx --reporter spec --timeout 60000 --exit "$file") 2>&1; echo $? >"$npm_log.status"; } | tee -a "$npm_log"
  [ "$(cat "$npm_log.status")" -eq 0 ] || npm_test_status=1
done

# What failed, once more at the end, where the tail of a CI log shows it: cargo's "test … FAILED"
# lines, and the numbered titles of mocha's failures (a test, or a hook with the test it served),
# each with the first lines of its error (a CI log's excerpt may hold only this tail).
grep -E '^test .* FAILED$' "$log" | sed 's/^/failed (rust): /'
awk '/^ *[0-9]+ failing/ { listing = 1; shown = 8; next }
  listing && /^ *[0-9]+ passing/ { listing = 0 }
  listing && /^  [0-9]+\) / { title = $0; getline; sub(/^ +/, "", title); sub(/^ +/, ""); print "failed (mocha): " title " " $0; shown = 0; next }
  listing && shown < 8 && $0 !~ /^ *at / && $0 !~ /^ *$/ && $0 !~ /"level":[0-9]/ { shown += 1; print "    " substr($0, 1, 400) }' "$npm_log"
[ "$idl_status" -eq 0 ] || echo "failed: the IDL check"
[ "$npm_build_status" -eq 0 ] || echo "failed: node scripts/build-ts.mjs (the workspaces' builds)"
# npm names each workspace whose test script exited non-zero, a crash after the tests included.
# What that script printed last comes first, so that a crash without a failing test shows its cause
# in the tail of the log.
grep -nE '^npm (error|ERR!) workspace ' "$npm_log" | while IFS=: read -r line _; do
  first=$((line > 30 ? line - 30 : 1))
  echo "--- the last lines before npm's report of a failed workspace (line $line):"
  sed -n "${first},$((line + 3))p" "$npm_log" | grep -vE '"level":[0-9]+' | tail -n 20
done
grep -E '^npm (error|ERR!) workspace ' "$npm_log" | sort -u | sed 's/^npm [a-zER!]* workspace /failed (workspace): /'

# cargo: "test result: ok. N passed; M failed; ..."; mocha's spec reporter: "N passing", "M failing".
# A failed step that reported no failing test (the IDL check, a build, a type check) counts as one.
awk -v idl="$idl_status" -v npm_build="$npm_build_status" -v npm_test="$npm_test_status" '
  FILENAME == ARGV[1] && /^test result:/ { passed += $4; failed += $6 }
  FILENAME == ARGV[2] && /^ *[0-9]+ passing/ { passed += $1 }
  FILENAME == ARGV[2] && /^ *[0-9]+ failing/ { failed += $1; mocha_failed += $1 }
  END {
    if (idl == 0) passed += 1; else failed += 1
    if (npm_build != 0) failed += 1
    if (npm_test != 0 && mocha_failed == 0) failed += 1
    printf "tests: %d passed, %d failed\n", passed, failed
  }' "$log" "$npm_log"

[ "$rust_status" -eq 0 ] && [ "$idl_status" -eq 0 ] && [ "$npm_build_status" -eq 0 ] && [ "$npm_test_status" -eq 0 ]
