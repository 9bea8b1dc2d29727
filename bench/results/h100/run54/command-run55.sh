#!/usr/bin/env bash
# H100 run 55, 2026-11-26: where run 54's tagged word lost time. bash bench/results/h100/run54/command-run55.sh
# (carry .device-carry/{exp55,base54,lib}, kind nvidia-h100-x1). .device-carry/exp55: clheap-bench of run
# 54's tree with three experiment switches (the patch is in the body of the commit that adds this run);
# base54: 3a9b919. Every program compiled at once, then rounds over all of them in turn on the shapes
# run 54 lost, until UNTIL.
set -u
R=/tmp/r55; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-560}
SHAPES=262144x256,1048576x64,1048576x16,1048576x1024,262144x1024,65536x16384,1048576xmixed-4K,262144xmixed-4K,16384x16
declare -A opt=([base]="" [tag]="" [par]="-DCLHEAP_EXP_FREE_PARALLEL=1" [and]="-DCLHEAP_BLOCK_FREE_TRIES=0"
                [one]="-DCLHEAP_EXP_ONE_STEP=1" [all]="-DCLHEAP_EXP_FREE_PARALLEL=1 -DCLHEAP_BLOCK_FREE_TRIES=0 -DCLHEAP_EXP_ONE_STEP=1")
vs="base tag par and one all"
path() { case $1 in base) echo $B/base54/clheap-bench ;; *) echo $B/exp55/clheap-bench ;; esac; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in $vs; do
  ( timeout 400 $(path $v) ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
done
wait; echo "=== compiled at $SECONDS s"
r=0
while [ $((SECONDS + 50)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $vs; do
    mkdir -p $R/mix/$v/$r
    timeout 60 $(path $v) ${opt[$v]:+--options "${opt[$v]}"} --csv $R/mix/$v/$r --only TierAlloc \
      --shapes $SHAPES throughput > $R/mix/$v/$r/log.txt 2>&1
  done
  echo "round $r at $SECONDS s"
  tar czf $OUT/run55.tgz -C $R . # after every round: what a timeout leaves still comes back
done
echo "done at $SECONDS s"
tar czf $OUT/run55.tgz -C $R .
