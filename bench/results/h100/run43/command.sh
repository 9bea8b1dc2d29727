#!/usr/bin/env bash
# H100 run 43, 2026-11-24: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r43/new = 00a11c4's clheap-bench, test_heap, test_stress, test_grow (the CircularMalloc family's
# frees merge back too, not across pre-split chunks); .device-carry/build = a5e5f34's (the family's code as
# before 00a11c4, unchanged since 6b991a8), the base.
# A  churn programs compile (--quick, base and new at once), then clheap-bench churn for the four list
#    allocators, base and new alternating, 2 rounds; new's test_heap and test_grow for them; new's test_stress
#    (2^16 work-items, 1 GiB, 5 x 10^6 operations) for each.
# B  .device-carry/r43/new2 = 4fbec73's (a merge back checks that the predecessor is linked; merges leave the
#    roving offset alone unless they killed the header it names). churn for the four list allocators: base,
#    new2, new2 with --options -DCLHEAP_FREE_MOVES_ROVER=1 (merges move it, as in A) and with
#    -DCLHEAP_ROVER_WRAPS_HOME=1 (a claim past its sub-heap's end sends it home), alternating, 2 rounds; then
#    new2's test_heap and test_grow, and test_stress of part A for CMMalloc and CFMMalloc, base and new2.
# C  papers (Alloc-Dealloc, Alloc-Cycle-Dealloc, Probability) for the four, base then new2.
# D  papers for CMalloc and CFMalloc: new2, then new2 with -DCLHEAP_FREE_MOVES_ROVER=1 (is C's slower
#    acd-iterations at stride 32 the roving offset's rule or the merge back's cost?).
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
C=.device-carry N=.device-carry/r43/new
declare -A BENCH=([base]=$C/build/bench/clheap-bench [new]=$N/clheap-bench)
LISTS=CMalloc,CFMalloc,CMMalloc,CFMMalloc
if [ "$part" = A ]; then
  for v in base new; do
    ( timeout 300 ${BENCH[$v]} --quick --only $LISTS churn > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  wait
  for round in 1 2; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 120 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v/$round" --only $LISTS churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  timeout 120 $N/test_heap CMalloc CFMalloc CMMalloc CFMMalloc > "$OUT/test_heap.txt" 2>&1
  echo "test_heap: exit $? $(grep -c OK "$OUT/test_heap.txt") OK, $(grep -c FAILED "$OUT/test_heap.txt") FAILED at $SECONDS s"
  timeout 60 $N/test_grow > "$OUT/test_grow.txt" 2>&1
  echo "test_grow: exit $? at $SECONDS s"
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
      timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a.txt" 2>&1
    echo "stress $a: exit $? $(grep -i 'operations\|NULL\|passed\|failed' "$OUT/stress-$a.txt" | tail -3 | tr '\n' ' ') at $SECONDS s"
  done
fi
if [ "$part" = B ]; then
  N=.device-carry/r43/new2
  declare -A OPT=([base]="" [new2]="" [moves]="-DCLHEAP_FREE_MOVES_ROVER=1" [home]="-DCLHEAP_ROVER_WRAPS_HOME=1")
  for round in 1 2; do
    for v in base new2 moves home; do
      b=$N/clheap-bench; [ $v = base ] && b=$C/build/bench/clheap-bench
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $b --csv "$OUT/$v/$round" --only $LISTS ${OPT[$v]:+--options "${OPT[$v]}"} churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  timeout 120 $N/test_heap CMalloc CFMalloc CMMalloc CFMMalloc > "$OUT/test_heap.txt" 2>&1
  echo "test_heap: exit $? $(grep -c OK "$OUT/test_heap.txt") OK, $(grep -c FAILED "$OUT/test_heap.txt") FAILED at $SECONDS s"
  timeout 60 $N/test_grow > "$OUT/test_grow.txt" 2>&1
  echo "test_grow: exit $? at $SECONDS s"
  for a in CMMalloc CFMMalloc; do
    for v in base new2; do
      t=$N/test_stress; [ $v = base ] && t=$C/build/tests/test_stress
      CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
        timeout 100 stdbuf -oL $t $a > "$OUT/stress-$a-$v.txt" 2>&1
      echo "stress $a $v: exit $? $(tail -4 "$OUT/stress-$a-$v.txt" | grep "$a:") at $SECONDS s"
    done
  done
fi
if [ "$part" = C ]; then
  N=.device-carry/r43/new2
  declare -A BENCH=([base]=$C/build/bench/clheap-bench [new]=$N/clheap-bench)
  for v in base new; do
    mkdir -p "$OUT/$v"
    timeout 280 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v" --only $LISTS papers > "$OUT/papers-$v.txt" 2>&1
    echo "papers $v: exit $? at $SECONDS s"
  done
fi
if [ "$part" = D ]; then
  N=.device-carry/r43/new2
  for v in new2 moves; do
    mkdir -p "$OUT/$v"
    opt=(); [ $v = moves ] && opt=(--options -DCLHEAP_FREE_MOVES_ROVER=1)
    timeout 250 stdbuf -oL $N/clheap-bench --csv "$OUT/$v" --only CMalloc,CFMalloc "${opt[@]}" papers > "$OUT/papers-$v.txt" 2>&1
    echo "papers $v: exit $? at $SECONDS s"
  done
fi
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
