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

#endif
