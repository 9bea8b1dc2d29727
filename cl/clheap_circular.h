/* The CircularMalloc family (Vinkler & Havran 2015, Alg. 3 and sections 5.2-5.4):
 *   CMalloc    flag and next in separate words, one roving offset
 *   CFMalloc   flag fused into the next word, one roving offset
 *   CMMalloc   like CMalloc, one roving offset per compute unit over per-CU sub-heaps
 *   CFMMalloc  fused and multi
 * `fused` and `multi` are compile-time constants at every call site, so each program
 * compiles exactly one code path.
 *
 * The pool is a circular singly linked list of chunks that tile it in address order:
 * each chunk is a one-unit header followed by its payload; header.next is the unit of
 * the following chunk; the last chunk's next is the sentinel, a permanently used
 * header at CLHEAP_HDR_POOL_END whose next is the first chunk. malloc walks from a
 * roving offset, claims a free chunk that fits by CAS on its flag, splits off the
 * rest, and moves the roving offset past it; free merges the chunk with its successor
 * if that one is free, then marks the chunk free.
 *
 * Boundary tags and walls (beyond the paper). header.prev names the chunk before (a
 * hint for frees, Knuth's boundary tag), so a free also merges its chunk into a free
 * predecessor: free chunks freed in any order coalesce. Frees merge neither across a
 * wall, the start of a pre-split chunk (clheap_circular_on_wall), so a launch that frees
 * everything it took gives back the fresh heap's pre-split chunks, not one chunk as
 * large as the pool that every walker would queue on; walks merge across walls when a
 * request needs it. Why: free merged only forward, so a chunk freed before its
 * successor stayed apart from it; under steady churn (many work-items each mallocing
 * and freeing small requests, launch after launch) the list kept one free chunk per
 * warp claim, and each launch's walks merged and split them again, so every launch after
 * the rover's first lap was slower than the first. Merges back and the roving offset
 * left where claims put it (clheap_circular_rover_survives) brought the launches back
 * near the first's time (docs/performance.md, churn).
 *   prev is written only by the owner of the chunk before (a claimer that splits, an
 *   absorbing owner, a free that merges back, the leader of a warp claim), so when no
 *   kernel runs every chunk's prev is its predecessor (the first chunk's 0, the
 *   sentinel's the last chunk): clheap_heap_check verifies it. A reader trusts it only
 *   after claiming the chunk it names and seeing that chunk's next be its own. */
#ifndef CLHEAP_CIRCULAR_H
#define CLHEAP_CIRCULAR_H

#include "clheap_common.h"

/* Differences from the paper, all for forward progress and safety under arbitrary
 * scheduling (see clheap_layout.h for the tagged flags):
 *  - the search is bounded: one lap from the roving offset, at most
 *    CLHEAP_MAX_STEPS_BACK steps back to the header before a stale one and
 *    CLHEAP_MAX_RESTARTS restarts from the first chunk when that one is stale too;
 *    then NULL, counted in the heap header;
 *  - no work-item ever waits for another: a claimed chunk that is too small is released
 *    at once, a lost CAS moves on;
 *  - chunk size is checked before the CAS, so walkers do not lock chunks that cannot fit;
 *  - the paper's __threadfence is clheap_fence_release (device scope), and readers
 *    that claimed a chunk use clheap_fence_acquire before reading what it holds;
 *  - a malloc's walk merges a free chunk too small for it with a free successor
 *    (CLHEAP_WALK_MERGES);
 *  - a free merges back into a free predecessor and forward with one free successor,
 *    neither across a wall; merges move the roving offset only off a header they kill;
 *    a stale roving offset restarts the walk at its sub-heap's first chunk (a wall),
 *    not at the pool's;
 *  - a single roving offset does not follow claims into the pre-split's smallest
 *    chunks (clheap_circular_moves_rover), and a free there looks at its neighbours
 *    once more after it released its chunk (clheap_circular_remerge).
 *
 * Linearisation points: malloc, the CAS that sets the chunk's used flag (fused: the
 * used bit beside its tag and next); free, the store that clears it (a double free
 * reads it clear first); a merge, the CAS that sets the successor's used flag (only the
 * owner of the chunk before it merges, so two merges never take one successor); a
 * merge back, the CAS that claims the predecessor (fused: a word whose next is the
 * freed chunk; unfused: the flag, then next re-read and the claim undone if it is not):
 * the freed chunk is still used then, so nobody else can absorb it, and the
 * predecessor's owner is now the freer, so nobody else can split or relink it.
 *
 * Happens-before, each edge and the fence that gives it (the device's atomics are
 * relaxed, and the C11 build models the same fences, cl/clheap_port.h; but walkers may
 * read payload that was a header, so test_core_threads writes this family's payload with
 * relaxed atomics, and ThreadSanitizer cannot see a missing fence here: the edges below
 * are argued, not checked):
 *  - split: the rest's header is written, clheap_fence_release, then the claimed
 *    chunk's next is pointed at it. A walker that reads that next (a plain load of a
 *    word it then follows) finds a complete header, or the tag check sends it back.
 *  - free: the merged next is stored, clheap_fence_release, then the used flag
 *    cleared. A malloc whose CAS sees it clear (after clheap_fence_acquire) reads the
 *    merged next, and the freed payload's last writes came before that release.
 *  - merge: the successor's used flag is set by CAS (after which clheap_fence_acquire,
 *    for its next), the owner's next is relinked past it, clheap_fence_release, and
 *    only then the successor's header is killed (FLAG_DEAD). A walker holding the
 *    successor's offset either reads a valid used header (and passes through) or a dead
 *    one (the tag check restarts it); it never follows a next into the merged payload
 *    without the tag check.
 *  - merge back: as merge, with the predecessor as owner and the freed chunk as the
 *    successor: relink the predecessor past it, clheap_fence_release, kill it, point
 *    its successor's prev at the predecessor, then release the predecessor as free.
 *  - remerge: the freed chunk is claimed again by the same CAS as a walker's (then
 *    clheap_fence_acquire), and from there it is a free's merges and release.
 *  - prev: written by an owner before the release that ends its ownership, read after
 *    a claim's acquire; a stale prev fails the claim or its next check, never more.
 *  - warp-coalesced malloc (cl/clheap.cl): the leader writes every part's header,
 *    clheap_fence_release, links the chain, and a warp sync orders all of it before any
 *    lane uses its address. */

