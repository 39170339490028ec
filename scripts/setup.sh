#!/usr/bin/env bash
# One-shot, idempotent set-up of everything torchlower needs on a fresh Debian machine:
# system packages, the Python venv (.venv) with torch, the analyzer wasm, the torchlower
# package (maturin, editable) and the web playground build. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }

# --- system packages (Debian): wasm toolchain route, lld, chromium for browser tests ----------
need_pkgs=()
for p in rustc-web cargo-web rust-web-src lld-19 chromium; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  log "installing Debian packages: ${need_pkgs[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_pkgs[@]}"
fi

# --- Python venv ------------------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  python3.11 -m venv .venv 2>/dev/null || python3 -m venv .venv
fi
PY=$ROOT/.venv/bin/python
if ! "$PY" -c 'import torch, maturin, pytest, jsonschema, numpy, matplotlib, mypy, pre_commit, nbclient, nbformat, ipykernel, safetensors' 2>/dev/null \
   || [ "$("$PY" -c 'import torch; print(torch.__version__.split("+")[0])')" != "2.13.0" ]; then
  log "installing Python packages (torch 2.13.0 takes a few minutes)"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q -r scripts/requirements-dev.txt
fi
export PATH="$ROOT/.venv/bin:$PATH"
export VIRTUAL_ENV="$ROOT/.venv"
export LIBTORCH_USE_PYTORCH=1
unset LIBTORCH_BYPASS_VERSION_CHECK

# --- analyzer wasm ----------------------------------------------------------------------------
if [ -x scripts/build-wasm.sh ]; then
  scripts/build-wasm.sh
fi

# --- backend sources shipped inside the package (the native build compiles them) ---------------
dst=host-py/python/torchlower/backend_src
rm -rf "$dst"; mkdir -p "$dst"
cp -r native-backend/Cargo.toml native-backend/build.rs native-backend/src "$dst"/
mkdir -p "$dst/ops"; cp -r native-backend/ops/Cargo.toml native-backend/ops/src "$dst/ops"/
[ -f native-backend/API.md ] && cp native-backend/API.md "$dst"/

# --- benchmark cells shipped inside the package (`torchlower bench` outside a checkout) --------
bench_dst=host-py/python/torchlower/benchmarks
rm -rf "$bench_dst"; mkdir -p "$bench_dst"
cp benchmarks/cells.py benchmarks/sweep.py "$bench_dst"/

# --- the torchlower package ---------------------------------------------------------------------
if [ -f host-py/src/lib.rs ]; then
  log "building the torchlower package (maturin develop --release)"
  (cd host-py && "$ROOT/.venv/bin/maturin" develop --release --quiet 2>&1 | grep -v '^\s*$' | tail -n 5 >&2) 
fi

# --- web playground ---------------------------------------------------------------------------
if [ -x scripts/build-playground.sh ]; then
  scripts/build-playground.sh
fi
# --- the shared native backend (tch and the backend compile once per machine) -----------------
if [ -f host-py/python/torchlower/_cli_warmup.py ]; then
  log "warming up the native build (the first time compiles tch and the backend: minutes)"
  "$PY" -m torchlower.cli warmup
fi
log "ready: $(.venv/bin/python -c 'import torch; print("torch", torch.__version__)')"
