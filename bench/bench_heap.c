/* Device-heap benchmarks: throughput (malloc then free, every work-item allocating) and
 * register usage. Every timed run starts from a fresh heap and is verified: allocations
 * must be disjoint and inside the pool, and NULLs are reported, so a fast wrong
 * allocator cannot win. Times come from OpenCL profiling events. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_shapes.h"

/* The kernels come in sets, each built only where a test uses it (bench_heap_open):
 * NVIDIA's compiler spends minutes on a program whose kernels each inline a whole malloc,
 * and throughput, which every GPU run starts with, needs three of them. */
static const char *bench_common_kernels =
    "/* clheap_hash32 comes with the allocator source built in front of these kernels. */\n"
    "/* bench/bench_shapes.h: 0 and 1 are the mixed shapes, 16 B .. 4 KiB or 1 MiB by work-item */\n"
    "uint bench_size(uint bytes, uint id) {\n"
    "    return bytes > 1u ? bytes : 16u << (clheap_hash32(id) % (bytes ? 17u : 9u));\n"
    "}\n"
    "__kernel void bench_free(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (units[id]) clheap_free_unit(heap, units[id]);\n"
    "}\n";
static const char *bench_papers_kernels =
    "/* Alloc-Dealloc: one work-item in `stride` allocates, stamps the first and last word,\n"
    " * checks them and frees. fails[0]: NULLs, fails[1]: stamps overwritten. */\n"
    "__kernel void bench_ad(__global clheap_heap *heap, uint bytes, uint stride, __global uint *fails) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id % stride) return;\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (!p) { atomic_inc(&fails[0]); return; }\n"
    "    uint last = (bytes - 1u) / 4u;  /* payloads under 8 B: one word, one stamp */\n"
    "    p[0] = id; if (last) p[last] = ~id;\n"
    "    if (p[0] != id || (last && p[last] != ~id)) atomic_inc(&fails[1]);\n"
    "    clheap_free(heap, p);\n"
    "}\n"
    "/* Alloc-Cycle-Dealloc: `iters` allocations, then all freed, in one kernel. */\n"
    "__kernel void bench_acd(__global clheap_heap *heap, uint bytes, uint stride, uint iters,\n"
    "                        __global uint *fails) {\n"
    "    uint id = get_global_id(0), units[100];\n"
    "    if (id % stride) return;\n"
    "    uint last = (bytes - 1u) / 4u;\n"
    "    for (uint i = 0; i < iters; i++) {\n"
    "        units[i] = clheap_malloc_unit(heap, bytes);\n"
    "        __global uint *p = clheap_pointer(heap, units[i]);\n"
    "        if (p) { p[0] = id * 128u + i; if (last) p[last] = ~(id * 128u + i); } else atomic_inc(&fails[0]);\n"
    "    }\n"
    "    for (uint i = 0; i < iters; i++) {\n"
    "        __global uint *p = clheap_pointer(heap, units[i]);\n"
    "        if (!p) continue;\n"
    "        if (p[0] != id * 128u + i || (last && p[last] != ~(id * 128u + i))) atomic_inc(&fails[1]);\n"
    "        clheap_free(heap, p);\n"
    "    }\n"
    "}\n"
    "/* Probability: holding nothing, allocate with p = 3/4; holding, free with p = 3/4.\n"
    " * counts: [0] NULLs, [1] stamps overwritten, [2] allocations, [3] frees. */\n"
    "__kernel void bench_probability(__global clheap_heap *heap, uint bytes, uint stride,\n"
    "                                __global uint *held, uint seed, __global uint *counts) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id % stride) return;\n"
    "    uint r = clheap_hash32(id * 0x9E3779B1u + seed) % 4u;\n"
    "    __global uint *p = clheap_pointer(heap, held[id]);\n"
    "    if (p) {\n"
    "        if (p[0] != id) atomic_inc(&counts[1]);\n"
    "        if (r != 0u) { clheap_free(heap, p); held[id] = 0u; atomic_inc(&counts[3]); }\n"
    "    } else if (r != 0u) {\n"
    "        held[id] = clheap_malloc_unit(heap, bytes);\n"
    "        p = clheap_pointer(heap, held[id]);\n"
    "        if (p) { p[0] = id; atomic_inc(&counts[2]); } else atomic_inc(&counts[0]);\n"
    "    }\n"
    "}\n"
    "/* Fill: each work-item allocates up to per_item blocks until NULL. */\n"
    "__kernel void bench_fill(__global clheap_heap *heap, __global uint *units, __global uint *sizes,\n"
    "                         uint per_item, uint bytes) {\n"
    "    uint id = get_global_id(0), k = 0;\n"
    "    for (; k < per_item; k++) {\n"
    "        uint slot = id * per_item + k, b = bench_size(bytes, slot);\n"
    "        units[slot] = clheap_malloc_unit(heap, b);\n"
    "        sizes[slot] = b;\n"
    "        if (!units[slot]) break;\n"
    "    }\n"
    "    for (k++; k < per_item; k++) units[id * per_item + k] = 0u;\n"
    "}\n";
