/* Host buffer cache: reuse policy, caps, out-of-memory recovery, bad input, threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "fixture.h"

typedef struct cache_test {
    cl_fixture cl;
    counting_driver driver;
    clheap_cache *cache;
} cache_test;

#define KiB ((size_t)1024)

static void assert_cache_ok(clheap_cache *cache)
{
    char what[256];
    clheap_status status = clheap_cache_check(cache, what, sizeof what);
    if (status != CLHEAP_SUCCESS)
        fail_msg("cache check: %s", what);
}

static clheap_cache_stats stats_of(clheap_cache *cache)
{
    clheap_cache_stats s;
    assert_int_equal(clheap_cache_get_stats(cache, &s), CLHEAP_SUCCESS);
    return s;
}

static cl_mem alloc_ok(clheap_cache *cache, size_t size, const char *tag)
{
    cl_mem buffer = NULL;
    assert_int_equal(clheap_cache_alloc(cache, size, tag, &buffer), CLHEAP_SUCCESS);
    assert_non_null(buffer);
    assert_cache_ok(cache);
    return buffer;
}

static void free_ok(clheap_cache *cache, cl_mem buffer)
{
    assert_int_equal(clheap_cache_free(cache, buffer), CLHEAP_SUCCESS);
    assert_cache_ok(cache);
}

static int make_cache(cache_test *t, const clheap_cache_config *base)
{
    clheap_cache_config config = base ? *base : clheap_cache_config_default();
    config.driver = &t->driver.table;
    return clheap_cache_create(t->cl.context, t->cl.device, &config, &t->cache) == CLHEAP_SUCCESS
               ? 0
               : -1;
}

static int setup(void **state)
{
    cache_test *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    counting_driver_init(&t->driver);
    *state = t;
    return make_cache(t, NULL);
}

static int teardown(void **state)
{
    cache_test *t = *state;
    if (t->cache)
        clheap_cache_destroy(t->cache);
    /* Whatever a test did, destroy must have handed every buffer back. */
    int leaked = t->driver.outstanding != 0;
    cl_fixture_close(&t->cl);
    free(t);
    return leaked ? -1 : 0;
}

/* Replaces the fixture's cache with one made from config. */
static void remake_cache(cache_test *t, const clheap_cache_config *config)
{
    assert_int_equal(clheap_cache_destroy(t->cache), CLHEAP_SUCCESS);
    t->cache = NULL;
    counting_driver_init(&t->driver);
    assert_int_equal(make_cache(t, config), 0);
}

static void reuse_by_tag(void **state)
{
    cache_test *t = *state;
    cl_mem a = alloc_ok(t->cache, 1000, "site-a");
    free_ok(t->cache, a);
    cl_mem again = alloc_ok(t->cache, 1000, "site-a");
    assert_ptr_equal(again, a);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.hits, 1);
    assert_int_equal(s.hits_same_tag, 1);
    assert_int_equal(s.misses, 1);
    assert_int_equal(t->driver.creates, 1);
    free_ok(t->cache, again);
}

static void tag_compared_by_content(void **state)
{
    cache_test *t = *state;
    char tag1[16], tag2[16];
    strcpy(tag1, "loop-body");
    cl_mem a = alloc_ok(t->cache, 4 * KiB, tag1);
    free_ok(t->cache, a);
    /* The tag was copied: overwriting the caller's string changes nothing. */
    strcpy(tag1, "garbage");
    strcpy(tag2, "loop-body");
    assert_ptr_equal(alloc_ok(t->cache, 4 * KiB, tag2), a);
    assert_int_equal(stats_of(t->cache).hits_same_tag, 1);
    free_ok(t->cache, a);
}

static void two_n_rule(void **state)
{
    cache_test *t = *state;
    cl_mem big = alloc_ok(t->cache, 4096, "t");
    free_ok(t->cache, big);
    /* 4096 > 2 * 1024: too wasteful, a new buffer is made. */
    cl_mem small = alloc_ok(t->cache, 1024, "t");
    assert_ptr_not_equal(small, big);
    assert_int_equal(stats_of(t->cache).misses, 2);
    /* 4096 <= 2 * 2048: reused. */
    cl_mem mid = alloc_ok(t->cache, 2048, "t");
    assert_ptr_equal(mid, big);
    size_t size = 0;
    assert_int_equal(clheap_cache_buffer_size(t->cache, mid, &size), CLHEAP_SUCCESS);
    assert_int_equal(size, 4096);
    free_ok(t->cache, small);
    free_ok(t->cache, mid);
}

