/** \file
 * Choosing an OpenCL device the same way in the demo, the tests and the benchmarks.
 *
 * Default: the first GPU of any platform, else the first device of the first platform
 * that has one. CLHEAP_PLATFORM (a substring of the platform name, case-insensitive,
 * e.g. "NVIDIA" or "Portable") restricts the platforms; CLHEAP_DEVICE is either a
 * device index within the chosen platform ("0", "1") or a substring of the device name.
 * Platforms are never chosen by index because their order differs between machines. */
#ifndef CLHEAP_DEVICE_H
#define CLHEAP_DEVICE_H

#include <stddef.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "clheap/status.h"
#include "clheap/vocabulary.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Picks a platform and device per the rules above. */
clheap_status clheap_select_device(cl_platform_id *platform, cl_device_id *device);

/** Writes "<platform name> / <device name> (<build>)" into buf (truncated, always
 * terminated); <build> says which build of the allocators the device gets:
 * "64-bit atomics: every allocator, default TierAlloc" or "32-bit atomics: AtomicMalloc,
 * AtomicWrapMalloc, CMalloc, CMMalloc, BitmapAlloc, BlockAlloc, TierAlloc, FreeHeap,
 * default TierAlloc"; where clheap_device_loop_limit is not 0, FreeHeap is not listed
 * (it is refused), the default is BlockAlloc, and "; loops cut past 65535 iterations a
 * work-item" follows. */
void clheap_describe_device(cl_device_id device, char *buf, size_t len);

/** 1 if the device has 64-bit atomics (cl_khr_int64_base_atomics and
 * cl_khr_int64_extended_atomics), which the fused circular variants need; 0 if not, or
 * if the environment sets CLHEAP_ATOMICS64=0 (which forces the 32-bit build on any
 * device, for tests). Without them clheap_heap_create refuses those two
 * (CLHEAP_ERROR_UNSUPPORTED) and builds the others with -DCLHEAP_ATOMICS64=0. */
int clheap_device_has_atomics64(cl_device_id device);

/** 0, or how many loop iterations one work-item gets in one launch, all its loops
 * together, on a device that ends every loop after one iteration once they are spent:
 * Mesa's llvmpipe (rusticl on the CPU) gives 65535 (gallivm's
 * LP_MAX_TGSI_LOOP_ITERATIONS) and cuts loops silently, the kernel's own as well as
 * clheap's. Measured once per device by a small kernel (up to 131072 iterations; not on
 * NVIDIA's platform). There, a heap's programs build with -DCLHEAP_LOOP_LIMIT=n: a
 * clheap_malloc or clheap_free that finds its work-item's iterations already spent does
 * nothing (malloc returns NULL) and counts contended (docs/design.md, "Loops that
 * end early"), and CLHEAP_AUTO_ALLOCATOR becomes CLHEAP_FALLBACK_ALLOCATOR. */
unsigned clheap_device_loop_limit(cl_device_id device);

/** What CLHEAP_AUTO_ALLOCATOR becomes on device: CLHEAP_DEFAULT_ALLOCATOR (with or
 * without 64-bit atomics), or CLHEAP_FALLBACK_ALLOCATOR where loops end early
 * (clheap_device_loop_limit); CLHEAP_TYPED_ALLOCATOR where typed is nonzero (a heap with
 * typed_classes) on any device. */
clheap_allocator clheap_device_allocator(cl_device_id device, int typed);

/** 1 if clheap_heap_create makes heaps of allocator (CLHEAP_AUTO_ALLOCATOR: always) on
 * device; 0 where it refuses them (CLHEAP_ERROR_UNSUPPORTED): CFMalloc and CFMMalloc
 * without 64-bit atomics, FreeHeap where loops end early. */
int clheap_device_runs(cl_device_id device, clheap_allocator allocator);

#ifdef __cplusplus
}
#endif
#endif
