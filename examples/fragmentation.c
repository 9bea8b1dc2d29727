/* Fragmentation of CMalloc under the two pre-splitting strategies (Vinkler & Havran,
 * section 8): an Alloc-Dealloc round (every work-item allocates, then everything is
 * freed), after which the pool is still cut into regions by the chunk headers.
 * Uniform pre-splitting leaves external fragmentation near 1; the binary-heap
 * pre-split of eq. 1 leaves it lower. Prints both; exits 1 if that does not hold. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char *source =
    "__kernel void alloc(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    uint id = get_global_id(0);\n"
    "    units[id] = clheap_malloc_unit(heap, bytes + (id % 7u) * 16u);\n"
    "}\n"
    "__kernel void release(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (units[id]) clheap_free_unit(heap, units[id]);\n"
    "}\n";


enum { ITEMS = 4096 };

static void run(cl_context context, cl_device_id device, cl_command_queue queue,
                clheap_presplit presplit, cl_uint bytes, clheap_heap_stats *allocated,
                clheap_heap_stats *freed)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_CMALLOC;
    config.size_bytes = 32u << 20;
    config.presplit = presplit;
    clheap_heap *heap;
    CHECK(clheap_heap_create(context, device, queue, &config, &heap));
    char log[8192];
    cl_program program;
    clheap_status status = clheap_heap_build_program(heap, 1, &source, NULL, &program, log, sizeof log);
    if (status != CLHEAP_SUCCESS)
        fprintf(stderr, "%s\n", log);
    CHECK(status);
    cl_int err;
    cl_kernel alloc = clCreateKernel(program, "alloc", &err);
    CHECK(err);
    cl_kernel release = clCreateKernel(program, "release", &err);
    CHECK(err);
    cl_mem units = clCreateBuffer(context, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    size_t global = ITEMS;
    CHECK(clheap_heap_set_kernel_arg(heap, alloc, 0));
    CHECK(clSetKernelArg(alloc, 1, sizeof units, &units));
    CHECK(clSetKernelArg(alloc, 2, sizeof bytes, &bytes));
    CHECK(clEnqueueNDRangeKernel(queue, alloc, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clheap_heap_calculate_stats(heap, allocated));
    CHECK(clheap_heap_set_kernel_arg(heap, release, 0));
    CHECK(clSetKernelArg(release, 1, sizeof units, &units));
    CHECK(clEnqueueNDRangeKernel(queue, release, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clheap_heap_calculate_stats(heap, freed));
    char what[256];
    CHECK(clheap_heap_check(heap, what, sizeof what));
    clReleaseMemObject(units);
    clReleaseKernel(alloc);
    clReleaseKernel(release);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
}

int main(void)
{
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char name[512];
    open_device(&device, &context, &queue, name, sizeof name);
    printf("CMalloc fragmentation after Alloc-Dealloc, %d work-items, 32 MiB heap, on %s\n", ITEMS, name);
    printf("%-12s %8s %14s %16s %16s\n", "pre-split", "request", "F_internal", "F_external",
           "free chunks");
    int ok = 1;
    const cl_uint sizes[] = {64, 1024, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        clheap_heap_stats binary_alloc, binary_freed, uniform_alloc, uniform_freed;
        run(context, device, queue, CLHEAP_PRESPLIT_BINARY_HEAP, sizes[i], &binary_alloc, &binary_freed);
        run(context, device, queue, CLHEAP_PRESPLIT_UNIFORM, sizes[i], &uniform_alloc, &uniform_freed);
        printf("%-12s %8u %14.3f %16.3f %16llu\n", "binary heap", sizes[i],
               binary_alloc.internal_fragmentation, binary_freed.external_fragmentation,
               (unsigned long long)binary_freed.free_chunks);
        printf("%-12s %8u %14.3f %16.3f %16llu\n", "uniform", sizes[i],
               uniform_alloc.internal_fragmentation, uniform_freed.external_fragmentation,
               (unsigned long long)uniform_freed.free_chunks);
        ok &= uniform_freed.external_fragmentation > 0.9 &&
              binary_freed.external_fragmentation < uniform_freed.external_fragmentation;
    }
    printf("%s\n", ok ? "as in the paper: uniform near 1, binary heap lower"
                      : "UNEXPECTED: the paper's qualitative result does not hold");
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return ok ? 0 : 1;
}