/* A chunk is split only if the rest can be a chunk of its own: header + 1 unit. */
#define CLHEAP_MIN_CHUNK_UNITS 2u

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_chunk(CLHEAP_GLOBAL clheap_u32 *h,
                                                            clheap_u32 unit)
{
    return h + (clheap_size)unit * (CLHEAP_UNIT / 4u);
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_fused_word(CLHEAP_GLOBAL clheap_u32 *h,
                                                                 clheap_u32 unit)
{
    return (CLHEAP_GLOBAL clheap_u64 *)clheap_chunk(h, unit);
}

/* The fused variants claim a header by swapping its whole 64-bit word. Without 64-bit
 * atomics the host refuses them (clheap_allocator_needs_atomics64) and cl/clheap.cl stops
 * their build; CMalloc and CMMalloc share this source but never reach the swap (fused is
 * a constant 0 there), so the stand-in, which never swaps, only keeps it compiling. */
#if CLHEAP_ATOMICS64
#define clheap_fused_cas clheap_cas64
#else
static CLHEAP_INLINE clheap_u64 clheap_fused_cas(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 expected, clheap_u64 desired)
{
    (void)p;
    (void)desired;
    return ~expected;
}
#endif

static CLHEAP_INLINE clheap_u64 clheap_fused(clheap_u32 unit, clheap_u32 used, clheap_u32 next)
{
    return ((clheap_u64)CLHEAP_TAG(unit) << 32) | (used ? CLHEAP_FUSED_USED_BIT : 0u) | next;
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_rover(CLHEAP_GLOBAL clheap_u32 *h, int multi)
{
    clheap_u32 index = multi ? clheap_group_index() % h[CLHEAP_HDR_OFFSET_COUNT] : 0u;
    return h + CLHEAP_HDR_OFFSETS + index;
}

/* A merge killed the header at `dead` (its bytes now belong to `survivor`): the roving
 * offset, if it named it, names the survivor instead; otherwise merges leave it alone.
 * Why: merges used to store the chunk after the merged one there, which sent the next
 * claims back into the stretch that frees were coalescing, among chunks still in use;
 * leaving it halved the multi variants' median churn launch. The papers'
 * Alloc-Cycle-Dealloc with one allocating work-item per warp, whose frees could be
 * reused at once, pays for it (CMalloc, CFMalloc). Sending the offset home at its
 * sub-heap's end (multi) made clheap-life slower on a full heap and the churn no faster. */
static CLHEAP_INLINE void clheap_circular_rover_survives(CLHEAP_GLOBAL clheap_u32 *h, int multi, clheap_u32 dead,
                                                         clheap_u32 survivor)
{
    CLHEAP_GLOBAL clheap_u32 *rover = clheap_rover(h, multi);
    if (clheap_load32(rover) == dead)
        clheap_cas32(rover, dead, survivor);
}

/* Points the prev of the chunk at unit (ours to write: we own the chunk before it). */
static CLHEAP_INLINE void clheap_circular_set_prev(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 prev)
{
    clheap_store32(clheap_chunk(h, unit) + CLHEAP_CHUNK_WORD_PREV, prev);
}

/* Where level `level` of a binary pre-split sub-heap begins, in units from its start
 * (level y holds 2^y chunks of PRESPLIT_ARG >> y units; level LEVELS is the remainder). */
static CLHEAP_INLINE clheap_u32 clheap_presplit_level_start(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 level)
{
    clheap_u32 arg = h[CLHEAP_HDR_PRESPLIT_ARG], start = 0u;
    for (clheap_u32 y = 0u; y < level; y++)
        start += (1u << y) * (arg >> y);
    return start;
}

/* The binary pre-split's floor for the single roving offset: the level at 3/4 of the
 * levels (clheap_circular_moves_rover, clheap_circular_rover_after). */
static CLHEAP_INLINE clheap_u32 clheap_circular_floor_level(CLHEAP_GLOBAL clheap_u32 *h)
{
    return h[CLHEAP_HDR_PRESPLIT_LEVELS] * 3u / 4u;
}

/* Whether a chunk starting at unit u starts a pre-split chunk (of a sub-heap, or of the
 * space a growth added: clheap_circular_grow cuts it at multiples of PRESPLIT_ARG from
 * the pool's first unit). Frees do not merge across one (see the top of this file). */
static CLHEAP_INLINE int clheap_circular_on_wall(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 u)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], heap_units = h[CLHEAP_HDR_HEAP_UNITS];
    clheap_u32 arg = h[CLHEAP_HDR_PRESPLIT_ARG], split = heap_units * h[CLHEAP_HDR_OFFSET_COUNT];
    clheap_u32 rel = u - first;
    if (u < first || rel >= split)
        return u < first || rel % arg == 0u;
    clheap_u32 off = rel % heap_units;
    if (h[CLHEAP_HDR_PRESPLIT] == CLHEAP_PRESPLIT_UNIFORM)
        return off % arg == 0u && off / arg < h[CLHEAP_HDR_CHUNKS_PER_HEAP];
    clheap_u32 start = 0u, levels = h[CLHEAP_HDR_PRESPLIT_LEVELS];
    for (clheap_u32 y = 0u; y < levels; y++) {
        clheap_u32 size = arg >> y, span = (1u << y) * size;
        if (off < start + span)
            return (off - start) % size == 0u;
        start += span;
    }
    return off == start; /* the remainder chunk */
}

