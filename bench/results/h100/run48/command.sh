#!/usr/bin/env bash
# H100 run 48, 2026-11-25: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r48/base: 05ba087's clheap-bench, test_tier, test_stress, plus the launch floor (the
#   empty-kernel rows in both harnesses), and gallatin-bench (Gallatin 1aa70ad) with the same floor rows.
# .device-carry/r48/defer: the same tree with run 39's settle-gated.patch brought onto 05ba087 (small
#   launches' frees leave the work after their AND to later while the page tier has handed out less than a
#   quarter of the pool; a run opened for one request gives its unwanted slots back the same way).
# NVIDIA's compile cache comes from .device-carry/nvcache.tgz and goes back in nvcache.tgz.
# A  compile both throughput programs while test_tier base and defer run once each (their programs compile
#    too); then rounds of Gallatin, base and defer throughput at 8 GiB, alternating; then test_tier base and
#    defer alternating while time lasts.
# B  (the cache of A) defer's test_stress at 2^20 work-items on 8 GiB, 10^8 operations, every word verified,
#    while base's runs at 32,768 on 256 MiB and 8,192 on 64 MiB (the programs compile at once); then defer's
#    on the two small pools (small launches: its frees defer there); then test_tier base and defer in turn.
# C  (the cache of A) more throughput rounds and test_tier, as A without its compile phase.
# D  (an H100, no cache) .device-carry/r48/final: clheap-bench and gallatin-bench built from 4821770 (the change
#    as landed); its throughput program compiles, then rounds of Gallatin and TierAlloc alternating.
# E  (an H100, its own command, not a part of this script): CUDA_CACHE_DISABLE=1 .device-carry/r48/final/clheap-bench
#    --csv $OUT --only TierAlloc registers
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
[ -f .device-carry/nvcache.tgz ] && tar xzf .device-carry/nvcache.tgz -C $CUDA_CACHE_PATH && echo "cache restored: $(du -sh $CUDA_CACHE_PATH | cut -f1)"
declare -A BIN=([base]=.device-carry/r48/base [defer]=.device-carry/r48/defer [final]=.device-carry/r48/final)
UNTIL=${UNTIL:-540}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
mkdir -p "$OUT/tt"
tier() { # VARIANT I LIMIT: one test_tier run, its mixed rounds summarised
  local f="$OUT/tt/$part-$1-$2.txt"
  timeout $3 ${BIN[$1]}/test_tier > "$f" 2>&1
  echo "test_tier $1 $2: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ') at $SECONDS s"
}
tiers() { # UNTIL: base and defer in turn while a pair fits
  local until=$1 i=0
  while [ $((SECONDS + 25)) -lt $until ]; do
    i=$((i + 1))
    tier base $i $((until + 20 - SECONDS))
    tier defer $i $((until + 20 - SECONDS))
  done
}
round() { # TAG: Gallatin, base, defer
  local r=$1 v
  mkdir -p "$OUT/gal/$r"
  timeout 120 ${BIN[base]}/gallatin-bench --csv "$OUT/gal/$r" > "$OUT/gal/$r/gallatin.txt" 2>&1
  echo "gallatin $r: exit $? at $SECONDS s"
  for v in base defer; do
    mkdir -p "$OUT/$v/$r"
    timeout 100 ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$r" --only TierAlloc throughput > "$OUT/$v/$r/log.txt" 2>&1
    echo "throughput $v $r: exit $? at $SECONDS s"
  done
}
rounds() { # UNTIL
  local r=0
  while [ $((SECONDS + 60)) -lt $1 ]; do
    r=$((r + 1))
    round $part$r
  done
}
if [ "$part" = A ]; then
  for v in base defer; do
    ( timeout 330 ${BIN[$v]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
    ( tier $v 0 330 ) &
  done
  wait; echo "=== compiled at $SECONDS s"
  rounds 400
  tiers $UNTIL
fi
if [ "$part" = B ]; then
  stress() { # VARIANT ITEMS MIB OPS LIMIT
    local f="$OUT/stress-$1-$2-$3.txt"
    CLHEAP_STRESS_ITEMS=$2 CLHEAP_STRESS_HEAP_MIB=$3 CLHEAP_STRESS_OPS=$4 CLHEAP_STRESS_CHECK=15 \
      timeout $5 stdbuf -oL ${BIN[$1]}/test_stress TierAlloc > "$f" 2>&1
    echo "stress $1 $2 $3: exit $? $(grep -m1 'round 1:' "$f") | $(grep 'TierAlloc:' "$f" | tail -1) at $SECONDS s"
  }
  ( stress base 32768 256 3000000 330; stress base 8192 64 1000000 120 ) &
  stress defer 1048576 8192 100000000 400
  stress defer 32768 256 3000000 120
  stress defer 8192 64 1000000 100
  wait
  tiers $UNTIL
fi
if [ "$part" = D ]; then
  timeout 330 ${BIN[final]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-final.txt" 2>&1
  echo "compile final: exit $? at $SECONDS s"
  r=0
  while [ $((SECONDS + 40)) -lt $UNTIL ]; do
    r=$((r + 1))
    mkdir -p "$OUT/gal/D$r" "$OUT/final/D$r"
    timeout 120 ${BIN[final]}/gallatin-bench --csv "$OUT/gal/D$r" > "$OUT/gal/D$r/gallatin.txt" 2>&1
    echo "gallatin D$r: exit $? at $SECONDS s"
    timeout 100 ${BIN[final]}/clheap-bench --csv "$OUT/final/D$r" --only TierAlloc throughput > "$OUT/final/D$r/log.txt" 2>&1
    echo "throughput final D$r: exit $? at $SECONDS s"
  done
fi
if [ "$part" = C ]; then
  rounds 330
  tiers $UNTIL
fi
tar czf /tmp/nvcache.tgz -C $CUDA_CACHE_PATH . 2>/dev/null || true; mv /tmp/nvcache.tgz $OUT/
tar czf $OUT/out-$part.tgz -C $OUT --exclude nvcache.tgz --exclude "out-*.tgz" . && echo "packed at $SECONDS s"
