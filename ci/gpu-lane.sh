#!/usr/bin/env bash
# The GPU lane: runs the whole fixture suite on a machine with an NVIDIA GPU,
# from a `gpu-harness` binary built elsewhere (no Rust toolchain needed here,
# but `rustc` is, for the host runs that give the expected values).
#
# Usage: ci/gpu-lane.sh [path/to/gpu-harness] [fixtures-dir]
# libNVVM is found through LIBNVVM_PATH, CUDA_HOME or tools/cuda (run
# ci/setup-tools.sh once, or point LIBNVVM_PATH at the wheel's libnvvm.so).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release/gpu-harness}"
fixtures="${2:-$root/fixtures}"
if [[ ! -x "$bin" ]]; then
  echo "gpu-lane: no gpu-harness binary at $bin (build it with: cargo build --release -p gpu-harness)" >&2
  exit 2
fi
export REQUIRE_LIBNVVM=1
# --device cuda refuses to fall back: on a GPU machine a missing driver is a failure.
"$bin" run --device cuda --json "$fixtures" > gpu-lane-report.json || status=$?
"$bin" run --device cuda "$fixtures" || status=$?
echo "gpu-lane: JSON report in $(pwd)/gpu-lane-report.json"
exit "${status:-0}"
