/* TierAlloc's page tier (cl/clheap_pages.h) through the C11 build of the core, on a pool
 * large enough for the paths the device tests' small heaps never take: several words of
 * the segment bitmap's level 1, takes that start among several containers near an end,
 * runs of whole segments across containers. One thread, so every property is exact:
 * the heap is checked every CHECK_EVERY steps, every allocation keeps its bytes; while
 * the heap is lightly used, pieces of up to a segment lie in the pool's low half (or in
 * the broken last segment of a large allocation) and runs of segments in its high half;
 * freeing everything and closing the runs leaves every segment whole. Also the small
 * requests the page tier serves: pieces (cl/clheap_tier.h, clheap_tier_wants_pieces). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "../cl/clheap_layout.h"

enum { STEPS = 6000, MAX_LIVE = 4096, CHECK_EVERY = 64 };
#define POOL_MIB 640 /* > 8192 segments of 64 KiB: takes start among 2 containers */

typedef struct live {
    uint32_t unit, bytes;
} live;

static uint32_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* A TierAlloc heap of `bytes` (4 compute units), walked once: *fresh its stats. */
static void make_tier_heap(core_heap *heap, uint64_t bytes, clheap_heap_stats *fresh)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_TIER_ALLOC;
    config.size_bytes = bytes;
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
    char what[256] = "";
    if (core_heap_walk(heap, fresh, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check of a fresh heap: %s", what);
}

/* The large pool most tests here use. */
static void make_heap(core_heap *heap, clheap_heap_stats *fresh)
{
    make_tier_heap(heap, (uint64_t)POOL_MIB << 20, fresh);
    assert_true(fresh->free_segments >= 2 * 4096); /* takes start among 2 containers (CLHEAP_PAGES_WIDTH_SEGMENTS) */
    assert_int_equal(fresh->free_segments * fresh->segment_frames * fresh->frame_bytes, fresh->pool_bytes);
}

/* The frame an allocation starts in. */
static uint32_t frame_of(const core_heap *heap, uint32_t unit)
{
    const uint32_t *w = heap->words;
    return (unit - w[CLHEAP_HDR_POOL_START]) / w[CLHEAP_HDR_FRAME_UNITS];
}

static void fill(core_heap *heap, const live *l, uint32_t id)
{
    memset(core_heap_pointer(heap, l->unit), (int)(id & 0xff), l->bytes);
}

static void expect_intact(core_heap *heap, const live *l, uint32_t id)
{
    const unsigned char *p = core_heap_pointer(heap, l->unit);
    for (uint32_t i = 0; i < l->bytes; i++)
        if (p[i] != (unsigned char)(id & 0xff))
            fail_msg("allocation %u (%u B at unit %u) changed at byte %u", id, l->bytes, l->unit, i);
}

static void assert_walks(core_heap *heap, clheap_heap_stats *s)
{
    char what[256] = "";
    clheap_status st = core_heap_walk(heap, s, what, sizeof what);
    if (st != CLHEAP_SUCCESS)
        fail_msg("heap check: %s", what);
}

/* Everything freed: the heap is sound, every segment whole again, and no malloc got NULL. */
static void assert_merged_back(core_heap *heap, const clheap_heap_stats *fresh)
{
    clheap_heap_stats s;
    assert_walks(heap, &s);
    assert_int_equal(s.free_segments, fresh->free_segments);
    assert_int_equal(heap->words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 0);
}

/* Sizes 16 B - 16 KiB (blocks, sometimes a warp's worth at once) and 64 KiB - 8 MiB
 * (segments), log-uniform, up to a fifth of the pool live. */
static void random_steps_keep_placement_and_merge_back(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, &fresh);
    uint32_t frames = heap.words[CLHEAP_HDR_FRAME_COUNT];
    static live lives[MAX_LIVE];
    static uint32_t ids[MAX_LIVE];
    uint32_t count = 0, next_id = 1, small_low = 0, small_high = 0, large_high = 0, large_low = 0;
    uint64_t live_bytes = 0, seed = 0x9E3779B97F4A7C15ull;
    for (uint32_t step = 0; step < STEPS; step++) {
        uint32_t r = next_random(&seed);
        if (count && (r % 5 < 2 || count + 32 > MAX_LIVE || live_bytes > fresh.pool_bytes / 5)) {
            uint32_t i = next_random(&seed) % count;
            expect_intact(&heap, &lives[i], ids[i]);
            core_heap_free_unit(&heap, lives[i].unit, r % 4);
            live_bytes -= lives[i].bytes;
            lives[i] = lives[--count];
            ids[i] = ids[count];
        } else {
            int large = r % 4 == 0;
            uint32_t bytes = large ? (64u << 10) << (next_random(&seed) % 8) : 16u << (next_random(&seed) % 11);
            bytes -= large ? next_random(&seed) % (bytes / 2) : next_random(&seed) % (bytes / 2 + 1) & ~15u;
            uint32_t n = !large && r % 3 == 0 ? 1 + next_random(&seed) % 32 : 1, units[32];
            core_heap_malloc_many(&heap, bytes, n, units, r % 4);
            for (uint32_t k = 0; k < n; k++) {
                if (!units[k])
                    fail_msg("NULL for %u B with %llu of %llu B live", bytes, (unsigned long long)live_bytes,
                             (unsigned long long)fresh.pool_bytes);
                uint32_t f = frame_of(&heap, units[k]);
                if (bytes <= (64u << 10)) { /* blocks and single segments: the low end... */
                    if (f >= frames / 2) { /* ...or a broken end segment of a large one */
                        int beside = 0;
                        for (uint32_t j = 0; j < count && !beside; j++)
                            if (lives[j].bytes > (64u << 10)) {
                                uint32_t first = frame_of(&heap, lives[j].unit);
                                uint32_t last = first + (uint32_t)((lives[j].bytes - 1) / fresh.frame_bytes);
                                beside = first / 64 == f / 64 || last / 64 == f / 64;
                            }
                        if (!beside)
                            fail_msg("step %u: %u B at frame %u of %u, in no large allocation's end segment", step,
                                     bytes, f, frames);
                        small_high++;
                    } else {
                        small_low++;
                    }
                } else { /* runs of segments: the high end, or above every small piece of the low end */
                    if (f < frames / 2) {
                        for (uint32_t j = 0; j < count; j++)
                            if (lives[j].bytes <= (64u << 10) && frame_of(&heap, lives[j].unit) < frames / 2 &&
                                frame_of(&heap, lives[j].unit) > f)
                                fail_msg("step %u: %u B at frame %u of %u, below %u B at frame %u", step, bytes, f,
                                         frames, lives[j].bytes, frame_of(&heap, lives[j].unit));
                        large_low++;
                    } else {
                        large_high++;
                    }
                }
                lives[count] = (live){units[k], bytes};
                ids[count] = next_id++;
                fill(&heap, &lives[count], ids[count]);
                live_bytes += bytes;
                count++;
            }
        }
        if (step % CHECK_EVERY == 0) {
            assert_walks(&heap, &s);
            assert_true(s.used_bytes >= live_bytes);
            assert_int_equal(s.free_bytes + s.used_bytes, fresh.pool_bytes);
        }
    }
    print_message("small pieces: %u in the low half, %u in the high half; runs of segments: %u in the high half, "
                  "%u in the low half\n",
                  small_low, small_high, large_high, large_low);
    assert_true(small_low > 1000 && large_high > 200); /* both ends were exercised */
    while (count) {
        count--;
        expect_intact(&heap, &lives[count], ids[count]);
        core_heap_free_unit(&heap, lives[count].unit, 0);
    }
    /* Only the runs' hints still hold frames: closed, every segment is whole again. */
    assert_walks(&heap, &s);
    assert_int_equal(s.large_count, 0);
    assert_true(s.block_bytes > 0);
    core_heap_trim(&heap);
    assert_walks(&heap, &s);
    assert_int_equal(s.block_bytes, 0);
    assert_int_equal(s.free_segments, fresh.free_segments);
    assert_int_equal(s.stale_hints, 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE] + heap.words[CLHEAP_HDR_ERR_FREE_NOT_CHUNK], 0);
    core_heap_destroy(&heap);
}

