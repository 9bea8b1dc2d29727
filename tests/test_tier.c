/* TierAlloc (the default allocator): what the generic heap tests do not cover. Every
 * size from 16 B to the whole pool, the two tiers sharing frames, no NULL below the
 * loads the allocator promises, and bad frees of large allocations. Every allocation is
 * stamped over its whole extent and verified; the heap is checked after every kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mixed_rounds.h"

static const char *kernels =
    "void write_tag(__global uchar *p, ulong bytes, uint tag) {\n"
    "    __global uint *w = (__global uint *)p;\n"
    "    for (ulong i = 0; i < bytes / 4u; i++) w[i] = tag;\n"
    "    for (ulong i = bytes & ~(ulong)3; i < bytes; i++) p[i] = (uchar)tag;\n"
    "}\n"
    "__kernel void alloc_sizes(__global clheap_heap *heap, __global uint *units, __global const uint *sizes,\n"
    "                          uint count) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count || units[id] || !sizes[id]) return;  /* kept from an earlier round, or retired */\n"
    "    __global uchar *p = clheap_malloc(heap, sizes[id]);\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "    if (p) write_tag(p, sizes[id], id + 1u);\n"
    "}\n"
    "__kernel void verify(__global clheap_heap *heap, __global const uint *units, __global const uint *sizes,\n"
    "                     uint count, __global uint *bad) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count || !units[id]) return;\n"
    "    __global uchar *p = clheap_pointer(heap, units[id]);\n"
    "    __global uint *w = (__global uint *)p;\n"
    "    uint tag = id + 1u, bytes = sizes[id], wrong = 0;\n"
    "    for (uint i = 0; i < bytes / 4u; i++) wrong += w[i] != tag;\n"
    "    for (uint i = bytes & ~3u; i < bytes; i++) wrong += p[i] != (uchar)tag;\n"
    "    if (wrong) atomic_inc(bad);\n"
    "}\n"
    "/* Frees the allocations whose bit in `which` is set (all: which == 0xffffffff). */\n"
    "__kernel void free_some(__global clheap_heap *heap, __global uint *units, uint count, uint seed) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count || !units[id]) return;\n"
    "    if (seed && (clheap_hash32(id ^ seed) & 1u)) return;\n"
    "    clheap_free_unit(heap, units[id]);\n"
    "    units[id] = 0u;\n"
    "}\n"
    "__kernel void bad_large_frees(__global clheap_heap *heap, ulong bytes, uint frame_bytes,\n"
    "                              __global uint *out) {\n"
    "    if (get_global_id(0) != 0) return;\n"
    "    __global uchar *p = clheap_malloc(heap, bytes);\n"
    "    __global uchar *q = clheap_malloc(heap, bytes);\n"
    "    out[0] = clheap_unit_of(heap, p);\n"
    "    out[1] = clheap_unit_of(heap, q);\n"
    "    if (!p || !q) return;\n"
    "    write_tag(p, bytes, 0xC0FFEEu);\n"
    "    clheap_free(heap, p + frame_bytes);  /* inside a large allocation */\n"
    "    clheap_free(heap, p + 16);           /* inside its first frame */\n"
    "    clheap_free(heap, q);\n"
    "    clheap_free(heap, q);                /* double free */\n"
    "}\n";

typedef struct tier_test {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel alloc_sizes, verify, free_some, bad_large_frees;
    clheap_heap_stats fresh;
} tier_test;

enum { HEAP_BYTES = 32 << 20, LOCAL = 64 };

static void assert_heap_ok(tier_test *t)
{
    assert_heap_sound(t->heap, NULL);
}

static clheap_heap_stats stats_of(tier_test *t)
{
    clheap_heap_stats s;
    assert_int_equal(clheap_heap_calculate_stats(t->heap, &s), CLHEAP_SUCCESS);
    return s;
}

static clheap_heap_errors errors_of(tier_test *t)
{
    clheap_heap_errors e;
    clheap_heap_read_errors(t->heap, &e);
    return e;
}

