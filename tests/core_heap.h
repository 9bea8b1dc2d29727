/* The device allocator core, compiled as C11 and run on a heap image in host memory:
 * the same clheap_*_malloc_unit / free functions the kernels use (cl/), so threads and
 * fuzzers can exercise them under ThreadSanitizer and libFuzzer. */
#ifndef CLHEAP_TESTS_CORE_HEAP_H
#define CLHEAP_TESTS_CORE_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/heap.h"
#include "heap_layout.h"

typedef struct core_heap {
    uint32_t *words;           /* layout.total_units units */
    clheap_heap_config config; /* growth plans from these two, as clheap_heap_grow does */
    clheap_layout layout;
} core_heap;

/* Plans and initialises an image as clheap_heap_create does on a device. */
clheap_status core_heap_create(const clheap_heap_config *config, uint32_t compute_units,
                               core_heap *heap);
void core_heap_destroy(core_heap *heap);

/* Launch sizes a TierAlloc free is made in (cl/clheap_blocks.h): a small launch defers
 * settling, a middle one keeps emptied blocks, a large one settles at once. */
#define CORE_ITEMS_DEFER 1u
#define CORE_ITEMS_KEEP (CLHEAP_TIER_DEFER_ITEMS + 1u)
#define CORE_ITEMS_SETTLE \
    ((CLHEAP_TIER_KEEP_ITEMS > CLHEAP_TIER_DEFER_ITEMS ? CLHEAP_TIER_KEEP_ITEMS : CLHEAP_TIER_DEFER_ITEMS) + 1u)

/* malloc/free as a work-item of work-group `group` would call them (a free in a launch
 * of the size group % 4 picks: 1 settles, 3 keeps, 0 and 2 defer). */
uint32_t core_heap_malloc(core_heap *heap, size_t bytes, uint32_t group);
void core_heap_free_unit(core_heap *heap, uint32_t unit, uint32_t group);
/* TierAlloc: n (1..32) requests of one size served together, as a warp's on NVIDIA
 * (other allocators: one by one). units gets n results (0 = NULL); returns n. */
uint32_t core_heap_malloc_many(core_heap *heap, size_t bytes, uint32_t n, uint32_t *units, uint32_t group);
void *core_heap_pointer(core_heap *heap, uint32_t unit);
/* As clheap_usable_size, clheap_realloc and clheap_aligned_alloc (cl/clheap.cl), on units. */
size_t core_heap_usable(core_heap *heap, uint32_t unit);
uint32_t core_heap_realloc(core_heap *heap, uint32_t unit, size_t bytes, uint32_t group);
uint32_t core_heap_aligned(core_heap *heap, size_t alignment, size_t bytes, uint32_t group);
/* As clheap_heap_grow: a larger image, the allocation units unchanged. */
clheap_status core_heap_grow(core_heap *heap, uint64_t new_bytes);
/* As clheap_heap_trim: TierAlloc's runs give back the slots they have not handed out. */
void core_heap_trim(core_heap *heap);

clheap_status core_heap_walk(core_heap *heap, clheap_heap_stats *stats, char *what, size_t len);

#endif
