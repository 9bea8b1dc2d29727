#!/usr/bin/env bash
# H100 run 64, 2026-11-26: issue 46, which half of CLHEAP_FAST_BUILD costs the time: `entry`
# (only clheap_malloc and clheap_free out of line, the default otherwise) and `inner` (the fast
# build with those two inline), beside the default and the fast build. bash
# bench/results/h100/run62/command-run64.sh (carry .device-carry/{exp65,gal,lib}, kind nvidia-h100-x1).
# .device-carry/exp65: clheap-bench (Release) of 5599650 with two experiment switches (patch in the
# body of the commit that adds this run), CLHEAP_EXP_OUTLINE_ENTRY and CLHEAP_EXP_INLINE_ENTRY.
# Cold builds of base, entry and inner at once; throughput programs of every variant compiled at
# once (cache on); then rounds of every variant and Gallatin in turn until UNTIL.
set -u
R=/tmp/r64; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-520}
declare -A opt=([base]="" [entry]="-DCLHEAP_EXP_OUTLINE_ENTRY=1" [fast]="-DCLHEAP_FAST_BUILD=1"
                [inner]="-DCLHEAP_FAST_BUILD=1 -DCLHEAP_EXP_INLINE_ENTRY=1")
vs="base entry fast inner"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
pids=
for v in base entry inner; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 240 $B/exp65/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
pids=
for v in $vs; do
  ( timeout 300 $B/exp65/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids; echo "=== compiled at $SECONDS s"
for v in base entry inner; do tail -2 $R/compile/$v/log.txt; rm -f $R/compile/$v/*.bin; done
tar czf $OUT/run64.tgz -C $R .
r=0
while [ $((SECONDS + 40)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp65/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run64.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run64.tgz -C $R .
