#!/bin/sh
# NVIDIA's build of the warp paths, which PoCL and rusticl never compile (a warp path that
# does not compile would fail only on a GPU, at clheap_heap_create).
#
# usage: tests/nvptx_check.sh CLANG CL_DIR PROGRAM.cl ALLOCATOR_NUMBER "INSTRUCTION..." [redux|lone]
# Compiles PROGRAM.cl (which includes clheap.cl) for clang's nvptx64 OpenCL target with the
# options clheap gives an NVIDIA heap with warp coalescing (-DCLHEAP_HAVE_PTX=1; with
# `redux` also -DCLHEAP_HAVE_REDUX=1, sm_80 and later; with `lone` also
# -DCLHEAP_WARP_PATHS=0, a program whose requests go alone), down to PTX, so that clang's
# code generator also checks the inline PTX's operands. Then the PTX must hold each
# INSTRUCTION, and must not hold one written !INSTRUCTION: the warp instructions the
# allocator's paths are made of in that build (e.g. "activemask.b32 bar.warp.sync shfl.sync
# match.any.sync"), or in a `lone` build their absence. Without that the paths could be
# compiled out and the check would pass for nothing. Clang's PTX is not NVIDIA's
# (bench/nvptx-registers.sh compares them); this checks the source, not the driver.
set -eu
clang=$1 cl_dir=$2 program=$3 number=$4 want=$5 mode=${6:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set -- -DCLHEAP_ALLOCATOR="$number" -DCLHEAP_HAVE_PTX=1
[ "$mode" = redux ] && set -- "$@" -DCLHEAP_HAVE_REDUX=1
[ "$mode" = lone ] && set -- "$@" -DCLHEAP_WARP_PATHS=0
"$clang" -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
  -Xclang -fgnu-keywords -Xclang -cl-ext=+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics \
  -I"$cl_dir" "$@" -O0 -S -o "$out" "$program"
for instruction in $want; do
  case $instruction in
  !*)
    if grep -q "${instruction#!}" "$out"; then
      echo "nvptx_check: allocator $number${mode:+ ($mode)}: ${instruction#!} in the PTX: the warp paths were compiled" >&2
      exit 1
    fi ;;
  *)
    if ! grep -q "$instruction" "$out"; then
      echo "nvptx_check: allocator $number${mode:+ ($mode)}: no $instruction in the PTX: the warp paths were not compiled" >&2
      exit 1
    fi ;;
  esac
done
echo "nvptx_check: allocator $number${mode:+ ($mode)}: $(wc -l < "$out") lines of PTX; $want"
