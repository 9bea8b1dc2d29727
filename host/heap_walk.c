/* Invariants checked here (the device code keeps them true between kernels):
 *  header   magic, layout version and a known allocator kind; pool bounds inside the
 *           buffer; for the circular family, every roving offset in [pool start, sentinel].
 *  chunks   starting at the pool's first unit, next pointers lead forward, chunk by
 *           chunk, to the sentinel: the chunks tile [pool start, sentinel) in address
 *           order with no gap or overlap, and the sentinel's next is the first chunk,
 *           so the list is one cycle. Every header carries its own unit's tag and is
 *           FREE or USED (no claim or merge is left half done); a used chunk records a
 *           request of 1 byte up to its payload size.
 *  bump     the counter may exceed the pool (failed requests add to it); the used
 *           part is the pool's prefix.
 * Roving offsets are hints: one may name a header merged away since, which malloc
 * detects by its tag, so only their range is checked. */
#include "heap_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../cl/clheap_layout.h"
#include "heap_layout.h"

static clheap_status violation(char *what, size_t len, const char *fmt, ...)
{
    if (what && len) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(what, len, fmt, args);
        va_end(args);
    }
    return CLHEAP_ERROR_HEAP_CORRUPT;
}

void clheap_heap_errors_from_header(const uint32_t *w, clheap_heap_errors *e)
{
    e->out_of_memory = w[CLHEAP_HDR_ERR_OUT_OF_MEMORY];
    e->bad_size = w[CLHEAP_HDR_ERR_BAD_SIZE];
    e->free_outside = w[CLHEAP_HDR_ERR_FREE_OUTSIDE];
    e->free_unaligned = w[CLHEAP_HDR_ERR_FREE_UNALIGNED];
    e->free_not_chunk = w[CLHEAP_HDR_ERR_FREE_NOT_CHUNK];
    e->double_free = w[CLHEAP_HDR_ERR_DOUBLE_FREE];
    e->contended = w[CLHEAP_HDR_ERR_CONTENDED];
}

/* Reads a chunk header: returns 0 if it is not a valid header for unit u. */
static int read_header(const uint32_t *w, int fused, uint32_t u, int *used, uint32_t *next,
                       uint32_t *request)
{
    const uint32_t *c = w + (uint64_t)u * 4u;
    if (fused) {
        uint64_t word;
        memcpy(&word, c, sizeof word);
        if ((uint32_t)(word >> 32) != CLHEAP_TAG(u))
            return 0;
        *used = ((uint32_t)word & CLHEAP_FUSED_USED_BIT) != 0;
        *next = (uint32_t)word & CLHEAP_FUSED_NEXT_MASK;
    } else {
        uint32_t flag = c[CLHEAP_CHUNK_WORD_FLAG];
        if (flag != CLHEAP_FLAG_FREE(u) && flag != CLHEAP_FLAG_USED(u))
            return 0;
        *used = flag == CLHEAP_FLAG_USED(u);
        *next = c[CLHEAP_CHUNK_WORD_NEXT];
    }
    *request = c[CLHEAP_CHUNK_WORD_REQUEST];
    return 1;
}

