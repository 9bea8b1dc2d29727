/* Device heap: every allocator, on the default OpenCL device.
 * Each allocator runs as one cmocka group (one heap and one program build per group).
 * Usage: test_heap [allocator name...]   (default: all of them) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "../cl/clheap_layout.h"

static const char *test_kernels =
    "/* clheap_hash32 comes with the allocator source built in front of these kernels. */\n"
    "/* Every word stamped, 16 bytes a store (allocations are 16-byte aligned): llvmpipe\n"
    " * gives a work-item 65535 loop iterations a launch (clheap_device_loop_limit). */\n"
    "void write_tag(__global uchar *p, uint bytes, uint tag) {\n"
    "    __global uint4 *v = (__global uint4 *)p;\n"
    "    __global uint *w = (__global uint *)p;\n"
    "    for (uint i = 0; i < bytes / 16u; i++) v[i] = (uint4)(tag);\n"
    "    for (uint i = bytes / 16u * 4u; i < bytes / 4u; i++) w[i] = tag;\n"
    "    for (uint i = bytes & ~3u; i < bytes; i++) p[i] = (uchar)tag;\n"
    "}\n"
    "/* The words of p that are not tag. */\n"
    "uint wrong_words(__global const uchar *p, uint bytes, uint tag) {\n"
    "    __global const uint4 *v = (__global const uint4 *)p;\n"
    "    __global const uint *w = (__global const uint *)p;\n"
    "    uint wrong = 0;\n"
    "    for (uint i = 0; i < bytes / 16u; i++) {\n"
    "        uint4 d = v[i];\n"
    "        wrong += (d.x != tag) + (d.y != tag) + (d.z != tag) + (d.w != tag);\n"
    "    }\n"
    "    for (uint i = bytes / 16u * 4u; i < bytes / 4u; i++) wrong += w[i] != tag;\n"
    "    for (uint i = bytes & ~3u; i < bytes; i++) wrong += p[i] != (uchar)tag;\n"
    "    return wrong;\n"
    "}\n"
    "__kernel void alloc_random(__global clheap_heap *heap, __global uint *units,\n"
    "                           __global uint *sizes, uint seed, uint lo, uint hi) {\n"
    "    uint id = get_global_id(0);\n"
    "    uint bytes = lo + clheap_hash32(id * 7919u + seed) % (hi - lo + 1u);\n"
    "    __global uchar *p = clheap_malloc(heap, bytes);\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "    sizes[id] = bytes;\n"
    "    if (p) write_tag(p, bytes, id + 1u);\n"
    "}\n"
    "__kernel void fill(__global clheap_heap *heap, __global uint *units, __global uint *sizes,\n"
    "                   uint per_item, uint bytes) {\n"
    "    uint id = get_global_id(0), k = 0;\n"
    "    for (; k < per_item; k++) {\n"
    "        uint slot = id * per_item + k;\n"
    "        __global uchar *p = clheap_malloc(heap, bytes);\n"
    "        units[slot] = clheap_unit_of(heap, p);\n"
    "        sizes[slot] = bytes;\n"
    "        if (!p) break;\n"
    "        write_tag(p, bytes, slot + 1u);\n"
    "    }\n"
    "    for (k++; k < per_item; k++) units[id * per_item + k] = 0u;\n"
    "}\n"
    "__kernel void verify(__global clheap_heap *heap, __global const uint *units,\n"
    "                     __global const uint *sizes, __global uint *bad) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (!units[id]) return;\n"
    "    __global uchar *p = clheap_pointer(heap, units[id]);\n"
    "    if (wrong_words(p, sizes[id], id + 1u)) atomic_inc(bad);\n"
    "}\n"
    "/* Life's spawn, harder: each work-item tries 8 requests, skipping some (lanes of a warp\n"
    " * reach malloc at different iterations); a request's claim on a shared cell is a race,\n"
    " * whose loser frees at once, beside lanes still in malloc. Kept: units[slot], tagged. */\n"
    "__kernel void divergent_claims(__global clheap_heap *heap, __global uint *units,\n"
    "                               __global uint *sizes, __global uint *cells, uint ncells, uint shifts) {\n"
    "    uint id = get_global_id(0);\n"
    "    for (uint k = 0; k < 8u; k++) {\n"
    "        uint slot = id * 8u + k, h = clheap_hash32(slot * 2654435761u + 17u);\n"
    "        units[slot] = 0u;\n"
    "        sizes[slot] = 0u;\n"
    "        if (h % 3u == 0u || ((volatile __global uint *)cells)[h % ncells]) continue;\n"
    "        uint bytes = 16u << (h / 3u % shifts);\n"
    "        __global uchar *p = clheap_malloc(heap, bytes);\n"
    "        if (!p) continue;\n"
    "        write_tag(p, bytes, slot + 1u);\n"
    "        if (atomic_cmpxchg(&cells[h % ncells], 0u, slot + 1u) != 0u) { clheap_free(heap, p); continue; }\n"
    "        units[slot] = clheap_unit_of(heap, p);\n"
    "        sizes[slot] = bytes;\n"
    "    }\n"
    "}\n"
    "__kernel void free_units(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (units[id]) clheap_free_unit(heap, units[id]);\n"
    "}\n"
    "__kernel void bad_frees(__global clheap_heap *heap, __global uchar *foreign,\n"
    "                        __global uint *out) {\n"
    "    if (get_global_id(0) != 0) return;\n"
    "    __global uchar *p = clheap_malloc(heap, 64);\n"
    "    out[0] = clheap_unit_of(heap, p);\n"
    "    if (!p) return;\n"
    "    for (int i = 0; i < 64; i++) p[i] = 0xAB;\n"
    "    clheap_free(heap, foreign + 64);  /* outside the heap */\n"
    "    clheap_free(heap, p + 4);         /* off a 16-byte boundary */\n"
    "    clheap_free(heap, p + 16);        /* inside an allocation */\n"
    "    __global uchar *q = clheap_malloc(heap, 32);\n"
    "    out[1] = clheap_unit_of(heap, q);\n"
    "    clheap_free(heap, q);\n"
    "    clheap_free(heap, q);             /* double free */\n"
    "    out[2] = clheap_unit_of(heap, clheap_malloc(heap, 0));\n"
    "    out[3] = clheap_unit_of(heap, clheap_malloc(heap, (ulong)1 << 40));\n"
    "}\n";

