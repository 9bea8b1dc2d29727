#!/bin/bash
# mk.sh SRC OUT [flags]: build burst4 against tree SRC
S=$1; O=$2; shift 2
B=$S/b; [ -d $B/include ] || B=$S/build
gcc -I$B/include -std=c11 -O2 -D_GNU_SOURCE -DCLHEAP_CORE_SCHEDULED -DCL_TARGET_OPENCL_VERSION=120 -I$S/include -I$S/host -I$S/cl -I$S/tests "$@" $(dirname $0)/burst4.c $S/tests/core_heap.c $S/host/heap_layout.c $S/host/heap_walk.c $S/host/report.c $S/host/status.c -o $O -lm
