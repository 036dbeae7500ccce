#!/usr/bin/env bash
# Installs bubblewrap (the oracle's sandbox) with apt-get where missing, and
# libNVVM and ptxas into the git-ignored tools folder (`tools/cuda`),
# from the PyPI wheel `nvidia-cuda-nvcc-cu12`, unless they are already there;
# and NVRTC (`tools/nvrtc/lib/libnvrtc.so.12` with its builtins, from
# `nvidia-cuda-nvrtc-cu12`), which the `nvrtc` crate loads to compile the CUDA
# C++ twins of our kernels (bench/cuda) for the code-quality comparison.
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

py="${PYTHON:-python3}"

# NVRTC has its own folder and marker, so machines that already have
# tools/cuda get it too, and reinstalling one never removes the other.
# libnvrtc.so.12 finds libnvrtc-builtins beside it (RUNPATH $ORIGIN); the
# builtins carry the device headers, so no CUDA runtime headers are needed.
install_nvrtc() {
  local ndest="$root/tools/nvrtc"
  local nmarker="$ndest/.installed"
  if [[ -f "$nmarker" ]]; then
    return 0
  fi
  if ! command -v "$py" >/dev/null 2>&1; then
    echo "setup-tools: python3 is needed to install NVRTC from PyPI" >&2
    exit 1
  fi
  rm -rf "$ndest.tmp"
  mkdir -p "$ndest.tmp"
  echo "setup-tools: installing nvidia-cuda-nvrtc-cu12 (NVRTC) into $ndest" >&2
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$ndest.tmp/site" "nvidia-cuda-nvrtc-cu12==12.9.*"
  local nvrtc_dir
  nvrtc_dir="$(find "$ndest.tmp/site" -type d -path '*nvidia/cuda_nvrtc' | head -n 1)"
  if [[ -z "$nvrtc_dir" || ! -f "$nvrtc_dir/lib/libnvrtc.so.12" ]]; then
    echo "setup-tools: the wheel did not contain nvidia/cuda_nvrtc/lib/libnvrtc.so.12" >&2
    exit 1
  fi
  rm -rf "$ndest"
  mkdir -p "$ndest"
  # lib/libnvrtc.so.12, lib/libnvrtc-builtins.so.12.9, include/nvrtc.h.
  cp -r "$nvrtc_dir"/. "$ndest"/
  rm -rf "$ndest.tmp"
  touch "$nmarker"
  echo "setup-tools: NVRTC at $ndest/lib/libnvrtc.so.12" >&2
}

if [[ -f "$marker" ]]; then
  install_nvrtc
  exit 0
fi
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
install_nvrtc