static cl_mem make_buffer(tier_test *t, size_t bytes, const void *init)
{
    cl_int err;
    cl_mem b = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              (void *)init, &err);
    assert_int_equal(err, CL_SUCCESS);
    return b;
}

static void run(tier_test *t, cl_kernel k, size_t items, int nargs, ...)
{
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, k, 0), CLHEAP_SUCCESS);
    va_list args;
    va_start(args, nargs);
    for (int i = 0; i < nargs; i++) {
        size_t size = va_arg(args, size_t);
        const void *value = va_arg(args, const void *);
        assert_int_equal(clSetKernelArg(k, (cl_uint)i + 1, size, value), CL_SUCCESS);
    }
    va_end(args);
    size_t global = (items + LOCAL - 1) / LOCAL * LOCAL, local = LOCAL;
    assert_int_equal(clEnqueueNDRangeKernel(t->cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS);
    assert_heap_ok(t);
}

/* A batch of requests: sizes[i], results units[i] (0 = NULL or not yet asked). */
typedef struct batch {
    uint32_t *sizes, *units;
    uint32_t count;
    cl_mem sizes_buf, units_buf;
} batch;

static batch make_batch(tier_test *t, uint32_t count)
{
    batch b = {calloc(count, sizeof(uint32_t)), calloc(count, sizeof(uint32_t)), count, NULL, NULL};
    b.sizes_buf = make_buffer(t, count * sizeof(uint32_t), b.sizes);
    b.units_buf = make_buffer(t, count * sizeof(uint32_t), b.units);
    return b;
}

static void drop_batch(batch *b)
{
    clReleaseMemObject(b->sizes_buf);
    clReleaseMemObject(b->units_buf);
    free(b->sizes);
    free(b->units);
}

static void write_sizes(tier_test *t, batch *b)
{
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, b->sizes_buf, CL_TRUE, 0, b->count * sizeof(uint32_t),
                                          b->sizes, 0, NULL, NULL),
                     CL_SUCCESS);
}

static int compare_ranges(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Allocates every request not yet granted; returns the NULLs. Then proves on the host
 * that the granted ranges are disjoint, aligned and inside the pool, on the device that
 * every byte holds its owner's stamp, and that the heap's records agree. */
static uint32_t allocate_beside(tier_test *t, batch *b, uint64_t live_elsewhere)
{
    uint32_t count = b->count;
    run(t, t->alloc_sizes, count, 3, sizeof b->units_buf, &b->units_buf, sizeof b->sizes_buf, &b->sizes_buf,
        sizeof count, &count);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, b->units_buf, CL_TRUE, 0, count * sizeof(uint32_t), b->units,
                                         0, NULL, NULL),
                     CL_SUCCESS);
    clheap_heap_stats s = stats_of(t);
    uint64_t *ranges = malloc(2 * (size_t)count * sizeof *ranges);
    uint32_t granted = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!b->units[i])
            continue;
        uint64_t begin = (uint64_t)b->units[i] * 16;
        ranges[2 * granted] = begin;
        ranges[2 * granted + 1] = begin + b->sizes[i];
        assert_true(begin >= s.pool_begin_bytes && begin + b->sizes[i] <= s.pool_begin_bytes + s.pool_bytes);
        granted++;
    }
    qsort(ranges, granted, 2 * sizeof *ranges, compare_ranges);
    for (uint32_t i = 1; i < granted; i++)
        if (ranges[2 * i] < ranges[2 * i - 1])
            fail_msg("allocations overlap at byte %llu", (unsigned long long)ranges[2 * i]);
    free(ranges);
    uint64_t live = s.large_count;
    for (uint32_t c = 0; c < s.class_count; c++)
        live += s.class_objects[c];
    assert_int_equal(live, granted + live_elsewhere);
    uint32_t bad = 0;
    cl_mem bad_buf = make_buffer(t, sizeof bad, &bad);
    run(t, t->verify, count, 4, sizeof b->units_buf, &b->units_buf, sizeof b->sizes_buf, &b->sizes_buf,
        sizeof count, &count, sizeof bad_buf, &bad_buf);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, bad_buf, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL),
                     CL_SUCCESS);
    clReleaseMemObject(bad_buf);
    assert_int_equal(bad, 0);
    if (granted < count) { /* what the heap looked like when it said no */
        clheap_heap_errors e = errors_of(t);
        print_message("  %u of %u not granted: used %llu of %llu B (blocks %llu, largest free %llu, whole segments "
                      "%llu, run slots %llu); out of memory %u, contended %u\n",
                      count - granted, count, (unsigned long long)s.used_bytes, (unsigned long long)s.pool_bytes,
                      (unsigned long long)s.block_bytes, (unsigned long long)s.largest_free_bytes,
                      (unsigned long long)s.free_segments, (unsigned long long)s.run_slots, e.out_of_memory,
                      e.contended);
    }
    return count - granted;
}