/* Writes a chunk header (free or used) that nobody else can see yet. */
static CLHEAP_INLINE void clheap_write_header(CLHEAP_GLOBAL clheap_u32 *h, int fused,
                                              clheap_u32 unit, clheap_u32 used, clheap_u32 next, clheap_u32 prev)
{
    clheap_circular_set_prev(h, unit, prev);
    if (fused) {
        clheap_store64(clheap_fused_word(h, unit), clheap_fused(unit, used, next));
    } else {
        CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, unit);
        clheap_store32(c + CLHEAP_CHUNK_WORD_NEXT, next);
        clheap_store32(c + CLHEAP_CHUNK_WORD_FLAG,
                       used ? CLHEAP_FLAG_USED(unit) : CLHEAP_FLAG_FREE(unit));
    }
    clheap_store32(clheap_chunk(h, unit) + CLHEAP_CHUNK_WORD_REQUEST, 0u);
}

/* Tries to claim the chunk at unit o for `need` units. Returns 1 and its next if claimed;
 * 0 and the next to walk to if not (2 if it was free but too small); -1 if o does not
 * hold a header (stale offset). */
static CLHEAP_INLINE int clheap_try_claim(CLHEAP_GLOBAL clheap_u32 *h, int fused, clheap_u32 o,
                                          clheap_u32 need, clheap_u32 sentinel, clheap_u32 *next_out)
{
    if (fused) {
        CLHEAP_GLOBAL clheap_u64 *word = clheap_fused_word(h, o);
        clheap_u64 w = clheap_load64(word);
        clheap_u32 next = (clheap_u32)w & CLHEAP_FUSED_NEXT_MASK;
        if ((clheap_u32)(w >> 32) != CLHEAP_TAG(o) || next <= o || next > sentinel)
            return -1;
        *next_out = next;
        if ((clheap_u32)w & CLHEAP_FUSED_USED_BIT)
            return 0;
        if (next - o < need)
            return 2;
        /* The exact word we saw, so the claim fails if the chunk changed since. */
        return clheap_fused_cas(word, w, w | CLHEAP_FUSED_USED_BIT) == w;
    }
    CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, o);
    clheap_u32 flag = clheap_load32(c + CLHEAP_CHUNK_WORD_FLAG);
    clheap_u32 next = clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT);
    if ((flag != CLHEAP_FLAG_FREE(o) && flag != CLHEAP_FLAG_USED(o)) || next <= o || next > sentinel)
        return -1;
    *next_out = next;
    if (flag != CLHEAP_FLAG_FREE(o))
        return 0;
    if (next - o < need)
        return 2;
    if (clheap_cas32(c + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(o), CLHEAP_FLAG_USED(o)) !=
        CLHEAP_FLAG_FREE(o))
        return 0;
    clheap_fence_acquire();
    /* Ours now, so next is stable; it can differ from what we saw (the chunk was
     * claimed, split and freed in between). */
    next = clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT);
    *next_out = next;
    if (next - o >= need)
        return 1;
    clheap_store32(c + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(o));
    return 0;
}

