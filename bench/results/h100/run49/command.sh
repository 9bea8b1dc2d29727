#!/usr/bin/env bash
# H100 run 49, 2026-11-25: bash bench/results/h100/run49/command.sh PART (carry .device-carry, kind nvidia-h100-x1).
# .device-carry/r49/base: c69446c's clheap-bench, test_tier, test_stress.
# .device-carry/r49/new: the same with the free's shorter chain (frame_locate's class and owner in one load; the
#   page tier's count loaded by the warp's lanes at entry and summed after the match), and gallatin-bench
#   (Gallatin 1aa70ad, the harness of c69446c).
# Variants: base, new, and newC = new with --options -DCLHEAP_TIER_DEFER_ITEMS=65536 (frees defer in launches
#   up to 2^16 work-items).
# .device-carry/r49/k/VARIANT: clheap-bench of c69446c built with host planning knobs (cmake -DCMAKE_C_FLAGS=...) (the device program is the
#   same, so it compiles once): base; R1024, R4096: -DCLHEAP_TIER_LARGE_RUN_FRAMES=1024 or 4096 (runs in pools of
#   2 GiB or more, 2048); S32: -DCLHEAP_TIER_MAX_HINT_SLOTS=32 (64); S32R4096: both.
# .device-carry/r49/c: clheap-bench of c69446c with --shapes (d812d55's clheap-bench; the same device program).
# Each part ran on a fresh H100 with the command `bash bench/results/h100/run49/command.sh PART` (C: UNTIL=490).
# A  compile the three throughput programs (Gallatin rounds meanwhile), then rounds of base, new, newC and
#    Gallatin in turn, each the full throughput sweep at 8 GiB (medians of 5 warm runs per shape).
set -u
part=$1
R=/tmp/r49; mkdir -p $R  # outputs; only their archive goes to $OUT (the tool returns at most 8 files)
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$PWD/.device-carry/lib
export CUDA_CACHE_PATH=/tmp/nvcache CUDA_CACHE_MAXSIZE=4294967296
mkdir -p $CUDA_CACHE_PATH
UNTIL=${UNTIL:-560}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
B=.device-carry/r49
declare -A BIN=([base]=$B/base [new]=$B/new [newC]=$B/new)
declare -A OPT=([base]= [new]= [newC]=-DCLHEAP_TIER_DEFER_ITEMS=65536)
bench() { # VARIANT DIR LIMIT ARGS...
  local v=$1 d=$2 t=$3; shift 3
  timeout $t ${BIN[$v]}/clheap-bench ${OPT[$v]:+--options ${OPT[$v]}} "$@"
}
gal() { # TAG
  mkdir -p "$R/gal/$1"
  timeout 120 $B/new/gallatin-bench --csv "$R/gal/$1" > "$R/gal/$1/gallatin.txt" 2>&1
  echo "gallatin $1: exit $? at $SECONDS s"
}
ours() { # VARIANT TAG
  mkdir -p "$R/$1/$2"
  bench $1 "$R/$1/$2" 100 --csv "$R/$1/$2" --only TierAlloc throughput > "$R/$1/$2/log.txt" 2>&1
  echo "throughput $1 $2: exit $? at $SECONDS s"
}
if [ "$part" = A ]; then
  for v in base new newC; do
    ( bench $v - 400 --quick --only TierAlloc throughput > "$R/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  g=0
  while [ -n "$(jobs -r)" ] && [ $SECONDS -lt 420 ]; do g=$((g + 1)); gal A0$g; done
  wait; echo "=== compiled at $SECONDS s"
  r=0
  while [ $((SECONDS + 45)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in base new newC; do ours $v A$r; done
    gal A$r
  done
fi
if [ "$part" = B ]; then
  KV="base R1024 R4096 S32 S32R4096"
  for v in $KV; do BIN[$v]=$B/k/$v; OPT[$v]=; done
  ( bench base - 400 --quick --only TierAlloc throughput > "$R/compile-base.txt" 2>&1
    echo "compile: exit $? at $SECONDS s" ) &
  g=0
  while [ -n "$(jobs -r)" ] && [ $SECONDS -lt 420 ]; do g=$((g + 1)); gal B0$g; done
  wait; echo "=== compiled at $SECONDS s"
  r=0
  while [ $((SECONDS + 60)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in $KV; do ours $v B$r; done
    gal B$r
  done
fi
if [ "$part" = C ]; then
  # Device knobs for 2^18 x mixed 16 B - 4 KiB malloc: base, L4 and L8 (CLHEAP_TIER_HINT_LOOKS 4 and 8: hints a
  # request adds on before it falls back, 2), N16 (CLHEAP_TIER_NEAR_LOOKS 16: containers a hint's next run is
  # looked for in near its last, 4), S0 (CLHEAP_TIER_SETTLE_PER_SEGMENT 0: openers settle nothing; a probe of
  # what their settling loads cost, not a candidate). Five programs compile at once (Gallatin's full sweep
  # meanwhile), then rounds of a few shapes for each in turn.
  KV="base L4 L8 N16 S0"
  for v in $KV; do BIN[$v]=$B/c; done
  OPT[base]=; OPT[L4]=-DCLHEAP_TIER_HINT_LOOKS=4; OPT[L8]=-DCLHEAP_TIER_HINT_LOOKS=8
  OPT[N16]=-DCLHEAP_TIER_NEAR_LOOKS=16; OPT[S0]=-DCLHEAP_TIER_SETTLE_PER_SEGMENT=0
  SHAPES=4096x16,4096xmixed-4K,65536xmixed-4K,262144xmixed-4K,1048576xmixed-4K,262144x4096
  for v in $KV; do
    ( bench $v - 430 --quick --only TierAlloc throughput > "$R/compile-$v.txt" 2>&1
      echo "compile $v: exit $? at $SECONDS s" ) &
  done
  g=0
  while [ -n "$(jobs -r)" ] && [ $SECONDS -lt 440 ]; do g=$((g + 1)); gal C0$g; done
  wait; echo "=== compiled at $SECONDS s"
  r=0
  while [ $((SECONDS + 25)) -lt $UNTIL ]; do
    r=$((r + 1))
    for v in $KV; do
      mkdir -p "$R/$v/C$r"
      bench $v - 60 --csv "$R/$v/C$r" --only TierAlloc --shapes $SHAPES throughput > "$R/$v/C$r/log.txt" 2>&1
    done
    echo "round C$r at $SECONDS s"
  done
fi
tar czf $OUT/out-$part.tgz -C $R . && echo "packed at $SECONDS s"