static uint32_t allocate(tier_test *t, batch *b)
{
    return allocate_beside(t, b, 0);
}

/* Frees every granted request (seed 0) or about half of them. */
static void free_batch(tier_test *t, batch *b, uint32_t seed)
{
    uint32_t count = b->count;
    run(t, t->free_some, count, 3, sizeof b->units_buf, &b->units_buf, sizeof count, &count, sizeof seed, &seed);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, b->units_buf, CL_TRUE, 0, count * sizeof(uint32_t), b->units,
                                         0, NULL, NULL),
                     CL_SUCCESS);
}

/* Every object was freed: once the runs are trimmed, every frame is free again. */
static void assert_all_free(tier_test *t)
{
    clheap_heap_stats held = stats_of(t);
    assert_int_equal(held.used_bytes, held.block_bytes); /* only blocks of runs... */
    for (uint32_t c = 0; c < held.class_count; c++)
        assert_int_equal(held.class_objects[c], 0); /* ...holding no object */
    assert_int_equal(clheap_heap_trim(t->heap), CLHEAP_SUCCESS);
    clheap_heap_stats s = stats_of(t);
    assert_int_equal(s.run_slots, 0);
    assert_int_equal(s.used_bytes, 0);
    assert_int_equal(s.free_bytes, s.pool_bytes);
    /* Everything merged back: as many whole free segments as a fresh heap. */
    assert_int_equal(s.free_segments, t->fresh.free_segments);
}

/* ---- setup ------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    tier_test *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    clheap_heap_config config = clheap_heap_config_default(); /* TierAlloc: nothing chosen */
    config.size_bytes = HEAP_BYTES;
    if (config.allocator != CLHEAP_AUTO_ALLOCATOR ||
        clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &t->heap) != CLHEAP_SUCCESS ||
        clheap_heap_allocator(t->heap) != CLHEAP_TIER_ALLOC)
        return -1;
    static char log[16384];
    if (clheap_heap_build_program(t->heap, 1, &kernels, NULL, &t->program, log, sizeof log) != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n", log);
        return -1;
    }
    cl_int err;
    t->alloc_sizes = clCreateKernel(t->program, "alloc_sizes", &err);
    t->verify = clCreateKernel(t->program, "verify", &err);
    t->free_some = clCreateKernel(t->program, "free_some", &err);
    t->bad_large_frees = clCreateKernel(t->program, "bad_large_frees", &err);
    if (err != CL_SUCCESS || clheap_heap_calculate_stats(t->heap, &t->fresh) != CLHEAP_SUCCESS)
        return -1;
    *state = t;
    return 0;
}

static int group_teardown(void **state)
{
    tier_test *t = *state;
    if (!t)
        return -1; /* the setup failed and said so */
    cl_kernel k[] = {t->alloc_sizes, t->verify, t->free_some, t->bad_large_frees};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        clReleaseKernel(k[i]);
    clReleaseProgram(t->program);
    int ok = clheap_heap_destroy(t->heap) == CLHEAP_SUCCESS;
    cl_fixture_close(&t->cl);
    free(t);
    return ok ? 0 : -1;
}

