/* AtomicMalloc and AtomicWrapMalloc (Vinkler & Havran, Alg. 1 and 2): bump allocators
 * over the pool, the speed ceiling for every other allocator.
 *
 * AtomicMalloc never reuses memory: free only validates its argument. When the pool is
 * exhausted malloc returns NULL.
 * AtomicWrapMalloc wraps to the pool start when the pool is exhausted, so a new
 * allocation can OVERWRITE an older one that is still in use: only for data whose
 * lifetime is shorter than one lap of the pool. free only validates its argument.
 *
 * The counter is 64-bit units since pool start, so requests past the end (which still
 * add to it) can never wrap it round to a valid offset. */
#ifndef CLHEAP_BUMP_H
#define CLHEAP_BUMP_H

#include "clheap_common.h"

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_bump_counter(CLHEAP_GLOBAL clheap_u32 *h)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(h + CLHEAP_HDR_BUMP);
}

static CLHEAP_INLINE clheap_u32 clheap_atomic_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h,
                                                          clheap_size bytes)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    clheap_u32 units = clheap_units_for(bytes, end - first);
    if (!units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u64 before = clheap_add64(clheap_bump_counter(h), units);
    if (before + units > (clheap_u64)(end - first)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    return first + (clheap_u32)before;
}

static CLHEAP_INLINE clheap_u32 clheap_atomic_wrap_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h,
                                                               clheap_size bytes)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    clheap_u64 capacity = end - first;
    clheap_u32 units = clheap_units_for(bytes, end - first);
    if (!units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    CLHEAP_GLOBAL clheap_u64 *counter = clheap_bump_counter(h);
    clheap_u64 offset = clheap_add64(counter, units);
    clheap_u64 new_offset = offset + units;
    for (int tries = 0; new_offset > capacity; tries++) {
        if (tries == CLHEAP_WRAP_MAX_TRIES) {
            clheap_count_error(h, CLHEAP_HDR_ERR_CONTENDED);
            return 0u;
        }
        /* Past the end: whoever swaps the counter from the value it saw back to
         * `units` owns [0, units) of the next lap. */
        clheap_u64 seen = clheap_cas64(counter, new_offset, units);
        if (seen == new_offset)
            return first;
        if (seen + units <= capacity) {
            offset = clheap_add64(counter, units);
            new_offset = offset + units;
        } else {
            new_offset = seen;
        }
    }
    return first + (clheap_u32)offset;
}

/* Neither bump allocator can free; free still reports pointers that are not ours. */
static CLHEAP_INLINE void clheap_bump_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    if (ptr)
        (void)clheap_unit_of_free(h, ptr, h[CLHEAP_HDR_POOL_START], h[CLHEAP_HDR_POOL_END]);
}

#endif
