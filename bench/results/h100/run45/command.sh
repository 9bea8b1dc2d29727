#!/usr/bin/env bash
# H100 run 45, 2026-11-24: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r44/g/test_stress, clheap-bench: 401929a's code (the same as 9f12db8's) = base.
# .device-carry/r45/new: 9f12db8 + run45-A.patch: a walk's steps back (to the header before one merged away)
# have a budget of their own (CLHEAP_MAX_STEPS_BACK 4096) instead of counting as restarts, and the
# single-offset variants' frees look once more at their neighbours after the release and merge again
# (clheap_circular_remerge, run 44's; -DCLHEAP_FREE_REMERGE=0 turns it off: "fix").
# A  test_stress (2^16 work-items, 1 GiB, 5 x 10^6 operations) for the four list allocators, base / fix / fix +
#    remerge; test_heap of the four; churn of the four, base / fix / remerge alternating, 2 rounds.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
B=.device-carry/r44/g
N=.device-carry/r45/new
LISTS=CMalloc,CFMalloc,CMMalloc,CFMMalloc
declare -A BIN=([base]=$B [fix]=$N [remerge]=$N)
declare -A OPT=([base]="" [fix]="-DCLHEAP_FREE_REMERGE=0" [remerge]="")
if [ "$part" = A ]; then
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    for v in base fix remerge; do
      CLHEAP_STRESS_OPTIONS="${OPT[$v]}" CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 \
        CLHEAP_STRESS_CHECK=10 timeout 100 stdbuf -oL ${BIN[$v]}/test_stress $a > "$OUT/stress-$a-$v.txt" 2>&1
      echo "stress $a $v: exit $? $(grep "work-items," "$OUT/stress-$a-$v.txt") at $SECONDS s"
    done
  done
  timeout 120 $N/test_heap CMalloc CFMalloc CMMalloc CFMMalloc > "$OUT/test_heap.txt" 2>&1
  echo "test_heap: exit $? $(grep -c OK "$OUT/test_heap.txt") OK, $(grep -c FAILED "$OUT/test_heap.txt") FAILED at $SECONDS s"
  for round in 1 2; do
    for v in base fix remerge; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL ${BIN[$v]}/clheap-bench --csv "$OUT/$v/$round" --only $LISTS ${OPT[$v]:+--options "${OPT[$v]}"} churn 2>&1 | tee -a "$OUT/churn.txt" | tail -4
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
fi
# B  .device-carry/r45/b: 5149159 + run45-B.patch: a claim takes in up to CLHEAP_CLAIM_ABSORBS (default 4) free
#    chunks after it, not across a wall, before it splits. Churn of the four with 0 (5149159's code) / 4 / 16,
#    alternating, 2 rounds; test_stress of part A for the four with 4; papers of CMalloc and CFMalloc, 0 and 4.
if [ "$part" = B ]; then
  N=.device-carry/r45/b
  for round in 1 2; do
    for k in 0 4 16; do
      mkdir -p "$OUT/a$k/$round"
      echo "== absorbs $k $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/a$k/$round" --only $LISTS --options "-DCLHEAP_CLAIM_ABSORBS=${k}u" churn 2>&1 | tee -a "$OUT/churn.txt" | tail -4
      echo "churn $k $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
      timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a-a4.txt" 2>&1
    echo "stress $a a4: exit $? $(grep "work-items," "$OUT/stress-$a-a4.txt") at $SECONDS s"
  done
  for k in 0 4; do
    mkdir -p "$OUT/papers-a$k"
    timeout 200 stdbuf -oL $N/clheap-bench --csv "$OUT/papers-a$k" --only CMalloc,CFMalloc --options "-DCLHEAP_CLAIM_ABSORBS=${k}u" papers > "$OUT/papers-a$k.txt" 2>&1
    echo "papers $k: exit $? at $SECONDS s"
  done
fi
# C  .device-carry/r45/c: 5149159 + run45-C.patch: a claim moves the roving offset only if the chunk it took had
#    CLHEAP_ROVER_MIN_UNITS units or more (0 by default: 5149159's code; run 44 C's "big" knob, then measured with
#    remerge on). Churn of the four, 0 / 4096, alternating, 2 rounds; test_stress of part A for the four with 4096.
if [ "$part" = C ]; then
  N=.device-carry/r45/c
  for round in 1 2; do
    for k in 0 4096; do
      mkdir -p "$OUT/r$k/$round"
      echo "== rover min $k $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/r$k/$round" --only $LISTS --options "-DCLHEAP_ROVER_MIN_UNITS=${k}u" churn 2>&1 | tee -a "$OUT/churn.txt" | tail -4
      echo "churn $k $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_OPTIONS="-DCLHEAP_ROVER_MIN_UNITS=4096u" CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 \
      CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a-r4096.txt" 2>&1
    echo "stress $a r4096: exit $? $(grep "work-items," "$OUT/stress-$a-r4096.txt") at $SECONDS s"
  done
