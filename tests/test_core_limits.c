/* TierAlloc's edges on the C11 build of the core, one thread: typed heaps keep every
 * object in a block of its class, where parallel_do and device_do find it (never a
 * piece: frames of its own); sizes at and past the pool get the right answer; the page
 * tier finds a free stretch wherever it lies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "core_sound.h"
#include "heap_walk.h"
#include "../cl/clheap_tier.h"

static void make_heap(core_heap *heap, uint64_t bytes, int typed)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_TIER_ALLOC;
    config.size_bytes = bytes;
    config.typed_classes = (uint32_t)typed;
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
}

/* Whether `unit` is a live slot of a block listed in class c's allocated-block bitmap:
 * what clheap_device_do_next and the parallel_do list kernel walk (cl/clheap.cl). */
static int visited_as(core_heap *heap, uint32_t c, uint32_t unit)
{
    uint32_t *h = heap->words;
    uint32_t frames = h[CLHEAP_HDR_FRAME_COUNT];
    for (uint32_t frame = 0; frame < frames; frame++) {
        if (!clheap_bm_get(h, CLHEAP_BM_ALLOCATED(c), frame) || *clheap_block_header(h, frame) != c + 1u)
            continue;
        uint64_t live = *clheap_block_alloc_bits(h, frame) & clheap_class_slots(h, c);
        for (; live; live &= live - 1u)
            if (clheap_slot_unit(h, frame, c, (uint32_t)__builtin_ctzll(live)) == unit)
                return 1;
    }
    return 0;
}

/* Issue 45.3: a 4 MiB typed heap gave every malloc(4096) and malloc(16384) as a piece, a
 * large allocation in no class's blocks. Each request alone, as PoCL's work-items make
 * them, and a warp's worth together. */
static void typed_heap_gives_no_pieces(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {4096, 16384, 2048, 1024};
    for (int warp = 0; warp < 2; warp++) {
        core_heap heap;
        make_heap(&heap, 4u << 20, 1);
        for (uint32_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            uint32_t c = clheap_class_for(heap.words, sizes[k]), units[8];
            for (uint32_t i = 0; i < 8; i++)
                units[i] = core_heap_malloc(&heap, sizes[k], i);
            if (warp)
                core_heap_malloc_many(&heap, sizes[k], 8, units, 3);
            for (uint32_t i = 0; i < 8; i++) {
                assert_int_not_equal(units[i], 0);
                if (!visited_as(&heap, c, units[i]))
                    fail_msg("%u B object %u (unit %u) is in no block of its class", sizes[k], i, units[i]);
            }
        }
        core_heap_sound(&heap, NULL);
        core_heap_destroy(&heap);
    }
}

/* The other side of the rule above: in an untyped small heap a lone request of a class
 * without runs whose block would hold few objects takes a piece, frames of its own,
 * through the large path it shares with large requests (clheap_tier_malloc_first), and
 * not a block. */
static void untyped_heap_gives_lone_requests_pieces(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {4096, 16384, 2048, 1024, 256};
    core_heap heap;
    make_heap(&heap, 4u << 20, 0);
    uint32_t units[sizeof sizes / sizeof *sizes], pieces = 0;
    for (uint32_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint32_t c = clheap_class_for(heap.words, sizes[k]);
        /* a class with run hints opens its run first; one without goes to the fallback */
        int piece = !heap.words[CLHEAP_HDR_CLASS_HINTS + c] && clheap_tier_wants_pieces(heap.words, c, 1u);
        units[k] = core_heap_malloc(&heap, sizes[k], k);
        assert_int_not_equal(units[k], 0);
        if (piece && visited_as(&heap, c, units[k]))
            fail_msg("%u B: a lone request that should take a piece got a block's slot", sizes[k]);
        pieces += (uint32_t)piece;
    }
    assert_true(pieces > 0); /* else this heap tests nothing */
    for (uint32_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        core_heap_free_unit(&heap, units[k], k);
    core_heap_sound(&heap, NULL);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 0);
    core_heap_destroy(&heap);
}

/* Pieces that leave more than half of their frames' bytes unused (one small object a
 * frame) are taken only while the page tier has handed out less than
 * CLHEAP_TIER_PIECES_USED_PERCENT of the pool (clheap_tier_wants_pieces); pieces that an
 * object fills at least half of, at any use. Why: in a small pool kept mostly in use
 * (the k-d tree at 20x its root's array, on a GPU) every small request that fell back
 * took a frame of its own, pieces never opened a block later requests could find, and
 * the build got NULLs with the pool far from full. The pool is filled with large
 * allocations to just past the share, then emptied again. */
static void wasteful_pieces_only_in_a_mostly_free_pool(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 4u << 20, 0);
    uint32_t *h = heap.words;
    uint32_t frame_bytes = h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    uint32_t sparse = clheap_class_for(h, 96), full = clheap_class_for(h, frame_bytes);
    assert_int_equal(h[CLHEAP_HDR_CLASS_BYTES + full], frame_bytes); /* a piece it fills */
    assert_true(clheap_tier_wants_pieces(h, sparse, 1u)); /* a fresh pool: both */
    assert_true(clheap_tier_wants_pieces(h, full, 1u));
    uint32_t held[64], n = 0;
    while (n < 64u && clheap_tier_used_below(h, CLHEAP_TIER_PIECES_USED_PERCENT)) {
        held[n] = core_heap_malloc(&heap, (size_t)CLHEAP_PAGES_SEGMENT * frame_bytes, 0);
        assert_int_not_equal(held[n++], 0);
    }
    assert_true(n < 64u);
    assert_false(clheap_tier_wants_pieces(h, sparse, 1u)); /* past the share: blocks */
    assert_true(clheap_tier_wants_pieces(h, full, 1u));
    /* Lone requests that all fall back, as while a GPU's hints are busy: every hint of the
     * class waits (the state a failed opening installs, far from its end). They share
     * blocks; as pieces, each took a frame. */
    for (uint32_t k = 0; k < h[CLHEAP_HDR_CLASS_HINTS + sparse]; k++)
        *clheap_tier_hint_at(h, sparse, k) = CLHEAP_TIER_RETRY_AT / 2u;
    enum { LONE = 64 };
    uint32_t lone[LONE], before = clheap_pages_used(h);
    for (uint32_t i = 0; i < LONE; i++) {
        lone[i] = core_heap_malloc(&heap, 96, i);
        assert_int_not_equal(lone[i], 0);
    }
    uint32_t blocks = (LONE + h[CLHEAP_HDR_CLASS_CAPACITY + sparse] - 1u) / h[CLHEAP_HDR_CLASS_CAPACITY + sparse];
    if (clheap_pages_used(h) - before > 2u * blocks * h[CLHEAP_HDR_CLASS_FRAMES + sparse])
        fail_msg("%u lone 96 B requests took %u frames past the share", LONE, clheap_pages_used(h) - before);
    for (uint32_t i = 0; i < LONE; i++)
        core_heap_free_unit(&heap, lone[i], i);
    while (n > 0)
        core_heap_free_unit(&heap, held[--n], 0);
    assert_true(clheap_tier_wants_pieces(h, sparse, 1u)); /* mostly free again */
    core_heap_sound(&heap, NULL);
    core_heap_destroy(&heap);
}