static const char *bench_throughput_kernels =
    "/* Uniform and mixed sizes are separate kernels: a size the compiler can see is the\n"
    " * same for the whole warp lets NVIDIA's compiler aggregate the warp's atomics. */\n"
    "__kernel void bench_malloc_mixed(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc(heap, bench_size(bytes, id));\n"
    "    if (p) p[0] = id;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void bench_malloc(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (p) p[0] = id;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n";
static const char *bench_group_kernel =
    "__kernel void bench_malloc_group(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    __local uint scratch[CLHEAP_GROUP_SCRATCH_WORDS];\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc_group(heap, bench_size(bytes, id), 1, scratch);\n"
    "    if (p) p[0] = id;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n";

/* The registers test's kernel, built alone: NVIDIA's compiler took minutes over all the
 * benchmark kernels at once, each inlining a whole malloc (TierAlloc's registers step ran
 * out of 80 - 400 s limits in H100 runs 26 and 28). */
static const char *bench_register_kernel =
    "__kernel void bench_malloc_free(__global clheap_heap *heap, __global uint *out, uint bytes) {\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (p) { p[0] = 1u; clheap_free(heap, p); } else { out[0] = 1u; }\n"
    "}\n";

double bench_event_seconds(cl_event e)
{
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    return (double)(end - start) * 1e-9;
}

typedef struct granted {
    uint32_t unit, bytes;
} granted;

static int compare_granted(const void *a, const void *b)
{
    uint32_t x = ((const granted *)a)->unit, y = ((const granted *)b)->unit;
    return (x > y) - (x < y);
}

long bench_verify_units(const uint32_t *units, size_t n, const uint32_t *sizes, uint32_t bytes, uint64_t pool_begin,
                        uint64_t pool_bytes)
{
    granted *g = malloc(n * sizeof *g);
    size_t count = 0;
    long nulls = 0;
    for (size_t i = 0; i < n; i++) {
        if (units[i])
            g[count++] = (granted){units[i], sizes ? sizes[i] : bench_request_bytes(bytes, (uint32_t)i)};
        else
            nulls++;
    }
    qsort(g, count, sizeof *g, compare_granted);
    uint64_t lo = pool_begin / 16, hi = (pool_begin + pool_bytes) / 16;
    for (size_t i = 0; i < count && nulls >= 0; i++) {
        uint64_t end = (uint64_t)g[i].unit + (g[i].bytes + 15) / 16;
        if (g[i].unit < lo || end > hi || (i + 1 < count && end > g[i + 1].unit))
            nulls = -1;
    }
    free(g);
    return nulls;
}

