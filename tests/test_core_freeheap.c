/* FreeHeap (cl/clheap_freeheap.h) through the C11 build of the core. It is serial, so one
 * thread checks every property exactly: the heap check (F1-F7: boundary tags, the
 * free-heap's entries and order, no two adjacent free blocks) after every step, every
 * allocation's bytes kept, strided addresses inside their blocks, fill until NULL, and
 * bad input that changes nothing but its counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "../cl/clheap_port.h"
#include "../cl/clheap_layout.h"
#include "../cl/clheap_common.h"
#include "../cl/clheap_freeheap.h"

enum { STEPS = 4000, MAX_LIVE = 512 };

typedef struct live {
    uint32_t unit, bytes, id;
} live;

static uint32_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

static void make_heap(core_heap *heap, uint64_t bytes, clheap_heap_stats *fresh)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_FREE_HEAP;
    config.size_bytes = bytes;
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
    char what[256] = "";
    if (core_heap_walk(heap, fresh, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("fresh heap: %s", what);
    assert_int_equal(fresh->free_chunks, 1);
    assert_int_equal(fresh->largest_free_bytes, fresh->pool_bytes);
}

static void assert_walks(core_heap *heap, clheap_heap_stats *s)
{
    char what[256] = "";
    if (core_heap_walk(heap, s, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check: %s", what);
}

static void fill(core_heap *heap, const live *l)
{
    memset(core_heap_pointer(heap, l->unit), (int)(l->id & 0xff), l->bytes);
}

static void expect_intact(core_heap *heap, const live *l)
{
    const unsigned char *p = core_heap_pointer(heap, l->unit);
    for (uint32_t i = 0; i < l->bytes; i++)
        if (p[i] != (unsigned char)(l->id & 0xff))
            fail_msg("allocation %u (%u B at unit %u) changed at byte %u", l->id, l->bytes, l->unit, i);
}

/* Payload bytes of the block whose payload starts at `unit`. */
static uint64_t payload_bytes(const core_heap *heap, uint32_t unit)
{
    return (uint64_t)heap->words[(size_t)(unit - 1u) * 4u + CLHEAP_FH_WORD_SIZE] * CLHEAP_UNIT;
}

/* Random mallocs (plain and strided) and frees, the heap checked after every step. */
static void random_steps_keep_every_invariant(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, 4u << 20, &fresh);
    static live model[MAX_LIVE];
    uint32_t n = 0, nulls = 0;
    uint64_t seed = 0x2545F4914F6CDD1Dull, requested = 0;
    for (uint32_t step = 0; step < STEPS; step++) {
        uint32_t r = next_random(&seed);
        if (n < MAX_LIVE && (n == 0 || r % 8 < 5)) {
            uint32_t bytes = 1u + next_random(&seed) % (1u << (4 + r % 14)); /* 1 B .. 128 KiB */
            uint32_t unit;
            if (r & 0x100) { /* strided: count elements of stride bytes */
                uint32_t stride = 1u + next_random(&seed) % 100u, count = 1u + bytes / stride;
                clheap_size address = clheap_freeheap_malloc_strided(heap.words, count, stride, &unit);
                if (address) {
                    uint64_t begin = (uint64_t)unit * CLHEAP_UNIT;
                    assert_true(address * stride >= begin);
                    assert_true((address + count) * stride <= begin + payload_bytes(&heap, unit));
                    bytes = count * stride;
                } else {
                    assert_int_equal(unit, 0);
                }
            } else if (r & 0x200) { /* aligned: 32 B .. 8 KiB (cl/clheap_resize.h) */
                size_t alignment = (size_t)32 << (r >> 12) % 9;
                unit = core_heap_aligned(&heap, alignment, bytes, 0);
                assert_true(!unit || (uintptr_t)core_heap_pointer(&heap, unit) % alignment == 0);
                assert_true(!unit || core_heap_usable(&heap, unit) >= bytes);
            } else {
                unit = core_heap_malloc(&heap, bytes, 0);
            }
            if (!unit) {
                nulls++;
            } else {
                model[n] = (live){unit, bytes, step};
                fill(&heap, &model[n]);
                requested += bytes;
                n++;
            }
        } else if (r & 0x400) { /* realloc to 1 B .. 64 KiB: the kept bytes survive */
            uint32_t k = next_random(&seed) % n, bytes = 1u + next_random(&seed) % (1u << (4 + r % 13));
            uint32_t moved = core_heap_realloc(&heap, model[k].unit, bytes, 0);
            if (!moved) {
                nulls++;
                expect_intact(&heap, &model[k]);
            } else {
                live kept = {moved, bytes < model[k].bytes ? bytes : model[k].bytes, model[k].id};
                expect_intact(&heap, &kept);
                requested = requested - model[k].bytes + bytes;
                model[k] = (live){moved, bytes, step};
                fill(&heap, &model[k]);
            }
        } else {
            uint32_t k = next_random(&seed) % n;
            expect_intact(&heap, &model[k]);
            core_heap_free_unit(&heap, model[k].unit, 0);
            requested -= model[k].bytes;
            model[k] = model[--n];
        }
        assert_walks(&heap, &s);
        assert_int_equal(s.used_chunks, n);
        assert_int_equal(s.requested_bytes, requested);
    }
    assert_true(n > 0);
    for (uint32_t k = 0; k < n; k++) {
        expect_intact(&heap, &model[k]);
        core_heap_free_unit(&heap, model[k].unit, 0);
        assert_walks(&heap, &s);
    }
    assert_int_equal(s.free_chunks, 1); /* everything merged back */
    assert_int_equal(s.largest_free_bytes, fresh.pool_bytes);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], nulls);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE] + heap.words[CLHEAP_HDR_ERR_CONTENDED], 0);
    core_heap_destroy(&heap);
}

