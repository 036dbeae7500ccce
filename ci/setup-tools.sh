#!/usr/bin/env bash
# Installs bubblewrap (the oracle's sandbox) with apt-get where missing, and
# libNVVM and ptxas into the git-ignored tools folder (`tools/cuda`),
# from the PyPI wheel `nvidia-cuda-nvcc-cu12`, unless they are already there.
# Both README commands run this first. Idempotent and quiet when done.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/cuda"
marker="$dest/.installed"

# The oracle's sandbox (bubblewrap) and the util-linux tools it drives
# (prlimit, setpriv). Installed with apt-get where we are root and they are
# missing; elsewhere the oracle refuses to run without them (or with
# --unsandboxed) and says so.
if ! command -v bwrap >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-tools: installing bubblewrap (the oracle's sandbox)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "setup-tools: bubblewrap (bwrap) is missing and cannot be installed here; install it, or run the oracle with --unsandboxed" >&2
  fi
fi

if [[ -f "$marker" ]]; then
  exit 0
fi
py="${PYTHON:-python3}"
if ! command -v "$py" >/dev/null 2>&1; then
  echo "setup-tools: python3 is needed to install libNVVM from PyPI" >&2
  exit 1
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
echo "setup-tools: installing nvidia-cuda-nvcc-cu12 (libNVVM, ptxas) into $dest" >&2
"$py" -m pip install --quiet --disable-pip-version-check --no-deps \
  --target "$dest.tmp/site" "nvidia-cuda-nvcc-cu12==12.9.*"
nvcc_dir="$(find "$dest.tmp/site" -type d -path '*nvidia/cuda_nvcc' | head -n 1)"
if [[ -z "$nvcc_dir" ]]; then
  echo "setup-tools: the wheel did not contain nvidia/cuda_nvcc" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
# Keep the CUDA_HOME-like layout: nvvm/lib64/libnvvm.so, bin/ptxas.
cp -r "$nvcc_dir"/. "$dest"/
rm -rf "$dest.tmp"
libnvvm="$(find "$dest" -name 'libnvvm.so*' | head -n 1)"
if [[ -z "$libnvvm" ]]; then
  echo "setup-tools: libnvvm.so not found after install" >&2
  exit 1
fi
touch "$marker"
echo "setup-tools: libNVVM at $libnvvm" >&2