size_t bench_save_binary(const bench_env *env, cl_program program, const char *name)
{
    cl_uint devices = 0;
    size_t bytes = 0;
    clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, NULL);
    if (devices == 1)
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof bytes, &bytes, NULL);
    unsigned char *bin = env->csv_dir && bytes ? malloc(bytes) : NULL;
    char path[1024];
    if (!bin)
        return bytes;
    snprintf(path, sizeof path, "%s/%s", env->csv_dir, name);
    FILE *f = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS ? fopen(path, "wb")
                                                                                                   : NULL;
    if (f) {
        fwrite(bin, 1, bytes, f);
        fclose(f);
    }
    free(bin);
    return bytes;
}

/* With CLHEAP_BENCH_BINARIES=1, the program's binary as program-<label>-<n>.bin, n counting
 * this process's saved programs (bench_save_binary). */
static void save_if_asked(const bench_env *env, cl_program program, const char *label)
{
    const char *save = getenv("CLHEAP_BENCH_BINARIES");
    if (!save || strcmp(save, "1") != 0)
        return;
    static unsigned programs;
    char name[128];
    snprintf(name, sizeof name, "program-%s-%u.bin", label, programs++);
    bench_save_binary(env, program, name);
}

int bench_heap_make(bench_env *env, const clheap_heap_config *config, size_t count, const char **sources,
                    clheap_heap **heap, cl_program *program)
{
    *heap = NULL;
    *program = NULL;
    clheap_status st = clheap_heap_create(env->context, env->device, env->queue, config, heap);
    if (st != CLHEAP_SUCCESS) {
        const char *name = clheap_allocator_name(config->allocator);
        fprintf(stderr, "%s: heap of %llu bytes: %s\n", name ? name : "default allocator",
                (unsigned long long)config->size_bytes, clheap_status_string(st));
        return 1;
    }
    static char log[65536];
    st = clheap_heap_build_program(*heap, count, sources, env->build_options, program, log, sizeof log);
    if (st != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n%s\n", clheap_status_string(st), log);
        clheap_heap_destroy(*heap);
        *heap = NULL;
        return 1;
    }
    save_if_asked(env, *program, clheap_allocator_name(clheap_heap_allocator(*heap)));
    return 0;
}

/* bench_free from a program of its own without NVIDIA's register cap, where the heap's
 * programs get one (TierAlloc on NVIDIA), as docs/tuning.md advises for kernels that only
 * free: under any -cl-nv-maxrregcount NVIDIA's assembler gave that kernel 69 registers
 * instead of 40, and 2^20 frees took up to 1.6x as long (docs/performance.md, runs 130
 * and 131). Replaces r->free_k; 1 (and says why) on failure. */
static int free_kernel_uncapped(bench_env *env, heap_run *r)
{
    char heap_options[256], options[1024];
    if (clheap_heap_build_options(r->heap, heap_options, sizeof heap_options) != CLHEAP_SUCCESS ||
        !strstr(heap_options, "-cl-nv-maxrregcount"))
        return 0;
    snprintf(options, sizeof options, "%s -DCLHEAP_NV_MAX_REGISTERS=0", env->build_options ? env->build_options : "");
    static char log[65536];
    cl_program program = NULL;
    clheap_status st = clheap_heap_build_program(r->heap, 1, &bench_common_kernels, options, &program, log, sizeof log);
    if (st != CLHEAP_SUCCESS) {
        fprintf(stderr, "bench_free's program: %s\n%s\n", clheap_status_string(st), log);
        return 1;
    }
    char label[64];
    snprintf(label, sizeof label, "%s-free", clheap_allocator_name(clheap_heap_allocator(r->heap)));
    save_if_asked(env, program, label);
    cl_int err;
    cl_kernel k = clCreateKernel(program, "bench_free", &err);
    clReleaseProgram(program); /* the kernel holds it */
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateKernel: %s\n", clheap_status_string(err));
        return 1;
    }
    clReleaseKernel(r->free_k);
    r->free_k = k;
    return 0;
}

