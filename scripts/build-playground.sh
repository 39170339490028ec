#!/usr/bin/env bash
# Builds the web playground: installs its npm dependencies from the committed lockfile (skipped
# when node_modules already matches it), bundles the page with Vite into web-playground/dist/,
# and copies the result into the Python package (host-py/python/torchlower/web/) so that
# `torchlower playground` can serve it from an installed wheel.
#
# Needs the analyzer's wasm-bindgen output (web-playground/public/pkg/, written by
# scripts/build-wasm.sh) and Node >= 20.19 with npm.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
APP=$ROOT/web-playground
PKG=$APP/public/pkg
WEB_IN_PACKAGE=$ROOT/host-py/python/torchlower/web
log() { printf '\033[1;34m[playground]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[playground] error:\033[0m %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || die "node and npm are required (Node >= 20.19)"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || die "Node $(node --version) is too old for Vite 7: need >= 20.19"

[ -f "$PKG/torchlower_analyzer.js" ] && [ -f "$PKG/torchlower_analyzer_bg.wasm" ] \
  || die "the analyzer's wasm-bindgen build is missing in $PKG: run scripts/build-wasm.sh first"

# npm ci wipes and reinstalls node_modules; do it only when the lockfile changed since the
# last install (a stamp with the lockfile's hash lives inside node_modules).
npm_ci_if_needed() {
  local dir=$1 stamp want
  stamp=$dir/node_modules/.torchlower-lock.sha256
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "npm ci in ${dir#"$ROOT"/}"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
}
npm_ci_if_needed "$APP"

log "vite build -> web-playground/dist"
(cd "$APP" && npx --no-install vite build --logLevel warn)

# The page needs only the pkg's .js and .wasm; its type declarations and build stamp stay out.
find "$APP/dist/pkg" \( -name '*.d.ts' -o -name '.built-from' \) -delete

rm -rf "$WEB_IN_PACKAGE"
cp -r "$APP/dist" "$WEB_IN_PACKAGE"
log "copied to host-py/python/torchlower/web ($(du -sh "$WEB_IN_PACKAGE" | cut -f1))"
