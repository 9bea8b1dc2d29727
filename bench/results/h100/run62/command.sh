#!/usr/bin/env bash
# H100 run 62, 2026-11-26: issue 46, a build for development (CLHEAP_FAST_BUILD=1: clheap_malloc,
# clheap_free and the slow paths their sites inline compiled once each as functions) and NVIDIA's
# -cl-opt-disable, against the default. bash bench/results/h100/run62/command.sh (carry
# .device-carry/{exp64,gal,lib}, kind nvidia-h100-x1). .device-carry/exp64: clheap-bench (Release) of
# the commit that adds CLHEAP_FAST_BUILD, built on the CI machine. Cold builds of every variant at
# once; throughput programs of base and fast compiled at once (cache on); then rounds of base, fast
# and Gallatin in turn until UNTIL.
set -u
R=/tmp/r62; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-555}
declare -A opt=([base]="" [fast]="-DCLHEAP_FAST_BUILD=1" [optdis]="-cl-opt-disable"
                [fastoptdis]="-DCLHEAP_FAST_BUILD=1 -cl-opt-disable")
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
pids=
for v in base fast optdis fastoptdis; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 240 $B/exp64/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
pids=
for v in base fast; do
  ( timeout 300 $B/exp64/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids; echo "=== compiled at $SECONDS s"
for v in base fast optdis fastoptdis; do tail -2 $R/compile/$v/log.txt; done
tar czf $OUT/run62.tgz -C $R .
r=0
while [ $((SECONDS + 35)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in base fast; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp64/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run62.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run62.tgz -C $R .