typedef struct bench_kernel_ref {
    cl_kernel *kernel;
    const char *name;
} bench_kernel_ref;

int bench_heap_open(bench_env *env, clheap_allocator a, uint64_t bytes, uint32_t request, bench_kernel_set set,
                    heap_run *r)
{
    int group = set == BENCH_KERNELS_GROUP;
    clheap_heap_config config = clheap_heap_config_default();
    config.no_warp_coalescing = group; /* the work-group row measures work-group coalescing alone */
    config.allocator = a;
    config.size_bytes = bytes;
    config.slot_bytes = (request + 15) / 16 * 16; /* BitmapAlloc: slots of the request size */
    memset(r, 0, sizeof *r);
    const char *sources[] = {bench_common_kernels, set == BENCH_KERNELS_PAPERS ? bench_papers_kernels
                                                   : group                    ? bench_group_kernel
                                                                              : bench_throughput_kernels};
    if (bench_heap_make(env, &config, 2, sources, &r->heap, &r->program))
        return 1;
    bench_kernel_ref papers[] = {{&r->free_k, "bench_free"}, {&r->ad_k, "bench_ad"}, {&r->acd_k, "bench_acd"},
                                 {&r->prob_k, "bench_probability"}, {&r->fill_k, "bench_fill"}};
    bench_kernel_ref throughput[] = {{&r->free_k, "bench_free"},
                                     {&r->malloc_k, group ? "bench_malloc_group" : "bench_malloc"},
                                     {&r->malloc_mixed_k, group ? "bench_malloc_group" : "bench_malloc_mixed"}};
    int paper = set == BENCH_KERNELS_PAPERS;
    bench_kernel_ref *wanted = paper ? papers : throughput;
    size_t count = paper ? sizeof papers / sizeof *papers : sizeof throughput / sizeof *throughput;
    cl_int err, all = CL_SUCCESS;
    for (size_t i = 0; i < count; i++) {
        *wanted[i].kernel = clCreateKernel(r->program, wanted[i].name, &err);
        if (err != CL_SUCCESS)
            all = err;
    }
    if (all != CL_SUCCESS)
        fprintf(stderr, "clCreateKernel: %s\n", clheap_status_string(all));
    if (all != CL_SUCCESS || free_kernel_uncapped(env, r)) {
        bench_heap_close(r);
        memset(r, 0, sizeof *r);
        return 1;
    }
    return 0;
}

void bench_heap_close(heap_run *r)
{
    if (r->malloc_k)
        clReleaseKernel(r->malloc_k);
    cl_kernel more[] = {r->free_k, r->ad_k, r->acd_k, r->prob_k, r->fill_k, r->malloc_mixed_k};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        if (more[i])
            clReleaseKernel(more[i]);
    if (r->program)
        clReleaseProgram(r->program);
    clheap_heap_destroy(r->heap);
}

/* One throughput row of the CSV (BENCH_THROUGHPUT_COLUMNS) from the timed runs' malloc
 * and free times, whose medians m and f the caller has; gallatin-bench writes the same. */
static void throughput_csv_row(FILE *csv, const char *name, size_t n, const char *shape, const double *tm, double m,
                               double f, long nulls, int runs, const char *start)
{
    double m_min, m_max;
    bench_min_max(tm, runs, &m_min, &m_max);
    if (csv)
        fprintf(csv, "%s,%zu,%s,%.9f,%.9f,%.9f,%.9f,%.6e,%.6e,%ld,%d,%s\n", name, n, shape, m, m_min, m_max, f, n / m,
                n / f, nulls, runs, start);
}

/* The launch floor: kernels of the throughput's launch shapes that allocate nothing, timed
 * as its malloc and free kernels are (profiling start to end), so that small launches can
 * be read against what any kernel of that shape costs here. gallatin-bench measures the
 * same kernels with CUDA events; their floors differ, and the comparison says by how much.
 * Written as allocator "empty-kernel", bytes 0. */