/* A lone request (PoCL's, rusticl's, any device's but NVIDIA's warps) whose class has no
 * free slot and no frames for a block, while another class's run holds whole blocks it has
 * not handed out: its last resort closes every class's runs and tries its class again
 * (clheap_tier_reserve_slow, `last`), so it gets memory where a larger class has none.
 * The pool is filled first (each size until NULL: a NULL closes every run), then one
 * large allocation's frames make room for a 16 B run and one frame more. */
static void lone_request_finds_what_another_class_run_holds(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 16u << 20, 0);
    uint32_t *h = heap.words;
    uint32_t small = clheap_class_for(h, 16), count = h[CLHEAP_HDR_CLASS_COUNT], c = count - 1u;
    while (c > small + 1u && clheap_tier_wants_pieces(h, c, 1u))
        c--; /* the largest class that opens blocks, not pieces */
    assert_true(h[CLHEAP_HDR_CLASS_HINTS + small] > 0); /* 16 B requests open runs here */
    assert_false(clheap_tier_wants_pieces(h, c, 1u));
    size_t frame_bytes = (size_t)h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    uint32_t run_frames = h[CLHEAP_HDR_CLASS_RUN + small] * h[CLHEAP_HDR_CLASS_FRAMES + small];
    uint32_t gap = run_frames + h[CLHEAP_HDR_CLASS_FRAMES + c] - 1u; /* the run fits, c's block not */
    assert_true((size_t)gap * frame_bytes > h[CLHEAP_HDR_CLASS_BYTES + count - 1u]); /* a large request */
    enum { MAX_HELD = 1 << 16 };
    static uint32_t held[MAX_HELD];
    uint32_t n = 0, gap_unit = 0;
    while (n < MAX_HELD && (held[n] = core_heap_malloc(&heap, (size_t)gap * frame_bytes, 0)) != 0u)
        gap_unit = held[n++]; /* the gap's size first, then every class from the top */
    for (uint32_t d = count; d-- > 0;)
        while (n < MAX_HELD && (held[n] = core_heap_malloc(&heap, h[CLHEAP_HDR_CLASS_BYTES + d], 0)) != 0u)
            n++;
    assert_true(n < MAX_HELD && gap_unit != 0u);
    for (uint32_t k = 0; k < n; k++) /* the gap */
        if (held[k] == gap_unit) {
            core_heap_free_unit(&heap, gap_unit, 0);
            held[k] = held[--n];
            break;
        }
    uint32_t run_slot = core_heap_malloc(&heap, 16, 0); /* opens a run in the gap */
    assert_int_not_equal(run_slot, 0);
    assert_int_not_equal(h[CLHEAP_HDR_RUNS_OPEN], 0);
    uint32_t unit = core_heap_malloc(&heap, h[CLHEAP_HDR_CLASS_BYTES + c], 1);
    if (!unit)
        fail_msg("%u B: NULL while a run of %u B slots held %u frames", h[CLHEAP_HDR_CLASS_BYTES + c],
                 h[CLHEAP_HDR_CLASS_BYTES + small], run_frames);
    core_heap_free_unit(&heap, unit, 1);
    core_heap_free_unit(&heap, run_slot, 0);
    while (n)
        core_heap_free_unit(&heap, held[--n], 0);
    core_heap_sound(&heap, NULL);
    core_heap_destroy(&heap);
}

/* Issue 45.7: sizes past the pool are BAD_SIZE, whatever rounding them up would give;
 * the whole pool fits an empty heap. */
