#!/usr/bin/env bash
# The GPU check of torchlower's CUDA path (see docs/gpu.md).
#
#   scripts/gpu-check.sh build     build the check binary into artifacts/gpu-check/ (here,
#                                  with cargo; needs no GPU, no CUDA toolkit, no PyTorch)
#   scripts/gpu-check.sh [REPORT]  run the prebuilt binary on a GPU machine (no internet, no
#                                  cargo needed): driver and device, every kernel against its
#                                  host model, launch overhead, matmul throughput; writes REPORT
#                                  (default $OUT/gpu-report.json, or ./gpu-report.json without
#                                  $OUT). Where python3 has a CUDA PyTorch, every case is also
#                                  compared with eager PyTorch on the same GPU
#                                  (scripts/gpu_eager_compare.py; REPORT's folder gets
#                                  eager-compare.json). Exit 0 all matched, 1 some case differed
#                                  (from its model or from eager), 2 no usable driver/GPU, 3 no
#                                  binary.
set -euo pipefail
cd "$(dirname "$0")/.."
ARTIFACT=artifacts/gpu-check/torchlower-gpu-check

if [ "${1:-}" = build ]; then
  CARGO_TARGET_DIR="$PWD/target/gpu-check" cargo build --release --quiet \
    --manifest-path native-backend/gpu-check/Cargo.toml
  mkdir -p artifacts/gpu-check
  cp target/gpu-check/release/torchlower-gpu-check "$ARTIFACT"
  echo "built $ARTIFACT ($(du -h "$ARTIFACT" | cut -f1)); carry artifacts/gpu-check to the GPU machine"
  exit 0
fi

if [ ! -x "$ARTIFACT" ]; then
  echo "no $ARTIFACT: run 'scripts/gpu-check.sh build' first (on a machine with cargo)" >&2
  exit 3
fi
REPORT="${1:-${OUT:-.}/gpu-report.json}"
mkdir -p "$(dirname "$REPORT")"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
# The check itself takes well under a minute on a recent GPU; the limit keeps a hung
# driver from eating the whole device lease.
status=0
DUMP="$(mktemp -d)"
timeout 170 "$ARTIFACT" "$REPORT" "$DUMP" || status=$?
echo "gpu-check exit status $status; report: $REPORT"
if [ "$status" -ne 2 ] && [ -f "$DUMP/manifest.json" ]; then
  eager=0
  timeout 170 python3 scripts/gpu_eager_compare.py "$DUMP" "$(dirname "$REPORT")/eager-compare.json" || eager=$?
  echo "eager comparison exit status $eager (2: no CUDA PyTorch here, not run)"
  if [ "$eager" -eq 1 ] && [ "$status" -eq 0 ]; then status=1; fi
fi
rm -rf "$DUMP"
exit "$status"