typedef struct heap_test {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel alloc_random, fill, verify, free_units, bad_frees, divergent_claims;
    clheap_allocator allocator;
} heap_test;

static clheap_allocator current_allocator;

enum { HEAP_BYTES = 32 << 20, ROUND_ITEMS = 2048, LOCAL = 64 };

static int is_circular(clheap_allocator a)
{
    return a >= CLHEAP_CMALLOC && a <= CLHEAP_CFMMALLOC;
}

static int can_free(clheap_allocator a)
{
    return a >= CLHEAP_CMALLOC;
}

/* Live allocations as the heap's own records count them (-1: not recorded). */
static int64_t live_allocations(clheap_allocator a, const clheap_heap_stats *s)
{
    if (a == CLHEAP_BLOCK_ALLOC || a == CLHEAP_TIER_ALLOC)
        return (int64_t)live_block_objects(s);
    return is_circular(a) || a == CLHEAP_BITMAP_ALLOC ? (int64_t)s->used_chunks : -1;
}

/* The largest request the random test makes of each allocator. */
static cl_uint largest_request(clheap_allocator a)
{
    if (a == CLHEAP_BITMAP_ALLOC)
        return 256; /* the slot size of the test heap */
    if (a == CLHEAP_BLOCK_ALLOC)
        return 16384; /* the largest default class */
    if (a == CLHEAP_TIER_ALLOC)
        return 65536; /* three quarters of the requests take the page tier */
    return is_circular(a) ? 65536 : 16384;
}

static void assert_heap_ok(heap_test *t)
{
    assert_heap_sound(t->heap, clheap_allocator_name(t->allocator));
}

static cl_mem make_buffer(heap_test *t, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    return b;
}

static void read_buffer(heap_test *t, cl_mem b, void *dst, size_t bytes)
{
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, b, CL_TRUE, 0, bytes, dst, 0, NULL, NULL),
                     CL_SUCCESS);
}

static void run_kernel(heap_test *t, cl_kernel k, size_t items)
{
    size_t global = (items + LOCAL - 1) / LOCAL * LOCAL, local = LOCAL;
    assert_int_equal(clEnqueueNDRangeKernel(t->cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS);
    assert_heap_ok(t);
}

static void set_args(cl_kernel k, int n, ...)
{
    va_list args;
    va_start(args, n);
    for (int i = 0; i < n; i++) {
        size_t size = va_arg(args, size_t);
        const void *value = va_arg(args, const void *);
        assert_int_equal(clSetKernelArg(k, (cl_uint)i + 1, size, value), CL_SUCCESS);
    }
    va_end(args);
}

static clheap_heap_errors errors_of(heap_test *t)
{
    clheap_heap_errors e;
    clheap_status status = clheap_heap_read_errors(t->heap, &e);
    assert_true(status == CLHEAP_SUCCESS || status == CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY ||
                status == CLHEAP_ERROR_DEVICE_BAD_FREE);
    return e;
}

static clheap_heap_stats stats_of(heap_test *t)
{
    clheap_heap_stats s;
    assert_int_equal(clheap_heap_calculate_stats(t->heap, &s), CLHEAP_SUCCESS);
    return s;
}

typedef struct interval {
    uint64_t begin, end;
} interval;

static int compare_intervals(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Host-side proof of no overlap: the allocations, as byte ranges, are disjoint, inside
 * the pool and 16-byte aligned; the verify kernel proves every byte kept its owner's id. */
static size_t check_allocations(heap_test *t, cl_mem units_buf, cl_mem sizes_buf, size_t count)
{
    uint32_t *units = malloc(count * sizeof *units), *sizes = malloc(count * sizeof *sizes);
    read_buffer(t, units_buf, units, count * sizeof *units);
    read_buffer(t, sizes_buf, sizes, count * sizeof *sizes);
    interval *iv = malloc(count * sizeof *iv);
    size_t n = 0;
    uint64_t requested = 0;
    clheap_heap_stats s = stats_of(t);
    uint64_t pool_begin = s.pool_begin_bytes, pool_end = s.pool_begin_bytes + s.pool_bytes;
    for (size_t i = 0; i < count; i++) {
        if (!units[i])
            continue;
        iv[n].begin = (uint64_t)units[i] * 16u;
        iv[n].end = iv[n].begin + sizes[i];
        requested += sizes[i];
        assert_true(iv[n].begin >= pool_begin);
        assert_true(iv[n].end <= pool_end);
        n++;
    }
    qsort(iv, n, sizeof *iv, compare_intervals);
    for (size_t i = 1; i < n; i++)
        if (iv[i].begin < iv[i - 1].end)
            fail_msg("allocations overlap: [%llu, %llu) and [%llu, %llu)",
                     (unsigned long long)iv[i - 1].begin, (unsigned long long)iv[i - 1].end,
                     (unsigned long long)iv[i].begin, (unsigned long long)iv[i].end);
    /* The heap's own records agree with what the kernels saw. */
    if (live_allocations(t->allocator, &s) >= 0)
        assert_int_equal(live_allocations(t->allocator, &s), n);
    if (is_circular(t->allocator))
        assert_int_equal(s.requested_bytes, requested);
    cl_mem bad_buf = make_buffer(t, sizeof(uint32_t));
    uint32_t bad = 0;
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, bad_buf, CL_TRUE, 0, sizeof bad, &bad, 0,
                                          NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->verify, 0), CLHEAP_SUCCESS);
    set_args(t->verify, 3, sizeof units_buf, &units_buf, sizeof sizes_buf, &sizes_buf,
             sizeof bad_buf, &bad_buf);
    run_kernel(t, t->verify, count);
    read_buffer(t, bad_buf, &bad, sizeof bad);
    assert_int_equal(bad, 0);
    clReleaseMemObject(bad_buf);
    free(iv);
    free(units);
    free(sizes);
    return n;
}

