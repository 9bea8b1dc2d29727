/* A program for the SPIR-V checks (tests/spirv_check.sh): every kernel-side call of the
 * allocation API, so that each allocator's whole device code goes through the translator. */
__kernel void every_call(__global clheap_heap *heap, __global uint *out)
{
    uint i = get_global_id(0);
    __global uint *p = clheap_calloc(heap, 4u, sizeof(uint));
    __global uint *q = clheap_realloc(heap, p, 64u);
    __global uint *a = clheap_aligned_alloc(heap, 256u, 256u);
    __global uint *m = clheap_malloc(heap, 16u + i % 4096u);
    out[i] = (uint)clheap_usable_size(heap, q ? q : p) + clheap_unit_of(heap, a) + clheap_unit_of(heap, m);
    clheap_free(heap, q ? q : p);
    clheap_free(heap, a);
    clheap_free(heap, m);
}
