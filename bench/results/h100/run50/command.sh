#!/usr/bin/env bash
# H100 run 50, 2026-11-26: bash bench/results/h100/run50/command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/new: clheap-bench, test_stress, test_tier of 1b3c36a (Release);
# .device-carry/base: clheap-bench of a670df6 (the device code issue 45 was measured at) with the same benchmark
#   sources (bench/ of 1b3c36a); .device-carry/gal: gallatin-bench of 1b3c36a built
#   with nvcc 13.0 for sm_90 against Gallatin 1aa70ad; .device-carry/lib: libOpenCL.so.1 and libcmocka.so.0.
# A  compile the new and base throughput programs (oom-launch builds the same one) and the new test_stress
#    program at once, Gallatin's oom-launch meanwhile; then oom-launch, new and base, 3 rounds a launch.
# B  (the cache of A or C) test_stress at 2^20 work-items on 8 GiB, 10^8 operations, every word verified;
#    then rounds of the throughput sweep at 8 GiB, new, base and Gallatin in turn, until the time is spent.
# C  (the cache of A; .device-carry/new now b90c499's binaries) compile the new throughput program (a Gallatin
#    throughput round meanwhile), oom-launch of new, then B. Part D: the same with .device-carry/new rebuilt at
#    the commit after b90c499 (the free's check off its critical path) and the cache of C.
# E  (the cache of D) where 3dcaf9b's time goes: .device-carry/k is 3dcaf9b's clheap-bench with -D knobs that
#    turn each change off (the patch is in the commit body that adds these results): new (all on), m0
#    (CLHEAP_X_MARK=0: no mark flags, the last resort settles every container), i0 (CLHEAP_X_INC=0: no
#    incarnation check, bump or seal), g0 (CLHEAP_X_GATES=0 CLHEAP_X_STRETCH=0: no free-frame gates, no
#    stretch), r0 (CLHEAP_X_RUNOR=0 CLHEAP_X_LARGE=0: no OR in run openings, the large free's old order), off
#    (all of them); base = a670df6. Registers of new and base, then rounds of the shapes that lost time.
# F  (the cache of D) as D with .device-carry/new rebuilt at 3fd5979, and new's registers (cold) meanwhile.
# G  (the cache of D) as F with .device-carry/new rebuilt at 10d2cd4 (cold paths out of line).
# H  (the cache of D) .device-carry/new's clheap-bench rebuilt at the commit after 10d2cd4: compile, oom-launch,
#    then rounds of the throughput sweep, new, base and Gallatin in turn.
set -u
part=$1
R=/tmp/r50; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
[ -f $B/nvcache.tgz ] && tar xzf $B/nvcache.tgz -C $CUDA_CACHE_PATH
UNTIL=${UNTIL:-560}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [ "$part" = A ]; then
  for v in new base; do
    ( timeout 420 $B/$v/clheap-bench --quick --only TierAlloc throughput > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( CLHEAP_STRESS_OPS=20000 timeout 420 $B/new/test_stress TierAlloc > $R/compile-stress.txt 2>&1
    echo "compile stress: exit $? at $SECONDS s" ) &
  mkdir -p $R/gal
  timeout 400 $B/gal/gallatin-bench --oom-launch --runs 3 --launch-timeout 45 --csv $R/gal > $R/gal/log.txt 2>&1
  echo "gallatin oom-launch: exit $? at $SECONDS s"
  wait; echo "=== compiled at $SECONDS s"
  for v in new base; do
    mkdir -p $R/$v
    timeout $((UNTIL - SECONDS > 30 ? (UNTIL - SECONDS) / 2 : 15)) $B/$v/clheap-bench --runs 3 --csv $R/$v --only TierAlloc oom-launch > $R/$v/log.txt 2>&1
    echo "oom-launch $v: exit $? at $SECONDS s"
  done
fi
if [ "$part" = F ] || [ "$part" = G ]; then
  ( CUDA_CACHE_DISABLE=1 timeout 400 $B/new/clheap-bench --only TierAlloc registers > $R/registers-new.txt 2>&1
    echo "registers new: exit $? at $SECONDS s" ) &
fi
if [ "$part" = C ] || [ "$part" = D ] || [ "$part" = F ] || [ "$part" = G ]; then
  ( timeout 420 $B/new/clheap-bench --quick --only TierAlloc throughput > $R/compile-new.txt 2>&1
    echo "compile new: exit $? at $SECONDS s" ) &
  ( CLHEAP_STRESS_OPS=20000 timeout 420 $B/new/test_stress TierAlloc > $R/compile-stress.txt 2>&1
    echo "compile stress: exit $? at $SECONDS s" ) &
  mkdir -p $R/tp/gal/0
  timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/0 > $R/tp/gal/0/log.txt 2>&1
  echo "gallatin 0: exit $? at $SECONDS s"
  wait; echo "=== compiled at $SECONDS s"
  mkdir -p $R/new
  timeout 120 $B/new/clheap-bench --runs 3 --csv $R/new --only TierAlloc oom-launch > $R/new/log.txt 2>&1
  echo "oom-launch new: exit $? at $SECONDS s"
  part=B
fi
if [ "$part" = H ]; then
  ( timeout 420 $B/new/clheap-bench --quick --only TierAlloc throughput > $R/compile-new.txt 2>&1
    echo "compile new: exit $? at $SECONDS s" ) &
  mkdir -p $R/tp/gal/0
  timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/0 > $R/tp/gal/0/log.txt 2>&1
  wait; echo "=== compiled at $SECONDS s"
  mkdir -p $R/new
  timeout 120 $B/new/clheap-bench --runs 3 --csv $R/new --only TierAlloc oom-launch > $R/new/log.txt 2>&1
  echo "oom-launch new: exit $? at $SECONDS s"
  r=0
  while [ $((SECONDS + 20)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in new base; do
      mkdir -p $R/tp/$v/$r
      timeout 100 $B/$v/clheap-bench --csv $R/tp/$v/$r --only TierAlloc throughput > $R/tp/$v/$r/log.txt 2>&1
    done
    mkdir -p $R/tp/gal/$r
    timeout 100 $B/gal/gallatin-bench --csv $R/tp/gal/$r > $R/tp/gal/$r/log.txt 2>&1
    echo "round $r at $SECONDS s"
  done
fi
if [ "$part" = B ]; then
  CLHEAP_STRESS_ITEMS=1048576 CLHEAP_STRESS_HEAP_MIB=8192 CLHEAP_STRESS_OPS=100000000 CLHEAP_STRESS_CHECK=15 \
    timeout 300 stdbuf -oL $B/new/test_stress TierAlloc > $R/stress.txt 2>&1
  echo "stress: exit $? $(grep -m1 'round 1:' $R/stress.txt) | $(grep 'TierAlloc:' $R/stress.txt | tail -1) at $SECONDS s"
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
if [ "$part" = E ]; then
  declare -A OPT=([new]="" [m0]="-DCLHEAP_X_MARK=0" [i0]="-DCLHEAP_X_INC=0" [g0]="-DCLHEAP_X_GATES=0 -DCLHEAP_X_STRETCH=0"
    [r0]="-DCLHEAP_X_RUNOR=0 -DCLHEAP_X_LARGE=0"
    [off]="-DCLHEAP_X_MARK=0 -DCLHEAP_X_INC=0 -DCLHEAP_X_GATES=0 -DCLHEAP_X_STRETCH=0 -DCLHEAP_X_RUNOR=0 -DCLHEAP_X_LARGE=0")
  V="new m0 i0 g0 r0 off"
  kb() { local v=$1; shift; if [ $v = base ]; then $B/base/clheap-bench "$@"; else $B/k/clheap-bench ${OPT[$v]:+--options "${OPT[$v]}"} "$@"; fi; }
  for v in $V; do
    ( timeout 400 bash -c "$(declare -p OPT B); $(declare -f kb); kb $v --quick --only TierAlloc throughput" > $R/compile-$v.txt 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  ( CUDA_CACHE_DISABLE=1 timeout 400 $B/base/clheap-bench --only TierAlloc registers > $R/registers-base.txt 2>&1
    echo "registers base: exit $? at $SECONDS s"
    CUDA_CACHE_DISABLE=1 timeout 400 $B/k/clheap-bench --only TierAlloc registers > $R/registers-new.txt 2>&1
    echo "registers new: exit $? at $SECONDS s" ) &
  wait; echo "=== compiled at $SECONDS s"
  S=4096xmixed-4K,16384x16384,16384xmixed-1M,16384xmixed-4K,16384x4096,65536x16384,65536x4096,262144x1024,262144x16,1048576x16,1048576x1024,1048576xmixed-4K,1048576x4096,65536x65536
  r=0
  while [ $((SECONDS + 40)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in base $V; do
      mkdir -p $R/tp/$v/$r
      timeout 60 bash -c "$(declare -p OPT B); $(declare -f kb); kb $v --csv $R/tp/$v/$r --only TierAlloc --shapes $S throughput" > $R/tp/$v/$r/log.txt 2>&1
    done
    echo "round $r at $SECONDS s"
  done
fi
tar czf $OUT/nvcache.tgz -C $CUDA_CACHE_PATH .
tar czf $OUT/r50-$1.tgz -C $R .
