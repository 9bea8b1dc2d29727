/* FreeHeap: paper 003's shader heap. Serial by design: every operation runs in one
 * work-item at a time (the host-enqueued batches run their requests in one work-item,
 * one after another); work-items that call it while another is inside are refused at
 * once (see Serial below), never made to wait.
 *
 * The pool is a sequence of blocks that tile it. A block at unit b with p payload units
 * is a header unit, the payload [b + 1, b + 1 + p), and a footer unit (boundary tags:
 * the size before and after each block, so both neighbours are found in O(1)):
 *   header: word 0 p, word 1 the block's position in the free-heap (0: allocated),
 *           word 2 a tag, FREE(b) or USED(b) (hashes of b, cl/clheap_layout.h), word 3
 *           the bytes asked for (allocated blocks);
 *   footer: word 0 p, word 1 the header's tag.
 * The free blocks' header units are a binary max-heap ordered by payload size, kept in
 * the heap buffer (entries 1..count of the array at HDR_FH_ENTRIES); each free block's
 * header names its entry, so a neighbour being merged is taken out in O(log n).
 *
 * Invariants between operations (verified by clheap_heap_check, host/heap_walk.c):
 *   F1  blocks tile [POOL_START, POOL_END): each next block starts at b + p + 2;
 *   F2  header and footer agree on p and on the tag; the tag is FREE(b) or USED(b);
 *   F3  entries 1..count are exactly the free blocks, each naming its own position;
 *       allocated blocks name position 0; count <= capacity;
 *   F4  max-heap: no entry is larger than its parent (entry p / 2);
 *   F5  no two free blocks are adjacent (the paper's criterion for no free-block
 *       fragmentation): free merges the freed block with every free neighbour;
 *   F6  every block has at least one payload unit, so with F5 at most one block in
 *       six units is free and capacity = pool units / 6 + 2 entries always suffice;
 *   F7  the lock word is 0.
 *
 * malloc and the lock: see clheap_fh_take and clheap_fh_lock below. */
#ifndef CLHEAP_FREEHEAP_H
#define CLHEAP_FREEHEAP_H

#include "clheap_common.h"

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_fh_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit)
{
    return (CLHEAP_GLOBAL clheap_u32 *)clheap_unit_pointer(h, unit);
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_fh_entries(CLHEAP_GLOBAL clheap_u32 *h)
{
    return clheap_fh_unit(h, h[CLHEAP_HDR_FH_ENTRIES]);
}

static CLHEAP_INLINE clheap_u32 clheap_fh_size(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 b)
{
    return clheap_load32(clheap_fh_unit(h, b) + CLHEAP_FH_WORD_SIZE);
}

/* Header and footer of a block of p payload units at b. */
static CLHEAP_INLINE void clheap_fh_write_block(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 b, clheap_u32 p,
                                                clheap_u32 pos, clheap_u32 tag, clheap_u32 bytes)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_fh_unit(h, b), *footer = clheap_fh_unit(h, b + p + 1u);
    clheap_store32(header + CLHEAP_FH_WORD_SIZE, p);
    clheap_store32(header + CLHEAP_FH_WORD_POS, pos);
    clheap_store32(header + CLHEAP_FH_WORD_TAG, tag);
    clheap_store32(header + CLHEAP_FH_WORD_BYTES, bytes);
    clheap_store32(footer + CLHEAP_FH_WORD_SIZE, p);
    clheap_store32(footer + CLHEAP_FH_WORD_POS, tag);
}

/* Entry p names block b, and b names p. */
static CLHEAP_INLINE void clheap_fh_place(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *e, clheap_u32 p,
                                          clheap_u32 b)
{
    clheap_store32(e + p, b);
    clheap_store32(clheap_fh_unit(h, b) + CLHEAP_FH_WORD_POS, p);
}

/* Moves entry p towards the root while it is larger than its parent; then towards the
 * leaves while a child is larger (one of the two moves it at most). O(log n) each. */
