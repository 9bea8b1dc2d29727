/* Programs from SPIR-V (clheap_heap_build_program_il). A module compiled ahead of time
 * (cmake/clheapSpirv.cmake) carries no -D options, so it names the allocator it was
 * compiled for in a kernel, clheap_il_allocator_<number> (cl/clheap.cl, CLHEAP_IL); a
 * module without the heap's is refused, since its code would read the heap's layout as
 * another allocator's. The device must take IL: OpenCL 2.1's CL_DEVICE_IL_VERSION names
 * SPIR-V (PoCL 3.1 and rusticl 22.3 name none). */
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program_il.h"
#include "programs.h"

int clheap_il_supported(cl_device_id device)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, 0, NULL, &bytes) != CL_SUCCESS || bytes <= 1)
        return 0;
    char *versions = malloc(bytes);
    int spirv = versions && clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, bytes, versions, NULL) == CL_SUCCESS &&
                strstr(versions, "SPIR-V") != NULL;
    free(versions);
    return spirv;
}

int clheap_il_names_allocator(cl_program program, int allocator, int atomics64)
{
    size_t bytes = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &bytes) != CL_SUCCESS || !bytes)
        return 0;
    char *names = malloc(bytes + 2), tag[40];
    if (!names || clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, bytes, names + 1, NULL) != CL_SUCCESS) {
        free(names);
        return 0;
    }
    names[0] = ';'; /* ";a;b;" so that a name is found whole */
    names[bytes] = ';';
    names[bytes + 1] = '\0';
    snprintf(tag, sizeof tag, ";clheap_il_allocator_%d%s;", allocator, atomics64 ? "" : "_atomics32");
    int found = strstr(names, tag) != NULL;
    free(names);
    return found;
}

clheap_status clheap_program_from_il(cl_context context, cl_device_id device, int allocator, int atomics64,
                                     const void *il, size_t bytes, const char *options, cl_program *out, char *log,
                                     size_t log_len)
{
    if (log && log_len)
        log[0] = '\0';
    if (!clheap_il_supported(device))
        return CLHEAP_ERROR_UNSUPPORTED;
    cl_int err;
    cl_program program = clCreateProgramWithIL(context, il, bytes, &err);
    if (err != CL_SUCCESS)
        return err;
    err = clBuildProgram(program, 1, &device, options ? options : "", NULL, NULL);
    if (err != CL_SUCCESS) {
        clheap_programs_copy_log(program, device, log, log_len, NULL, 0);
        clReleaseProgram(program);
        return err == CL_BUILD_PROGRAM_FAILURE ? CLHEAP_ERROR_BUILD_FAILED : err;
    }
    if (!clheap_il_names_allocator(program, allocator, atomics64)) {
        if (log && log_len)
            snprintf(log, log_len,
                     "the SPIR-V module has no kernel clheap_il_allocator_%d%s: it was compiled for another "
                     "allocator than the heap's, %s, or without CLHEAP_IL (cmake/clheapSpirv.cmake)",
                     allocator, atomics64 ? "" : "_atomics32",
                     atomics64 ? "or with ATOMICS32" : "or without ATOMICS32 (the device has no 64-bit atomics)");
        clReleaseProgram(program);
        return CLHEAP_ERROR_BUILD_FAILED;
    }
    *out = program;
    return CLHEAP_SUCCESS;
}
