/* The allocator core under real threads (built with ThreadSanitizer): 8 threads, each a
 * "work-group", allocate random sizes, stamp their allocation over its whole extent,
 * check the stamp before freeing (any overlap shows as a foreign stamp), and at the end
 * the heap walks clean with nothing in use. The core models the device's orderings
 * (cl/clheap_port.h), so the payload is where a missing fence shows: for the bitmap kinds
 * it is written with plain stores, and a free whose last writes are not ordered before
 * the slot's next owner's is a data race ThreadSanitizer reports. The CircularMalloc
 * family's payload is written with relaxed atomics: a stale walker may read a former
 * header that is payload by now (see clheap_layout.h), on a GPU a single-copy atomic
 * word access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <pthread.h>

#include "core_heap.h"
#include "../cl/clheap_layout.h"

enum { THREADS = 8, OPS = 20000, SLOTS = 32 };

typedef struct worker {
    core_heap *heap;
    uint32_t group;
    unsigned seed;
    uint64_t allocs, nulls, corrupted;
} worker;

static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static int walkers_read_payload(const core_heap *h) { return clheap_allocator_is_circular(h->config.allocator); }

static void stamp(core_heap *h, uint32_t unit, uint32_t words, uint32_t value)
{
    if (!walkers_read_payload(h)) {
        uint32_t *p = core_heap_pointer(h, unit);
        for (uint32_t i = 0; i < words; i++)
            p[i] = value;
        return;
    }
    _Atomic uint32_t *p = core_heap_pointer(h, unit);
    for (uint32_t i = 0; i < words; i++)
        atomic_store_explicit(&p[i], value, memory_order_relaxed);
}

static int stamp_intact(core_heap *h, uint32_t unit, uint32_t words, uint32_t value)
{
    if (!walkers_read_payload(h)) {
        const uint32_t *p = core_heap_pointer(h, unit);
        for (uint32_t i = 0; i < words; i++)
            if (p[i] != value)
                return 0;
        return 1;
    }
    _Atomic uint32_t *p = core_heap_pointer(h, unit);
    for (uint32_t i = 0; i < words; i++)
        if (atomic_load_explicit(&p[i], memory_order_relaxed) != value)
            return 0;
    return 1;
}

static void *work(void *arg)
{
    worker *w = arg;
    uint32_t unit[SLOTS] = {0}, words[SLOTS] = {0};
    for (int op = 0; op < OPS; op++) {
        unsigned r = next_random(&w->seed);
        unsigned s = r % SLOTS;
        uint32_t value = (w->group << 24) | s;
        size_t bytes = w->heap->config.allocator == CLHEAP_BITMAP_ALLOC ? 4 + (r >> 5) % 13
                       : w->heap->config.allocator == CLHEAP_TIER_ALLOC && r % 8 == 0 ? 16384 + (r >> 5) % 40000 /* page tier */
                                                                            : 4 + (r >> 5) % 4093;
        if (unit[s] && r % 4 == 2 && !walkers_read_payload(w->heap)) { /* realloc: the kept words survive */
            uint32_t moved = core_heap_realloc(w->heap, unit[s], bytes, w->group), kept = (uint32_t)(bytes / 4);
            if (!moved) {
                w->nulls++;
                continue;
            }
            w->corrupted += !stamp_intact(w->heap, moved, kept < words[s] ? kept : words[s], value);
            w->corrupted += core_heap_usable(w->heap, moved) < bytes;
            unit[s] = moved;
            words[s] = kept;
            stamp(w->heap, moved, kept, value);
            w->allocs++;
            continue;
        }
        if (unit[s]) {
            w->corrupted += !stamp_intact(w->heap, unit[s], words[s], value);
            core_heap_free_unit(w->heap, unit[s], w->group);
            unit[s] = 0;
            continue;
        }
        if (w->heap->config.allocator == CLHEAP_TIER_ALLOC && r % 16 == 3) { /* aligned, up to 4 KiB */
            size_t alignment = (size_t)32 << (r >> 12) % 8;
            unit[s] = core_heap_aligned(w->heap, alignment, bytes, w->group);
            w->nulls += !unit[s];
            if (unit[s]) {
                w->allocs++;
                w->corrupted += (uintptr_t)core_heap_pointer(w->heap, unit[s]) % alignment != 0;
                words[s] = (uint32_t)(bytes / 4);
                stamp(w->heap, unit[s], words[s], value);
            }
            continue;
        }
        /* Now and then a batch into the free slots from s on, as a warp asks (TierAlloc). */
        uint32_t batch[32], n = 1;
        while (r % 4 == 1 && n < 32 && s + n < SLOTS && !unit[s + n])
            n++;
        core_heap_malloc_many(w->heap, bytes, n, batch, w->group);
        for (uint32_t i = 0; i < n; i++) {
            unit[s + i] = batch[i];
            if (!batch[i]) {
                w->nulls++;
                continue;
            }
            w->allocs++;
            words[s + i] = (uint32_t)(bytes / 4);
            stamp(w->heap, unit[s + i], words[s + i], (w->group << 24) | (s + i));
        }
    }
    for (unsigned s = 0; s < SLOTS; s++) {
        if (unit[s]) {
            w->corrupted += !stamp_intact(w->heap, unit[s], words[s], (w->group << 24) | s);
            core_heap_free_unit(w->heap, unit[s], w->group);
        }
    }
    return NULL;
}

