/* A GPU launch's first burst on a fresh TierAlloc heap, on the scheduled C11 core: one
 * coroutine per work-item (tests/coroutine_lanes.h), every shared access interleaved at
 * random. Each work-item asks for one test_stress size (16 B - 2 KiB mostly, 2 - 64 KiB
 * one in 8, 64 KiB - 2 MiB one in 256), and, as clheap_tier_malloc_warp does on
 * NVIDIA, the lowest work-item of a warp (32) asking for a small class serves the
 * warp's requests of that class together (core_heap_malloc_many); work-groups of 256.
 * Where the burst asks for at most 75% of the pool, no request may get NULL (issue 8;
 * test_stress's rule).
 * Why: test_stress's first round on the H100 got NULLs for 1 - 2 MiB requests with 62%
 * of a fresh 256 MiB or 64 MiB pool asked for (runs 40 - 42; run 46: 107 and 20). The
 * cause needs thousands of lanes: a launch's warps of one (class, hint slot) each
 * opened a block while the first opened the hint's run, the page tier's looks from the
 * low end missed the rests of the segments the burst broke, and too many segments were
 * broken at once (cl/clheap_tier.h, clheap_tier_wants_pieces; cl/clheap_pages.h, the
 * look at the last break and CLHEAP_PAGES_BREAKERS). Before the first two
 * (509f3d2) the first six bursts here got 7 - 23 NULLs each; without the third the
 * first one gets 3.
 * Every allocation is stamped over its whole extent and verified; the heap check runs
 * after the burst and after everything is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core_heap.h"
#include "coroutine_lanes.h"
#include "../cl/clheap_blocks.h" /* clheap_class_for; clheap_hash32, as test_stress's kernel */

enum { WARP = 32, GROUP = 256 };

/* test_stress's sizes (its kernel's stress_bytes, uncapped: TierAlloc serves them). */
static uint32_t stress_bytes(uint32_t r)
{
    uint32_t kind = r & 255u, octave = (r >> 8) % 5u, base;
    if (kind == 0u)
        base = 65536u << octave;
    else if (kind < 32u)
        base = 2048u << octave;
    else
        base = 16u << ((r >> 8) % 7u);
    return (base + clheap_hash32(r) % base) & ~3u;
}

typedef struct burst {
    core_heap heap;
    uint32_t items, *bytes, *units, *classes;
} burst;

static uint32_t stamp_of(uint32_t item)
{
    return clheap_hash32(item * 0x9E3779B9u) | 1u;
}

/* Plain stores: a lane writes between its shared accesses, while no other lane runs. */
static void stamp(burst *b, uint32_t item)
{
    uint32_t *p = core_heap_pointer(&b->heap, b->units[item]);
    for (uint32_t w = 0; w < b->bytes[item] / 4u; w++)
        p[w] = stamp_of(item) + w;
}

/* One work-item; runs as a lane, so it records and never asserts (cmocka's failures
 * jump, and not across stacks). */
static void work_item(uint32_t item, void *arg)
{
    burst *b = arg;
    uint32_t group = item / GROUP, first = item / WARP * WARP, end = first + WARP < b->items ? first + WARP : b->items;
    uint32_t c = b->classes[item];
    if (c == CLHEAP_MAX_CLASSES) {
        b->units[item] = core_heap_malloc(&b->heap, b->bytes[item], group);
        if (b->units[item])
            stamp(b, item);
        return;
    }
    for (uint32_t j = first; j < item; j++)
        if (b->classes[j] == c)
            return; /* a lower lane serves this one */
    uint32_t peers[WARP], units[WARP], n = 0;
    for (uint32_t j = item; j < end; j++)
        if (b->classes[j] == c)
            peers[n++] = j;
    const uint32_t *h = b->heap.words;
    core_heap_malloc_many(&b->heap, h[CLHEAP_HDR_CLASS_BYTES + c], n, units, group);
    for (uint32_t k = 0; k < n; k++) {
        b->units[peers[k]] = units[k];
        if (units[k])
            stamp(b, peers[k]);
    }
}

