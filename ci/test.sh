#!/usr/bin/env bash
# Builds clheap and runs every test on the default OpenCL device (PoCL on a fresh
# Debian 12 machine): a plain -Werror build (which also installs into a temporary prefix
# and builds the examples against it, runs the demo and the benchmarks in quick mode),
# then an AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh

jobs=$(nproc)
configure_and_build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCLHEAP_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

echo "== plain build =="
configure_and_build build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo
ctest --test-dir build-ci --output-on-failure

echo "== address + undefined-behaviour sanitizers =="
configure_and_build build-ci-asan -DCMAKE_BUILD_TYPE=Debug -DCLHEAP_SANITIZE=address,undefined
ctest --test-dir build-ci-asan --output-on-failure
