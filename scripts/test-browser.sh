#!/usr/bin/env bash
# Browser tests of the web playground: headless Chromium (/usr/bin/chromium) driven by
# playwright-core under node's built-in test runner, against the built page served on a
# random localhost port. Screenshots and timings land in artifacts/browser/. Exits non-zero
# on any failed check.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TESTS=$ROOT/tests/browser
log() { printf '\033[1;34m[browser-tests]\033[0m %s\n' "$*" >&2; }

[ -x /usr/bin/chromium ] || { echo "[browser-tests] /usr/bin/chromium is missing (scripts/setup.sh installs it)" >&2; exit 1; }
[ -f web-playground/dist/index.html ] || scripts/build-playground.sh

# Install playwright-core from the lockfile unless node_modules already matches it.
stamp=$TESTS/node_modules/.torchlower-lock.sha256
want=$(sha256sum "$TESTS/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "npm ci in tests/browser"
  (cd "$TESTS" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

mkdir -p artifacts/browser
rm -f artifacts/browser/perf.json
status=0
node --test --test-concurrency=1 --test-reporter=spec "$TESTS"/*.test.mjs || status=$?
if [ -f artifacts/browser/perf.json ]; then
  log "timings (headless Chromium), from artifacts/browser/perf.json:"
  node -e '
    const p = require(process.argv[1]);
    console.log(`  page load to first analysis rendered: median ${p.load.medianMs.toFixed(0)} ms over ${p.load.samples.length} loads`);
    for (const e of p.keystrokes)
      console.log(`  ${e.example.padEnd(22)} ${String(e.chars).padStart(5)} chars  analyze median ${e.analyzeMedianMs.toFixed(2)} ms  max ${e.analyzeMaxMs.toFixed(2)} ms  render median ${e.renderMedianMs.toFixed(2)} ms  (${e.keystrokes} keystrokes)`);
  ' "$ROOT/artifacts/browser/perf.json"
fi
exit $status
