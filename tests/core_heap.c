#include "core_heap.h"
#include "heap_image.h"

#include <stdlib.h>
#include <string.h>

#include "../cl/clheap_bump.h"
#include "../cl/clheap_tier.h"
#include "../cl/clheap_circular.h"
#include "../cl/clheap_freeheap.h"
#include "../cl/clheap_resize.h"
#include "heap_layout.h"
#include "heap_walk.h"

_Thread_local clheap_u32 clheap_host_group_index;
_Thread_local clheap_u32 clheap_host_launch_items;
_Thread_local clheap_core_order clheap_core_orders;
#ifdef CLHEAP_CORE_SCHEDULED
const void *clheap_core_next_word;
#endif

clheap_status core_heap_create(const clheap_heap_config *config, uint32_t compute_units,
                               core_heap *heap)
{
    memset(heap, 0, sizeof *heap);
    /* The core models a device with 64-bit atomics, or without (built with
     * -DCLHEAP_ATOMICS64=0: the split word of cl/clheap_port.h). */
    clheap_heap_config concrete = *config;
    concrete.allocator = clheap_allocator_for_device(config->allocator, 0, config->typed_classes != 0);
    config = &concrete;
    clheap_layout layout;
    clheap_status status = clheap_layout_plan_atomics(config, compute_units, CLHEAP_ATOMICS64 ? 64 : 32, &layout);
    if (status != CLHEAP_SUCCESS)
        return status;
    size_t bytes = (size_t)layout.total_units * CLHEAP_UNIT;
    heap->words = aligned_alloc(CLHEAP_UNIT, bytes);
    if (!heap->words) {
        clheap_layout_free(&layout);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* Garbage, not zeros: initialisation must not rely on a cleared buffer. */
    memset(heap->words, 0xA5, bytes);
    memcpy(heap->words, layout.header, layout.header_words * sizeof(uint32_t));
    heap->config = *config;
    heap->layout = layout;
    if (clheap_allocator_is_circular(config->allocator))
        for (uint32_t i = 0; i <= layout.chunk_count; i++)
            clheap_circular_init_chunk(heap->words, clheap_allocator_is_fused(config->allocator), i,
                                       layout.chunk_count);
    if (config->allocator == CLHEAP_FREE_HEAP) /* as clheap_init_chunks does */
        clheap_freeheap_init(heap->words);
    if (clheap_allocator_is_bitmap(config->allocator)) /* as clheap_init_bitmaps does */
        for (uint32_t i = 0; i < layout.chunk_count; i++)
            clheap_bitmap_kinds_init_item(heap->words, layout.bitmap_count, i);
    return CLHEAP_SUCCESS;
}

clheap_status core_heap_grow(core_heap *heap, uint64_t new_bytes)
{
    clheap_growth g;
    clheap_status status = clheap_layout_plan_growth(&heap->config, &heap->layout, new_bytes / CLHEAP_UNIT, &g);
    if (status != CLHEAP_SUCCESS)
        return status;
    uint32_t *words = aligned_alloc(CLHEAP_UNIT, (size_t)g.layout.total_units * CLHEAP_UNIT);
    if (!words) {
        clheap_layout_free(&g.layout);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    /* As clheap_heap_grow enqueues it (host/heap_layout.h, clheap_growth). */
    memset(words, 0xA5, (size_t)g.layout.total_units * CLHEAP_UNIT);
    core_heap_trim(heap);
    memcpy(words, heap->words, (size_t)g.copy_units * CLHEAP_UNIT);
    if (clheap_allocator_is_bitmap(heap->config.allocator))
        for (int r = 0; r < CLHEAP_GROWTH_RANGES; r++)
            memcpy(words + clheap_growth_ranges[r][0], g.layout.header + clheap_growth_ranges[r][0],
                   (clheap_growth_ranges[r][1] - clheap_growth_ranges[r][0]) * sizeof *words);
    for (uint32_t i = 0; i < g.items; i++) /* clheap_grow's work-items */
        if (clheap_allocator_is_bitmap(heap->config.allocator))
            clheap_bitmap_kinds_grow_item(words, heap->words, i);
        else if (heap->config.allocator == CLHEAP_FREE_HEAP)
            clheap_freeheap_grow(words, heap->words, g.args[0], g.args[1], g.args[2]);
        else
            clheap_circular_grow(words, clheap_allocator_is_fused(heap->config.allocator), g.args[0], g.args[1]);
    free(heap->words);
    heap->words = words;
    heap->config.size_bytes = g.layout.total_units * CLHEAP_UNIT;
    clheap_layout_free(&heap->layout);
    heap->layout = g.layout;
    return CLHEAP_SUCCESS;
}

uint32_t core_heap_malloc_many(core_heap *heap, size_t bytes, uint32_t n, uint32_t *units, uint32_t group)
{
    clheap_core_begin();
    if (heap->config.allocator != CLHEAP_TIER_ALLOC || n == 0 || n > 32) {
        for (uint32_t i = 0; i < n; i++)
            units[i] = core_heap_malloc(heap, bytes, group);
        return n;
    }
    clheap_host_group_index = group;
    uint32_t *h = heap->words, c = bytes ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    if (c == CLHEAP_MAX_CLASSES) {
        for (uint32_t i = 0; i < n; i++)
            units[i] = core_heap_malloc(heap, bytes, group);
        return n;
    }
    /* What clheap_tier_malloc_warp's leader and lanes do on NVIDIA: the lanes write
     * shares of an opened run's headers, or put a parked run's blocks back in their class
     * (here in reverse lane order), between the steps. */
    uint32_t seed = clheap_rotation_seed() + (uint32_t)bytes;
    clheap_tier_grant g;
    clheap_tier_opening o;
    clheap_tier_take_begin(h, c, n, seed, &g, &o);
    if (o.run != CLHEAP_BM_FAIL && o.kind != CLHEAP_TIER_READY) {
        for (uint32_t lane = n; lane-- > 0;)
            clheap_tier_prepare(h, c, &o, lane, n);
        clheap_fence_release();
    }
    clheap_tier_take_finish(h, c, seed, &g, &o, CLHEAP_TIER_INSTALL);
    clheap_tier_take_finish(h, c, seed, &g, &o, CLHEAP_TIER_FALL_BACK);
    if (g.frame == CLHEAP_TIER_PIECES) { /* the lanes from k + k2 on split one large allocation */
        uint32_t first = g.k + g.k2, frames = clheap_tier_piece_frames(h, c);
        uint32_t base = clheap_tier_malloc_first(h, (size_t)(n - first) * frames * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT,
                                                 seed + 0x5bd1e995u, 1, 0);
        for (uint32_t rank = n; rank-- > 0;) /* the taker last: it rewrites its own piece too */
            units[rank] = rank < first ? clheap_tier_grant_unit(h, c, &g, rank)
                                       : clheap_tier_piece_of(h, base, rank - first, frames);
    } else {
        for (uint32_t rank = 0; rank < n; rank++) {
            units[rank] = clheap_tier_grant_unit(h, c, &g, rank);
            if (!units[rank] && g.frame != CLHEAP_TIER_NOTHING)
                units[rank] = clheap_tier_malloc_first(h, bytes, seed + 0x5bd1e995u, 0, 0);
        }
    }
    uint32_t nulls = 0;
    for (uint32_t rank = 0; rank < n; rank++) { /* the warp's last resort, after every lane's first try */
        if (!units[rank] && g.frame != CLHEAP_TIER_NOTHING)
            units[rank] = clheap_tier_take_larger(h, c, seed + rank, 0);
        nulls += !units[rank];
    }
    if (nulls) /* counted with one add, as the warp does */
        clheap_add32(h + CLHEAP_HDR_ERR_OUT_OF_MEMORY, nulls);
    /* The lanes settle the share of what was opened, here in reverse lane order, last, as
     * clheap_tier_malloc_warp does: the fallback and the last resort above run without the
     * frames this settling gives back. */
    if (o.run != CLHEAP_BM_FAIL) {
        uint32_t share = clheap_tier_settle_share(h, o.blocks * h[CLHEAP_HDR_CLASS_FRAMES + c]);
        uint32_t start = clheap_tier_settle_claim(h, share);
        for (uint32_t lane = n; lane-- > 0;)
            clheap_tier_settle_range(h, start, share, lane, n);
    }
    return n;
}

void core_heap_destroy(core_heap *heap)
{
    free(heap->words);
    heap->words = NULL;
    clheap_layout_free(&heap->layout);
}

uint32_t core_heap_malloc(core_heap *heap, size_t bytes, uint32_t group)
{
    clheap_core_begin();
    clheap_host_group_index = group;
    switch (heap->config.allocator) {
    case CLHEAP_ATOMIC_MALLOC:
        return clheap_atomic_malloc_unit(heap->words, bytes);
    case CLHEAP_ATOMIC_WRAP_MALLOC:
        return clheap_atomic_wrap_malloc_unit(heap->words, bytes);
    case CLHEAP_BITMAP_ALLOC:
        return clheap_bitmap_malloc_unit(heap->words, bytes, clheap_rotation_seed() + (uint32_t)bytes);
    case CLHEAP_BLOCK_ALLOC:
        return clheap_blocks_malloc_unit(heap->words, bytes, clheap_rotation_seed() + (uint32_t)bytes);
    case CLHEAP_TIER_ALLOC:
        return clheap_tier_malloc_unit(heap->words, bytes, clheap_rotation_seed() + (uint32_t)bytes);
    case CLHEAP_FREE_HEAP:
        return clheap_freeheap_malloc_unit(heap->words, bytes);
    default:
        return clheap_circular_malloc_unit(heap->words, bytes,
                                           clheap_allocator_is_fused(heap->config.allocator),
                                           clheap_allocator_is_multi(heap->config.allocator));
    }
}

void *core_heap_pointer(core_heap *heap, uint32_t unit)
{
    return clheap_unit_pointer(heap->words, unit);
}

void core_heap_free_unit(core_heap *heap, uint32_t unit, uint32_t group)
{
    clheap_core_begin();
    clheap_host_group_index = group;
    /* TierAlloc's free defers its work in small launches only, and keeps emptied blocks in
     * middle ones: groups free as in launches of each size, so one heap sees every kind
     * of free (cl/clheap_blocks.h). */
    static const uint32_t items[4] = {CORE_ITEMS_DEFER, CORE_ITEMS_SETTLE, CORE_ITEMS_DEFER, CORE_ITEMS_KEEP};
    clheap_host_launch_items = items[group % 4u];
    void *ptr = core_heap_pointer(heap, unit);
    if (clheap_allocator_is_circular(heap->config.allocator))
        clheap_circular_free(heap->words, ptr, clheap_allocator_is_fused(heap->config.allocator),
                             clheap_allocator_is_multi(heap->config.allocator));
    else if (heap->config.allocator == CLHEAP_BITMAP_ALLOC)
        clheap_bitmap_free(heap->words, ptr);
    else if (heap->config.allocator == CLHEAP_BLOCK_ALLOC)
        clheap_blocks_free(heap->words, ptr);
    else if (heap->config.allocator == CLHEAP_TIER_ALLOC)
        clheap_tier_free(heap->words, ptr);
    else if (heap->config.allocator == CLHEAP_FREE_HEAP)
        clheap_freeheap_free(heap->words, ptr);
    else
        clheap_bump_free(heap->words, ptr);
}

/* ---- as cl/clheap.cl's clheap_usable_size, clheap_realloc, clheap_aligned_alloc ---- */

size_t core_heap_usable(core_heap *heap, uint32_t unit)
{
    void *ptr = core_heap_pointer(heap, unit);
    clheap_core_begin();
    if (!ptr)
        return 0;
    if (clheap_allocator_has_blocks(heap->config.allocator))
        return clheap_blocks_usable(heap->words, ptr);
    if (heap->config.allocator == CLHEAP_BITMAP_ALLOC)
        return clheap_bitmap_usable(heap->words, ptr);
    if (clheap_allocator_is_circular(heap->config.allocator))
        return clheap_circular_usable(heap->words, ptr, clheap_allocator_is_fused(heap->config.allocator));
    if (heap->config.allocator == CLHEAP_FREE_HEAP)
        return clheap_freeheap_usable(heap->words, ptr);
    return 0; /* the bump allocators keep no sizes */
}

uint32_t core_heap_realloc(core_heap *heap, uint32_t unit, size_t bytes, uint32_t group)
{
    if (!unit)
        return core_heap_malloc(heap, bytes, group);
    if (!bytes) {
        core_heap_free_unit(heap, unit, group);
        return 0;
    }
    void *ptr = core_heap_pointer(heap, unit);
    int in_place;
    size_t usable;
    if (heap->config.allocator == CLHEAP_TIER_ALLOC) { /* one look at the pointer, as clheap_realloc */
        uint32_t at, frame;
        int large;
        clheap_core_begin();
        usable = clheap_blocks_usable_at(heap->words, ptr, &at, &frame, &large);
        in_place = usable && clheap_blocks_resize_in_place(heap->words, at, frame, large, usable, bytes);
    } else {
        usable = core_heap_usable(heap, unit);
        in_place = bytes <= usable;
    }
    if (!usable)
        return 0;
    if (in_place && clheap_allocator_is_circular(heap->config.allocator))
        clheap_circular_note_size(heap->words, ptr, bytes);
    if (in_place && heap->config.allocator == CLHEAP_FREE_HEAP)
        clheap_freeheap_note_size(heap->words, ptr, bytes);
    if (in_place)
        return unit;
    uint32_t moved = core_heap_malloc(heap, bytes, group);
    if (moved) {
        clheap_copy_units(core_heap_pointer(heap, moved), ptr, ((bytes < usable ? bytes : usable) + 15) / 16);
        core_heap_free_unit(heap, unit, group);
    }
    return moved;
}

uint32_t core_heap_aligned(core_heap *heap, size_t alignment, size_t bytes, uint32_t group)
{
    uint32_t *h = heap->words;
    clheap_core_begin();
    clheap_host_group_index = group;
    if (!clheap_alignment_valid(alignment) || !bytes) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0;
    }
    if (alignment <= CLHEAP_UNIT)
        return core_heap_malloc(heap, bytes, group);
    clheap_allocator a = heap->config.allocator;
    if (a == CLHEAP_ATOMIC_MALLOC || a == CLHEAP_ATOMIC_WRAP_MALLOC)
        return clheap_bump_aligned_unit(h, alignment, bytes, a == CLHEAP_ATOMIC_WRAP_MALLOC);
    if (a == CLHEAP_BITMAP_ALLOC && clheap_bitmap_aligned(h, alignment))
        return core_heap_malloc(heap, bytes, group);
    if (a == CLHEAP_FREE_HEAP)
        return clheap_freeheap_aligned_unit(h, alignment, bytes);
    size_t class_bytes = clheap_allocator_has_blocks(a) ? clheap_blocks_aligned_bytes(h, alignment, bytes, a == CLHEAP_TIER_ALLOC) : 0;
    if (class_bytes) {
        uint32_t unit = core_heap_malloc(heap, class_bytes, group);
        if (!unit || clheap_unit_address(h, unit) % alignment == 0)
            return unit;
        core_heap_free_unit(heap, unit, group);
    }
    if (a == CLHEAP_TIER_ALLOC &&
        bytes <= (size_t)h[CLHEAP_HDR_FRAME_COUNT] * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT)
        return clheap_tier_aligned_large(h, alignment, bytes, clheap_rotation_seed() + (uint32_t)bytes);
    clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
    return 0;
}

void core_heap_trim(core_heap *heap)
{
    if (heap->config.allocator == CLHEAP_TIER_ALLOC) {
        clheap_tier_close_runs(heap->words, CLHEAP_MAX_CLASSES);
        clheap_tier_settle(heap->words, 1);
    }
}

/* As clheap_heap_check: the fixed header words first, so every core test also checks
 * that the core writes only the words host/heap_image.c lists as dynamic. */
clheap_status core_heap_walk(core_heap *heap, clheap_heap_stats *stats, char *what, size_t len)
{
    clheap_status status = clheap_image_header_matches(&heap->layout, heap->words, what, len);
    if (status != CLHEAP_SUCCESS)
        return status;
    return clheap_heap_walk(heap->words, heap->layout.total_units, stats, what, len);
}
