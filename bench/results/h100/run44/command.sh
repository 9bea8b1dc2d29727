#!/usr/bin/env bash
# H100 run 44, 2026-11-24: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r44/new = clheap-bench, test_heap, test_stress, test_grow built from 8391a72 + run44.patch
# (parts A and B's clheap-bench from the subset of it that their notes name; the test binaries from part A's).
# The patch: a free that released its chunk looks once more at its neighbours and merges with one freed
# meanwhile (clheap_circular_remerge; -DCLHEAP_FREE_REMERGE=0 turns it off, which is 8391a72's code);
# -DCLHEAP_CIRCULAR_TRACE counts the walks' steps and the merges in header words 23 - 31, and
# CLHEAP_CHURN_TRACE=1 prints them and the free chunks after every launch; later knobs below.
# A  churn for the four list allocators: remerge off and on, alternating, 2 rounds; then traced churn for
#    CMalloc and CMMalloc, off and on.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
N=.device-carry/r44/new
LISTS=CMalloc,CFMalloc,CMMalloc,CFMMalloc
declare -A OPT=([off]="-DCLHEAP_FREE_REMERGE=0" [on]="-DCLHEAP_FREE_REMERGE=1")
if [ "$part" = A ]; then
  for round in 1 2; do
    for v in off on; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/$v/$round" --only $LISTS --options "${OPT[$v]}" churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for v in off on; do
    CLHEAP_CHURN_TRACE=1 timeout 200 stdbuf -oL $N/clheap-bench --only CMalloc,CMMalloc \
      --options "${OPT[$v]} -DCLHEAP_CIRCULAR_TRACE" churn > "$OUT/trace-$v.txt" 2>&1
    echo "trace $v: exit $? at $SECONDS s"; grep -v "trace [0-9]" "$OUT/trace-$v.txt" | tail -4
  done
fi
# B  (clheap-bench rebuilt: the trace also prints the roving offset's level, and CLHEAP_CHURN_MIN_CHUNK sets
#    the binary pre-split's smallest chunk) remerge on: traced churn of CMalloc with the default smallest
#    chunk (256 B) and with 4 KiB; then churn of the four, 256 B and 4 KiB alternating, 2 rounds.
if [ "$part" = B ]; then
  for m in 256 4096; do
    CLHEAP_CHURN_MIN_CHUNK=$m CLHEAP_CHURN_TRACE=1 timeout 200 stdbuf -oL $N/clheap-bench --only CMalloc \
      --options "-DCLHEAP_CIRCULAR_TRACE" churn > "$OUT/trace-min$m.txt" 2>&1
    echo "trace min $m: exit $? at $SECONDS s"; grep -v "trace [0-9]" "$OUT/trace-min$m.txt" | tail -2
  done
  for round in 1 2; do
    for m in 256 4096; do
      mkdir -p "$OUT/min$m/$round"
      echo "== min $m $round" >> "$OUT/churn.txt"
      CLHEAP_CHURN_MIN_CHUNK=$m timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/min$m/$round" --only $LISTS churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn min $m $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
fi
# C  (clheap-bench rebuilt with two more knobs, both off by default: -DCLHEAP_RESTART_AT_ROVER=1, a walk that
#    met a header merged away and has none to step back to restarts at the roving offset, not at the pool's
#    first chunk; -DCLHEAP_ROVER_BIG=4096u, a claim moves the roving offset only if the chunk it took had
#    4096 units or more) remerge on: churn of the four, plain / rover restart / big / both, alternating,
#    2 rounds; then traced churn of CMalloc with rover restart and with both.
if [ "$part" = C ]; then
  declare -A K=([plain]="" [restart]="-DCLHEAP_RESTART_AT_ROVER=1" [big]="-DCLHEAP_ROVER_BIG=4096u"
                [both]="-DCLHEAP_RESTART_AT_ROVER=1 -DCLHEAP_ROVER_BIG=4096u")
  for round in 1 2; do
    for v in plain restart big both; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/$v/$round" --only $LISTS ${K[$v]:+--options "${K[$v]}"} churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for v in restart both; do
    CLHEAP_CHURN_TRACE=1 timeout 200 stdbuf -oL $N/clheap-bench --only CMalloc \
      --options "${K[$v]} -DCLHEAP_CIRCULAR_TRACE" churn > "$OUT/trace-$v.txt" 2>&1
    echo "trace $v: exit $? at $SECONDS s"; grep -v "trace [0-9]" "$OUT/trace-$v.txt" | tail -1
  done
