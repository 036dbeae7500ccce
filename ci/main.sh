#!/usr/bin/env bash
# The README's main job: installs the tools it needs, then runs the oracle over
# every fixture (import, lower, libNVVM, shape checks, host run, device run,
# comparison). Extra arguments go to `gpu-harness run` (e.g. `--json`,
# `--device auto`, fixture folders).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash ci/setup-tools.sh
export REQUIRE_LIBNVVM=1
# The sandbox is part of the oracle: missing, it fails the run.
export REQUIRE_SANDBOX=1
cargo build --release --locked -p gpu-harness --bin gpu-harness
exec target/release/gpu-harness run "$@"
