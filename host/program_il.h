/* Programs from SPIR-V: host/program_il.c. */
#ifndef CLHEAP_HOST_PROGRAM_IL_H
#define CLHEAP_HOST_PROGRAM_IL_H

#include "clheap/device.h"
#include "clheap/status.h"

/* 1 if the device takes SPIR-V (CL_DEVICE_IL_VERSION names it). */
int clheap_il_supported(cl_device_id device);
/* 1 if program has the kernel clheap_il_allocator_<allocator> (cl/clheap.cl, CLHEAP_IL). */
int clheap_il_names_allocator(cl_program program, int allocator);
/* Builds the SPIR-V module il (bytes long) for device with options: UNSUPPORTED where the
 * device takes no IL; BUILD_FAILED (log says why) on a build error or a module that does
 * not name `allocator`; OpenCL's errors as they are. */
clheap_status clheap_program_from_il(cl_context context, cl_device_id device, int allocator, const void *il,
                                     size_t bytes, const char *options, cl_program *out, char *log, size_t log_len);

#endif
