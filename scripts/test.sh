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

# One package at a time, not --workspace: each package then resolves its dependencies'
# features exactly as its own build does, so wasmtime (host-py) is reused from the
# `maturin develop --release` of the set-up instead of being compiled a second time.
for pkg in torchlower-ops torchlower-analyzer torchlower-backend torchlower-host; do
  step "cargo test -p $pkg"
  cargo test -p "$pkg" --release --quiet
done

step "cargo test -p torchlower-backend --no-default-features (the backend without Python, for export)"
cargo test -p torchlower-backend --release --quiet --no-default-features

step "GPU check: its own tests, and the checker that compares its dumps with eager CUDA"
CARGO_TARGET_DIR="$ROOT/target/gpu-check" cargo test --release --quiet --manifest-path native-backend/gpu-check/Cargo.toml
python scripts/gpu_eager_compare.py --self-test

step "fuzz smoke run: each analyzer fuzz target for 20 s (the long runs: docs/fuzzing.md)"
scripts/fuzz.sh 20

step "pytest"
python -m pytest -q tests/

if [ -x scripts/test-browser.sh ]; then
  step "browser tests"
  scripts/test-browser.sh
fi
step "all tests passed"
