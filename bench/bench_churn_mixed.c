/* churn-mixed: in-kernel churn with a ring of live allocations per work-item (issue 51; the
 * pattern and its shapes: bench_churn_mixed.h, shared with bench/peers' harnesses).
 *
 * Per allocator (TierAlloc and BlockAlloc unless --only names others) and shape (--churn, or
 * the defaults): the heap is reset, one warm-up launch, then --runs timed launches, each on
 * the state the last left (the heap is empty after every launch). A launch is verified: its
 * wrong words (both stamps of every allocation, checked at its free), the sizes work-items
 * 0..63 asked for against the header's, the heap's bad-free counters; after the shape, the
 * heap check and no live bytes left. NULLs are a result, not a failure: the row gives them
 * with live_bound, an upper bound of the bytes live at once as a share of the pool. A launch
 * past --launch-timeout seconds is a "timeout" row, and the test stops: an OpenCL kernel
 * cannot be cancelled, so the process exits. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_churn_mixed.h"

static const char *churn_mixed_source = BENCH_CHURN_KERNEL_SOURCE;

typedef struct churn_row {
    double t[16];
    cl_uint nulls, wrong, bad_frees;
    clheap_heap_errors why_null; /* the counters' reasons for the NULLs: out of memory, bad size, gave up */
    const char *status; /* "ok", "wrong", "failed" or "timeout" */
    char why[256];
} churn_row;

/* Waits for e at most limit_s seconds (a harness's time limit, not a test's): 0 done, 1 the
 * command failed, 2 still running. */
static int churn_wait(cl_command_queue queue, cl_event e, int limit_s)
{
    clFlush(queue);
    double until = bench_now_seconds() + limit_s;
    for (;;) {
        cl_int state = CL_QUEUED;
        if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL) != CL_SUCCESS ||
            state < 0)
            return 1;
        if (state == CL_COMPLETE)
            return 0;
        if (bench_now_seconds() > until)
            return 2;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static clheap_heap_errors churn_errors(clheap_heap *heap)
{
    clheap_heap_errors e = {0};
    clheap_heap_read_errors(heap, &e);
    return e;
}

/* One launch of the shape; its counts added to row, the sizes work-items 0..63 asked for
 * checked against `sum` (bench_churn_sum's). Returns churn_wait's answer (1 also for an
 * OpenCL error). */