static int reset_heap(void **state)
{
    tier_test *t = *state;
    return reset_and_check_heap(t->heap, t->cl.queue);
}

/* ---- tests ------------------------------------------------------------------------ */

static void fresh_heap_is_whole_segments(void **state)
{
    tier_test *t = *state;
    clheap_heap_stats s = t->fresh;
    assert_int_equal(s.allocator, CLHEAP_TIER_ALLOC);
    assert_int_equal(s.free_bytes, s.pool_bytes);
    assert_true(s.free_segments >= 1);
    /* Segments, then the tail's binary decomposition: every frame free once. */
    assert_true(s.free_segments * s.segment_frames * s.frame_bytes <= s.pool_bytes);
    assert_int_equal(s.largest_free_bytes, s.pool_bytes);
    assert_int_equal(s.stale_hints, 0);
}

/* The whole pool in one request; the small tier's frames come back for it. */
static void whole_pool_then_small_then_whole_pool_again(void **state)
{
    tier_test *t = *state;
    uint64_t pool = t->fresh.pool_bytes;
    assert_true(pool < UINT32_MAX);
    batch whole = make_batch(t, 1);
    whole.sizes[0] = (uint32_t)pool;
    write_sizes(t, &whole);
    assert_int_equal(allocate(t, &whole), 0);
    clheap_heap_stats s = stats_of(t);
    assert_int_equal(s.large_count, 1);
    assert_int_equal(s.free_bytes, 0);
    /* Nothing is left for even 16 bytes: NULL, counted as out of memory. */
    batch one = make_batch(t, 1);
    one.sizes[0] = 16;
    write_sizes(t, &one);
    uint32_t oom_before = errors_of(t).out_of_memory;
    assert_int_equal(allocate_beside(t, &one, 1), 1);
    assert_int_equal(errors_of(t).out_of_memory, oom_before + 1);
    free_batch(t, &whole, 0);
    assert_all_free(t);

    /* Small objects of every class over most of the pool, all freed: their blocks give
     * their frames back, and the whole pool is one request again. */
    batch small = make_batch(t, 16384);
    for (uint32_t i = 0; i < small.count; i++)
        small.sizes[i] = 16u << (i % 9); /* 16 B .. 4 KiB */
    write_sizes(t, &small);
    assert_int_equal(allocate(t, &small), 0);
    clheap_heap_stats held = stats_of(t); /* blocks, and pieces of sparse classes (large) */
    assert_true(held.block_bytes + held.large_bytes > pool / 3); /* about 15 MiB asked of a 32 MiB heap */
    free_batch(t, &small, 0);
    assert_all_free(t);
    memset(whole.units, 0, sizeof(uint32_t));
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, whole.units_buf, CL_TRUE, 0, sizeof(uint32_t), whole.units, 0,
                                          NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(allocate(t, &whole), 0);
    free_batch(t, &whole, 0);
    assert_all_free(t);
    drop_batch(&whole);
    drop_batch(&one);
    drop_batch(&small);
}

/* One size at a time, 90% of the pool asked for: not one NULL; then all freed, and the
 * heap is as fresh. */
static void one_size_at_90_percent_never_null(void **state)
{
    tier_test *t = *state;
    static const uint32_t sizes[] = {16, 1024, 65536, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint32_t count = (uint32_t)(t->fresh.pool_bytes * 9 / 10 / sizes[k]);
        batch b = make_batch(t, count);
        for (uint32_t i = 0; i < count; i++)
            b.sizes[i] = sizes[k];
        write_sizes(t, &b);
        uint32_t nulls = allocate(t, &b);
        print_message("TierAlloc: %u x %u B (90%% of the pool): %u NULL\n", count, sizes[k], nulls);
        assert_int_equal(nulls, 0);
        free_batch(t, &b, 0);
        assert_all_free(t);
        drop_batch(&b);
    }
    assert_int_equal(errors_of(t).out_of_memory, 0);
    assert_int_equal(errors_of(t).contended, 0);
}