static void free_all(heap_test *t, cl_mem units_buf, size_t count)
{
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->free_units, 0), CLHEAP_SUCCESS);
    set_args(t->free_units, 1, sizeof units_buf, &units_buf);
    run_kernel(t, t->free_units, count);
}

/* ---- group setup: one heap and one program per allocator ------------------------- */

static int group_setup(void **state)
{
    heap_test *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    t->allocator = current_allocator;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = t->allocator;
    config.size_bytes = HEAP_BYTES;
    config.slot_bytes = 256;
    if (clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &t->heap) !=
        CLHEAP_SUCCESS)
        return -1;
    static char log[16384];
    clheap_status status =
        clheap_heap_build_program(t->heap, 1, &test_kernels, NULL, &t->program, log, sizeof log);
    if (status != CLHEAP_SUCCESS) {
        fprintf(stderr, "build failed: %s\n%s\n", clheap_status_string(status), log);
        return -1;
    }
    cl_int err;
    t->alloc_random = clCreateKernel(t->program, "alloc_random", &err);
    t->fill = clCreateKernel(t->program, "fill", &err);
    t->verify = clCreateKernel(t->program, "verify", &err);
    t->free_units = clCreateKernel(t->program, "free_units", &err);
    t->bad_frees = clCreateKernel(t->program, "bad_frees", &err);
    cl_int made;
    t->divergent_claims = clCreateKernel(t->program, "divergent_claims", &made);
    err = err == CL_SUCCESS ? made : err;
    *state = t;
    return err == CL_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state)
{
    heap_test *t = *state;
    if (!t)
        return -1; /* the setup failed and said so */
    clReleaseKernel(t->alloc_random);
    clReleaseKernel(t->fill);
    clReleaseKernel(t->verify);
    clReleaseKernel(t->free_units);
    clReleaseKernel(t->bad_frees);
    clReleaseKernel(t->divergent_claims);
    clReleaseProgram(t->program);
    int ok = clheap_heap_destroy(t->heap) == CLHEAP_SUCCESS;
    cl_fixture_close(&t->cl);
    free(t);
    return ok ? 0 : -1;
}

/* Every test starts from a fresh heap. */
static int reset_heap(void **state)
{
    heap_test *t = *state;
    return reset_and_check_heap(t->heap, t->cl.queue);
}

/* ---- tests --------------------------------------------------------------------------- */

/* Mallocs reached by a warp's lanes at different times, and frees beside them (the game of
 * life's spawn kernel): every kept allocation holds its tag, the heap counts exactly the kept
 * ones (a slot handed out but lost, or freed twice, shows), and it is empty after their frees.
 * On NVIDIA this is the warp paths' test: lanes of one warp enter malloc apart. */
static void divergent_mallocs_and_frees(void **state)
{
    heap_test *t = *state;
    if (!can_free(t->allocator))
        skip();
    enum { ITEMS = 4096, SLOTS = ITEMS * 8 };
    cl_mem units = make_buffer(t, SLOTS * sizeof(uint32_t)), sizes = make_buffer(t, SLOTS * sizeof(uint32_t));
    cl_mem cells = make_buffer(t, SLOTS / 4 * sizeof(uint32_t));
    /* Rounds: 16 - 64 B with a quarter as many cells as tries; 16 B alone (one class, as
     * life's objects) with an eighth and a 32nd (most claims lost, most mallocs freed). */
    const cl_uint ncells_of[] = {SLOTS / 4, SLOTS / 8, SLOTS / 32}, shifts_of[] = {3, 1, 1}, zero = 0;
    for (int round = 0; round < 3; round++) {
        cl_uint ncells = ncells_of[round], shifts = shifts_of[round];
        assert_int_equal(clEnqueueFillBuffer(t->cl.queue, cells, &zero, sizeof zero, 0, ncells * sizeof zero, 0,
                                             NULL, NULL),
                         CL_SUCCESS);
        clheap_heap_errors before = errors_of(t);
        assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->divergent_claims, 0), CLHEAP_SUCCESS);
        set_args(t->divergent_claims, 5, sizeof units, &units, sizeof sizes, &sizes, sizeof cells, &cells,
                 sizeof ncells, &ncells, sizeof shifts, &shifts);
        run_kernel(t, t->divergent_claims, ITEMS);
        size_t kept = check_allocations(t, units, sizes, SLOTS); /* tags, overlap, the heap's count */
        clheap_heap_errors after = errors_of(t);
        assert_int_equal(after.double_free + after.free_not_chunk, before.double_free + before.free_not_chunk);
        assert_true(kept > ncells / 2 && kept <= ncells);
        free_all(t, units, SLOTS);
        clheap_heap_stats s = stats_of(t);
        if (live_allocations(t->allocator, &s) >= 0)
            assert_int_equal(live_allocations(t->allocator, &s), 0);
    }
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
    clReleaseMemObject(cells);
}

