/* Programs from SPIR-V: host/program_il.c. */
#ifndef CLHEAP_HOST_PROGRAM_IL_H
#define CLHEAP_HOST_PROGRAM_IL_H

#include "clheap/device.h"
#include "clheap/status.h"

/* 1 if the device takes SPIR-V (CL_DEVICE_IL_VERSION names it). */
int clheap_il_supported(cl_device_id device);
/* 1 if program has the kernel clheap_il_allocator_<allocator> (atomics64), or
 * clheap_il_allocator_<allocator>_atomics32 (not) (cl/clheap.cl, CLHEAP_IL). */
int clheap_il_names_allocator(cl_program program, int allocator, int atomics64);
/* Builds the SPIR-V module il (bytes long) for device with options: UNSUPPORTED where the
 * device takes no IL; BUILD_FAILED (log says why) on a build error or a module that does
 * not name `allocator` built with (atomics64) or without 64-bit atomics; OpenCL's errors
 * as they are. */
clheap_status clheap_program_from_il(cl_context context, cl_device_id device, int allocator, int atomics64,
                                     const void *il, size_t bytes, const char *options, cl_program *out, char *log,
                                     size_t log_len);

#endif
