#!/usr/bin/env bash
# H100 run 66, 2026-11-26: issue 48, clheap-bench realloc of the aligned_alloc restructured
# (`new`, .device-carry/r66: clheap-bench Release of the commit "device: aligned_alloc's malloc
# ways inline") beside run 65's binary (`old`, .device-carry/r65, 3fcf4a1) and
# gallatin-bench --realloc, in turn each round. bash bench/results/h100/run65/command-run66.sh
# (carry .device-carry/{r65,r66,gal,lib}, kind nvidia-h100-x1).
set -u
R=/tmp/r66; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-330}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
( timeout 240 $B/r65/clheap-bench --quick realloc > $R/warm-old.txt 2>&1; echo "warm old: $? at $SECONDS s" ) &
( timeout 240 $B/r66/clheap-bench --quick realloc > $R/warm-new.txt 2>&1; echo "warm new: $? at $SECONDS s" ) &
wait
r=0
while [ $((SECONDS + 30)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in old new; do
    d=$([ $v = old ] && echo r65 || echo r66)
    mkdir -p $R/rs/$v/$r
    timeout 120 $B/$d/clheap-bench --csv $R/rs/$v/$r realloc > $R/rs/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/rs/gal/$r
  timeout 90 $B/gal/gallatin-bench --realloc --csv $R/rs/gal/$r > $R/rs/gal/$r/log.txt 2>&1
  echo "round $r at $SECONDS s"
  tar czf $OUT/run66.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run66.tgz -C $R .
