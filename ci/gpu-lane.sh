#!/usr/bin/env bash
# The GPU lane: the whole fixture suite on a machine with an NVIDIA GPU.
#
# Usage: bash ci/gpu-lane.sh [fixtures-dir]
#
# 1. installs the tools (ci/setup-tools.sh: libNVVM and ptxas into tools/cuda,
#    bubblewrap) and builds gpu-harness in release (--locked);
# 2. prints the GPU and the driver (nvidia-smi when present) and exits 2, with
#    a message, when there is no GPU or no driver;
# 3. runs the suite ONCE on --device cuda, writing gpu-lane-report.json (in the
#    current folder) and printing the table of that same run, then what the
#    backend probed (GPU name, sm_XY, the driver's CUDA version).
#
# Exit status: 0 all passed, 1 a fixture failed, 2 no GPU/driver or no build.
# The backend assembles each fixture's PTX with the bundled ptxas for the GPU's
# sm_XY and loads the cubin, so the driver's PTX JIT (and its PTX .version
# limit) is used only when ptxas is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fixtures="${1:-$root/fixtures}"
report="$(pwd)/gpu-lane-report.json"

bash "$root/ci/setup-tools.sh"
(cd "$root" && cargo build --release --locked -p gpu-harness)
target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target_dir/release/gpu-harness"
if [[ ! -x "$bin" ]]; then
  echo "gpu-lane: the build left no gpu-harness binary at $bin" >&2
  exit 2
fi

no_gpu() {
  echo "gpu-lane: NO GPU: $1" >&2
  echo "gpu-lane: this lane needs an NVIDIA GPU (compute capability 9.0 or newer) and its driver; no kernel ran on a GPU" >&2
  exit 2
}

# The driver and the GPU, as the driver's own tool sees them.
if command -v nvidia-smi >/dev/null 2>&1; then
  if ! smi="$(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1)"; then
    no_gpu "nvidia-smi failed: $smi"
  fi
  echo "$smi"
  if [[ "$(printf '%s\n' "$smi" | wc -l)" -lt 2 ]]; then
    no_gpu "nvidia-smi lists no GPU"
  fi
elif ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so'; then
  no_gpu "neither nvidia-smi nor the driver library libcuda.so is installed"
else
  echo "gpu-lane: nvidia-smi is missing; relying on the backend's probe of libcuda.so" >&2
fi

export REQUIRE_LIBNVVM=1
status=0
# --device cuda never falls back to the virtual device; --report writes the JSON
# of the same run whose table is printed.
# --no-cache: this lane exists to run the kernels on the GPU.
"$bin" run --no-cache --device cuda --report "$report" "$fixtures" || status=$?
if [[ ! -f "$report" ]]; then
  echo "gpu-lane: the run wrote no report (exit status $status)" >&2
  exit 2
fi

# What the backend probed (from the device stages of this run), and a run where
# every device stage found no GPU is the missing-GPU case, not fixture failures.
probe="$(python3 - "$report" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
dev = [s for f in r["fixtures"] for s in f["stages"] if s["name"] == "device"]
ran = [s for s in dev if s["status"] == "ok"]
nogpu = [s for s in dev if s.get("kind") == "no-gpu"]
if ran:
    print("probed: " + ran[0]["detail"])
elif dev and len(nogpu) == len(dev):
    print("NO-GPU " + nogpu[0]["detail"].removeprefix("no GPU: "))
else:
    print("probed: no device stage passed")
PY
)"
if [[ "$probe" == NO-GPU* ]]; then
  no_gpu "${probe#NO-GPU }"
fi
echo "gpu-lane: $probe"
echo "gpu-lane: JSON report in $report"
exit "$status"
