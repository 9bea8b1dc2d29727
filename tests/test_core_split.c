/* TierAlloc on split words (built with CLHEAP_ATOMICS64=0: a device without 64-bit
 * atomics, cl/clheap_port.h), one thread: with no run hints, a block opening takes a
 * batch of blocks (cl/clheap_blocks.h, clheap_block_batch); the next requests of the class
 * are served from the batch with no page-tier take, and the blocks none took go back to
 * the page tier when the heap is trimmed; a warp's worth takes a larger batch; where no
 * batch fits, one block. Pieces only in small pools. */
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

#if CLHEAP_ATOMICS64
#error "test_core_split is built with CLHEAP_ATOMICS64=0"
#endif

static void make_heap(core_heap *heap, uint64_t bytes)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_TIER_ALLOC;
    config.size_bytes = bytes;
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
}

static void all_whole(core_heap *heap)
{
    clheap_heap_stats s = core_heap_sound(heap, NULL);
    assert_int_equal(s.free_segments * s.segment_frames, heap->words[CLHEAP_HDR_FRAME_COUNT]);
    assert_int_equal(s.unsettled_blocks, 0);
}

/* Each 16 B request alone (as PoCL's work-items make them): the first opens a batch; the
 * batch's slots serve the next ones without another take; one more opens the next batch. */
static void opening_serves_the_class_from_a_batch(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20);
    uint32_t *h = heap.words, c = clheap_class_for(h, 16);
    uint32_t batch = clheap_block_batch(h, c, 1u), frames = h[CLHEAP_HDR_CLASS_FRAMES + c];
    uint32_t slots = batch * h[CLHEAP_HDR_CLASS_CAPACITY + c], used = clheap_pages_used(h);
    assert_true(batch > 1u);
    assert_int_equal(batch * frames, CLHEAP_TIER_BATCH_FRAMES < h[CLHEAP_HDR_CLASS_RUN + c] * frames
                                         ? CLHEAP_TIER_BATCH_FRAMES
                                         : h[CLHEAP_HDR_CLASS_RUN + c] * frames);
    uint32_t *units = calloc(slots + 1u, sizeof *units);
    assert_non_null(units);
    units[0] = core_heap_malloc(&heap, 16, 0);
    assert_int_not_equal(units[0], 0);
    assert_int_equal(clheap_pages_used(h), used + batch * frames); /* one take for the batch */
    clheap_heap_stats s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.class_blocks[c], batch);
    assert_int_equal(s.unsettled_blocks, batch - 1u); /* the others: findable, marked */
    for (uint32_t i = 1; i < slots; i++) {
        units[i] = core_heap_malloc(&heap, 16, i);
        assert_int_not_equal(units[i], 0);
    }
    assert_int_equal(clheap_pages_used(h), used + batch * frames); /* all from the batch */
    units[slots] = core_heap_malloc(&heap, 16, slots);
    assert_int_not_equal(units[slots], 0);
    assert_int_equal(clheap_pages_used(h), used + 2u * batch * frames); /* the next batch */
    for (uint32_t i = 0; i <= slots; i++)
        for (uint32_t j = i + 1u; j <= slots; j++)
            if (units[i] == units[j])
                fail_msg("requests %u and %u got one slot (unit %u)", i, j, units[i]);
    s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.class_objects[c], slots + 1u);
    for (uint32_t i = 0; i <= slots; i++)
        core_heap_free_unit(&heap, units[i], 1);
    core_heap_trim(&heap);
    all_whole(&heap);
    free(units);
    core_heap_destroy(&heap);
}

/* A batch whose other blocks nobody takes: freeing the one object gives its block back,
 * and the trim gives back the rest, in every class. */
static void blocks_no_request_took_go_back_at_trim(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20);
    uint32_t *h = heap.words, batched = 0;
    for (uint32_t c = 0; c < h[CLHEAP_HDR_CLASS_COUNT]; c++) {
        uint32_t bytes = h[CLHEAP_HDR_CLASS_BYTES + c], unit = core_heap_malloc(&heap, bytes, c);
        assert_int_not_equal(unit, 0);
        clheap_heap_stats s = core_heap_sound(&heap, NULL);
        /* a lone request of a class whose block would be mostly unused may take a piece,
         * frames of its own (cl/clheap_tier.h, clheap_tier_wants_pieces): no block */
        if (s.class_blocks[c])
            assert_int_equal(s.class_blocks[c], clheap_block_batch(h, c, 1u));
        batched += s.class_blocks[c] > 1u;
        core_heap_free_unit(&heap, unit, 1);
        core_heap_trim(&heap);
        all_whole(&heap);
    }
    assert_true(batched > 1u);
    core_heap_destroy(&heap);
}

