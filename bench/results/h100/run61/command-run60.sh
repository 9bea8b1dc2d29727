#!/usr/bin/env bash
# H100 run 60, 2026-11-26: run 59 split (issue 46 part 3: which outlined function costs the
# frees) and issue 47's magic check loaded beside the first header words. bash
# bench/results/h100/run61/command-run60.sh (carry .device-carry/{exp62,gal,lib}, kind nvidia-h100-x1).
# .device-carry/exp62: run 59's exp61 plus CLHEAP_EXP_MAGIC_LATE (TierAlloc's warp malloc and
# frame_locate compare the magic after loading the class table / pool words, not before; the
# patch is in the body of the commit that adds this run). Variants: head (no switch), nomagic,
# late, bm (CLHEAP_EXP_OUTLINE_BM), rel (CLHEAP_EXP_OUTLINE_RELEASE), bmrel (both).
# Cold builds of head, bm and rel at once (their 1-site PTX kept), every variant's throughput
# program compiled at once (cache on), then rounds of the sweep at 8 GiB, every variant and
# Gallatin in turn, until UNTIL.
set -u
R=/tmp/r60; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-555}
declare -A opt=([head]="" [nomagic]="-DCLHEAP_EXP_NO_MAGIC=1" [late]="-DCLHEAP_EXP_MAGIC_LATE=1"
                [bm]="-DCLHEAP_EXP_OUTLINE_BM=1" [rel]="-DCLHEAP_EXP_OUTLINE_RELEASE=1"
                [bmrel]="-DCLHEAP_EXP_OUTLINE_BM=1 -DCLHEAP_EXP_OUTLINE_RELEASE=1")
vs="head nomagic late bm rel bmrel"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in head bm rel; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 240 $B/exp62/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
done
wait
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
for v in $vs; do
  ( timeout 300 $B/exp62/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
done
wait; echo "=== compiled at $SECONDS s"
for v in head bm rel; do tail -2 $R/compile/$v/log.txt; rm -f $R/compile/$v/compile-TierAlloc-[48].bin; done
tar czf $OUT/run60.tgz -C $R .
r=0
while [ $((SECONDS + 50)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp62/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run60.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run60.tgz -C $R .