/* The pool in one request; then nothing, not even 16 B; then pieces around a segment's
 * size, whose unused frames stay in their broken segment; then whole again. */
static void whole_pool_and_segment_edges(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, &fresh);
    uint32_t whole = core_heap_malloc(&heap, fresh.pool_bytes, 0);
    assert_int_not_equal(whole, 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_bytes, 0);
    assert_int_equal(core_heap_malloc(&heap, 16, 0), 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 1);
    core_heap_free_unit(&heap, whole, 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_segments, fresh.free_segments);

    uint64_t frame = fresh.frame_bytes;
    static const uint32_t frame_counts[] = {17, 63, 64, 65, 127, 129, 4095, 4097};
    uint32_t units[8];
    for (uint32_t i = 0; i < 8; i++) {
        units[i] = core_heap_malloc(&heap, frame_counts[i] * frame, 1);
        assert_int_not_equal(units[i], 0);
        assert_walks(&heap, &s);
        assert_int_equal(s.large_count, i + 1);
    }
    /* Every request but 64 (a whole segment) left part of a segment broken: its free
     * frames are counted in free_pieces beside the whole segments. */
    assert_true(s.free_pieces > s.free_segments);
    for (uint32_t i = 0; i < 8; i++) {
        core_heap_free_unit(&heap, units[i], 2);
        assert_walks(&heap, &s);
    }
    assert_int_equal(s.free_segments, fresh.free_segments);
    assert_int_equal(s.free_pieces, fresh.free_pieces);
    core_heap_free_unit(&heap, units[0], 3); /* a second free: counted, nothing changes */
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE], 1);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_segments, fresh.free_segments);
    core_heap_destroy(&heap);
}