static void sizes_past_the_pool(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20, 0);
    uint32_t *h = heap.words;
    size_t pool = (size_t)h[CLHEAP_HDR_FRAME_COUNT] * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    const size_t bad[] = {SIZE_MAX, SIZE_MAX - 1022u, pool + 1u, (size_t)1 << 36, ((size_t)1 << 32) * CLHEAP_UNIT};
    for (uint32_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint32_t before = h[CLHEAP_HDR_ERR_BAD_SIZE];
        assert_int_equal(core_heap_malloc(&heap, bad[i], 0), 0);
        assert_int_equal(h[CLHEAP_HDR_ERR_BAD_SIZE], before + 1u);
        assert_int_equal(clheap_tier_frames_for(h, bad[i]), 0);
    }
    assert_int_equal(h[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 0);
    uint32_t whole = core_heap_malloc(&heap, pool, 0);
    assert_int_not_equal(whole, 0);
    assert_int_equal(clheap_tier_frames_for(h, pool), h[CLHEAP_HDR_FRAME_COUNT]);
    assert_int_equal(core_heap_malloc(&heap, 16, 0), 0); /* nothing left: out of memory, not a bad size */
    assert_int_equal(h[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 1);
    core_heap_free_unit(&heap, whole, 1);
    assert_int_not_equal(core_heap_malloc(&heap, 16, 0), 0);
    core_heap_destroy(&heap);
}

/* Takes frames [first, first + n) by hand, counted in U as a take is (cl/clheap_pages.h, P5). */
static void claim(uint32_t *h, uint32_t first, uint32_t n)
{
    if (!n)
        return;
    clheap_core_begin();
    assert_true(clheap_pages_claim_frames(h, first, n));
    clheap_add32(clheap_pages_used_stripe(h, first), n);
}

static void release(uint32_t *h, uint32_t first, uint32_t n)
{
    if (n)
        clheap_pages_release(h, first, n);
}

/* Issue 45.4: with every frame taken but [first, first + m), a large request for m frames
 * gets exactly that stretch, at any offset in a segment and for m = 1 .. 200. Before, 40,
 * 64, 80, 100 and 126 frames at 64s + 24 got NULL in 64 MiB and 1 GiB pools. The large
 * path's take (clheap_tier_take_large: NVIDIA's, and aligned_alloc's), then, where m
 * frames are above the largest class, a lone malloc's (with CLHEAP_TIER_ONE_TAKE, the
 * class fallback's call, cl/clheap_tier.h). */
static void stretch_at(core_heap *heap, uint32_t first, uint32_t m)
{
    uint32_t *h = heap->words, frames = h[CLHEAP_HDR_FRAME_COUNT], frame_bytes = h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    int lone_too = (size_t)m * frame_bytes > h[CLHEAP_HDR_CLASS_BYTES + h[CLHEAP_HDR_CLASS_COUNT] - 1u];
    claim(h, 0, first);
    claim(h, first + m, frames - first - m);
    for (int lone = 0; lone <= lone_too; lone++) {
        clheap_core_begin();
        uint32_t unit = lone ? core_heap_malloc(heap, (size_t)m * frame_bytes, 0)
                             : clheap_tier_take_large(h, (size_t)m * frame_bytes, 0x1234u + m);
        uint32_t got = unit ? (unit - h[CLHEAP_HDR_POOL_START]) / h[CLHEAP_HDR_FRAME_UNITS] : CLHEAP_BM_FAIL;
        if (got != first)
            fail_msg("%u frames free at %u (segment %u + %u): %s gave %d", m, first, first / 64u, first % 64u,
                     lone ? "malloc" : "take", (int)got);
        clheap_core_begin();
        assert_int_equal(clheap_tier_take_large(h, frame_bytes, 7u), 0); /* nothing else is free */
        clheap_core_begin();
        clheap_tier_free_large(h, unit, got);
    }
    release(h, 0, first);
    release(h, first + m, frames - first - m);
}

static void every_free_stretch_is_found(void **state)
{
    (void)state;
    static const uint32_t some_offsets[] = {0, 1, 23, 24, 40, 63};
    for (int large = 0; large < 2; large++) {
        core_heap heap;
        make_heap(&heap, large ? 1u << 30 : 64u << 20, 0);
        uint32_t mid = heap.words[CLHEAP_HDR_FRAME_COUNT] / 128u * 64u; /* a segment in the middle */
        for (uint32_t k = 0; k < (large ? 6u : 64u); k++)
            for (uint32_t m = 1; m <= 200; m++)
                stretch_at(&heap, mid + (large ? some_offsets[k] : k), m);
        /* Across a group of 64 segments (W's containers) and, at 1 GiB, a span of 4096
         * (its level-1 containers), whose upper levels find_stretch reads first. */
        for (uint32_t m = 1; m <= 200; m++)
            stretch_at(&heap, (large ? 4096u : 64u) * 64u - 104u, m);
        clheap_heap_stats s = core_heap_sound(&heap, NULL);
        assert_int_equal(s.free_segments * s.segment_frames, heap.words[CLHEAP_HDR_FRAME_COUNT]); /* all whole again */
        core_heap_destroy(&heap);
    }
}

/* A hint whose run could not be opened waits a run's worth of requests before its next
 * opening (clheap_tier_run_take): with every other frame taken, no run of 16 B blocks
 * fits, each request is served from single blocks, and every hint of the class stays in
 * its wait. Before, the next request on the hint opened again, a failing page-tier take
 * per request (life on PoCL: 21,000 a spawn launch, 14x its time). Once frames are
 * free again, a later request opens a run. */
static void failed_run_opening_waits(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 4u << 20, 0);
    uint32_t *h = heap.words, frames = h[CLHEAP_HDR_FRAME_COUNT], c = clheap_class_for(h, 16);
    uint32_t hints = h[CLHEAP_HDR_CLASS_HINTS + c], slots = clheap_tier_run_slots(h, c);
    assert_true(hints > 1 && h[CLHEAP_HDR_CLASS_RUN + c] > 1); /* else no run can fail to fit */
    for (uint32_t f = 1; f < frames; f += 2)
        claim(h, f, 1);
    uint32_t n = 4u * slots * hints, *units = calloc(n, sizeof *units);
    assert_non_null(units);
    for (uint32_t i = 0; i < n; i++) {
        units[i] = core_heap_malloc(&heap, 16, i % hints);
        assert_int_not_equal(units[i], 0);
        for (uint32_t k = 0; k < hints; k++) {
            uint64_t v = *clheap_tier_hint_at(h, c, k);
            uint32_t t = (uint32_t)v;
            if (v >> 32)
                fail_msg("request %u: hint %u names a run with no two frames free in a row", i, k);
            if (i >= hints && (t < CLHEAP_TIER_RETRY_AT - slots || t > CLHEAP_TIER_RETRY_AT + 2u * hints))
                fail_msg("request %u: hint %u counts %u, not in its wait after a failed opening", i, k, t);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        core_heap_free_unit(&heap, units[i], 0);
    for (uint32_t f = 1; f < frames; f += 2)
        release(h, f, 1);
    int opened = 0;
    for (uint32_t i = 0; i < 2u * slots * hints && !opened; i++) {
        units[i] = core_heap_malloc(&heap, 16, 0);
        assert_int_not_equal(units[i], 0);
        opened = (*clheap_tier_hint_at(h, c, 0) >> 32) != 0;
    }
    assert_true(opened);
    core_heap_trim(&heap);
    core_heap_sound(&heap, NULL);
    free(units);
    core_heap_destroy(&heap);
}

/* A hint's spare (cl/clheap_tier.h, "Spares"): the request whose add crosses a quarter of
 * the run opens the next one ahead, held whole (the check counts its slots as the run's,
 * not as objects), and the request that crosses the end installs exactly that run and
 * empties the spare; trim gives spares back with the runs. */
static void spare_run_is_opened_ahead_and_installed(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20, 0);
    uint32_t *h = heap.words, c = clheap_class_for(h, 1024);
    uint32_t total = clheap_tier_run_slots(h, c);
    assert_true(h[CLHEAP_HDR_CLASS_HINTS + c] > 0 && total >= 2u * CLHEAP_TIER_SPARE_AT);
    uint64_t *hint = clheap_tier_hint_at(h, c, 0);
    uint32_t *spare = clheap_tier_spare_of(h, hint), n = 2u * total, *units = calloc(n, sizeof *units);
    assert_non_null(units);
    uint32_t first = 0, ahead = 0;
    for (uint32_t i = 0; i < n; i++) {
        units[i] = core_heap_malloc(&heap, 1024, 0);
        assert_int_not_equal(units[i], 0);
        uint32_t run = (uint32_t)(*hint >> 32), t = (uint32_t)*hint;
        if (i == 0)
            first = run;
        if (run == first && t >= total / CLHEAP_TIER_SPARE_AT && t < total) {
            if (!ahead) {
                ahead = *spare;
                assert_int_not_equal(ahead, 0); /* opened at the quarter */
                assert_int_not_equal(ahead, first);
                clheap_heap_stats s = core_heap_sound(&heap, NULL);
                assert_int_equal(s.class_objects[c], i + 1u); /* the spare's slots are no objects */
                assert_int_equal(s.run_slots, 2u * total - (i + 1u));
            }
            assert_int_equal(*spare, ahead); /* one spare a run's life */
        }
        if (run != first) {
            assert_int_equal(run, ahead); /* the end installed the spare */
            assert_int_equal(t, 0u); /* its crosser took the old run's last slot */
            assert_int_equal(*spare, 0u);
            break;
        }
    }
    assert_int_not_equal(ahead, 0);
    for (uint32_t i = 0; i < n && !*spare; i++) /* the installed run's own spare */
        if (!units[i])
            units[i] = core_heap_malloc(&heap, 1024, 0);
    assert_int_not_equal(*spare, 0u);
    for (uint32_t i = 0; i < n && units[i]; i++)
        core_heap_free_unit(&heap, units[i], 0);
    core_heap_trim(&heap);
    assert_int_equal(*spare, 0u); /* given back with the runs */
    clheap_heap_stats s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.free_segments * s.segment_frames, h[CLHEAP_HDR_FRAME_COUNT]); /* all whole again */
    free(units);
    core_heap_destroy(&heap);
}