fi
# D  papers of the four with .device-carry/r45/c, CLHEAP_ROVER_MIN_UNITS 0 and 4096.
if [ "$part" = D ]; then
  N=.device-carry/r45/c
  for k in 0 4096; do
    mkdir -p "$OUT/papers-r$k"
    timeout 280 stdbuf -oL $N/clheap-bench --csv "$OUT/papers-r$k" --only $LISTS --options "-DCLHEAP_ROVER_MIN_UNITS=${k}u" papers > "$OUT/papers-r$k.txt" 2>&1
    echo "papers $k: exit $? at $SECONDS s"
  done
fi
# E  .device-carry/r45/e: 5149159 + run45-E.patch: a claim moves the roving offset only if the chunk it took is
#    at least the binary pre-split's chunk at CLHEAP_ROVER_LEVEL_PERCENT of its levels (root >> (levels * P / 100);
#    100, the default, is 5149159's code). Why relative: part D's 4096 units froze the offset in small heaps and
#    sub-heaps. Churn of the four, P = 100 / 50 / 75, alternating, 2 rounds; test_stress of part A with 50.
if [ "$part" = E ]; then
  N=.device-carry/r45/e
  for round in 1 2; do
    for k in 100 50 75; do
      mkdir -p "$OUT/p$k/$round"
      echo "== rover level $k% $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/p$k/$round" --only $LISTS --options "-DCLHEAP_ROVER_LEVEL_PERCENT=${k}u" churn 2>&1 | tee -a "$OUT/churn.txt" | tail -4
      echo "churn $k $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_OPTIONS="-DCLHEAP_ROVER_LEVEL_PERCENT=50u" CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 \
      CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a-p50.txt" 2>&1
    echo "stress $a p50: exit $? $(grep "work-items," "$OUT/stress-$a-p50.txt") at $SECONDS s"
  done
fi
# F  papers of the four with .device-carry/r45/e, CLHEAP_ROVER_LEVEL_PERCENT 100 and 75 (50 slowed the multi variants in E).
if [ "$part" = F ]; then
  N=.device-carry/r45/e
  for k in 100 75; do
    mkdir -p "$OUT/papers-p$k"
    timeout 190 stdbuf -oL $N/clheap-bench --csv "$OUT/papers-p$k" --only $LISTS --options "-DCLHEAP_ROVER_LEVEL_PERCENT=${k}u" papers > "$OUT/papers-p$k.txt" 2>&1
    echo "papers $k: exit $? at $SECONDS s"
  done
fi
# G  .device-carry/r45/g: 5149159 + run45-G.patch (the rule as landed: single-offset variants only, a claim moves
#    the offset if its chunk is at least the pre-split's at 3/4 of its levels or 8 times the request);
#    base: .device-carry/r45/c with CLHEAP_ROVER_MIN_UNITS=0 (5149159's code). Churn of the four, base / new,
#    alternating, 2 rounds; papers of CMalloc and CFMalloc, base and new; test_stress of part A and test_heap
#    for the four, new.
if [ "$part" = G ]; then
  declare -A GB=([base]=.device-carry/r45/c [new]=.device-carry/r45/g)
  declare -A GO=([base]="-DCLHEAP_ROVER_MIN_UNITS=0u" [new]="")
  for round in 1 2; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      echo "== $v $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL ${GB[$v]}/clheap-bench --csv "$OUT/$v/$round" --only $LISTS ${GO[$v]:+--options "${GO[$v]}"} churn 2>&1 | tee -a "$OUT/churn.txt" | tail -4
      echo "churn $v $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for v in base new; do
    mkdir -p "$OUT/papers-$v"
    timeout 150 stdbuf -oL ${GB[$v]}/clheap-bench --csv "$OUT/papers-$v" --only CMalloc,CFMalloc ${GO[$v]:+--options "${GO[$v]}"} papers > "$OUT/papers-$v.txt" 2>&1
    echo "papers $v: exit $? at $SECONDS s"
  done
  for a in CMalloc CFMalloc CMMalloc CFMMalloc; do
    CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
      timeout 100 stdbuf -oL .device-carry/r45/g/test_stress $a > "$OUT/stress-$a-new.txt" 2>&1
    echo "stress $a new: exit $? $(grep "work-items," "$OUT/stress-$a-new.txt") at $SECONDS s"
  done
  timeout 120 .device-carry/r45/g/test_heap CMalloc CFMalloc CMMalloc CFMMalloc > "$OUT/test_heap.txt" 2>&1
  echo "test_heap: exit $? $(grep -c OK "$OUT/test_heap.txt") OK, $(grep -c FAILED "$OUT/test_heap.txt") FAILED at $SECONDS s"