static void same_tag_preferred_then_best_fit(void **state)
{
    cache_test *t = *state;
    cl_mem x2k = alloc_ok(t->cache, 2048, "x");
    cl_mem y3k = alloc_ok(t->cache, 3072, "y");
    cl_mem z4k = alloc_ok(t->cache, 4096, "z");
    free_ok(t->cache, x2k);
    free_ok(t->cache, y3k);
    free_ok(t->cache, z4k);
    /* Same tag in [n, 2n] beats a smaller buffer of another tag. */
    assert_ptr_equal(alloc_ok(t->cache, 2048, "y"), y3k);
    /* No buffer of tag "w": the best fit among all tags. */
    assert_ptr_equal(alloc_ok(t->cache, 1800, "w"), x2k);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.hits_same_tag, 1);
    assert_int_equal(t->driver.creates, 3);
    free_ok(t->cache, y3k);
    free_ok(t->cache, x2k);
}

static void granularity_rounds_sizes(void **state)
{
    cache_test *t = *state;
    cl_mem a = alloc_ok(t->cache, 1, "g");
    size_t size = 0;
    assert_int_equal(clheap_cache_buffer_size(t->cache, a, &size), CLHEAP_SUCCESS);
    assert_int_equal(size, 256);
    free_ok(t->cache, a);
    assert_ptr_equal(alloc_ok(t->cache, 200, "other"), a); /* 256 is in [256, 512] */
    free_ok(t->cache, a);
}

static void cap_evicts_oldest(void **state)
{
    cache_test *t = *state;
    clheap_cache_config config = clheap_cache_config_default();
    config.max_cached_bytes = 8 * KiB;
    remake_cache(t, &config);
    cl_mem b[4];
    for (int i = 0; i < 4; i++)
        b[i] = alloc_ok(t->cache, 4 * KiB, "cap");
    for (int i = 0; i < 4; i++)
        free_ok(t->cache, b[i]);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.cached_bytes, 8 * KiB);
    assert_int_equal(s.evictions, 2);
    assert_int_equal(t->driver.released_count, 2);
    assert_ptr_equal(t->driver.released[0], b[0]);
    assert_ptr_equal(t->driver.released[1], b[1]);
    /* A buffer bigger than the whole cap is released at once; it flushes nothing. */
    cl_mem huge = alloc_ok(t->cache, 16 * KiB, "cap");
    free_ok(t->cache, huge);
    s = stats_of(t->cache);
    assert_int_equal(s.cached_bytes, 8 * KiB);
    assert_int_equal(s.evictions, 3);
    assert_int_equal(t->driver.released_count, 3);
    assert_ptr_equal(t->driver.released[2], huge);
    assert_ptr_equal(alloc_ok(t->cache, 4 * KiB, "cap"), b[2]);
}

static void trim_and_release_all(void **state)
{
    cache_test *t = *state;
    cl_mem live = alloc_ok(t->cache, 4 * KiB, "live");
    cl_mem b[3];
    for (int i = 0; i < 3; i++)
        b[i] = alloc_ok(t->cache, 4 * KiB, "trim");
    for (int i = 0; i < 3; i++)
        free_ok(t->cache, b[i]);
    assert_int_equal(clheap_cache_trim(t->cache, 5 * KiB), CLHEAP_SUCCESS);
    assert_cache_ok(t->cache);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.cached_bytes, 4 * KiB);
    assert_ptr_equal(t->driver.released[0], b[0]);
    assert_ptr_equal(t->driver.released[1], b[1]);
    assert_int_equal(clheap_cache_release_all(t->cache), CLHEAP_SUCCESS);
    assert_cache_ok(t->cache);
    s = stats_of(t->cache);
    assert_int_equal(s.cached_blocks, 0);
    assert_int_equal(s.live_blocks, 1);
    assert_int_equal(t->driver.outstanding, 1);
    free_ok(t->cache, live);
}

static void oom_recovers_by_releasing_largest_first(void **state)
{
    cache_test *t = *state;
    t->driver.device_budget = 64 * KiB;
    cl_mem a = alloc_ok(t->cache, 8 * KiB, "a");
    cl_mem b = alloc_ok(t->cache, 16 * KiB, "a");
    cl_mem c = alloc_ok(t->cache, 24 * KiB, "a");
    free_ok(t->cache, a);
    free_ok(t->cache, b);
    free_ok(t->cache, c);
    /* 48 KiB cached; 32 KiB more do not fit in 64 KiB until the 24 KiB buffer goes. */
    cl_mem d = alloc_ok(t->cache, 32 * KiB, "other-size");
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.oom_recoveries, 1);
    assert_int_equal(t->driver.failed_probes, 1);
    /* The failed buffer and the largest cached one went back to the driver. */
    assert_int_equal(t->driver.releases, 2);
    assert_ptr_equal(t->driver.released[1], c);
    assert_int_equal(s.cached_bytes, 24 * KiB);
    assert_int_equal(t->driver.outstanding, 3);
    free_ok(t->cache, d);
}

