/* Host-enqueued heap allocations (clheap_heap_enqueue_malloc / _free) with every kind of
 * allocator (FreeHeap, serial, has its kernels run in one work-item): round trips both ways (the host allocates, kernels fill and free; a kernel
 * allocates, the host frees), per-request sizes across two queues ordered by events, a
 * request that gets NULL, and bad input, each with the handle table and the heap's
 * counters checked: every allocation's whole extent is stamped and verified, and entries
 * outside a batch are never touched.
 * Usage: test_enqueue [allocator name...] (default: all of them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

enum { TABLE = 4096, BATCH = 2000, FIRST = 7, UNTOUCHED = 0xABABABABu };
#define HEAP_BYTES (16u << 20)

static const char *kernels =
    "/* Stamps every word of the allocations in handles[first, first + count) with the\n"
    " * entry's index (sizes: per entry, or `size` for all). */\n"
    "__kernel void stamp(__global clheap_heap *heap, __global const uint *handles, uint first,\n"
    "                    __global const uint *sizes, uint size) {\n"
    "    uint i = get_global_id(0), e = first + i;\n"
    "    __global uint *p = clheap_pointer(heap, handles[e]);\n"
    "    uint words = (sizes ? sizes[i] : size) / 4u;\n"
    "    for (uint w = 0; p && w < words; w++) p[w] = e;\n"
    "}\n"
    "/* Counts stamps that changed in bad[0], then frees and clears the entry; entries\n"
    " * [0, n) over however many work-items run (one for a serial allocator). */\n"
    "__kernel void check_and_free(__global clheap_heap *heap, __global uint *handles, uint first,\n"
    "                             __global const uint *sizes, uint size, __global uint *bad, uint n) {\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "        uint e = first + i;\n"
    "        __global uint *p = clheap_pointer(heap, handles[e]);\n"
    "        uint words = (sizes ? sizes[i] : size) / 4u;\n"
    "        for (uint w = 0; p && w < words; w++) if (p[w] != e) atomic_inc(bad);\n"
    "        clheap_free(heap, p);\n"
    "        handles[e] = 0u;\n"
    "    }\n"
    "}\n"
    "/* Counts in bad[0] the entries in [first, first + n) that are 0, off `alignment` or not\n"
    " * zero over `size` bytes, then stamps them, frees them and clears the entry. */\n"
    "__kernel void check_zeroed(__global clheap_heap *heap, __global uint *handles, uint first, uint size,\n"
    "                           ulong alignment, __global uint *bad, uint n) {\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {\n"
    "        __global uint *p = clheap_pointer(heap, handles[first + i]);\n"
    "        uint wrong = !p || ((ulong)p & (alignment - 1u));\n"
    "        for (uint w = 0; p && w < size / 4u; w++) { wrong |= p[w] != 0u; p[w] = 0xDEADBEEFu; }\n"
    "        if (wrong) atomic_inc(bad);\n"
    "        clheap_free(heap, p);\n"
    "        handles[first + i] = 0u;\n"
    "    }\n"
    "}\n"
    "__kernel void kernel_malloc(__global clheap_heap *heap, __global uint *handles, uint size, uint n) {\n"
    "    for (uint i = get_global_id(0); i < n; i += get_global_size(0))\n"
    "        handles[i] = clheap_malloc_unit(heap, size);\n"
    "}\n";

typedef struct enqueue_env {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel stamp, check_and_free, kernel_malloc, check_zeroed;
    cl_mem handles, bad;
    uint32_t table[TABLE];
    size_t workers; /* work-items of the kernels that allocate or free: 1 for FreeHeap, serial */
} enqueue_env;

static const clheap_allocator allocators[] = {CLHEAP_TIER_ALLOC, CLHEAP_BLOCK_ALLOC, CLHEAP_CMMALLOC,
                                              CLHEAP_ATOMIC_MALLOC, CLHEAP_FREE_HEAP};
enum { ALLOCATORS = sizeof allocators / sizeof *allocators };

/* The allocators named on the command line (none: all of them). */
static int named_count;
static char **named;

/* Whether allocator a was asked for and the device runs it (clheap_device_runs: the ones
 * that need 64-bit atomics are refused without them, FreeHeap where loops end early;
 * tests/test_atomics32.c and test_loop_limit.c check the refusals). */
