#!/usr/bin/env bash
# Builds the torchlower wheel into dist/: the analyzer wasm, the backend sources and the
# playground go inside it (scripts/setup.sh builds and copies all three first), then
# `maturin build --release`. Prints the wheel's path on its last line.
#
#   scripts/build-wheel.sh            # dist/torchlower-<version>-cp311-...whl
#   pip install dist/torchlower-*.whl # next to torch==2.13.0, in any environment
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1;34m[wheel]\033[0m %s\n' "$*" >&2; }

[ "${TORCHLOWER_SKIP_SETUP:-0}" = 1 ] || ./scripts/setup.sh >&2
for shipped in analyzer.wasm backend_src/Cargo.toml web/index.html; do
  [ -e "host-py/python/torchlower/$shipped" ] || { echo "missing host-py/python/torchlower/$shipped (scripts/setup.sh builds it)" >&2; exit 1; }
done
log "maturin build --release"
rm -rf "$ROOT/dist"; mkdir -p "$ROOT/dist"
(cd host-py && "$ROOT/.venv/bin/maturin" build --release --quiet --out "$ROOT/dist" >&2)
wheel=$(ls "$ROOT"/dist/torchlower-*.whl)
log "built $wheel ($(du -h "$wheel" | cut -f1))"
echo "$wheel"
