/* Heaps that grow (clheap_heap_grow, clheap_heap_grow_if_needed) on PoCL, every allocator
 * that can free: a heap filled until mallocs fail grows by its policy, only the failed
 * work runs again, and every word of every allocation made before and after the growth
 * is verified; bad input (a size not larger, one that adds no frame, an allocator that
 * cannot grow, no policy) has its own status and changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

enum { REQUESTS = 4096, BYTES = 512 };

static const char *kernels =
    "/* Stamps every word of entry i's allocation with i, for i in [first, end). */\n"
    "__kernel void stamp(__global clheap_heap *heap, __global const uint *handles, uint first, uint end) {\n"
    "    uint i = first + get_global_id(0);\n"
    "    if (i >= end) return;\n"
    "    __global uint *p = clheap_pointer(heap, handles[i]);\n"
    "    for (uint w = 0; p && w < 128u; w++) p[w] = i;\n"
    "}\n"
    "/* Counts in bad[0] the words that are not their entry's index, and the NULL entries. */\n"
    "__kernel void verify(__global clheap_heap *heap, __global const uint *handles, __global uint *bad) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint *p = clheap_pointer(heap, handles[i]);\n"
    "    if (!p) { atomic_inc(bad); return; }\n"
    "    for (uint w = 0; w < 128u; w++) if (p[w] != i) atomic_inc(bad);\n"
    "}\n";

typedef struct grow_env {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel stamp, verify;
    cl_mem handles, bad;
    uint32_t table[REQUESTS];
} grow_env;

