#!/usr/bin/env bash
# Every test of the project, after the full set-up: Rust unit/integration tests of the
# workspace, the Python tests (wasm host, native builds with parity against eager PyTorch),
# and the browser tests of the playground.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./scripts/setup.sh
export PATH="$ROOT/.venv/bin:$PATH" VIRTUAL_ENV="$ROOT/.venv" LIBTORCH_USE_PYTORCH=1
unset LIBTORCH_BYPASS_VERSION_CHECK
step() { printf '\n\033[1;34m== %s ==\033[0m\n' "$*"; }

step "cargo test (workspace)"
cargo test --workspace --release --quiet

step "pytest"
python -m pytest -q tests/

if [ -x scripts/test-browser.sh ]; then
  step "browser tests"
  scripts/test-browser.sh
fi
step "all tests passed"
