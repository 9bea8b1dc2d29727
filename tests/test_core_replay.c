/* Deterministic replays of TierAlloc races on the C11 build of the core: each test runs
 * the steps of two or more work-items in a fixed order, either by calling the parts of
 * malloc and free that a work-item runs between its shared accesses, or as coroutine
 * lanes (tests/coroutine_lanes.h) on a script that stops a lane before it touches a
 * given word; then it checks what a later user would meet: no unit handed to two owners,
 * every word of every live allocation still its owner's stamp, the heap walk sound, and
 * the bad free counted. One thread, so every step is exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "coroutine_lanes.h"
#include "../cl/clheap_tier.h"

enum { MAX_LIVE = 8192 };

typedef struct live {
    uint32_t unit, bytes, stamp;
} live;

typedef struct replay {
    core_heap heap;
    live objects[MAX_LIVE];
    uint32_t count;
} replay;

static void make_heap(replay *r, uint64_t bytes, int typed)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_TIER_ALLOC;
    config.size_bytes = bytes;
    config.typed_classes = (uint32_t)typed;
    r->count = 0;
    assert_int_equal(core_heap_create(&config, 4, &r->heap), CLHEAP_SUCCESS);
}

static uint32_t errors(replay *r, int which)
{
    return r->heap.words[which];
}

/* Writes the stamp into every 32-bit word of the allocation. */
static void stamp(replay *r, uint32_t unit, uint32_t bytes)
{
    assert_true(r->count < MAX_LIVE);
    live *l = &r->objects[r->count];
    *l = (live){unit, bytes, 0x5EED0000u + r->count};
    r->count++;
    uint32_t *p = core_heap_pointer(&r->heap, unit);
    for (uint32_t w = 0; w < bytes / 4u; w++)
        p[w] = l->stamp;
}

/* Every live allocation keeps its stamp, no two overlap, and the heap walks sound. */
/* One allocation of the whole pool: nothing is left free. */
static void fill_pool(replay *r)
{
    const uint32_t *h = r->heap.words;
    size_t bytes = (size_t)h[CLHEAP_HDR_FRAME_COUNT] * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    assert_int_not_equal(core_heap_malloc(&r->heap, bytes, 0), 0);
}

