/* Device-heap benchmarks: throughput (malloc then free, every work-item allocating) and
 * register usage. Every timed run starts from a fresh heap and is verified: allocations
 * must be disjoint and inside the pool, and NULLs are reported, so a fast wrong
 * allocator cannot win. Times come from OpenCL profiling events. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *bench_kernels =
    "__kernel void bench_malloc(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (p) p[0] = id;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void bench_malloc_group(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    __local uint scratch[CLHEAP_GROUP_SCRATCH_WORDS];\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc_group(heap, bytes, 1, scratch);\n"
    "    if (p) p[0] = id;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void bench_free(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (units[id]) clheap_free_unit(heap, units[id]);\n"
    "}\n"
    "__kernel void bench_malloc_free(__global clheap_heap *heap, __global uint *out, uint bytes) {\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (p) { p[0] = 1u; clheap_free(heap, p); } else { out[0] = 1u; }\n"
    "}\n";

static double event_seconds(cl_event e)
{
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    return (double)(end - start) * 1e-9;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Disjoint and inside the pool; returns the number of NULLs, or -1 if wrong. */
static long verify_units(uint32_t *units, size_t n, uint32_t bytes, uint64_t pool_begin, uint64_t pool_bytes)
{
    qsort(units, n, sizeof *units, compare_u32);
    long nulls = 0;
    uint64_t units_each = (bytes + 15) / 16, lo = pool_begin / 16, hi = (pool_begin + pool_bytes) / 16;
    for (size_t i = 0; i < n; i++) {
        if (!units[i]) {
            nulls++;
            continue;
        }
        if (units[i] < lo || units[i] + units_each > hi)
            return -1;
        if (i + 1 < n && units[i + 1] && units[i] + units_each > units[i + 1])
            return -1;
    }
    return nulls;
}

typedef struct heap_run {
    clheap_heap *heap;
    cl_program program;
    cl_kernel malloc_k, free_k;
} heap_run;

static int open_heap(bench_env *env, clheap_allocator a, uint64_t bytes, uint32_t request, int group,
                     heap_run *r)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.no_warp_coalescing = group; /* the work-group row measures work-group coalescing alone */
    config.allocator = a;
    config.size_bytes = bytes;
    config.slot_bytes = (request + 15) / 16 * 16; /* BitmapAlloc: slots of the request size */
    memset(r, 0, sizeof *r);
    clheap_status st = clheap_heap_create(env->context, env->device, env->queue, &config, &r->heap);
    if (st != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s: heap of %llu bytes: %s\n", clheap_allocator_name(a),
                (unsigned long long)bytes, clheap_status_string(st));
        return 1;
    }
    static char log[65536];
    st = clheap_heap_build_program(r->heap, 1, &bench_kernels, NULL, &r->program, log, sizeof log);
    if (st != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n%s\n", clheap_status_string(st), log);
        return 1;
    }
    cl_int err;
    r->malloc_k = clCreateKernel(r->program, group ? "bench_malloc_group" : "bench_malloc", &err);
    r->free_k = clCreateKernel(r->program, "bench_free", &err);
    return err != CL_SUCCESS;
}

static void close_heap(heap_run *r)
{
    if (r->malloc_k)
        clReleaseKernel(r->malloc_k);
    if (r->free_k)
        clReleaseKernel(r->free_k);
    if (r->program)
        clReleaseProgram(r->program);
    clheap_heap_destroy(r->heap);
}