static const char *floor_source =
    "__kernel void floor_malloc(__global uint *units) { units[get_global_id(0)] = 0u; }\n"
    "__kernel void floor_free(__global const uint *units, __global uint *sink) {\n"
    "    if (units[get_global_id(0)]) sink[0] = 1u;\n"
    "}\n";

static void throughput_floor(bench_env *env, size_t n, FILE *csv)
{
    cl_int err;
    cl_program program = clCreateProgramWithSource(env->context, 1, &floor_source, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(program, 1, &env->device, "", NULL, NULL) != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        return;
    }
    cl_kernel mk = clCreateKernel(program, "floor_malloc", &err), fk = clCreateKernel(program, "floor_free", &err);
    cl_mem units = clCreateBuffer(env->context, CL_MEM_READ_WRITE, n * sizeof(uint32_t), NULL, &err);
    cl_mem sink = clCreateBuffer(env->context, CL_MEM_READ_WRITE, sizeof(uint32_t), NULL, &err);
    double tm[16], tf[16];
    clSetKernelArg(mk, 0, sizeof units, &units);
    clSetKernelArg(fk, 0, sizeof units, &units);
    clSetKernelArg(fk, 1, sizeof sink, &sink);
    for (int run = 0; run <= env->runs; run++) { /* run 0: warm-up */
        size_t global = n, local = 256;
        cl_event em, ef;
        clEnqueueNDRangeKernel(env->queue, mk, 1, NULL, &global, &local, 0, NULL, &em);
        clFinish(env->queue);
        clEnqueueNDRangeKernel(env->queue, fk, 1, NULL, &global, &local, 0, NULL, &ef);
        clFinish(env->queue);
        if (run > 0) {
            tm[run - 1] = bench_event_seconds(em);
            tf[run - 1] = bench_event_seconds(ef);
        }
        clReleaseEvent(em);
        clReleaseEvent(ef);
    }
    double m = bench_median(tm, env->runs), f = bench_median(tf, env->runs);
    printf("  %-16s %9zu %8s %12.3f %12.3f\n", "empty-kernel", n, "0", m * 1e3, f * 1e3);
    throughput_csv_row(csv, "empty-kernel", n, "0", tm, m, f, 0, env->runs, "warm");
    clReleaseMemObject(units);
    clReleaseMemObject(sink);
    clReleaseKernel(mk);
    clReleaseKernel(fk);
    clReleaseProgram(program);
}

