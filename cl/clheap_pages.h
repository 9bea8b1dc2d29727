/* The page tier of TierAlloc (cl/clheap_tier.h): contiguous runs of frames, from one
 * frame up to the whole pool, found without walking lists.
 *
 * Structure. The pool's N frames are segments of 2^S frames (S from the header,
 * CLHEAP_HDR_SEGMENT_ORDER; the host makes N a multiple of 2^S). Inside a segment the
 * frames form a binary buddy system: a piece of order o is 2^o frames starting at a
 * multiple of 2^o. For every order o in 0..S a hierarchical bitmap B_o
 * (cl/clheap_bitmap.h) has one bit per order-o piece: 1 = that piece is free, whole, at
 * this order. B_S's bits are whole free segments; a fresh heap has all of them set.
 *
 * Invariants when no kernel runs (clheap_heap_check verifies them):
 *   P1  the free pieces of all orders are disjoint, and a frame is covered by a free
 *       piece iff it belongs to no block and no large allocation;
 *   P2  no two buddies (pieces 2i and 2i+1 of one order below S) are both free, except
 *       after a merge gave up under contention (bounded; the check counts such pairs in
 *       stale_hints and clheap_heap_repair merges them);
 *   P3  the bitmaps' upper levels are hints as in cl/clheap_bitmap.h;
 *   P4  no split is counted as under way (CLHEAP_HDR_PAGES_SPLITTING is 0).
 *
 * Operations (no step waits for another work-item; every loop is bounded):
 *   take(m)   m <= 2^S: order k = ceil(log2 m); clear a bit of B_k, else of the lowest
 *             B_o (o > k) that has one, splitting it down: at each order j in o-1..k
 *             one half is set free in B_j (its buddy, the other half, is ours, so it
 *             cannot merge). Linearisation point: the atomic AND that clears the bit.
 *             m > 2^S: a run of ceil(m / 2^S) set bits of B_S, possibly across 64-bit
 *             containers, taken by one AND per container in address order; an AND that
 *             finds a bit gone puts back what it cleared and rolls back the containers
 *             already taken. Linearisation point: the last container's AND.
 *             Then the unused tail [m, 2^k) (or of the last segment) is released.
 *   release(piece of order o)  set its bit in B_o; if the buddy's bit was set, one AND
 *             clears both, and if both were still set the parent piece is released at
 *             o + 1 (the merge's linearisation point is that AND). If a taker got one
 *             half first, the other half goes back (ours: the merge is tried again, a
 *             bounded number of times). At order S the segment's bit is set.
 *             An AND, not a CAS of the whole container: the other 62 pieces of the
 *             container change under churn, and a CAS kept failing on them.
 *   put(f, m) releases the aligned binary decomposition of [f, f + m): since f is
 *             aligned to the size taken, the pieces are exactly those of take's split.
 *
 * Happens-before: a taker reads nothing of a piece it takes but the frame headers
 * that the previous owner wrote before releasing it; the owner's clheap_fence_release
 * before the releasing OR pairs with the taker's clheap_fence_acquire after its
 * clearing AND (cl/clheap_tier.h does both). */
#ifndef CLHEAP_PAGES_H
#define CLHEAP_PAGES_H

#include "clheap_bitmap.h"

#ifndef CLHEAP_PAGES_PASSES
#define CLHEAP_PAGES_PASSES 6 /* rounds over the orders: halves split meanwhile are found */
#endif
#ifndef CLHEAP_PAGES_SWEEP
#define CLHEAP_PAGES_SWEEP 256 /* containers a failing take sweeps per order (16384 pieces) */
#endif
#ifndef CLHEAP_PAGES_SPLITTERS
#define CLHEAP_PAGES_SPLITTERS 4 /* whole segments split at once before the next are deferred... */
#endif
#ifndef CLHEAP_PAGES_SPLIT_SHARE
#define CLHEAP_PAGES_SPLIT_SHARE 32 /* ...or 1/32 of the segments, if more */
#endif
#ifndef CLHEAP_PAGES_BY_ENDS
/* 1: pieces of up to 2^CLHEAP_PAGES_LOW_ORDER frames are taken from the pool's low end,
 * larger ones from its high end (see take_order); 0: anywhere, at random: faster under
 * contention, but under churn small blocks land in every region and large requests find
 * no whole piece (H100, test_stress, 2^20 work-items, 16 GiB heap: 84,059 NULL for
 * 256 KiB - 2 MiB requests with at most 48% of the pool live). */
