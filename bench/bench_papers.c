/* The published allocator tests, on any OpenCL device:
 *  Vinkler & Havran 2015, Table 2: Alloc-Dealloc (AD) over payloads, Alloc-Cycle-Dealloc
 *  (ACD) over payloads, heap sizes and iterations, Probability (P) over work-groups of
 *  256 work-items; one allocating work-item per 32 (the paper) and every work-item.
 *  Springer & Masuhara 2019, sec. 6.4: Linux-scalability, with the heap utilisation reached.
 *  Out-of-memory utilisation: allocate a fixed size until NULL.
 * Every run starts from a fresh heap (clheap_heap_reset) and is verified: each
 * allocation is stamped and checked before it is freed, NULLs are counted. Times are
 * OpenCL profiling events around the test kernels only. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { WORK_GROUP = 256 };

typedef struct paper_case {
    const char *test; /* ad, acd-payload, acd-heap, acd-iterations, probability */
    clheap_allocator allocator;
    uint32_t bytes, blocks, iterations, stride;
    uint64_t heap_bytes;
    double x; /* the plotted parameter */
} paper_case;

static uint64_t device_max_alloc(bench_env *env)
{
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    return max_alloc;
}

/* Whether allocator a can serve requests of `bytes` at all (else the row says n/a). */
static int applies(clheap_allocator a, uint32_t bytes)
{
    if (a == CLHEAP_BLOCK_ALLOC)
        return bytes <= 16384; /* the largest default size class */
    return 1;
}

static void set_arg(cl_kernel k, cl_uint i, size_t size, const void *value)
{
    clSetKernelArg(k, i, size, value);
}

