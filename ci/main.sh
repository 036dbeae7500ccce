#!/usr/bin/env bash
# The README's main job: installs the tools it needs, then imports every fixture.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash ci/setup-tools.sh
export REQUIRE_LIBNVVM=1
cargo build --release --locked -p mir-import --bin mir-dump
status=0
for kernel in fixtures/*/kernel.rs; do
  [[ -e "$kernel" ]] || continue
  if target/release/mir-dump "$kernel" >/dev/null; then
    echo "ok    $kernel"
  else
    echo "FAIL  $kernel"
    status=1
  fi
done
exit $status