static void random_rounds_never_overlap(void **state)
{
    heap_test *t = *state;
    cl_mem units = make_buffer(t, ROUND_ITEMS * sizeof(uint32_t));
    cl_mem sizes = make_buffer(t, ROUND_ITEMS * sizeof(uint32_t));
    /* Bump allocators cannot free: one round, which fits. */
    int rounds = can_free(t->allocator) ? 3 : 1;
    cl_uint lo = 4, hi = largest_request(t->allocator);
    for (int round = 0; round < rounds; round++) {
        clheap_heap_errors before = errors_of(t);
        cl_uint seed = 1000u + (cl_uint)round;
        assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->alloc_random, 0), CLHEAP_SUCCESS);
        set_args(t->alloc_random, 5, sizeof units, &units, sizeof sizes, &sizes, sizeof seed, &seed,
                 sizeof lo, &lo, sizeof hi, &hi);
        run_kernel(t, t->alloc_random, ROUND_ITEMS);
        size_t granted = check_allocations(t, units, sizes, ROUND_ITEMS);
        clheap_heap_errors after = errors_of(t);
        /* Every NULL is accounted for in the header, and nothing else was counted. */
        assert_int_equal((after.out_of_memory - before.out_of_memory) +
                             (after.contended - before.contended),
                         ROUND_ITEMS - granted);
        assert_int_equal(after.bad_size, 0);
        assert_true(granted > 0);
        print_message("%s round %d: %zu of %d allocations granted\n",
                      clheap_allocator_name(t->allocator), round, granted, ROUND_ITEMS);
        free_all(t, units, ROUND_ITEMS);
        clheap_heap_stats s = stats_of(t);
        if (live_allocations(t->allocator, &s) >= 0)
            assert_int_equal(live_allocations(t->allocator, &s), 0);
        /* What is used once everything is freed is the allocator's, none of it live. */
        assert_int_equal(s.live_bytes + s.held_bytes, s.used_bytes);
        if (can_free(t->allocator))
            assert_int_equal(s.live_bytes, 0);
        if (is_circular(t->allocator))
            assert_int_equal(s.free_bytes, s.pool_bytes);
    }
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
}

static size_t fill_heap(heap_test *t, cl_mem units, cl_mem sizes, size_t items, cl_uint per_item,
                        cl_uint bytes)
{
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->fill, 0), CLHEAP_SUCCESS);
    set_args(t->fill, 4, sizeof units, &units, sizeof sizes, &sizes, sizeof per_item, &per_item,
             sizeof bytes, &bytes);
    run_kernel(t, t->fill, items);
    return check_allocations(t, units, sizes, items * per_item);
}

static void fill_until_null_then_refill(void **state)
{
    heap_test *t = *state;
    if (t->allocator == CLHEAP_ATOMIC_WRAP_MALLOC)
        skip(); /* wraps instead of returning NULL: see wrap_stays_inside_the_pool */
    /* 64 MiB (BitmapAlloc: 40 MiB) asked of a 32 MiB heap */
    const cl_uint bytes = t->allocator == CLHEAP_BITMAP_ALLOC ? 256 : 4096;
    const cl_uint per_item = t->allocator == CLHEAP_BITMAP_ALLOC ? 160 : 16;
    const size_t items = 1024;
    cl_mem units = make_buffer(t, items * per_item * sizeof(uint32_t));
    cl_mem sizes = make_buffer(t, items * per_item * sizeof(uint32_t));
    size_t first = fill_heap(t, units, sizes, items, per_item, bytes);
    clheap_heap_stats full = stats_of(t);
    assert_true(errors_of(t).out_of_memory > 0); /* the heap really was full */
    assert_true(first * bytes > full.pool_bytes / 2);
    free_all(t, units, items * per_item);
    /* Nothing reserved at the edge of a full heap stays behind unhanded. */
    clheap_heap_stats emptied = stats_of(t);
    if (live_allocations(t->allocator, &emptied) >= 0)
        assert_int_equal(live_allocations(t->allocator, &emptied), 0);
    size_t second = fill_heap(t, units, sizes, items, per_item, bytes);
    print_message("%s: first fill %zu x %u B, refill %zu\n", clheap_allocator_name(t->allocator),
                  first, bytes, second);
    if (t->allocator == CLHEAP_ATOMIC_MALLOC) {
        assert_int_equal(second, 0); /* cannot free: documented */
        assert_int_equal(clheap_heap_reset(t->heap), CLHEAP_SUCCESS);
        second = fill_heap(t, units, sizes, items, per_item, bytes);
    }
    /* The same bytes are reusable: freed chunks (merged or not) hold the same sizes. */
    assert_true(second >= first);
    free_all(t, units, items * per_item);
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
}

