/* oom-launch: what a launch in which most mallocs return NULL costs. Every work-item of
 * one launch asks for the same size from a heap that holds about half of the requests
 * or less (bench_oom_shapes, bench/bench_shapes.h), in rounds on one heap (each round's
 * frees before the next, as a program that retries does); then the launch that fits
 * (bench_oom_fitting: the same work-items on a heap large enough to hold them, or as many
 * of them as the largest such heap holds). Reported per request, with the ratio of the two. Every round is verified: the allocations are disjoint and in the
 * pool, and the NULLs seen equal the NULLs the heap counted (out of memory, contended,
 * and bad size where a size is past what an allocator serves);
 * after the rounds the heap check must pass. bench/peers/gallatin-bench --oom-launch
 * runs the same launches on Gallatin. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_shapes.h"

typedef struct oom_round {
    double malloc_s, free_s;
    long nulls;      /* -1: overlapping or out-of-pool allocations */
    uint64_t counted; /* the heap's NULL counters (counted_nulls), this round's */
} oom_round;

static uint64_t counted_nulls(clheap_heap *heap)
{
    clheap_heap_errors e;
    memset(&e, 0, sizeof e);
    clheap_heap_read_errors(heap, &e);
    return (uint64_t)e.out_of_memory + e.contended + e.bad_size;
}

/* One round: n work-items malloc `bytes`, then free what they got. */
static void oom_round_run(bench_env *env, heap_run *r, cl_mem units, uint32_t *host, uint32_t n, uint32_t bytes,
                          oom_round *out)
{
    uint64_t begin = 0, pool = 0, before = counted_nulls(r->heap);
    clheap_heap_pool_range(r->heap, &begin, &pool);
    clheap_heap_set_kernel_arg(r->heap, r->malloc_k, 0);
    clSetKernelArg(r->malloc_k, 1, sizeof units, &units);
    clSetKernelArg(r->malloc_k, 2, sizeof bytes, &bytes);
    clheap_heap_set_kernel_arg(r->heap, r->free_k, 0);
    clSetKernelArg(r->free_k, 1, sizeof units, &units);
    size_t global = n, local = n < 256u ? n : 256u;
    cl_event em, ef;
    clEnqueueNDRangeKernel(env->queue, r->malloc_k, 1, NULL, &global, &local, 0, NULL, &em);
    clEnqueueReadBuffer(env->queue, units, CL_TRUE, 0, (size_t)n * sizeof *host, host, 0, NULL, NULL);
    out->nulls = bench_verify_units(host, n, NULL, bytes, begin, pool);
    out->counted = counted_nulls(r->heap) - before;
    clEnqueueNDRangeKernel(env->queue, r->free_k, 1, NULL, &global, &local, 0, NULL, &ef);
    clFinish(env->queue);
    out->malloc_s = bench_event_seconds(em);
    out->free_s = bench_event_seconds(ef);
    clReleaseEvent(em);
    clReleaseEvent(ef);
}

/* The rounds of one launch on a fresh heap of the shape's size; the median malloc time
 * per request in *ns, or 1 if a round was wrong, a count inexact or the heap unsound. */
static int oom_launch(bench_env *env, clheap_allocator a, const bench_oom_shape *s, uint32_t n, uint32_t heap_mib,
                      const char *launch, FILE *csv, double *ns, double *null_share)
{
    uint64_t heap_bytes = (uint64_t)heap_mib << 20;
    heap_run r;
    if (bench_heap_open(env, a, heap_bytes, s->bytes, BENCH_KERNELS_THROUGHPUT, &r) != 0)
        return 1;
    cl_int err;
    cl_mem units = clCreateBuffer(env->context, CL_MEM_READ_WRITE, (size_t)n * sizeof(uint32_t), NULL, &err);
    uint32_t *host = malloc((size_t)n * sizeof *host);
    int rounds = env->quick ? 1 : env->runs < 3 ? 3 : env->runs, bad = err != CL_SUCCESS || !host;
    double per[16];
    const char *name = clheap_allocator_name(a);
    for (int k = 0; k < rounds && !bad; k++) {
        oom_round o;
        oom_round_run(env, &r, units, host, n, s->bytes, &o);
        const char *status = o.nulls < 0 ? "wrong" : (uint64_t)o.nulls != o.counted ? "count-differs" : "ok";
        bad |= strcmp(status, "ok") != 0;
        per[k] = o.malloc_s * 1e9 / n;
        *null_share = o.nulls < 0 ? 0.0 : (double)o.nulls / n;
        if (csv)
            fprintf(csv, "%s,%u,%u,%llu,%s,%d,%.9f,%.3f,%ld,%llu,%.9f,%s\n", name, n, s->bytes,
                    (unsigned long long)heap_bytes, launch, k, o.malloc_s, per[k], o.nulls,
                    (unsigned long long)o.counted, o.free_s, status);
        if (bad)
            printf("  %-10s %9u x %7u B on %5u MiB (%s), round %d: %s (%ld NULL seen, %llu counted)\n", name, n,
                   s->bytes, heap_mib, launch, k, status, o.nulls, (unsigned long long)o.counted);
    }
    char what[256] = "";
    if (!bad && clheap_heap_check(r.heap, what, sizeof what) != CLHEAP_SUCCESS) {
        printf("  %-10s %9u x %7u B (%s): heap check: %s\n", name, n, s->bytes, launch, what);
        bad = 1;
    }
    *ns = bad ? 0.0 : bench_median(per, rounds);
    free(host);
    if (units)
        clReleaseMemObject(units);
    bench_heap_close(&r);
    return bad;
}

int bench_oom_launch(bench_env *env)
{
    size_t count;
    const bench_oom_shape *shapes = bench_oom_shapes(env->quick, &count);
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    FILE *csv = bench_csv_open(env, "oom_launch", BENCH_OOM_LAUNCH_COLUMNS);
    uint32_t cap_mib = bench_oom_fitting_cap_mib(env->quick, max_alloc >> 20);
    printf("oom-launch: one launch asking for more than the heap, per request, against the same launch on a "
           "heap that holds it\n");
    printf("  %-10s %9s %9s %9s %12s %8s %9s %9s %12s %9s\n", "allocator", "items", "bytes", "heap MiB",
           "over ns/req", "NULL %", "fit items", "fit MiB", "fits ns/req", "ratio");
    int failures = 0;
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        /* Allocators that free: the rounds return what they got. */
        if (a == CLHEAP_ATOMIC_MALLOC || a == CLHEAP_ATOMIC_WRAP_MALLOC || !bench_wants(env, (clheap_allocator)a))
            continue;
        for (size_t i = 0; i < count; i++) {
            const bench_oom_shape *s = &shapes[i];
            if (((uint64_t)s->heap_mib << 20) > max_alloc)
                continue;
            double over = 0, fits = 0, share = 0, unused;
            uint32_t fit_items, fit_mib = bench_oom_fitting(s, cap_mib, &fit_items);
            failures += oom_launch(env, (clheap_allocator)a, s, s->items, s->heap_mib, "over", csv, &over, &share);
            failures += oom_launch(env, (clheap_allocator)a, s, fit_items, fit_mib, "fits", csv, &fits, &unused);
            printf("  %-10s %9u %9u %9u %12.3f %8.1f %9u %9u %12.3f %9.2f\n",
                   clheap_allocator_name((clheap_allocator)a), s->items, s->bytes, s->heap_mib, over, 100.0 * share,
                   fit_items, fit_mib, fits, fits > 0 ? over / fits : 0.0);
        }
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}