/* The chunks `owner` and `dead` are ours (owner used, dead claimed), dead right after
 * owner: owner now reaches to `next`, dead's next. Relink first and only then mark dead
 * dead, so no live header points at a dead one for longer than two stores even if this
 * work-item is descheduled; then next's prev and the roving offset follow. Both merges,
 * forward (clheap_circular_absorb_next) and back (clheap_circular_merge_back), end here. */
static CLHEAP_INLINE void clheap_circular_unlink(CLHEAP_GLOBAL clheap_u32 *h, int fused, int multi, clheap_u32 owner,
                                                 clheap_u32 dead, clheap_u32 next)
{
    if (fused)
        clheap_store64(clheap_fused_word(h, owner), clheap_fused(owner, 1u, next));
    else
        clheap_store32(clheap_chunk(h, owner) + CLHEAP_CHUNK_WORD_NEXT, next);
    clheap_fence_release(); /* relinked past dead before it dies */
    if (fused)
        clheap_store64(clheap_fused_word(h, dead), (clheap_u64)CLHEAP_FLAG_DEAD);
    else
        clheap_store32(clheap_chunk(h, dead) + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_DEAD);
    clheap_circular_set_prev(h, next, owner);
    clheap_circular_rover_survives(h, multi, dead, owner);
}

/* The chunk at o is ours (used, claimed or being freed; its next in *next): swallows its
 * successor if that one is free (and, for a free's merge, `walls`, does not start a
 * pre-split chunk). Lock it first (it stays a valid, used header that walkers pass
 * through), then clheap_circular_unlink. Returns whether it merged. */
static CLHEAP_INLINE int clheap_circular_absorb_next(CLHEAP_GLOBAL clheap_u32 *h, int fused, int multi,
                                                     clheap_u32 o, clheap_u32 sentinel, clheap_u32 *next, int walls)
{
    clheap_u32 dead = *next;
    if (dead == sentinel || (walls && clheap_circular_on_wall(h, dead)))
        return 0;
    if (fused) {
        CLHEAP_GLOBAL clheap_u64 *after = clheap_fused_word(h, *next);
        clheap_u64 wn = clheap_load64(after);
        if ((clheap_u32)(wn >> 32) != CLHEAP_TAG(*next) || ((clheap_u32)wn & CLHEAP_FUSED_USED_BIT) ||
            clheap_fused_cas(after, wn, wn | CLHEAP_FUSED_USED_BIT) != wn)
            return 0;
        *next = (clheap_u32)wn & CLHEAP_FUSED_NEXT_MASK;
    } else {
        CLHEAP_GLOBAL clheap_u32 *after = clheap_chunk(h, *next);
        if (clheap_cas32(after + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(*next), CLHEAP_FLAG_USED(*next)) !=
            CLHEAP_FLAG_FREE(*next))
            return 0;
        clheap_fence_acquire();
        *next = clheap_load32(after + CLHEAP_CHUNK_WORD_NEXT);
    }
    clheap_circular_unlink(h, fused, multi, o, dead, *next);
    return 1;
}

/* Marks the chunk at o (ours, its next `next`) free: the merged next is visible first. */
static CLHEAP_INLINE void clheap_circular_release(CLHEAP_GLOBAL clheap_u32 *h, int fused, clheap_u32 o,
                                                  clheap_u32 next)
{
    clheap_fence_release();
    if (fused)
        clheap_store64(clheap_fused_word(h, o), clheap_fused(o, 0u, next));
    else
        clheap_store32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(o));
}

/* Whether the header at q leads to p (a valid header of q's whose next is p). */
static CLHEAP_INLINE int clheap_circular_leads_to(CLHEAP_GLOBAL clheap_u32 *h, int fused, clheap_u32 q, clheap_u32 p)
{
    if (fused) {
        clheap_u64 w = clheap_load64(clheap_fused_word(h, q));
        return (clheap_u32)(w >> 32) == CLHEAP_TAG(q) && ((clheap_u32)w & CLHEAP_FUSED_NEXT_MASK) == p;
    }
    CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, q);
    clheap_u32 flag = clheap_load32(c + CLHEAP_CHUNK_WORD_FLAG);
    return (flag == CLHEAP_FLAG_FREE(q) || flag == CLHEAP_FLAG_USED(q)) && clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT) == p;
}

