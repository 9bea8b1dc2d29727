/* The hint bitmaps at their edge: many work-items filling and emptying the 16-byte
 * blocks of a 1 MiB heap, so that the bitmaps' containers empty and refill all the time.
 *
 *   test_hints [ALLOCATOR...]   (default: BitmapAlloc BlockAlloc TierAlloc)
 *   CLHEAP_HINTS_ITEMS     work-items (default 4096; the GPU runs use 2^18, which ask
 *                          for several times the heap: most requests end in NULL)
 *   CLHEAP_HINTS_ROUNDS    rounds of each work-item a launch (default 16): HOLD mallocs,
 *                          each stamped, then each verified and freed
 *   CLHEAP_HINTS_LAUNCHES  launches, each followed by the checks (4)
 *   CLHEAP_HINTS_HOLD      objects a work-item holds at once (16)
 *   CLHEAP_HINTS_NO_WARP   1: NVIDIA's warp-coalesced paths off (config.no_warp_coalescing)
 *
 * What it guards: the upper levels of a hierarchical bitmap are hints kept by a clearer's
 * re-read and a setter's climb (cl/clheap_bitmap.h), and a full block's deactivation by
 * a re-read of its allocation word (cl/clheap_blocks.h). Device atomics are relaxed, so
 * each re-read needs an acquire fence after the clear before it; without one a GPU ran
 * the re-read first, missed a setter, and left a container that is not empty under a
 * clear bit. A CPU runs read-modify-writes in order, and PoCL's two threads rarely meet
 * in those windows: the rules themselves are proved by test_core_schedule's interleaving,
 * the fences only on a GPU (bench/run-gpu.sh's pattern). After every launch: the heap
 * check passes, nothing is live, every stamped word was read back intact, no object had
 * two holders at once (an owner table), and no free or malloc was refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

static const char *kernels =
    "/* Each round: malloc HOLD objects of 16 B and stamp their words, then read them back\n"
    " * and free them, so that one work-item alone fills blocks and empties them. While it\n"
    " * holds one, a work-item owns the object's unit in `owners`: a second owner at once\n"
    " * is an overlap (tally[2]), whether or not the stamps happened to collide. */\n"
    "__kernel void edge(__global clheap_heap *heap, uint rounds, uint seed, __global uint *tally,\n"
    "                   __global uint *owners, uint units) {\n"
    "    uint id = get_global_id(0), got = 0u, wrong = 0u, overlaps = 0u;\n"
    "    __global uint *held[HOLD];\n"
    "    for (uint r = 0u; r < rounds; r++) {\n"
    "        uint tag = clheap_hash32(id * 0x9E3779B9u + seed + r) | 1u;\n"
    "        for (uint k = 0u; k < HOLD; k++) {\n"
    "            held[k] = clheap_malloc(heap, 16u);\n"
    "            if (!held[k]) continue;\n"
    "            uint u = clheap_unit_of(heap, held[k]);\n"
    "            overlaps += u >= units || atomic_xchg(&owners[u], id + 1u) != 0u;\n"
    "            for (uint w = 0u; w < 4u; w++) held[k][w] = tag + k * 4u + w;\n"
    "        }\n"
    "        for (uint k = 0u; k < HOLD; k++) {\n"
    "            if (!held[k]) continue;\n"
    "            for (uint w = 0u; w < 4u; w++) wrong += held[k][w] != tag + k * 4u + w;\n"
    "            uint u = clheap_unit_of(heap, held[k]);\n"
    "            overlaps += u < units && atomic_cmpxchg(&owners[u], id + 1u, 0u) != id + 1u;\n"
    "            clheap_free(heap, held[k]);\n"
    "            got++;\n"
    "        }\n"
    "    }\n"
    "    atomic_add(&tally[0], got);\n"
    "    atomic_add(&tally[1], wrong);\n"
    "    atomic_add(&tally[2], overlaps);\n"
    "}\n";

enum { LOCAL = 64, HEAP_BYTES = 1 << 20, SLOT_BYTES = 16 };

static clheap_allocator current_allocator = CLHEAP_BITMAP_ALLOC;

typedef struct hints {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel edge;
    cl_mem tally, owners;
    cl_uint units; /* the heap's 16-byte units: owners' length */
    cl_uint hold;  /* objects a work-item holds at once (the kernel's HOLD) */
} hints;

