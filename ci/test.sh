#!/usr/bin/env bash
# The README's test command: installs the tools it needs, then runs every test.
# Under this script a missing libNVVM is a failure, not a skip.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash ci/setup-tools.sh
export REQUIRE_LIBNVVM=1
# The sandbox is part of the oracle: missing, it fails the run.
export REQUIRE_SANDBOX=1
# NVRTC (CUDA C++, the reference for code quality) likewise.
export REQUIRE_NVRTC=1
# The memory model's Dat3M PTX corpus is read in place from ../shared. Where
# that folder exists, a missing corpus is a failure; elsewhere the test says
# loudly that it did not run.
if [ -d "$root/../shared" ]; then
    export REQUIRE_LITMUS_CORPUS=1
else
    echo "WARNING: $root/../shared is absent: the PTX litmus agreement test will not run" >&2
fi
# Each test binary builds the fixtures again: rustc's MIR, libNVVM's PTX and
# the host programs are kept for this run only (crates/build-cache), so the
# first build of each input still runs its tool, and a failure is never kept.
export BUILD_OUTPUT_CACHE="$root/target/build-output-cache"
rm -rf "$BUILD_OUTPUT_CACHE"
# A clean clone builds once: incremental state would only add ~2 GB of disk.
export CARGO_INCREMENTAL=0
cargo test --workspace --locked "$@"