/* Large requests in a small pool (cl/clheap_pages.h, CLHEAP_PAGES_BEST_FIT_SEGMENTS) go
 * to the best-fitting region of free frames, at its top, and a region may take the free
 * frames beside its whole segments. Three allocations packed down from the pool's end;
 * freeing the middle one leaves a hole of 200 frames that holds only 2 whole segments
 * (it needs 4 of them as whole segments). A request of exactly 200 frames takes the
 * hole, one of 201 does not; both bytes intact, everything merges back. */
static void large_requests_take_the_best_region(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_tier_heap(&heap, 4u << 20, &fresh);
    uint32_t frames = (uint32_t)(fresh.pool_bytes / fresh.frame_bytes), S = fresh.segment_frames;
    assert_int_equal(frames % S, 0);
    assert_true(frames >= 8 * S);
    static const uint32_t sizes[] = {100, 200, 100}; /* packed down from the end */
    uint32_t units[3], top = frames;
    for (uint32_t i = 0; i < 3; i++) {
        units[i] = core_heap_malloc(&heap, (size_t)sizes[i] * fresh.frame_bytes, i);
        assert_int_not_equal(units[i], 0);
        top -= sizes[i];
        assert_int_equal(frame_of(&heap, units[i]), top);
    }
    core_heap_free_unit(&heap, units[1], 0);
    assert_walks(&heap, &s);
    uint32_t hole = frames - 300;
    assert_true(hole % S != 0 && (hole + 200) % S != 0); /* the hole has broken segments at both ends */
    live in_hole = {core_heap_malloc(&heap, 200 * (size_t)fresh.frame_bytes, 1), 200 * (uint32_t)fresh.frame_bytes};
    assert_int_not_equal(in_hole.unit, 0);
    assert_int_equal(frame_of(&heap, in_hole.unit), hole);
    live below = {core_heap_malloc(&heap, 201 * (size_t)fresh.frame_bytes, 2), 201 * (uint32_t)fresh.frame_bytes};
    assert_int_not_equal(below.unit, 0);
    assert_int_equal(frame_of(&heap, below.unit), frames - 400 - 201);
    fill(&heap, &in_hole, 1);
    fill(&heap, &below, 2);
    assert_walks(&heap, &s);
    expect_intact(&heap, &in_hole, 1);
    expect_intact(&heap, &below, 2);
    core_heap_free_unit(&heap, units[0], 3);
    core_heap_free_unit(&heap, units[2], 3);
    core_heap_free_unit(&heap, in_hole.unit, 3);
    core_heap_free_unit(&heap, below.unit, 3);
    assert_merged_back(&heap, &fresh);
    core_heap_destroy(&heap);
}

/* In a large pool, where large requests take whole segments first, the last free
 * stretch is 5 whole segments and 44 frames of a broken one beside them: a request for
 * exactly that takes it (the frames beside a run, cl/clheap_pages.h), filling the pool. */
static void large_request_takes_the_frames_beside_a_run(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, &fresh);
    uint32_t S = fresh.segment_frames, frames = (uint32_t)(fresh.pool_bytes / fresh.frame_bytes);
    size_t frame = fresh.frame_bytes;
    uint32_t most = core_heap_malloc(&heap, (size_t)(frames - 6 * S) * frame, 0);
    assert_int_not_equal(most, 0);
    uint32_t piece = core_heap_malloc(&heap, 20 * frame, 1); /* breaks one of the 6 segments left */
    assert_int_not_equal(piece, 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_segments, 5);
    assert_int_equal(s.free_bytes, (uint64_t)(6 * S - 20) * frame);
    live rest = {core_heap_malloc(&heap, (6 * S - 20) * frame, 2), (6 * S - 20) * (uint32_t)frame};
    assert_int_not_equal(rest.unit, 0);
    assert_int_equal(frame_of(&heap, rest.unit), frame_of(&heap, piece) + 20);
    fill(&heap, &rest, 7);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_bytes, 0);
    expect_intact(&heap, &rest, 7);
    core_heap_free_unit(&heap, piece, 3);
    core_heap_free_unit(&heap, rest.unit, 3);
    core_heap_free_unit(&heap, most, 3);
    assert_merged_back(&heap, &fresh);
    core_heap_destroy(&heap);
}