fi
# D  (clheap-bench rebuilt: -DCLHEAP_ROVER_BACK=1, a free that leaves a whole pre-split chunk free moves its
#    sub-heap's roving offset back to it if the offset named a later chunk; CLHEAP_CHURN_ROVER_RESET=1, the
#    host sets roving offset 0 to the first chunk before each launch, as when fresh: a diagnosis only)
#    remerge on: churn of the four, plain / back / reset, alternating, 2 rounds; traced CMalloc with back.
if [ "$part" = D ]; then
  for round in 1 2; do
    for v in plain back reset; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      o=""; [ $v = back ] && o="-DCLHEAP_ROVER_BACK=1"
      e=""; [ $v = reset ] && e=1
      CLHEAP_CHURN_ROVER_RESET=$e timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/$v/$round" --only $LISTS ${o:+--options "$o"} churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  CLHEAP_CHURN_TRACE=1 timeout 200 stdbuf -oL $N/clheap-bench --only CMalloc \
    --options "-DCLHEAP_ROVER_BACK=1 -DCLHEAP_CIRCULAR_TRACE" churn > "$OUT/trace-back.txt" 2>&1
  echo "trace back: exit $? at $SECONDS s"; grep -v "trace [0-9]" "$OUT/trace-back.txt" | tail -1
fi
# E  papers (Alloc-Dealloc, Alloc-Cycle-Dealloc, Probability) for the four, remerge off then on.
if [ "$part" = E ]; then
  for v in off on; do
    mkdir -p "$OUT/$v"
    timeout 280 stdbuf -oL $N/clheap-bench --csv "$OUT/$v" --only $LISTS --options "${OPT[$v]}" papers > "$OUT/papers-$v.txt" 2>&1
    echo "papers $v: exit $? at $SECONDS s"
  done
fi
# F  remerge on (the default of the tests' build): test_heap and test_grow; test_stress (2^16 work-items,
#    1 GiB, 5 x 10^6 operations) for each of the four.
if [ "$part" = F ]; then
  timeout 120 $N/test_heap CMalloc CFMalloc CMMalloc CFMMalloc > "$OUT/test_heap.txt" 2>&1
  echo "test_heap: exit $? $(grep -c OK "$OUT/test_heap.txt") OK, $(grep -c FAILED "$OUT/test_heap.txt") FAILED at $SECONDS s"
  timeout 60 $N/test_grow > "$OUT/test_grow.txt" 2>&1
  echo "test_grow: exit $? at $SECONDS s"
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
      timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a.txt" 2>&1
    echo "stress $a: exit $? $(tail -4 "$OUT/stress-$a.txt" | grep "$a:") at $SECONDS s"
  done
fi
# G  .device-carry/r44/g = 401929a + a three-line knob (a walk that met a header merged away and has no header to step
#    back to steps to the dead header's prev, the chunk that most likely swallowed it, before it restarts from
#    its sub-heap's first chunk; -DCLHEAP_RESTART_AT_PREV=1, off by default; r44/prev/test_stress has it on):
#    churn of the four, plain / prev alternating, 2 rounds; test_stress of part F for CMalloc and CFMalloc, both.
if [ "$part" = G ]; then
  G=.device-carry/r44/g
  for round in 1 2; do
    for v in plain prev; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      o=""; [ $v = prev ] && o="-DCLHEAP_RESTART_AT_PREV=1"
      timeout 150 stdbuf -oL $G/clheap-bench --csv "$OUT/$v/$round" --only $LISTS ${o:+--options "$o"} churn 2>&1 | tee -a "$OUT/churn.txt"
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc; do
    for v in plain prev; do
      t=$G/test_stress; [ $v = prev ] && t=.device-carry/r44/prev/test_stress
      CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
        timeout 100 stdbuf -oL $t $a > "$OUT/stress-$a-$v.txt" 2>&1
      echo "stress $a $v: exit $? $(grep "work-items," "$OUT/stress-$a-$v.txt") at $SECONDS s"
    done
  done
fi