/* The chunk at o is ours, being freed (its next `next`): merges it into its predecessor
 * if that one is free and o starts no pre-split chunk. Returns the unit of the chunk the
 * caller now owns and releases: the predecessor, or o if it did not merge.
 * The predecessor must also be linked: a claim that splits names its rest as o's prev
 * before it links the rest (see clheap_circular_claim), and a merge into a rest not yet
 * linked would kill o while the claimed chunk still leads to it (walkers met the dead
 * header until the link: 0.2% - 1% of test_core_threads' mallocs gave up). A rest not
 * yet linked still names its splitter as prev, whose next is not the rest; a linked
 * chunk's prev leads to it (or is 0: the first chunk). */
static CLHEAP_INLINE clheap_u32 clheap_circular_merge_back(CLHEAP_GLOBAL clheap_u32 *h, int fused, int multi,
                                                           clheap_u32 o, clheap_u32 next)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START];
    clheap_u32 p = clheap_load32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_PREV);
    if (p < first || p >= o)
        return o;
    /* The wall test (a loop over the pre-split levels) only once the predecessor is seen
     * free: most frees find it in use and skip the loop. */
    CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, p);
    if (fused) {
        CLHEAP_GLOBAL clheap_u64 *word = clheap_fused_word(h, p);
        clheap_u64 free_before_o = clheap_fused(p, 0u, o); /* free, and o its next */
        if (clheap_load64(word) != free_before_o || clheap_circular_on_wall(h, o) ||
            clheap_fused_cas(word, free_before_o, free_before_o | CLHEAP_FUSED_USED_BIT) != free_before_o)
            return o;
        clheap_fence_acquire();
    } else {
        if (clheap_load32(c + CLHEAP_CHUNK_WORD_FLAG) != CLHEAP_FLAG_FREE(p) || clheap_circular_on_wall(h, o) ||
            clheap_cas32(c + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(p), CLHEAP_FLAG_USED(p)) != CLHEAP_FLAG_FREE(p))
            return o;
        clheap_fence_acquire();
    }
    clheap_u32 q = clheap_load32(c + CLHEAP_CHUNK_WORD_PREV);
    int linked = q ? q >= first && q < p && clheap_circular_leads_to(h, fused, q, p) : p == first;
    if (!linked || (!fused && clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT) != o)) {
        clheap_circular_release(h, fused, p, o); /* unchanged */
        return o;
    }
    clheap_circular_unlink(h, fused, multi, p, o, next);
    return p;
}

/* The end of every free, its forward merges done (o ours, its next `next`): merges o back
 * into a free predecessor, then releases the chunk the caller now owns, whose unit it
 * returns. */
static CLHEAP_INLINE clheap_u32 clheap_circular_merge_back_and_release(CLHEAP_GLOBAL clheap_u32 *h, int fused,
                                                                       int multi, clheap_u32 o, clheap_u32 next)
{
    clheap_u32 owner = clheap_circular_merge_back(h, fused, multi, o, next);
    clheap_circular_release(h, fused, owner, next);
    return owner;
}

/* Whether the chunk at u is free (a valid header of u's, not in use). */
static CLHEAP_INLINE int clheap_circular_is_free(CLHEAP_GLOBAL clheap_u32 *h, int fused, clheap_u32 u)
{
    if (fused) {
        clheap_u64 w = clheap_load64(clheap_fused_word(h, u));
        return (clheap_u32)(w >> 32) == CLHEAP_TAG(u) && !((clheap_u32)w & CLHEAP_FUSED_USED_BIT);
    }
    return clheap_load32(clheap_chunk(h, u) + CLHEAP_CHUNK_WORD_FLAG) == CLHEAP_FLAG_FREE(u);
}

/* After a free released the chunk at o (merged or not): if a neighbour is free now, claim
 * o back as a walker would (a walker that claimed it first wins, and we stop) and merge
 * once more, as a free does. One look and one CAS: bounded, no wait. */
static CLHEAP_INLINE void clheap_circular_remerge(CLHEAP_GLOBAL clheap_u32 *h, int fused, int multi, clheap_u32 o)
{
    if (!CLHEAP_FREE_REMERGE || multi)
        return;
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], sentinel = h[CLHEAP_HDR_POOL_END], next;
    clheap_u64 w = 0u;
    if (fused) {
        w = clheap_load64(clheap_fused_word(h, o));
        next = (clheap_u32)w & CLHEAP_FUSED_NEXT_MASK;
        if ((clheap_u32)(w >> 32) != CLHEAP_TAG(o) || ((clheap_u32)w & CLHEAP_FUSED_USED_BIT))
            return;
    } else {
        if (clheap_load32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_FLAG) != CLHEAP_FLAG_FREE(o))
            return;
        next = clheap_load32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_NEXT);
    }
    if (next <= o || next > sentinel)
        return;
    clheap_u32 p = clheap_load32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_PREV);
    int after = next != sentinel && clheap_circular_is_free(h, fused, next) && !clheap_circular_on_wall(h, next);
    int before = p >= first && p < o && clheap_circular_is_free(h, fused, p) && !clheap_circular_on_wall(h, o);
    if (!after && !before)
        return;
    if (fused) {
        if (clheap_fused_cas(clheap_fused_word(h, o), w, w | CLHEAP_FUSED_USED_BIT) != w)
            return;
        clheap_fence_acquire();
    } else {
        CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, o);
        if (clheap_cas32(c + CLHEAP_CHUNK_WORD_FLAG, CLHEAP_FLAG_FREE(o), CLHEAP_FLAG_USED(o)) != CLHEAP_FLAG_FREE(o))
            return;
        clheap_fence_acquire();
        next = clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT);
    }
    clheap_circular_absorb_next(h, fused, multi, o, sentinel, &next, 1);
    clheap_circular_merge_back_and_release(h, fused, multi, o, next);
}