static void open_env(grow_env *env, clheap_allocator a, double factor)
{
    memset(env, 0, sizeof *env);
    assert_int_equal(cl_fixture_open(&env->cl), 0);
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.slot_bytes = BYTES; /* BitmapAlloc */
    config.size_bytes = 1u << 20; /* REQUESTS x BYTES is 2 MiB */
    config.grow.factor = factor;
    config.grow.max_bytes = 16u << 20;
    assert_int_equal(clheap_heap_create(env->cl.context, env->cl.device, env->cl.queue, &config, &env->heap),
                     CLHEAP_SUCCESS);
    static char log[16384];
    if (clheap_heap_build_program(env->heap, 1, &kernels, NULL, &env->program, log, sizeof log) != CLHEAP_SUCCESS)
        fail_msg("%s", log);
    cl_int err;
    env->stamp = clCreateKernel(env->program, "stamp", &err);
    assert_int_equal(err, CL_SUCCESS);
    env->verify = clCreateKernel(env->program, "verify", &err);
    assert_int_equal(err, CL_SUCCESS);
    env->handles = clCreateBuffer(env->cl.context, CL_MEM_READ_WRITE, sizeof env->table, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    env->bad = clCreateBuffer(env->cl.context, CL_MEM_READ_WRITE, sizeof(uint32_t), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
}

static void close_env(grow_env *env)
{
    clReleaseMemObject(env->handles);
    clReleaseMemObject(env->bad);
    clReleaseKernel(env->stamp);
    clReleaseKernel(env->verify);
    clReleaseProgram(env->program);
    assert_int_equal(clheap_heap_destroy(env->heap), CLHEAP_SUCCESS);
    cl_fixture_close(&env->cl);
}

static void read_table(grow_env *env)
{
    assert_int_equal(clEnqueueReadBuffer(env->cl.queue, env->handles, CL_TRUE, 0, sizeof env->table, env->table, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
}

/* Entries [first, first + count) allocated from the host and stamped. The heap argument
 * is set at every launch: growing replaces the buffer. */
static void allocate_and_stamp(grow_env *env, uint32_t first, uint32_t count)
{
    assert_int_equal(clheap_heap_enqueue_malloc(env->heap, NULL, count, BYTES, NULL, env->handles, first, 0, NULL,
                                                NULL),
                     CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(env->heap, env->stamp, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(env->stamp, 1, sizeof env->handles, &env->handles), CL_SUCCESS);
    uint32_t end = first + count;
    assert_int_equal(clSetKernelArg(env->stamp, 2, sizeof first, &first), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(env->stamp, 3, sizeof end, &end), CL_SUCCESS);
    /* One work-group size for every launch: retries vary in count, and PoCL compiles a
     * kernel again for each work-group size it picks (its compiler's leaks then reach
     * LeakSanitizer in the sanitizer build). */
    size_t local = 64, global = (count + local - 1) / local * local;
    assert_int_equal(clEnqueueNDRangeKernel(env->cl.queue, env->stamp, 1, NULL, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clFinish(env->cl.queue), CL_SUCCESS);
}

/* Words of all REQUESTS allocations that are not their entry's index, plus NULL entries. */
static uint32_t count_bad(grow_env *env)
{
    uint32_t bad = 0;
    assert_int_equal(clEnqueueWriteBuffer(env->cl.queue, env->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(env->heap, env->verify, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(env->verify, 1, sizeof env->handles, &env->handles), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(env->verify, 2, sizeof env->bad, &env->bad), CL_SUCCESS);
    size_t global = REQUESTS;
    assert_int_equal(clEnqueueNDRangeKernel(env->cl.queue, env->verify, 1, NULL, &global, NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(env->cl.queue, env->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL),
                     CL_SUCCESS);
    return bad;
}

/* Allocators named on the command line (none: all). */
static char **wanted_names;
static int wanted_count;

static int wanted(clheap_allocator a)
{
    for (int i = 0; i < wanted_count; i++)
        if (strcmp(wanted_names[i], clheap_allocator_name(a)) == 0)
            return 1;
    return wanted_count == 0;
}

static uint32_t failed(const grow_env *env)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < REQUESTS; i++)
        n += env->table[i] == 0;
    return n;
}

/* Fill until NULL, then the loop grow_if_needed is for: grow by the policy, run only the
 * failed requests again, until none fails; every word of every allocation, old and new,
 * is then intact. A CircularMalloc retry may also get NULL after its bounded walk
 * (contended, not a reason to grow): the loop retries that too, a bounded number of
 * times. */
static void fill_grow_retry_the_failed_work(void **state)
{
    (void)state;
    static const clheap_allocator growable[] = {CLHEAP_TIER_ALLOC,   CLHEAP_BLOCK_ALLOC, CLHEAP_BITMAP_ALLOC,
                                                CLHEAP_FREE_HEAP,    CLHEAP_CMALLOC,     CLHEAP_CFMMALLOC};
    for (size_t a = 0; a < sizeof growable / sizeof *growable; a++) {
        const char *name = clheap_allocator_name(growable[a]);
        if (!wanted(growable[a]))
            continue;
        grow_env env;
        open_env(&env, growable[a], 2.0);
        allocate_and_stamp(&env, 0, REQUESTS);
        read_table(&env);
        assert_true(failed(&env) > 0 && failed(&env) < REQUESTS); /* 1 MiB holds under half of 2 MiB */
        int grew = 0, growths = 0;
        uint64_t size = clheap_heap_size(env.heap);
        for (int round = 0; failed(&env) > 0; round++) {
            print_message("%s round %d: %u NULL at %llu MiB\n", name, round, failed(&env),
                          (unsigned long long)(clheap_heap_size(env.heap) >> 20));
            if (round == 8)
                fail_msg("%s: %u requests still NULL after %d rounds", name, failed(&env), round);
            assert_int_equal(clheap_heap_grow_if_needed(env.heap, &grew), CLHEAP_SUCCESS);
            if (grew) {
                growths++;
                assert_int_equal(clheap_heap_size(env.heap), 2 * size);
                size = clheap_heap_size(env.heap);
                assert_heap_sound(env.heap, name);
            }
            for (uint32_t i = 0; i < REQUESTS;) { /* each run of failed entries, again */
                uint32_t end = i;
                while (end < REQUESTS && env.table[end] == 0)
                    end++;
                if (end > i)
                    allocate_and_stamp(&env, i, end - i);
                i = end > i ? end : i + 1;
            }
            read_table(&env);
        }
        print_message("%s: %d growths to %llu MiB\n", name, growths, (unsigned long long)(size >> 20));
        assert_true(growths >= 1);
        if (growable[a] == CLHEAP_FREE_HEAP)
            assert_int_equal(growths, 2); /* 1 MiB -> 2 -> 4: 2 MiB of requests and their tags fit in 4 */
        assert_int_equal(count_bad(&env), 0);
        assert_heap_sound(env.heap, name);
        assert_int_equal(clheap_heap_enqueue_free(env.heap, NULL, REQUESTS, env.handles, 0, 0, NULL, NULL),
                         CLHEAP_SUCCESS);
        assert_heap_sound(env.heap, name);
        assert_int_equal(clheap_heap_trim(env.heap), CLHEAP_SUCCESS); /* TierAlloc: runs give back their blocks */
        clheap_heap_stats s;
        assert_int_equal(clheap_heap_calculate_stats(env.heap, &s), CLHEAP_SUCCESS);
        assert_int_equal(s.used_chunks, 0);
        if (growable[a] == CLHEAP_FREE_HEAP) {
            assert_int_equal(s.free_chunks, 1); /* the grown space merged with the rest */
            assert_int_equal(s.largest_free_bytes, s.pool_bytes);
        }
        close_env(&env);
    }
}

/* Each bad call has its own status, and the heap keeps its size and every allocation. */
static void bad_growth_changes_nothing(void **state)
{
    (void)state;
    grow_env env;
    open_env(&env, CLHEAP_FREE_HEAP, 0.0); /* no policy */
    allocate_and_stamp(&env, 0, REQUESTS);
    read_table(&env);
    uint64_t size = clheap_heap_size(env.heap);
    assert_int_equal(clheap_heap_grow(env.heap, size), CLHEAP_ERROR_GROW_NOT_LARGER);
    assert_int_equal(clheap_heap_grow(env.heap, size / 2), CLHEAP_ERROR_GROW_NOT_LARGER);
    assert_int_equal(clheap_heap_grow(NULL, 2 * size), CLHEAP_ERROR_INVALID_ARGUMENT);
    int grew = 1;
    assert_int_equal(clheap_heap_grow_if_needed(env.heap, &grew), CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_int_equal(grew, 0);
    assert_int_equal(clheap_heap_size(env.heap), size);
    clheap_heap_errors e;
    clheap_heap_read_errors(env.heap, &e);
    uint32_t nulls = failed(&env);
    assert_int_equal(e.out_of_memory, nulls); /* still counted: nothing answered them */
    assert_int_equal(count_bad(&env), nulls); /* the granted ones intact */
    assert_heap_sound(env.heap, "FreeHeap");
    close_env(&env);

    open_env(&env, CLHEAP_TIER_ALLOC, 2.0);
    allocate_and_stamp(&env, 0, REQUESTS);
    read_table(&env);
    size = clheap_heap_size(env.heap);
    /* TierAlloc's pool is whole segments of 64 frames: 16 KiB more adds none */
    assert_int_equal(clheap_heap_grow(env.heap, size + (16u << 10)), CLHEAP_ERROR_GROW_NOT_LARGER);
    assert_int_equal(clheap_heap_size(env.heap), size);
    assert_int_equal(count_bad(&env), failed(&env));
    assert_heap_sound(env.heap, "TierAlloc");
    close_env(&env);

    open_env(&env, CLHEAP_ATOMIC_MALLOC, 2.0); /* cannot free, so has nothing to give the new space to */
    size = clheap_heap_size(env.heap);
    assert_int_equal(clheap_heap_grow(env.heap, 2 * size), CLHEAP_ERROR_UNSUPPORTED);
    assert_int_equal(clheap_heap_size(env.heap), size);
    close_env(&env);
}

int main(int argc, char **argv)
{
    wanted_names = argv + 1;
    wanted_count = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_grow_retry_the_failed_work),
        cmocka_unit_test(bad_growth_changes_nothing),
    };
    return cmocka_run_group_tests_name("heaps that grow", tests, NULL, NULL);
}
