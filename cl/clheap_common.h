/* Helpers every device allocator shares: header access, error counters, and the
 * pointer <-> unit-offset conversions (offsets are what survives between kernels). */
#ifndef CLHEAP_COMMON_H
#define CLHEAP_COMMON_H

#include "clheap_port.h"
#include "clheap_config.h"
#include "clheap_layout.h"

static CLHEAP_INLINE void clheap_count_error(CLHEAP_GLOBAL clheap_u32 *h, int which)
{
    clheap_add32(h + which, 1u);
}

#if defined(CLHEAP_FENCE_BY_ATOMIC) && defined(__OPENCL_C_VERSION__)
/* The fence where fences are barriers (cl/clheap_port.h): adds 0 to the unformatted
 * counter, whose value it never changes. */
static CLHEAP_INLINE void clheap_fence_by_atomic(CLHEAP_GLOBAL clheap_u32 *h)
{
    (void)clheap_add32(h + CLHEAP_HDR_ERR_UNFORMATTED, 0u);
}
#endif

/* A 32-bit mix (lowbias32): spreads work-items over containers, offsets and tests' sizes. */
static CLHEAP_INLINE clheap_u32 clheap_hash32(clheap_u32 x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* Units needed for a request of `bytes`, or 0 if it is 0 or larger than `limit` units. */
static CLHEAP_INLINE clheap_u32 clheap_units_for(clheap_size bytes, clheap_u32 limit)
{
    if (bytes == 0 || bytes > (clheap_size)limit * CLHEAP_UNIT)
        return 0u;
    return (clheap_u32)((bytes + CLHEAP_UNIT - 1u) / CLHEAP_UNIT);
}

/* The payload unit a pointer to be freed names, or 0 (and an error counted) if it
 * lies outside [first, end) units or off a unit boundary. */
static CLHEAP_INLINE clheap_u32 clheap_unit_of_free(CLHEAP_GLOBAL clheap_u32 *h,
                                                    CLHEAP_GLOBAL void *ptr, clheap_u32 first,
                                                    clheap_u32 end)
{
    CLHEAP_GLOBAL unsigned char *base = (CLHEAP_GLOBAL unsigned char *)h;
    CLHEAP_GLOBAL unsigned char *p = (CLHEAP_GLOBAL unsigned char *)ptr;
    if (p < base + (clheap_size)first * CLHEAP_UNIT || p >= base + (clheap_size)end * CLHEAP_UNIT) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_OUTSIDE);
        return 0u;
    }
    clheap_size bytes = (clheap_size)(p - base);
    if (bytes % CLHEAP_UNIT) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_UNALIGNED);
        return 0u;
    }
    return (clheap_u32)(bytes / CLHEAP_UNIT);
}

static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_unit_pointer(CLHEAP_GLOBAL clheap_u32 *h,
                                                              clheap_u32 unit)
{
    return unit ? (CLHEAP_GLOBAL void *)((CLHEAP_GLOBAL unsigned char *)h +
                                         (clheap_size)unit * CLHEAP_UNIT)
                : (CLHEAP_GLOBAL void *)0;
}

#endif