/* Whether a claim of `need` units from a chunk of `units` moves the roving offset: for the
 * single-offset variants over a binary pre-split, only a chunk at least that of the
 * pre-split level at 3/4 of the levels, or 8 times the request. Why: the offset crept
 * level by level through the pre-split, and once a lap it reached the last levels, whose
 * chunks are smaller than a warp's claim; every walker then merged chunks to fit, and
 * that launch took many times the median. With this rule the slowest churn launches came
 * down to a few times the median, and the papers' tests stayed about as they were. A
 * floor alone (a fixed size, or the level at 3/4 for every variant) kept the offset on a
 * few chunks where requests are tiny, and small requests in small heaps got slower, the
 * multi variants' most; their churn has no such launch, so they move it on every claim
 * as before. */
static CLHEAP_INLINE int clheap_circular_moves_rover(CLHEAP_GLOBAL clheap_u32 *h, int multi, clheap_u32 units,
                                                     clheap_u32 need)
{
    if (multi || h[CLHEAP_HDR_PRESPLIT] != CLHEAP_PRESPLIT_BINARY || units / 8u >= need)
        return 1;
    return units >= (h[CLHEAP_HDR_PRESPLIT_ARG] >> clheap_circular_floor_level(h));
}

static CLHEAP_INLINE clheap_u32 clheap_circular_rover_after(CLHEAP_GLOBAL clheap_u32 *h, int multi, clheap_u32 next,
                                                            clheap_u32 home)
{
    if (!CLHEAP_ROVER_HOME_PAST_FLOOR || multi || h[CLHEAP_HDR_PRESPLIT] != CLHEAP_PRESPLIT_BINARY)
        return next;
    clheap_u32 rel = next - h[CLHEAP_HDR_POOL_START];
    clheap_u32 floor_end = clheap_presplit_level_start(h, clheap_circular_floor_level(h) + 1u);
    return rel >= floor_end && rel < h[CLHEAP_HDR_HEAP_UNITS] ? home : next;
}

/* Claims a chunk of at least `need` units (header included), splitting off the rest,
 * and moves the roving offset past it (clheap_circular_moves_rover says when). Returns
 * the chunk's header unit and, in *end, the unit where it ends; 0 if nothing fits, with
 * *why the header counter that explains it (not incremented here: only a NULL that
 * reaches the caller is counted). */
