#!/usr/bin/env bash
# H100 run 17 (2026-11-23): tests/test_grow (heaps that grow) built from d1dad57, which
# splits the CircularMalloc family's new space into chunks. Before it, in calls at 707b3ad
# plus the test's allocator filter, CMalloc and CFMMalloc grew to the policy's 16 MiB and
# 1,300 - 1,600 of 4096 retried 512 B requests still got NULL (the new space was one chunk).
# Built here: cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLHEAP_WERROR=ON && cmake --build build -j8
# The binaries, libOpenCL.so.1 and libcmocka.so.0 carried in .device-carry/.
set -u
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
B=.device-carry/build
step() { local name=$1 limit=$2; shift 2; echo "=== $name"; timeout "$limit" "$@" 2>&1 | tee -a "$OUT/log.txt" | tail -${TAILN:-40}; echo "=== $name: exit ${PIPESTATUS[0]}"; }
TAILN=12 step test_grow 200 $B/tests/test_grow FreeHeap CFMMalloc CFMalloc
TAILN=12 step test_grow_cm 200 $B/tests/test_grow CMalloc
