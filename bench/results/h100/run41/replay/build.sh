#!/bin/bash
# build.sh SRCDIR OUT [cflags]: SRCDIR a clheap tree (with trace-C.patch for the knobs and path counters,
# -DCLHEAP_PATH_STATS), BUILD its configured build folder (generated headers)
S=$1; O=$2; shift 2
gcc -I${BUILD:-$S/build}/include -std=c11 -O2 -D_GNU_SOURCE -DCLHEAP_CORE_SCHEDULED -DCL_TARGET_OPENCL_VERSION=120 "$@" -I$S/include -I$S/host -I$S/cl -I$S/tests \
  $(dirname $0)/burst2.c $S/tests/core_heap.c $S/host/heap_layout.c $S/host/heap_walk.c $S/host/report.c $S/host/status.c -o $O -lpthread -lm
