#!/usr/bin/env bash
# Runs the analyzer's fuzz targets (analyzer-wasm/fuzz/, cargo fuzz + libFuzzer) for a while
# each. Usage:
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     # default: 300 s, every target
#
# Installs cargo-fuzz when missing. libFuzzer needs unstable rustc flags: on the stable
# toolchain they are enabled with RUSTC_BOOTSTRAP=1 (nothing else changes). The targets run
# without AddressSanitizer (`-s none`: the analyzer is safe Rust, and ASan costs a factor ~8
# in executions); pass FUZZ_SANITIZER=address to use it. Each target's working corpus grows
# in analyzer-wasm/fuzz/corpus/<target>/ (not committed); the committed seeds are the
# analyzer's own corpus (tests/corpus/) and analyzer-wasm/fuzz/seeds/<target>/. A crash is
# written to analyzer-wasm/fuzz/artifacts/<target>/ and stops the run with status 1: minimise
# it (`cargo fuzz tmin <target> <file>`), fix it, and add it as a regression case under
# analyzer-wasm/tests/fuzz_regressions/ (run by `cargo test -p torchlower-analyzer`).
set -euo pipefail
cd "$(dirname "$0")/../analyzer-wasm/fuzz"
seconds=${1:-300}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(analyze_bytes analyze_python emitted_rust)
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
sanitizer=${FUZZ_SANITIZER:-none}
# the analysis runs on the wasm build's 1 MiB stack; sanitizer frames are larger
[ "$sanitizer" = none ] || export TL_FUZZ_STACK_KB=${TL_FUZZ_STACK_KB:-8192}
status=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "seeds/$target"
  seeds=("seeds/$target")
  [ "$target" = analyze_bytes ] && seeds+=(../../tests/corpus/accepted ../../tests/corpus/rejected)
  printf '\033[1;34m[fuzz]\033[0m %s for %ss\n' "$target" "$seconds" >&2
  cargo fuzz run -s "$sanitizer" "$target" "corpus/$target" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=3072 -max_len=8192 -len_control=0 -timeout=10 \
    -print_final_stats=1 || status=1
done
exit $status