static void oom_reported_with_live_and_cached_bytes(void **state)
{
    cache_test *t = *state;
    t->driver.device_budget = 64 * KiB;
    cl_mem live[4];
    for (int i = 0; i < 4; i++)
        live[i] = alloc_ok(t->cache, 16 * KiB, "full");
    cl_mem out = (cl_mem)1;
    assert_int_equal(clheap_cache_alloc(t->cache, 16 * KiB, "more", &out),
                     CLHEAP_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_null(out);
    assert_cache_ok(t->cache);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.oom_failures, 1);
    assert_int_equal(s.last_oom_request, 16 * KiB);
    assert_int_equal(s.last_oom_live_bytes, 64 * KiB);
    assert_int_equal(s.last_oom_cached_bytes, 0);
    /* The failed buffer was released: only the four live ones exist. */
    assert_int_equal(t->driver.outstanding, 4);
    for (int i = 0; i < 4; i++)
        free_ok(t->cache, live[i]);
    /* Memory freed into the cache serves the next request. */
    assert_ptr_equal(alloc_ok(t->cache, 16 * KiB, "more"), live[0]);
    free_ok(t->cache, live[0]);
}

static void total_limit(void **state)
{
    cache_test *t = *state;
    clheap_cache_config config = clheap_cache_config_default();
    config.max_total_bytes = 32 * KiB;
    remake_cache(t, &config);
    cl_mem live = alloc_ok(t->cache, 16 * KiB, "l");
    cl_mem cached = alloc_ok(t->cache, 8 * KiB, "c");
    free_ok(t->cache, cached);
    /* 16 + 8 + 16 > 32: the cached buffer is released to make room. */
    cl_mem fits = alloc_ok(t->cache, 16 * KiB, "f");
    assert_int_equal(stats_of(t->cache).cached_blocks, 0);
    cl_mem out = NULL;
    assert_int_equal(clheap_cache_alloc(t->cache, 1, "over", &out), CLHEAP_ERROR_LIMIT_REACHED);
    assert_null(out);
    assert_cache_ok(t->cache);
    assert_int_equal(stats_of(t->cache).oom_failures, 1);
    free_ok(t->cache, live);
    free_ok(t->cache, fits);
}

static void driver_errors_pass_through(void **state)
{
    cache_test *t = *state;
    t->driver.forced_create_error = CL_INVALID_BUFFER_SIZE;
    cl_mem out = NULL;
    assert_int_equal(clheap_cache_alloc(t->cache, 4 * KiB, "x", &out), CL_INVALID_BUFFER_SIZE);
    assert_null(out);
    assert_cache_ok(t->cache);
    t->driver.forced_create_error = CL_SUCCESS;
}

static void bad_input_is_refused_and_loses_nothing(void **state)
{
    cache_test *t = *state;
    cl_mem keep = alloc_ok(t->cache, 4 * KiB, "keep");
    cl_mem out = NULL;
    assert_int_equal(clheap_cache_alloc(t->cache, 0, "x", &out), CLHEAP_ERROR_ZERO_SIZE);
    assert_int_equal(clheap_cache_alloc(t->cache, 16, NULL, &out), CLHEAP_ERROR_NULL_TAG);
    assert_int_equal(clheap_cache_alloc(t->cache, SIZE_MAX, "x", &out),
                     CLHEAP_ERROR_SIZE_TOO_LARGE);
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(t->cl.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    assert_int_equal(clheap_cache_alloc(t->cache, (size_t)max_alloc + 1, "x", &out),
                     CLHEAP_ERROR_SIZE_TOO_LARGE);
    assert_int_equal(clheap_cache_alloc(t->cache, 16, "x", NULL), CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_cache_alloc(NULL, 16, "x", &out), CLHEAP_ERROR_INVALID_ARGUMENT);

    cl_int err;
    cl_mem foreign = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_cache_free(t->cache, foreign), CLHEAP_ERROR_FOREIGN_BUFFER);
    assert_int_equal(clheap_cache_free(t->cache, NULL), CLHEAP_ERROR_FOREIGN_BUFFER);
    clReleaseMemObject(foreign);

    cl_mem once = alloc_ok(t->cache, 4 * KiB, "once");
    free_ok(t->cache, once);
    assert_int_equal(clheap_cache_free(t->cache, once), CLHEAP_ERROR_DOUBLE_FREE);
    assert_cache_ok(t->cache);

    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(s.live_blocks, 1);
    assert_int_equal(s.cached_blocks, 1);
    assert_int_equal(t->driver.outstanding, 2);
    free_ok(t->cache, keep);
}