static void wrap_stays_inside_the_pool(void **state)
{
    heap_test *t = *state;
    if (t->allocator != CLHEAP_ATOMIC_WRAP_MALLOC)
        skip();
    cl_mem units = make_buffer(t, 1024 * 16 * sizeof(uint32_t));
    cl_mem sizes = make_buffer(t, 1024 * 16 * sizeof(uint32_t));
    /* 64 MiB through a 32 MiB pool: at least one wrap, never NULL. */
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->fill, 0), CLHEAP_SUCCESS);
    cl_uint per_item = 16, bytes = 4096;
    set_args(t->fill, 4, sizeof units, &units, sizeof sizes, &sizes, sizeof per_item, &per_item,
             sizeof bytes, &bytes);
    run_kernel(t, t->fill, 1024);
    uint32_t *u = malloc(1024 * 16 * sizeof *u);
    read_buffer(t, units, u, 1024 * 16 * sizeof *u);
    clheap_heap_stats s = stats_of(t);
    uint64_t pool_begin = s.pool_begin_bytes, pool_end = s.pool_begin_bytes + s.pool_bytes;
    for (size_t i = 0; i < 1024 * 16; i++) {
        assert_int_not_equal(u[i], 0);
        assert_true((uint64_t)u[i] * 16 >= pool_begin);
        assert_true((uint64_t)u[i] * 16 + bytes <= pool_end);
    }
    assert_int_equal(errors_of(t).out_of_memory, 0);
    free(u);
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
}

static void bad_frees_are_counted_and_lose_nothing(void **state)
{
    heap_test *t = *state;
    cl_mem foreign = make_buffer(t, 4096);
    cl_mem out = make_buffer(t, 4 * sizeof(uint32_t));
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->bad_frees, 0), CLHEAP_SUCCESS);
    set_args(t->bad_frees, 2, sizeof foreign, &foreign, sizeof out, &out);
    run_kernel(t, t->bad_frees, 1);
    uint32_t o[4];
    read_buffer(t, out, o, sizeof o);
    assert_int_not_equal(o[0], 0);
    assert_int_equal(o[2], 0); /* malloc(0) */
    assert_int_equal(o[3], 0); /* malloc(1 TiB) */
    clheap_heap_errors e;
    assert_int_equal(clheap_heap_read_errors(t->heap, &e), CLHEAP_ERROR_DEVICE_BAD_FREE);
    assert_int_equal(e.free_outside, 1);
    assert_int_equal(e.free_unaligned, 1);
    assert_int_equal(e.bad_size, 2);
    assert_int_equal(e.out_of_memory, 0);
    int headers = can_free(t->allocator);
    assert_int_equal(e.free_not_chunk, headers ? 1 : 0);
    assert_int_equal(e.double_free, headers ? 1 : 0);
    /* The live allocation kept its bytes and the heap its shape. */
    uint8_t bytes[64];
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE,
                                         (size_t)o[0] * 16, sizeof bytes, bytes, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < 64; i++)
        assert_int_equal(bytes[i], 0xAB);
    if (headers) {
        clheap_heap_stats s = stats_of(t);
        assert_int_equal(live_allocations(t->allocator, &s), 1);
        if (is_circular(t->allocator))
            assert_int_equal(s.requested_bytes, 64);
    }
    /* reset clears the counters */
    assert_int_equal(clheap_heap_reset(t->heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_read_errors(t->heap, &e), CLHEAP_SUCCESS);
    clReleaseMemObject(foreign);
    clReleaseMemObject(out);
}

/* A kernel given a buffer the host never formatted (here zeroed, as a user of the .cl
 * source alone would hand one over): every malloc returns NULL and every free does
 * nothing, each counted in word CLHEAP_HDR_ERR_UNFORMATTED of that buffer, and no other
 * word of it changes. */
static void unformatted_buffer_counts_and_is_untouched(void **state)
{
    heap_test *t = *state;
    enum { ITEMS = 256, WORDS = 1 << 16 };
    uint32_t *words = calloc(WORDS, sizeof *words);
    assert_non_null(words);
    cl_int err;
    cl_mem zeroed = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, WORDS * sizeof *words,
                                   words, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem units = make_buffer(t, ITEMS * sizeof(uint32_t)), sizes = make_buffer(t, ITEMS * sizeof(uint32_t));
    cl_uint seed = 5, lo = 16, hi = 256;
    assert_int_equal(clSetKernelArg(t->alloc_random, 0, sizeof zeroed, &zeroed), CL_SUCCESS);
    set_args(t->alloc_random, 5, sizeof units, &units, sizeof sizes, &sizes, sizeof seed, &seed, sizeof lo, &lo,
             sizeof hi, &hi);
    run_kernel(t, t->alloc_random, ITEMS);
    uint32_t got[ITEMS];
    read_buffer(t, units, got, sizeof got);
    for (int i = 0; i < ITEMS; i++) {
        assert_int_equal(got[i], 0);
        got[i] = 64u + 4u * (uint32_t)i; /* frees of units inside the buffer */
    }
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, units, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clSetKernelArg(t->free_units, 0, sizeof zeroed, &zeroed), CL_SUCCESS);
    set_args(t->free_units, 1, sizeof units, &units);
    run_kernel(t, t->free_units, ITEMS);
    read_buffer(t, zeroed, words, WORDS * sizeof *words);
    for (uint32_t w = 0; w < WORDS; w++)
        assert_int_equal(words[w], w == CLHEAP_HDR_ERR_UNFORMATTED ? 2 * ITEMS : 0);
    clReleaseMemObject(zeroed);
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
    free(words);
}

/* read_errors' answer is the first counter set in heap.h's order, whichever allocator
 * set them: the counters are written here as device code would leave them. */
