#!/usr/bin/env bash
# The main job on the bundled example, from a fresh machine: set-up, then analyze → show
# claims → build → run natively with a parity check and a timing against eager PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./scripts/setup.sh
export PATH="$ROOT/.venv/bin:$PATH" VIRTUAL_ENV="$ROOT/.venv" LIBTORCH_USE_PYTORCH=1
unset LIBTORCH_BYPASS_VERSION_CHECK
torchlower check examples/model.py || true
exec torchlower run examples/model.py "$@"
