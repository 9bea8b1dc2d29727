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

#ifdef __cplusplus
extern "C" {
#endif

/** Picks a platform and device per the rules above. */
clheap_status clheap_select_device(cl_platform_id *platform, cl_device_id *device);

/** Writes "<platform name> / <device name>" into buf (truncated, always terminated). */
void clheap_describe_device(cl_device_id device, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
