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
# D  round 1 of test_stress at 2^20 work-items on 8 GiB (a fresh pool's burst, 64% of it asked for; C got 11
#    NULL for 1 - 2 MiB requests there), three times each: new as built, and with -D knobs (compiled at once):
#    runs 32: CLHEAP_PAGES_RUN_TRIES=32; share512: CLHEAP_PAGES_BREAK_SHARE=512; smallrules: the small-pool
#    rules of the page tier at 8 GiB (CLHEAP_PAGES_SMALL_POOL_SEGMENTS above the pool's); pieces: pieces
#    for every class at 8 GiB (CLHEAP_TIER_PIECES_POOL_FRAMES above the pool's).
# E  D's machine: throughput at 8 GiB of new as built, with pieces for every class and with the small-pool
#    rules, alternating, while time lasts (the two knobs' programs compile first, at once).
# F  .device-carry/r47/final: the small-pool rules of d0db362 for every pool (the look at the last break, 2
#    breaks at once or 1/512 of the segments): test_stress at 2^20 work-items on 8 GiB, 10^8 operations, as C.
# G  throughput at 8 GiB, new (d0db362) and final alternating, while time lasts (final's program compiles first).
# C  (a fresh machine, the cache of B restored) new's test_stress at 2^20 work-items on 8 GiB, 10^8
#    operations, every word verified, the heap checked every 15 rounds.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
[ -f .device-carry/nvcache.tgz ] && tar xzf .device-carry/nvcache.tgz -C $CUDA_CACHE_PATH && echo "cache restored: $(du -sh $CUDA_CACHE_PATH | cut -f1)"
R=.device-carry/r47
declare -A BIN=([base]=$R/base [new]=$R/new [final]=$R/final)
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
rounds() { # UNTIL [VARIANTS]: throughput rounds, base and new (or VARIANTS) alternating, while a pair fits
  local until=$1 round=0 v margin=90
  [ -n "${2:-}" ] && margin=20
  while [ $((SECONDS + margin)) -lt $until ]; do
    round=$((round + 1))
    for v in ${2:-base new}; do
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
if [ "$part" = C ] || [ "$part" = F ]; then
  v=new; [ "$part" = F ] && v=final
  CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 CLHEAP_STRESS_CHECK=15 \
    timeout 555 stdbuf -oL ${BIN[$v]}/test_stress > "$OUT/stress-$v-1048576-8192.txt" 2>&1
  echo "stress $v 1048576 8192: exit $? at $SECONDS s"
  grep -E "round 1:|TierAlloc:|PASSED|FAILED" "$OUT/stress-$v-1048576-8192.txt" | cut -c1-300
fi
if [ "$part" = D ]; then
  declare -A KNOB=([asbuilt]="" [runs32]="-DCLHEAP_PAGES_RUN_TRIES=32" [share512]="-DCLHEAP_PAGES_BREAK_SHARE=512"
    [smallrules]="-DCLHEAP_PAGES_SMALL_POOL_SEGMENTS=4000000u" [pieces]="-DCLHEAP_TIER_PIECES_POOL_FRAMES=0xFFFFFFFFu")
  burst() { # KNOB RUN
    CLHEAP_STRESS_OPTIONS="${KNOB[$1]}" CLHEAP_STRESS_OPS=1500000 CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 \
      CLHEAP_STRESS_CHECK=1 timeout ${3:-120} stdbuf -oL ${BIN[new]}/test_stress > "$OUT/burst-$1-$2.txt" 2>&1
    echo "burst $1 $2: exit $? $(grep -m1 'round 1:' "$OUT/burst-$1-$2.txt") | $(grep -m1 'TierAlloc:' "$OUT/burst-$1-$2.txt" | cut -c1-120) at $SECONDS s"
  }
  for k in runs32 share512 smallrules pieces; do burst $k 1 400 & done
  burst asbuilt 1
  wait
  for i in 2 3; do for k in asbuilt runs32 share512 smallrules pieces; do burst $k $i; done; done
fi
if [ "$part" = E ]; then
  declare -A OPTS=([asbuilt]="" [pieces]="-DCLHEAP_TIER_PIECES_POOL_FRAMES=0xFFFFFFFFu" [smallrules]="-DCLHEAP_PAGES_SMALL_POOL_SEGMENTS=4000000u")
  for v in pieces smallrules; do
    ( timeout 330 ${BIN[new]}/clheap-bench --quick --options "${OPTS[$v]}" --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  wait
  round=0
  while [ $SECONDS -lt 545 ]; do
    round=$((round + 1))
    for v in asbuilt pieces smallrules; do
      mkdir -p "$OUT/$v/E$round"
      timeout 40 stdbuf -oL ${BIN[new]}/clheap-bench --options "${OPTS[$v]}" --csv "$OUT/$v/E$round" --only TierAlloc throughput >> "$OUT/log-E.txt" 2>&1
      echo "throughput $v E$round: exit $? at $SECONDS s"
    done
  done
  (cd "$OUT" && tar czf /tmp/part-E.tgz asbuilt pieces smallrules compile-*.txt && rm -rf asbuilt pieces smallrules compile-*.txt log-E.txt tt && mv /tmp/part-E.tgz .)
  exit 0
fi
if [ "$part" = G ]; then
  timeout 330 ${BIN[final]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-final.txt" 2>&1
  echo "compile final: exit $? at $SECONDS s"
  rounds 560 "new final"
fi
tar czf /tmp/nvcache.tgz -C $CUDA_CACHE_PATH . && echo "cache: $(du -sh /tmp/nvcache.tgz | cut -f1)"
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
[ $(stat -c %s /tmp/nvcache.tgz) -lt 50000000 ] && mv /tmp/nvcache.tgz "$OUT/"