static void expect_sound(replay *r)
{
    for (uint32_t i = 0; i < r->count; i++) {
        const live *a = &r->objects[i];
        const uint32_t *p = core_heap_pointer(&r->heap, a->unit);
        for (uint32_t w = 0; w < a->bytes / 4u; w++)
            if (p[w] != a->stamp)
                fail_msg("allocation %u (unit %u, %u B) overwritten at word %u", i, a->unit, a->bytes, w);
        for (uint32_t j = 0; j < i; j++) {
            const live *b = &r->objects[j];
            if (a->unit < b->unit + b->bytes / CLHEAP_UNIT && b->unit < a->unit + a->bytes / CLHEAP_UNIT)
                fail_msg("allocations %u and %u overlap (units %u and %u)", j, i, b->unit, a->unit);
        }
    }
    clheap_heap_stats stats;
    char what[256] = "";
    if (core_heap_walk(&r->heap, &stats, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check: %s", what);
}

static uint32_t frame_of(replay *r, uint32_t unit)
{
    uint32_t *h = r->heap.words;
    return (unit - h[CLHEAP_HDR_POOL_START]) / h[CLHEAP_HDR_FRAME_UNITS];
}

/* A free's first step (clheap_tier_free up to its AND): where the pointer lies. */
typedef struct pending_free {
    uint32_t unit, frame, cls, slot, incarnation;
} pending_free;

static pending_free free_begin(replay *r, uint32_t unit)
{
    pending_free f = {.unit = unit};
    clheap_core_begin();
    uint32_t *h = r->heap.words;
    assert_int_equal(clheap_frame_locate(h, core_heap_pointer(&r->heap, unit), &f.frame, &f.cls, &f.incarnation),
                     unit);
    assert_true(f.cls >= 1u && f.cls <= h[CLHEAP_HDR_CLASS_COUNT]);
    assert_true(clheap_block_slot_in(h, unit, f.frame, f.cls, &f.slot));
    return f;
}

/* Its second step: the AND and what follows, as a free in a large launch (no deferral,
 * no keeping). */
static void free_end(replay *r, const pending_free *f)
{
    clheap_core_begin();
    clheap_host_launch_items = CORE_ITEMS_SETTLE;
    clheap_block_free_slot(r->heap.words, f->frame, f->cls - 1u, f->slot, f->incarnation);
}

/* One 64 B object in a block of its own: the run it came from closed (its other slots
 * freed), so freeing the object empties the block. */
static uint32_t lone_object(replay *r, uint32_t bytes)
{
    uint32_t unit = core_heap_malloc(&r->heap, bytes, 0);
    assert_int_not_equal(unit, 0);
    core_heap_trim(&r->heap);
    return unit;
}

/* Takes slots of class c through the hint (malloc) and through the active blocks' OR
 * (clheap_block_reserve_active, what a request whose hint is busy does), stamping each. */
static void take_both_ways(replay *r, uint32_t bytes, uint32_t rounds)
{
    uint32_t *h = r->heap.words, c = clheap_class_for(h, bytes);
    for (uint32_t i = 0; i < rounds; i++) {
        uint32_t unit = core_heap_malloc(&r->heap, bytes, 0);
        assert_int_not_equal(unit, 0);
        stamp(r, unit, bytes);
        clheap_u64 got = 0;
        clheap_core_begin();
        uint32_t frame = clheap_block_reserve_active(h, c, 1u, 0x1234u + i, &got);
        if (frame != CLHEAP_BM_FAIL)
            stamp(r, clheap_slot_unit(h, frame, c, clheap_ctz64(got)), bytes);
    }
}

/* Two frees of one 64 B object alone in its block: the second reads the block, then the
 * first empties it and it is reclaimed. Returns the second, not yet at its AND. */
static pending_free second_free_after_reclaim(replay *r)
{
    make_heap(r, 4u << 20, 0);
    uint32_t unit = lone_object(r, 64);
    pending_free second = free_begin(r, unit);
    core_heap_free_unit(&r->heap, unit, 1);
    return second;
}

/* Issue 45.1 as reported: the second free reads the block before the first empties it;
 * the block is reclaimed; a run then opens on its frames. Before, the second's AND
 * cleared slot s of the free frame, the run never rewrote the word, and the hint and the
 * OR path both handed s out. Now the second sees the block gone and clears nothing. */
static void double_free_lands_on_free_frame(void **state)
{
    (void)state;
    static replay r;
    pending_free second = second_free_after_reclaim(&r);
    assert_int_equal(*clheap_block_header(r.heap.words, second.frame), 0u); /* class 0: a free frame */
    free_end(&r, &second); /* the second: it sees the block gone */
    take_both_ways(&r, 64, 200);
    assert_int_equal(*clheap_block_header(r.heap.words, second.frame),
                     clheap_class_for(r.heap.words, 64) + 1u); /* a block of the class reopened there */
    expect_sound(&r);
    assert_int_equal(errors(&r, CLHEAP_HDR_ERR_DOUBLE_FREE), 1);
    core_heap_destroy(&r.heap);
}

/* The same when the first free's reclaim comes in the window the check cannot see: the
 * second free is stopped after its check, just before its AND (scripted lanes); its AND
 * then clears a bit of the free frame, and the next opening there repairs it
 * (cl/clheap_blocks.h, I3; such a repair is not counted). */
typedef struct window_race {
    replay *r;
    uint32_t unit;
} window_race;

static void window_race_lane(uint32_t lane, void *arg)
{
    window_race *x = arg;
    core_heap_free_unit(&x->r->heap, x->unit, 1); /* lane 0: the second free, lane 1: the first */
    (void)lane;
}

static void double_free_in_the_window_is_repaired(void **state)
{
    (void)state;
    static replay r;
    make_heap(&r, 4u << 20, 0);
    window_race x = {&r, lone_object(&r, 64)};
    uint32_t frame = frame_of(&r, x.unit);
    const coroutine_lane_turn turns[] = {
        {0, clheap_block_alloc_bits(r.heap.words, frame), 1}, /* up to its AND */
        {1, NULL, 0},
        {0, NULL, 0},
    };
    coroutine_lanes_script(turns, 3);
    assert_int_equal(coroutine_lanes_run(2, window_race_lane, &x, 0), 0);
    coroutine_lanes_script(NULL, 0);
    assert_int_equal(*clheap_block_header(r.heap.words, frame), 0u); /* reclaimed */
    take_both_ways(&r, 64, 200);
    expect_sound(&r);
    core_heap_destroy(&r.heap);
}

/* The stale free after the frame's next run opened: it would free a slot the run holds
 * for its hint. The incarnation read again before the AND tells it. */
static void double_free_lands_on_new_run(void **state)
{
    (void)state;
    static replay r;
    pending_free second = second_free_after_reclaim(&r);
    uint32_t reopened = core_heap_malloc(&r.heap, 64, 0); /* opens the class's next run */
    assert_int_not_equal(reopened, 0);
    stamp(&r, reopened, 64);
    assert_int_equal(frame_of(&r, reopened), second.frame); /* on the same frames */
    free_end(&r, &second);
    take_both_ways(&r, 64, 200);
    expect_sound(&r);
    assert_int_equal(errors(&r, CLHEAP_HDR_ERR_DOUBLE_FREE), 1);
    core_heap_destroy(&r.heap);
}

/* A stale AND that lands after a block of another class opened on the frames (a single
 * block's opening, a plain store of the word after its fence): also told and undone. */
static void double_free_lands_on_other_class(void **state)
{
    (void)state;
    static replay r;
    pending_free second = second_free_after_reclaim(&r);
    uint32_t *h = r.heap.words, c = clheap_class_for(h, 32);
    clheap_u64 got = 0;
    clheap_core_begin();
    uint32_t frame = clheap_block_new(h, c, 60u, 7u, &got, NULL); /* 60 of the 64 slots: s among them */
    assert_int_equal(frame, second.frame);
    assert_true(second.slot < 60u);
    for (uint32_t s = 0; s < 60u; s++)
        stamp(&r, clheap_slot_unit(h, frame, c, s), 32);
    free_end(&r, &second);
    take_both_ways(&r, 32, 64);
    expect_sound(&r);
    assert_int_equal(errors(&r, CLHEAP_HDR_ERR_DOUBLE_FREE), 1);
    core_heap_destroy(&r.heap);
}

/* Issue 45.2: two frees of one large allocation A (200 frames at f). The second is
 * stopped before its CAS; the first frees A, then D (100 frames) lands at f + 100 and B
 * (100 frames) at f. The second's CAS finds B and frees it (no heap can tell it from B's
 * owner's free), but only B: before, it released the 200 frames of the length it had read
 * before its CAS, D's too. */
typedef struct large_race {
    replay *r;
    uint32_t a, b, d;
} large_race;

static void large_race_lane(uint32_t lane, void *arg)
{
    large_race *x = arg;
    if (lane == 1u) {
        core_heap_free_unit(&x->r->heap, x->a, 1);
        x->d = core_heap_malloc(&x->r->heap, 100u << 10, 0);
        x->b = core_heap_malloc(&x->r->heap, 100u << 10, 0);
    } else {
        core_heap_free_unit(&x->r->heap, x->a, 1);
    }
}

static void large_double_free_frees_only_its_successor(void **state)
{
    (void)state;
    static replay r;
    make_heap(&r, 64u << 20, 0);
    large_race x = {.r = &r, .a = core_heap_malloc(&r.heap, 200u << 10, 0)};
    assert_int_not_equal(x.a, 0);
    uint32_t f = frame_of(&r, x.a);
    const coroutine_lane_turn turns[] = {
        {0, clheap_block_header(r.heap.words, f) + CLHEAP_BLOCK_WORD_CLASS, 2}, /* locate's load, then the CAS */
        {1, NULL, 0},
        {0, NULL, 0},
    };
    coroutine_lanes_script(turns, 3);
    assert_int_equal(coroutine_lanes_run(2, large_race_lane, &x, 0), 0);
    coroutine_lanes_script(NULL, 0);
    assert_int_equal(frame_of(&r, x.b), f); /* the replay's placement */
    assert_int_equal(frame_of(&r, x.d), f + 100u);
    stamp(&r, x.d, 100u << 10); /* B was freed by the stale free; D must not have been */
    uint32_t e = core_heap_malloc(&r.heap, 200u << 10, 0);
    assert_int_not_equal(e, 0);
    stamp(&r, e, 200u << 10);
    expect_sound(&r);
    core_heap_destroy(&r.heap);
}

/* Issue 45.5: what a malloc that returns NULL costs, in shared accesses, on a full pool,
 * must not grow with the pool: the last resort scanned every container of the unsettled
 * bitmap (and a large request every segment, several times) per failing request, so a
 * launch that asked for more than the pool took up to 90x the time per request. */
typedef struct null_costs {
    core_heap *heap;
    uint64_t accesses[3];
    uint32_t units[3];
} null_costs;

static void null_costs_lane(uint32_t lane, void *arg)
{
    (void)lane;
    null_costs *x = arg;
    static const size_t sizes[] = {16u << 10, 1u << 20, 64};
    for (int i = 0; i < 3; i++) {
        uint64_t before = coroutine_lanes_own_steps();
        x->units[i] = core_heap_malloc(x->heap, sizes[i], 0);
        x->accesses[i] = coroutine_lanes_own_steps() - before;
    }
}

static void null_costs_in(uint64_t pool, null_costs *x)
{
    static replay r;
    make_heap(&r, pool, 0);
    uint32_t *h = r.heap.words;
    fill_pool(&r);
    x->heap = &r.heap;
    assert_int_equal(coroutine_lanes_run(1, null_costs_lane, x, 1), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(x->units[i], 0);
    assert_int_equal(h[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 3);
    core_heap_destroy(&r.heap);
}

static void null_costs_no_more_in_a_larger_pool(void **state)
{
    (void)state;
    null_costs small, large;
    null_costs_in(64u << 20, &small);
    null_costs_in(1u << 30, &large);
    for (int i = 0; i < 3; i++) {
        print_message("NULL %d: %llu shared accesses at 64 MiB, %llu at 1 GiB\n", i,
                      (unsigned long long)small.accesses[i], (unsigned long long)large.accesses[i]);
        assert_true(large.accesses[i] <= 2u * small.accesses[i]); /* 16x the pool */
    }
}

/* The last way of a large request, the first-stretch scan, on a full pool while U still
 * counts frames free (the takes of a filling launch add to U after their claims): at
 * most one shared access per 64 segments. Read segment by segment it was one load per
 * segment (16,384 at 1 GiB), and on the GPU one such request set a 64 KiB over-launch's
 * time. */
typedef struct stretch_cost {
    core_heap *heap;
    uint32_t found;
    uint64_t accesses;
} stretch_cost;

static void stretch_cost_lane(uint32_t lane, void *arg)
{
    (void)lane;
    stretch_cost *x = arg;
    uint64_t before = coroutine_lanes_own_steps();
    x->found = clheap_pages_find_stretch(x->heap->words, 64);
    x->accesses = coroutine_lanes_own_steps() - before;
}

static void stretch_cost_in(uint64_t pool)
{
    static replay r;
    make_heap(&r, pool, 0);
    uint32_t *h = r.heap.words;
    clheap_core_begin();
    assert_true(clheap_pages_claim_frames(h, 0, h[CLHEAP_HDR_FRAME_COUNT]));
    stretch_cost x = {.heap = &r.heap};
    assert_int_equal(coroutine_lanes_run(1, stretch_cost_lane, &x, 1), 0);
    assert_int_equal(x.found, CLHEAP_BM_FAIL);
    uint32_t segments = h[clheap_pages_segments_desc(h) + CLHEAP_BM_BITS];
    print_message("stretch scan of a full pool of %u segments: %llu shared accesses\n", segments,
                  (unsigned long long)x.accesses);
    assert_true(x.accesses * 64u <= segments);
    core_heap_destroy(&r.heap);
}

static void full_pool_stretch_scan_reads_upper_levels(void **state)
{
    (void)state;
    stretch_cost_in(64u << 20);
    stretch_cost_in(1u << 30);
}

/* A warp's small requests that the leader's fallback finds nothing for (a full pool, no
 * run, no mark, no active block) end in NULL, counted, without each lane trying again
 * alone: the warp's NULLs must cost at most twice one request's. Each lane's own try
 * made a 2^20 x 1 KiB launch on 256 MiB take 3.5x the time of one that fits. */
typedef struct warp_null {
    core_heap *heap;
    uint32_t units[32];
    uint64_t warp, lone;
} warp_null;

static void warp_null_lane(uint32_t lane, void *arg)
{
    (void)lane;
    warp_null *x = arg;
    uint64_t before = coroutine_lanes_own_steps();
    core_heap_malloc_many(x->heap, 1024, 32, x->units, 0);
    x->warp = coroutine_lanes_own_steps() - before;
    before = coroutine_lanes_own_steps();
    assert_int_equal(core_heap_malloc(x->heap, 1024, 0), 0);
    x->lone = coroutine_lanes_own_steps() - before;
}

static void warp_nulls_cost_one_fallback(void **state)
{
    (void)state;
    static replay r;
    make_heap(&r, 64u << 20, 0);
    fill_pool(&r);
    warp_null x = {.heap = &r.heap};
    assert_int_equal(coroutine_lanes_run(1, warp_null_lane, &x, 1), 0);
    for (int i = 0; i < 32; i++)
        assert_int_equal(x.units[i], 0);
    assert_int_equal(errors(&r, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 33);
    print_message("32 NULLs of a warp: %llu shared accesses; one alone: %llu\n", (unsigned long long)x.warp,
                  (unsigned long long)x.lone);
    assert_true(x.warp <= 2u * x.lone);
    core_heap_destroy(&r.heap);
}

/* clheap_tier_nothing_for's mark flags: a full pool whose only free slot is in a block a
 * small launch's free left unsettled (marked, not active) must still give that slot,
 * since the last resort settles marked blocks. The request that finds no run, no active
 * block and no free frames must not answer NULL while a mark flag is set. */
static void marked_block_serves_a_full_pool(void **state)
{
    (void)state;
    static replay r;
    make_heap(&r, 4u << 20, 1); /* typed: slots of the class only, no pieces */
    uint32_t *h = r.heap.words, c = clheap_class_for(h, 1024);
    uint32_t units[64];
    for (uint32_t i = 0; i < h[CLHEAP_HDR_CLASS_CAPACITY + c]; i++)
        assert_int_not_equal(units[i] = core_heap_malloc(&r.heap, 1024, 0), 0);
    core_heap_trim(&r.heap); /* runs closed, every block settled */
    core_heap_free_unit(&r.heap, units[0], 0); /* group 0: a small launch's free, deferred */
    uint32_t marked = 0;
    for (uint32_t i = 0; i < CLHEAP_PAGES_USED_STRIPES; i++)
        marked |= h[CLHEAP_HDR_PAGES_USED + i * CLHEAP_PAGES_USED_STRIDE + CLHEAP_PAGES_MARKED_WORD];
    assert_int_not_equal(marked, 0);
    clheap_core_begin();
    for (uint32_t seed = 1; clheap_pages_take(h, 64, seed, 0) != CLHEAP_BM_FAIL; seed++)
        ; /* every free frame taken, as large allocations would, without a request's settling */
    for (uint32_t seed = 1; clheap_pages_take(h, 1, seed, 0) != CLHEAP_BM_FAIL; seed++)
        ;
    assert_false(clheap_pages_have(h, 1));
    assert_int_equal(h[CLHEAP_HDR_RUNS_OPEN], 0);
    assert_false(clheap_bm_any_set(h, CLHEAP_BM_ACTIVE(c)));
    uint32_t unit = core_heap_malloc(&r.heap, 1024, 0);
    assert_int_not_equal(unit, 0); /* the freed slot, found by settling the marked block */
    assert_int_equal(errors(&r, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 0);
    core_heap_destroy(&r.heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(double_free_lands_on_free_frame),
        cmocka_unit_test(double_free_in_the_window_is_repaired),
        cmocka_unit_test(double_free_lands_on_new_run),
        cmocka_unit_test(double_free_lands_on_other_class),
        cmocka_unit_test(large_double_free_frees_only_its_successor),
        cmocka_unit_test(null_costs_no_more_in_a_larger_pool),
        cmocka_unit_test(marked_block_serves_a_full_pool),
        cmocka_unit_test(full_pool_stretch_scan_reads_upper_levels),
        cmocka_unit_test(warp_nulls_cost_one_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
