/* Random mallocs and frees at scale, every word of every allocation verified.
 *
 *   test_stress [ALLOCATOR...]      (default: TierAlloc)
 *   CLHEAP_STRESS_OPS       mallocs + frees to reach (default 100000; the H100 run uses 10^8)
 *   CLHEAP_STRESS_ITEMS     work-items, each holding at most one allocation (default 4096)
 *   CLHEAP_STRESS_HEAP_MIB  heap size (default 128)
 *   CLHEAP_STRESS_CHECK     rounds between full heap and word checks (default 1)
 *   CLHEAP_STRESS_OPTIONS   more OpenCL build options (the GPU runs' -D knobs; with
 *                           -DSTRESS_DEVICE_SCOPE the build fails unless it takes the
 *                           device-scope atomics of OpenCL C 2.0 and later, with
 *                           -DSTRESS_OPENCL_C_1_2 unless it takes OpenCL C 1.2's)
 *
 * Each round is one kernel: a work-item holding an allocation verifies every word of it
 * (each word holds its owner's tag plus its index, so a block handed to two owners, or
 * shifted, is seen), frees it, and half of the time mallocs again; one holding none
 * mallocs. Sizes: 16 B - 2 KiB mostly, 2 - 64 KiB one time in 8, 64 KiB - 2 MiB one in
 * 256 (capped at the largest size the allocator serves). After every round the host
 * reads every live range back and proves them disjoint and inside the pool; every
 * CLHEAP_STRESS_CHECK rounds clheap_heap_check runs and the heap's live count must
 * equal the host's. At the end everything is verified, freed, and the heap must be
 * empty and sound, with no bad free counted. For TierAlloc a NULL is a failure in any
 * round that asked for at most 75% of the pool (what was live before it, what it
 * malloced, and the NULLs' sizes), for BlockAlloc at most half; the circular family only
 * has to stay correct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fixture.h"

static const char *kernels =
    "/* Which atomics and fences of cl/clheap_port.h the run must test: STRESS_DEVICE_SCOPE,\n"
    " * OpenCL C 2.0 and later's (device scope); STRESS_OPENCL_C_1_2, OpenCL C 1.2's. */\n"
    "#if defined(STRESS_DEVICE_SCOPE) && !defined(CLHEAP_DEVICE_SCOPE_FENCES)\n"
    "#error \"the device-scope atomics and fences were not taken\"\n"
    "#endif\n"
    "#if defined(STRESS_OPENCL_C_1_2) && defined(CLHEAP_DEVICE_SCOPE_FENCES)\n"
    "#error \"OpenCL C 1.2's atomics and fences were not taken\"\n"
    "#endif\n"
    "uint stress_tag(uint id, uint born) { return clheap_hash32(id * 0x9E3779B9u + born) | 1u; }\n"
    "uint stress_bytes(uint r, uint max_bytes) {\n"
    "    uint kind = r & 255u, octave = (r >> 8) % 5u, base;\n"
    "    if (kind == 0u) base = 65536u << octave;       /* 1 in 256: 64 KiB .. 2 MiB */\n"
    "    else if (kind < 32u) base = 2048u << octave;   /* 31 in 256: 2 .. 64 KiB */\n"
    "    else base = 16u << ((r >> 8) % 7u);            /* 16 B .. 2 KiB */\n"
    "    uint bytes = (base + clheap_hash32(r) % base) & ~3u;\n"
    "    return bytes < max_bytes ? bytes : max_bytes;\n"
    "}\n"
    "uint stress_verify(__global uint *p, uint bytes, uint tag) {\n"
    "    uint wrong = 0;\n"
    "    for (uint w = 0; w < bytes / 4u; w++) wrong += p[w] != tag + w;\n"
    "    return wrong;\n"
    "}\n"
    "__kernel void churn(__global clheap_heap *heap, __global uint *units, __global uint *sizes,\n"
    "                    __global uint *born, __global uint *tally, uint count, uint round, uint seed,\n"
    "                    uint max_bytes, __global uint *null_sizes) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    uint r = clheap_hash32(id ^ clheap_hash32(seed + round * 0x632BE5ABu));\n"
    "    uint unit = units[id], ops = 0, nulls = 0, bad = 0;\n"
    "    int want = 1;\n"
    "    if (unit) {\n"
    "        bad = stress_verify(clheap_pointer(heap, unit), sizes[id], stress_tag(id, born[id]));\n"
    "        clheap_free_unit(heap, unit);\n"
    "        ops++;\n"
    "        want = r & 1u;\n"
    "    }\n"
    "    unit = 0u;\n"
    "    if (want) {\n"
    "        uint bytes = stress_bytes(clheap_hash32(r + 0x5bd1e995u), max_bytes);\n"
    "        __global uint *p = clheap_malloc(heap, bytes);\n"
    "        ops++;\n"
    "        if (p) {\n"
    "            uint tag = stress_tag(id, round);\n"
    "            for (uint w = 0; w < bytes / 4u; w++) p[w] = tag + w;\n"
    "            unit = clheap_unit_of(heap, p);\n"
    "            sizes[id] = bytes;\n"
    "            born[id] = round;\n"
    "        } else {\n"
    "            nulls++;\n"
    "            atomic_inc(null_sizes + 31u - clz(bytes));  /* by power of two of the size */\n"
    "            atomic_add(null_sizes + NULL_KIB, (bytes + 1023u) / 1024u);  /* and what they asked, in KiB */\n"
    "        }\n"
    "    }\n"
    "    units[id] = unit;\n"
    "    tally[3u * id] += ops;\n"
    "    tally[3u * id + 1u] += nulls;\n"
    "    tally[3u * id + 2u] += bad;\n"
    "}\n"
    "/* The last round: verify and free everything. */\n"
    "__kernel void drain(__global clheap_heap *heap, __global uint *units, __global const uint *sizes,\n"
    "                    __global const uint *born, __global uint *tally, uint count) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count || !units[id]) return;\n"
    "    tally[3u * id + 2u] += stress_verify(clheap_pointer(heap, units[id]), sizes[id], stress_tag(id, born[id]));\n"
    "    clheap_free_unit(heap, units[id]);\n"
    "    tally[3u * id] += 1u;\n"
    "    units[id] = 0u;\n"
    "}\n";

