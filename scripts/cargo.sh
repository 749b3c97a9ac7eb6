#!/bin/sh
# Runs cargo with the project's shared build cache: CARGO_TARGET_DIR defaults to
# $HOME/.cache/agent-market/target when unset. Usage: sh scripts/cargo.sh <cargo args>
set -eu
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  . "$HOME/.cargo/env"
fi
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
  CARGO_TARGET_DIR="$HOME/.cache/agent-market/target"
fi
export CARGO_TARGET_DIR
exec cargo "$@"