#define CLHEAP_PAGES_BY_ENDS 1
#endif
#ifndef CLHEAP_PAGES_SPLIT_WINDOW
#define CLHEAP_PAGES_SPLIT_WINDOW 8
#endif
#ifndef CLHEAP_PAGES_LOW_ORDER
#define CLHEAP_PAGES_LOW_ORDER 6 /* 64 frames: every block and run, large requests to 64 KiB */
#endif
#ifndef CLHEAP_PAGES_RUN_TRIES
#define CLHEAP_PAGES_RUN_TRIES 8 /* scans for a run of segments (concurrent claims collide) */
#endif
#ifndef CLHEAP_PAGES_MERGE_TRIES
#define CLHEAP_PAGES_MERGE_TRIES 16 /* a merge whose buddy keeps being taken gives up */
#endif

/* Descriptor of B_o: B_0 is bitmap 0 (free frames), B_1..B_S follow the class bitmaps. */
static CLHEAP_INLINE clheap_u32 clheap_pages_desc(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 o)
{
    return o == 0u ? (clheap_u32)CLHEAP_BM_FREE : (clheap_u32)CLHEAP_BM_DESC(2u * h[CLHEAP_HDR_CLASS_COUNT] + o);
}

static CLHEAP_INLINE clheap_u32 clheap_ceil_log2(clheap_u32 m)
{
    clheap_u32 k = 0;
    while (k < 31u && ((clheap_u32)1 << k) < m)
        k++;
    return k;
}

/* Takes the bits of mask in container c of bitmap desc if all of them are set: one AND
 * clears them; if it found some already gone, the ones it cleared go back. Keeps the
 * levels above as cl/clheap_bitmap.h requires. 1 if it took them. */
static CLHEAP_INLINE int clheap_pages_take_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                                clheap_u64 mask)
{
    clheap_u64 old = clheap_bm_clear_bits(h, desc, c, mask);
    if ((old & mask) == mask)
        return 1;
    if (old & mask)
        clheap_bm_put_bits(h, desc, c, old & mask);
    return 0;
}

/* Releases the free piece of order o at frame f, merging it with free buddies (see
 * release above: on the H100 the former whole-container CAS left a pool freed under
 * churn in unmerged halves, and large requests failed). */
static CLHEAP_INLINE void clheap_pages_release(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 f, clheap_u32 o)
{
    clheap_u32 top = h[CLHEAP_HDR_SEGMENT_ORDER];
    clheap_u32 index = f >> o;
    for (int tries = 0; o < top;) {
        clheap_u32 desc = clheap_pages_desc(h, o);
        clheap_u64 bit = (clheap_u64)1 << (index & 63u), buddy = (clheap_u64)1 << ((index ^ 1u) & 63u);
        clheap_u64 pair = bit | buddy;
        clheap_u64 v = clheap_bm_set_at(h, desc, 0u, index) | bit;
        if (!(v & buddy))
            return; /* the buddy is in use (or past the pool's end): a free piece now */
        clheap_u64 old = clheap_bm_clear_bits(h, desc, index >> 6, pair);
        if ((old & pair) == pair) { /* merged: the parent piece is ours */
            o++;
            index >>= 1;
            tries = 0;
            continue;
        }
        if (old & buddy) { /* our half was taken meanwhile: the buddy we cleared goes back */
            clheap_bm_set_at(h, desc, 0u, index ^ 1u);
            return;
        }
        if (!(old & bit) || ++tries >= CLHEAP_PAGES_MERGE_TRIES) {
            if (old & bit)
                clheap_bm_set_at(h, desc, 0u, index); /* free, unmerged */
            return; /* both halves taken by others, or the merge gave up */
        }
        /* The buddy was taken after we saw it: ours goes back, which tries the merge again. */
    }
    clheap_bm_set_at(h, clheap_pages_desc(h, top), 0u, index);
}

/* Releases the aligned binary decomposition of frames [from, to). */
static CLHEAP_INLINE void clheap_pages_release_range(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 from, clheap_u32 to)
{
    clheap_u32 top = h[CLHEAP_HDR_SEGMENT_ORDER];
    while (from < to) {
        clheap_u32 o = 0;
        while (o < top && !(from & ((clheap_u32)1 << o)) && from + ((clheap_u32)2 << o) <= to)
            o++;
        clheap_pages_release(h, from, o);
        from += (clheap_u32)1 << o;
    }
}

