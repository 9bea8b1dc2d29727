#!/usr/bin/env bash
# H100 run 41, 2026-11-24: bash command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# A  .device-carry/dbg41/test_stress = 272d625 with trace-A.patch (counters of the page tier's ways in spare
#    header words, printed after rounds 1-8 and every 16th; program options from STRESS_OPTIONS; the variants'
#    knobs), every variant at once (they compile side by side; the GPU time-slices their kernels): 10^6
#    operations at 32,768 work-items on 256 MiB, then 10^6 at 8,192 on 64 MiB.
# B  .device-carry/dbg41/new = trace-B.patch (A's knobs, defaults: every low-end take of up to a segment tries the
#    low frontier, fits in F only below its segment, no random sweep, no frontier store after a break):
#    test_stress 3 x 10^6 at 32,768 / 256 MiB and 10^6 at 8,192 / 64 MiB; throughput at 8 GiB, base
#    (.device-carry/build, a5e5f34, the allocator of 272d625) and new alternating, 3 rounds; test_tier in turn.
# C  .device-carry/dbg41/new = trace-C.patch (B's plus the knobs STORE, WRAP and test_tier's program options from
#    STRESS_OPTIONS): variants fwd (-DSTORE=2 -DWRAP=1: a break moves the low frontier only forward; an add past
#    the pool's end restarts it at the lowest whole segment) and allfw (-DSTORE=1: a break moves it, as before):
#    test_stress as in B, both at once; throughput at 8 GiB, base / fwd / allfw, 2 rounds; test_tier in turn.
#    (The throughput runs did not happen: the three bench programs had not compiled in 300 s, beside two
#    test_stress runs, and each run's 60 s went on compiling.)
# D  allfw only: its and base's bench programs compile (420 s) while test_tier runs in turn; then one round of
#    throughput, base and allfw.
set -u
part=$1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
C=.device-carry
mkdir -p "$OUT/tt"
if [ "$part" = A ]; then
  T=$C/dbg41/test_stress
  declare -A OPT=([base]="" [allf]="-DALL_FRONTIER=1 -DLIMIT=1 -DNO_SWEEP=1" [low1]="-DLOW_TRIES=1"
                  [low0]="-DLOW_TRIES=0" [held]="-DCLAIM_HELD=1" [nosweep]="-DNO_SWEEP=1")
  one() { # variant items mib
    STRESS_OPTIONS="-DCLHEAP_TRACE ${OPT[$1]}" CLHEAP_STRESS_ITEMS=$2 CLHEAP_STRESS_HEAP_MIB=$3 CLHEAP_STRESS_OPS=1000000 \
      CLHEAP_STRESS_CHECK=8 timeout 280 $T > "$OUT/tt/$1-$2-$3.txt" 2>&1
    echo "$1 $2 $3: exit $? $(grep -m1 'TierAlloc:' "$OUT/tt/$1-$2-$3.txt")"
  }
  for v in "${!OPT[@]}"; do ( one $v 32768 256; one $v 8192 64 ) & done
  wait
fi
if [ "$part" = B ]; then
  declare -A BENCH=([base]=$C/build/bench/clheap-bench [new]=$C/dbg41/new/clheap-bench)
  for v in base new; do
    ( timeout 300 ${BENCH[$v]} --quick --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1 ) &
  done
  ( for shape in "32768 256 3000000" "8192 64 1000000"; do
      set -- $shape
      STRESS_OPTIONS="-DCLHEAP_TRACE" CLHEAP_STRESS_ITEMS=$1 CLHEAP_STRESS_HEAP_MIB=$2 CLHEAP_STRESS_OPS=$3 \
        CLHEAP_STRESS_CHECK=10 timeout 200 $C/dbg41/new/test_stress > "$OUT/stress-$1-$2.txt" 2>&1
      echo "stress $1 $2: exit $? $(grep -m1 'TierAlloc:' "$OUT/stress-$1-$2.txt")"
    done ) &
  wait; echo "=== compiled, stress done at $SECONDS s"
  for round in 1 2 3; do
    for v in base new; do
      mkdir -p "$OUT/$v/$round"
      timeout 60 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v/$round" --only TierAlloc throughput >> "$OUT/log-B.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  i=0
  while [ $SECONDS -lt 540 ]; do
    i=$((i + 1)); f="$OUT/tt/new-$i.txt"
    timeout $((560 - SECONDS)) $C/dbg41/new/test_tier > "$f" 2>&1
    echo "test_tier new $i: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ')"
  done
