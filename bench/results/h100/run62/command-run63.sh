#!/usr/bin/env bash
# H100 run 63, 2026-11-26: issue 46, what NVIDIA's -cl-opt-disable costs the allocator (run 62
# timed only its builds), against the default and CLHEAP_FAST_BUILD=1. bash bench/results/h100/run62/command-run63.sh (carry
# .device-carry/{exp64,gal,lib}, kind nvidia-h100-x1). .device-carry/exp64: clheap-bench (Release) of
# the commit that adds CLHEAP_FAST_BUILD, built on the CI machine (run 62's). No cold builds; the
# throughput programs of every variant compiled at once (cache on); then rounds of every variant
# in turn until UNTIL (Gallatin left out: run 62 has it).
set -u
R=/tmp/r63; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-300}
declare -A opt=([base]="" [fast]="-DCLHEAP_FAST_BUILD=1" [optdis]="-cl-opt-disable"
                [fastoptdis]="-DCLHEAP_FAST_BUILD=1 -cl-opt-disable")
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
pids=
for v in base fast optdis fastoptdis; do
  ( timeout 300 $B/exp64/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids; echo "=== compiled at $SECONDS s"
tar czf $OUT/run63.tgz -C $R .
r=0
while [ $((SECONDS + 60)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in base fast optdis fastoptdis; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp64/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  echo "round $r at $SECONDS s"
  tar czf $OUT/run63.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run63.tgz -C $R .
