#!/usr/bin/env bash
# H100 run 52, 2026-11-26: bash bench/results/h100/run52/command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/new: clheap-bench and test_stress (Release) of the commit this run reports;
# .device-carry/prev: clheap-bench of a750754 (run 51's device code, with its review);
# .device-carry/gal: gallatin-bench of 13610af (nvcc 13.0, sm_90, Gallatin 1aa70ad);
# .device-carry/lib: libOpenCL, libcmocka.
# A  compile new's and prev's throughput programs and new's test_stress program at once,
#    Gallatin's oom-launch meanwhile (10 s a launch); then oom-launch of new and prev, 3
#    rounds a launch; then B if its stress fits before UNTIL, else T.
# B  test_stress at 2^20 work-items on 8 GiB, 10^8 operations, every word verified; then
#    rounds of the throughput sweep at 8 GiB, new, prev and Gallatin in turn, until UNTIL.
# T  (a warm machine: the compile cache of A) throughput rounds only, until UNTIL.
# Z  (.device-carry/new rebuilt with the cheap gates; .device-carry/hold: clheap-bench of
#    3a9b919, the commit before them) compile new's, hold's and prev's throughput programs
#    at once; oom-launch of new and hold; then T.
# C  (.device-carry/new: clheap-bench with the compile test) cold builds of every allocator's
#    heap and of a user kernel with 1, 4 and 8 sites, binaries kept; run alone, so that
#    clheap-bench turns NVIDIA's compile cache off itself.
# X  the mixed 16 B - 4 KiB shapes at a670df6 (.device-carry/base), at each commit since
#    that changed cl/ (.device-carry/bis/COMMIT), at a750754 and new: every program
#    compiled at once, then rounds over all of them in turn, until UNTIL.
set -u
part=$1
R=/tmp/r52; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-570}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [ "$part" = A ]; then
  for v in new prev; do
    ( timeout 400 $B/$v/clheap-bench --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( CLHEAP_STRESS_OPS=20000 timeout 400 $B/new/test_stress TierAlloc > $R/compile-stress.txt 2>&1
    echo "compile stress: exit $? at $SECONDS s" ) &
  mkdir -p $R/gal
  timeout 200 $B/gal/gallatin-bench --oom-launch --runs 3 --launch-timeout 10 --csv $R/gal > $R/gal/log.txt 2>&1
  echo "gallatin oom-launch: exit $? at $SECONDS s"
  wait; echo "=== compiled at $SECONDS s"
  for v in new prev; do
    mkdir -p $R/$v
    timeout 120 $B/$v/clheap-bench --runs 3 --csv $R/$v --only TierAlloc oom-launch > $R/$v/log.txt 2>&1
    echo "oom-launch $v: exit $? at $SECONDS s"
    cat $R/$v/log.txt
  done
  part=T; [ $((SECONDS + 250)) -lt $UNTIL ] && part=B
fi
if [ "$part" = B ]; then
  CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_CHECK=15 \
    timeout 250 stdbuf -oL $B/new/test_stress TierAlloc > $R/stress.txt 2>&1
  echo "stress: exit $? $(grep 'TierAlloc:' $R/stress.txt | tail -1) at $SECONDS s"
  part=T
fi
if [ "$part" = C ]; then
  mkdir -p $R/compile
  timeout 540 $B/new/clheap-bench --csv $R/compile compile > $R/compile/log.txt 2>&1
  echo "compile: exit $? at $SECONDS s"; cat $R/compile/log.txt
fi
if [ "$part" = Z ]; then
  for v in new hold prev; do
    ( timeout 400 $B/$v/clheap-bench --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  wait; echo "=== compiled at $SECONDS s"
  for v in new hold; do
    mkdir -p $R/$v
    timeout 120 $B/$v/clheap-bench --runs 3 --csv $R/$v --only TierAlloc oom-launch > $R/$v/log.txt 2>&1
    echo "oom-launch $v: exit $? at $SECONDS s"
    cat $R/$v/log.txt
  done
  part=T
fi
if [ "$part" = X ]; then
  vs="base $(cd $B/bis && ls) prev new"
  path() { case $1 in base|prev|new) echo $B/$1/clheap-bench ;; *) echo $B/bis/$1/clheap-bench ;; esac; }
  for v in $vs; do
    ( timeout 400 $(path $v) --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  wait; echo "=== compiled at $SECONDS s"
  r=0
  while [ $((SECONDS + 60)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in $vs; do
      mkdir -p $R/mix/$v/$r
      timeout 60 $(path $v) --csv $R/mix/$v/$r --only TierAlloc \
        --shapes 4096xmixed-4K,16384xmixed-4K,65536xmixed-4K,262144xmixed-4K,65536x16 throughput > $R/mix/$v/$r/log.txt 2>&1
    done
    echo "round $r at $SECONDS s"
  done
fi
if [ "$part" = Y ]; then
  # .device-carry/exp: clheap-bench of new with -D knobs (the patch is in the body of
  # the commit that adds part Y); VS the variants, the first run's by default
  declare -A opt=([exp]="" [exp-store]="-DCLHEAP_EXP_RUNS_OPEN_STORE=1" [exp-none]="-DCLHEAP_EXP_NO_RUNS_OPEN=1"
                  [exp-nostretch]="-DCLHEAP_EXP_NO_STRETCH=1" [exp-nogates]="-DCLHEAP_EXP_NO_GATES=1"
                  [exp-oldlast]="-DCLHEAP_EXP_OLD_LAST=1" [exp-both]="-DCLHEAP_EXP_NO_GATES=1 -DCLHEAP_EXP_OLD_LAST=1"
                  [exp-nothingoff]="-DCLHEAP_EXP_NOTHING_OFF=1")
  vs=${VS:-"base prev exp exp-store exp-none exp-nostretch"}
  path() { case $1 in base|prev) echo $B/$1/clheap-bench ;; *) echo $B/exp/clheap-bench ;; esac; }
  for v in $vs; do
    ( timeout 400 $(path $v) ${opt[$v]:+--options "${opt[$v]}"} --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  wait; echo "=== compiled at $SECONDS s"
  r=0
  while [ $((SECONDS + 40)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in $vs; do
      mkdir -p $R/mix/$v/$r
      timeout 60 $(path $v) ${opt[$v]:+--options "${opt[$v]}"} --csv $R/mix/$v/$r --only TierAlloc \
        --shapes 4096xmixed-4K,16384xmixed-4K,65536xmixed-4K,262144xmixed-4K,65536x16 throughput > $R/mix/$v/$r/log.txt 2>&1
    done
    echo "round $r at $SECONDS s"
  done
  mkdir -p $R/oom
  timeout 100 $B/exp/clheap-bench --runs 3 --csv $R/oom --only TierAlloc oom-launch > $R/oom/log.txt 2>&1
  echo "oom-launch exp: exit $? at $SECONDS s"; cat $R/oom/log.txt
fi
if [ "$part" = T ]; then
  r=${ROUND0:-0}
  while [ $((SECONDS + 110)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in new prev; do
      mkdir -p $R/tp/$v/$r
      timeout 100 $B/$v/clheap-bench --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
      echo "throughput $v $r: exit $? at $SECONDS s"
    done
    mkdir -p $R/tp/gal/$r
    timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
    echo "gallatin $r: exit $? at $SECONDS s"
  done
fi
echo "done at $SECONDS s"
tar czf $OUT/run52-$part.tgz -C $R . # one file: $OUT returns few files and shallow folders