int bench_throughput(bench_env *env)
{
    static const uint32_t sizes_full[] = {16, 64, 256, 1024, 4096};
    static const uint32_t sizes_quick[] = {16, 256};
    static const size_t items_full[] = {1u << 16, 1u << 20};
    static const size_t items_quick[] = {1u << 12};
    const uint32_t *sizes = env->quick ? sizes_quick : sizes_full;
    size_t nsizes = env->quick ? 2 : 5;
    const size_t *items_list = env->quick ? items_quick : items_full;
    size_t nitems = env->quick ? 1 : 2;
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);

    FILE *csv = bench_csv_open(env, "throughput",
                               "allocator,work_items,bytes,malloc_median_s,malloc_min_s,"
                               "malloc_max_s,free_median_s,mallocs_per_s,frees_per_s,nulls,runs");
    printf("throughput: every work-item mallocs, then every work-item frees (median of %d runs)\n",
           env->runs);
    printf("  %-16s %9s %6s %12s %12s %14s %14s %8s\n", "allocator", "items", "bytes",
           "malloc ms", "free ms", "malloc/s", "free/s", "NULLs");
    int failures = 0;
    /* Every allocator, then BlockAlloc again with work-group request coalescing. */
    for (int row = CLHEAP_ATOMIC_MALLOC; row <= CLHEAP_BLOCK_ALLOC + 1; row++) {
        int group = row == CLHEAP_BLOCK_ALLOC + 1;
        int a = group ? CLHEAP_BLOCK_ALLOC : row;
        for (size_t ii = 0; ii < nitems; ii++) {
            size_t n = items_list[ii];
            for (size_t si = 0; si < nsizes; si++) {
                uint32_t bytes = sizes[si];
                /* Room for every allocation with its header, twice over. */
                uint64_t heap_bytes = 2 * (uint64_t)n * (bytes + 16) + (16u << 20);
                if (heap_bytes > max_alloc)
                    heap_bytes = max_alloc;
                heap_run r;
                if (open_heap(env, (clheap_allocator)a, heap_bytes, bytes, group, &r) != 0) {
                    failures++;
                    continue;
                }
                cl_int err;
                cl_mem units = clCreateBuffer(env->context, CL_MEM_READ_WRITE, n * sizeof(uint32_t),
                                              NULL, &err);
                uint32_t *host = malloc(n * sizeof *host);
                double tm[16], tf[16];
                long nulls = 0;
                int wrong = 0, runs = env->runs;
                uint64_t pool_begin = 0, pool_bytes = 0;
                clheap_heap_pool_range(r.heap, &pool_begin, &pool_bytes);
                for (int run = 0; run <= runs; run++) { /* run 0: warm-up */
                    clheap_heap_reset(r.heap);
                    clheap_heap_set_kernel_arg(r.heap, r.malloc_k, 0);
                    clSetKernelArg(r.malloc_k, 1, sizeof units, &units);
                    clSetKernelArg(r.malloc_k, 2, sizeof bytes, &bytes);
                    clheap_heap_set_kernel_arg(r.heap, r.free_k, 0);
                    clSetKernelArg(r.free_k, 1, sizeof units, &units);
                    size_t global = n, local = 256;
                    cl_event em, ef;
                    clEnqueueNDRangeKernel(env->queue, r.malloc_k, 1, NULL, &global, &local, 0, NULL, &em);
                    clEnqueueReadBuffer(env->queue, units, CL_TRUE, 0, n * sizeof *host, host, 0, NULL, NULL);
                    clEnqueueNDRangeKernel(env->queue, r.free_k, 1, NULL, &global, &local, 0, NULL, &ef);
                    clFinish(env->queue);
                    if (run > 0) {
                        tm[run - 1] = event_seconds(em);
                        tf[run - 1] = event_seconds(ef);
                    } else if (event_seconds(em) > 0.25) {
                        runs = 1; /* a slow configuration: one timed run keeps the suite short */
                    }
                    clReleaseEvent(em);
                    clReleaseEvent(ef);
                    long v = verify_units(host, n, bytes, pool_begin, pool_bytes);
                    wrong |= v < 0;
                    nulls = v;
                }
                double m_min, m_max, f_min, f_max;
                bench_min_max(tm, runs, &m_min, &m_max);
                bench_min_max(tf, runs, &f_min, &f_max);
                double m = bench_median(tm, runs), f = bench_median(tf, runs);
                char options[128] = "";
                clheap_heap_build_options(r.heap, options, sizeof options);
                const char *name = group ? "BlockAlloc+group"
                                   : strstr(options, "HAVE_PTX") ? "BlockAlloc+warp"
                                                                 : clheap_allocator_name((clheap_allocator)a);
                if (wrong) {
                    printf("  %-16s %9zu %6u   WRONG: overlapping or out-of-pool allocations\n", name,
                           n, bytes);
                    failures++;
                } else {
                    printf("  %-16s %9zu %6u %12.3f %12.3f %14.3e %14.3e %8ld%s\n", name, n, bytes,
                           m * 1e3, f * 1e3, n / m, n / f, nulls, runs == 1 && env->runs > 1 ? "  (1 run)" : "");
                }
                if (csv && !wrong)
                    fprintf(csv, "%s,%zu,%u,%.9f,%.9f,%.9f,%.9f,%.6e,%.6e,%ld,%d\n", name, n, bytes, m,
                            m_min, m_max, f, n / m, n / f, nulls, runs);
                free(host);
                clReleaseMemObject(units);
                close_heap(&r);
            }
        }
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}

/* ptxas reports "Used N registers, ..." for each kernel with -cl-nv-verbose. */
int bench_registers(bench_env *env)
{
    char vendor[256] = "";
    clGetPlatformInfo(env->platform, CL_PLATFORM_NAME, sizeof vendor, vendor, NULL);
    int nvidia = strstr(vendor, "NVIDIA") != NULL;
    FILE *csv = bench_csv_open(env, "registers", "allocator,kernel,registers,ptxas_line");
    printf("registers: malloc+free kernel per allocator (ptxas, -cl-nv-verbose)\n");
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_BLOCK_ALLOC; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        if (!nvidia) {
            printf("  %-16s n/a (not an NVIDIA device)\n", name);
            continue;
        }
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = 16u << 20;
        clheap_heap *heap;
        if (clheap_heap_create(env->context, env->device, env->queue, &config, &heap) != CLHEAP_SUCCESS)
            return 1;
        static char log[65536];
        cl_program program;
        clheap_status st = clheap_heap_build_program(heap, 1, &bench_kernels, "-cl-nv-verbose",
                                                     &program, log, sizeof log);
        if (st == CLHEAP_SUCCESS) {
            clGetProgramBuildInfo(program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
            /* The log names each function, then its "Used N registers" line. */
            char *k = strstr(log, "bench_malloc_free");
            char *used = k ? strstr(k, "Used ") : NULL;
            char line[256] = "not found";
            if (used) {
                size_t len = strcspn(used, "\n");
                snprintf(line, sizeof line, "%.*s", (int)(len < 200 ? len : 200), used);
            }
            int regs = used ? atoi(used + 5) : -1;
            printf("  %-16s %3d registers  (%s)\n", name, regs, line);
            if (csv)
                fprintf(csv, "%s,bench_malloc_free,%d,\"%s\"\n", name, regs, line);
            clReleaseProgram(program);
        } else {
            printf("  %-16s build failed: %s\n", name, clheap_status_string(st));
        }
        clheap_heap_destroy(heap);
    }
    if (csv)
        fclose(csv);
    return 0;
}