/* A small-tier run when no container near the low end has room: the low end made a
 * checkerboard of single free segments (100 containers of 64 KiB pieces, every other one
 * freed: more than a look's start among the nearest 32 plus its 64 containers), a 16 B
 * malloc opens its class's run of 16 segments. The look near the end fails; the run must
 * come from the first fit after it (cl/clheap_pages.h), intact and past the
 * checkerboard, and everything merges back once freed. */
static void small_run_past_a_fragmented_low_end(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, &fresh);
    enum { CONTAINERS = 100, PIECES = CONTAINERS * 64 };
    uint32_t *pieces = malloc(PIECES * sizeof *pieces);
    assert_non_null(pieces);
    uint32_t segment_frames = fresh.segment_frames;
    for (uint32_t i = 0; i < PIECES; i++) {
        /* A group per piece: a take starts among the nearest containers by its seed, and one
         * seed for all skipped the same container every time. */
        pieces[i] = core_heap_malloc(&heap, (size_t)segment_frames * fresh.frame_bytes, i);
        assert_int_not_equal(pieces[i], 0);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < PIECES; i++) {
        if (frame_of(&heap, pieces[i]) / segment_frames % 2 == 0)
            core_heap_free_unit(&heap, pieces[i], 0);
        else
            pieces[kept++] = pieces[i];
    }
    assert_walks(&heap, &s);
    assert_true(s.free_segments >= PIECES / 2);
    uint32_t small = core_heap_malloc(&heap, 16, 0);
    assert_int_not_equal(small, 0);
    assert_true(frame_of(&heap, small) / segment_frames >= (CONTAINERS - 2) * 64); /* past the checkerboard */
    memset(core_heap_pointer(&heap, small), 0x5a, 16);
    assert_walks(&heap, &s);
    assert_true(s.run_slots > 0);
    for (uint32_t i = 0; i < kept; i++)
        core_heap_free_unit(&heap, pieces[i], 1);
    core_heap_free_unit(&heap, small, 1);
    core_heap_trim(&heap);
    assert_merged_back(&heap, &fresh);
    free(pieces);
    core_heap_destroy(&heap);
}

/* Requests of a class whose blocks they would barely use, with no block of the class
 * open (no hint slot either: a 4 MiB pool affords runs only to the small classes), take
 * pieces: each its own frame, a large allocation, also for a class of half a frame. A
 * warp's worth that fills half a block or more, a class with a hint slot's run, and
 * requests that find a block with free slots still get block slots. Every piece holds its bytes, frees alone, and a
 * second free of one is counted and changes nothing. */
