#!/usr/bin/env bash
# H100 run 59, 2026-11-26: issue 46 part 3, the block release path and the bitmap's upward
# propagation out of line; issue 47, what the unformatted-heap check costs. bash
# bench/results/h100/run61/command-run59.sh (carry .device-carry/{exp61,gal,lib}, kind nvidia-h100-x1).
# .device-carry/exp61: clheap-bench (Release) of 2dd6a5e with experiment switches (the patch is in
# the body of the commit that adds this run): CLHEAP_EXP_NO_MAGIC (no magic check),
# CLHEAP_EXP_OUTLINE_BM (clheap_bm_set_above / clheap_bm_clear_above out of line),
# CLHEAP_EXP_OUTLINE_RELEASE (clheap_pages_release), CLHEAP_EXP_OUTLINE_AFTER
# (clheap_block_after_release), CLHEAP_EXP_OUTLINE_CLAIM (clheap_pages_claim_frames).
# Variants: head (no switch), nomagic, bmrel (BM, RELEASE), all4 (BM, RELEASE, AFTER, CLAIM).
# First the cold builds (heap and 1-, 4- and 8-site user kernels) of head, bmrel and all4 at once;
# then every variant's throughput program compiled at once (cache on); then rounds of the sweep
# at 8 GiB, every variant and Gallatin in turn, until UNTIL.
set -u
R=/tmp/r59; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
UNTIL=${UNTIL:-555}
BR="-DCLHEAP_EXP_OUTLINE_BM=1 -DCLHEAP_EXP_OUTLINE_RELEASE=1"
declare -A opt=([head]="" [nomagic]="-DCLHEAP_EXP_NO_MAGIC=1" [bmrel]="$BR"
                [all4]="$BR -DCLHEAP_EXP_OUTLINE_AFTER=1 -DCLHEAP_EXP_OUTLINE_CLAIM=1")
vs="head nomagic bmrel all4"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in head bmrel all4; do
  mkdir -p $R/compile/$v
  ( CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=off timeout 240 $B/exp61/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} \
      --only TierAlloc --csv $R/compile/$v compile > $R/compile/$v/log.txt 2>&1
    echo "cold builds $v: exit $? at $SECONDS s" ) &
done
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
for v in $vs; do
  ( timeout 300 $B/exp61/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
done
wait; echo "=== compiled at $SECONDS s"
for v in head bmrel all4; do tail -6 $R/compile/$v/log.txt; done
tar czf $OUT/run59.tgz -C $R --exclude='*.bin' .
r=0
while [ $((SECONDS + 45)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/exp61/clheap-bench ${opt[$v]:+--options "${opt[$v]}"} --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run59.tgz -C $R --exclude='*.bin' .
done
echo "done at $SECONDS s"
tar czf $OUT/run59.tgz -C $R --exclude='*.bin' .
