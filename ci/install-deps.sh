#!/usr/bin/env bash
# Installs the Debian 12 packages clheap builds, tests and benchmarks with.
# Safe to run twice: it asks apt only for what is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd mesa-opencl-icd clinfo
  libcmocka-dev python3
  python3-dev python3-venv python3-pyopencl python3-numpy python3-pytest python3-setuptools python3-wheel
  clang libclang-rt-14-dev llvm-spirv-14 spirv-tools
  gnuplot-nox
  doxygen
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
