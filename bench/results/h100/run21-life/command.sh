#!/usr/bin/env bash
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
B=.device-carry/build
step() { local name=$1 limit=$2; shift 2; echo "=== $name"; timeout "$limit" "$@" 2>&1 | tee -a "$OUT/log-$part.txt" | tail -${TAILN:-40}; echo "=== $name: exit ${PIPESTATUS[0]}"; }
# H100 run 21, binaries built from ff2bc4f: bash command.sh L1
if [ "$part" = L1 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  TAILN=12 step life1024 200 $B/examples/clheap-life --size 1024 --generations 128 --check-every 32 --allocator all --csv "$OUT/life-1024.csv"
  TAILN=12 step life4096 360 $B/examples/clheap-life --size 4096 --generations 64 --check-every 32 --allocator all --csv "$OUT/life-4096.csv"
fi