/* A piece of order k (its first frame), split from the lowest order that has one:
 * CLHEAP_PAGES_PASSES rounds of searches over the orders (halves that others split
 * meanwhile are found), then one round that sweeps each order's bitmap, so that losing
 * races is not reported as a full heap.
 * Placement by size: small pieces (blocks, runs) from the low end of each order's
 * bitmap, large ones from the high end, the whole segments they split likewise (exact
 * first fit from that end; pieces below a segment from a random bit of the end's
 * container, so that concurrent takers do not queue on one bit). Small long-lived
 * pieces scattered over the pool leave no region whole for a large request
 * (address-ordered first fit's lesson); at the ends, what is freed in the middle
 * merges back into whole segments.
 * A burst of requests that all find no smaller piece would each split a segment
 * (measured on the H100: 277 requests of 16 B to 1 MiB split every segment of a 32 MiB
 * pool, and the 1 MiB ones got NULL at 74% load), so while CLHEAP_PAGES_SPLITTERS
 * splits (or 1/32 of the segments) are under way the others defer theirs to the last
 * round, looking for the halves those leave first (bounded: the last round splits
 * regardless). A split keeps the half on its end's side. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_order(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 k, clheap_u32 seed)
{
    clheap_u32 top = h[CLHEAP_HDR_SEGMENT_ORDER];
    CLHEAP_GLOBAL clheap_u32 *splitting = h + CLHEAP_HDR_PAGES_SPLITTING;
    clheap_u32 segments = h[clheap_pages_desc(h, top) + CLHEAP_BM_BITS];
    clheap_u32 share = segments / CLHEAP_PAGES_SPLIT_SHARE;
    clheap_u32 splitters = share > CLHEAP_PAGES_SPLITTERS ? share : CLHEAP_PAGES_SPLITTERS;
    int high = CLHEAP_PAGES_BY_ENDS && k > CLHEAP_PAGES_LOW_ORDER;
    /* Whole segments are split from the end's container at random where it is at most
     * 1/CLHEAP_PAGES_SPLIT_WINDOW of them: a burst of splitters then works on different
     * segments instead of cascading down one (measured on the H100, 8 GiB heap, warm:
     * 2^20 x 16 B 0.34 ms instead of 0.37, 2^16 x 64 KiB 2.5 ms instead of 4.7), while
     * small pools keep exact first fit. */
    int spread_splits = segments >= 64u * CLHEAP_PAGES_SPLIT_WINDOW;
    for (clheap_u32 pass = 0; pass <= CLHEAP_PAGES_PASSES; pass++) {
        for (clheap_u32 o = k; o <= top; o++) {
            clheap_u32 desc = clheap_pages_desc(h, o), s = seed + pass * 0x2545F491u + o;
            int split = o == top && k < top;
            if (split && pass < CLHEAP_PAGES_PASSES && clheap_load32(splitting) >= splitters)
                continue;
            if (split)
                clheap_add32(splitting, 1u);
            clheap_u32 pos = pass == CLHEAP_PAGES_PASSES && !split ? clheap_bm_sweep(h, desc, s, CLHEAP_PAGES_SWEEP, 1)
                             : CLHEAP_PAGES_BY_ENDS ? clheap_bm_take_end(h, desc, high, !split || spread_splits, s)
                                                    : clheap_bm_try_find_and_clear(h, desc, s);
            if (pos != CLHEAP_BM_FAIL) {
                for (clheap_u32 j = o; j > k; j--) { /* ours is the half on our end's side */
                    pos = 2u * pos + (clheap_u32)high;
                    clheap_bm_set_at(h, clheap_pages_desc(h, j - 1u), 0u, pos ^ 1u);
                }
            }
            if (split)
                clheap_add32(splitting, 0xFFFFFFFFu);
            if (pos != CLHEAP_BM_FAIL)
                return pos << k;
        }
    }
    return CLHEAP_BM_FAIL;
}

/* Takes the segments [first, first + count) if all are free; 0 if one was not. */
static CLHEAP_INLINE int clheap_pages_claim_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 first,
                                                clheap_u32 count)
{
    clheap_u32 end = first + count;
    for (clheap_u32 pos = first; pos < end;) {
        clheap_u32 c = pos >> 6, lo = pos & 63u, n = end - pos < 64u - lo ? end - pos : 64u - lo;
        clheap_u64 mask = clheap_ones64(n) << lo;
        if (!clheap_pages_take_bits(h, desc, c, mask)) {
            for (clheap_u32 back = first; back < pos;) { /* roll back what this run took */
                clheap_u32 bn = pos - back < 64u - (back & 63u) ? pos - back : 64u - (back & 63u);
                clheap_bm_put_run(h, desc, back, bn);
                back += bn;
            }
            return 0;
        }
        pos += n;
    }
    return 1;
}

