#!/usr/bin/env bash
# H100 run 51, 2026-11-26: bash bench/results/h100/run51/command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/new: clheap-bench and test_stress (Release) of 5b45d72 in part A, of 896a642 in part C;
# .device-carry/prev: clheap-bench of 13610af (the device code before clheap_tier_nothing_for, the new
#   oom-launch benchmark); .device-carry/base: clheap-bench of a670df6 (run 50's); .device-carry/gal:
#   gallatin-bench of 13610af (nvcc 13.0, sm_90, Gallatin 1aa70ad); .device-carry/lib: libOpenCL, libcmocka.
# A  compile new's and prev's throughput programs and new's test_stress program at once, Gallatin's
#    oom-launch meanwhile; then oom-launch of new and prev, 3 rounds a launch.
# B  (the cache of A) test_stress at 2^20 work-items on 8 GiB, 10^8 operations, every word verified; then
#    rounds of the throughput sweep at 8 GiB, new, base and Gallatin in turn, until the time is spent.
# C  (the cache of A; .device-carry/new rebuilt at the next commit, the warp's NULLs counted with one add)
#    compile new's programs, oom-launch of new, then B.
# D  (.device-carry/new's clheap-bench rebuilt with large requests from the warp, pieces included, looking
#    (clheap_tier_nothing_for) before their first take; not committed: the patch and its numbers are in the
#    body of the commit that adds part D) compile, oom-launch of new.
set -u
part=$1
R=/tmp/r51; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
[ -f $B/nvcache.tgz ] && tar xzf $B/nvcache.tgz -C $CUDA_CACHE_PATH
UNTIL=${UNTIL:-560}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [ "$part" = A ]; then
  for v in new prev; do
    ( timeout 420 $B/$v/clheap-bench --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( CLHEAP_STRESS_OPS=20000 timeout 420 $B/new/test_stress TierAlloc > $R/compile-stress.txt 2>&1
    echo "compile stress: exit $? at $SECONDS s" ) &
  mkdir -p $R/gal
  timeout 280 $B/gal/gallatin-bench --oom-launch --runs 3 --launch-timeout 30 --csv $R/gal > $R/gal/log.txt 2>&1
  echo "gallatin oom-launch: exit $? at $SECONDS s"
  wait; echo "=== compiled at $SECONDS s"
  for v in new prev; do
    mkdir -p $R/$v
    timeout 120 $B/$v/clheap-bench --runs 3 --csv $R/$v --only TierAlloc oom-launch > $R/$v/log.txt 2>&1
    echo "oom-launch $v: exit $? at $SECONDS s"
  done
fi
if [ "$part" = D ]; then
  ( timeout 300 $B/new/clheap-bench --quick --only TierAlloc throughput > $R/compile-new.txt 2>&1
    echo "compile new: exit $? at $SECONDS s" ) &
  wait
  mkdir -p $R/new
  timeout 120 $B/new/clheap-bench --runs 3 --csv $R/new --only TierAlloc oom-launch > $R/new/log.txt 2>&1
  echo "oom-launch new: exit $? at $SECONDS s"
  cat $R/new/log.txt
fi
if [ "$part" = C ]; then
  ( timeout 300 $B/new/clheap-bench --quick --only TierAlloc throughput > $R/compile-new.txt 2>&1
    echo "compile new: exit $? at $SECONDS s" ) &
  ( CLHEAP_STRESS_OPS=20000 timeout 300 $B/new/test_stress TierAlloc > $R/compile-stress.txt 2>&1
    echo "compile stress: exit $? at $SECONDS s" ) &
  wait; echo "=== compiled at $SECONDS s"
  mkdir -p $R/new
  timeout 120 $B/new/clheap-bench --runs 3 --csv $R/new --only TierAlloc oom-launch > $R/new/log.txt 2>&1
  echo "oom-launch new: exit $? at $SECONDS s"
  cat $R/new/log.txt
  part=B
fi
if [ "$part" = B ]; then
  CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_CHECK=15 \
    timeout 250 stdbuf -oL $B/new/test_stress TierAlloc > $R/stress.txt 2>&1
  echo "stress: exit $? $(grep 'TierAlloc:' $R/stress.txt | tail -1) at $SECONDS s"
  r=0
  while [ $((SECONDS + 110)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in new base; do
      mkdir -p $R/tp/$v/$r
      timeout 100 $B/$v/clheap-bench --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
      echo "throughput $v $r: exit $? at $SECONDS s"
    done
    mkdir -p $R/tp/gal/$r
    timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
    echo "gallatin $r: exit $? at $SECONDS s"
  done
fi
tar czf $OUT/nvcache.tgz -C $CUDA_CACHE_PATH .
tar czf $OUT/r51-$1.tgz -C $R .