static int device_runs(clheap_allocator a)
{
    int asked = named_count == 0;
    for (int i = 0; i < named_count; i++)
        asked |= strcmp(named[i], clheap_allocator_name(a)) == 0;
    if (!asked)
        return 0;
    static int runs[CLHEAP_ALLOCATOR_LAST + 1], asked_device; /* the device's, asked once */
    if (!asked_device) {
        cl_fixture f;
        assert_int_equal(cl_fixture_open(&f), 0);
        for (int k = CLHEAP_ATOMIC_MALLOC; k <= CLHEAP_ALLOCATOR_LAST; k++)
            runs[k] = clheap_device_runs(f.device, (clheap_allocator)k);
        cl_fixture_close(&f);
        asked_device = 1;
    }
    return runs[a];
}

static int can_free(clheap_allocator a)
{
    return a != CLHEAP_ATOMIC_MALLOC && a != CLHEAP_ATOMIC_WRAP_MALLOC;
}

static void open_env(enqueue_env *env, clheap_allocator a)
{
    memset(env, 0, sizeof *env);
    env->workers = a == CLHEAP_FREE_HEAP ? 1 : BATCH;
    assert_int_equal(cl_fixture_open(&env->cl), 0);
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.size_bytes = HEAP_BYTES;
    assert_int_equal(clheap_heap_create(env->cl.context, env->cl.device, env->cl.queue, &config, &env->heap),
                     CLHEAP_SUCCESS);
    static char log[16384];
    clheap_status st = clheap_heap_build_program(env->heap, 1, &kernels, NULL, &env->program, log, sizeof log);
    if (st != CLHEAP_SUCCESS)
        fail_msg("%s", log);
    cl_int err;
    env->stamp = clCreateKernel(env->program, "stamp", &err);
    assert_int_equal(err, CL_SUCCESS);
    env->check_and_free = clCreateKernel(env->program, "check_and_free", &err);
    assert_int_equal(err, CL_SUCCESS);
    env->kernel_malloc = clCreateKernel(env->program, "kernel_malloc", &err);
    assert_int_equal(err, CL_SUCCESS);
    env->check_zeroed = clCreateKernel(env->program, "check_zeroed", &err);
    assert_int_equal(err, CL_SUCCESS);
    for (size_t i = 0; i < TABLE; i++)
        env->table[i] = UNTOUCHED;
    env->handles = clCreateBuffer(env->cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof env->table,
                                  env->table, &err);
    assert_int_equal(err, CL_SUCCESS);
    uint32_t zero = 0;
    env->bad = clCreateBuffer(env->cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    assert_int_equal(err, CL_SUCCESS);
}

static void close_env(enqueue_env *env)
{
    clReleaseMemObject(env->handles);
    clReleaseMemObject(env->bad);
    clReleaseKernel(env->stamp);
    clReleaseKernel(env->check_and_free);
    clReleaseKernel(env->kernel_malloc);
    clReleaseKernel(env->check_zeroed);
    clReleaseProgram(env->program);
    assert_int_equal(clheap_heap_destroy(env->heap), CLHEAP_SUCCESS);
    cl_fixture_close(&env->cl);
}

static void read_table(enqueue_env *env)
{
    assert_int_equal(clEnqueueReadBuffer(env->cl.queue, env->handles, CL_TRUE, 0, sizeof env->table, env->table, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
}

/* Entries outside [first, first + count) still hold the pattern they started with. */
static void assert_outside_untouched(const enqueue_env *env, size_t first, size_t count)
{
    for (size_t i = 0; i < TABLE; i++)
        if (i < first || i >= first + count)
            assert_int_equal(env->table[i], UNTOUCHED);
}

/* The entries' allocations are 16-byte units inside the pool and pairwise disjoint. */
static void assert_disjoint(enqueue_env *env, size_t first, size_t count, const uint32_t *sizes, uint32_t size)
{
    uint64_t begin = 0, bytes = 0;
    assert_int_equal(clheap_heap_pool_range(env->heap, &begin, &bytes), CLHEAP_SUCCESS);
    uint64_t *spans = malloc(count * 2 * sizeof *spans);
    assert_non_null(spans);
    for (size_t i = 0; i < count; i++) {
        uint64_t at = (uint64_t)env->table[first + i] * 16, len = sizes ? sizes[i] : size;
        assert_true(at >= begin && at + len <= begin + bytes);
        spans[2 * i] = at;
        spans[2 * i + 1] = at + len;
    }
    for (size_t i = 0; i < count; i++) /* insertion by start; count is small */
        for (size_t j = i; j > 0 && spans[2 * (j - 1)] > spans[2 * j]; j--) {
            uint64_t a = spans[2 * j], b = spans[2 * j + 1];
            spans[2 * j] = spans[2 * (j - 1)];
            spans[2 * j + 1] = spans[2 * (j - 1) + 1];
            spans[2 * (j - 1)] = a;
            spans[2 * (j - 1) + 1] = b;
        }
    for (size_t i = 1; i < count; i++)
        assert_true(spans[2 * i] >= spans[2 * i - 1]);
    free(spans);
}

/* No bad free or NULL counted, and every invariant of the heap holds. */
static void assert_clean(enqueue_env *env, clheap_allocator a)
{
    assert_int_equal(clheap_heap_read_errors(env->heap, NULL), CLHEAP_SUCCESS);
    assert_heap_sound(env->heap, clheap_allocator_name(a));
}

static void run_pair(enqueue_env *env, cl_command_queue queue, cl_mem sizes, uint32_t size, cl_uint waits,
                     const cl_event *wait_list)
{
    cl_uint first = FIRST;
    cl_kernel ks[2] = {env->stamp, env->check_and_free};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(clheap_heap_set_kernel_arg(env->heap, ks[k], 0), CLHEAP_SUCCESS);
        assert_int_equal(clSetKernelArg(ks[k], 1, sizeof env->handles, &env->handles), CL_SUCCESS);
        assert_int_equal(clSetKernelArg(ks[k], 2, sizeof first, &first), CL_SUCCESS);
        assert_int_equal(clSetKernelArg(ks[k], 3, sizeof sizes, &sizes), CL_SUCCESS);
        assert_int_equal(clSetKernelArg(ks[k], 4, sizeof size, &size), CL_SUCCESS);
    }
    cl_uint n = BATCH;
    assert_int_equal(clSetKernelArg(env->check_and_free, 5, sizeof env->bad, &env->bad), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(env->check_and_free, 6, sizeof n, &n), CL_SUCCESS);
    size_t global = BATCH;
    assert_int_equal(clEnqueueNDRangeKernel(queue, env->stamp, 1, NULL, &global, NULL, waits, wait_list, NULL),
                     CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
}

static void check_and_free_all(enqueue_env *env, cl_command_queue queue)
{
    size_t global = env->workers;
    assert_int_equal(clEnqueueNDRangeKernel(queue, env->check_and_free, 1, NULL, &global, NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    uint32_t bad = 1;
    assert_int_equal(clEnqueueReadBuffer(queue, env->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(bad, 0);
}

/* The host allocates without waiting; kernels in the same queue stamp, verify and free. */
static void host_allocates_kernels_use_and_free(void **state)
{
    (void)state;
    for (int a = 0; a < ALLOCATORS; a++) {
        if (!device_runs(allocators[a]))
            continue;
        enqueue_env env;
        open_env(&env, allocators[a]);
        assert_int_equal(clheap_heap_enqueue_malloc(env.heap, NULL, BATCH, 48, NULL, env.handles, FIRST, 0, NULL,
                                                    NULL),
                         CLHEAP_SUCCESS);
        run_pair(&env, env.cl.queue, NULL, 48, 0, NULL);
        read_table(&env);
        assert_outside_untouched(&env, FIRST, BATCH);
        for (size_t i = FIRST; i < FIRST + BATCH; i++)
            assert_int_not_equal(env.table[i], 0);
        assert_disjoint(&env, FIRST, BATCH, NULL, 48);
        check_and_free_all(&env, env.cl.queue);
        read_table(&env);
        for (size_t i = FIRST; i < FIRST + BATCH; i++)
            assert_int_equal(env.table[i], 0);
        assert_clean(&env, allocators[a]);
        close_env(&env);
    }
}

/* A kernel allocates; the host enqueues the frees; the memory is handed out again. */
static void kernel_allocates_host_frees(void **state)
{
    (void)state;
    for (int a = 0; a < ALLOCATORS; a++) {
        if (!device_runs(allocators[a]))
            continue;
        enqueue_env env;
        open_env(&env, allocators[a]);
        uint32_t size = 64;
        assert_int_equal(clheap_heap_set_kernel_arg(env.heap, env.kernel_malloc, 0), CLHEAP_SUCCESS);
        assert_int_equal(clSetKernelArg(env.kernel_malloc, 1, sizeof env.handles, &env.handles), CL_SUCCESS);
        cl_uint n = BATCH;
        assert_int_equal(clSetKernelArg(env.kernel_malloc, 2, sizeof size, &size), CL_SUCCESS);
        assert_int_equal(clSetKernelArg(env.kernel_malloc, 3, sizeof n, &n), CL_SUCCESS);
        size_t global = env.workers;
        assert_int_equal(clEnqueueNDRangeKernel(env.cl.queue, env.kernel_malloc, 1, NULL, &global, NULL, 0, NULL, NULL),
                         CL_SUCCESS);
        clheap_status freed = clheap_heap_enqueue_free(env.heap, NULL, BATCH, env.handles, 0, 0, NULL, NULL);
        read_table(&env);
        if (!can_free(allocators[a])) {
            assert_int_equal(freed, CLHEAP_ERROR_UNSUPPORTED);
            for (size_t i = 0; i < BATCH; i++)
                assert_int_not_equal(env.table[i], 0); /* nothing enqueued, nothing cleared */
            close_env(&env);
            continue;
        }
        assert_int_equal(freed, CLHEAP_SUCCESS);
        for (size_t i = 0; i < BATCH; i++)
            assert_int_equal(env.table[i], 0);
        assert_outside_untouched(&env, 0, BATCH);
        assert_clean(&env, allocators[a]);
        /* Everything came back: the whole batch fits again, twice over. */
        for (int round = 0; round < 2; round++) {
            assert_int_equal(clheap_heap_enqueue_malloc(env.heap, NULL, BATCH, size, NULL, env.handles, 0, 0, NULL,
                                                        NULL),
                             CLHEAP_SUCCESS);
            read_table(&env);
            for (size_t i = 0; i < BATCH; i++)
                assert_int_not_equal(env.table[i], 0);
            assert_disjoint(&env, 0, BATCH, NULL, size);
            assert_int_equal(clheap_heap_enqueue_free(env.heap, NULL, BATCH, env.handles, 0, 0, NULL, NULL),
                             CLHEAP_SUCCESS);
        }
        assert_clean(&env, allocators[a]);
        close_env(&env);
    }
}

/* Per-request sizes written by one queue, allocated by a second that waits for that
 * write, used by the first after the allocation's event. */
static void two_queues_ordered_by_events(void **state)
{
    (void)state;
    for (int a = 0; a < ALLOCATORS; a++) {
        if (!device_runs(allocators[a]))
            continue;
        enqueue_env env;
        open_env(&env, allocators[a]);
        cl_int err;
        cl_command_queue second = clCreateCommandQueue(env.cl.context, env.cl.device, 0, &err);
        assert_int_equal(err, CL_SUCCESS);
        static uint32_t sizes[BATCH];
        for (size_t i = 0; i < BATCH; i++)
            sizes[i] = 16u << (i % 7); /* 16 B .. 1 KiB */
        cl_mem sizes_buf = clCreateBuffer(env.cl.context, CL_MEM_READ_ONLY, sizeof sizes, NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
        cl_event written, allocated;
        assert_int_equal(clEnqueueWriteBuffer(env.cl.queue, sizes_buf, CL_FALSE, 0, sizeof sizes, sizes, 0, NULL,
                                              &written),
                         CL_SUCCESS);
        assert_int_equal(clFlush(env.cl.queue), CL_SUCCESS);
        assert_int_equal(clheap_heap_enqueue_malloc(env.heap, second, BATCH, 0, sizes_buf, env.handles, FIRST, 1,
                                                    &written, &allocated),
                         CLHEAP_SUCCESS);
        assert_int_equal(clFlush(second), CL_SUCCESS);
        run_pair(&env, env.cl.queue, sizes_buf, 0, 1, &allocated);
        read_table(&env);
        assert_outside_untouched(&env, FIRST, BATCH);
        for (size_t i = FIRST; i < FIRST + BATCH; i++)
            assert_int_not_equal(env.table[i], 0);
        assert_disjoint(&env, FIRST, BATCH, sizes, 0);
        check_and_free_all(&env, env.cl.queue);
        assert_clean(&env, allocators[a]);
        clReleaseEvent(written);
        clReleaseEvent(allocated);
        clReleaseMemObject(sizes_buf);
        clReleaseCommandQueue(second);
        close_env(&env);
    }
}

/* A request larger than the heap gets offset 0 and is counted; the others are served. */
static void a_request_that_gets_null(void **state)
{
    (void)state;
    for (int a = 0; a < ALLOCATORS; a++) {
        if (!device_runs(allocators[a]))
            continue;
        enqueue_env env;
        open_env(&env, allocators[a]);
        uint32_t sizes[4] = {64, 128, UINT32_MAX, 32};
        cl_int err;
        cl_mem sizes_buf = clCreateBuffer(env.cl.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof sizes,
                                          sizes, &err);
        assert_int_equal(err, CL_SUCCESS);
        assert_int_equal(clheap_heap_enqueue_malloc(env.heap, NULL, 4, 0, sizes_buf, env.handles, 100, 0, NULL, NULL),
                         CLHEAP_SUCCESS);
        read_table(&env);
        assert_outside_untouched(&env, 100, 4);
        assert_int_not_equal(env.table[100], 0);
        assert_int_not_equal(env.table[101], 0);
        assert_int_equal(env.table[102], 0);
        assert_int_not_equal(env.table[103], 0);
        clheap_heap_errors e;
        assert_int_not_equal(clheap_heap_read_errors(env.heap, &e), CLHEAP_SUCCESS);
        assert_int_equal(e.bad_size + e.out_of_memory, 1);
        clReleaseMemObject(sizes_buf);
        close_env(&env);
    }
}

/* clheap_heap_enqueue_malloc_ex: requests aligned and zeroed, on memory that was written
 * and freed before; an allocator that cannot serve the alignment gives offsets 0, each
 * counted as a bad size. Twice: with the same alignment, then with 1 KiB. */
static void aligned_zeroed_requests(void **state)
{
    (void)state;
    for (int a = 0; a < ALLOCATORS; a++) {
        if (!device_runs(allocators[a]))
            continue;
        if (!can_free(allocators[a]))
            continue;
        enqueue_env env;
        open_env(&env, allocators[a]);
        cl_uint n = BATCH, first = FIRST, size = 256;
        for (cl_ulong alignment = 16; alignment <= 1024; alignment *= 64) {
            /* dirty memory: allocated, written over, freed */
            assert_int_equal(clheap_heap_enqueue_malloc(env.heap, NULL, n, size, NULL, env.handles, FIRST, 0, NULL, NULL),
                             CLHEAP_SUCCESS);
            run_pair(&env, env.cl.queue, NULL, size, 0, NULL);
            check_and_free_all(&env, env.cl.queue);
            clheap_heap_errors before;
            clheap_heap_read_errors(env.heap, &before);
            assert_int_equal(clheap_heap_enqueue_malloc_ex(env.heap, NULL, n, size, NULL, alignment, CLHEAP_ENQUEUE_ZERO,
                                                           env.handles, FIRST, 0, NULL, NULL),
                             CLHEAP_SUCCESS);
            read_table(&env);
            assert_outside_untouched(&env, FIRST, n);
            clheap_heap_errors after;
            clheap_heap_read_errors(env.heap, &after);
            int served = alignment <= 16 || allocators[a] == CLHEAP_TIER_ALLOC || allocators[a] == CLHEAP_FREE_HEAP;
            uint32_t nulls = 0;
            for (size_t i = FIRST; i < FIRST + n; i++)
                nulls += env.table[i] == 0;
            assert_int_equal(after.bad_size - before.bad_size, nulls);
            if (served)
                assert_int_equal(nulls, 0);
            cl_kernel k = env.check_zeroed;
            assert_int_equal(clheap_heap_set_kernel_arg(env.heap, k, 0), CLHEAP_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 1, sizeof env.handles, &env.handles), CL_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 2, sizeof first, &first), CL_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 3, sizeof size, &size), CL_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 4, sizeof alignment, &alignment), CL_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 5, sizeof env.bad, &env.bad), CL_SUCCESS);
            assert_int_equal(clSetKernelArg(k, 6, sizeof n, &n), CL_SUCCESS);
            size_t global = env.workers;
            assert_int_equal(clEnqueueNDRangeKernel(env.cl.queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
            uint32_t bad = 0, zero = 0;
            assert_int_equal(clEnqueueReadBuffer(env.cl.queue, env.bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL),
                             CL_SUCCESS);
            assert_int_equal(bad, nulls); /* every entry served is aligned and zero */
            assert_int_equal(clEnqueueWriteBuffer(env.cl.queue, env.bad, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL),
                             CL_SUCCESS);
            assert_heap_sound(env.heap, clheap_allocator_name(allocators[a]));
        }
        /* Bad alignments and flags: refused, nothing enqueued. */
        assert_int_equal(clheap_heap_enqueue_malloc_ex(env.heap, NULL, 1, 16, NULL, 48, 0, env.handles, 0, 0, NULL, NULL),
                         CLHEAP_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clheap_heap_enqueue_malloc_ex(env.heap, NULL, 1, 16, NULL, 1u << 30, 0, env.handles, 0, 0, NULL,
                                                       NULL),
                         CLHEAP_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clheap_heap_enqueue_malloc_ex(env.heap, NULL, 1, 16, NULL, 64, 2, env.handles, 0, 0, NULL, NULL),
                         CLHEAP_ERROR_INVALID_ARGUMENT);
        read_table(&env);
        assert_int_equal(env.table[0], UNTOUCHED);
        close_env(&env);
    }
}

/* Each bad argument has its own status, and nothing is enqueued: the table and the
 * heap's counters stay as they were. */
static void bad_input_changes_nothing(void **state)
{
    (void)state;
    enqueue_env env;
    open_env(&env, device_runs(CLHEAP_TIER_ALLOC) ? CLHEAP_TIER_ALLOC : CLHEAP_CMMALLOC);
    cl_int err;
    cl_mem short_sizes = clCreateBuffer(env.cl.context, CL_MEM_READ_ONLY, 8 * sizeof(uint32_t), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    clheap_heap *h = env.heap;
    cl_mem t = env.handles;
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 0, 16, NULL, t, 0, 0, NULL, NULL), CLHEAP_ERROR_ZERO_COUNT);
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 1, 16, NULL, t, TABLE, 0, NULL, NULL),
                     CLHEAP_ERROR_HANDLE_OUT_OF_RANGE);
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 10, 16, NULL, t, TABLE - 5, 0, NULL, NULL),
                     CLHEAP_ERROR_HANDLE_OUT_OF_RANGE);
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 10, 0, NULL, t, 0, 0, NULL, NULL), CLHEAP_ERROR_ZERO_SIZE);
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 10, 16, NULL, NULL, 0, 0, NULL, NULL),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_enqueue_malloc(h, NULL, 10, 0, short_sizes, t, 0, 0, NULL, NULL),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_enqueue_free(h, NULL, 0, t, 0, 0, NULL, NULL), CLHEAP_ERROR_ZERO_COUNT);
    assert_int_equal(clheap_heap_enqueue_free(h, NULL, 2, t, TABLE - 1, 0, NULL, NULL),
                     CLHEAP_ERROR_HANDLE_OUT_OF_RANGE);
    assert_int_equal(clheap_heap_enqueue_malloc(NULL, NULL, 1, 16, NULL, t, 0, 0, NULL, NULL),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clFinish(env.cl.queue), CL_SUCCESS);
    read_table(&env);
    assert_outside_untouched(&env, 0, 0);
    clheap_heap_errors e;
    assert_int_equal(clheap_heap_read_errors(h, &e), CLHEAP_SUCCESS);
    assert_int_equal(e.bad_size + e.out_of_memory + e.double_free + e.free_not_chunk, 0);
    clReleaseMemObject(short_sizes);
    close_env(&env);
    /* A destroyed heap is recognised before it is touched. */
    assert_int_equal(clheap_heap_enqueue_free(h, NULL, 1, NULL, 0, 0, NULL, NULL), CLHEAP_ERROR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    named_count = argc - 1;
    named = argv + 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_allocates_kernels_use_and_free),
        cmocka_unit_test(kernel_allocates_host_frees),
        cmocka_unit_test(two_queues_ordered_by_events),
        cmocka_unit_test(a_request_that_gets_null),
        cmocka_unit_test(aligned_zeroed_requests),
        cmocka_unit_test(bad_input_changes_nothing),
    };
    return cmocka_run_group_tests_name("host-enqueued heap allocations", tests, NULL, NULL);
}