/* Built with -DCLHEAP_ATOMICS64=0 (test_core_threads_atomics32): the core of a device
 * without 64-bit atomics, whose bitmap words are split (cl/clheap_port.h); the fused
 * variants need 64-bit ones and are skipped. */
#if defined(CLHEAP_ATOMICS64) && !CLHEAP_ATOMICS64
#define FUSED_BUILDS 0
#else
#define FUSED_BUILDS 1
#endif

static void run_threads(clheap_allocator allocator)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = allocator;
    config.size_bytes = 1 << 20; /* small: threads meet, and the heap fills at times */
#if CLHEAP_TIER_SPARE_AT || CLHEAP_TIER_KEEP_ITEMS
    /* test_core_threads_spares and _keep: a pool whose runs the classes can afford, mostly
     * free, so hints cross their quarters and open spares, and frees keep emptied blocks
     * (cl/clheap_tier.h, "Spares", "Keeping"). */
    if (allocator == CLHEAP_TIER_ALLOC)
        config.size_bytes = 64u << 20;
#endif
    config.offset_count = 4;
    core_heap heap;
    assert_int_equal(core_heap_create(&config, 4, &heap), CLHEAP_SUCCESS);
    if (clheap_allocator_is_bitmap(allocator)) /* the split word's layout where it is built */
        assert_int_equal(heap.layout.header[CLHEAP_HDR_ATOMIC_BITS], FUSED_BUILDS ? 64 : 32);
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){&heap, (uint32_t)i, 99u + 31u * (unsigned)i, 0, 0, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    }
    uint64_t allocs = 0, nulls = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(workers[i].corrupted, 0);
        allocs += workers[i].allocs;
        nulls += workers[i].nulls;
    }
    char what[256];
    clheap_heap_stats s;
    clheap_status status = core_heap_walk(&heap, &s, what, sizeof what);
    if (status != CLHEAP_SUCCESS)
        fail_msg("%s", what);
    if (allocator == CLHEAP_BLOCK_ALLOC || allocator == CLHEAP_TIER_ALLOC) {
        /* Every object is gone; an empty block may stay allocated if its invalidation
         * lost a race with a reservation that was then rolled back. */
        for (uint32_t c = 0; c < s.class_count; c++)
            assert_int_equal(s.class_objects[c], 0);
    } else {
        assert_int_equal(s.used_chunks, 0);
        assert_int_equal(s.free_bytes, s.pool_bytes);
    }
    assert_int_equal(s.errors.out_of_memory + s.errors.contended, nulls);
    assert_int_equal(s.errors.double_free + s.errors.free_not_chunk + s.errors.free_outside +
                         s.errors.free_unaligned + s.errors.bad_size,
                     0);
    assert_true(allocs > 0);
    /* Giving up after bounded retries must stay rare: a fused free that left a live
     * header pointing at a dead one for long once made most mallocs give up. */
    assert_true((uint64_t)s.errors.contended * 100 < allocs);
    print_message("%s: %llu allocations, %llu NULL (%u contended) by %d threads\n",
                  clheap_allocator_name(allocator), (unsigned long long)allocs,
                  (unsigned long long)nulls, s.errors.contended, THREADS);
    core_heap_destroy(&heap);
}

static void cmalloc_threads(void **state) { (void)state; run_threads(CLHEAP_CMALLOC); }
static void cfmalloc_threads(void **state)
{
    (void)state;
    if (!FUSED_BUILDS)
        skip();
    run_threads(CLHEAP_CFMALLOC);
}
static void cmmalloc_threads(void **state) { (void)state; run_threads(CLHEAP_CMMALLOC); }
static void cfmmalloc_threads(void **state)
{
    (void)state;
    if (!FUSED_BUILDS)
        skip();
    run_threads(CLHEAP_CFMMALLOC);
}
static void bitmap_threads(void **state) { (void)state; run_threads(CLHEAP_BITMAP_ALLOC); }
static void blocks_threads(void **state) { (void)state; run_threads(CLHEAP_BLOCK_ALLOC); }
static void tier_threads(void **state) { (void)state; run_threads(CLHEAP_TIER_ALLOC); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cmalloc_threads),
        cmocka_unit_test(cfmalloc_threads),
        cmocka_unit_test(cmmalloc_threads),
        cmocka_unit_test(cfmmalloc_threads),
        cmocka_unit_test(bitmap_threads),
        cmocka_unit_test(blocks_threads),
        cmocka_unit_test(tier_threads),
    };
    return cmocka_run_group_tests_name("core_threads", tests, NULL, NULL);
}