static CLHEAP_INLINE void clheap_fh_sift(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *e, clheap_u32 p)
{
    clheap_u32 n = clheap_load32(h + CLHEAP_HDR_FH_COUNT), b = clheap_load32(e + p), size = clheap_fh_size(h, b);
    while (p > 1u) {
        clheap_u32 parent = clheap_load32(e + p / 2u);
        if (clheap_fh_size(h, parent) >= size)
            break;
        clheap_fh_place(h, e, p, parent);
        p /= 2u;
    }
    for (;;) {
        clheap_u32 c = 2u * p;
        if (c > n)
            break;
        clheap_u32 child = clheap_load32(e + c), child_size = clheap_fh_size(h, child);
        if (c + 1u <= n) {
            clheap_u32 right = clheap_load32(e + c + 1u), right_size = clheap_fh_size(h, right);
            if (right_size > child_size) {
                c++;
                child = right;
                child_size = right_size;
            }
        }
        if (child_size <= size)
            break;
        clheap_fh_place(h, e, p, child);
        p = c;
    }
    clheap_fh_place(h, e, p, b);
}

static CLHEAP_INLINE void clheap_fh_remove(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *e, clheap_u32 p)
{
    clheap_u32 n = clheap_load32(h + CLHEAP_HDR_FH_COUNT), last = clheap_load32(e + n);
    clheap_store32(h + CLHEAP_HDR_FH_COUNT, n - 1u);
    if (p < n) {
        clheap_fh_place(h, e, p, last);
        clheap_fh_sift(h, e, p);
    }
}

static CLHEAP_INLINE void clheap_fh_insert(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *e, clheap_u32 b)
{
    clheap_u32 n = clheap_load32(h + CLHEAP_HDR_FH_COUNT) + 1u;
    clheap_store32(h + CLHEAP_HDR_FH_COUNT, n);
    clheap_fh_place(h, e, n, b);
    clheap_fh_sift(h, e, n);
}

/* The free block that ends where the unit `b` starts (found through its footer), or 0
 * (the header's unit, never a block's): b is the pool's first unit, or the block before
 * it is allocated. */
static CLHEAP_INLINE clheap_u32 clheap_fh_free_before(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 b)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START];
    if (b <= first)
        return 0u;
    CLHEAP_GLOBAL clheap_u32 *footer = clheap_fh_unit(h, b - 1u);
    clheap_u32 size = clheap_load32(footer + CLHEAP_FH_WORD_SIZE), prev = b - 2u - size;
    return size <= b - first - 2u && clheap_load32(footer + CLHEAP_FH_WORD_POS) == CLHEAP_FLAG_FREE(prev)
               ? prev
               : 0u;
}

/* Serial: an operation holds the lock word (a CAS from 0 to 1, clheap_fence_acquire;
 * clheap_fence_release, then 0) and is linearised there. A work-item that finds it held
 * returns NULL or leaves its free undone, counted as contended: calling the free-heap
 * from work-items that run at once is a usage error, reported and harmless. Headers a
 * merge leaves inside a free block get the tag DEAD, so a second free of them is told
 * apart from a free of a live block; payload bytes could in principle look like a tag
 * (probability 2^-32, as for the CircularMalloc family). */
static CLHEAP_INLINE int clheap_fh_lock(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (clheap_cas32(h + CLHEAP_HDR_FH_LOCK, 0u, 1u) != 0u) {
        clheap_count_error(h, CLHEAP_HDR_ERR_CONTENDED);
        return 0;
    }
    clheap_fence_acquire(); /* the last holder's writes */
    return 1;
}

static CLHEAP_INLINE void clheap_fh_unlock(CLHEAP_GLOBAL clheap_u32 *h)
{
    clheap_fence_release(); /* this holder's writes before the next holder's */
    clheap_store32(h + CLHEAP_HDR_FH_LOCK, 0u);
}

/* A block of at least `need` payload units (under the lock); its payload's unit or 0.
 * malloc of n units: if the root is smaller than n, NULL (counted); else it descends
 * from the root to the child that still fits and is smaller (best fit in the paper's
 * sense: close to the smallest block that fits, in O(log n)), takes that block, and
 * gives back its tail as a free block in the same entry (sifted down) when the tail can
 * hold a block, else takes the block whole (its entry removed: the last entry moves in
 * and is sifted). A strided request (count, stride, clheap_freeheap_malloc_strided) asks
 * for (count + 1) * stride bytes unless 16-byte units are already aligned to stride, and
 * returns its address in stride units: (raw + (stride - raw % stride) % stride) / stride,
 * raw being the payload's byte offset in the buffer (the paper's padding rule); the
 * handle to free is the unit. */