static void sparse_requests_take_pieces_not_blocks(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_tier_heap(&heap, 4u << 20, &fresh);
    uint32_t kib = 0, half = 0, quarter = 0;
    for (uint32_t c = 0; c < fresh.class_count; c++) {
        kib = fresh.class_bytes[c] == 1024 ? c : kib;
        half = fresh.class_bytes[c] == 512 ? c : half;
        quarter = fresh.class_bytes[c] == 256 ? c : quarter;
    }
    assert_int_equal(heap.words[CLHEAP_HDR_CLASS_HINTS + half], 0);
    assert_int_not_equal(heap.words[CLHEAP_HDR_CLASS_HINTS + quarter], 0);
    assert_int_equal(fresh.class_bytes[kib], fresh.frame_bytes); /* 1 KiB frames, 64 per block */
    assert_int_equal(heap.words[CLHEAP_HDR_CLASS_HINTS + kib], 0);

    uint32_t sparse[4], warp[32], more[4], small[2], piece;
    assert_int_equal(core_heap_malloc_many(&heap, 1000, 4, sparse, 0), 4);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_not_equal(sparse[i], 0);
        assert_int_equal(frame_of(&heap, sparse[i]), frame_of(&heap, sparse[0]) + i); /* one take, split */
        assert_int_equal((sparse[i] - heap.words[CLHEAP_HDR_POOL_START]) % heap.words[CLHEAP_HDR_FRAME_UNITS], 0);
        live l = {sparse[i], 1000};
        fill(&heap, &l, i);
    }
    assert_walks(&heap, &s);
    assert_int_equal(s.large_count, 4);
    assert_int_equal(s.large_bytes, 4 * fresh.frame_bytes);
    assert_int_equal(s.class_blocks[kib], 0);

    assert_int_equal(core_heap_malloc_many(&heap, 1024, 32, warp, 1), 32);
    assert_walks(&heap, &s);
    assert_int_equal(s.class_blocks[kib], 1);
    assert_int_equal(s.class_objects[kib], 32);
    assert_int_equal(core_heap_malloc_many(&heap, 1024, 4, more, 2), 4); /* the block's free slots */
    assert_int_equal(core_heap_malloc_many(&heap, 256, 1, small, 3), 1);
    assert_int_equal(core_heap_malloc_many(&heap, 16, 1, small + 1, 3), 1);
    /* 512 B, a class without runs: a piece would waste half of its frame, so a block */
    assert_int_equal(core_heap_malloc_many(&heap, 512, 1, &piece, 3), 1);
    assert_walks(&heap, &s);
    assert_int_equal(s.large_count, 4);
    assert_int_equal(s.class_blocks[kib], 1);
    assert_int_equal(s.class_objects[kib], 36);
    assert_int_equal(s.class_objects[quarter], 1);
    assert_int_equal(s.class_blocks[half], 1);
    assert_int_equal(s.class_objects[half], 1);
    assert_int_equal(s.class_objects[0], 1);

    for (uint32_t i = 0; i < 4; i++) {
        live l = {sparse[i], 1000};
        expect_intact(&heap, &l, i);
    }
    core_heap_free_unit(&heap, sparse[1], 0);
    core_heap_free_unit(&heap, sparse[1], 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE], 1);
    assert_walks(&heap, &s);
    assert_int_equal(s.large_count, 3);
    for (uint32_t i = 0; i < 4; i++) {
        if (i != 1)
            core_heap_free_unit(&heap, sparse[i], 0);
        core_heap_free_unit(&heap, more[i], 0);
    }
    for (uint32_t i = 0; i < 32; i++)
        core_heap_free_unit(&heap, warp[i], 0);
    core_heap_free_unit(&heap, small[0], 0);
    core_heap_free_unit(&heap, small[1], 0);
    core_heap_free_unit(&heap, piece, 0);
    core_heap_trim(&heap);
    assert_merged_back(&heap, &fresh);
    core_heap_destroy(&heap);
}

/* A pool too small for a class's runs, filled one request at a time (as PoCL, with no
 * warp batches, fills it): the class's blocks hold it, not pieces of a frame per object,
 * so the pool fills as for any class (90% and more). */
static void classes_without_runs_fill_their_pool(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {128, 512, 1024};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        core_heap heap;
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = CLHEAP_TIER_ALLOC;
        config.size_bytes = 1u << 20;
        assert_int_equal(core_heap_create(&config, 8, &heap), CLHEAP_SUCCESS);
        clheap_heap_stats s;
        assert_walks(&heap, &s);
        uint32_t c = 0;
        while (s.class_bytes[c] != sizes[k])
            c++;
        assert_int_equal(heap.words[CLHEAP_HDR_CLASS_HINTS + c], 0);
        uint64_t pool = (uint64_t)(heap.words[CLHEAP_HDR_POOL_END] - heap.words[CLHEAP_HDR_POOL_START]) * CLHEAP_UNIT;
        uint64_t count = 0;
        while (core_heap_malloc(&heap, sizes[k], (uint32_t)(count % 64)) != 0)
            count++;
        assert_true(count * sizes[k] * 10 >= pool * 9);
        assert_walks(&heap, &s);
        assert_int_equal(s.used_bytes, s.pool_bytes);
        core_heap_destroy(&heap);
    }
}

/* Objects whose blocks would be 3, 6, 12 or 24 frames (48 B - 384 B), and large
 * allocations of 20 frames, fill a pool one request at a time to 90% and more, as
 * sizes of a power of two frames do. */
static void odd_frame_counts_fill_the_pool(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {48, 96, 192, 384, 20480};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        core_heap heap;
        clheap_heap_stats s;
        make_tier_heap(&heap, 4u << 20, &s);
        uint64_t count = 0;
        while (core_heap_malloc(&heap, sizes[k], (uint32_t)(count % 8)) != 0)
            count++;
        if (count * sizes[k] * 10 < s.pool_bytes * 9)
            fail_msg("%u B objects: NULL at %.1f%% of the pool", sizes[k], 100.0 * count * sizes[k] / s.pool_bytes);
        assert_walks(&heap, &s);
        core_heap_destroy(&heap);
    }
}