/* null_sizes: NULLs by power of two of the size, then (NULL_KIB, passed to the kernels) the KiB they asked for. */
enum { LOCAL = 256, NULL_KIB = 32, NULL_BINS = NULL_KIB + 1 };

static clheap_allocator current_allocator = CLHEAP_TIER_ALLOC;

typedef struct stress {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
    cl_kernel churn, drain;
    uint32_t count;
    cl_mem units_buf, sizes_buf, born_buf, tally_buf, null_sizes_buf;
    uint32_t *units, *sizes, *born;
    uint64_t *ranges;
} stress;

/* BitmapAlloc serves one size: its slots hold the test's common requests (16 B - 2 KiB),
 * larger ones are capped to it. */
#define STRESS_BITMAP_SLOT_BYTES 2048u

static int group_setup(void **state)
{
    stress *s = calloc(1, sizeof *s);
    if (!s || cl_fixture_open(&s->cl) != 0)
        return -1;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = current_allocator;
    config.size_bytes = fixture_env_u64("CLHEAP_STRESS_HEAP_MIB", 128) << 20;
    config.slot_bytes = STRESS_BITMAP_SLOT_BYTES;
    if (clheap_heap_create(s->cl.context, s->cl.device, s->cl.queue, &config, &s->heap) != CLHEAP_SUCCESS)
        return -1;
    static char log[16384];
    char options[512];
    const char *more = getenv("CLHEAP_STRESS_OPTIONS");
    snprintf(options, sizeof options, "-DNULL_KIB=%du %s", NULL_KIB, more ? more : "");
    if (clheap_heap_build_program(s->heap, 1, &kernels, options, &s->program, log, sizeof log) != CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n", log);
        return -1;
    }
    cl_int e1, e2;
    s->churn = clCreateKernel(s->program, "churn", &e1);
    s->drain = clCreateKernel(s->program, "drain", &e2);
    *state = s;
    return e1 == CL_SUCCESS && e2 == CL_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state)
{
    stress *s = *state;
    if (!s)
        return 0;
    if (s->churn)
        clReleaseKernel(s->churn);
    if (s->drain)
        clReleaseKernel(s->drain);
    if (s->program)
        clReleaseProgram(s->program);
    clheap_heap_destroy(s->heap);
    cl_fixture_close(&s->cl);
    free(s);
    return 0;
}

static int reset_heap(void **state)
{
    stress *s = *state;
    return reset_and_check_heap(s->heap, s->cl.queue);
}