static void device_errors_read_back_in_precedence(void **state)
{
    heap_test *t = *state;
    static const struct {
        uint32_t word;
        clheap_status status;
    } order[] = {{CLHEAP_HDR_ERR_DOUBLE_FREE, CLHEAP_ERROR_DEVICE_BAD_FREE},
                 {CLHEAP_HDR_ERR_BAD_SIZE, CLHEAP_ERROR_DEVICE_BAD_SIZE},
                 {CLHEAP_HDR_ERR_OUT_OF_MEMORY, CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY},
                 {CLHEAP_HDR_ERR_CONTENDED, CLHEAP_ERROR_DEVICE_CONTENDED}};
    clheap_heap_errors e;
    assert_int_equal(clheap_heap_read_errors(t->heap, &e), CLHEAP_SUCCESS);
    cl_mem buffer = clheap_heap_buffer(t->heap);
    /* Set from the last to the first: each one set takes the answer over. */
    for (int i = 3; i >= 0; i--) {
        cl_uint count = (cl_uint)(i + 1);
        assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, buffer, CL_TRUE, order[i].word * sizeof count,
                                              sizeof count, &count, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_int_equal(clheap_heap_read_errors(t->heap, &e), order[i].status);
    }
    assert_int_equal(e.double_free, 1);
    assert_int_equal(e.bad_size, 2);
    assert_int_equal(e.out_of_memory, 3);
    assert_int_equal(e.contended, 4);
    /* Each status has its own explanation. */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(clheap_status_string(order[i].status), clheap_status_string(order[j].status));
}

static void stats_json_is_complete(void **state)
{
    heap_test *t = *state;
    clheap_heap_stats s = stats_of(t);
    assert_int_equal(s.allocator, t->allocator);
    assert_int_equal(s.free_bytes + s.used_bytes, s.pool_bytes);
    char json[8192];
    size_t needed = 0;
    assert_int_equal(clheap_heap_stats_json(&s, json, sizeof json, &needed), CLHEAP_SUCCESS);
    assert_int_equal(strlen(json) + 1, needed);
    assert_non_null(strstr(json, clheap_allocator_name(t->allocator)));
    char head[128]; /* the shape the cache's stats share */
    snprintf(head, sizeof head, "{\"kind\": \"heap\", \"version\": 2, \"used_bytes\": %llu, \"free_bytes\": %llu",
             (unsigned long long)s.used_bytes, (unsigned long long)s.free_bytes);
    assert_ptr_equal(strstr(json, head), json);
    assert_non_null(strstr(json, "\"errors\": {\"out_of_memory\": "));
    char split[128];
    snprintf(split, sizeof split, "\"live_bytes\": %llu, \"held_bytes\": %llu", (unsigned long long)s.live_bytes,
             (unsigned long long)s.held_bytes);
    assert_non_null(strstr(json, split));
    assert_int_equal(s.live_bytes + s.held_bytes, s.used_bytes);
    assert_non_null(strstr(json, "\"unformatted\": 0}}"));
    char field[256];
    for (uint32_t c = 0; c < s.class_count; c++) { /* every class, in order, with its own counts */
        snprintf(field, sizeof field, "%s{\"bytes\": %u, \"capacity\": %u, \"blocks\": %llu, \"objects\": %llu}",
                 c ? ", " : "\"classes\": [", s.class_bytes[c], s.class_capacity[c],
                 (unsigned long long)s.class_blocks[c], (unsigned long long)s.class_objects[c]);
        assert_non_null(strstr(json, field));
    }
    assert_int_equal(strstr(json, "\"classes\": [") != NULL, s.class_count > 0);
    if (t->allocator == CLHEAP_TIER_ALLOC) {
        snprintf(field, sizeof field, "\"pages\": {\"segment_frames\": %u, \"frame_bytes\": %llu", s.segment_frames,
                 (unsigned long long)s.frame_bytes);
        assert_non_null(strstr(json, field));
        snprintf(field, sizeof field, "\"run_slots\": %llu, \"unsettled_blocks\": %llu}, \"errors\"",
                 (unsigned long long)s.run_slots, (unsigned long long)s.unsettled_blocks);
        assert_non_null(strstr(json, field));
    }
    /* Too small a buffer: the size it needs, and a status that says so. */
    char tiny[64];
    size_t again = 0;
    assert_int_equal(clheap_heap_stats_json(&s, tiny, sizeof tiny, &again), CLHEAP_ERROR_BUFFER_TOO_SMALL);
    assert_int_equal(again, needed);
    /* One document a line, every allocator's, for tests/json_lines_valid.py. */
    static int written;
    const char *path = getenv("CLHEAP_HEAP_JSON_OUT");
    if (path) {
        FILE *f = fopen(path, written++ ? "a" : "w");
        assert_non_null(f);
        fprintf(f, "%s\n", json);
        fclose(f);
    }
}