fi
if [ "$part" = C ]; then
  N=$C/dbg41/new
  declare -A OPT=([fwd]="-DSTORE=2 -DWRAP=1" [allfw]="-DSTORE=1" [base]="")
  declare -A BENCH=([base]=$C/build/bench/clheap-bench [fwd]=$N/clheap-bench [allfw]=$N/clheap-bench)
  for v in base fwd allfw; do
    ( timeout 300 ${BENCH[$v]} --quick --options "${OPT[$v]}" --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1 ) &
  done
  for v in fwd allfw; do
    ( for shape in "32768 256 3000000" "8192 64 1000000"; do
        set -- $shape
        STRESS_OPTIONS="-DCLHEAP_TRACE ${OPT[$v]}" CLHEAP_STRESS_ITEMS=$1 CLHEAP_STRESS_HEAP_MIB=$2 CLHEAP_STRESS_OPS=$3 \
          CLHEAP_STRESS_CHECK=10 timeout 200 $N/test_stress > "$OUT/stress-$v-$1-$2.txt" 2>&1
        echo "stress $v $1 $2: exit $? $(grep -m1 'TierAlloc:' "$OUT/stress-$v-$1-$2.txt")"
      done ) &
  done
  wait; echo "=== compiled, stress done at $SECONDS s"
  for round in 1 2; do
    for v in base fwd allfw; do
      mkdir -p "$OUT/$v/$round"
      timeout 60 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v/$round" --options "${OPT[$v]}" --only TierAlloc throughput >> "$OUT/log-C.txt" 2>&1
      echo "throughput $v $round: exit $? at $SECONDS s"
    done
  done
  i=0
  while [ $SECONDS -lt 530 ]; do
    i=$((i + 1))
    for v in fwd allfw; do
      f="$OUT/tt/$v-$i.txt"
      STRESS_OPTIONS="${OPT[$v]}" timeout $((570 - SECONDS)) $N/test_tier > "$f" 2>&1
      echo "test_tier $v $i: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ')"
    done
  done
fi
if [ "$part" = D ]; then
  N=$C/dbg41/new
  declare -A OPT=([allfw]="-DSTORE=1" [base]="")
  declare -A BENCH=([base]=$C/build/bench/clheap-bench [allfw]=$N/clheap-bench)
  for v in base allfw; do
    ( timeout 420 ${BENCH[$v]} --quick --options "${OPT[$v]}" --only TierAlloc throughput > "$OUT/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( i=0
    while [ $SECONDS -lt 400 ]; do
      i=$((i + 1)); f="$OUT/tt/allfw-$i.txt"
      STRESS_OPTIONS="${OPT[allfw]}" timeout $((430 - SECONDS)) $N/test_tier > "$f" 2>&1
      echo "test_tier allfw $i: exit $? $(grep -c 'mixed round.* 0 NULL' "$f") of 6 mixed rounds 0 NULL $(grep 'mixed round' "$f" | grep -v ' 0 NULL' | tr '\n' ' ')"
    done ) &
  wait
  for v in base allfw; do
    mkdir -p "$OUT/$v"
    timeout 60 stdbuf -oL ${BENCH[$v]} --csv "$OUT/$v" --options "${OPT[$v]}" --only TierAlloc throughput >> "$OUT/log-D.txt" 2>&1
    echo "throughput $v: exit $? at $SECONDS s"
  done
fi
(cd "$OUT" && tar czf /tmp/part-$part.tgz . && rm -rf ./* && mv /tmp/part-$part.tgz "$OUT/")
