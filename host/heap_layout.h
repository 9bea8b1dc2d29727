/* Plans a device heap: the header words to write and how many chunks to initialise.
 * Used by clheap_heap_create and by the tests that run the allocator core on the host. */
#ifndef CLHEAP_HOST_HEAP_LAYOUT_H
#define CLHEAP_HOST_HEAP_LAYOUT_H

#include <stdint.h>

#include "clheap/heap.h"

typedef struct clheap_layout {
    uint32_t *header;      /* header_words words, to be written at the buffer's start */
    uint32_t header_words; /* a multiple of 4 (whole units) */
    uint32_t chunk_count;  /* circular: pre-split chunks (the sentinel is one more);
                              bitmap kinds: work-items the initialisation needs */
    uint32_t bitmap_count; /* bitmap kinds: hierarchical bitmaps in the header */
    uint64_t total_units;
} clheap_layout;

/* compute_units is used when config->offset_count is 0. clheap_layout_plan plans for a
 * device with 64-bit atomics; _atomics for one whose atomics are atomic_bits (64 or 32)
 * wide (cl/clheap_port.h's split word: CLHEAP_HDR_ATOMIC_BITS). */
clheap_status clheap_layout_plan(const clheap_heap_config *config, uint32_t compute_units,
                                 clheap_layout *layout);
clheap_status clheap_layout_plan_atomics(const clheap_heap_config *config, uint32_t compute_units,
                                         uint32_t atomic_bits, clheap_layout *layout);
void clheap_layout_free(clheap_layout *layout);

/* Growth of a heap laid out as `old` to `units` (clheap_heap_grow, and the host core's
 * tests, which must do the same): TierAlloc's runs are closed first (clheap_heap_trim);
 * the old buffer's units [0, copy_units) are copied into the new one; bitmap kinds then
 * take the header words of clheap_growth_ranges from the new layout; then `items`
 * work-items of the clheap_grow kernel (cl/clheap_kernels.cl) get the new buffer, the old
 * one and `args`. The new layout's header is what the host keeps of the heap. */
typedef struct clheap_growth {
    clheap_layout layout;
    uint64_t copy_units;
    uint32_t items;
    uint32_t arg_count;
    uint32_t args[3];
} clheap_growth;
#define CLHEAP_GROWTH_RANGES 2
extern const uint32_t clheap_growth_ranges[CLHEAP_GROWTH_RANGES][2]; /* [first, end) word pairs */
clheap_status clheap_layout_plan_growth(const clheap_heap_config *config, const clheap_layout *old, uint64_t units,
                                        clheap_growth *growth);

/* FreeHeap: the entries its free-heap needs for a pool of at most pool_units (F6 of
 * cl/clheap_freeheap.h: pool units / 6 + 2), and the whole units they take. */
uint64_t clheap_freeheap_array_units(uint64_t pool_units, uint32_t *capacity);

/* The largest heap an allocator addresses (create and growth accept it, and use one unit
 * less than it): 64 GiB, fused headers 32 GiB. */
uint64_t clheap_layout_max_bytes(clheap_allocator allocator);

int clheap_allocator_is_bump(clheap_allocator allocator); /* AtomicMalloc, AtomicWrapMalloc: cannot free */
int clheap_allocator_is_circular(clheap_allocator allocator);
int clheap_allocator_is_fused(clheap_allocator allocator);
int clheap_allocator_is_multi(clheap_allocator allocator);
int clheap_allocator_is_bitmap(clheap_allocator allocator);  /* BitmapAlloc, BlockAlloc, TierAlloc */
int clheap_allocator_has_blocks(clheap_allocator allocator); /* BlockAlloc, TierAlloc */
/* CLHEAP_AUTO_ALLOCATOR made concrete for a device that ends loops early (1:
 * clheap_device_loop_limit is not 0) or not, and a heap that is typed
 * (config.typed_classes) or not; any other allocator as it is. */
clheap_allocator clheap_allocator_for_device(clheap_allocator allocator, int loops_end_early, int typed);

/* NVIDIA's register cap (-cl-nv-maxrregcount) for a program built with `options` (may be
 * NULL) for a heap of allocator, warp-coalesced (an NVIDIA build) or not; 0: none. A cap
 * that options name is the user's own (the heap adds none); -DCLHEAP_NV_MAX_REGISTERS=N
 * in options sets this program's (0: none); else CLHEAP_NV_MAX_REGISTERS for TierAlloc's
 * warp-coalesced programs (cl/clheap_config.h says why). */
unsigned clheap_register_cap(clheap_allocator allocator, int warp_coalescing, const char *options);

#endif
