#!/usr/bin/env bash
# H100 run 47, 2026-11-25: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r47/base: 509f3d2's clheap-bench, test_stress, test_tier (before run 46's change).
# .device-carry/r47/new: d0db362's (run 46's change; the look at the last break and 2 breakers at
#   once, or 1/512 of the segments, in pools of at most 2^21 frames only), and gallatin-bench (1aa70ad).
# Each part restores NVIDIA's compile cache from .device-carry/nvcache.tgz if there is one and returns it
# in nvcache.tgz, so that a later part on a fresh machine need not compile the programs again.
# A  both clheap-bench programs compile while new's test_stress runs 3 x 10^6 operations at 32,768
#    work-items on 256 MiB, then 10^6 at 8,192 on 64 MiB; then gallatin-bench, then throughput at 8 GiB
#    (TierAlloc), base and new alternating, while time lasts.
# B  throughput rounds alternating, oom of both, then new's test_tier in turn.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
[ -f .device-carry/nvcache.tgz ] && tar xzf .device-carry/nvcache.tgz -C $CUDA_CACHE_PATH && echo "cache restored: $(du -sh $CUDA_CACHE_PATH | cut -f1)"
R=.device-carry/r47
declare -A BIN=([base]=$R/base [new]=$R/new)
stress() { # VARIANT ITEMS MIB OPS
  local f="$OUT/stress-$1-$2-$3.txt"
  CLHEAP_STRESS_ITEMS=$2 CLHEAP_STRESS_HEAP_MIB=$3 CLHEAP_STRESS_OPS=$4 CLHEAP_STRESS_CHECK=10 \
    timeout 240 stdbuf -oL ${BIN[$1]}/test_stress > "$f" 2>&1
  echo "stress $1 $2 $3: exit $? $(grep -m1 'round 1:' "$f") | $(grep -m1 'TierAlloc:' "$f") at $SECONDS s"
}
tiers() { # UNTIL VARIANT...: test_tier runs in turn
  local until=$1 i=0 v f; shift
  while [ $SECONDS -lt $until ]; do
    i=$((i + 1))
    for v in "$@"; do
      f="$OUT/tt/$part-$v-$i.txt"
      timeout $((until + 40 - SECONDS)) ${BIN[$v]}/test_tier > "$f" 2>&1
      echo "test_tier $v $i: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ') at $SECONDS s"
    done
  done
}
rounds() { # UNTIL: throughput rounds, base and new alternating, while a pair fits
  local until=$1 round=0 v
  while [ $((SECONDS + 90)) -lt $until ]; do
    round=$((round + 1))
    for v in base new; do
      mkdir -p "$OUT/$v/$part$round"
      timeout 100 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$part$round" --only TierAlloc throughput >> "$OUT/log-$part.txt" 2>&1
      echo "throughput $v $part$round: exit $? at $SECONDS s"
    done
  done
}
mkdir -p "$OUT/tt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [ "$part" = A ]; then
  for v in base new; do
    ( timeout 420 ${BIN[$v]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  stress new 32768 256 3000000
  stress new 8192 64 1000000
  wait; echo "=== compiled at $SECONDS s"
  timeout 120 ${BIN[new]}/gallatin-bench --csv "$OUT" > "$OUT/gallatin.txt" 2>&1
  echo "gallatin: exit $? at $SECONDS s"
  rounds 560
fi
if [ "$part" = B ]; then
  rounds 300
  for v in base new; do
    mkdir -p "$OUT/$v/oom"
    timeout 100 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/oom" --only TierAlloc oom > "$OUT/oom-$v.txt" 2>&1
    echo "oom $v: exit $? at $SECONDS s"
  done
  tiers 540 new
fi
tar czf /tmp/nvcache.tgz -C $CUDA_CACHE_PATH . && echo "cache: $(du -sh /tmp/nvcache.tgz | cut -f1)"
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
[ $(stat -c %s /tmp/nvcache.tgz) -lt 50000000 ] && mv /tmp/nvcache.tgz "$OUT/"