/* A class with hints whose runs have several blocks of at least 8 slots (the recycling
 * tests'). */
static uint32_t multi_block_run_class(const uint32_t *h)
{
    uint32_t c = 0;
    while (c < h[CLHEAP_HDR_CLASS_COUNT] && !(h[CLHEAP_HDR_CLASS_HINTS + c] && h[CLHEAP_HDR_CLASS_RUN + c] > 1u &&
                                             h[CLHEAP_HDR_CLASS_CAPACITY + c] >= 8u))
        c++;
    assert_true(c < h[CLHEAP_HDR_CLASS_COUNT]);
    return c;
}

/* Mallocs units[0, total + 1) of class c (every slot of hint 0's first run, then the next
 * run's first) and returns the first run's first frame. */
static uint32_t open_two_runs(core_heap *heap, uint32_t c, uint32_t *units)
{
    uint32_t *h = heap->words, total = clheap_tier_run_slots(h, c);
    for (uint32_t i = 0; i < total + 1u; i++) {
        units[i] = core_heap_malloc(heap, h[CLHEAP_HDR_CLASS_BYTES + c], 0);
        assert_int_not_equal(units[i], 0);
    }
    uint32_t run = 0, cls = 0, incarnation = 0;
    assert_int_equal(clheap_frame_locate(h, core_heap_pointer(heap, units[0]), &run, &cls, &incarnation), units[0]);
    return run; /* runs start on their first slot */
}

/* After every object is freed: trimming leaves nothing live and every segment whole. */
static void assert_trimmed_whole(core_heap *heap)
{
    core_heap_trim(heap);
    clheap_heap_stats s = core_heap_sound(heap, NULL);
    assert_int_equal(s.live_bytes, 0);
    assert_int_equal(s.free_segments * s.segment_frames, heap->words[CLHEAP_HDR_FRAME_COUNT]); /* all whole again */
}

/* Recycling (cl/clheap_tier.h; on in this test's build): the blocks of a hint's tracked run
 * that empty are held (every slot taken, a free into one counted as a double free), and
 * the run whose last block empties is parked in its track without the page tier; the
 * hint's next crossing installs it again, and closing the hint gives it all back. */