static cl_mem zeroed_buffer(stress *s, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(s->cl.context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    uint32_t zero = 0;
    assert_int_equal(clEnqueueFillBuffer(s->cl.queue, b, &zero, sizeof zero, 0, bytes, 0, NULL, NULL), CL_SUCCESS);
    return b;
}

static void read_back(stress *s, cl_mem buffer, uint32_t *host)
{
    assert_int_equal(clEnqueueReadBuffer(s->cl.queue, buffer, CL_TRUE, 0, s->count * sizeof(uint32_t), host, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
}

static void launch(stress *s, cl_kernel k)
{
    size_t global = (s->count + LOCAL - 1) / LOCAL * LOCAL, local = LOCAL;
    assert_int_equal(clEnqueueNDRangeKernel(s->cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL), CL_SUCCESS);
}

static int compare_ranges(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Reads the live allocations back and proves them disjoint and inside the pool;
 * returns how many there are, their bytes in *bytes, and how many were born in `round`
 * and their bytes in *fresh and *fresh_bytes. */
static uint64_t check_ranges(stress *s, uint32_t round, uint64_t *bytes, uint64_t *fresh, uint64_t *fresh_bytes)
{
    read_back(s, s->units_buf, s->units);
    read_back(s, s->sizes_buf, s->sizes);
    read_back(s, s->born_buf, s->born);
    uint64_t begin, pool;
    assert_int_equal(clheap_heap_pool_range(s->heap, &begin, &pool), CLHEAP_SUCCESS);
    uint64_t live = 0;
    *bytes = *fresh = *fresh_bytes = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (!s->units[i])
            continue;
        uint64_t at = (uint64_t)s->units[i] * CLHEAP_UNIT_BYTES;
        if (at < begin || at + s->sizes[i] > begin + pool)
            fail_msg("round %u: allocation of work-item %u at byte %llu is outside the pool", round, i,
                     (unsigned long long)at);
        s->ranges[2 * live] = at;
        s->ranges[2 * live + 1] = at + s->sizes[i];
        *bytes += s->sizes[i];
        *fresh += s->born[i] == round;
        *fresh_bytes += s->born[i] == round ? s->sizes[i] : 0;
        live++;
    }
    qsort(s->ranges, live, 2 * sizeof *s->ranges, compare_ranges);
    for (uint64_t i = 1; i < live; i++)
        if (s->ranges[2 * i] < s->ranges[2 * i - 1])
            fail_msg("round %u: allocations overlap at byte %llu", round, (unsigned long long)s->ranges[2 * i]);
    return live;
}

static uint64_t live_objects(stress *s)
{
    clheap_heap_stats st;
    assert_int_equal(clheap_heap_calculate_stats(s->heap, &st), CLHEAP_SUCCESS);
    uint64_t live = st.large_count;
    for (uint32_t c = 0; c < st.class_count; c++)
        live += st.class_objects[c];
    if (st.class_count == 0 && st.large_count == 0)
        live = st.used_chunks; /* the circular family counts chunks */
    return live;
}

/* The kernels' tallies so far, all work-items together. */
typedef struct tallies {
    uint64_t ops, nulls, words_wrong;
} tallies;

static tallies read_tallies(stress *s)
{
    size_t bytes = 3 * (size_t)s->count * sizeof(uint32_t);
    uint32_t *tally = malloc(bytes);
    assert_non_null(tally);
    assert_int_equal(clEnqueueReadBuffer(s->cl.queue, s->tally_buf, CL_TRUE, 0, bytes, tally, 0, NULL, NULL),
                     CL_SUCCESS);
    tallies t = {0, 0, 0};
    for (uint32_t i = 0; i < s->count; i++) {
        t.ops += tally[3 * i];
        t.nulls += tally[3 * i + 1];
        t.words_wrong += tally[3 * i + 2];
    }
    free(tally);
    return t;
}

/* The largest request the allocator serves (the blocks' largest class, BitmapAlloc's slot,
 * else 2 MiB); where the device cuts loops
 * (clheap_device_loop_limit), at most what a work-item can verify and stamp, a word an
 * iteration, in a quarter of its iterations. */
static uint32_t largest_request(stress *s)
{
    clheap_heap_stats st;
    assert_int_equal(clheap_heap_calculate_stats(s->heap, &st), CLHEAP_SUCCESS);
    uint32_t largest = 2u << 20, loops = clheap_device_loop_limit(s->cl.device) / 2u & ~15u;
    if (current_allocator == CLHEAP_BLOCK_ALLOC && st.class_count)
        largest = st.class_bytes[st.class_count - 1];
    if (current_allocator == CLHEAP_BITMAP_ALLOC)
        largest = STRESS_BITMAP_SLOT_BYTES;
    return loops && loops < largest ? loops : largest;
}

static void random_mallocs_and_frees_keep_every_word(void **state)
{
    stress *s = *state;
    uint64_t target = fixture_env_u64("CLHEAP_STRESS_OPS", 100000);
    uint64_t check_every = fixture_env_u64("CLHEAP_STRESS_CHECK", 1);
    s->count = (uint32_t)fixture_env_u64("CLHEAP_STRESS_ITEMS", 4096);
    size_t bytes = s->count * sizeof(uint32_t);
    s->units_buf = zeroed_buffer(s, bytes);
    s->sizes_buf = zeroed_buffer(s, bytes);
    s->born_buf = zeroed_buffer(s, bytes);
    s->tally_buf = zeroed_buffer(s, 3 * bytes);
    s->null_sizes_buf = zeroed_buffer(s, NULL_BINS * sizeof(uint32_t));
    s->units = malloc(bytes);
    s->sizes = malloc(bytes);
    s->born = malloc(bytes);
    s->ranges = malloc(2 * (size_t)s->count * sizeof *s->ranges);
    assert_true(s->units && s->sizes && s->born && s->ranges);
    uint64_t pool_begin, pool;
    assert_int_equal(clheap_heap_pool_range(s->heap, &pool_begin, &pool), CLHEAP_SUCCESS);
    cl_uint count = s->count, seed = 0xC1EA9u, max_bytes = largest_request(s);
    for (int k = 0; k < 2; k++) {
        cl_kernel kernel = k ? s->drain : s->churn;
        assert_int_equal(clheap_heap_set_kernel_arg(s->heap, kernel, 0), CLHEAP_SUCCESS);
        clSetKernelArg(kernel, 1, sizeof s->units_buf, &s->units_buf);
        clSetKernelArg(kernel, 2, sizeof s->sizes_buf, &s->sizes_buf);
        clSetKernelArg(kernel, 3, sizeof s->born_buf, &s->born_buf);
        clSetKernelArg(kernel, 4, sizeof s->tally_buf, &s->tally_buf);
        clSetKernelArg(kernel, 5, sizeof count, &count);
    }
    clSetKernelArg(s->churn, 7, sizeof seed, &seed);
    clSetKernelArg(s->churn, 8, sizeof max_bytes, &max_bytes);
    clSetKernelArg(s->churn, 9, sizeof s->null_sizes_buf, &s->null_sizes_buf);
    uint32_t null_sizes[NULL_BINS] = {0}, nulls_seen = 0, rounds_reported = 0, null_kib_seen = 0;
    /* The load below which a NULL fails the test: what TierAlloc promises for mixed sizes
     * (75% of the pool, README), half for BlockAlloc; the circular family has none. */
    int promises = current_allocator == CLHEAP_TIER_ALLOC || current_allocator == CLHEAP_BLOCK_ALLOC;
    uint64_t promised = current_allocator == CLHEAP_TIER_ALLOC ? pool / 4 * 3 : pool / 2;

    uint64_t ops = 0, live = 0, live_bytes = 0, most_live = 0, promise_broken = 0;
    cl_uint round = 0;
    struct timespec began;
    clock_gettime(CLOCK_MONOTONIC, &began);
    while (ops < target) {
        round++;
        clSetKernelArg(s->churn, 6, sizeof round, &round);
        launch(s, s->churn);
        uint64_t bytes_now, fresh, fresh_bytes;
        uint64_t live_now = check_ranges(s, round, &bytes_now, &fresh, &fresh_bytes);
        /* What could have been live at once in this round: everything live before it and
         * everything it malloced (its frees may all have come last). */
        uint64_t peak = live_bytes + fresh_bytes;
        most_live = peak > most_live ? peak : most_live;
        ops += live + fresh; /* every live allocation was freed; the granted mallocs */
        assert_int_equal(clEnqueueReadBuffer(s->cl.queue, s->null_sizes_buf, CL_TRUE, 0, sizeof null_sizes,
                                             null_sizes, 0, NULL, NULL),
                         CL_SUCCESS);
        uint32_t nulls_now = 0;
        for (int b = 0; b < NULL_KIB; b++)
            nulls_now += null_sizes[b];
        /* A round that got a NULL had asked for at most this: the peak and the NULLs' sizes. */
        uint64_t asked = peak + ((uint64_t)(null_sizes[NULL_KIB] - null_kib_seen) << 10);
        if (nulls_now > nulls_seen && asked <= promised)
            promise_broken++;
        if (nulls_now > nulls_seen && rounds_reported++ < 8)
            print_message("  round %u: %u NULL, at most %.1f%% of the pool live, %.1f%% asked for\n", round,
                          nulls_now - nulls_seen, 100.0 * (double)peak / (double)pool,
                          100.0 * (double)asked / (double)pool);
        nulls_seen = nulls_now;
        null_kib_seen = null_sizes[NULL_KIB];
        live = live_now;
        live_bytes = bytes_now;
        if (round % check_every == 0) {
            char label[32];
            snprintf(label, sizeof label, "round %u", round);
            assert_heap_sound(s->heap, label);
            assert_int_equal(live_objects(s), live);
            /* Here too, not only at the end: a run stopped by a time limit has then
             * proved its words up to its last check. */
            if (read_tallies(s).words_wrong != 0)
                fail_msg("round %u: words of live allocations were overwritten", round);
        }
        if (round % 16 == 0) { /* how far a long run got, should it be stopped */
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            cl_uint checked = round / (cl_uint)check_every * (cl_uint)check_every;
            print_message("  round %u: %llu mallocs + frees, %.1f%% of the pool live, %.0f s; heap and words %s %u\n",
                          round, (unsigned long long)ops, 100.0 * (double)bytes_now / (double)pool,
                          (double)(now.tv_sec - began.tv_sec) + 1e-9 * (double)(now.tv_nsec - began.tv_nsec),
                          checked ? "sound at round" : "not checked yet, next at round",
                          checked ? checked : (cl_uint)check_every);
        }
    }
    launch(s, s->drain);
    uint64_t rest_bytes, fresh, fresh_bytes;
    assert_int_equal(check_ranges(s, round + 1, &rest_bytes, &fresh, &fresh_bytes), 0);
    assert_heap_sound(s->heap, "after the drain");
    assert_int_equal(live_objects(s), 0);

    tallies t = read_tallies(s);
    uint64_t all_ops = t.ops, nulls = t.nulls, bad_words = t.words_wrong;
    clheap_heap_errors e;
    clheap_heap_read_errors(s->heap, &e);
    print_message("%s: %u work-items, %u rounds, %llu mallocs + frees, %llu NULL (%u out of memory, %u contended), "
                  "%llu words wrong; peak live <= %.1f%% of the pool; %llu rounds with a NULL at or below %.0f%% "
                  "asked for\n",
                  clheap_allocator_name(current_allocator), s->count, round, (unsigned long long)all_ops,
                  (unsigned long long)nulls, e.out_of_memory, e.contended, (unsigned long long)bad_words,
                  100.0 * (double)most_live / (double)pool, (unsigned long long)promise_broken,
                  100.0 * (double)promised / (double)pool);
    for (int b = 0; b < NULL_KIB; b++)
        if (null_sizes[b])
            print_message("  NULL for %u B - %u B: %u\n", 1u << b, (2u << b) - 1u, null_sizes[b]);
    assert_int_equal(bad_words, 0);
    assert_true(all_ops >= target);
    assert_int_equal(e.double_free + e.free_not_chunk + e.free_unaligned + e.free_outside, 0);
    assert_int_equal(e.out_of_memory + e.contended, nulls);
    /* The default allocator promises no NULL below its loads (cl/clheap_tier.h), as
     * BlockAlloc does for its sizes; the circular family's pre-split chunks fragment and
     * are only asked to stay correct. Each round is judged on its own: one round above
     * the load excuses its own NULLs, not those of the rounds before or after it. */
    if (promises)
        assert_int_equal(promise_broken, 0);

    clReleaseMemObject(s->units_buf);
    clReleaseMemObject(s->sizes_buf);
    clReleaseMemObject(s->born_buf);
    clReleaseMemObject(s->tally_buf);
    clReleaseMemObject(s->null_sizes_buf);
    free(s->units);
    free(s->sizes);
    free(s->born);
    free(s->ranges);
}

int main(int argc, char **argv)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(random_mallocs_and_frees_keep_every_word, reset_heap),
    };
    int failures = 0;
    for (int a = CLHEAP_CMALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        const char *name = clheap_allocator_name((clheap_allocator)a);
        int wanted = argc < 2 ? a == CLHEAP_TIER_ALLOC : 0;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], name) == 0;
        if (!wanted || a == CLHEAP_FREE_HEAP) /* serial by design */
            continue;
        current_allocator = (clheap_allocator)a;
        failures += _cmocka_run_group_tests(name, tests, 1, group_setup, group_teardown);
    }
    return failures ? 1 : 0;
}