int bench_throughput(bench_env *env)
{
    size_t nsizes, nitems;
    const uint32_t *sizes = bench_throughput_shapes(env->quick, &nsizes);
    const uint32_t *items_list = bench_throughput_items(env->quick, &nitems);
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    /* One heap size for every shape (peers in bench/peers/ use the same), shapes asking
     * for more than half of it skipped; quick mode sizes each heap to its shape. */
    uint64_t fixed_heap = env->heap_bytes ? env->heap_bytes : env->quick ? 0 : 8ull << 30;
    if (fixed_heap > max_alloc)
        fixed_heap = max_alloc;

    FILE *csv = bench_csv_open(env, "throughput", BENCH_THROUGHPUT_COLUMNS);
    printf("throughput: every work-item mallocs, then every work-item frees (median of %d runs, %s)\n",
           env->runs, env->cold ? "each from a fresh heap" : "each after the last run's frees");
    printf("  %-16s %9s %8s %12s %12s %14s %14s %8s\n", "allocator", "items", "bytes",
           "malloc ms", "free ms", "malloc/s", "free/s", "NULLs");
    for (size_t ii = 0; ii < nitems; ii++)
        throughput_floor(env, items_list[ii], csv);
    int failures = 0;
    /* Every allocator, then BlockAlloc again with work-group request coalescing. */
    for (int row = CLHEAP_ATOMIC_MALLOC; row <= CLHEAP_ALLOCATOR_LAST + 1; row++) {
        int group = row == CLHEAP_ALLOCATOR_LAST + 1;
        int a = group ? CLHEAP_BLOCK_ALLOC : row;
        if (!bench_wants(env, (clheap_allocator)a))
            continue;
        for (size_t ii = 0; ii < nitems; ii++) {
            size_t n = items_list[ii];
            for (size_t si = 0; si < nsizes; si++) {
                uint32_t bytes = sizes[si];
                uint32_t largest = bytes == BENCH_MIXED_4K ? 4096 : bytes == BENCH_MIXED_1M ? 1u << 20 : bytes;
                uint64_t asked = bench_shape_bytes(bytes, (uint32_t)n);
                /* Room for every allocation with its header, twice over. */
                uint64_t heap_bytes = fixed_heap ? fixed_heap : 2 * (asked + 16 * (uint64_t)n) + (16u << 20);
                if (heap_bytes > max_alloc)
                    heap_bytes = max_alloc;
                char shape[16];
                bench_shape_name(bytes, shape, sizeof shape);
                if (asked > heap_bytes / 2 || !bench_wants_shape(env, n, shape))
                    continue;
                heap_run r;
                if (bench_heap_open(env, (clheap_allocator)a, heap_bytes, largest,
                                    group ? BENCH_KERNELS_GROUP : BENCH_KERNELS_THROUGHPUT, &r) != 0) {
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
                /* Runs after the warm-up start from what the last run's frees left, as a
                 * program that keeps its heap (and Gallatin's harness) does; bump
                 * allocators, which cannot free, and --cold start every run afresh. */
                int cold = env->cold || a == CLHEAP_ATOMIC_MALLOC || a == CLHEAP_ATOMIC_WRAP_MALLOC;
                for (int run = 0; run <= runs; run++) { /* run 0: warm-up */
                    if (run == 0 || cold)
                        clheap_heap_reset(r.heap);
                    cl_kernel mk = bytes > BENCH_MIXED_1M ? r.malloc_k : r.malloc_mixed_k;
                    clheap_heap_set_kernel_arg(r.heap, mk, 0);
                    clSetKernelArg(mk, 1, sizeof units, &units);
                    clSetKernelArg(mk, 2, sizeof bytes, &bytes);
                    clheap_heap_set_kernel_arg(r.heap, r.free_k, 0);
                    clSetKernelArg(r.free_k, 1, sizeof units, &units);
                    size_t global = n, local = 256;
                    cl_event em, ef;
                    clEnqueueNDRangeKernel(env->queue, mk, 1, NULL, &global, &local, 0, NULL, &em);
                    clEnqueueReadBuffer(env->queue, units, CL_TRUE, 0, n * sizeof *host, host, 0, NULL, NULL);
                    clEnqueueNDRangeKernel(env->queue, r.free_k, 1, NULL, &global, &local, 0, NULL, &ef);
                    clFinish(env->queue);
                    if (run > 0) {
                        tm[run - 1] = bench_event_seconds(em);
                        tf[run - 1] = bench_event_seconds(ef);
                    } else if (bench_event_seconds(em) > 0.25) {
                        runs = 1; /* a slow configuration: one timed run keeps the suite short */
                    }
                    clReleaseEvent(em);
                    clReleaseEvent(ef);
                    long v = bench_verify_units(host, n, NULL, bytes, pool_begin, pool_bytes);
                    wrong |= v < 0;
                    nulls = v;
                }
                double m = bench_median(tm, runs), f = bench_median(tf, runs);
                char options[128] = "", label[32];
                clheap_heap_build_options(r.heap, options, sizeof options);
                snprintf(label, sizeof label, "%s%s", clheap_allocator_name((clheap_allocator)a),
                         group ? "+group" : strstr(options, "HAVE_PTX") ? "+warp" : "");
                const char *name = label;
                if (wrong) {
                    printf("  %-16s %9zu %8s   WRONG: overlapping or out-of-pool allocations\n", name,
                           n, shape);
                    failures++;
                } else {
                    printf("  %-16s %9zu %8s %12.3f %12.3f %14.3e %14.3e %8ld%s\n", name, n, shape,
                           m * 1e3, f * 1e3, n / m, n / f, nulls, runs == 1 && env->runs > 1 ? "  (1 run)" : "");
                }
                if (!wrong)
                    throughput_csv_row(csv, name, n, shape, tm, m, f, nulls, runs, cold ? "cold" : "warm");
                free(host);
                clReleaseMemObject(units);
                bench_heap_close(&r);
            }
        }
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}

/* ptxas's register count for the malloc+free kernel, from -cl-nv-verbose's build log;
 * -1 if the build failed or reported none. */
static int kernel_registers(bench_env *env, clheap_allocator a, int warp_coalescing, char *line, size_t len)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.size_bytes = 16u << 20;
    config.no_warp_coalescing = !warp_coalescing;
    clheap_heap *heap;
    if (clheap_heap_create(env->context, env->device, env->queue, &config, &heap) != CLHEAP_SUCCESS)
        return -1;
    static char log[65536];
    cl_program program;
    int regs = -1;
    snprintf(line, len, "build failed");
    char options[1024];
    snprintf(options, sizeof options, "-cl-nv-verbose %s", env->build_options ? env->build_options : "");
    if (clheap_heap_build_program(heap, 1, &bench_register_kernel, options, &program, log, sizeof log) ==
        CLHEAP_SUCCESS) {
        clGetProgramBuildInfo(program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        /* The log names each function, then its "Used N registers" line. */
        char *k = strstr(log, "bench_malloc_free");
        char *used = k ? strstr(k, "Used ") : NULL;
        snprintf(line, len, "not found");
        if (used) {
            size_t n = strcspn(used, "\n");
            snprintf(line, len, "%.*s", (int)(n < 200 ? n : 200), used);
            regs = atoi(used + 5);
        }
        clReleaseProgram(program);
    }
    clheap_heap_destroy(heap);
    return regs;
}

/* Register usage of one clheap_malloc + clheap_free (Vinkler & Havran Table 1), without
 * and with warp coalescing where the allocator has it. */
int bench_registers(bench_env *env)
{
    char vendor[256] = "";
    clGetPlatformInfo(env->platform, CL_PLATFORM_NAME, sizeof vendor, vendor, NULL);
    int nvidia = strstr(vendor, "NVIDIA") != NULL;
    FILE *csv = bench_csv_open(env, "registers", "allocator,uncoalesced,coalesced,ptxas_line");
    printf("registers: a kernel with one malloc + free (ptxas, -cl-nv-verbose)\n");
    printf("  %-17s %12s %12s\n", "allocator", "uncoalesced", "warp-coalesced");
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        if (!bench_wants(env, (clheap_allocator)a))
            continue;
        if (!nvidia) {
            printf("  %-17s n/a (not an NVIDIA device)\n", name);
            continue;
        }
        char line[256], line2[256];
        int plain = kernel_registers(env, (clheap_allocator)a, 0, line, sizeof line);
        int has_warp = a >= CLHEAP_CMALLOC && a != CLHEAP_BITMAP_ALLOC;
        int warp = has_warp ? kernel_registers(env, (clheap_allocator)a, 1, line2, sizeof line2) : -1;
        char warp_text[16] = "-";
        if (has_warp)
            snprintf(warp_text, sizeof warp_text, "%d", warp);
        printf("  %-17s %12d %12s   (%s)\n", name, plain, warp_text, line);
        if (csv)
            fprintf(csv, "%s,%d,%s,\"%s\"\n", name, plain, has_warp ? warp_text : "", line);
    }
    if (csv)
        fclose(csv);
    return 0;
}