static void destroy_reports_live_blocks_and_releases_everything(void **state)
{
    cache_test *t = *state;
    cl_mem live = alloc_ok(t->cache, 4 * KiB, "live");
    cl_mem cached = alloc_ok(t->cache, 4 * KiB, "cached");
    free_ok(t->cache, cached);
    clheap_cache *dead = t->cache;
    assert_int_equal(clheap_cache_destroy(dead), CLHEAP_ERROR_BLOCKS_STILL_LIVE);
    t->cache = NULL;
    assert_int_equal(t->driver.outstanding, 0);
    /* Every call on the destroyed handle is refused without touching it. */
    assert_int_equal(clheap_cache_free(dead, live), CLHEAP_ERROR_INVALID_HANDLE);
    cl_mem out = NULL;
    assert_int_equal(clheap_cache_alloc(dead, 16, "x", &out), CLHEAP_ERROR_INVALID_HANDLE);
    size_t size = 0, needed = 0;
    char text[256];
    clheap_cache_stats stats;
    assert_int_equal(clheap_cache_buffer_size(dead, live, &size), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_trim(dead, 0), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_release_all(dead), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_get_stats(dead, &stats), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_check(dead, text, sizeof text), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_stats_json(dead, text, sizeof text, &needed), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_destroy(dead), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_destroy(NULL), CLHEAP_SUCCESS);
}

