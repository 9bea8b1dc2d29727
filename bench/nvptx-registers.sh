#!/usr/bin/env bash
# Registers a kernel takes on NVIDIA, without a GPU: a stand-in for NVIDIA's OpenCL front end.
#
# usage: bench/nvptx-registers.sh KERNELS.cl [ALLOCATOR [CLANG OPTIONS...]]
#   KERNELS.cl   OpenCL C that does #include "clheap.cl" (found in cl/)
#   ALLOCATOR    CLHEAP_ALLOCATOR's number (cl/clheap_vocabulary.h; default 9, TierAlloc)
# Prints ptxas's line for each kernel: registers, stack, spills. Set PTXAS_OPTIONS, e.g.
# "--maxrregcount 128", to see a cap's spills.
#
# The pipeline: clang-15 compiles for nvptx64 with libclc-15's built-ins, clheap's NVIDIA
# build options (-DCLHEAP_HAVE_PTX=1 -DCLHEAP_HAVE_REDUX=1) and inlining of everything not
# marked noinline, as NVIDIA's compiler does; ptxas (CUDA) assembles for sm_90. libclc has
# no 64-bit atom_* for nvptx, so they are defined below as the PTX NVIDIA emits.
# Its counts are not NVIDIA's (TierAlloc's churn-mixed kernel at 395f98e: 218 here, 194 in
# the driver's PTX put through the same ptxas), but they move together: use it to compare
# two versions of the source, then measure on the GPU.
set -eu
src=$1
allocator=${2:-9}
shift $(( $# > 1 ? 2 : 1 ))
root=$(cd "$(dirname "$0")/.." && pwd)
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
libclc=${LIBCLC:-/usr/lib/clc/nvptx64--nvidiacl.bc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/atomics64.h" <<'H'
#define CLHEAP_NV_A64(name, op)                                                                        \
    ulong __attribute__((overloadable)) name(volatile __global ulong *p, ulong v)                      \
    {                                                                                                  \
        ulong r;                                                                                       \
        __asm__ volatile("atom.global." op " %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(v) : "memory");    \
        return r;                                                                                      \
    }
CLHEAP_NV_A64(atom_and, "and.b64")
CLHEAP_NV_A64(atom_or, "or.b64")
CLHEAP_NV_A64(atom_xchg, "exch.b64")
CLHEAP_NV_A64(atom_add, "add.u64")
ulong __attribute__((overloadable)) atom_cmpxchg(volatile __global ulong *p, ulong c, ulong v)
{
    ulong r;
    __asm__ volatile("atom.global.cas.b64 %0, [%1], %2, %3;" : "=l"(r) : "l"(p), "l"(c), "l"(v) : "memory");
    return r;
}
H
clang-15 -x cl -cl-std=CL1.2 -target nvptx64--nvidiacl -march=sm_80 -Xclang -finclude-default-header \
    -Dcl_khr_int64_base_atomics=1 -Dcl_khr_int64_extended_atomics=1 -Dasm=__asm__ \
    -Xclang -mlink-builtin-bitcode -Xclang "$libclc" -include "$tmp/atomics64.h" \
    -I"$root/cl" -DCLHEAP_ALLOCATOR="$allocator" -DCLHEAP_HAVE_PTX=1 -DCLHEAP_HAVE_REDUX=1 \
    -mllvm -inline-threshold=100000 -O2 -Wno-ignored-pragmas "$@" -S -o "$tmp/k.ptx" "$src"
# shellcheck disable=SC2086
"$ptxas" -arch sm_90 -v ${PTXAS_OPTIONS:-} "$tmp/k.ptx" -o /dev/null 2>&1 |
    awk '/Compiling entry function/ { split($0, q, "\x27"); entry = q[2] }
         /Function properties for/ { f = $NF }
         /stack frame/ && f == entry { frame = $0; sub(/^ +/, "", frame) }
         /Used [0-9]+ registers/ && entry != "" { sub(/.*Used /, ""); print entry ": " $0 "; " frame; entry = "" }'
