#!/usr/bin/env bash
# H100 run 42, 2026-11-24: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r42/new = d770471's test_stress, test_tier and clheap-bench (low spans); .device-carry/build =
# a5e5f34's (the allocator of 272d625 and c725b10: the low frontier), the base.
# A  new and base bench programs compile (NVIDIA's cache keeps them for part B) while new's test_stress runs
#    3 x 10^6 operations at 32,768 work-items on 256 MiB, then 10^6 at 8,192 on 64 MiB (run 41's shapes);
#    then test_tier in turn.
# B  throughput at 8 GiB, base and new alternating, 3 rounds; then test_tier in turn.
# C  .device-carry/r42/new2 = 173b871's (up to 64 spans, about 1/32 of the pool): A's stress and compiles with
#    new2 for new, then throughput base and new2 alternating, 3 rounds; then new2's test_tier in turn.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
C=.device-carry N=.device-carry/r42/new
[ "$part" = C ] && N=.device-carry/r42/new2
declare -A BENCH=([base]=$C/build/bench/clheap-bench [new]=$N/clheap-bench)
mkdir -p "$OUT/tt"
tiers() { # until SECONDS: test_tier runs in turn
  local i=0 f
  while [ $SECONDS -lt $1 ]; do
    i=$((i + 1)); f="$OUT/tt/$part-$i.txt"
    timeout $(($1 + 30 - SECONDS)) $N/test_tier > "$f" 2>&1
    echo "test_tier $i: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ')"
  done
}
if [ "$part" = A ] || [ "$part" = C ]; then
  for v in base new; do
    ( timeout 420 ${BENCH[$v]} --quick --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( for shape in "32768 256 3000000" "8192 64 1000000"; do
      set -- $shape
      CLHEAP_STRESS_ITEMS=$1 CLHEAP_STRESS_HEAP_MIB=$2 CLHEAP_STRESS_OPS=$3 CLHEAP_STRESS_CHECK=10 \
        timeout 250 stdbuf -oL $N/test_stress > "$OUT/stress-$1-$2.txt" 2>&1
      echo "stress $1 $2: exit $? $(grep -m1 'TierAlloc:' "$OUT/stress-$1-$2.txt") at $SECONDS s"
    done ) &
  wait; echo "=== compiled, stress done at $SECONDS s"
  [ "$part" = A ] && tiers 540
fi
if [ "$part" = B ] || [ "$part" = C ]; then
  for round in 1 2 3; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 75 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v/$round" --only TierAlloc throughput >> "$OUT/log-B.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  tiers 540
fi
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
