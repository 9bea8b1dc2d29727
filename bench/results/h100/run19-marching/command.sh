#!/usr/bin/env bash
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
B=.device-carry/build
step() { local name=$1 limit=$2; shift 2; echo "=== $name"; timeout "$limit" "$@" 2>&1 | tee -a "$OUT/log-$part.txt" | tail -${TAILN:-40}; echo "=== $name: exit ${PIPESTATUS[0]}"; }
# H100 run 19, binaries built from 49790ae: bash command.sh J
# (both part-J blocks ran; the first is an older test block)
if [ "$part" = J ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  TAILN=12 step stress 420 env CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=16384 CLHEAP_STRESS_CHECK=15 $B/tests/test_stress
  TAILN=30 step test_tier 150 $B/tests/test_tier
fi
if [ "$part" = J ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  TAILN=14 step marching 120 .device-carry/build/examples/clheap-marching
  TAILN=8 step marching256 300 .device-carry/build/examples/clheap-marching --cells 256 --frames 4
  TAILN=4 step demo 120 .device-carry/build/examples/clheap-demo
fi
