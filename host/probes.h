/* What a device does that no clGetDeviceInfo query says, measured by small kernels once
 * per device (host/probes.c). */
#ifndef CLHEAP_HOST_PROBES_H
#define CLHEAP_HOST_PROBES_H

#include "clheap/device.h"

typedef struct clheap_probed {
    /* 1 where OpenCL C 1.2's fences act as work-group barriers (Mesa 22.3's llvmpipe):
     * the allocators' fences, in divergent code, then build as atomics
     * (-DCLHEAP_FENCE_BY_ATOMIC=1, cl/clheap_port.h). */
    int fences_are_barriers;
    /* 0, or the loop iterations a work-item gets in one launch, all its loops together,
     * where the device ends every loop after one iteration past them (llvmpipe):
     * clheap_device_loop_limit. */
    unsigned loop_limit;
    /* NVIDIA only: 0 where the inline PTX of warp coalescing does not build, 1 where it
     * does (sm_70 and later), 2 where the warp reduction the coalesced free uses builds
     * too (sm_80 and later). Where 1 or 2, the heaps of the block and circular kinds
     * build warp-coalesced (-DCLHEAP_HAVE_PTX). */
    int ptx_level;
} clheap_probed;

/* The device's answers: probed with programs built in context (NULL: a context of the
 * device's own, made for the probe), or the cached ones. NVIDIA's devices get only the
 * PTX builds (their compiles are costly, and neither other behaviour is theirs: 0). */
clheap_probed clheap_probe_device(cl_context context, cl_device_id device);

/* Whether device's platform is NVIDIA's (inline PTX; no probe needed). */
int clheap_device_is_nvidia(cl_device_id device);

#endif
