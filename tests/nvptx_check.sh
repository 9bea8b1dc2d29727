#!/bin/sh
# NVIDIA's build of the warp paths, which PoCL and rusticl never compile (issue: a warp
# path that does not compile fails only on a GPU, at clheap_heap_create).
#
# usage: tests/nvptx_check.sh CLANG CL_DIR PROGRAM.cl ALLOCATOR_NUMBER "INSTRUCTION..." [redux]
# Compiles PROGRAM.cl (which includes clheap.cl) for clang's nvptx64 OpenCL target with the
# options clheap gives an NVIDIA heap with warp coalescing (-DCLHEAP_HAVE_PTX=1, and with
# `redux` -DCLHEAP_HAVE_REDUX=1: sm_80 and later), down to PTX, so that clang's code
# generator also checks the inline PTX's operands. Then the PTX must hold each of the warp
# instructions the allocator's paths are made of in that build (INSTRUCTION..., e.g.
# "activemask.b32 bar.warp.sync shfl.sync match.any.sync redux.sync"): without them the
# paths were not compiled, and the check would pass for nothing. Clang's PTX is not NVIDIA's (docs/performance.md compares register counts
# with bench/nvptx-registers.sh); this checks the source, not the driver.
set -eu
clang=$1 cl_dir=$2 program=$3 number=$4 want=$5 redux=${6:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set -- -DCLHEAP_ALLOCATOR="$number" -DCLHEAP_HAVE_PTX=1
[ "$redux" = redux ] && set -- "$@" -DCLHEAP_HAVE_REDUX=1
"$clang" -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
  -Xclang -fgnu-keywords -Xclang -cl-ext=+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics \
  -I"$cl_dir" "$@" -O0 -S -o "$out" "$program"
for instruction in $want; do
  if ! grep -q "$instruction" "$out"; then
    echo "nvptx_check: allocator $number${redux:+ (redux)}: no $instruction in the PTX: the warp paths were not compiled" >&2
    exit 1
  fi
done
echo "nvptx_check: allocator $number${redux:+ (redux)}: $(wc -l < "$out") lines of PTX with $want"