static void check_reports_corruption(void **state)
{
    heap_test *t = *state;
    if (!can_free(t->allocator))
        skip(); /* a bump heap has no per-allocation structure to corrupt */
    clheap_heap_stats s = stats_of(t);
    size_t offset = (size_t)s.pool_begin_bytes;
    uint32_t garbage[4] = {0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu};
    if (!is_circular(t->allocator)) {
        /* Clear the top container of the first bitmap, as a stray write would: the
         * containers below are full, so their bits above must not be clear. */
        uint32_t header[CLHEAP_HDR_BITMAP_WORDS];
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE, 0,
                                             sizeof header, header, 0, NULL, NULL),
                         CL_SUCCESS);
        /* TierAlloc: its whole free segments' bitmap, the one that starts full. */
        const uint32_t *d = header + (t->allocator == CLHEAP_TIER_ALLOC
                                          ? CLHEAP_BM_SEGMENTS(header[CLHEAP_HDR_CLASS_COUNT])
                                          : CLHEAP_BM_DESC(0));
        offset = (size_t)d[CLHEAP_BM_UNIT] * 16 + (size_t)d[CLHEAP_BM_LEVEL0 + d[CLHEAP_BM_LEVELS] - 1] * 8;
        memset(garbage, 0, sizeof garbage);
    }
    /* Overwrite the first chunk's header (or the bitmap) as a stray kernel write would. */
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE, offset,
                                          is_circular(t->allocator) ? sizeof garbage : 8, garbage, 0,
                                          NULL, NULL),
                     CL_SUCCESS);
    char what[256] = "";
    assert_int_equal(clheap_heap_check(t->heap, what, sizeof what), CLHEAP_ERROR_HEAP_CORRUPT);
    assert_true(strstr(what, "unit") || strstr(what, "bitmap"));
    print_message("%s: check found: %s\n", clheap_allocator_name(t->allocator), what);
    assert_int_equal(clheap_heap_reset(t->heap), CLHEAP_SUCCESS);
    assert_heap_ok(t);
}

static void write_word(heap_test *t, uint32_t word, uint32_t value)
{
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE, word * sizeof value,
                                          sizeof value, &value, 0, NULL, NULL),
                     CL_SUCCESS);
}

/* Issue 52.1: a header word the layout fixes, overwritten as a buggy kernel would, makes
 * check, stats, repair and indices answer HEAP_CORRUPT, never walk with it as a bound;
 * restored, the heap is sound again. Words 0 - 15 (kind, pool, frames, bitmap region)
 * with 0, 1, all ones, 0x80000000, +-1 and a random value; for the bitmap kinds also
 * every word of the class tables and bitmap descriptors the layout set, with 0 (each
 * case reads the whole heap back, so the tables get one value). */
static void header_corruption_is_refused(void **state)
{
    heap_test *t = *state;
    enum { TABLE_END = CLHEAP_HDR_BITMAP_WORDS };
    uint32_t header[TABLE_END];
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE, 0, sizeof header, header,
                                         0, NULL, NULL),
                     CL_SUCCESS);
    int bitmap = !is_circular(t->allocator) && can_free(t->allocator) && t->allocator != CLHEAP_FREE_HEAP;
    char what[256];
    uint64_t fixed;
    size_t count;
    clheap_heap_stats stats;
    uint32_t corruptions = 0, random = 0x9E3779B9u;
    for (uint32_t w = 0; w < TABLE_END; w++) {
        int fixed_word = w < CLHEAP_HDR_ERR_FIRST || (bitmap && w >= CLHEAP_HDR_CLASS_BYTES && header[w]);
        if (!fixed_word)
            continue;
        uint32_t values[7] = {0, ~0u, header[w] + 1u, 1, 0x80000000u, header[w] - 1u, random ^ w};
        for (int k = 0; k < (w < CLHEAP_HDR_ERR_FIRST ? 7 : 1); k++) {
            if (values[k] == header[w])
                continue;
            write_word(t, w, values[k]);
            what[0] = '\0';
            assert_int_equal(clheap_heap_check(t->heap, what, sizeof what), CLHEAP_ERROR_HEAP_CORRUPT);
            assert_non_null(strstr(what, "header word"));
            if (w < CLHEAP_HDR_ERR_FIRST) {
                assert_int_equal(clheap_heap_calculate_stats(t->heap, &stats), CLHEAP_ERROR_HEAP_CORRUPT);
                if (bitmap) {
                    assert_int_equal(clheap_heap_repair(t->heap, &fixed), CLHEAP_ERROR_HEAP_CORRUPT);
                    assert_int_equal(clheap_heap_indices(t->heap, 0, NULL, 0, &count), CLHEAP_ERROR_HEAP_CORRUPT);
                }
            }
            corruptions++;
        }
        write_word(t, w, header[w]);
    }
    assert_heap_sound(t->heap, "restored");
    print_message("%s: %u header corruptions refused\n", clheap_allocator_name(t->allocator), corruptions);
}

