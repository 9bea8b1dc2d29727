/* Kernels the host library runs on a heap; built after clheap.cl. */
#ifndef CLHEAP_KERNELS_CL
#define CLHEAP_KERNELS_CL

#include "clheap.cl"

/* Three parts, which the library builds as three programs (host/heap.c,
 * build_own_program): CLHEAP_KERNELS_PART 1, the set-up kernels, at heap creation; 2, the
 * host-enqueued malloc, which inlines the whole allocator, and 3, the host-enqueued free,
 * on first use. Why the free has a program of its own: it is built without NVIDIA's
 * register cap (CLHEAP_NV_MAX_REGISTERS, cl/clheap_config.h). Unset: all three. */
#if !defined(CLHEAP_KERNELS_PART) || CLHEAP_KERNELS_PART == 1
/* One work-item per pre-split chunk, plus one for the sentinel (FreeHeap: one, its one
 * free block). */
__kernel void clheap_init_chunks(__global clheap_heap *heap, uint chunk_count)
{
    uint index = (uint)get_global_id(0);
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    if (index == 0u)
        clheap_freeheap_init(clheap_words(heap));
#else
    if (index <= chunk_count)
        clheap_circular_init_chunk(clheap_words(heap), CLHEAP_FUSED, index, chunk_count);
#endif
}

/* clheap_heap_grow, on the larger buffer after the old one's first units were copied
 * into it (host/heap_layout.c, clheap_layout_plan_growth, names the arguments). The bitmap
 * kinds: one work-item per item of their bitmaps, frames and hints. FreeHeap: one
 * work-item; the pool's new end, its free-heap's unit and capacity. The CircularMalloc
 * family: one work-item; the new sentinel and the chunk size for the new space. */
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP || CLHEAP_HAS_BLOCKS
__kernel void clheap_grow(__global clheap_heap *heap, __global clheap_heap *old, uint items)
{
    uint i = (uint)get_global_id(0);
    if (i < items)
        clheap_bitmap_kinds_grow_item(clheap_words(heap), clheap_words(old), i);
}
#else
__kernel void clheap_grow(__global clheap_heap *heap, __global clheap_heap *old, uint end, uint where, uint capacity)
{
    if (get_global_id(0) != 0)
        return;
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    clheap_freeheap_grow(clheap_words(heap), clheap_words(old), end, where, capacity);
#elif CLHEAP_IS_CIRCULAR
    (void)old;
    clheap_circular_grow(clheap_words(heap), CLHEAP_FUSED, end, where);
#endif
}
#endif

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP || CLHEAP_HAS_BLOCKS
/* One work-item per bitmap container and per frame (cl/clheap_tier.h). */
__kernel void clheap_init_bitmaps(__global clheap_heap *heap, uint bitmap_count, uint items)
{
    uint i = (uint)get_global_id(0);
    if (i < items)
        clheap_bitmap_kinds_init_item(clheap_words(heap), bitmap_count, i);
}
#endif

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
/* TierAlloc: one work-item per run hint ends its run and frees the slots it had not
 * handed out (before parallel_do, whose snapshot must see only real objects). */
__kernel void clheap_close_runs(__global clheap_heap *heap)
{
    __global uint *h = clheap_words(heap);
    uint i = (uint)get_global_id(0), slots = h[CLHEAP_HDR_HINT_SLOTS];
    if (i < h[CLHEAP_HDR_CLASS_COUNT] * slots && i % slots < h[CLHEAP_HDR_CLASS_HINTS + i / slots])
        clheap_tier_close_hint(h, i / slots, i % slots);
}

/* TierAlloc: one work-item per container of the unsettled bitmap settles its blocks
 * (after clheap_close_runs, whose released runs mark theirs). */
__kernel void clheap_settle(__global clheap_heap *heap)
{
    __global uint *h = clheap_words(heap);
    uint i = (uint)get_global_id(0);
    if (i < clheap_tier_settle_containers(h))
        clheap_tier_settle_container(h, i);
}
#endif

#if CLHEAP_HAS_BLOCKS
/* parallel_do, step 1: one work-item per container of class c's allocated-block bitmap
 * lists its blocks and snapshots their allocation bitmaps as iteration bitmaps. */
__kernel void clheap_collect_blocks(__global clheap_heap *heap, uint c, __global uint *blocks,
                                    __global uint *count)
{
    __global uint *h = clheap_words(heap);
    uint i = (uint)get_global_id(0);
    uint desc = CLHEAP_BM_ALLOCATED(c);
    if (i >= (h[desc + CLHEAP_BM_BITS] + 63u) / 64u)
        return;
    ulong v = clheap_load64(clheap_bm_level0(h, desc, i));
    while (v) {
        uint frame = i * 64u + clheap_ctz64(v);
        v &= v - 1u;
        ulong live = clheap_load64(clheap_block_alloc_bits(h, frame)) & clheap_class_slots(h, c);
        clheap_store64(clheap_block_iter_bits(h, frame), live);
        if (live)
            blocks[atomic_inc(count)] = frame;
    }
}
#endif
#endif /* part 1 */

/* Host-enqueued allocations (clheap_heap_enqueue_malloc / _free, paper 003's address
 * buffering): one work-item per request of the batch (FreeHeap, serial: one work-item
 * for all of them, in order); results are offsets in 16-byte units in the handle table,
 * where later kernels read them. */
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
#define CLHEAP_BATCH_FOR(i, count) for (uint i = 0u; get_global_id(0) == 0 && i < (count); i++)
#else
#define CLHEAP_BATCH_FOR(i, count) for (uint i = (uint)get_global_id(0); i < (count); i = (count))
#endif

#if !defined(CLHEAP_KERNELS_PART) || CLHEAP_KERNELS_PART == 2
/* alignment above 16: clheap_aligned_alloc's; zero: zeroed as clheap_calloc zeroes. */
__kernel void clheap_enqueue_malloc(__global clheap_heap *heap, __global uint *handles, uint first, uint count,
                                    uint size, __global const uint *sizes, uint per_request, ulong alignment,
                                    uint zero)
{
    CLHEAP_BATCH_FOR(i, count) {
        uint bytes = per_request ? sizes[i] : size;
        uint unit = alignment > CLHEAP_UNIT ? clheap_unit_of(heap, clheap_aligned_alloc(heap, alignment, bytes))
                                            : clheap_malloc_unit(heap, bytes);
        if (unit && zero) {
            clheap_zero_units(clheap_pointer(heap, unit), (bytes + CLHEAP_UNIT - 1u) / CLHEAP_UNIT);
            unit = clheap_loops_left(clheap_words(heap)) ? unit : 0u; /* as clheap_calloc */
        }
        handles[first + i] = unit;
    }
}
#endif /* part 2 */

#if !defined(CLHEAP_KERNELS_PART) || CLHEAP_KERNELS_PART == 3
__kernel void clheap_enqueue_free(__global clheap_heap *heap, __global uint *handles, uint first, uint count)
{
    CLHEAP_BATCH_FOR(i, count)
        if (handles[first + i]) {
            clheap_free_unit(heap, handles[first + i]);
            handles[first + i] = 0u;
        }
}
#endif /* part 3 */

#endif
