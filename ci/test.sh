#!/usr/bin/env bash
# Builds clheap and runs every test on the default OpenCL device (PoCL on a fresh
# Debian 12 machine):
#  1. a plain gcc -Werror build: unit and device tests (also with one PoCL thread under
#     timeout; OpenCL C 1.2 and device-scope atomics), SPIR-V modules of every allocator
#     validated, the allocator core under ThreadSanitizer, an install into a temporary
#     prefix that examples/ then builds against, the demo, the benchmarks in quick mode;
#     and the device tests of the 32-bit build on Mesa's rusticl (llvmpipe, no 64-bit
#     atomics), also with one llvmpipe thread, and forced on PoCL;
#  2. a clang AddressSanitizer + UndefinedBehaviorSanitizer build of the same (less the
#     runs that change only the device's schedule, OpenCL C version or SPIR-V: their host
#     paths run in their twins), plus a short libFuzzer run of the core against its model;
#  3. the Python package and its tests (ci/python.sh).
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
configure_and_build build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLHEAP_REQUIRE_SPIRV=ON -DCLHEAP_TEST_RUSTICL=ON
ctest --test-dir build-ci --output-on-failure -j"$jobs"

echo "== clang: address + undefined-behaviour sanitizers, fuzzer =="
CC=clang configure_and_build build-ci-asan -DCMAKE_BUILD_TYPE=Debug -DCLHEAP_SANITIZE=address,undefined
# PoCL's ICD alone: Mesa's OpenCL libraries (Clover, rusticl) are C++ and throw while the
# ICD loader opens them, and ASan's __cxa_throw interceptor aborts in a C program
# ("real___cxa_throw != 0"), before any test runs.
OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd ctest --test-dir build-ci-asan --output-on-failure -j"$jobs"

echo "== the Python package =="
ci/python.sh