static int group_setup(void **state)
{
    hints *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = current_allocator;
    config.size_bytes = HEAP_BYTES;
    config.slot_bytes = SLOT_BYTES;
    config.no_warp_coalescing = (uint32_t)fixture_env_u64("CLHEAP_HINTS_NO_WARP", 0);
    if (clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &t->heap) != CLHEAP_SUCCESS)
        return -1;
    static char log[16384];
    char options[32];
    t->hold = (cl_uint)fixture_env_u64("CLHEAP_HINTS_HOLD", 16);
    snprintf(options, sizeof options, "-DHOLD=%uu", (unsigned)t->hold);
    if (clheap_heap_build_program(t->heap, 1, &kernels, options, &t->program, log, sizeof log) != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n", log);
        return -1;
    }
    cl_int e1, e2;
    t->edge = clCreateKernel(t->program, "edge", &e1);
    t->tally = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &e2);
    cl_int e3, e4;
    t->units = HEAP_BYTES / 16;
    t->owners = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, t->units * sizeof(cl_uint), NULL, &e3);
    cl_uint zero = 0;
    e4 = e3 == CL_SUCCESS ? clEnqueueFillBuffer(t->cl.queue, t->owners, &zero, sizeof zero, 0,
                                                t->units * sizeof(cl_uint), 0, NULL, NULL)
                          : e3;
    *state = t;
    return e1 == CL_SUCCESS && e2 == CL_SUCCESS && e4 == CL_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state)
{
    hints *t = *state;
    clReleaseMemObject(t->tally);
    clReleaseMemObject(t->owners);
    clReleaseKernel(t->edge);
    clReleaseProgram(t->program);
    int ok = clheap_heap_destroy(t->heap) == CLHEAP_SUCCESS;
    cl_fixture_close(&t->cl);
    free(t);
    return ok ? 0 : -1;
}

/* One launch of `items` work-items, `rounds` rounds each; returns the rounds that got
 * memory, after asserting every word read back right. */
static uint64_t launch(hints *t, size_t items, cl_uint rounds, cl_uint seed)
{
    cl_uint zero[3] = {0, 0, 0}, tally[3];
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, t->tally, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, t->edge, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(t->edge, 1, sizeof rounds, &rounds), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(t->edge, 2, sizeof seed, &seed), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(t->edge, 3, sizeof t->tally, &t->tally), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(t->edge, 4, sizeof t->owners, &t->owners), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(t->edge, 5, sizeof t->units, &t->units), CL_SUCCESS);
    size_t global = items, local = LOCAL;
    assert_int_equal(clEnqueueNDRangeKernel(t->cl.queue, t->edge, 1, NULL, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, t->tally, CL_TRUE, 0, sizeof tally, tally, 0, NULL, NULL),
                     CL_SUCCESS);
    if (tally[1] || tally[2])
        fail_msg("%s: %u words read back wrong, %u objects held by two work-items at once",
                 clheap_allocator_name(current_allocator), tally[1], tally[2]);
    return tally[0];
}

static void hints_hold_at_the_edge(void **state)
{
    hints *t = *state;
    size_t items = (size_t)fixture_env_u64("CLHEAP_HINTS_ITEMS", 4096) / LOCAL * LOCAL;
    cl_uint rounds = (cl_uint)fixture_env_u64("CLHEAP_HINTS_ROUNDS", 16);
    uint64_t launches = fixture_env_u64("CLHEAP_HINTS_LAUNCHES", 4), served = 0;
    const char *name = clheap_allocator_name(current_allocator);
    assert_true(items >= LOCAL);
    for (uint64_t l = 0; l < launches; l++) {
        served += launch(t, items, rounds, (cl_uint)(l * 0x632BE5ABu));
        char label[64];
        snprintf(label, sizeof label, "%s, after launch %llu", name, (unsigned long long)l);
        assert_heap_sound(t->heap, label);
        clheap_heap_stats s;
        assert_int_equal(clheap_heap_calculate_stats(t->heap, &s), CLHEAP_SUCCESS);
        uint64_t live = current_allocator == CLHEAP_BITMAP_ALLOC ? s.used_chunks : live_block_objects(&s);
        if (live)
            fail_msg("%s: %llu objects live after launch %llu freed all", name, (unsigned long long)live,
                     (unsigned long long)l);
        clheap_heap_errors e;
        clheap_heap_read_errors(t->heap, &e);
        if (e.free_outside || e.free_unaligned || e.free_not_chunk || e.double_free || e.unformatted || e.bad_size)
            fail_msg("%s: a free or malloc was refused (double %u, not a chunk %u)", name, e.double_free,
                     e.free_not_chunk);
    }
    /* Some rounds must have been served, or the test proved nothing about the hints. */
    if (!served)
        fail_msg("%s: no request got memory", name);
    printf("%s: %zu work-items x %u rounds of %u x %llu launches, %llu served\n", name, items, rounds, t->hold,
           (unsigned long long)launches, (unsigned long long)served);
}

int main(int argc, char **argv)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(hints_hold_at_the_edge),
    };
    int failures = 0;
    for (int a = CLHEAP_CMALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        int wanted = argc < 2 && (a == CLHEAP_BITMAP_ALLOC || a == CLHEAP_BLOCK_ALLOC || a == CLHEAP_TIER_ALLOC);
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], name) == 0;
        if (!wanted)
            continue;
        current_allocator = (clheap_allocator)a;
        failures += _cmocka_run_group_tests(name, tests, 1, group_setup, group_teardown);
    }
    return failures ? 1 : 0;
}
