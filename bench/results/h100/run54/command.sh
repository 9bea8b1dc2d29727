#!/usr/bin/env bash
# H100 run 54, 2026-11-26: bash bench/results/h100/run54/command.sh (carry .device-carry/{new54,base54,gal,lib},
# kind nvidia-h100-x1). Issue 45's tagged allocation word (frees by CAS, invalidation by CAS).
# .device-carry/new54: clheap-bench and test_stress (Release) of the commit this run reports;
# .device-carry/base54: clheap-bench of 3a9b919 (the device code before the tags);
# .device-carry/gal: gallatin-bench of 13610af (nvcc 13.0, sm_90, Gallatin 1aa70ad);
# .device-carry/lib: libOpenCL, libcmocka.
# Compiles new54's and base54's throughput programs and new54's test_stress program at once;
# then test_stress at 2^20 work-items on 8 GiB, 10^8 operations, every word verified;
# then oom-launch of new54 (3 rounds a launch); then rounds of the throughput sweep at
# 8 GiB, new54, base54 and Gallatin in turn, until UNTIL.
set -u
R=/tmp/r54; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-570}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for v in new54 base54; do
  ( timeout 400 $B/$v/clheap-bench --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
    echo "compile $v: exit $? at $SECONDS s" ) &
done
( CLHEAP_STRESS_OPS=20000 timeout 400 $B/new54/test_stress TierAlloc > $R/compile-stress.txt 2>&1
  echo "compile stress: exit $? at $SECONDS s" ) &
wait; echo "=== compiled at $SECONDS s"
CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_CHECK=15 \
  timeout 250 stdbuf -oL $B/new54/test_stress TierAlloc > $R/stress.txt 2>&1
echo "stress: exit $? $(grep 'TierAlloc:' $R/stress.txt | tail -1) at $SECONDS s"
mkdir -p $R/oom
timeout 100 $B/new54/clheap-bench --runs 3 --csv $R/oom --only TierAlloc oom-launch > $R/oom/log.txt 2>&1
echo "oom-launch new54: exit $? at $SECONDS s"; cat $R/oom/log.txt
r=0
while [ $((SECONDS + 60)) -lt $UNTIL ]; do
  r=$((r + 1))
  for v in new54 base54; do
    mkdir -p $R/tp/$v/$r
    timeout 100 $B/$v/clheap-bench --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
    echo "throughput $v $r: exit $? at $SECONDS s"
  done
  mkdir -p $R/tp/gal/$r
  timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
  echo "gallatin $r: exit $? at $SECONDS s"
done
echo "done at $SECONDS s"
tar czf $OUT/run54.tgz -C $R .