static cl_mem zeroed(bench_env *env, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(env->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_uint zero = 0;
    clEnqueueFillBuffer(env->queue, b, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    return b;
}

static double launch(bench_env *env, cl_kernel k, size_t items)
{
    size_t global = items, local = WORK_GROUP;
    cl_event e;
    clEnqueueNDRangeKernel(env->queue, k, 1, NULL, &global, &local, 0, NULL, &e);
    clWaitForEvents(1, &e);
    double t = bench_event_seconds(e);
    clReleaseEvent(e);
    return t;
}

/* The heap of the previous case, kept while allocator, size and slot size stay the same:
 * building the program is what costs, and every run resets the heap anyway. */
static heap_run cached_run;
static clheap_allocator cached_allocator;
static uint64_t cached_heap_bytes;
static uint32_t cached_slot;

static heap_run *heap_for(bench_env *env, clheap_allocator a, uint64_t heap_bytes, uint32_t request)
{
    uint32_t slot = a == CLHEAP_BITMAP_ALLOC ? (request + 15) / 16 * 16 : 0;
    if (cached_run.heap && cached_allocator == a && cached_heap_bytes == heap_bytes && cached_slot == slot)
        return &cached_run;
    if (cached_run.heap)
        bench_heap_close(&cached_run);
    memset(&cached_run, 0, sizeof cached_run);
    if (bench_heap_open(env, a, heap_bytes, request, BENCH_KERNELS_PAPERS, &cached_run) != 0)
        return NULL;
    cached_allocator = a;
    cached_heap_bytes = heap_bytes;
    cached_slot = slot;
    return &cached_run;
}

static void heap_cache_clear(void)
{
    if (cached_run.heap)
        bench_heap_close(&cached_run);
    memset(&cached_run, 0, sizeof cached_run);
}

/* Runs one case `runs` times (after a warm-up); returns 0, or 1 if the allocator broke
 * its contract (a stamp was overwritten). */
static int run_case(bench_env *env, const paper_case *pc, FILE *csv, FILE *frag)
{
    const char *name = clheap_allocator_name(pc->allocator);
    /* Live at once: every allocating work-item's allocations. Past half the heap the test
     * measures out-of-memory walks, not allocation (that is what `oom` is for). */
    uint64_t live = (uint64_t)pc->blocks * WORK_GROUP / pc->stride * pc->iterations * ((pc->bytes + 15) / 16 * 16 + 16);
    if (strcmp(pc->test, "probability") != 0 && live > pc->heap_bytes / 2) {
        if (csv)
            fprintf(csv, "%s,%s,%u,%g,,,,exceeds heap,\n", pc->test, name, pc->stride, pc->x);
        return 0;
    }
    if (!applies(pc->allocator, pc->bytes)) {
        if (csv)
            fprintf(csv, "%s,%s,%u,%g,,,,n/a,\n", pc->test, name, pc->stride, pc->x);
        return 0;
    }
    heap_run *hr = heap_for(env, pc->allocator, pc->heap_bytes, pc->bytes);
    if (!hr)
        return 1;
    heap_run r = *hr;
    size_t items = (size_t)pc->blocks * WORK_GROUP;
    cl_mem counts = zeroed(env, 4 * sizeof(cl_uint));
    cl_mem held = zeroed(env, items * sizeof(cl_uint));
    double times[16];
    int runs = env->runs;
    cl_uint c[4] = {0, 0, 0, 0};
    for (int run = 0; run <= runs; run++) {
        clheap_heap_reset(r.heap);
        cl_uint zero = 0;
        clEnqueueFillBuffer(env->queue, counts, &zero, sizeof zero, 0, 4 * sizeof zero, 0, NULL, NULL);
        clEnqueueFillBuffer(env->queue, held, &zero, sizeof zero, 0, items * sizeof zero, 0, NULL, NULL);
        double t = 0;
        if (strcmp(pc->test, "probability") == 0) {
            cl_kernel k = r.prob_k;
            clheap_heap_set_kernel_arg(r.heap, k, 0);
            set_arg(k, 1, sizeof pc->bytes, &pc->bytes);
            set_arg(k, 2, sizeof pc->stride, &pc->stride);
            set_arg(k, 3, sizeof held, &held);
            set_arg(k, 5, sizeof counts, &counts);
            for (cl_uint launch_index = 0; launch_index < pc->iterations; launch_index++) {
                cl_uint seed = 7919u * (launch_index + 1);
                set_arg(k, 4, sizeof seed, &seed);
                t += launch(env, k, items);
            }
        } else if (pc->iterations > 1) {
            cl_kernel k = r.acd_k;
            clheap_heap_set_kernel_arg(r.heap, k, 0);
            set_arg(k, 1, sizeof pc->bytes, &pc->bytes);
            set_arg(k, 2, sizeof pc->stride, &pc->stride);
            set_arg(k, 3, sizeof pc->iterations, &pc->iterations);
            set_arg(k, 4, sizeof counts, &counts);
            t = launch(env, k, items);
        } else {
            cl_kernel k = r.ad_k;
            clheap_heap_set_kernel_arg(r.heap, k, 0);
            set_arg(k, 1, sizeof pc->bytes, &pc->bytes);
            set_arg(k, 2, sizeof pc->stride, &pc->stride);
            set_arg(k, 3, sizeof counts, &counts);
            t = launch(env, k, items);
        }
        clEnqueueReadBuffer(env->queue, counts, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
        if (run == 0 && t > 0.25)
            runs = 1; /* a slow configuration: one timed run keeps the suite short */
        if (run > 0)
            times[run - 1] = t;
    }
    double lo, hi;
    bench_min_max(times, runs, &lo, &hi);
    double median = bench_median(times, runs);
    printf("  %-15s %-17s %6u %10g %10.3f %10.3f %10.3f %8u%s\n", pc->test, name, pc->stride, pc->x,
           median * 1e3, lo * 1e3, hi * 1e3, c[0], c[1] ? "  CORRUPTED" : "");
    if (csv)
        fprintf(csv, "%s,%s,%u,%g,%.6f,%.6f,%.6f,%u,%u\n", pc->test, name, pc->stride, pc->x, median * 1e3,
                lo * 1e3, hi * 1e3, c[0], c[1]);
    if (frag) { /* the state the last run left (P: allocations still held) */
        clheap_heap_stats s;
        if (clheap_heap_calculate_stats(r.heap, &s) == CLHEAP_SUCCESS)
            fprintf(frag, "%s,%s,%u,%g,%.6f,%.6f,%.6f\n", pc->test, name, pc->stride, pc->x,
                    s.internal_fragmentation, s.external_fragmentation, s.slot_fragmentation);
    }
    clReleaseMemObject(counts);
    clReleaseMemObject(held);
    return c[1] != 0;
}

int bench_papers(bench_env *env)
{
    uint64_t max_alloc = device_max_alloc(env);
    uint64_t big_heap = env->quick ? 16u << 20 : 2ull << 30;
    if (big_heap > max_alloc)
        big_heap = max_alloc / 16 * 16;
    uint32_t blocks = env->quick ? 8 : 120;
    FILE *csv = bench_csv_open(env, "papers", "test,allocator,stride,x,median_ms,min_ms,max_ms,nulls,corrupted");
    FILE *frag = bench_csv_open(env, "fragmentation",
                                "test,allocator,stride,x,f_internal,f_external,slot_fragmentation");
    printf("paper tests (Vinkler & Havran Table 2): %u work-groups of %d, heap %llu MiB, median of %d runs\n",
           blocks, WORK_GROUP, (unsigned long long)(big_heap >> 20), env->runs);
    printf("  %-15s %-17s %6s %10s %10s %10s %10s %8s\n", "test", "allocator", "stride", "x", "median ms",
           "min ms", "max ms", "NULLs");
    int failures = 0;
    static const uint32_t strides[] = {32, 1};
    for (int si = 0; si < 2; si++) {
        uint32_t stride = strides[si];
        for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
            if (!bench_wants(env, (clheap_allocator)a))
                continue;
            fprintf(stderr, "clheap-bench: paper tests, %s, stride %u\n",
                    clheap_allocator_name((clheap_allocator)a), stride);
            paper_case pc = {"ad", (clheap_allocator)a, 4, blocks, 1, stride, big_heap, 0};
            /* AD over payloads 4 B .. 128 KiB (Figure 3(a)) */
            for (uint32_t bytes = 4; bytes <= 128u * 1024; bytes *= env->quick ? 32 : 2) {
                pc.bytes = bytes;
                pc.x = bytes;
                failures += run_case(env, &pc, csv, stride == 32 ? frag : NULL);
            }
            /* ACD, 10 iterations, over payloads (Figure 4) */
            pc.test = "acd-payload";
            pc.iterations = 10;
            for (uint32_t bytes = 4; bytes <= 128u * 1024; bytes *= env->quick ? 32 : 4) {
                pc.bytes = bytes;
                pc.x = bytes;
                failures += run_case(env, &pc, csv, NULL);
            }
            /* ACD, 4 B, over heap sizes (Figure 3(b)); clheap's smallest heap is 1 MiB */
            pc.test = "acd-heap";
            pc.bytes = 4;
            for (uint64_t heap = 1u << 20; heap <= big_heap; heap *= env->quick ? 16 : 4) {
                pc.heap_bytes = heap;
                pc.x = (double)heap;
                failures += run_case(env, &pc, csv, NULL);
            }
            pc.heap_bytes = big_heap;
            /* ACD, 4 B, over iterations 10 .. 100 (Figure 3(c)) */
            pc.test = "acd-iterations";
            for (uint32_t it = 10; it <= 100; it += env->quick ? 90 : 10) {
                pc.iterations = it;
                pc.x = it;
                failures += run_case(env, &pc, csv, stride == 32 && it == 100 ? frag : NULL);
            }
            /* P: 10 launches, 4 B, over 1 .. 120 work-groups (Figure 3(d)) */
            pc.test = "probability";
            pc.iterations = 10;
            static const uint32_t groups[] = {1, 2, 4, 8, 16, 32, 64, 120};
            for (int g = 0; g < 8; g++) {
                if (groups[g] > blocks)
                    break;
                pc.blocks = groups[g];
                pc.x = groups[g];
                failures += run_case(env, &pc, csv, stride == 32 && groups[g] == blocks ? frag : NULL);
            }
        }
    }
    heap_cache_clear();
    if (csv)
        fclose(csv);
    if (frag)
        fclose(frag);
    return failures != 0;
}

/* Linux-scalability (DynaSOAr sec. 6.4): W work-items each allocate x objects of 64 B in
 * one kernel, a second kernel frees them all; the heap holds exactly W * x objects
 * (but never less than clheap's 1 MiB minimum). Reports time per allocation and the
 * fraction of the W * x allocations that succeeded. */
int bench_linux_scalability(bench_env *env)
{
    const uint32_t items = env->quick ? 4096 : 16384, bytes = 64;
    FILE *csv = bench_csv_open(env, "linux_scalability",
                               "allocator,work_items,per_item,heap_bytes,alloc_ms,free_ms,ns_per_alloc,utilisation");
    printf("linux-scalability: %u work-items x x allocations of %u B, heap for exactly that many\n", items, bytes);
    printf("  %-17s %6s %12s %12s %12s %12s\n", "allocator", "x", "alloc ms", "free ms", "ns/alloc", "utilisation");
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        if (!bench_wants(env, (clheap_allocator)a))
            continue;
        for (uint32_t x = 1; x <= (env->quick ? 4u : 64u); x *= 2) {
            uint64_t objects = (uint64_t)items * x, heap_bytes = objects * bytes;
            if (heap_bytes < (1u << 20))
                heap_bytes = 1u << 20;
            heap_run r;
            if (bench_heap_open(env, (clheap_allocator)a, heap_bytes, bytes, BENCH_KERNELS_PAPERS, &r) != 0)
                continue;
            cl_mem units = zeroed(env, objects * sizeof(cl_uint)), sizes = zeroed(env, objects * sizeof(cl_uint));
            double ta[16], tf[16];
            uint64_t granted = 0;
            int runs = env->runs;
            uint32_t *host = malloc(objects * sizeof *host);
            for (int run = 0; run <= runs; run++) {
                clheap_heap_reset(r.heap);
                clheap_heap_set_kernel_arg(r.heap, r.fill_k, 0);
                set_arg(r.fill_k, 1, sizeof units, &units);
                set_arg(r.fill_k, 2, sizeof sizes, &sizes);
                set_arg(r.fill_k, 3, sizeof x, &x);
                set_arg(r.fill_k, 4, sizeof bytes, &bytes);
                double t_alloc = launch(env, r.fill_k, items);
                clEnqueueReadBuffer(env->queue, units, CL_TRUE, 0, objects * sizeof *host, host, 0, NULL, NULL);
                clheap_heap_set_kernel_arg(r.heap, r.free_k, 0);
                set_arg(r.free_k, 1, sizeof units, &units);
                double t_free = launch(env, r.free_k, objects);
                granted = 0;
                for (uint64_t i = 0; i < objects; i++)
                    granted += host[i] != 0;
                if (run > 0) {
                    ta[run - 1] = t_alloc;
                    tf[run - 1] = t_free;
                } else if (t_alloc > 0.25) {
                    runs = 1;
                }
            }
            double alloc = bench_median(ta, runs), freeing = bench_median(tf, runs);
            double utilisation = (double)granted / (double)objects;
            const char *name = clheap_allocator_name((clheap_allocator)a);
            printf("  %-17s %6u %12.3f %12.3f %12.3f %12.4f\n", name, x, alloc * 1e3, freeing * 1e3,
                   (alloc + freeing) * 1e9 / (double)objects, utilisation);
            if (csv)
                fprintf(csv, "%s,%u,%u,%llu,%.6f,%.6f,%.3f,%.6f\n", name, items, x, (unsigned long long)heap_bytes,
                        alloc * 1e3, freeing * 1e3, (alloc + freeing) * 1e9 / (double)objects, utilisation);
            free(host);
            clReleaseMemObject(units);
            clReleaseMemObject(sizes);
            bench_heap_close(&r);
        }
    }
    if (csv)
        fclose(csv);
    return 0;
}

/* Out-of-memory utilisation: allocate a fixed size (or a mix) until NULL; the fraction
 * of the heap's bytes handed out in requested bytes. */
int bench_oom(bench_env *env)
{
    const uint64_t heap_bytes = env->quick ? 2u << 20 : 64u << 20;
    static const uint32_t sizes[] = {16, 256, 1024, 4096, 24576, 65536, 66560, 1u << 20, 0};
    FILE *csv = bench_csv_open(env, "oom", "allocator,bytes,granted,granted_bytes,heap_bytes,utilisation");
    printf("out-of-memory utilisation: fill a %llu MiB heap until NULL (0 B = mixed 16 B - 4 KiB)\n",
           (unsigned long long)(heap_bytes >> 20));
    printf("  %-17s %6s %10s %14s %12s\n", "allocator", "bytes", "granted", "granted bytes", "utilisation");
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        if (a == CLHEAP_ATOMIC_WRAP_MALLOC || !bench_wants(env, (clheap_allocator)a))
            continue; /* AtomicWrapMalloc wraps instead of running out */
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            uint32_t bytes = sizes[si];
            heap_run r;
            if (bench_heap_open(env, (clheap_allocator)a, heap_bytes, bytes ? bytes : 4096, BENCH_KERNELS_PAPERS, &r) != 0)
                continue;
            uint32_t smallest = bytes ? bytes : 16;
            cl_uint per_item = 64;
            size_t items = (size_t)(heap_bytes / smallest / per_item * 5 / 4 + WORK_GROUP) / WORK_GROUP * WORK_GROUP;
            size_t slots = items * per_item;
            cl_mem units = zeroed(env, slots * sizeof(cl_uint)), sizes_buf = zeroed(env, slots * sizeof(cl_uint));
            clheap_heap_set_kernel_arg(r.heap, r.fill_k, 0);
            set_arg(r.fill_k, 1, sizeof units, &units);
            set_arg(r.fill_k, 2, sizeof sizes_buf, &sizes_buf);
            set_arg(r.fill_k, 3, sizeof per_item, &per_item);
            set_arg(r.fill_k, 4, sizeof bytes, &bytes);
            launch(env, r.fill_k, items);
            uint32_t *u = malloc(slots * sizeof *u), *sz = malloc(slots * sizeof *sz);
            clEnqueueReadBuffer(env->queue, units, CL_TRUE, 0, slots * sizeof *u, u, 0, NULL, NULL);
            clEnqueueReadBuffer(env->queue, sizes_buf, CL_TRUE, 0, slots * sizeof *sz, sz, 0, NULL, NULL);
            uint64_t granted = 0, granted_bytes = 0;
            for (size_t i = 0; i < slots; i++)
                if (u[i]) {
                    granted++;
                    granted_bytes += sz[i];
                }
            double utilisation = (double)granted_bytes / (double)heap_bytes;
            const char *name = clheap_allocator_name((clheap_allocator)a);
            printf("  %-17s %6u %10llu %14llu %12.4f\n", name, bytes, (unsigned long long)granted,
                   (unsigned long long)granted_bytes, utilisation);
            if (csv)
                fprintf(csv, "%s,%u,%llu,%llu,%llu,%.6f\n", name, bytes, (unsigned long long)granted,
                        (unsigned long long)granted_bytes, (unsigned long long)heap_bytes, utilisation);
            free(u);
            free(sz);
            clReleaseMemObject(units);
            clReleaseMemObject(sizes_buf);
            bench_heap_close(&r);
        }
    }
    if (csv)
        fclose(csv);
    return 0;
}