/* Large allocations of one size that is not a whole number of segments fill a small
 * pool (best fit over frames) and a large one (the frontiers: more segments than
 * CLHEAP_PAGES_BEST_FIT_SEGMENTS and than a take's looks reach) one request at a time
 * to 90% and more, every byte kept, and give every segment back when freed. Before the
 * frontiers, 17 frames got NULL at 40% of the large pool, 33 at 52% of either, 65 at
 * 51% of the large one. */
static void sizes_between_segments_fill_the_pool(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {17 << 10, 24 << 10, 33 << 10, 63 << 10, 65 << 10, 96 << 10, 200000};
    static live objects[40000];
    for (int large_pool = 0; large_pool < 2; large_pool++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            core_heap heap;
            clheap_heap_stats fresh, s;
            if (large_pool)
                make_heap(&heap, &fresh);
            else
                make_tier_heap(&heap, 4u << 20, &fresh);
            uint32_t count = 0;
            while ((objects[count].unit = core_heap_malloc(&heap, sizes[k], count % 8)) != 0) {
                objects[count].bytes = sizes[k];
                fill(&heap, &objects[count], count);
                assert_true(++count < sizeof objects / sizeof *objects);
            }
            if ((uint64_t)count * sizes[k] * 10 < fresh.pool_bytes * 9)
                fail_msg("%u B in %llu MiB: NULL at %.1f%% of the pool", sizes[k],
                         (unsigned long long)(fresh.pool_bytes >> 20), 100.0 * count * sizes[k] / fresh.pool_bytes);
            assert_walks(&heap, &s);
            for (uint32_t i = 0; i < count; i++) {
                expect_intact(&heap, &objects[i], i);
                core_heap_free_unit(&heap, objects[i].unit, i % 8);
            }
            assert_walks(&heap, &s);
            assert_int_equal(s.free_segments, fresh.free_segments);
            core_heap_destroy(&heap);
        }
}

/* When the sizes asked for shift, the pool is full of sparse blocks of the old size:
 * 128 B objects fill a 4 MiB pool (blocks of 8 frames tile it), 7 of every 8 are freed
 * (no block empties), then 64 B requests come. Each takes a free 128 B slot
 * (clheap_tier_take_larger) until none is left, at 56.25% of the pool requested;
 * with typed classes the first one is NULL. Every object keeps its bytes, and after
 * every free the pool is whole again. */
static void shifted_sizes_take_larger_slots(void **state)
{
    (void)state;
    for (int typed = 0; typed < 2; typed++) {
        core_heap heap;
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = CLHEAP_TIER_ALLOC;
        config.size_bytes = 4u << 20;
        config.typed_classes = (uint32_t)typed;
        assert_int_equal(core_heap_create(&config, 4, &heap), CLHEAP_SUCCESS);
        clheap_heap_stats fresh, s;
        assert_walks(&heap, &fresh);
        static live objects[65536];
        uint32_t count = 0, kept = 0;
        while ((objects[count].unit = core_heap_malloc(&heap, 128, 0)) != 0) { /* one group: in order */
            objects[count].bytes = 128;
            fill(&heap, &objects[count], count);
            assert_true(++count < 65536);
        }
        for (uint32_t i = 0; i < count; i++) {
            if (i % 8)
                core_heap_free_unit(&heap, objects[i].unit, 0);
            else { /* kept: renumbered, as the checks below number them */
                objects[kept] = objects[i];
                fill(&heap, &objects[kept], kept);
                kept++;
            }
        }
        assert_walks(&heap, &s);
        assert_int_equal(s.used_bytes, s.pool_bytes); /* no block emptied: no frame free */
        uint32_t free_slots = count - kept, got = 0, oom = heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY];
        live *small = objects + kept;
        while (got <= free_slots && (small[got].unit = core_heap_malloc(&heap, 64, got % 8)) != 0) {
            small[got].bytes = 64;
            fill(&heap, &small[got], kept + got);
            got++;
        }
        assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], oom + 1);
        assert_int_equal(got, typed ? 0 : free_slots);
        assert_true((kept * 128ull + got * 64ull) * 100 <= fresh.pool_bytes * 57); /* 12.5% + 43.75% */
        assert_walks(&heap, &s);
        for (uint32_t i = 0; i < kept + got; i++) {
            expect_intact(&heap, &objects[i], i);
            core_heap_free_unit(&heap, objects[i].unit, 0);
        }
        core_heap_trim(&heap);
        assert_walks(&heap, &s);
        assert_int_equal(s.free_segments, fresh.free_segments);
        assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE] + heap.words[CLHEAP_HDR_ERR_FREE_NOT_CHUNK], 0);
        core_heap_destroy(&heap);
    }
}