fi
# H  .device-carry/r45/h: 0f5d3f8 + run45-H.patch: run 44's remerge for the single-offset variants only
#    (-DCLHEAP_FREE_REMERGE=0 is 0f5d3f8's code). Churn of CMalloc and CFMalloc, 0 / 1, alternating, 3 rounds;
#    test_stress of part A and papers of both with 1, papers with 0.
if [ "$part" = H ]; then
  N=.device-carry/r45/h
  for round in 1 2 3; do
    for k in 0 1; do
      mkdir -p "$OUT/m$k/$round"
      echo "== remerge $k $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/m$k/$round" --only CMalloc,CFMalloc --options "-DCLHEAP_FREE_REMERGE=$k" churn 2>&1 | tee -a "$OUT/churn.txt" | tail -2
      echo "churn $k $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc; do
    CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 \
      timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a-m1.txt" 2>&1
    echo "stress $a m1: exit $? $(grep "work-items," "$OUT/stress-$a-m1.txt") at $SECONDS s"
  done
  for k in 0 1; do
    mkdir -p "$OUT/papers-m$k"
    timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/papers-m$k" --only CMalloc,CFMalloc --options "-DCLHEAP_FREE_REMERGE=$k" papers > "$OUT/papers-m$k.txt" 2>&1
    echo "papers $k: exit $? at $SECONDS s"
  done
fi
# I  .device-carry/r45/i: 31ac8dc + run45-I.patch: a single-offset walk whose first chunk (the offset's) was
#    merged away reads the offset again, once, instead of restarting at the pool's first chunk
#    (-DCLHEAP_REREAD_ROVER=1; 0 is 31ac8dc's code). Churn of CMalloc and CFMalloc, 0 / 1, alternating, 3 rounds;
#    test_stress of part A for both with 1.
if [ "$part" = I ]; then
  N=.device-carry/r45/i
  for round in 1 2 3; do
    for k in 0 1; do
      mkdir -p "$OUT/x$k/$round"
      echo "== reread $k $round" >> "$OUT/churn.txt"
      timeout 150 stdbuf -oL $N/clheap-bench --csv "$OUT/x$k/$round" --only CMalloc,CFMalloc --options "-DCLHEAP_REREAD_ROVER=$k" churn 2>&1 | tee -a "$OUT/churn.txt" | tail -2
      echo "churn $k $round: exit ${PIPESTATUS[0]} at $SECONDS s"
    done
  done
  for a in CMalloc CFMalloc; do
    CLHEAP_STRESS_OPTIONS="-DCLHEAP_REREAD_ROVER=1" CLHEAP_STRESS_ITEMS=65536 CLHEAP_STRESS_HEAP_MIB=1024 \
      CLHEAP_STRESS_OPS=5000000 CLHEAP_STRESS_CHECK=10 timeout 100 stdbuf -oL $N/test_stress $a > "$OUT/stress-$a-x1.txt" 2>&1
    echo "stress $a x1: exit $? $(grep "work-items," "$OUT/stress-$a-x1.txt") at $SECONDS s"
  done
fi
# J  .device-carry/r45/j: 965d229 + run45-J.patch (a trace, -DCLHEAP_CIRCULAR_TRACE: per launch the claims, walk
#    steps, free chunks too small and used chunks passed, steps back, dead first chunks (restarts), walk merges,
#    remerges, claims that moved the offset, and where the offset stands as a share of the pool; counted once per
#    claim, not per step). Traced churn of CMalloc and CFMalloc, 2 rounds.
if [ "$part" = J ]; then
  for round in 1 2; do
    CLHEAP_CHURN_TRACE=1 timeout 120 stdbuf -oL .device-carry/r45/j/clheap-bench --only CMalloc,CFMalloc \
      --options "-DCLHEAP_CIRCULAR_TRACE" churn > "$OUT/trace-$round.txt" 2>&1
    echo "trace $round: exit $? at $SECONDS s"; grep -v "trace [0-9]" "$OUT/trace-$round.txt" | tail -3
  done
fi
# every part: the outputs in one archive (the device tool returns a limited number of files)
tar -C "$OUT" -czf /tmp/run45-$part.tgz . && rm -rf "${OUT:?}"/* && mv /tmp/run45-$part.tgz "$OUT/"
