#!/usr/bin/env bash
# H100 run 46, 2026-11-25: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r46/base: 509f3d2's clheap-bench, test_stress, test_tier (TierAlloc as c725b10's).
# .device-carry/r46/new: 509f3d2 + the page tier's look near its last break (CLHEAP_PAGES_NEAR_BREAK,
#   -D...=0 turns it off) + pieces for every class in pools of at most 2^21 frames
#   (CLHEAP_TIER_PIECES_POOL_FRAMES, -D...=0 turns it off).
# A  clheap-bench programs of base and new compile (cached for B) while test_stress runs 3 x 10^6
#    operations at 32,768 work-items on 256 MiB: new, base, new without pieces, new without the look;
#    then 10^6 at 8,192 on 64 MiB: new, base.
# B  throughput at 8 GiB (TierAlloc), base and new alternating, 2 rounds; oom of both; then new's
#    test_tier in turn.
# C  test_tier in turn: new and base alternating (not run).
# D  .device-carry/r46/new rebuilt after B: the look near the last break comes second in each pass, after
#    the look from the low end (in A and B it came first). Its clheap-bench compiles while test_stress runs
#    A's two shapes; then throughput, base and new alternating, 3 rounds; then new's test_tier in turn.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
R=.device-carry/r46
declare -A BIN=([base]=$R/base [new]=$R/new [nopieces]=$R/new [nonear]=$R/new)
declare -A OPT=([base]="" [new]="" [nopieces]="-DCLHEAP_TIER_PIECES_POOL_FRAMES=0" [nonear]="-DCLHEAP_PAGES_NEAR_BREAK=0")
stress() { # VARIANT ITEMS MIB OPS
  local f="$OUT/stress-$1-$2-$3.txt"
  CLHEAP_STRESS_OPTIONS="${OPT[$1]}" CLHEAP_STRESS_ITEMS=$2 CLHEAP_STRESS_HEAP_MIB=$3 CLHEAP_STRESS_OPS=$4 \
    CLHEAP_STRESS_CHECK=10 timeout 240 stdbuf -oL ${BIN[$1]}/test_stress > "$f" 2>&1
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
mkdir -p "$OUT/tt"
if [ "$part" = A ]; then
  for v in base new; do
    ( timeout 480 ${BIN[$v]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  for v in new base nopieces nonear; do stress $v 32768 256 3000000; done
  for v in new base; do stress $v 8192 64 1000000; done
  wait; echo "=== A done at $SECONDS s"
fi
if [ "$part" = B ]; then
  for round in 1 2; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 100 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$round" --only TierAlloc throughput >> "$OUT/log-B.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  for v in base new; do
    mkdir -p "$OUT/$v/oom"
    timeout 200 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/oom" --only TierAlloc oom > "$OUT/oom-$v.txt" 2>&1
    echo "oom $v: exit $? at $SECONDS s"
  done
  tiers 520 new
fi
if [ "$part" = C ]; then
  tiers 540 new base
fi
if [ "$part" = D ]; then
  ( timeout 400 ${BIN[new]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-new.txt" 2>&1
    echo "compile new: exit $? at $SECONDS s" ) &
  stress new 32768 256 3000000
  stress new 8192 64 1000000
  wait
  for round in 1 2 3; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 100 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$round" --only TierAlloc throughput >> "$OUT/log-D.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  tiers 530 new
fi
# E  D's machine was a fresh one, where base's clheap-bench program had not been built: each base round ran
#    out of its 100 s compiling. Base's program compiles first, then D's throughput rounds, then test_tier.
if [ "$part" = E ]; then
  timeout 320 ${BIN[base]}/clheap-bench --quick --only TierAlloc throughput > "$OUT/compile-base.txt" 2>&1
  echo "compile base: exit $? at $SECONDS s"
  for round in 1 2 3; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 100 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$round" --only TierAlloc throughput >> "$OUT/log-E.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  tiers 540 new
fi
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