/* Growth (core_heap_grow, as clheap_heap_grow): a heap with runs open, blocks partly
 * used, pieces and large allocations grows; every allocation keeps its unit and bytes,
 * the check passes, the new space serves a request larger than the old pool, and after
 * every free the pool is whole free segments again, as many as a fresh heap of the new
 * size has. */
static void growth_keeps_every_allocation(void **state)
{
    (void)state;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_TIER_ALLOC;
    config.size_bytes = 32u << 20;
    core_heap heap, fresh_big;
    assert_int_equal(core_heap_create(&config, 4, &heap), CLHEAP_SUCCESS);
    static live kept[300 * 32];
    uint32_t count = 0;
    uint64_t rng = 7;
    for (uint32_t i = 0; i < 300; i++) { /* warp batches (runs), single requests, large ones */
        uint32_t n = 1 + next_random(&rng) % 32, units[32];
        uint32_t bytes = i % 50 == 0 ? 70000 : 16u << next_random(&rng) % 9;
        core_heap_malloc_many(&heap, bytes, n, units, i % 64);
        for (uint32_t k = 0; k < n; k++)
            if (units[k]) {
                kept[count] = (live){units[k], bytes};
                fill(&heap, &kept[count], count);
                count++;
            }
    }
    clheap_heap_stats before, after;
    assert_walks(&heap, &before);
    assert_true(before.large_count > 0 && before.run_slots > 0);
    assert_int_equal(core_heap_grow(&heap, 80u << 20), CLHEAP_SUCCESS);
    assert_walks(&heap, &after);
    assert_int_equal(after.run_slots, 0); /* runs closed for the growth */
    assert_int_equal(after.large_count, before.large_count);
    assert_true(after.pool_bytes > 2 * before.pool_bytes);
    for (uint32_t i = 0; i < count; i++)
        expect_intact(&heap, &kept[i], i);
    uint32_t big = core_heap_malloc(&heap, (size_t)before.pool_bytes + (1u << 20), 0);
    assert_int_not_equal(big, 0);
    live l = {big, (uint32_t)before.pool_bytes + (1u << 20)};
    fill(&heap, &l, 99);
    assert_walks(&heap, &after);
    for (uint32_t i = 0; i < count; i++) {
        expect_intact(&heap, &kept[i], i);
        core_heap_free_unit(&heap, kept[i].unit, 0);
    }
    core_heap_free_unit(&heap, big, 0);
    core_heap_trim(&heap);
    assert_walks(&heap, &after);
    config.size_bytes = 80u << 20;
    assert_int_equal(core_heap_create(&config, 4, &fresh_big), CLHEAP_SUCCESS);
    clheap_heap_stats fresh;
    assert_walks(&fresh_big, &fresh);
    assert_int_equal(after.free_segments, fresh.free_segments);
    assert_int_equal(after.pool_bytes, fresh.pool_bytes);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY] + heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE], 0);
    assert_int_equal(core_heap_grow(&heap, 80u << 20), CLHEAP_ERROR_GROW_NOT_LARGER);
    core_heap_destroy(&fresh_big);
    core_heap_destroy(&heap);
}

/* The runs' plan (host/heap_layout.c, plan_runs): in pools under 2 GiB every class's hints
 * hold at most 1/128 of the pool in runs of at most 1024 frames; from 2 GiB at most 1/32
 * in runs of at most 2048, and at 8 GiB on 64 compute units (the H100's hint slots) the
 * 4 KiB class has 64 slots of runs of 32 blocks (4 GiB: 16). Planned only: no pool is
 * made. */
static void large_pools_plan_longer_runs(void **state)
{
    (void)state;
    const uint64_t sizes[] = {32ull << 20, 1ull << 30, (2ull << 30) - (1u << 20), 4ull << 30, 8ull << 30};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = CLHEAP_TIER_ALLOC;
        config.size_bytes = sizes[i];
        clheap_layout layout;
        assert_int_equal(clheap_layout_plan(&config, 64, &layout), CLHEAP_SUCCESS);
        const uint32_t *h = layout.header;
        uint64_t frames = h[CLHEAP_HDR_FRAME_COUNT];
        int large = frames >= (1u << 21);
        for (uint32_t c = 0; c < h[CLHEAP_HDR_CLASS_COUNT]; c++) {
            uint64_t run = (uint64_t)h[CLHEAP_HDR_CLASS_RUN + c] * h[CLHEAP_HDR_CLASS_FRAMES + c];
            assert_true(run <= (large ? 2048u : 1024u) || h[CLHEAP_HDR_CLASS_RUN + c] == 1u);
            assert_true(h[CLHEAP_HDR_CLASS_HINTS + c] * run <= frames / (large ? 32u : 128u));
            if (sizes[i] >= 4ull << 30 && h[CLHEAP_HDR_CLASS_BYTES + c] == 4096) {
                assert_int_equal(h[CLHEAP_HDR_CLASS_HINTS + c], 64);
                assert_int_equal(run, sizes[i] == 8ull << 30 ? 2048 : 1024); /* 32 and 16 blocks */
            }
        }
        assert_int_equal(large, sizes[i] >= 4ull << 30); /* a 2 GiB heap's pool is just under */
        clheap_layout_free(&layout);
    }
}

