/* libFuzzer harness for the allocator core (C11 build of cl/): each input picks an
 * allocator and pre-split, then a sequence of mallocs, frees, bad frees and growths on a
 * heap of 1 MiB (up to 4 MiB grown). A model tracks the live allocations; after every step the heap must walk clean
 * and agree with the model, allocations must be disjoint, inside the pool, and keep the
 * stamp written into them, and each bad free must be counted exactly once.
 *   CI: fuzz_core -runs=N -seed=1 (see tests/CMakeLists.txt); by hand: fuzz_core corpus/ */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_heap.h"
#include "../cl/clheap_layout.h"

enum { MAX_LIVE = 4096 };

typedef struct live {
    uint32_t unit, bytes, stamp;
} live;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_core: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static void stamp_bytes(core_heap *h, const live *l)
{
    memset(core_heap_pointer(h, l->unit), (int)(l->stamp & 0xff), l->bytes);
}

static void check_stamp(core_heap *h, const live *l)
{
    const unsigned char *p = core_heap_pointer(h, l->unit);
    for (uint32_t i = 0; i < l->bytes; i++)
        if (p[i] != (unsigned char)(l->stamp & 0xff))
            die("an allocation's bytes changed while it was live", NULL);
}

/* The largest request the heap serves (a larger one is a bad size). */
static uint64_t largest_request(core_heap *heap)
{
    const uint32_t *w = heap->words;
    switch (heap->config.allocator) {
    case CLHEAP_BITMAP_ALLOC:
        return (uint64_t)w[CLHEAP_HDR_SLOT_UNITS] * 16u;
    case CLHEAP_BLOCK_ALLOC:
        return w[CLHEAP_HDR_CLASS_BYTES + w[CLHEAP_HDR_CLASS_COUNT] - 1];
    case CLHEAP_TIER_ALLOC: /* every size up to the whole pool */
        return (uint64_t)w[CLHEAP_HDR_FRAME_COUNT] * w[CLHEAP_HDR_FRAME_UNITS] * 16u;
    case CLHEAP_FREE_HEAP: /* every size up to the pool */
        return (uint64_t)(w[CLHEAP_HDR_POOL_END] - w[CLHEAP_HDR_POOL_START]) * 16u;
    default:
        return 1u << 20;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = (clheap_allocator)(1 + data[0] % CLHEAP_ALLOCATOR_LAST);
    config.presplit = data[1] & 1 ? CLHEAP_PRESPLIT_UNIFORM : CLHEAP_PRESPLIT_BINARY_HEAP;
    config.uniform_chunk_bytes = 1024u << (data[1] >> 1 & 3);
    config.typed_classes = data[1] >> 3 & 1; /* TierAlloc: with and without slots of larger classes */
    config.size_bytes = 1 << 20;
    config.offset_count = 3;
    core_heap heap;
    if (core_heap_create(&config, 3, &heap) != CLHEAP_SUCCESS)
        die("create failed", NULL);
    int circular = config.allocator >= CLHEAP_CMALLOC && config.allocator <= CLHEAP_CFMMALLOC;
    int bitmap = config.allocator == CLHEAP_BITMAP_ALLOC, blocks = config.allocator == CLHEAP_BLOCK_ALLOC;
    int tier = config.allocator == CLHEAP_TIER_ALLOC, freeheap = config.allocator == CLHEAP_FREE_HEAP;
    int frees_detected = circular || bitmap || blocks || tier || freeheap; /* bump allocators cannot see double frees */
    uint64_t max_request = largest_request(&heap);
    int wraps = config.allocator == CLHEAP_ATOMIC_WRAP_MALLOC;
    static live model[MAX_LIVE];
    size_t n = 0;
    uint32_t freed_unit = 0; /* a freed allocation whose header stays (for double frees) */
    clheap_heap_stats s;
    char what[256];
    uint64_t expect_bad_size = 0, expect_double = 0, expect_not_chunk = 0, expect_outside = 0;

    for (size_t i = 2; i + 3 <= size; i += 3) {
        uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
        uint32_t group = a % 7;
        if (op % 4 < 2) { /* malloc: mostly small, sometimes 0 or huge */
            uint32_t bytes = op & 0x80 ? (uint32_t)(a << 8 | b) * 8u : (uint32_t)(a << 8 | b) % 2048u;
            uint32_t unit = core_heap_malloc(&heap, bytes, group);
            if (bytes == 0 || (uint64_t)bytes > max_request) {
                expect_bad_size++;
                if (unit)
                    die("malloc of a bad size returned memory", NULL);
                continue;
            }
            if (!unit || n == MAX_LIVE)
                continue;
            live l = {unit, bytes, (uint32_t)i};
            core_heap_walk(&heap, &s, NULL, 0);
            uint64_t begin = (uint64_t)unit * 16, end = begin + bytes;
            if (begin % 16 || begin < s.pool_begin_bytes || end > s.pool_begin_bytes + s.pool_bytes)
                die("allocation outside the pool or misaligned", NULL);
            for (size_t k = 0; k < n && !wraps; k++) {
                uint64_t kb = (uint64_t)model[k].unit * 16, ke = kb + model[k].bytes;
                if (begin < ke && kb < end)
                    die("allocations overlap", NULL);
            }
            stamp_bytes(&heap, &l);
            model[n++] = l;
        } else if (op % 4 == 2 && n) { /* free a live allocation */
            size_t k = (size_t)(a << 8 | b) % n;
            if (!wraps)
                check_stamp(&heap, &model[k]);
            core_heap_free_unit(&heap, model[k].unit, group);
            if (frees_detected && model[k].unit != freed_unit)
                freed_unit = model[k].unit;
            model[k] = model[--n];
        } else if (op % 4 == 3) { /* bad frees */
            if (b % 3 == 0) {
                core_heap_free_unit(&heap, (uint32_t)(heap.layout.total_units + 5), group);
                expect_outside++;
            } else if (b % 3 == 1 && frees_detected && freed_unit) {
                /* A freed chunk's header stays until a neighbour swallows it; a double
                 * free is detected exactly while it is there and free. */
                core_heap_walk(&heap, &s, NULL, 0);
                uint32_t before = s.errors.double_free + s.errors.free_not_chunk;
                int still_owned = 0;
                for (size_t k = 0; k < n; k++)
                    still_owned |= model[k].unit == freed_unit;
                if (still_owned)
                    continue; /* reallocated since: freeing it would be a real free */
                core_heap_free_unit(&heap, freed_unit, group);
                core_heap_walk(&heap, &s, NULL, 0);
                if (s.errors.double_free + s.errors.free_not_chunk != before + 1)
                    die("a double free was not counted", NULL);
                expect_double = s.errors.double_free;
                expect_not_chunk = s.errors.free_not_chunk;
            } else if (b % 3 == 2 && heap.layout.total_units * 16u < (4u << 20)) { /* growth: every live byte kept */
                clheap_status st = core_heap_grow(&heap, heap.layout.total_units * 16u + (256u << 10) * (1u + a % 4u));
                if (st != (clheap_allocator_is_bump(config.allocator) ? CLHEAP_ERROR_UNSUPPORTED : CLHEAP_SUCCESS))
                    die("growth failed", clheap_status_string(st));
                for (size_t k = 0; k < n && !wraps; k++)
                    check_stamp(&heap, &model[k]);
                max_request = largest_request(&heap);
            }
        }
        if (core_heap_walk(&heap, &s, what, sizeof what) != CLHEAP_SUCCESS)
            die("heap check failed", what);
        if (s.errors.bad_size != expect_bad_size || s.errors.free_outside != expect_outside ||
            s.errors.double_free != expect_double || s.errors.free_not_chunk != expect_not_chunk ||
            s.errors.free_unaligned != 0 || s.errors.contended != 0)
            die("error counters disagree with the model", NULL);
        if (circular || freeheap) {
            uint64_t requested = 0;
            for (size_t k = 0; k < n; k++)
                requested += model[k].bytes;
            if (s.used_chunks != n || s.requested_bytes != requested)
                die("heap statistics disagree with the model", NULL);
        }
        if (bitmap && s.used_chunks != n)
            die("used slots disagree with the model", NULL);
        if (blocks || tier) {
            uint64_t objects = s.large_count;
            for (uint32_t c = 0; c < s.class_count; c++)
                objects += s.class_objects[c];
            if (objects != n)
                die("live objects disagree with the model", NULL);
        }
    }
    core_heap_destroy(&heap);
    return 0;
}