static CLHEAP_INLINE clheap_u32 clheap_circular_claim(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 need, int fused,
                                                      int multi, clheap_u32 *end, int *why)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], sentinel = h[CLHEAP_HDR_POOL_END];
    CLHEAP_GLOBAL clheap_u32 *rover = clheap_rover(h, multi);
    clheap_u32 home = multi ? first + (clheap_u32)(rover - (h + CLHEAP_HDR_OFFSETS)) * h[CLHEAP_HDR_HEAP_UNITS] : first;
    clheap_u32 o = clheap_load32(rover);
    if (o < first || o >= sentinel)
        o = home;
    clheap_u32 start = o, next = 0u, prev = 0u, merges = 0u, steps_back = 0u;
    int wrapped = 0, restarts = 0, claimed = 0;
    /* One exit: every way out of the walk breaks to the test after it. (Mesa 22.3's
     * llvmpipe gave lanes that returned from inside this loop another lane's chunk.) */
    for (;;) {
        if (o == sentinel) {
            /* A lap that began at the first chunk ends here; any other wraps once. */
            if (wrapped || start == first) {
                *why = CLHEAP_HDR_ERR_OUT_OF_MEMORY;
                break;
            }
            wrapped = 1;
            o = first;
            prev = 0u;
        }
        if (wrapped && o >= start) {
            *why = CLHEAP_HDR_ERR_OUT_OF_MEMORY;
            break;
        }
        claimed = clheap_try_claim(h, fused, o, need, sentinel, &next);
        CLHEAP_CIRCULAR_EVENT(STEP);
        if (claimed == 2) { /* free but too small: merge it with free successors until it fits */
            CLHEAP_CIRCULAR_EVENT(SMALL);
            claimed = 0;
            if (merges < CLHEAP_WALK_MERGES && next != sentinel &&
                clheap_try_claim(h, fused, o, 0u, sentinel, &next) > 0) {
                while (next - o < need && merges < CLHEAP_WALK_MERGES &&
                       clheap_circular_absorb_next(h, fused, multi, o, sentinel, &next, 0)) {
                    CLHEAP_CIRCULAR_EVENT(WALK_MERGE);
                    merges++;
                }
                if (next - o >= need)
                    claimed = 1; /* ours, and now it fits */
                else
                    clheap_circular_release(h, fused, o, next); /* its successor is in use, or the merges are spent */
            }
        }
        if (claimed > 0)
            break;
        if (claimed < 0) {
            /* A header merged away under us. Step back to the header we came from,
             * whose next now skips it; if that one went too (or there is none), start
             * a fresh lap from the first chunk of the roving offset's sub-heap (a wall,
             * which only a walk's merge takes away), or if that one went too, from the
             * pool's first chunk, whose header is never merged away. Why the sub-heap's:
             * a roving offset left on a chunk that frees merged back sent the next
             * launch's walkers through every sub-heap before theirs. */
            CLHEAP_CIRCULAR_EVENT(DEAD);
            if (prev && ++steps_back <= CLHEAP_MAX_STEPS_BACK) {
                o = prev;
                prev = 0u;
                continue;
            }
            CLHEAP_CIRCULAR_EVENT(RESTART);
            if (++restarts > CLHEAP_MAX_RESTARTS) {
                *why = CLHEAP_HDR_ERR_CONTENDED;
                break;
            }
            o = start = o != home ? home : first;
            prev = 0u;
            wrapped = 0;
            continue;
        }
        prev = o;
        o = next;
    }
    if (claimed <= 0)
        return 0u;
    int moves_rover = clheap_circular_moves_rover(h, multi, next - o, need);
    if (next - o >= need + CLHEAP_MIN_CHUNK_UNITS) {
        clheap_u32 rest = o + need;
        clheap_write_header(h, fused, rest, 0u, next, o);
        /* Before rest is linked: once it is, a walker may claim and split it and name its
         * own rest. Until then nobody but next's free reads this (a merge back into rest,
         * which sees rest unlinked and lets it be: clheap_circular_merge_back). */
        clheap_circular_set_prev(h, next, rest);
        clheap_fence_release(); /* the new header is visible before it is linked */
        if (fused)
            clheap_store64(clheap_fused_word(h, o), clheap_fused(o, 1u, rest));
        else
            clheap_store32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_NEXT, rest);
        next = rest;
    }
    if (moves_rover)
        clheap_store32(rover, clheap_circular_rover_after(h, multi, next, home));
    *end = next;
    return o;
}

/* Returns the payload unit of a new allocation, or 0. */
static CLHEAP_INLINE clheap_u32 clheap_circular_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h,
                                                            clheap_size bytes, int fused,
                                                            int multi)
{
    clheap_u32 payload = clheap_units_for(bytes, h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START] - 1u);
    if (!payload) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 end;
    int why = CLHEAP_HDR_ERR_OUT_OF_MEMORY;
    clheap_u32 o = clheap_circular_claim(h, payload + 1u, fused, multi, &end, &why);
    if (!o) {
        clheap_count_error(h, why);
        return 0u;
    }
    clheap_store32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_REQUEST, (clheap_u32)bytes);
    return o + 1u;
}

/* The chunk a pointer to be freed names: 1 with its header unit in *o and its next in
 * *next if it is a used chunk; else 0, the error counted (NULL counts nothing). */
static CLHEAP_INLINE int clheap_circular_free_check(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr, int fused,
                                                    clheap_u32 *o, clheap_u32 *next)
{
    if (!ptr)
        return 0;
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], sentinel = h[CLHEAP_HDR_POOL_END];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first + 1u, sentinel);
    if (!unit)
        return 0;
    *o = unit - 1u;
    if (fused) {
        clheap_u64 w = clheap_load64(clheap_fused_word(h, *o));
        if ((clheap_u32)(w >> 32) != CLHEAP_TAG(*o)) {
            clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
            return 0;
        }
        if (!((clheap_u32)w & CLHEAP_FUSED_USED_BIT)) {
            clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
            return 0;
        }
        *next = (clheap_u32)w & CLHEAP_FUSED_NEXT_MASK;
        return 1;
    }
    CLHEAP_GLOBAL clheap_u32 *c = clheap_chunk(h, *o);
    clheap_u32 flag = clheap_load32(c + CLHEAP_CHUNK_WORD_FLAG);
    if (flag == CLHEAP_FLAG_FREE(*o)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
        return 0;
    }
    if (flag != CLHEAP_FLAG_USED(*o)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return 0;
    }
    *next = clheap_load32(c + CLHEAP_CHUNK_WORD_NEXT);
    return 1;
}