/* A warp's worth of one class (core_heap_malloc_many: clheap_tier_malloc_warp's steps)
 * wants a whole block: its opening takes CLHEAP_TIER_BATCH_WHOLE_FRAMES' batch, larger than
 * a lone request's in a pool whose runs allow it; all of it goes back at trim. */
static void whole_block_requests_take_the_larger_batch(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 256u << 20);
    uint32_t *h = heap.words, c = clheap_class_for(h, 16), capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c];
    uint32_t whole = clheap_block_batch(h, c, capacity), used = clheap_pages_used(h), units[32];
    assert_true(capacity <= 32u);
    assert_true(whole > clheap_block_batch(h, c, capacity - 1u));
    assert_int_equal(core_heap_malloc_many(&heap, 16, capacity, units, 0), capacity);
    for (uint32_t i = 0; i < capacity; i++)
        assert_int_not_equal(units[i], 0);
    assert_int_equal(clheap_pages_used(h), used + whole * h[CLHEAP_HDR_CLASS_FRAMES + c]);
    clheap_heap_stats s = core_heap_sound(&heap, NULL);
    assert_int_equal(s.class_blocks[c], whole);
    assert_int_equal(s.unsettled_blocks, whole - 1u);
    for (uint32_t i = 0; i < capacity; i++)
        core_heap_free_unit(&heap, units[i], 1);
    core_heap_trim(&heap);
    all_whole(&heap);
    core_heap_destroy(&heap);
}

/* Where no batch fits (one free frame left), the opening takes one block: the batch's
 * take fails, and the same call site takes the frames of one (clheap_block_new). */
static void an_opening_where_no_batch_fits_takes_one_block(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20);
    uint32_t *h = heap.words, c = clheap_class_for(h, 16), frames = h[CLHEAP_HDR_CLASS_FRAMES + c];
    uint32_t segment_bytes = CLHEAP_PAGES_SEGMENT * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    assert_true(clheap_block_batch(h, c, 1u) > 1u);
    uint32_t count = h[CLHEAP_HDR_FRAME_COUNT] / CLHEAP_PAGES_SEGMENT, n = 0;
    uint32_t *units = calloc(count + 1u, sizeof *units);
    assert_non_null(units);
    while (n <= count && (units[n] = core_heap_malloc(&heap, segment_bytes, n)) != 0u)
        n++;
    assert_int_equal(n, count); /* every segment taken whole */
    core_heap_free_unit(&heap, units[n - 1u], 1);
    units[n - 1u] = core_heap_malloc(&heap, segment_bytes - frames * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT, 0);
    assert_int_not_equal(units[n - 1u], 0);
    assert_int_equal(clheap_pages_used(h), h[CLHEAP_HDR_FRAME_COUNT] - frames); /* one block's frames free */
    uint32_t small = core_heap_malloc(&heap, 16, 0);
    assert_int_not_equal(small, 0);
    assert_int_equal(clheap_pages_used(h), h[CLHEAP_HDR_FRAME_COUNT]);
    clheap_heap_stats st = core_heap_sound(&heap, NULL);
    assert_int_equal(st.class_blocks[c], 1);
    assert_int_equal(st.unsettled_blocks, 0);
    core_heap_free_unit(&heap, small, 1);
    for (uint32_t i = 0; i < n; i++)
        core_heap_free_unit(&heap, units[i], 1);
    core_heap_trim(&heap);
    all_whole(&heap);
    free(units);
    core_heap_destroy(&heap);
}

/* Pieces (cl/clheap_tier.h, clheap_tier_wants_pieces) where the pool is small, judged by
 * its size alone: split words give no hints in any pool. The rule read on a 64 MiB heap,
 * then with its frame count past CLHEAP_TIER_PIECES_POOL_FRAMES (the rule reads no more). */
static void pieces_only_in_small_pools(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 64u << 20);
    uint32_t *h = heap.words, c = clheap_class_for(h, 4096), frames = h[CLHEAP_HDR_FRAME_COUNT];
    assert_int_equal(h[CLHEAP_HDR_CLASS_HINTS + c], 0);
    assert_true(clheap_tier_wants_pieces(h, c, 1u));
    h[CLHEAP_HDR_FRAME_COUNT] = CLHEAP_TIER_PIECES_POOL_FRAMES + 64u;
    assert_false(clheap_tier_wants_pieces(h, c, 1u));
    h[CLHEAP_HDR_FRAME_COUNT] = frames;
    core_heap_destroy(&heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opening_serves_the_class_from_a_batch),
        cmocka_unit_test(blocks_no_request_took_go_back_at_trim),
        cmocka_unit_test(whole_block_requests_take_the_larger_batch),
        cmocka_unit_test(an_opening_where_no_batch_fits_takes_one_block),
        cmocka_unit_test(pieces_only_in_small_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
