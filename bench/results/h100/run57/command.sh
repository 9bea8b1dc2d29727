#!/usr/bin/env bash
# H100 run 57, 2026-11-26: bash bench/results/h100/run57/command.sh (carry .device-carry/{new57,lib},
# kind nvidia-h100-x1). .device-carry/new57: clheap-bench (Release) of the commit this run reports,
# whose heaps build their set-up kernels alone at creation (the enqueue kernels on first use).
# `clheap-bench --csv DIR compile` run alone: NVIDIA's and clheap's compile caches off, every
# build cold; the binaries are kept beside the CSV and left out of the archive.
set -u
R=/tmp/r57; mkdir -p $R/compile
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
B=$PWD/.device-carry
export CLHEAP_PLATFORM=NVIDIA LD_LIBRARY_PATH=$B/lib
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
timeout 540 $B/new57/clheap-bench --csv $R/compile compile > $R/compile/log.txt 2>&1
echo "compile: exit $? at $SECONDS s"; cat $R/compile/log.txt
tar czf $OUT/run57.tgz -C $R --exclude='*.bin' .