static CLHEAP_INLINE clheap_u32 clheap_fh_take(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 need, clheap_u32 bytes)
{
    CLHEAP_GLOBAL clheap_u32 *e = clheap_fh_entries(h);
    clheap_u32 n = clheap_load32(h + CLHEAP_HDR_FH_COUNT);
    if (n == 0u || clheap_fh_size(h, clheap_load32(e + 1)) < need)
        return 0u;
    clheap_u32 p = 1u;
    for (;;) { /* the smaller child that still fits */
        clheap_u32 best = 0u, best_size = 0xffffffffu;
        for (clheap_u32 c = 2u * p; c <= 2u * p + 1u && c <= n; c++) {
            clheap_u32 size = clheap_fh_size(h, clheap_load32(e + c));
            if (size >= need && size < best_size) {
                best = c;
                best_size = size;
            }
        }
        if (!best)
            break;
        p = best;
    }
    clheap_u32 b = clheap_load32(e + p), size = clheap_fh_size(h, b);
    if (size - need >= CLHEAP_FH_MIN_BLOCK) { /* the tail stays free, in the same entry */
        clheap_u32 tail = b + need + 2u;
        clheap_fh_write_block(h, tail, size - need - 2u, p, CLHEAP_FLAG_FREE(tail), 0u);
        clheap_store32(e + p, tail);
        clheap_fh_sift(h, e, p);
        size = need;
    } else {
        clheap_fh_remove(h, e, p);
    }
    clheap_fh_write_block(h, b, size, 0u, CLHEAP_FLAG_USED(b), bytes);
    return b + 1u;
}

/* The payload units a request of `bytes` needs; 0 (and bad_size counted) if none fit. */
static CLHEAP_INLINE clheap_u32 clheap_fh_units_for(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    clheap_size pool = (clheap_size)(h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START]) * CLHEAP_UNIT;
    if (bytes == 0u || bytes > pool) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    return (clheap_u32)((bytes + CLHEAP_UNIT - 1u) / CLHEAP_UNIT);
}

/* A block for `bytes`, of which `asked` were asked for (the rest is a strided request's
 * padding), recorded for the statistics. */
static CLHEAP_INLINE clheap_u32 clheap_fh_malloc(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes, clheap_size asked)
{
    clheap_u32 need = clheap_fh_units_for(h, bytes);
    if (!need || !clheap_fh_lock(h))
        return 0u;
    clheap_u32 unit = clheap_fh_take(h, need, asked > 0xffffffffu ? 0xffffffffu : (clheap_u32)asked);
    clheap_fh_unlock(h);
    if (!unit)
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
    return unit;
}

static CLHEAP_INLINE clheap_u32 clheap_freeheap_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    return clheap_fh_malloc(h, bytes, bytes);
}

/* count elements of `stride` bytes whose address, in stride units from the buffer's
 * start, is returned (0: NULL); *handle gets the unit to free. */
static CLHEAP_INLINE clheap_size clheap_freeheap_malloc_strided(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 count,
                                                                clheap_u32 stride, clheap_u32 *handle)
{
    *handle = 0u;
    if (count == 0u || stride == 0u) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    int aligned = CLHEAP_UNIT % stride == 0u; /* every unit is a multiple of stride */
    clheap_u32 unit = clheap_fh_malloc(h, ((clheap_size)count + (aligned ? 0u : 1u)) * stride, (clheap_size)count * stride);
    if (!unit)
        return 0u;
    *handle = unit;
    clheap_size raw = (clheap_size)unit * CLHEAP_UNIT;
    return (raw + (stride - raw % stride) % stride) / stride;
}