static void status_strings_are_distinct(void **state)
{
    (void)state;
    static const clheap_status codes[] = {
#define CLHEAP_CODE(name, value, text) name,
        CLHEAP_STATUS_LIST(CLHEAP_CODE)
#undef CLHEAP_CODE
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        assert_string_not_equal(clheap_status_string(codes[i]), "unknown status");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(clheap_status_string(codes[i]),
                                    clheap_status_string(codes[j]));
    }
    assert_non_null(strstr(clheap_status_string(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES"));
    assert_string_equal(clheap_status_string(123456), "unknown status");
}

static void stats_json_is_complete(void **state)
{
    cache_test *t = *state;
    cl_mem a = alloc_ok(t->cache, 4 * KiB, "json");
    size_t needed = 0;
    char tiny[8];
    assert_int_equal(clheap_cache_stats_json(t->cache, tiny, sizeof tiny, &needed),
                     CLHEAP_ERROR_BUFFER_TOO_SMALL);
    assert_true(needed > sizeof tiny);
    assert_int_equal(tiny[sizeof tiny - 1], '\0');
    char *json = malloc(needed);
    assert_int_equal(clheap_cache_stats_json(t->cache, json, needed, NULL), CLHEAP_SUCCESS);
    assert_int_equal(strlen(json) + 1, needed);
    /* the shape the heap's stats share: kind, version, used and free bytes, errors last */
    assert_ptr_equal(strstr(json, "{\"kind\": \"cache\", \"version\": 2, \"used_bytes\": 4096, \"free_bytes\": 0"), json);
    assert_non_null(strstr(json, "\"driver_allocs\": 1"));
    assert_non_null(strstr(json, "\"errors\": {\"out_of_memory\": 0}}"));
    /* ctest's cache_json_valid feeds this file to a real JSON parser. */
    const char *path = getenv("CLHEAP_JSON_OUT");
    if (path) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(json, f);
        fclose(f);
    }
    free(json);
    free_ok(t->cache, a);
}

/* ---- threads ---------------------------------------------------------------------- */

enum { STRESS_THREADS = 8, STRESS_OPS = 100000, STRESS_SLOTS = 16 };

typedef struct stress_thread {
    clheap_cache *cache;
    unsigned seed;
    uint64_t allocs, frees, failures;
} stress_thread;

static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static void *stress_body(void *arg)
{
    stress_thread *st = arg;
    static const char *tags[] = {"s0", "s1", "s2", "s3", "s4"};
    cl_mem held[STRESS_SLOTS] = {0};
    for (int op = 0; op < STRESS_OPS; op++) {
        unsigned r = next_random(&st->seed);
        unsigned slot = r % STRESS_SLOTS;
        if (held[slot]) {
            if (clheap_cache_free(st->cache, held[slot]) != CLHEAP_SUCCESS)
                st->failures++;
            held[slot] = NULL;
            st->frees++;
        } else {
            size_t size = (size_t)256 << ((r >> 4) % 6); /* 256 B .. 8 KiB */
            if (clheap_cache_alloc(st->cache, size, tags[(r >> 8) % 5], &held[slot]) !=
                CLHEAP_SUCCESS)
                st->failures++;
            else
                st->allocs++;
        }
    }
    for (int slot = 0; slot < STRESS_SLOTS; slot++) {
        if (held[slot]) {
            st->failures += clheap_cache_free(st->cache, held[slot]) != CLHEAP_SUCCESS;
            st->frees++;
        }
    }
    return NULL;
}

/* A probe queue the caller gives is retained (the caller may release theirs) and
 * released at destroy. */
static void probe_queue_is_retained(void **state)
{
    cache_test *t = *state;
    cl_int err;
    cl_command_queue mine = clCreateCommandQueue(t->cl.context, t->cl.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    clheap_cache_config config = clheap_cache_config_default();
    config.probe_queue = mine;
    remake_cache(t, &config);
    cl_uint refs = 0;
    clGetCommandQueueInfo(mine, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    assert_int_equal(refs, 2);
    free_ok(t->cache, alloc_ok(t->cache, 4 * KiB, "probed"));
    assert_int_equal(clheap_cache_destroy(t->cache), CLHEAP_SUCCESS);
    t->cache = NULL;
    clGetCommandQueueInfo(mine, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    assert_int_equal(refs, 1);
    clReleaseCommandQueue(mine);
}

static void threads_balance_exactly(void **state)
{
    cache_test *t = *state;
    clheap_cache_config config = clheap_cache_config_default();
    config.max_cached_bytes = 256 * KiB; /* small enough that evictions happen */
    remake_cache(t, &config);
    pthread_t threads[STRESS_THREADS];
    stress_thread st[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++) {
        st[i] = (stress_thread){t->cache, 1234u + 77u * (unsigned)i, 0, 0, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, stress_body, &st[i]), 0);
    }
    uint64_t allocs = 0, frees = 0;
    for (int i = 0; i < STRESS_THREADS; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(st[i].failures, 0);
        allocs += st[i].allocs;
        frees += st[i].frees;
    }
    assert_cache_ok(t->cache);
    clheap_cache_stats s = stats_of(t->cache);
    assert_int_equal(allocs, frees);
    assert_int_equal(s.hits + s.misses, allocs);
    assert_int_equal(s.misses, s.driver_allocs);
    assert_int_equal(s.live_blocks, 0);
    assert_int_equal(s.live_bytes, 0);
    assert_int_equal(s.driver_allocs - s.driver_releases, s.cached_blocks);
    assert_int_equal(t->driver.outstanding, s.cached_blocks);
    assert_true(s.cached_bytes <= config.max_cached_bytes);
    assert_true(s.hits > s.misses); /* the point of a cache */
    print_message("stress: %llu allocs, %llu hits, %llu misses, %llu evictions\n",
                  (unsigned long long)allocs, (unsigned long long)s.hits,
                  (unsigned long long)s.misses, (unsigned long long)s.evictions);
    /* Whether the threads' frees overflowed the cap depends on how they interleaved (run
     * one after another, each one's working set fits): the cap is tested after them, by
     * frees that must overflow it, with the counts still balanced. */
    enum { BIG = 4 };
    cl_mem big[BIG];
    for (int i = 0; i < BIG; i++)
        big[i] = alloc_ok(t->cache, 128 * KiB, "big"); /* no cached buffer is this large */
    for (int i = 0; i < BIG; i++)
        free_ok(t->cache, big[i]);
    clheap_cache_stats after = stats_of(t->cache);
    assert_true(after.evictions > s.evictions);
    assert_true(after.cached_bytes <= config.max_cached_bytes);
    assert_int_equal(after.driver_allocs - after.driver_releases, after.cached_blocks);
    assert_int_equal(t->driver.outstanding, after.cached_blocks);
    assert_cache_ok(t->cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reuse_by_tag, setup, teardown),
        cmocka_unit_test_setup_teardown(tag_compared_by_content, setup, teardown),
        cmocka_unit_test_setup_teardown(two_n_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(same_tag_preferred_then_best_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(granularity_rounds_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(cap_evicts_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(trim_and_release_all, setup, teardown),
        cmocka_unit_test_setup_teardown(oom_recovers_by_releasing_largest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(oom_reported_with_live_and_cached_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(total_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(driver_errors_pass_through, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input_is_refused_and_loses_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(destroy_reports_live_blocks_and_releases_everything, setup,
                                        teardown),
        cmocka_unit_test(status_strings_are_distinct),
        cmocka_unit_test_setup_teardown(stats_json_is_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(probe_queue_is_retained, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_balance_exactly, setup, teardown),
    };
    return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
