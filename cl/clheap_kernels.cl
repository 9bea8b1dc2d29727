/* Kernels the host library runs on a heap; built after clheap.cl. */
#ifndef CLHEAP_KERNELS_CL
#define CLHEAP_KERNELS_CL

#include "clheap.cl"

/* One work-item per pre-split chunk, plus one for the sentinel. */
__kernel void clheap_init_chunks(__global clheap_heap *heap, uint chunk_count)
{
    uint index = (uint)get_global_id(0);
    if (index <= chunk_count)
        clheap_circular_init_chunk(clheap_words(heap), CLHEAP_FUSED, index, chunk_count);
}

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP || CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS
/* One work-item per bitmap container and per frame: bitmap 0 (free slots or free
 * frames) starts full, every other bitmap empty. */
__kernel void clheap_init_bitmaps(__global clheap_heap *heap, uint bitmap_count, uint items)
{
    __global uint *h = clheap_words(heap);
    uint i = (uint)get_global_id(0);
    if (i >= items)
        return;
    for (uint b = 0; b < bitmap_count; b++) {
        uint desc = CLHEAP_BM_DESC(b);
        uint levels = h[desc + CLHEAP_BM_LEVELS];
        uint total = h[desc + CLHEAP_BM_LEVEL0 + levels - 1u] + 1u; /* containers, all levels */
        if (i < total)
            clheap_bm_init_container(h, desc, i, b == 0u);
    }
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS
    clheap_blocks_init_frame(h, i);
#endif
}
#endif

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS
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
    ulong v = clheap_load64(clheap_bm_container(h, desc, 0u, i));
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

#endif
