#!/usr/bin/env bash
# H100 run 22: bash command.sh S1; S2; S3; S4 (binaries of 9030b9c), then S7; S8; S9; S6 (binaries of 5371398), S10 (5371398 + the churn contended column of b6d2328), S11 (b6d2328)
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
B=.device-carry/build
step() { local name=$1 limit=$2; shift 2; echo "=== $name"; timeout "$limit" "$@" 2>&1 | tee -a "$OUT/log-$part.txt" | tail -${TAILN:-40}; echo "=== $name: exit ${PIPESTATUS[0]}"; }
if [ "$part" = S1 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  for a in BitmapAlloc BlockAlloc TierAlloc; do
    TAILN=8 step life4096-$a 150 $B/examples/clheap-life --size 4096 --generations 64 --check-every 32 --allocator $a --csv "$OUT/life-4096-$a.csv"
  done
  TAILN=8 step churn-bitmaps 120 $B/bench/clheap-bench --csv "$OUT" --only BitmapAlloc,BlockAlloc,TierAlloc churn
  mv "$OUT/churn.csv" "$OUT/churn-bitmaps.csv"
fi
if [ "$part" = S2 ]; then
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    TAILN=6 step churn-$a 140 $B/bench/clheap-bench --csv "$OUT" --only $a churn
    mv "$OUT/churn.csv" "$OUT/churn-$a.csv"
  done
fi
if [ "$part" = S3 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  TAILN=3 step throughput 260 $B/bench/clheap-bench --csv "$OUT" --only AtomicMalloc,TierAlloc throughput
  TAILN=3 step gallatin 220 $B/bench/gallatin-bench --csv "$OUT"
fi
if [ "$part" = S4 ]; then
  for a in BlockAlloc TierAlloc; do
    heap=16384; [ $a = BlockAlloc ] && heap=2048
    TAILN=8 step stress-$a 190 env CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 \
      CLHEAP_STRESS_HEAP_MIB=$heap CLHEAP_STRESS_CHECK=15 $B/tests/test_stress $a
  done
fi
if [ "$part" = S7 ]; then
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    TAILN=6 step churn2-$a 110 $B/bench/clheap-bench --csv "$OUT" --only $a churn
    mv "$OUT/churn.csv" "$OUT/churn2-$a.csv"
  done
fi
if [ "$part" = S8 ]; then
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    TAILN=8 step stress-$a 130 env CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 \
      CLHEAP_STRESS_HEAP_MIB=4096 CLHEAP_STRESS_CHECK=15 $B/tests/test_stress $a
  done
fi
if [ "$part" = S9 ]; then
  TAILN=8 step stress-TierAlloc 420 env CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 \
    CLHEAP_STRESS_HEAP_MIB=16384 CLHEAP_STRESS_CHECK=15 $B/tests/test_stress TierAlloc
  TAILN=8 step stress-BlockAlloc 150 env CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 \
    CLHEAP_STRESS_HEAP_MIB=16384 CLHEAP_STRESS_CHECK=15 $B/tests/test_stress BlockAlloc
fi
if [ "$part" = S6 ]; then
  TAILN=30 step papers 560 $B/bench/clheap-bench --csv "$OUT" papers
fi
if [ "$part" = S10 ]; then
  for opt in "" "-DCLHEAP_MAX_RESTARTS=32" "-DCLHEAP_MAX_RESTARTS=128"; do
    echo "--- options: '$opt'"
    TAILN=6 step churn3 120 $B/bench/clheap-bench --only CMalloc,CFMalloc,CMMalloc,CFMMalloc --options "$opt" churn
  done
fi
if [ "$part" = S11 ]; then
  TAILN=4 step papers-circular 420 $B/bench/clheap-bench --csv "$OUT" --only CMalloc,CFMalloc,CMMalloc,CFMMalloc papers
  TAILN=4 step churn-restarts128 60 $B/bench/clheap-bench --csv "$OUT" --only CMalloc,CFMalloc,CMMalloc,CFMMalloc churn
fi
