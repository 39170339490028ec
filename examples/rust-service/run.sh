#!/usr/bin/env bash
# Exports ../rust-service/model.py with torchlower, builds the service in release mode and runs
# serve_check.py: the service's answers against eager PyTorch, and its latency per request next
# to the same model served by Python. Run from a checkout after scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
export PATH="$ROOT/.venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1
torchlower export model.py --crate model-rs
(cd server && cargo build --release)
python serve_check.py server/target/release/classify-service "$@"