static void emptied_run_is_parked_and_installed_again(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20, 0);
    uint32_t *h = heap.words, c = multi_block_run_class(h);
    uint32_t bytes = h[CLHEAP_HDR_CLASS_BYTES + c], total = clheap_tier_run_slots(h, c);
    uint32_t frames = h[CLHEAP_HDR_CLASS_FRAMES + c], capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c];
    uint64_t *hint = clheap_tier_hint_at(h, c, 0);
    uint32_t *spare = clheap_tier_spare_of(h, hint), n = total + 1u, *units = calloc(2u * n, sizeof *units);
    assert_non_null(units);
    uint32_t run = open_two_runs(&heap, c, units);
    assert_int_not_equal((uint32_t)(*hint >> 32), run + 1u); /* used up: the hint hands out the next run */
    assert_int_equal(*spare, 0u); /* the next run took the spare opened ahead */
    uint32_t used = clheap_pages_used(h), doubles = h[CLHEAP_HDR_ERR_DOUBLE_FREE];
    for (uint32_t i = 0; i + 1u < total; i++) /* a large launch's frees (group 1): settled at once */
        core_heap_free_unit(&heap, units[i], 1);
    uint32_t anchor = clheap_block_header(h, run)[CLHEAP_BLOCK_WORD_ANCHOR];
    assert_int_not_equal(anchor, 0u);
    assert_int_equal(*clheap_block_header(h, run), CLHEAP_TIER_HELD_WORD(anchor, c)); /* emptied: held */
    assert_int_equal(*clheap_block_alloc_bits(h, run), ~(clheap_u64)0);
    assert_int_equal(clheap_pages_used(h), used); /* nothing given back */
    core_heap_free_unit(&heap, units[0], 1); /* a double free into a held block */
    assert_int_equal(h[CLHEAP_HDR_ERR_DOUBLE_FREE], doubles + 1u);
    assert_int_equal(*clheap_block_alloc_bits(h, run), ~(clheap_u64)0);
    core_heap_sound(&heap, NULL);
    core_heap_free_unit(&heap, units[total - 1u], 1); /* the run's last block empties */
    assert_int_equal(*clheap_tier_track_at(h, anchor - 1u), /* parked: every block counted */
                     ((uint64_t)(run + 1u) << 32) | h[CLHEAP_HDR_CLASS_RUN + c]);
    assert_int_equal(*spare, 0u);
    assert_int_equal(clheap_pages_used(h), used);
    clheap_heap_stats s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.class_objects[c], 1u); /* the next run's first slot, nothing else */
    for (uint32_t i = n; i < 2u * n && (uint32_t)(*hint >> 32) != run + 1u; i++) {
        units[i] = core_heap_malloc(&heap, bytes, 0);
        assert_int_not_equal(units[i], 0);
    }
    assert_int_equal((uint32_t)(*hint >> 32), run + 1u); /* installed again */
    assert_int_equal(*clheap_tier_track_at(h, anchor - 1u), (uint64_t)(run + 1u) << 32); /* tracked afresh */
    assert_int_equal(*clheap_block_header(h, run), c + 1u);
    assert_int_equal(*clheap_block_header(h, run + (total / capacity - 1u) * frames), c + 1u);
    core_heap_sound(&heap, NULL);
    for (uint32_t i = total - 1u; i < 2u * n; i++)
        if (units[i] && i != total - 1u)
            core_heap_free_unit(&heap, units[i], 1);
    assert_trimmed_whole(&heap);
    free(units);
    core_heap_destroy(&heap);
}

/* Recycling beside spares opened ahead (cl/clheap_tier.h; both on in this test's build):
 * the run whose last block empties while the hint has a spare is parked all the same, and
 * the hint's next crossing installs the parked run, not the spare; trimming gives
 * everything back. */
static void parked_run_goes_before_a_spare(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20, 0);
    uint32_t *h = heap.words, c = multi_block_run_class(h);
    uint32_t bytes = h[CLHEAP_HDR_CLASS_BYTES + c], total = clheap_tier_run_slots(h, c), m = total + 1u;
    uint64_t *hint = clheap_tier_hint_at(h, c, 0);
    uint32_t *spare = clheap_tier_spare_of(h, hint), *units = calloc(4u * total + 4u, sizeof *units);
    assert_non_null(units);
    uint32_t run = open_two_runs(&heap, c, units);
    for (uint32_t i = 0; i + 1u < total; i++) /* a large launch's frees: all but the last block held */
        core_heap_free_unit(&heap, units[i], 1);
    while (!*spare && m < 2u * total) /* past a quarter of the next run: a spare opened ahead */
        units[m++] = core_heap_malloc(&heap, bytes, 0);
    assert_int_not_equal(*spare, 0u);
    uint32_t used = clheap_pages_used(h), ahead = *spare;
    core_heap_free_unit(&heap, units[total - 1u], 1); /* the run's last block empties */
    assert_int_equal(*spare, ahead);
    assert_int_equal(clheap_pages_used(h), used); /* nothing given back */
    uint32_t anchor = clheap_block_header(h, run)[CLHEAP_BLOCK_WORD_ANCHOR];
    assert_int_not_equal(anchor, 0u);
    uint64_t track = *clheap_tier_track_at(h, anchor - 1u);
    assert_int_equal(track, ((uint64_t)(run + 1u) << 32) | h[CLHEAP_HDR_CLASS_RUN + c]); /* parked */
    core_heap_sound(&heap, NULL);
    while ((uint32_t)(*hint >> 32) != run + 1u && m < 4u * total) { /* the next run used up */
        units[m] = core_heap_malloc(&heap, bytes, 0);
        assert_int_not_equal(units[m++], 0u);
    }
    assert_int_equal((uint32_t)(*hint >> 32), run + 1u); /* the parked run installed again */
    assert_int_equal(*spare, ahead); /* the spare waits */
    assert_int_equal((uint32_t)*clheap_tier_track_at(h, anchor - 1u), 0u); /* freed: tracked afresh, or by no run */
    assert_int_equal(*clheap_block_header(h, run), c + 1u);
    core_heap_sound(&heap, NULL);
    for (uint32_t i = total; i < m; i++)
        core_heap_free_unit(&heap, units[i], 1);
    assert_trimmed_whole(&heap);
    free(units);
    core_heap_destroy(&heap);
}

/* Mallocs n objects of class c into units, as work-group `group` (its hint slot). */
static void malloc_class(core_heap *heap, uint32_t c, uint32_t n, uint32_t *units, uint32_t group)
{
    for (uint32_t i = 0; i < n; i++) {
        units[i] = core_heap_malloc(heap, heap->words[CLHEAP_HDR_CLASS_BYTES + c], group);
        assert_int_not_equal(units[i], 0);
    }
}

/* Frees units [from, to) as a large launch does (settled at once). */
static void free_range(core_heap *heap, const uint32_t *units, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        core_heap_free_unit(heap, units[i], 1);
}

/* The first frame of the block that holds `unit`, and its anchor. */
static uint32_t frame_of(core_heap *heap, uint32_t unit, uint32_t *anchor)
{
    uint32_t frame = 0, cls = 0, incarnation = 0;
    assert_int_equal(clheap_frame_locate(heap->words, core_heap_pointer(heap, unit), &frame, &cls, &incarnation), unit);
    *anchor = clheap_block_header(heap->words, frame)[CLHEAP_BLOCK_WORD_ANCHOR];
    assert_int_not_equal(*anchor, 0u);
    return frame;
}

/* A 16 MiB heap whose 128 B class has runs of two 8-frame blocks and at least two hint
 * slots (the stolen-run tests'): the class. */
static uint32_t two_block_run_class(core_heap *heap)
{
    make_heap(heap, 16u << 20, 0);
    uint32_t *h = heap->words, c = clheap_class_for(h, 128);
    assert_int_equal(h[CLHEAP_HDR_CLASS_RUN + c], 2u);
    assert_true(h[CLHEAP_HDR_CLASS_HINTS + c] >= 2u && h[CLHEAP_HDR_CLASS_CAPACITY + c] <= 128u);
    return c;
}

