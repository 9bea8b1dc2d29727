#!/usr/bin/env bash
# Runs clheap's tests and benchmarks on the lent NVIDIA GPU machine (see the README's
# "GPU results"): registers the NVIDIA OpenCL ICD, selects the NVIDIA platform by name,
# runs everything within one 10-minute command and writes logs and CSVs to OUT_DIR.
#
#   bench/run-gpu.sh CARRY_DIR OUT_DIR
# CARRY_DIR holds build/ (a clheap build made elsewhere) and lib/ (libOpenCL.so.1 from
# ocl-icd and libcmocka.so.0, which that machine lacks).
set -uo pipefail
carry=$(cd "$1" && pwd)
out=$2
mkdir -p "$out" /etc/OpenCL/vendors
echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
export CLHEAP_PLATFORM=NVIDIA
export LD_LIBRARY_PATH="$carry/lib:$carry/build:${LD_LIBRARY_PATH:-}"
build=$carry/build
status=0

step() { # step NAME TIMEOUT COMMAND...: runs one step, logs it, never stops the script
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%FT%TZ))"
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc"
  [ "$rc" -eq 0 ] || status=1
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step test_cache 120 "$build/tests/test_cache"
step demo 60 "$build/examples/clheap-demo"
step bench 420 "$build/bench/clheap-bench" --csv "$out" ${CLHEAP_BENCH_TESTS:-}
exit $status
