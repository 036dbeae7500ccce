#!/usr/bin/env bash
# The README's test command: installs the tools it needs, then runs every test.
# Under this script a missing libNVVM is a failure, not a skip.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash ci/setup-tools.sh
export REQUIRE_LIBNVVM=1
cargo test --workspace --locked "$@"