static CLHEAP_INLINE void clheap_circular_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr,
                                               int fused, int multi)
{
    clheap_u32 o, next;
    if (!clheap_circular_free_check(h, ptr, fused, &o, &next))
        return;
    clheap_circular_absorb_next(h, fused, multi, o, h[CLHEAP_HDR_POOL_END], &next, 1);
    clheap_circular_remerge(h, fused, multi, clheap_circular_merge_back_and_release(h, fused, multi, o, next));
}

/* ---- pre-splitting (eq. 1) ------------------------------------------------------
 * The pool [first, sentinel) is `heaps` sub-heaps of HEAP_UNITS units each (one for the
 * single-offset variants, one per compute unit for the multi variants). A binary
 * sub-heap holds, for each level x < L, 2^x chunks of R >> x units, then one chunk with
 * the rest; a uniform sub-heap holds chunks of S units, the last one taking the rest.
 * Chunk `index` of the whole pool is placed by clheap_presplit_chunk without reading
 * any other chunk, so initialisation is one work-item per chunk. */
static CLHEAP_INLINE void clheap_presplit_chunk(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 index,
                                                clheap_u32 *unit_out, clheap_u32 *units_out)
{
    clheap_u32 heap_units = h[CLHEAP_HDR_HEAP_UNITS];
    clheap_u32 per_heap = h[CLHEAP_HDR_CHUNKS_PER_HEAP];
    clheap_u32 arg = h[CLHEAP_HDR_PRESPLIT_ARG];
    clheap_u32 heap_base = h[CLHEAP_HDR_POOL_START] + (index / per_heap) * heap_units;
    clheap_u32 i = index % per_heap, start = 0u, units;
    if (h[CLHEAP_HDR_PRESPLIT] == CLHEAP_PRESPLIT_UNIFORM) {
        start = i * arg;
        units = i + 1u == per_heap ? heap_units - start : arg;
    } else {
        clheap_u32 levels = h[CLHEAP_HDR_PRESPLIT_LEVELS];
        clheap_u32 level = 0u;
        while (level + 1u < 32u && (1u << (level + 1u)) <= i + 1u)
            level++;
        if (i + 1u == per_heap)
            level = levels; /* the remainder chunk after the last level */
        start = clheap_presplit_level_start(h, level);
        if (level == levels) {
            units = heap_units - start;
        } else {
            start += (i + 1u - (1u << level)) * (arg >> level);
            units = arg >> level;
        }
    }
    *unit_out = heap_base + start;
    *units_out = units;
}

/* Growth (one work-item, clheap_heap_grow, after the old buffer was copied into the
 * larger one): the sentinel moves to new_sentinel and the new space, from the old
 * sentinel on, becomes free chunks cut at multiples of `step` units from the pool's
 * first unit (the walls there, clheap_circular_on_wall; the last takes the rest), so the
 * list takes it in. Why chunks: as one chunk, a GPU's thousands of concurrent retries
 * all walked to it and split it one at a time, and after several growths many still
 * gave up. */
static CLHEAP_INLINE void clheap_circular_grow(CLHEAP_GLOBAL clheap_u32 *h, int fused, clheap_u32 new_sentinel,
                                               clheap_u32 step)
{
    clheap_u32 old = h[CLHEAP_HDR_POOL_END], first = h[CLHEAP_HDR_POOL_START];
    clheap_u32 prev = clheap_load32(clheap_chunk(h, old) + CLHEAP_CHUNK_WORD_PREV); /* the old last chunk */
    h[CLHEAP_HDR_POOL_END] = new_sentinel;
    for (clheap_u32 u = old; u < new_sentinel;) {
        clheap_u32 wall = first + ((u - first) / step + 1u) * step; /* the next multiple of step after u */
        clheap_u32 next = wall - u < 2u ? wall + step : wall;        /* a chunk has at least 2 units */
        if (next > new_sentinel || new_sentinel - next < 2u)
            next = new_sentinel;
        clheap_write_header(h, fused, u, 0u, next, prev);
        prev = u;
        u = next;
    }
    clheap_write_header(h, fused, new_sentinel, 1u, first, prev);
}

/* Writes the header of chunk `index`, or the sentinel when index == chunk count. */
static CLHEAP_INLINE void clheap_circular_init_chunk(CLHEAP_GLOBAL clheap_u32 *h, int fused,
                                                     clheap_u32 index, clheap_u32 chunk_count)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], sentinel = h[CLHEAP_HDR_POOL_END];
    clheap_u32 unit, units, prev = 0u, prev_units;
    if (index)
        clheap_presplit_chunk(h, index - 1u, &prev, &prev_units);
    if (index == chunk_count) {
        clheap_write_header(h, fused, sentinel, 1u, first, prev);
        return;
    }
    clheap_presplit_chunk(h, index, &unit, &units);
    clheap_write_header(h, fused, unit, 0u, index + 1u == chunk_count ? sentinel : unit + units, prev);
}

#endif
