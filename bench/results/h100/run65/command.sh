#!/usr/bin/env bash
# H100 run 65, 2026-11-26: issue 48. clheap-bench realloc (TierAlloc, BlockAlloc) beside
# gallatin-bench --realloc, test_resize on NVIDIA, and the throughput sweep of the new device
# code (`new`, 3fcf4a1) beside the last main's (`base`, ce135ef) and Gallatin, paired by round.
# bash bench/results/h100/run65/command.sh (carry .device-carry/{r65,base65,gal,lib}, kind
# nvidia-h100-x1). r65: clheap-bench (Release) and test_resize (RelWithDebInfo) of 3fcf4a1;
# base65: clheap-bench (Release) of ce135ef; gal: gallatin-bench of 3fcf4a1's harness.
set -u
R=/tmp/r65; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-540}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# Builds at once (the driver's cache keeps them for the rounds): the throughput programs of
# both, the realloc programs (a quick pass), and test_resize on NVIDIA.
( timeout 240 $B/base65/clheap-bench --quick --only TierAlloc throughput > $R/warm-base.txt 2>&1; echo "warm base: $? at $SECONDS s" ) &
( timeout 240 $B/r65/clheap-bench --quick --only TierAlloc throughput > $R/warm-new.txt 2>&1; echo "warm new: $? at $SECONDS s" ) &
( timeout 240 $B/r65/clheap-bench --quick realloc > $R/warm-realloc.txt 2>&1; echo "warm realloc: $? at $SECONDS s" ) &
( timeout 300 $B/r65/test_resize TierAlloc BlockAlloc > $R/test_resize.txt 2>&1; echo "test_resize: $? at $SECONDS s" ) &
wait
tail -5 $R/test_resize.txt
tar czf $OUT/run65.tgz -C $R .
r=0
while [ $((SECONDS + 60)) -lt $UNTIL ]; do
  r=$((r + 1))
  mkdir -p $R/rs/new/$r $R/rs/gal/$r
  timeout 120 $B/r65/clheap-bench --csv $R/rs/new/$r realloc > $R/rs/new/$r/log.txt 2>&1
  timeout 90 $B/gal/gallatin-bench --realloc --csv $R/rs/gal/$r > $R/rs/gal/$r/log.txt 2>&1
  echo "realloc round $r at $SECONDS s"
  tar czf $OUT/run65.tgz -C $R .
  for v in base new; do
    d=$([ $v = base ] && echo base65 || echo r65)
    mkdir -p $R/tp/$v/$r
    timeout 60 $B/$d/clheap-bench --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
  done
  mkdir -p $R/tp/gal/$r
  timeout 60 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "throughput round $r at $SECONDS s"
  tar czf $OUT/run65.tgz -C $R .
done
echo "done at $SECONDS s"
tar czf $OUT/run65.tgz -C $R .