/* Sizes 16 B - 1 MiB, log-uniform (tests/mixed_rounds.h), up to 75% of the pool live on
 * a fresh heap: not one NULL. Then, MIXED_ROUNDS - 1 times, about half is freed and new
 * requests bring the live bytes back to 75%: not one NULL either, though 1 MiB is a 32nd
 * of this pool (large requests take the best-fitting stretch of free frames,
 * cl/clheap_pages.h). */
static void mixed_sizes_at_75_percent_never_null(void **state)
{
    tier_test *t = *state;
    uint64_t limit = t->fresh.pool_bytes * 3 / 4;
    enum { MAX = 1 << 16 };
    batch b = make_batch(t, MAX);
    uint64_t live = 0;
    uint32_t n = 0;
    unsigned seed = MIXED_FIRST_SEED;
    for (int round = 0; round < MIXED_ROUNDS; round++) {
        /* New requests after the last live one, until 75% of the pool is asked for. */
        for (;;) {
            uint32_t bytes = mixed_round_size(&seed);
            if (live + bytes > limit || n == MAX)
                break;
            b.sizes[n++] = bytes;
            live += bytes;
        }
        b.count = n;
        write_sizes(t, &b);
        uint32_t retired = 0;
        for (uint32_t i = 0; i < n; i++)
            retired += !b.sizes[i];
        uint32_t nulls = allocate(t, &b) - retired; /* retired requests are never made */
        clheap_heap_stats s = stats_of(t);
        print_message("TierAlloc: mixed round %d: %u requests, %.1f%% of the pool live, %u NULL\n", round, n,
                      100.0 * (double)live / (double)s.pool_bytes, nulls);
        assert_int_equal(nulls, 0);
        free_batch(t, &b, mixed_round_free_seed(round));
        live = 0;
        for (uint32_t i = 0; i < n; i++) {
            b.sizes[i] = b.units[i] ? b.sizes[i] : 0; /* freed: not asked for again */
            live += b.sizes[i];
        }
    }
    free_batch(t, &b, 0);
    assert_all_free(t);
    drop_batch(&b);
}

static void bad_frees_of_large_allocations(void **state)
{
    tier_test *t = *state;
    uint32_t out[2] = {0, 0};
    cl_mem out_buf = make_buffer(t, sizeof out, out);
    cl_ulong bytes = 3 * 65536 + 100;
    cl_uint frame_bytes = (cl_uint)t->fresh.frame_bytes;
    clheap_heap_errors before = errors_of(t);
    run(t, t->bad_large_frees, 1, 3, sizeof bytes, &bytes, sizeof frame_bytes, &frame_bytes, sizeof out_buf, &out_buf);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, out_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
    assert_int_not_equal(out[0], 0);
    assert_int_not_equal(out[1], 0);
    clheap_heap_errors e;
    assert_int_equal(clheap_heap_read_errors(t->heap, &e), CLHEAP_ERROR_DEVICE_BAD_FREE);
    assert_int_equal(e.free_not_chunk - before.free_not_chunk, 2);
    assert_int_equal(e.double_free - before.double_free, 1);
    /* The refused frees lost nothing: p is still allocated and holds its stamp. */
    clheap_heap_stats s = stats_of(t);
    assert_int_equal(s.large_count, 1);
    uint32_t words[4];
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE,
                                         (size_t)out[0] * 16 + (size_t)bytes - 16, sizeof words, words, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(words[i], 0xC0FFEEu);
    clReleaseMemObject(out_buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fresh_heap_is_whole_segments, reset_heap),
        cmocka_unit_test_setup(whole_pool_then_small_then_whole_pool_again, reset_heap),
        cmocka_unit_test_setup(one_size_at_90_percent_never_null, reset_heap),
        cmocka_unit_test_setup(mixed_sizes_at_75_percent_never_null, reset_heap),
        cmocka_unit_test_setup(bad_frees_of_large_allocations, reset_heap),
    };
    return cmocka_run_group_tests_name("TierAlloc", tests, group_setup, group_teardown);
}