/* Scans B_S's level 0 once, from segment `start` round to the end of the pool (runs do
 * not wrap): the first free run of at least `count` segments if first_fit, else the
 * shortest such run (best fit keeps long runs for long requests). Returns its first
 * segment and its length in *length, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_pages_find_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 count,
                                                      clheap_u32 start, int first_fit, clheap_u32 *length)
{
    clheap_u32 containers = (h[desc + CLHEAP_BM_BITS] + 63u) / 64u, c0 = start / 64u;
    clheap_u64 below = clheap_ones64(start % 64u); /* c0's bits before the start: scanned last */
    clheap_u32 run_start = 0, run = 0, best = CLHEAP_BM_FAIL, best_length = 0xffffffffu;
    for (clheap_u32 step = 0; step <= containers; step++) {
        clheap_u32 c = (c0 + step) % containers;
        clheap_u64 v = clheap_load64(clheap_bm_container(h, desc, 0u, c));
        v = step == 0u ? v & ~below : step == containers ? v & below : v; /* c0 is split in two */
        if (c == 0u) { /* the pool's end ends a run */
            if (run >= count && run < best_length) {
                best = run_start;
                best_length = run;
            }
            run = 0;
        }
        for (clheap_u32 b = 0; b < 64u;) {
            clheap_u64 rest = v >> b;
            if (!(rest & 1u)) { /* a taken segment ends the run */
                if (run >= count && run < best_length) {
                    best = run_start;
                    best_length = run;
                }
                run = 0;
                b += rest ? clheap_ctz64(rest) : 64u - b;
                continue;
            }
            clheap_u32 ones = ~rest ? clheap_ctz64(~rest) : 64u - b;
            if (!run)
                run_start = c * 64u + b;
            run += ones;
            b += ones;
            if (first_fit && run >= count) {
                *length = run;
                return run_start;
            }
        }
    }
    if (run >= count && run < best_length) { /* a run reaching the scan's last bit */
        best = run_start;
        best_length = run;
    }
    *length = best_length;
    return best;
}

/* The first segment of a run of `count` free segments, or FAIL: the best fit, then (if
 * a concurrent request took part of it) first fits from random starts, so that
 * concurrent requests spread (a start inside a free stretch claims from there). Starts
 * and claims are aligned to the largest power of two <= count where the stretch
 * allows, so that concurrent claims in one stretch leave no gaps too short for the
 * next. At most CLHEAP_PAGES_RUN_TRIES scans of segments / 64 loads, and the claims. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_segments(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 count,
                                                           clheap_u32 seed)
{
    clheap_u32 desc = clheap_pages_desc(h, h[CLHEAP_HDR_SEGMENT_ORDER]);
    clheap_u32 bits = h[desc + CLHEAP_BM_BITS];
    if (count > bits)
        return CLHEAP_BM_FAIL;
    clheap_u32 align = 1u;
    while (align <= count / 2u)
        align *= 2u;
    for (clheap_u32 attempt = 0; attempt < CLHEAP_PAGES_RUN_TRIES; attempt++) {
        clheap_u32 length, start = attempt ? clheap_hash32(seed + attempt * 0x9E3779B9u) % bits / align * align : 0u;
        clheap_u32 first = clheap_pages_find_run(h, desc, count, start, attempt != 0u, &length);
        if (first == CLHEAP_BM_FAIL) {
            if (attempt)
                continue; /* nothing after this start: another start, or the best fit again */
            return first;
        }
        clheap_u32 aligned = (first + align - 1u) / align * align;
        if (aligned + count <= first + length)
            first = aligned;
        if (clheap_pages_claim_run(h, desc, first, count))
            return first;
    }
    return CLHEAP_BM_FAIL;
}

/* Takes `frames` contiguous frames; returns the first, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames, clheap_u32 seed)
{
    clheap_u32 top = h[CLHEAP_HDR_SEGMENT_ORDER];
    clheap_u32 f, end;
    if (frames <= ((clheap_u32)1 << top)) {
        clheap_u32 k = clheap_ceil_log2(frames);
        f = clheap_pages_take_order(h, k, seed);
        end = f + ((clheap_u32)1 << k);
    } else {
        clheap_u32 segments = (frames + ((clheap_u32)1 << top) - 1u) >> top;
        f = clheap_pages_take_segments(h, segments, seed);
        f = f == CLHEAP_BM_FAIL ? f : f << top;
        end = f + (segments << top);
    }
    if (f == CLHEAP_BM_FAIL)
        return f;
    clheap_pages_release_range(h, f + frames, end); /* the unused tail */
    return f;
}

static CLHEAP_INLINE void clheap_pages_put(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first, clheap_u32 frames)
{
    clheap_pages_release_range(h, first, first + frames);
}

/* Initialisation, container i of every level of B_o (one work-item per container):
 * the pool is whole segments (the host plans it so), all free in B_S; B_o for o < S
 * starts empty. */
static CLHEAP_INLINE void clheap_pages_init_container(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 o, clheap_u32 i)
{
    clheap_bm_init_container(h, clheap_pages_desc(h, o), i, o == h[CLHEAP_HDR_SEGMENT_ORDER]);
}

#endif