static CLHEAP_INLINE void clheap_freeheap_free_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    if (unit == 0u)
        return;
    if (unit <= first || unit >= end) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_OUTSIDE);
        return;
    }
    if (!clheap_fh_lock(h))
        return;
    clheap_u32 b = unit - 1u;
    CLHEAP_GLOBAL clheap_u32 *header = clheap_fh_unit(h, b);
    clheap_u32 tag = clheap_load32(header + CLHEAP_FH_WORD_TAG), size = clheap_load32(header + CLHEAP_FH_WORD_SIZE);
    int valid = tag == CLHEAP_FLAG_USED(b) && size <= end - unit - 1u &&
                clheap_load32(clheap_fh_unit(h, b + size + 1u) + CLHEAP_FH_WORD_POS) == tag;
    if (!valid) {
        clheap_fh_unlock(h);
        clheap_count_error(h, tag == CLHEAP_FLAG_FREE(b) || tag == CLHEAP_FLAG_DEAD ? CLHEAP_HDR_ERR_DOUBLE_FREE
                                                                                   : CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return;
    }
    CLHEAP_GLOBAL clheap_u32 *e = clheap_fh_entries(h);
    clheap_u32 start = b, total = size, next = b + size + 2u, prev = clheap_fh_free_before(h, b);
    if (prev) {
        clheap_fh_remove(h, e, clheap_load32(clheap_fh_unit(h, prev) + CLHEAP_FH_WORD_POS));
        start = prev;
        total = next - prev - 2u;
        clheap_store32(header + CLHEAP_FH_WORD_TAG, CLHEAP_FLAG_DEAD);
    }
    if (next < end && clheap_load32(clheap_fh_unit(h, next) + CLHEAP_FH_WORD_TAG) == CLHEAP_FLAG_FREE(next)) {
        clheap_fh_remove(h, e, clheap_load32(clheap_fh_unit(h, next) + CLHEAP_FH_WORD_POS));
        total += clheap_fh_size(h, next) + 2u;
        clheap_store32(clheap_fh_unit(h, next) + CLHEAP_FH_WORD_TAG, CLHEAP_FLAG_DEAD);
    }
    clheap_fh_write_block(h, start, total, 0u, CLHEAP_FLAG_FREE(start), 0u);
    clheap_fh_insert(h, e, start);
    clheap_fh_unlock(h);
}

static CLHEAP_INLINE void clheap_freeheap_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    if (!ptr)
        return;
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first + 1u, end);
    if (unit)
        clheap_freeheap_free_unit(h, unit);
}

/* Growth (one work-item, clheap_heap_grow, after the old buffer was copied into the
 * larger one): the pool ends at new_end and the free-heap moves to new_entries (after the
 * pool, with room for the larger pool's blocks by F6), its entries read from the old
 * buffer (the new place may overlap the old one); the new space is a free block, or
 * extends the pool's last block if that one is free (F5). */
static CLHEAP_INLINE void clheap_freeheap_grow(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *old,
                                               clheap_u32 new_end, clheap_u32 new_entries, clheap_u32 new_capacity)
{
    clheap_u32 old_end = h[CLHEAP_HDR_POOL_END], n = clheap_load32(h + CLHEAP_HDR_FH_COUNT);
    CLHEAP_GLOBAL clheap_u32 *from = clheap_fh_entries(old), *to = clheap_fh_unit(h, new_entries);
    for (clheap_u32 i = 1u; i <= n; i++)
        clheap_store32(to + i, clheap_load32(from + i));
    h[CLHEAP_HDR_FH_ENTRIES] = new_entries;
    h[CLHEAP_HDR_FH_CAPACITY] = new_capacity;
    h[CLHEAP_HDR_POOL_END] = new_end;
    clheap_u32 last = clheap_fh_free_before(h, old_end), start = old_end;
    if (last) {
        clheap_fh_remove(h, to, clheap_load32(clheap_fh_unit(h, last) + CLHEAP_FH_WORD_POS));
        start = last;
    }
    clheap_fh_write_block(h, start, new_end - start - 2u, 0u, CLHEAP_FLAG_FREE(start), 0u);
    clheap_fh_insert(h, to, start);
}

/* Initialisation (one work-item): one free block over the whole pool. */
static CLHEAP_INLINE void clheap_freeheap_init(CLHEAP_GLOBAL clheap_u32 *h)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    clheap_fh_write_block(h, first, end - first - 2u, 1u, CLHEAP_FLAG_FREE(first), 0u);
    clheap_store32(clheap_fh_entries(h) + 1, first);
    clheap_store32(h + CLHEAP_HDR_FH_COUNT, 1u);
    clheap_store32(h + CLHEAP_HDR_FH_LOCK, 0u);
}

#endif