/* Three neighbours freed middle, left, right: one free block each time, never two
 * adjacent; then the heap is one block again. */
static void free_merges_with_both_neighbours(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, 1u << 20, &fresh);
    uint32_t u[4];
    for (int i = 0; i < 4; i++)
        u[i] = core_heap_malloc(&heap, 1000, 0);
    assert_int_equal(u[1], u[0] + 63 + 2); /* 1000 B = 63 units, then a footer and a header */
    core_heap_free_unit(&heap, u[1], 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_chunks, 2); /* u[1], and the tail after u[3] */
    core_heap_free_unit(&heap, u[0], 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_chunks, 2);
    assert_int_equal(s.free_bytes - s.largest_free_bytes, 2 * 65 * CLHEAP_UNIT);
    core_heap_free_unit(&heap, u[2], 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_chunks, 2);
    core_heap_free_unit(&heap, u[3], 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_chunks, 1);
    assert_int_equal(s.largest_free_bytes, fresh.pool_bytes);
    core_heap_destroy(&heap);
}

/* 1 KiB requests until NULL: the pool less one header and footer per block is handed
 * out, the NULL is counted as out of memory; all freed, the pool is one block. */
static void fill_until_null_then_free_all(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, s;
    make_heap(&heap, 2u << 20, &fresh);
    uint32_t max = (uint32_t)(fresh.pool_bytes / 1024u), n = 0;
    uint32_t *units = malloc(max * sizeof *units);
    assert_non_null(units);
    for (;;) {
        uint32_t unit = core_heap_malloc(&heap, 1024, 0);
        if (!unit)
            break;
        assert_true(n < max);
        units[n++] = unit;
    }
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_OUT_OF_MEMORY], 1);
    assert_walks(&heap, &s);
    assert_true(s.free_bytes < 1024 + 2 * CLHEAP_UNIT); /* not even one more block */
    assert_int_equal(n, fresh.pool_bytes / (1024 + 2 * CLHEAP_UNIT));
    for (uint32_t i = 0; i < n; i += 2) /* every other one: nothing to merge */
        core_heap_free_unit(&heap, units[i], 0);
    assert_walks(&heap, &s);
    for (uint32_t i = 1; i < n; i += 2)
        core_heap_free_unit(&heap, units[i], 0);
    assert_walks(&heap, &s);
    assert_int_equal(s.free_chunks, 1);
    free(units);
    core_heap_destroy(&heap);
}

/* Each bad input is counted once and changes nothing else. */
static void bad_input_changes_nothing(void **state)
{
    (void)state;
    core_heap heap;
    clheap_heap_stats fresh, before, after;
    make_heap(&heap, 1u << 20, &fresh);
    uint32_t kept = core_heap_malloc(&heap, 100, 0), freed = core_heap_malloc(&heap, 100, 0);
    core_heap_malloc(&heap, 100, 0); /* so that `freed` stays a block of its own */
    core_heap_free_unit(&heap, freed, 0);
    assert_walks(&heap, &before);
    uint32_t handle = 7;
    assert_int_equal(clheap_freeheap_malloc_strided(heap.words, 0, 8, &handle), 0);
    assert_int_equal(handle, 0);
    assert_int_equal(clheap_freeheap_malloc_strided(heap.words, 8, 0, &handle), 0);
    assert_int_equal(core_heap_malloc(&heap, 0, 0), 0);
    assert_int_equal(core_heap_malloc(&heap, fresh.pool_bytes + 1, 0), 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_BAD_SIZE], 4);
    core_heap_free_unit(&heap, freed, 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_DOUBLE_FREE], 1);
    core_heap_free_unit(&heap, kept + 1, 0); /* inside an allocation */
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_FREE_NOT_CHUNK], 1);
    core_heap_free_unit(&heap, heap.words[CLHEAP_HDR_POOL_START], 0); /* the pool's first header */
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_FREE_OUTSIDE], 1);
    heap.words[CLHEAP_HDR_FH_LOCK] = 1; /* as if another work-item were inside */
    assert_int_equal(core_heap_malloc(&heap, 100, 0), 0);
    core_heap_free_unit(&heap, kept, 0);
    assert_int_equal(heap.words[CLHEAP_HDR_ERR_CONTENDED], 2);
    heap.words[CLHEAP_HDR_FH_LOCK] = 0;
    assert_walks(&heap, &after);
    assert_int_equal(after.used_chunks, before.used_chunks);
    assert_int_equal(after.free_bytes, before.free_bytes);
    assert_int_equal(after.free_chunks, before.free_chunks);
    assert_int_equal(after.errors.out_of_memory, 0);
    core_heap_destroy(&heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_steps_keep_every_invariant),
        cmocka_unit_test(free_merges_with_both_neighbours),
        cmocka_unit_test(fill_until_null_then_free_all),
        cmocka_unit_test(bad_input_changes_nothing),
    };
    return cmocka_run_group_tests_name("FreeHeap core", tests, NULL, NULL);
}
