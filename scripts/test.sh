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

# --- [perf/fused] test binaries that link libtorch (tch) find it at run time -----------------
TORCH_LIB="$(python -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "cargo test (workspace)"
cargo test --workspace --release --quiet

step "pytest"
python -m pytest -q tests/

if [ -x scripts/test-browser.sh ]; then
  step "browser tests"
  scripts/test-browser.sh
fi
step "all tests passed"