static void check(core_heap *heap, clheap_heap_stats *stats, const char *when)
{
    char what[256] = "";
    if (core_heap_walk(heap, stats, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check %s: %s", when, what);
}

/* `items` work-items on a fresh heap of `mib` MiB (132 compute units, as the H100).
 * Returns whether the burst asked for at most 75% of the pool. */
static int run_burst(uint32_t items, uint64_t mib, uint32_t size_seed, uint64_t schedule)
{
    burst b = {.items = items};
    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = mib << 20;
    assert_int_equal(core_heap_create(&config, 132, &b.heap), CLHEAP_SUCCESS);
    b.bytes = calloc(items, sizeof *b.bytes);
    b.units = calloc(items, sizeof *b.units);
    b.classes = calloc(items, sizeof *b.classes);
    assert_non_null(b.bytes);
    assert_non_null(b.units);
    assert_non_null(b.classes);
    clheap_heap_stats stats;
    check(&b.heap, &stats, "fresh");
    uint64_t asked = 0;
    for (uint32_t i = 0; i < items; i++) {
        uint32_t r = clheap_hash32(i ^ clheap_hash32(size_seed));
        b.bytes[i] = stress_bytes(clheap_hash32(r + 0x5bd1e995u));
        b.classes[i] = clheap_class_for(b.heap.words, b.bytes[i]);
        asked += b.bytes[i];
    }

    assert_int_equal(coroutine_lanes_run(items, work_item, &b, schedule), 0);

    uint32_t nulls = 0, largest_null = 0, live = 0;
    for (uint32_t i = 0; i < items; i++) {
        if (!b.units[i]) {
            nulls++;
            largest_null = b.bytes[i] > largest_null ? b.bytes[i] : largest_null;
            continue;
        }
        live++;
        const uint32_t *p = core_heap_pointer(&b.heap, b.units[i]);
        for (uint32_t w = 0; w < b.bytes[i] / 4u; w++)
            if (p[w] != stamp_of(i) + w)
                fail_msg("item %u's %u B at unit %u: word %u overwritten", i, b.bytes[i], b.units[i], w);
    }
    check(&b.heap, &stats, "after the burst");
    if (nulls && asked * 4u <= stats.pool_bytes * 3u)
        fail_msg("%u of %u requests got NULL (the largest %u B) with %.1f%% of the pool asked for; largest free piece "
                 "%llu B",
                 nulls, items, largest_null, 100.0 * (double)asked / (double)stats.pool_bytes,
                 (unsigned long long)stats.largest_free_bytes);
    uint64_t objects = stats.large_count;
    for (uint32_t c = 0; c < stats.class_count; c++)
        objects += stats.class_objects[c];
    assert_int_equal(objects, live);

    for (uint32_t i = 0; i < items; i++)
        if (b.units[i])
            core_heap_free_unit(&b.heap, b.units[i], i / GROUP);
    core_heap_trim(&b.heap);
    check(&b.heap, &stats, "everything freed");
    assert_int_equal(stats.used_bytes, 0);
    free(b.bytes);
    free(b.units);
    free(b.classes);
    core_heap_destroy(&b.heap);
    return asked * 4u <= stats.pool_bytes * 3u;
}

/* 8,192 work-items on 64 MiB, test_stress's small H100 shape: ten size seeds, each
 * under its own schedule (the first asks for 71% of the pool; two of them for more
 * than 75%, where only correctness is checked). */
static void first_burst_on_a_small_heap_never_null(void **state)
{
    (void)state;
    int bound = 0;
    for (uint32_t seed = 1; seed <= 10; seed++)
        bound += run_burst(8192, 64, seed * 0x632BE5ABu, seed);
    assert_true(bound >= 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_burst_on_a_small_heap_never_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
