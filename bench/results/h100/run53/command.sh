#!/usr/bin/env bash
# H100 run 53, 2026-11-26: bash bench/results/h100/run53/command.sh (carry .device-carry,
# kind nvidia-h100-x1). .device-carry/new53: clheap-bench and test_programs (Release) of the
# commit this run reports; .device-carry/lib: libOpenCL, libcmocka.
# The library's program cache on NVIDIA, with the driver's cache off (CUDA_CACHE_DISABLE=1)
# throughout the timed part: `clheap-bench --quick --only TierAlloc compile` with
#   off    CLHEAP_PROGRAM_CACHE=off (every build from source: the cold baseline),
#   miss   an empty cache folder (built from source, then written),
#   hit    the same folder in a new process (loaded from the file),
# off and miss at once (16 cores), hit after miss; then test_programs on NVIDIA.
set -u
R=/tmp/r53; mkdir -p $R
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
bench() { # name cache-setting
  mkdir -p $R/$1
  CUDA_CACHE_DISABLE=1 CLHEAP_PROGRAM_CACHE=$2 timeout 300 $B/new53/clheap-bench --quick --only TierAlloc \
    --csv $R/$1 compile > $R/$1/log.txt 2>&1
  echo "$1: exit $? at $SECONDS s"; cat $R/$1/log.txt
}
bench off off &
bench miss $R/folder
wait
bench hit $R/folder
ls -l $R/folder
timeout 300 $B/new53/test_programs > $R/test_programs.txt 2>&1
echo "test_programs: exit $? at $SECONDS s"; tail -12 $R/test_programs.txt
rm -rf $R/folder
tar czf $OUT/run53.tgz -C /tmp r53