/* A track following the run at frame `run`, stolen from, `counted` blocks counted. */
static uint64_t stolen_track(uint32_t run, uint32_t counted)
{
    return ((uint64_t)(run + 1u) << 32) | CLHEAP_TIER_STOLEN | counted;
}

/* A stolen run whose frames a later run reuses (cl/clheap_tier.h, "Recycling"). Runs X
 * (hint slot 1) and A (slot 0), two blocks each, side by side, one object in each first
 * block; a trim steals both and closes their hints, so their second blocks empty and go
 * back. Run B (slot 0 again) opens against A's first block, on A's second, and holds
 * that block for its own track once its slots are freed. When A's straggling first
 * block empties, A's completer gives back what A still holds and frees A's track, and
 * leaves B's held block alone (a completer once released every block of its run's
 * frames held for the class: a game of life lost a later run's held block that way).
 * The page tier places small-tier runs of under a segment near the low end, against a
 * frame in use (cl/clheap_pages.h), which the setup's assertions check; one object a run
 * opens no spare ahead. */
static void stolen_run_leaves_a_later_runs_block(void **state)
{
    (void)state;
    core_heap heap;
    uint32_t c = two_block_run_class(&heap), *h = heap.words;
    uint32_t frames = h[CLHEAP_HDR_CLASS_FRAMES + c], capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c];
    uint32_t x, a, b[128] = {0}, anchor_x, anchor_a, anchor_b;
    malloc_class(&heap, c, 1, &x, 1);
    malloc_class(&heap, c, 1, &a, 0);
    uint32_t run_x = frame_of(&heap, x, &anchor_x), run_a = frame_of(&heap, a, &anchor_a);
    assert_int_equal(run_a, run_x + 2u * frames);
    core_heap_trim(&heap); /* both stolen; their second blocks empty and go back */
    assert_int_equal(*clheap_tier_track_at(h, anchor_a - 1u), stolen_track(run_a, 1u));
    assert_int_equal(*clheap_block_header(h, run_a + frames), 0u);
    malloc_class(&heap, c, capacity, b, 0); /* run B, its first block handed out whole */
    uint32_t run_b = frame_of(&heap, b[0], &anchor_b);
    assert_int_equal(run_b, run_a + frames);
    assert_int_not_equal(anchor_b, anchor_a);
    free_range(&heap, b, 0, capacity); /* B's first block, A's second frames: held */
    assert_int_equal(*clheap_block_header(h, run_b), CLHEAP_TIER_HELD_WORD(anchor_b, c));
    core_heap_sound(&heap, NULL);
    free_range(&heap, &a, 0, 1); /* A's first block empties: A completes */
    free_range(&heap, &x, 0, 1);
    assert_int_equal(*clheap_tier_track_at(h, anchor_a - 1u) >> 32, 0u); /* A's track free */
    assert_int_equal(*clheap_block_header(h, run_a), 0u);               /* A's block given back */
    assert_int_equal(*clheap_block_header(h, run_b), CLHEAP_TIER_HELD_WORD(anchor_b, c)); /* B's, still held */
    assert_int_equal(*clheap_tier_track_at(h, anchor_b - 1u), ((uint64_t)(run_b + 1u) << 32) | 1u);
    core_heap_sound(&heap, NULL);
    assert_trimmed_whole(&heap);
    core_heap_destroy(&heap);
}

/* A stolen run that completes while its stealer walks it (cl/clheap_blocks.h,
 * clheap_tier_walk_begin), the interleaving taken step by step on one thread: run A's
 * second block was given back by a trim; a stealer's walking mark is set; A's last block
 * empties, and its completer, finding the mark, gives back only its own block and leaves
 * the track (the heap check, between kernels, names the mark); the walk's end frees it. */
static void stolen_run_completed_during_a_walk(void **state)
{
    (void)state;
    core_heap heap;
    uint32_t c = two_block_run_class(&heap), *h = heap.words, a, anchor;
    uint32_t frames = h[CLHEAP_HDR_CLASS_FRAMES + c], blocks = h[CLHEAP_HDR_CLASS_RUN + c];
    malloc_class(&heap, c, 1, &a, 0);
    uint32_t run = frame_of(&heap, a, &anchor);
    core_heap_trim(&heap); /* stolen; the second block, all unhanded, empties and goes back */
    uint64_t *track = clheap_tier_track_at(h, anchor - 1u), stolen = stolen_track(run, 0u);
    assert_int_equal(*track, stolen | 1u);
    clheap_core_begin();
    assert_true(clheap_tier_walk_begin(track, *track, blocks)); /* a stealer marks itself walking */
    assert_int_equal(*track, stolen | CLHEAP_TIER_WALKING | 1u);
    free_range(&heap, &a, 0, 1); /* the last block empties: complete, the track left to the walker */
    assert_int_equal(*track, stolen | CLHEAP_TIER_WALKING | 2u);
    assert_int_equal(*clheap_block_header(h, run), 0u); /* its own block given back */
    char what[256] = "";
    assert_int_equal(core_heap_walk(&heap, NULL, what, sizeof what), CLHEAP_ERROR_HEAP_CORRUPT);
    assert_non_null(strstr(what, "a stealer still walking"));
    clheap_core_begin();
    clheap_tier_release_run_held(h, run, c, anchor); /* the walk: nothing held any more */
    clheap_tier_walk_end(track, blocks);
    assert_int_equal(*track, 0u); /* freed by the walker */
    assert_false(clheap_tier_walk_begin(track, stolen | 1u, blocks)); /* a late mark: refused */
    assert_int_equal(*track, 0u);
    assert_int_equal(*clheap_block_header(h, run + frames), 0u);
    assert_trimmed_whole(&heap);
    core_heap_destroy(&heap);
}

/* A tracked run its hint never installed (a warp took every slot at once) parks when its
 * blocks empty, and its completer sets CLHEAP_HDR_RUNS_OPEN (cl/clheap_blocks.h,
 * clheap_tier_count_held): the last resort's clheap_tier_close_all looks at nothing else,
 * and without the flag it would leave the parked run's frames held while a request fails. */