static clheap_status walk_circular(const uint32_t *w, int fused, clheap_heap_stats *s, char *what,
                                   size_t len)
{
    uint32_t first = w[CLHEAP_HDR_POOL_START], sentinel = w[CLHEAP_HDR_POOL_END];
    for (uint32_t k = 0; k < w[CLHEAP_HDR_OFFSET_COUNT]; k++) {
        uint32_t rover = w[CLHEAP_HDR_OFFSETS + k];
        if (rover < first || rover > sentinel)
            return violation(what, len, "roving offset %u is unit %u, outside [%u, %u]", k, rover,
                             first, sentinel);
    }
    int used;
    uint32_t next, request;
    if (!read_header(w, fused, sentinel, &used, &next, &request) || !used || next != first)
        return violation(what, len, "sentinel at unit %u is not a used header pointing to %u",
                         sentinel, first);
    double internal_sum = 0;
    for (uint32_t u = first; u != sentinel; u = next) {
        if (!read_header(w, fused, u, &used, &next, &request))
            return violation(what, len, "unit %u should hold a chunk header (tag or flag wrong)", u);
        if (next <= u || next > sentinel)
            return violation(what, len, "chunk at unit %u has next %u: not in (%u, %u]", u, next, u,
                             sentinel);
        uint64_t bytes = (uint64_t)(next - u) * CLHEAP_UNIT;
        if (used) {
            if (request == 0 || request > bytes - CLHEAP_UNIT)
                return violation(what, len, "used chunk at unit %u (%llu bytes) records request %u",
                                 u, (unsigned long long)bytes, request);
            s->used_bytes += bytes;
            s->used_chunks++;
            s->requested_bytes += request;
            internal_sum += (double)(bytes - request) / (double)bytes;
        } else {
            s->free_bytes += bytes;
            s->free_chunks++;
            if (bytes > s->largest_free_bytes)
                s->largest_free_bytes = bytes;
        }
    }
    s->internal_fragmentation = s->used_chunks ? internal_sum / (double)s->used_chunks : 0.0;
    s->external_fragmentation =
        s->free_bytes ? 1.0 - (double)s->largest_free_bytes / (double)s->free_bytes : 0.0;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_walk(const uint32_t *w, uint64_t unit_count, clheap_heap_stats *stats,
                               char *what, size_t len)
{
    clheap_heap_stats local;
    clheap_heap_stats *s = stats ? stats : &local;
    memset(s, 0, sizeof *s);
    if (what && len)
        what[0] = '\0';
    if (unit_count < CLHEAP_HDR_FIXED_WORDS / 4u || w[CLHEAP_HDR_MAGIC] != CLHEAP_MAGIC ||
        w[CLHEAP_HDR_VERSION] != CLHEAP_LAYOUT_VERSION)
        return violation(what, len, "no clheap heap header (magic %#x, version %u)",
                         w[CLHEAP_HDR_MAGIC], w[CLHEAP_HDR_VERSION]);
    clheap_allocator a = (clheap_allocator)w[CLHEAP_HDR_KIND];
    if (!clheap_allocator_name(a))
        return violation(what, len, "unknown allocator kind %u", (unsigned)a);
    uint32_t first = w[CLHEAP_HDR_POOL_START], end = w[CLHEAP_HDR_POOL_END];
    uint32_t offsets = w[CLHEAP_HDR_OFFSET_COUNT];
    if (offsets == 0 || first * 4u < CLHEAP_HDR_OFFSETS + offsets || first >= end ||
        end >= unit_count + (clheap_allocator_is_circular(a) ? 0u : 1u))
        return violation(what, len, "pool bounds [%u, %u) and %u offsets do not fit %llu units",
                         first, end, offsets, (unsigned long long)unit_count);
    s->allocator = a;
    s->heap_bytes = unit_count * CLHEAP_UNIT;
    s->pool_begin_bytes = (uint64_t)first * CLHEAP_UNIT;
    s->pool_bytes = (uint64_t)(end - first) * CLHEAP_UNIT;
    clheap_heap_errors_from_header(w, &s->errors);
    if (clheap_allocator_is_circular(a))
        return walk_circular(w, clheap_allocator_is_fused(a), s, what, len);

    uint64_t bump;
    memcpy(&bump, w + CLHEAP_HDR_BUMP, sizeof bump);
    uint64_t capacity = end - first;
    uint64_t used = bump < capacity ? bump : capacity;
    s->used_bytes = used * CLHEAP_UNIT;
    s->free_bytes = (capacity - used) * CLHEAP_UNIT;
    s->largest_free_bytes = s->free_bytes;
    s->free_chunks = s->free_bytes != 0;
    return CLHEAP_SUCCESS;
}
