/* The CircularMalloc family's roving offset (clheap_circular_moves_rover), on the C11
 * core: a claim from a chunk of the binary pre-split's last levels that is small for
 * its request leaves a single offset where it was; a claim from a large chunk, or of a
 * request tiny against the chunk, moves it past the claimed chunk; the multi variants'
 * offsets move on every claim. The offset is set by hand to the chunk to be claimed, so
 * each case knows which chunk its malloc takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core_heap.h"
#include "core_sound.h"
#include "../cl/clheap_port.h"
#include "../cl/clheap_layout.h"
#include "../cl/clheap_common.h"
#include "../cl/clheap_circular.h"

static void make_heap(core_heap *heap, clheap_allocator a)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.size_bytes = 16u << 20;
    assert_int_equal(core_heap_create(&config, 1, heap), CLHEAP_SUCCESS);
    assert_int_equal(heap->words[CLHEAP_HDR_PRESPLIT], CLHEAP_PRESPLIT_BINARY);
}

/* The first chunk of pre-split level `level` of sub-heap 0: its unit and units. */
static uint32_t level_chunk(core_heap *heap, uint32_t level, uint32_t *units)
{
    uint32_t unit;
    clheap_presplit_chunk(heap->words, (1u << level) - 1u, &unit, units);
    return unit;
}

/* Points offset 0 at `unit`, mallocs `payload` units there and returns where the offset
 * is afterwards; the malloc must have taken that chunk. */
static uint32_t offset_after_claim(core_heap *heap, uint32_t unit, uint32_t payload)
{
    heap->words[CLHEAP_HDR_OFFSETS] = unit;
    uint32_t got = core_heap_malloc(heap, (size_t)payload * CLHEAP_UNIT, 0);
    assert_int_equal(got, unit + 1u); /* the payload follows the chunk's header */
    return heap->words[CLHEAP_HDR_OFFSETS];
}

static void single_offset_stays_off_small_chunks(void **state)
{
    (void)state;
    static const clheap_allocator lists[] = {CLHEAP_CMALLOC, CLHEAP_CFMALLOC};
    for (int a = 0; a < 2; a++) {
        core_heap heap;
        make_heap(&heap, lists[a]);
        uint32_t levels = heap.words[CLHEAP_HDR_PRESPLIT_LEVELS], units;
        uint32_t floor_units = heap.words[CLHEAP_HDR_PRESPLIT_ARG] >> (levels * 3u / 4u);
        /* the last level: smaller than the floor; a request of over an eighth of it */
        uint32_t small = level_chunk(&heap, levels - 1u, &units);
        assert_true(units < floor_units && units >= 8u);
        uint32_t need = units / 2u; /* header + payload */
        assert_int_equal(offset_after_claim(&heap, small, need - 1u), small);
        /* a request of at most an eighth of the next small chunk moves it past the claim */
        uint32_t next_small = small + units;
        assert_int_equal(offset_after_claim(&heap, next_small, units / 8u - 1u), next_small + units / 8u);
        /* the root chunk, above the floor: the offset names the rest after the claim */
        uint32_t root = level_chunk(&heap, 0u, &units);
        assert_true(units >= floor_units);
        assert_int_equal(offset_after_claim(&heap, root, need - 1u), root + need);
        core_heap_sound(&heap, NULL);
        core_heap_destroy(&heap);
    }
}

static void multi_offsets_move_on_every_claim(void **state)
{
    (void)state;
    static const clheap_allocator lists[] = {CLHEAP_CMMALLOC, CLHEAP_CFMMALLOC};
    for (int a = 0; a < 2; a++) {
        core_heap heap;
        make_heap(&heap, lists[a]);
        uint32_t levels = heap.words[CLHEAP_HDR_PRESPLIT_LEVELS], units;
        uint32_t small = level_chunk(&heap, levels - 1u, &units);
        uint32_t need = units / 2u;
        assert_true(need >= 2u);
        assert_int_equal(offset_after_claim(&heap, small, need - 1u), small + need);
        core_heap_sound(&heap, NULL);
        core_heap_destroy(&heap);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_offset_stays_off_small_chunks),
        cmocka_unit_test(multi_offsets_move_on_every_claim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