static void parked_run_is_found_by_the_last_resort(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 16u << 20, 0);
    uint32_t *h = heap.words, c = clheap_class_for(h, 16384), units[32], anchor;
    uint32_t total = clheap_tier_run_slots(h, c);
    assert_true(h[CLHEAP_HDR_CLASS_HINTS + c] > 0u && total <= 32u);
    uint32_t used = clheap_pages_used(h);
    core_heap_malloc_many(&heap, 16384, total, units, 0); /* a warp's worth: the whole run */
    uint32_t run = frame_of(&heap, units[0], &anchor);
    assert_int_equal(*clheap_tier_hint_at(h, c, 0) >> 32, 0u); /* not installed */
    assert_int_equal(h[CLHEAP_HDR_RUNS_OPEN], 0u);
    free_range(&heap, units, 0, total);
    assert_int_equal(*clheap_tier_track_at(h, anchor - 1u), ((uint64_t)(run + 1u) << 32) | h[CLHEAP_HDR_CLASS_RUN + c]);
    assert_int_equal(h[CLHEAP_HDR_RUNS_OPEN], 1u); /* parked: the completer set it */
    clheap_core_begin();
    clheap_tier_close_all(h); /* what a failing request's last resort runs */
    assert_int_equal(*clheap_tier_track_at(h, anchor - 1u) >> 32, 0u);
    assert_int_equal(clheap_pages_used(h), used); /* its frames given back */
    assert_trimmed_whole(&heap);
    core_heap_destroy(&heap);
}

/* Keeping (cl/clheap_tier.h; on in this test's build): a free in a middle launch that
 * empties a block leaves it in its class, findable and marked, its frames held; the
 * class's search takes it again; a request on its way to NULL stops the keeping, and the
 * kept block is given back; an opener that finds the pool mostly free starts it again. */
static void emptied_block_is_kept_until_the_pool_runs_short(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 4u << 20, 0);
    uint32_t *h = heap.words, c = clheap_class_for(h, 64), count = h[CLHEAP_HDR_CLASS_COUNT];
    uint32_t unit = core_heap_malloc(&heap, 64, 0);
    assert_int_not_equal(unit, 0);
    core_heap_trim(&heap); /* its run closed: the object is alone in its block */
    uint32_t block = 0, cls = 0, incarnation = 0, used = clheap_pages_used(h);
    assert_int_equal(clheap_frame_locate(h, core_heap_pointer(&heap, unit), &block, &cls, &incarnation), unit);
    assert_int_equal(cls, c + 1u);
    for (int round = 0; round < 2; round++) {
        core_heap_free_unit(&heap, unit, 3); /* group 3: a middle launch (core_heap.h) */
        assert_int_equal(*clheap_block_header(h, block), c + 1u);
        assert_int_equal(*clheap_block_alloc_bits(h, block) & clheap_class_slots(h, c), 0);
        assert_true(clheap_bm_get(h, CLHEAP_BM_ACTIVE(c), block));
        assert_true(clheap_bm_get(h, CLHEAP_BM_UNSETTLED(count), block));
        assert_int_equal(clheap_pages_used(h), used); /* its frames held */
        core_heap_sound(&heap, NULL);
        if (round)
            break;
        clheap_u64 got = 0;
        clheap_core_begin();
        assert_int_equal(clheap_block_reserve_active(h, c, 1u, 0u, &got), block); /* taken again */
        unit = clheap_slot_unit(h, block, c, (uint32_t)__builtin_ctzll(got));
    }
    assert_int_equal(h[CLHEAP_HDR_KEEP_FULL], 0u);
    uint32_t n = 0, large[128];
    while (n < 128u && (large[n] = core_heap_malloc(&heap, 65536, 0)) != 0)
        n++;
    assert_true(n > 0 && n < 128u);
    assert_int_equal(h[CLHEAP_HDR_KEEP_FULL], 1u); /* the NULL stopped the keeping */
    assert_int_not_equal(*clheap_block_header(h, block), c + 1u); /* and gave the block back */
    for (uint32_t i = 0; i < n; i++)
        core_heap_free_unit(&heap, large[i], 1);
    clheap_host_launch_items = CORE_ITEMS_KEEP;
    unit = core_heap_malloc(&heap, 64, 0); /* opens a run in a mostly free pool */
    assert_int_not_equal(unit, 0);
    assert_int_equal(h[CLHEAP_HDR_KEEP_FULL], 0u);
    core_heap_free_unit(&heap, unit, 1);
    core_heap_trim(&heap);
    clheap_heap_stats s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.free_segments * s.segment_frames, h[CLHEAP_HDR_FRAME_COUNT]); /* all whole again */
    core_heap_destroy(&heap);
}

/* Growth accepts exactly the sizes create accepts (issue 52): up to the largest the
 * allocator addresses, one unit less used, and refuses one unit more with the same
 * status. Plans only: nothing of that size is allocated. */
static void growth_and_create_agree_on_the_largest_heap(void **state)
{
    (void)state;
    for (int a = 1; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.offset_count = 2;
        config.size_bytes = 1u << 20;
        clheap_layout small;
        assert_int_equal(clheap_layout_plan(&config, 2, &small), CLHEAP_SUCCESS);
        uint64_t largest = clheap_layout_max_bytes(config.allocator);
        for (uint64_t bytes = largest - 16; bytes <= largest + 16; bytes += 16) {
            config.size_bytes = bytes;
            clheap_layout created;
            clheap_growth grown;
            clheap_status create = clheap_layout_plan(&config, 2, &created);
            clheap_status grow = clheap_layout_plan_growth(&config, &small, bytes / 16, &grown);
            if (create == CLHEAP_SUCCESS && grow == CLHEAP_SUCCESS)
                assert_int_equal(created.total_units, grown.layout.total_units);
            if (!clheap_allocator_is_bump(config.allocator))
                assert_int_equal(create, grow);
            if (bytes > largest)
                assert_int_equal(create, CLHEAP_ERROR_SIZE_TOO_LARGE);
            if (create == CLHEAP_SUCCESS)
                clheap_layout_free(&created);
            if (grow == CLHEAP_SUCCESS)
                clheap_layout_free(&grown.layout);
        }
        clheap_layout_free(&small);
    }
}