/* Frees in a small launch (here: work-group 0, tests/core_heap.c) leave their blocks to
 * be settled later while less than a quarter of the pool is used (cl/clheap_blocks.h,
 * clheap_tier_defers), and at once when it is more: then the blocks' frames go back
 * where the next takes look, as the 75%-loaded mixed sizes of test_tier need. Marked
 * blocks hold their frames; a request for the whole pool settles them, and so does a
 * trim. The page tier's count of frames handed out (P5) is checked at every walk. */
static void small_launch_frees_settle_later(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_tier_heap(&heap, 16u << 20, &fresh);
    enum { BYTES = 256 };
    uint32_t n = (uint32_t)(fresh.pool_bytes * 7 / 10 / BYTES);
    live *l = calloc(n, sizeof *l);
    assert_non_null(l);
    for (uint32_t i = 0; i < n; i++) {
        l[i] = (live){core_heap_malloc(&heap, BYTES, 0), BYTES};
        assert_int_not_equal(l[i].unit, 0);
        fill(&heap, &l[i], i);
    }
    assert_walks(&heap, &s);
    assert_true(s.used_bytes * 10 > s.pool_bytes * 7); /* blocks, and runs' slots not handed out */
    for (uint32_t i = 0; i < n; i += 8) /* over a quarter stays used: settled at once */
        core_heap_free_unit(&heap, l[i].unit, 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.unsettled_blocks, 0);
    assert_true(s.used_bytes * 4 > s.pool_bytes);
    for (uint32_t i = 0; i < n; i++) /* down to empty: the last frees are left for later */
        if (i % 8) {
            expect_intact(&heap, &l[i], i);
            core_heap_free_unit(&heap, l[i].unit, 0);
        }
    assert_walks(&heap, &s);
    for (uint32_t c = 0; c < s.class_count; c++)
        assert_int_equal(s.class_objects[c], 0);
    assert_true(s.unsettled_blocks > 0);
    assert_true(s.used_bytes >= s.unsettled_blocks * s.frame_bytes);
    heap.words[CLHEAP_HDR_PAGES_USED]++; /* the count must agree with the bitmaps */
    char what[256] = "";
    assert_int_equal(core_heap_walk(&heap, &s, what, sizeof what), CLHEAP_ERROR_HEAP_CORRUPT);
    heap.words[CLHEAP_HDR_PAGES_USED]--;
    live whole = {core_heap_malloc(&heap, fresh.pool_bytes, 0), (uint32_t)fresh.pool_bytes};
    assert_int_not_equal(whole.unit, 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.unsettled_blocks, 0);
    fill(&heap, &whole, 7);
    expect_intact(&heap, &whole, 7);
    core_heap_free_unit(&heap, whole.unit, 0);
    core_heap_trim(&heap);
    assert_merged_back(&heap, &fresh);
    free(l);
    core_heap_destroy(&heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_steps_keep_placement_and_merge_back),
        cmocka_unit_test(whole_pool_and_segment_edges),
        cmocka_unit_test(large_requests_take_the_best_region),
        cmocka_unit_test(large_request_takes_the_frames_beside_a_run),
        cmocka_unit_test(small_run_past_a_fragmented_low_end),
        cmocka_unit_test(sparse_requests_take_pieces_not_blocks),
        cmocka_unit_test(classes_without_runs_fill_their_pool),
        cmocka_unit_test(odd_frame_counts_fill_the_pool),
        cmocka_unit_test(sizes_between_segments_fill_the_pool),
        cmocka_unit_test(shifted_sizes_take_larger_slots),
        cmocka_unit_test(growth_keeps_every_allocation),
        cmocka_unit_test(large_pools_plan_longer_runs),
        cmocka_unit_test(small_launch_frees_settle_later),
    };
    return cmocka_run_group_tests_name("TierAlloc page tier (C11 core)", tests, NULL, NULL);
}
