#!/usr/bin/env bash
# H100 run 61, 2026-11-26: issue 46 part 3, two more slow paths out of line on top of
# clheap_pages_release (run 60's `rel`, now the default); test_heap's TierAlloc and BlockAlloc
# tests on NVIDIA (the warp paths' unformatted-heap check). bash bench/results/h100/run61/command.sh
# (carry .device-carry/{exp63,gal,lib}, kind nvidia-h100-x1). .device-carry/exp63: clheap-bench
# (Release) of the commit that outlines clheap_pages_release, with two experiment switches (patch
# in the body of the commit that adds this run): CLHEAP_EXP_OUTLINE_SETTLE (clheap_tier_settle_block)
# and CLHEAP_EXP_OUTLINE_RECLAIM (clheap_block_reclaim); and test_heap of that commit.
# Variants: base (no switch), set, rec, setrec.
set -u
R=/tmp/r61; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-555}
declare -A opt=([base]="" [set]="-DCLHEAP_EXP_OUTLINE_SETTLE=1" [rec]="-DCLHEAP_EXP_OUTLINE_RECLAIM=1"
                [setrec]="-DCLHEAP_EXP_OUTLINE_SETTLE=1 -DCLHEAP_EXP_OUTLINE_RECLAIM=1")
vs="base set rec setrec"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
( cd $R && CUDA_CACHE_PATH=/tmp/nvcache-tests timeout 420 $B/exp63/test_heap TierAlloc BlockAlloc > $R/test_heap.txt 2>&1
  echo "test_heap: exit $? at $SECONDS s" >> $R/test_heap.txt ) &
for v in $vs; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 240 $B/exp63/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
  pids="${pids:-} $!"
done
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
for v in $vs; do
  ( timeout 300 $B/exp63/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
  pids="$pids $!"
done
wait $pids; echo "=== compiled at $SECONDS s"
for v in $vs; do tail -2 $R/compile/$v/log.txt; rm -f $R/compile/$v/*.bin; done
tar czf $OUT/run61.tgz -C $R .
r=0
while [ $((SECONDS + 45)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp63/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run61.tgz -C $R .
done
wait
echo "done at $SECONDS s"; tail -5 $R/test_heap.txt
tar czf $OUT/run61.tgz -C $R .