static void create_refuses_bad_configs(void **state)
{
    heap_test *t = *state;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = t->allocator;
    clheap_heap *heap = (clheap_heap *)1;
    config.size_bytes = (1 << 20) - 16;
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_ERROR_HEAP_TOO_SMALL);
    assert_null(heap);
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(t->cl.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    config.size_bytes = max_alloc + 16;
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_ERROR_SIZE_TOO_LARGE);
    config.size_bytes = 1 << 20;
    config.grow.factor = 0.0 / 0.0; /* NaN: refused at creation, not cast later */
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    config.grow.factor = 1.0;
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    config.grow.factor = 0.0;
    config.allocator = (clheap_allocator)99;
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    /* The smallest heap works (asked with a few bytes its layout cannot use), and a
     * destroyed one is refused, not touched. */
    config.allocator = t->allocator;
    config.size_bytes = (1 << 20) + 8;
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap),
                     CLHEAP_SUCCESS);
    char what[256];
    assert_int_equal(clheap_heap_check(heap, what, sizeof what), CLHEAP_SUCCESS);
    /* The size is the buffer's, and a build log longer than the buffer comes back cut. */
    size_t buffer_bytes = 0;
    clGetMemObjectInfo(clheap_heap_buffer(heap), CL_MEM_SIZE, sizeof buffer_bytes, &buffer_bytes, NULL);
    assert_int_equal(clheap_heap_size(heap), buffer_bytes);
    const char *broken = "__kernel void k(void) { this does not compile; }\n";
    char log[24];
    cl_program program = NULL;
    memset(log, 'x', sizeof log);
    assert_int_equal(clheap_heap_build_program(heap, 1, &broken, NULL, &program, log, sizeof log),
                     CLHEAP_ERROR_BUILD_FAILED);
    assert_true(strlen(log) == sizeof log - 1);
    /* The log names the user's source and line: the error is on line 2 of source 2. */
    const char *two[] = {"/* one */\n", "__kernel void k(void) {\n    this does not compile;\n}\n"};
    static char full[16384];
    assert_int_equal(clheap_heap_build_program(heap, 2, two, NULL, &program, full, sizeof full),
                     CLHEAP_ERROR_BUILD_FAILED);
    if (!strstr(full, "source 2:2:"))
        fail_msg("the build log does not say source 2, line 2:\n%s", full);
    assert_int_equal(clheap_heap_destroy(heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_check(heap, what, sizeof what), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_reset(heap), CLHEAP_ERROR_INVALID_HANDLE);
    uint64_t begin = 0, bytes = 0;
    char options[256];
    assert_null(clheap_heap_buffer(heap));
    assert_int_equal(clheap_heap_pool_range(heap, &begin, &bytes), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_allocator(heap), 0);
    assert_int_equal(clheap_heap_build_options(heap, options, sizeof options), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, (cl_kernel)(void *)what, 0), CLHEAP_ERROR_INVALID_HANDLE);
    /* Every other call on the destroyed handle is refused too, without touching it (ASan). */
    const char *ok_source = "__kernel void k(void) {}\n";
    assert_int_equal(clheap_heap_build_program(heap, 1, &ok_source, NULL, &program, NULL, 0),
                     CLHEAP_ERROR_INVALID_HANDLE);
    clheap_heap_stats dead_stats;
    clheap_heap_errors dead_errors;
    uint64_t dead_fixed;
    size_t dead_count;
    uint32_t dead_out[4];
    int grew = 1;
    cl_mem table = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, 64, NULL, NULL);
    assert_int_equal(clheap_heap_calculate_stats(heap, &dead_stats), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_read_errors(heap, &dead_errors), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_grow(heap, 8u << 20), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_grow_if_needed(heap, &grew), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(grew, 0);
    assert_int_equal(clheap_heap_repair(heap, &dead_fixed), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_indices(heap, 0, dead_out, 4, &dead_count), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_trim(heap), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_parallel_do(heap, 0, (cl_kernel)(void *)what, 1, 0), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_enqueue_malloc(heap, NULL, 4, 16, NULL, table, 0, 0, NULL, NULL),
                     CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_enqueue_free(heap, NULL, 4, table, 0, 0, NULL, NULL), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_size(heap), 0);
    clReleaseMemObject(table);
    assert_int_equal(clheap_heap_destroy(heap), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_destroy(NULL), CLHEAP_SUCCESS);
    /* A live handle of the other kind is no heap (and a heap no cache). */
    clheap_cache_config cache_config = clheap_cache_config_default();
    clheap_cache *cache = NULL;
    assert_int_equal(clheap_cache_create(t->cl.context, t->cl.device, &cache_config, &cache), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_check((clheap_heap *)(void *)cache, what, sizeof what), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_destroy((clheap_heap *)(void *)cache), CLHEAP_ERROR_INVALID_HANDLE);
    assert_null(clheap_heap_buffer((clheap_heap *)(void *)cache));
    assert_int_equal(clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_cache_destroy((clheap_cache *)(void *)heap), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_heap_destroy(heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_cache_destroy(cache), CLHEAP_SUCCESS);
}

static const struct CMUnitTest heap_tests[] = {
    cmocka_unit_test_setup(check_reports_corruption, reset_heap),
    cmocka_unit_test_setup(header_corruption_is_refused, reset_heap),
    cmocka_unit_test_setup(create_refuses_bad_configs, reset_heap),
    cmocka_unit_test_setup(random_rounds_never_overlap, reset_heap),
    cmocka_unit_test_setup(fill_until_null_then_refill, reset_heap),
    cmocka_unit_test_setup(divergent_mallocs_and_frees, reset_heap),
    cmocka_unit_test_setup(wrap_stays_inside_the_pool, reset_heap),
    cmocka_unit_test_setup(bad_frees_are_counted_and_lose_nothing, reset_heap),
    cmocka_unit_test_setup(unformatted_buffer_counts_and_is_untouched, reset_heap),
    cmocka_unit_test_setup(device_errors_read_back_in_precedence, reset_heap),
    cmocka_unit_test_setup(stats_json_is_complete, reset_heap),
};

int main(int argc, char **argv)
{
    int failures = 0;
    cl_fixture probe;
    if (cl_fixture_open(&probe) != 0)
        return 1;
    /* Without 64-bit atomics those allocators are refused (tests/test_atomics32.c). */
    int atomics64 = clheap_device_has_atomics64(probe.device);
    cl_fixture_close(&probe);
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        int wanted = argc < 2;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], name) == 0;
        if (!wanted || a == CLHEAP_FREE_HEAP) /* serial: tests/test_core_freeheap.c, test_enqueue */
            continue;
        if (!atomics64 && clheap_allocator_needs_atomics64((clheap_allocator)a)) {
            printf("%s: needs 64-bit atomics, which the device lacks: not run\n", name);
            continue;
        }
        current_allocator = (clheap_allocator)a;
        failures += _cmocka_run_group_tests(name, heap_tests, sizeof heap_tests / sizeof heap_tests[0],
                                            group_setup, group_teardown);
    }
    return failures ? 1 : 0;
}
