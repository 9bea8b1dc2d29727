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
 * add to it) can never wrap it round to a valid offset.
 * Without 64-bit atomics (CLHEAP_ATOMICS64 0) the counter is its low 32-bit word (the
 * high word stays 0, so the host reads one counter from either build). A request adds to
 * it only after a read showed room for it, and only if it is at most
 * CLHEAP_BUMP32_ADD_UNITS; larger ones move it by a compare-and-swap from the value read,
 * which never passes the end. So the counter passes the pool's end only by adds whose
 * read came before it did, one per work-item in flight, and stays below
 *   end + (work-items in flight) * CLHEAP_BUMP32_ADD_UNITS  <  2^32,
 * with pools of at most 2^30 units (16 GiB, host/heap.c) and at most 786,432 work-items
 * in flight (an H200 holds 270,336). Once past the end every read sees it and adds
 * nothing. A request that read a value that changed tries again, at most
 * CLHEAP_BUMP_CAS_TRIES times (each retry is another request served), then counts itself
 * contended. */
#ifndef CLHEAP_BUMP_H
#define CLHEAP_BUMP_H

#include "clheap_common.h"

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_bump_counter(CLHEAP_GLOBAL clheap_u32 *h)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(h + CLHEAP_HDR_BUMP);
}

#if !CLHEAP_ATOMICS64
/* Takes `units` from the 32-bit counter (above): their offset from pool start, or ~0u
 * (counted) where the pool is full or every try lost. AtomicWrapMalloc (`wrap`) swaps a
 * counter past the end back to `units` and takes the next lap's [0, units). */
static CLHEAP_INLINE clheap_u32 clheap_bump32_take(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 units, int wrap)
{
    CLHEAP_GLOBAL clheap_u32 *counter = h + CLHEAP_HDR_BUMP;
    clheap_u32 capacity = h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START];
    clheap_u32 seen = clheap_load32(counter);
    CLHEAP_NO_UNROLL
    for (int tries = 0; tries < CLHEAP_BUMP_CAS_TRIES; tries++) {
        clheap_u32 old;
        if ((clheap_u64)seen + units <= capacity && units <= CLHEAP_BUMP32_ADD_UNITS) {
            old = clheap_add32(counter, units);
            if ((clheap_u64)old + units <= capacity)
                return old;
            seen = old + units; /* past the end: what this add left */
            continue;
        }
        if ((clheap_u64)seen + units <= capacity) {
            old = clheap_cas32(counter, seen, seen + units);
            if (old == seen)
                return seen;
        } else if (wrap) {
            old = clheap_cas32(counter, seen, units);
            if (old == seen)
                return 0u;
        } else {
            clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
            return ~0u;
        }
        seen = old;
    }
    clheap_count_error(h, CLHEAP_HDR_ERR_CONTENDED);
    return ~0u;
}

static CLHEAP_INLINE clheap_u32 clheap_bump32_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes, int wrap)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START];
    clheap_u32 units = clheap_units_for(bytes, h[CLHEAP_HDR_POOL_END] - first);
    if (!units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 offset = clheap_bump32_take(h, units, wrap);
    return offset == ~0u ? 0u : first + offset;
}

static CLHEAP_INLINE clheap_u32 clheap_atomic_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    return clheap_bump32_malloc_unit(h, bytes, 0);
}

static CLHEAP_INLINE clheap_u32 clheap_atomic_wrap_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    return clheap_bump32_malloc_unit(h, bytes, 1);
}
#else
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

#endif

/* Neither bump allocator can free; free still reports pointers that are not ours. */
static CLHEAP_INLINE void clheap_bump_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    if (ptr)
        (void)clheap_unit_of_free(h, ptr, h[CLHEAP_HDR_POOL_START], h[CLHEAP_HDR_POOL_END]);
}

#endif
