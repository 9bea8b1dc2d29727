/* BitmapAlloc's last look (cl/clheap_blocks.h): built with CLHEAP_BM_FIND_TRIES=0, so
 * the random descents never run and every malloc is served, or refused, by the sweep
 * alone. Proves that the sweep finds free slots (a heap fills to its last slot), that a
 * NULL while slots are free is counted contended, and that only a full bitmap is counted
 * out of memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "core_sound.h"
#include "../cl/clheap_port.h"
#include "../cl/clheap_layout.h"
#include "../cl/clheap_common.h"
#include "../cl/clheap_blocks.h"

#if CLHEAP_BM_FIND_TRIES != 0
#error "built with -DCLHEAP_BM_FIND_TRIES=0: only the sweep may serve"
#endif

enum { SLOT_BYTES = 256 };

static void make_heap(core_heap *heap, uint64_t bytes)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_BITMAP_ALLOC;
    config.size_bytes = bytes;
    config.slot_bytes = SLOT_BYTES;
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
}

static uint32_t slot_count(const core_heap *heap)
{
    return heap->words[CLHEAP_BM_FREE + CLHEAP_BM_BITS];
}

static uint32_t counter(const core_heap *heap, int which)
{
    return heap->words[which];
}

static int compare_units(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Few enough containers for one sweep to visit them all: every slot is found. */
static void sweep_fills_every_slot(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 1u << 20);
    uint32_t slots = slot_count(&heap);
    assert_true(slots > 64 && (slots + 63) / 64 <= CLHEAP_BITMAP_SWEEP);
    uint32_t *units = calloc(slots + 1, sizeof *units);
    assert_non_null(units);
    uint32_t got = 0;
    for (uint32_t i = 0; i <= slots; i++) {
        uint32_t unit = core_heap_malloc(&heap, SLOT_BYTES, i % 7);
        if (!unit)
            break;
        units[got++] = unit;
    }
    assert_int_equal(got, slots);
    qsort(units, got, sizeof *units, compare_units);
    for (uint32_t i = 1; i < got; i++)
        assert_true(units[i] > units[i - 1]); /* each slot handed out once */
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 1);
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_CONTENDED), 0);
    core_heap_sound(&heap, "full");
    /* One slot back: the sweep finds it again. */
    core_heap_free_unit(&heap, units[got / 2], 0);
    assert_int_equal(core_heap_malloc(&heap, SLOT_BYTES, 3), units[got / 2]);
    core_heap_sound(&heap, "refilled");
    free(units);
    core_heap_destroy(&heap);
}

/* More containers than a sweep visits: a sweep that misses the free slots returns NULL
 * counted contended, one that passes one takes it, and a full bitmap is out of memory. */
static void missed_free_slot_counts_contended(void **state)
{
    (void)state;
    core_heap heap;
    make_heap(&heap, 8u << 20);
    uint32_t slots = slot_count(&heap);
    assert_true((slots + 63) / 64 >= 2 * CLHEAP_BITMAP_SWEEP);
    /* Filling takes many windows: a sweep whose containers are full returns NULL. */
    uint32_t last = 0, got = 0;
    for (uint32_t group = 0; got < slots && group < 64u * slots; group++) {
        uint32_t unit = core_heap_malloc(&heap, SLOT_BYTES, group);
        if (unit) {
            last = unit;
            got++;
        }
    }
    assert_int_equal(got, slots);
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 0); /* slots were free at every NULL */
    uint32_t contended_before = counter(&heap, CLHEAP_HDR_ERR_CONTENDED);
    assert_int_equal(core_heap_malloc(&heap, SLOT_BYTES, 0), 0);
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 1); /* full: out of memory */
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_CONTENDED), contended_before);
    core_heap_free_unit(&heap, last, 0);
    uint32_t nulls = 0, served = 0;
    for (uint32_t group = 0; group < 256; group++) {
        uint32_t unit = core_heap_malloc(&heap, SLOT_BYTES, group);
        if (unit) {
            assert_int_equal(unit, last);
            served++;
            core_heap_free_unit(&heap, unit, group);
        } else {
            nulls++;
        }
    }
    assert_true(nulls > 0 && served > 0); /* both cases were met */
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_CONTENDED) - contended_before, nulls);
    assert_int_equal(counter(&heap, CLHEAP_HDR_ERR_OUT_OF_MEMORY), 1);
    core_heap_sound(&heap, "after the probes");
    core_heap_destroy(&heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_fills_every_slot),
        cmocka_unit_test(missed_free_slot_counts_contended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