static int churn_launch(bench_env *env, clheap_heap *heap, cl_kernel k, cl_mem counts, const bench_churn_shape *s,
                        uint32_t sum, double *seconds, churn_row *row)
{
    cl_uint got[3] = {0, 0, 0};
    cl_int err = clEnqueueWriteBuffer(env->queue, counts, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
    clheap_heap_set_kernel_arg(heap, k, 0);
    clSetKernelArg(k, 1, sizeof s->items, &s->items);
    clSetKernelArg(k, 2, sizeof s->rounds, &s->rounds);
    clSetKernelArg(k, 3, sizeof s->depth, &s->depth);
    clSetKernelArg(k, 4, sizeof s->max_shift, &s->max_shift);
    clSetKernelArg(k, 5, sizeof counts, &counts);
    size_t local = 256, global = (s->items + local - 1) / local * local;
    cl_event e = NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(env->queue, k, 1, NULL, &global, &local, 0, NULL, &e);
    if (err != CL_SUCCESS)
        return 1;
    int done = churn_wait(env->queue, e, env->launch_limit_s);
    if (done == 0) {
        *seconds = bench_event_seconds(e);
        done = clEnqueueReadBuffer(env->queue, counts, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL) != CL_SUCCESS;
    }
    if (done != 2)
        clReleaseEvent(e);
    row->nulls += got[0];
    row->wrong += got[1];
    if (done == 0 && got[2] != sum)
        snprintf(row->why, sizeof row->why, "sizes asked %u, not the header's %u", got[2], sum);
    return done;
}

/* After the shape's launches: the heap check, and nothing left live. */
static void churn_heap_verdict(clheap_heap *heap, churn_row *row)
{
    char what[200] = "";
    clheap_heap_stats stats = {0};
    clheap_status st = clheap_heap_check(heap, what, sizeof what);
    if (st == CLHEAP_SUCCESS)
        st = clheap_heap_calculate_stats(heap, &stats);
    if (st != CLHEAP_SUCCESS)
        snprintf(row->why, sizeof row->why, "heap check: %s %s", clheap_status_string(st), what);
    else if (stats.live_bytes)
        snprintf(row->why, sizeof row->why, "%llu bytes live after every free",
                 (unsigned long long)stats.live_bytes);
}

static void churn_run_shape(bench_env *env, clheap_heap *heap, cl_kernel k, cl_mem counts,
                            const bench_churn_shape *s, churn_row *row)
{
    memset(row, 0, sizeof *row);
    row->status = "ok";
    if (clheap_heap_reset(heap) != CLHEAP_SUCCESS) {
        row->status = "failed";
        return;
    }
    clheap_heap_errors before = churn_errors(heap);
    uint32_t sum = bench_churn_sum(s);
    for (int run = 0; run <= env->runs; run++) {
        int done = churn_launch(env, heap, k, counts, s, sum, &row->t[run], row);
        if (done) {
            row->status = done == 2 ? "timeout" : "failed";
            return;
        }
    }
    clheap_heap_errors after = churn_errors(heap);
    row->bad_frees = bench_bad_frees(&after) - bench_bad_frees(&before);
    row->why_null.out_of_memory = after.out_of_memory - before.out_of_memory;
    row->why_null.bad_size = after.bad_size - before.bad_size;
    row->why_null.contended = after.contended - before.contended;
    if (!row->why[0])
        churn_heap_verdict(heap, row);
    if (row->wrong || row->bad_frees || row->why[0])
        row->status = "wrong";
}

static void churn_report(bench_env *env, FILE *csv, const char *name, const bench_churn_shape *s, double bound,
                         churn_row *row)
{
    char range[16];
    bench_churn_range_name(s, range, sizeof range);
    double median = 0, lo = 0, hi = 0;
    if (!strcmp(row->status, "ok") || !strcmp(row->status, "wrong")) {
        bench_min_max(row->t + 1, env->runs, &lo, &hi);
        median = bench_median(row->t + 1, env->runs);
    }
    double rate = median > 0 ? (double)s->items * s->rounds / median : 0;
    printf("  %-10s %9u %6u %5u %5s %6.1f%% %10.3f %12.3e %8u %6u %5u %s%s%s%s\n", name, s->items, s->rounds, s->depth,
           range, bound * 100, median * 1e3, rate, row->nulls, row->wrong, row->bad_frees, row->status,
           row->why[0] ? " (" : "", row->why, row->why[0] ? ")" : "");
    if (row->nulls)
        printf("    NULLs, by the heap's counters: out of memory %u, bad size %u, gave up %u%s\n",
               row->why_null.out_of_memory, row->why_null.bad_size, row->why_null.contended,
               bound <= 0.75 ? " (at most 75% of the pool live)" : "");
    if (csv)
        fprintf(csv, "%s,%u,%u,%u,%s,%.4f,%.9f,%.9f,%.9f,%.6e,%u,%u,%u,%d,%s\n", name, s->items, s->rounds, s->depth,
                range, bound, median, lo, hi, rate, row->nulls, row->wrong, row->bad_frees, env->runs, row->status);
}

/* Every shape on one allocator's heap; returns the failures. */
static int churn_allocator(bench_env *env, clheap_allocator a, const bench_churn_shape *shapes, size_t n,
                           uint64_t heap_bytes, FILE *csv)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.size_bytes = heap_bytes;
    config.slot_bytes = 4096; /* BitmapAlloc: the largest request of the 4 KiB range */
    config.no_warp_coalescing = env->no_warp;
    clheap_heap *heap;
    cl_program program;
    if (bench_heap_make(env, &config, 1, &churn_mixed_source, &heap, &program))
        return 1;
    cl_int err, made;
    cl_kernel k = clCreateKernel(program, "churn_mixed", &made);
    cl_mem counts = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &err);
    uint64_t pool_begin = 0, pool_bytes = 1;
    clheap_heap_pool_range(heap, &pool_begin, &pool_bytes);
    int failures = made != CL_SUCCESS || err != CL_SUCCESS;
    for (size_t i = 0; i < n && !failures; i++) {
        churn_row row;
        churn_run_shape(env, heap, k, counts, &shapes[i], &row);
        churn_report(env, csv, clheap_allocator_name(a), &shapes[i],
                     (double)bench_churn_live_bound(&shapes[i]) / (double)pool_bytes, &row);
        if (!strcmp(row.status, "timeout")) {
            fflush(NULL);
            _exit(3); /* the kernel still runs: nothing on this queue can finish */
        }
        failures += strcmp(row.status, "ok") != 0;
    }
    clReleaseMemObject(counts);
    clReleaseKernel(k);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
    return failures;
}

int bench_churn_mixed(bench_env *env)
{
    bench_churn_shape given[32];
    size_t n;
    const bench_churn_shape *shapes =
        bench_churn_chosen(env->quick, env->churn, given, sizeof given / sizeof *given, &n);
    if (!shapes) {
        fprintf(stderr, "--churn: DEPTH:MAX:ROUNDS:ITEMS[,...], depth 1 - %u, MAX 4K, 64K, 1M...\n",
                BENCH_CHURN_MAX_DEPTH);
        return 1;
    }
    uint64_t heap_bytes = env->heap_bytes ? env->heap_bytes : env->quick ? 64ull << 20 : 8ull << 30;
    FILE *csv = bench_csv_open(env, "churn_mixed", BENCH_CHURN_COLUMNS);
    printf("churn-mixed: in-kernel malloc, stamp, verify and free with a ring of live allocations per work-item "
           "(%llu MiB heap, median of %d launches, at most %d s each)\n",
           (unsigned long long)(heap_bytes >> 20), env->runs, env->launch_limit_s);
    bench_churn_print_header();
    int failures = 0;
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        /* The bump allocators cannot free; FreeHeap serves one work-item at a time. */
        int frees = a != CLHEAP_ATOMIC_MALLOC && a != CLHEAP_ATOMIC_WRAP_MALLOC && a != CLHEAP_FREE_HEAP;
        int wanted = env->only ? bench_wants(env, (clheap_allocator)a) && frees
                               : a == CLHEAP_TIER_ALLOC || a == CLHEAP_BLOCK_ALLOC;
        if (wanted)
            failures += churn_allocator(env, (clheap_allocator)a, shapes, n, heap_bytes, csv);
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}
