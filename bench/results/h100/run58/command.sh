#!/usr/bin/env bash
# H100 run 58, 2026-11-26: issue 46 part 3's first step, the page tier's take (and a block's reclaim)
# out of line. bash bench/results/h100/run58/command.sh (carry .device-carry/{exp58,gal,lib}, kind
# nvidia-h100-x1). .device-carry/exp58: clheap-bench (Release) of 7546f70 with two experiment switches,
# CLHEAP_EXP_OUTLINE_TAKE and CLHEAP_EXP_OUTLINE_RECLAIM (noinline on clheap_pages_take_uncounted and
# clheap_block_reclaim; the patch is in the body of the commit that adds this run). Variants: base (no
# switch), take, both. First the cold builds of TierAlloc's heap and 1-, 4- and 8-site user kernels,
# the three variants at once; then every variant's throughput program compiled at once (cache on), then
# rounds of the sweep at 8 GiB, every variant and Gallatin in turn, until UNTIL.
set -u
R=/tmp/r58; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-560}
declare -A opt=([base]="" [take]="-DCLHEAP_EXP_OUTLINE_TAKE=1" [both]="-DCLHEAP_EXP_OUTLINE_TAKE=1 -DCLHEAP_EXP_OUTLINE_RECLAIM=1")
vs="base take both"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in $vs; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 300 $B/exp58/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
done
wait
for v in $vs; do cat $R/compile/$v/log.txt | tail -2; done
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
for v in $vs; do
  ( timeout 300 $B/exp58/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
done
wait; echo "=== compiled at $SECONDS s"
r=0
while [ $((SECONDS + 40)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp58/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run58.tgz -C $R --exclude='*.bin' .
done
echo "done at $SECONDS s"
tar czf $OUT/run58.tgz -C $R --exclude='*.bin' .
