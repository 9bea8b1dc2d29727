#!/usr/bin/env bash
# H100 runs 66 - 69 and 71, 2026-11-26: issue 48, clheap-bench realloc (nvidia-h100-x1, 8 GiB heaps).
#   bash bench/results/h100/run65/command-runs66-71.sh 66   carry .device-carry/{r65,r66,gal,lib}
#     6e27f3f (`new`, r66: aligned_alloc's malloc ways inline) beside 3fcf4a1 (`old`, r65) and
#     gallatin-bench --realloc (gal, 3fcf4a1's harness), in turn each round;
#   ... 67   carry .device-carry/{r67,gal,lib}: 23a82f2 (each shape's variants interleaved run
#     by run), TierAlloc and BlockAlloc, beside gallatin-bench --realloc;
#   ... 68   carry .device-carry/{r68,lib}: f23913a (the heap's bad frees checked after every
#     shape), TierAlloc only, then the shapes that failed and the aligned rows with
#     allocations over twice their size;
#   ... 69   the same with BlockAlloc first in each process, as run 67 had it.
#   ... 71   carry .device-carry/{r71,gal,lib}: 10a58e1 (calloc and aligned memory stamped and
#     verified word by word, bad frees read after every run), as run 67; the warm-up saves
#     each program's PTX (CLHEAP_BENCH_BINARIES) for ptxas -v offline.
# Each .device-carry/rNN holds clheap-bench (Release) of its commit.
set -u
RUN=${1:?run 66, 67, 68, 69 or 71}
R=/tmp/r$RUN; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-330}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
case $RUN in # variant name, binary folder and --only, per variant
66) variants="old:r65: new:r66:"; gal=1 ;;
67) variants="new:r67:TierAlloc,BlockAlloc"; gal=1 ;;
68) variants="new:r68:TierAlloc"; gal=0 ;;
69) variants="new:r68:BlockAlloc,TierAlloc"; gal=0 ;;
71) variants="new:r71:TierAlloc new:r71:BlockAlloc"; gal=1 ;; # one warm-up each, then both in one process
esac
for v in $variants; do # the programs, built at once (the driver's cache keeps them)
  IFS=: read -r name dir only <<< "$v"
  mkdir -p $R/bin/$name$only
  ( CLHEAP_BENCH_BINARIES=1 timeout 240 $B/$dir/clheap-bench --quick ${only:+--only $only} --csv $R/bin/$name$only \
      realloc > $R/warm-$name$only.txt 2>&1
    echo "warm $name: $? at $SECONDS s" ) &
done
wait
[ $RUN = 71 ] && variants="new:r71:TierAlloc,BlockAlloc"
r=0
while [ $((SECONDS + 30)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in $variants; do
    IFS=: read -r name dir only <<< "$v"
    mkdir -p $R/rs/$name/$r
    timeout 120 $B/$dir/clheap-bench ${only:+--only $only} --csv $R/rs/$name/$r realloc > $R/rs/$name/$r/log.txt 2>&1
  done
  if [ $gal = 1 ]; then
    mkdir -p $R/rs/gal/$r
    timeout 90 $B/gal/gallatin-bench --realloc --csv $R/rs/gal/$r > $R/rs/gal/$r/log.txt 2>&1
  fi
  echo "round $r at $SECONDS s"
  tar czf $OUT/run$RUN.tgz -C $R .
done
grep -h "FAILED" $R/rs/*/*/log.txt | sort | uniq -c
grep -h "over twice" $R/rs/*/*/log.txt | sort | uniq -c
echo "done at $SECONDS s"
tar czf $OUT/run$RUN.tgz -C $R .
