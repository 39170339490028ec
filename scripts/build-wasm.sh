#!/usr/bin/env bash
# Builds the analyzer (analyzer-wasm/) for wasm32-unknown-unknown in release mode (cargo
# profile `wasm-release`), into its own target dir `target/wasm` (the wasm build may use a
# different rustc than the host builds, so the two never share artifacts).
#
# Outputs:
#   host-py/python/torchlower/analyzer.wasm   the plain C-style ABI module (analyzer-wasm/ABI.md)
#                                             for wasmtime hosts; checked to import nothing
#   web-playground/public/pkg/                wasm-bindgen `--target web` output of the
#                                             `--features web` build, for the playground:
#                                             torchlower_analyzer.js, torchlower_analyzer_bg.wasm
#                                             and their .d.ts files
#
# Toolchain: a rustup toolchain with the wasm32-unknown-unknown target when one is installed;
# otherwise Debian's rustc-web/cargo-web/rust-web-src (Rust 1.96 with its library source)
# building std itself (-Zbuild-std, enabled by RUSTC_BOOTSTRAP) and linking with lld-19's
# wasm-ld; the packages are installed when missing. wasm-bindgen-cli is installed (cargo
# install, ~3 minutes, once) at exactly the version the analyzer's wasm-bindgen dependency is
# pinned to.
#
# Idempotent and quick when nothing changed: cargo decides what to rebuild, and the copy and
# wasm-bindgen steps run only when their input is newer than their output.
# Set TORCHLOWER_WASM_SKIP_WEB=1 to build only the wasmtime module.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1;34m[build-wasm]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[build-wasm]\033[0m %s\n' "$*" >&2; exit 1; }

TARGET=wasm32-unknown-unknown
PROFILE=wasm-release
TARGET_DIR=$ROOT/target/wasm
PLAIN_OUT=$ROOT/host-py/python/torchlower/analyzer.wasm
WEB_OUT=$ROOT/web-playground/public/pkg
CRATE=torchlower-analyzer
ARTIFACT=torchlower_analyzer.wasm
# wasm-bindgen-cli must match the crate's `wasm-bindgen = "=X"` exactly.
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen *= *{[^}]*version *= *"=\([0-9.]*\)".*/\1/p' \
  analyzer-wasm/Cargo.toml)
[ -n "$WASM_BINDGEN_VERSION" ] || die "analyzer-wasm/Cargo.toml must pin wasm-bindgen with \"=X.Y.Z\""

# --- choose the toolchain ----------------------------------------------------------------------
cargo_cmd=()
if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  log "toolchain: rustup ($(rustc --version)) with the $TARGET target"
  cargo_cmd=(cargo)
else
  need=()
  for p in rustc-web cargo-web rust-web-src lld-19; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if ((${#need[@]})); then
    log "installing Debian packages: ${need[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need[@]}"
  fi
  log "toolchain: Debian $(/usr/bin/rustc --version) with -Zbuild-std"
  export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=/usr/lib/llvm-19/bin/wasm-ld
  cargo_cmd=(/usr/bin/cargo -Zbuild-std=std,panic_abort)
fi
# Keep rustup's shims and the host RUSTFLAGS out of the wasm build.
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS

# build FEATURES... -> path of the built wasm, copied aside so the other feature set's build
# (same artifact name) cannot overwrite it.
build() {
  local name=$1; shift
  "${cargo_cmd[@]}" build --quiet -p "$CRATE" --lib --target "$TARGET" --profile "$PROFILE" \
    --target-dir "$TARGET_DIR" "$@" >&2
  local built=$TARGET_DIR/$TARGET/$PROFILE/$ARTIFACT
  local kept=$TARGET_DIR/$name.wasm
  if [ ! -f "$kept" ] || ! cmp -s "$built" "$kept"; then cp "$built" "$kept"; fi
  printf '%s\n' "$kept"
}

# Lists a wasm module's imports (section 2) without any tool beyond Python: the plain module
# must import nothing, or wasmtime could not instantiate it with an empty import list.
wasm_imports() {
  python3 - "$1" <<'EOF'
import sys

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\0asm\x01\0\0\0", "not a wasm module"


def uleb(pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def name(pos):
    length, pos = uleb(pos)
    return data[pos:pos + length].decode(), pos + length


pos = 8
while pos < len(data):
    section_id = data[pos]
    size, body = uleb(pos + 1)
    if section_id == 2:  # the import section: its count and the first import's name
        count, p = uleb(body)
        if count:
            module, p = name(p)
            field, p = name(p)
            print(f"{count} import(s), the first: {module}::{field}")
    pos = body + size
EOF
}

# --- (a) the plain ABI module for wasmtime -----------------------------------------------------
log "building the analyzer wasm (profile $PROFILE)"
plain=$(build plain)
imports=$(wasm_imports "$plain")
[ -z "$imports" ] || die "$plain imports host functions, wasmtime hosts cannot provide them:
$imports"
if [ ! -f "$PLAIN_OUT" ] || ! cmp -s "$plain" "$PLAIN_OUT"; then
  cp "$plain" "$PLAIN_OUT"
  log "wrote ${PLAIN_OUT#$ROOT/} ($(stat -c %s "$PLAIN_OUT") bytes)"
fi

[ "${TORCHLOWER_WASM_SKIP_WEB:-0}" = 1 ] && exit 0

# --- (b) the wasm-bindgen build for the playground ---------------------------------------------
installed_bindgen=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$installed_bindgen" != "$WASM_BINDGEN_VERSION" ]; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (a few minutes, once)"
  # --locked reproduces the CLI's own lock file; if a crate in it was yanked since, resolve
  # afresh within the CLI's declared version ranges instead.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked --quiet \
    || cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --quiet
fi
log "building the analyzer wasm with --features web"
web=$(build web --features web)
stamp=$WEB_OUT/.built-from
if [ ! -f "$stamp" ] || [ "$web" -nt "$stamp" ] || [ "$(cat "$stamp")" != "$(sha256sum < "$web")" ]; then
  mkdir -p "$WEB_OUT"
  wasm-bindgen --target web --out-name torchlower_analyzer --out-dir "$WEB_OUT" "$web"
  sha256sum < "$web" > "$stamp"
  log "wrote ${WEB_OUT#$ROOT/}/ ($(stat -c %s "$WEB_OUT/torchlower_analyzer_bg.wasm") bytes wasm)"
fi