/* The 32-bit layout (cl/clheap_port.h, the split word): blocks of at most 32 slots, no
 * run hint, the width recorded; growth keeps it; the check refuses a 64-bit plan that
 * claims 32-bit atomics (64-slot blocks) and a 32-bit one with a run hint. */
/* CLHEAP_AUTO_ALLOCATOR as a layout plan resolves it (no device, so loops that end early
 * play no part): the typed allocator for a typed heap, else the default, on both widths;
 * an allocator named stays as named, typed or not. */
static void typed_heaps_default_to_the_typed_allocator(void **state)
{
    (void)state;
    for (uint32_t bits = 32; bits <= 64; bits += 32) {
        for (uint32_t typed = 0; typed < 2; typed++) {
            for (int named = 0; named < 2; named++) {
                clheap_heap_config config = clheap_heap_config_default();
                config.size_bytes = 8u << 20;
                config.typed_classes = typed;
                config.allocator = named ? CLHEAP_TIER_ALLOC : CLHEAP_AUTO_ALLOCATOR;
                clheap_allocator want = named ? CLHEAP_TIER_ALLOC : typed ? CLHEAP_TYPED_ALLOCATOR : CLHEAP_DEFAULT_ALLOCATOR;
                clheap_layout layout;
                assert_int_equal(clheap_layout_plan_atomics(&config, 4, bits, &layout), CLHEAP_SUCCESS);
                assert_int_equal(layout.header[CLHEAP_HDR_KIND], want);
                clheap_layout_free(&layout);
            }
        }
    }
    assert_int_equal(CLHEAP_TYPED_ALLOCATOR, CLHEAP_BLOCK_ALLOC);
}

static void layouts_for_32_bit_atomics(void **state)
{
    (void)state;
    for (int a = CLHEAP_BITMAP_ALLOC; a <= CLHEAP_TIER_ALLOC; a++) {
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = 8u << 20;
        clheap_layout narrow, wide, odd;
        assert_int_equal(clheap_layout_plan_atomics(&config, 4, 48, &odd), CLHEAP_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clheap_layout_plan_atomics(&config, 4, 32, &narrow), CLHEAP_SUCCESS);
        assert_int_equal(clheap_layout_plan_atomics(&config, 4, 64, &wide), CLHEAP_SUCCESS);
        assert_int_equal(narrow.header[CLHEAP_HDR_ATOMIC_BITS], 32);
        assert_int_equal(wide.header[CLHEAP_HDR_ATOMIC_BITS], 64);
        int blocks = a != CLHEAP_BITMAP_ALLOC, wider = 0;
        for (uint32_t c = 0; blocks && c < narrow.header[CLHEAP_HDR_CLASS_COUNT]; c++) {
            assert_true(narrow.header[CLHEAP_HDR_CLASS_CAPACITY + c] <= 32);
            wider |= wide.header[CLHEAP_HDR_CLASS_CAPACITY + c] > 32;
            if (a == CLHEAP_TIER_ALLOC)
                assert_int_equal(narrow.header[CLHEAP_HDR_CLASS_HINTS + c], 0);
        }
        assert_int_equal(wider, blocks);
        clheap_growth grown;
        assert_int_equal(clheap_layout_plan_growth(&config, &narrow, narrow.total_units * 2, &grown), CLHEAP_SUCCESS);
        assert_int_equal(grown.layout.header[CLHEAP_HDR_ATOMIC_BITS], 32);
        clheap_layout_free(&grown.layout);
        if (blocks) { /* fresh heaps of each: sound, and refused once their width is wrong */
            core_heap heap;
            clheap_heap_stats s;
            char what[256];
            assert_int_equal(core_heap_create(&config, 4, &heap), CLHEAP_SUCCESS);
            assert_int_equal(core_heap_walk(&heap, &s, what, sizeof what), CLHEAP_SUCCESS);
            /* The image's own check, not its comparison with the host's copy of the header. */
            heap.words[CLHEAP_HDR_ATOMIC_BITS] = 32; /* a 64-bit plan's 64-slot blocks */
            assert_int_equal(clheap_heap_walk(heap.words, heap.layout.total_units, &s, what, sizeof what),
                             CLHEAP_ERROR_HEAP_CORRUPT);
            print_message("%s: %s\n", clheap_allocator_name(config.allocator), what);
            if (a == CLHEAP_TIER_ALLOC) {
                memcpy(heap.words, narrow.header, narrow.header_words * sizeof(uint32_t));
                assert_int_equal(clheap_heap_walk(heap.words, heap.layout.total_units, &s, what, sizeof what),
                                 CLHEAP_SUCCESS);
                heap.words[CLHEAP_HDR_CLASS_HINTS] = 1; /* a run hint on split words */
                assert_int_equal(clheap_heap_walk(heap.words, heap.layout.total_units, &s, what, sizeof what),
                                 CLHEAP_ERROR_HEAP_CORRUPT);
                print_message("%s\n", what);
            }
            core_heap_destroy(&heap);
        }
        clheap_layout_free(&narrow);
        clheap_layout_free(&wide);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts_for_32_bit_atomics),
        cmocka_unit_test(typed_heaps_default_to_the_typed_allocator),
        cmocka_unit_test(typed_heap_gives_no_pieces),
        cmocka_unit_test(untyped_heap_gives_lone_requests_pieces),
        cmocka_unit_test(wasteful_pieces_only_in_a_mostly_free_pool),
        cmocka_unit_test(lone_request_finds_what_another_class_run_holds),
        cmocka_unit_test(sizes_past_the_pool),
        cmocka_unit_test(every_free_stretch_is_found),
        cmocka_unit_test(failed_run_opening_waits),
        cmocka_unit_test(spare_run_is_opened_ahead_and_installed),
        cmocka_unit_test(emptied_run_is_parked_and_installed_again),
        cmocka_unit_test(parked_run_goes_before_a_spare),
        cmocka_unit_test(stolen_run_leaves_a_later_runs_block),
        cmocka_unit_test(stolen_run_completed_during_a_walk),
        cmocka_unit_test(parked_run_is_found_by_the_last_resort),
        cmocka_unit_test(emptied_block_is_kept_until_the_pool_runs_short),
        cmocka_unit_test(growth_and_create_agree_on_the_largest_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
