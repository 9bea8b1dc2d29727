/* The page tier of TierAlloc (cl/clheap_tier.h): contiguous runs of frames, from one
 * frame up to the whole pool, found without walking lists.
 *
 * Why two levels and not a buddy system: blocks and runs are opened and emptied at
 * GPU rates, and a buddy system over 2^12-frame segments made each of them a chain of
 * up to 12 splits or merges (two dependent atomics per order). On a GPU that chain, not
 * the slot handout, set the time of a launch's frees and of its first mallocs.
 * Here a segment is 64 frames, exactly one 64-bit container of the frame bitmap, so a
 * block's frames are taken or given back with one atomic, and a segment that empties
 * moves up with one CAS.
 *
 * Structure. The pool's N frames are N / 64 segments (the host makes N a multiple of
 * 64; CLHEAP_HDR_SEGMENT_ORDER holds 6). Two hierarchical bitmaps (cl/clheap_bitmap.h):
 *   W    (segments) one bit per segment: 1 = the segment is whole and free;
 *   F    (bitmap 0, frames) one bit per frame: 1 = the frame is free inside a broken
 *        segment (one that is partly in use). Container s of F is segment s.
 * A fresh heap has every W bit set and F empty.
 *
 * Invariants when no kernel runs (clheap_heap_check verifies them):
 *   P1  every frame is in exactly one of: a whole free segment (W), a free frame of a
 *       broken segment (F), a block, a large allocation; a set W bit's F container is 0;
 *   P2  no container of F is all ones (a whole free segment is in W), except after a
 *       release that completed it lost its CAS to a taker that then gave bits back
 *       (bounded; the check counts them in stale_hints, clheap_heap_repair moves them);
 *       on split words (cl/clheap_port.h, W3) the move is an AND of the whole container
 *       that gives back a partial take, and leaves such a container the same way;
 *   P3  the bitmaps' upper levels are hints as in cl/clheap_bitmap.h;
 *   P4  no break is counted as under way (CLHEAP_HDR_PAGES_SPLITTING is 0);
 *   P5  U, the sum of the stripes at CLHEAP_HDR_PAGES_USED (cl/clheap_layout.h), is the
 *       number of frames in neither bitmap: every take that hands frames out adds
 *       them, every release subtracts them, each with one add whose result nobody
 *       reads. Why: TierAlloc's free asks how full the pool is (clheap_tier_defers).
 * The frontiers (CLHEAP_HDR_PAGES_LOW_FRONTIER, _HIGH_FRONTIER) are hints: any value is
 * valid, and no frame outside the pool is taken. The host starts them at the pool's two
 * ends (host/heap_layout.c). */
#ifndef CLHEAP_PAGES_H
#define CLHEAP_PAGES_H

#include "clheap_bitmap.h"

/* Operations (no step waits for another work-item; every loop is bounded):
 *   take(m), m < 64   a fit of m ones in a container of F, one that fills a free
 *             stretch exactly or else lies against a frame in use (one AND takes it;
 *             an AND that finds some bits gone gives back the others): first near
 *             the pool's low end, then in the segment broken last
 *             (CLHEAP_HDR_PAGES_LAST_BREAK) and the broken ones below it; else break
 *             a whole segment: clear its W bit, keep its first m frames, OR the other
 *             64 - m into F, and name it the segment broken last. Linearisation
 *             point: the AND.
 *             Why the look at the last break: in a GPU-wide burst on a fresh pool
 *             the low end soon holds segments with a few scattered free frames; the
 *             look from there spent its containers on them, and the takes that found
 *             nothing broke fresh segments, used a few frames of each and left the
 *             rest where no look reached (on the scheduled C11 core and on the GPU,
 *             test_stress's first round broke every segment and left large requests
 *             NULL with most of the upper half free; with this look, and pieces
 *             (cl/clheap_tier.h), none). Why second: looking there first slowed the
 *             mixed small mallocs, whose first look mostly finds a fit.
 *             A large request (not the small tier's) of m < 64 frames first tries
 *             the low frontier (up to CLHEAP_PAGES_FRONTIER_TRIES times): an add on
 *             CLHEAP_HDR_PAGES_LOW_FRONTIER hands it frames
 *             [f, f + m), which may cross into the next segment; it takes them from F or,
 *             where a segment is whole, from W (the rest of that segment into F). A
 *             break sets the frontier after the frames it keeps. Linearisation point:
 *             the last AND. Why: these requests broke a segment each and left
 *             64 mod m frames in it, which no other of them fits, and their looks
 *             from the low end met those first: one size of 17 - 63 frames, one
 *             request at a time, filled as little as half the pool before its first
 *             NULL. Consecutive requests now lie end to end, as from a bump pointer.
 *             (A GPU burst's concurrent takes still race for the segments their
 *             ranges share.)
 *   take(64)  clear a W bit near the low end.
 *   take(m), m > 64   n = ceil(m / 64) segments: an aligned run of n W bits inside one
 *             container near the high end (the low end for the small tier's runs; one
 *             AND), else a run anywhere (the highest for more than 64 segments, else
 *             the best fit, over W; one AND per container, rolled back if a bit was
 *             gone); the last segment's unused frames go into F. A large request (not
 *             the small tier's) may also take a region: a run of W bits and the free
 *             frames beside it, the top frames of the segment before and the bottom
 *             ones of the segment after (one AND each in F), the best fit over all
 *             regions, at its top; first in small pools, else when runs alone failed
 *             (CLHEAP_PAGES_BEST_FIT_SEGMENTS). A large request that is not a whole
 *             number of segments then tries the high frontier (in large pools first;
 *             up to CLHEAP_PAGES_FRONTIER_TRIES times):
 *             a subtract on CLHEAP_HDR_PAGES_HIGH_FRONTIER hands it frames [f - m, f),
 *             taken as above; every other take of a large request but the first
 *             region tries places it at the top of what it took (the unused frames of
 *             its first segment into F) and sets the frontier to its first frame.
 *             Why: each request of, say, 65 frames took two whole segments and left
 *             63 frames no other one fits (1 GiB pool: NULL at 51% of it); now they
 *             lie end to end. Every claim is rolled back if one of its ANDs found a
 *             bit gone.
 *   release   whole segments: one OR into W per W container. Frames of a broken
 *             segment: one OR into F; if that made the container all ones, a CAS of it
 *             from all ones to 0 moves the segment to W. A failed CAS means a taker got
 *             frames first: the segment is broken again, correctly in F.
 *   last      a large request (not the small tier's) that none of the above served,
 *             on its last attempt, while the pool has that many free frames (frames -
 *             U), takes the first stretch of free frames long enough, whole segments
 *             and broken ones' frames alike, across segment boundaries
 *             (clheap_pages_take_stretch: one pass over the pool). So it fails only
 *             where no such stretch is free.
 * Placement by size: pieces of up to a segment and the small tier's runs from the low
 * end, larger ones from the high end. Small long-lived pieces scattered over the pool leave no region whole for
 * a large request (address-ordered first fit's lesson); at the ends, what is freed in
 * the middle becomes whole segments again.
 *
 * Happens-before: a taker reads nothing of the frames it takes but the frame headers
 * that the previous owner wrote before releasing them; the owner's
 * clheap_fence_release before the releasing OR pairs with the taker's
 * clheap_fence_acquire after its AND (cl/clheap_tier.h does both). A segment moved to
 * W passes through the mover's CAS (which reads every owner's OR) and a full fence
 * before its OR into W. A break hands frames from W to F: the breaker's clear of the W
 * bit reads the releases into W, then clheap_fence_release (an acquire too on the
 * devices, cl/clheap_port.h, so it also acquires what that clear read), then its OR into
 * F, which the next taker's AND reads before its clheap_fence_acquire. */

#define CLHEAP_PAGES_SEGMENT 64u /* frames per segment: one container of F */

static CLHEAP_INLINE clheap_u32 clheap_pages_segments_desc(CLHEAP_GLOBAL clheap_u32 *h)
{
    return (clheap_u32)CLHEAP_BM_SEGMENTS(h[CLHEAP_HDR_CLASS_COUNT]);
}

/* Containers near an end among which a take starts (see CLHEAP_PAGES_WIDTH_SEGMENTS). */
static CLHEAP_INLINE clheap_u32 clheap_pages_width(CLHEAP_GLOBAL clheap_u32 *h)
{
    clheap_u32 w = h[clheap_pages_segments_desc(h) + CLHEAP_BM_BITS] / CLHEAP_PAGES_WIDTH_SEGMENTS;
    return w < 1u ? 1u : w > 64u ? 64u : w;
}

/* The smallest power of two >= m (m <= 64). */
static CLHEAP_INLINE clheap_u32 clheap_pages_align_for(clheap_u32 m)
{
    clheap_u32 p = 1u;
    while (p < m)
        p *= 2u;
    return p;
}

/* Bit i set iff v has ones at i .. i + m - 1 (1 <= m <= 64) and i is a multiple of p,
 * a power of two. Positions whose run would pass bit 63 read the zeros shifted in. */
static CLHEAP_INLINE clheap_u64 clheap_pages_fits(clheap_u64 v, clheap_u32 m, clheap_u32 p)
{
    clheap_u64 starts = v;
    clheap_u32 len = 1u;
    for (; len * 2u <= m; len *= 2u)
        starts &= starts >> len;
    if (len < m)
        starts &= starts >> (m - len);
    clheap_u64 aligned = 1u;
    for (clheap_u32 s = p; s < 64u; s *= 2u)
        aligned |= aligned << s;
    return starts & aligned;
}

/* The fits of m (1..64) frames in v, a container of F, that waste least: those filling
 * a free stretch exactly, else those against a frame in use or the segment's edge on
 * either side, else 0. Why not aligned fits as for segments: blocks of 3, 6, 12, 24 or
 * 48 frames (the 48 B, 96 B, 192 B... classes) aligned to 4, 8, 16... left a quarter of
 * every broken segment in gaps no block fits (4 MiB pool, 96 B objects one by one:
 * NULL at 75.0% of the pool, 976 frames free, none 3 in a row). */
static CLHEAP_INLINE clheap_u64 clheap_pages_tight_fits(clheap_u64 v, clheap_u32 m)
{
    clheap_u64 any = clheap_pages_fits(v, m, 1u);
    clheap_u64 left = any & ~(v << 1);                       /* frame i - 1 in use, or i = 0 */
    clheap_u64 right = m < 64u ? any & ~(v >> m) : any;      /* frame i + m in use, or the end */
    return (left & right) ? left & right : left | right;
}

/* Gives frames of segment s (bits of its F container) back; if that completes the
 * segment, moves it to W (see release above): a CAS from all ones to 0 takes it. */
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE void clheap_pages_free_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 s, clheap_u64 bits)
{
    CLHEAP_GLOBAL clheap_u64 *word = clheap_bm_level0(h, CLHEAP_BM_FREE, s);
    clheap_u64 old = clheap_bm_put_bits_at(h, CLHEAP_BM_FREE, word, s, bits);
    if ((old | bits) != ~(clheap_u64)0 || clheap_cas64(word, ~(clheap_u64)0, 0) != ~(clheap_u64)0)
        return;
    clheap_fence_full(); /* the owners' frames, read through the CAS, before W shows them */
    clheap_bm_clear_above(h, CLHEAP_BM_FREE, 0u, s);
    clheap_bm_set_at(h, clheap_pages_segments_desc(h), 0u, s);
}
#else
/* On split words (W3) an AND takes the completed segment. The loop's second OR does the
 * rest: the segment's bit into W after a whole take, or, where the AND found frames gone,
 * what it took back into F, without trying the move again (the segment may stay all ones
 * in F: P2). Why one OR site: where every call is inlined (Mesa's rusticl), each of this
 * function's many copies carried three ORs with their climbs (docs/design.md, "Devices
 * without 64-bit atomics"). */
static CLHEAP_INLINE void clheap_pages_free_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 s, clheap_u64 bits)
{
    CLHEAP_GLOBAL clheap_u64 *free_word = clheap_bm_level0(h, CLHEAP_BM_FREE, s), *word = free_word;
    clheap_u32 desc = CLHEAP_BM_FREE, c = s;
    for (int pass = 0; pass < 2; pass++) {
        clheap_u64 old = clheap_bm_put_bits_at(h, desc, word, c, bits);
        if (pass || (old | bits) != ~(clheap_u64)0)
            return;
        bits = clheap_and64(free_word, 0); /* what the AND took */
        if (!bits)
            return;
        if (bits == ~(clheap_u64)0) { /* whole: the next OR sets its bit in W */
            clheap_fence_full(); /* the owners' frames, read through the AND, before W shows them */
            clheap_bm_clear_above(h, CLHEAP_BM_FREE, 0u, s);
            desc = clheap_pages_segments_desc(h);
            c = s >> 6;
            word = clheap_bm_level0(h, desc, c);
            bits = (clheap_u64)1 << (s & 63u);
        }
    }
}
#endif

/* Takes the bits of mask in container c of desc if all of them are set: one AND clears
 * them; if it found some already gone, the ones it cleared go back (into F with the move
 * of a completed segment). Returns what the AND found: all of mask in it means taken. */
static CLHEAP_INLINE clheap_u64 clheap_pages_take_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                                       clheap_u64 mask)
{
    clheap_u64 old = clheap_bm_clear_bits(h, desc, c, mask);
    clheap_u64 cleared = old & mask;
    if (cleared && cleared != mask) {
        if (desc == (clheap_u32)CLHEAP_BM_FREE)
            clheap_pages_free_frames(h, c, cleared);
        else
            clheap_bm_put_bits(h, desc, c, cleared);
    }
    return old;
}

/* Takes the segments [first, first + count) if all are free; 0 if one was not. */
static CLHEAP_INLINE int clheap_pages_claim_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 first,
                                                clheap_u32 count)
{
    clheap_u32 end = first + count;
    for (clheap_u32 pos = first; pos < end;) {
        clheap_u32 c = pos >> 6, lo = pos & 63u, n = end - pos < 64u - lo ? end - pos : 64u - lo;
        clheap_u64 mask = clheap_ones64(n) << lo;
        if ((clheap_pages_take_bits(h, desc, c, mask) & mask) != mask) {
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

/* Releases frames [first, first + frames): whole segments into W, one OR per W
 * container; frames of broken segments into F. */
static CLHEAP_INLINE void clheap_pages_put(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first, clheap_u32 frames)
{
    clheap_u32 wdesc = clheap_pages_segments_desc(h), end = first + frames;
    for (clheap_u32 f = first; f < end;) {
        clheap_u32 s = f / CLHEAP_PAGES_SEGMENT, lo = f % CLHEAP_PAGES_SEGMENT;
        if (lo == 0u && end - f >= CLHEAP_PAGES_SEGMENT) {
            clheap_u32 k = (end - f) / CLHEAP_PAGES_SEGMENT, room = 64u - (s & 63u);
            k = k < room ? k : room;
            clheap_bm_put_bits(h, wdesc, s >> 6, clheap_ones64(k) << (s & 63u));
            f += k * CLHEAP_PAGES_SEGMENT;
            continue;
        }
        clheap_u32 n = end - f < CLHEAP_PAGES_SEGMENT - lo ? end - f : CLHEAP_PAGES_SEGMENT - lo;
        clheap_pages_free_frames(h, s, clheap_ones64(n) << lo);
        f += n;
    }
}

/* U's stripe for a take or release starting at frame `first` (P5). */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_pages_used_stripe(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first)
{
    return h + CLHEAP_HDR_PAGES_USED + first / CLHEAP_PAGES_SEGMENT % CLHEAP_PAGES_USED_STRIPES * CLHEAP_PAGES_USED_STRIDE;
}

/* U: the frames handed out (P5). */
static CLHEAP_INLINE clheap_u32 clheap_pages_used(CLHEAP_GLOBAL clheap_u32 *h)
{
    clheap_u32 used = 0;
    for (clheap_u32 i = 0; i < CLHEAP_PAGES_USED_STRIPES; i++)
        used += clheap_load32(h + CLHEAP_HDR_PAGES_USED + i * CLHEAP_PAGES_USED_STRIDE);
    return used;
}

/* Whether the page tier has m free frames at all (frames - U >= m, P5): a take of more
 * cannot succeed, so the ways that scan the pool are not tried. Why: in a launch that
 * asks for more than the pool, each request that would fail scanned every segment several
 * times before its NULL. */
static CLHEAP_INLINE int clheap_pages_have(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m)
{
    return h[CLHEAP_HDR_FRAME_COUNT] - clheap_pages_used(h) >= m;
}

/* Gives back frames [first, first + frames) that a take handed out (counted in U).
 * Out of line (CLHEAP_OUTLINE): every block reclaim, run release and large free reaches it,
 * and inlined, each of them carried its own copy of the put and of the bitmap updates. */
static CLHEAP_INLINE CLHEAP_OUTLINE void clheap_pages_release(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first, clheap_u32 frames)
{
    clheap_add32(clheap_pages_used_stripe(h, first), 0u - frames);
    clheap_pages_put(h, first, frames);
}

/* Takes the bits of mask (not 0) of segment s: from F, or, if the segment is whole,
 * from W with the rest of its frames put into F. 0 (nothing kept) if some were gone.
 * The winner of the W bit puts the rest into F before the branch ends, and the others
 * AND after it: the lanes of a warp whose frontier ranges share a segment clear its W
 * bit together, and once the warp reconverges the losers find the winner's frames in F.
 * With the AND in the losers' branch, run first, a GPU burst of 24 KiB requests broke
 * a segment for each loser and got NULL with a third of the pool free. Only the speed
 * depends on the order: an AND that comes first finds the bits gone and keeps nothing. */
static CLHEAP_INLINE int clheap_pages_claim_part(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 s, clheap_u64 mask)
{
    clheap_u32 wdesc = clheap_pages_segments_desc(h);
    int won = clheap_bm_get(h, wdesc, s) && clheap_bm_try_clear(h, wdesc, s);
    if (won && ~mask) {
        clheap_fence_release(); /* the hand-off from W to F (see the top of this file) */
        clheap_pages_free_frames(h, s, ~mask);
    }
    return won || (clheap_pages_take_bits(h, CLHEAP_BM_FREE, s, mask) & mask) == mask;
}

/* Frames [first, first + m) (inside the pool), all or none: the segments at either end
 * by clheap_pages_claim_part (so an end segment may be whole, broken, or completed but
 * not yet moved to W: P2), the ones between from W. 1 if taken. Every request claims
 * its first segment at the same call site, then its last: in a warp whose frontier
 * ranges follow each other, a range's last segment is a neighbour's first, claimed (and
 * its rest put into F) just before. A claim that fails after the first segment gives
 * back what it took, frames [first, taken), with one put: where every call is inlined
 * (Mesa's rusticl), each release site was a copy of the bitmap updates, in each of the
 * page tier's five claim sites. */
static CLHEAP_INLINE CLHEAP_SLOW_CALL int clheap_pages_claim_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first, clheap_u32 m)
{
    const clheap_u32 S = CLHEAP_PAGES_SEGMENT;
    clheap_u32 end = first + m, s0 = first / S, s1 = (end - 1u) / S, lo = first % S, hi = end - s1 * S;
    clheap_u64 head = s0 == s1 ? clheap_ones64(m) << lo : ~clheap_ones64(lo), tail = clheap_ones64(hi);
    clheap_u32 taken = first; /* a failure gives back [first, taken) */
#if CLHEAP_ATOMICS64
    if (!clheap_pages_claim_part(h, s0, head))
        return 0;
    if (s0 == s1)
        return 1;
    if (s1 > s0 + 1u && !clheap_pages_claim_run(h, clheap_pages_segments_desc(h), s0 + 1u, s1 - s0 - 1u))
        taken = (s0 + 1u) * S; /* the first segment's part */
    else if (!clheap_pages_claim_part(h, s1, tail))
        taken = s1 * S; /* and the whole segments between */
#else
    /* Split words: both ends at one claim_part site, a loop (where every call is inlined,
     * each site is a copy of the split-word updates; the GPU's 64-bit build keeps the
     * two calls, which measured faster there). */
    CLHEAP_NO_UNROLL
    for (clheap_u32 at = 0; at < 2u; at++) {
        if (at && s0 == s1)
            return 1;
        if (at && s1 > s0 + 1u && !clheap_pages_claim_run(h, clheap_pages_segments_desc(h), s0 + 1u, s1 - s0 - 1u)) {
            taken = (s0 + 1u) * S; /* the first segment's part */
            break;
        }
        if (!clheap_pages_claim_part(h, at ? s1 : s0, at ? tail : head)) {
            if (!at)
                return 0;
            taken = s1 * S; /* and the whole segments between */
        }
    }
#endif
    if (taken != first)
        clheap_pages_put(h, first, taken - first);
    return taken == first;
}

/* m frames at a frontier (see take(m) above): after the low one (m < 64), or before the
 * high one, up to CLHEAP_PAGES_FRONTIER_TRIES ranges. FAIL if none was free and in the
 * pool. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_frontier(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m, int high)
{
    clheap_u32 frames = h[CLHEAP_HDR_FRAME_COUNT];
    CLHEAP_NO_UNROLL
    for (clheap_u32 t = 0; t < CLHEAP_PAGES_FRONTIER_TRIES; t++) {
        clheap_u32 first;
        if (high) {
            clheap_u32 end = clheap_add32(h + CLHEAP_HDR_PAGES_HIGH_FRONTIER, 0u - m);
            first = end - m;
            if (end > frames || end < m)
                continue;
        } else {
            first = clheap_add32(h + CLHEAP_HDR_PAGES_LOW_FRONTIER, m);
            if (first >= frames || m > frames - first)
                continue;
        }
        if (clheap_pages_claim_frames(h, first, m))
            return first;
    }
    return CLHEAP_BM_FAIL;
}

/* The set bit of v nearest the low end (high = 0) or the high end (v != 0). */
static CLHEAP_INLINE clheap_u32 clheap_pages_nearest(clheap_u64 v, int high)
{
    return high ? clheap_msb64(v) : clheap_ctz64(v);
}

/* The bits of a 64-bit word past position b (mod 64), away from the end `high` names. */
static CLHEAP_INLINE clheap_u64 clheap_pages_beyond(clheap_u32 b, int high)
{
    return high ? clheap_ones64(b & 63u) : ~clheap_ones64((b & 63u) + 1u);
}

/* Takes m (1..64) consecutive set bits, aligned to p, of one level-0 container of desc,
 * looking at up to `look` non-empty containers from the low end (high = 0) or the high
 * end (high = 1), in address order from there, starting at one of the `width` nearest
 * the end chosen by seed (1: the nearest), or at container `from` unless it is FAIL
 * (then width must be 1). In a container the fit is chosen by seed
 * (spread = 1) or nearest the end. Aligned fits first, then any fit. Returns the first
 * bit's position, or FAIL with *stop the last container it looked at.
 * Why width: a launch's openers all take whole segments at once (tens of thousands of
 * block openings in a large launch), and on one container's 64 bits they queue (large
 * requests took over twice the time of a buddy tier, which spread its splits). */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_fit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 m,
                                                      int high, int spread, clheap_u32 seed, clheap_u32 look,
                                                      clheap_u32 width, clheap_u32 *stop, clheap_u32 from)
{
    *stop = 0u;
    int free_frames = desc == (clheap_u32)CLHEAP_BM_FREE;
    clheap_u32 p = clheap_pages_align_for(m), levels = h[desc + CLHEAP_BM_LEVELS];
    clheap_u32 containers = (h[desc + CLHEAP_BM_BITS] + 63u) / 64u;
    clheap_u64 v = 0;
    clheap_u32 c = from != CLHEAP_BM_FAIL ? from : CLHEAP_BM_STALE;
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BM_FIND_TRIES && c == CLHEAP_BM_STALE; attempt++)
        c = clheap_bm_descend(h, desc, high ? CLHEAP_BM_HIGHEST : 0u, &v);
    if (c >= containers)
        return CLHEAP_BM_FAIL;
    if (from != CLHEAP_BM_FAIL && levels <= 1u)
        v = clheap_load64(clheap_bm_level0(h, desc, c));
    clheap_u32 r = clheap_hash32(seed) >> 26;
    /* The next containers come from the level-1 words' bits (the containers not empty). */
    clheap_u32 word = c >> 6;
    clheap_u64 next = 0;
    if (levels > 1u) {
        next = clheap_load64(clheap_bm_container(h, desc, 1u, word)) & clheap_pages_beyond(c, high);
        clheap_u32 skip = width > 1u ? clheap_hash32(seed ^ 0x5BD1E995u) % width : 0u;
        for (; skip && next; skip--) {
            clheap_u32 b = clheap_pages_nearest(next, high);
            next &= ~((clheap_u64)1 << b);
            c = word * 64u + b;
        }
        if (c >= containers)
            return CLHEAP_BM_FAIL;
        v = clheap_load64(clheap_bm_level0(h, desc, c)); /* the descent's, or the one skipped to */
    }
    for (clheap_u32 seen = 0;;) {
        *stop = c;
        for (int tries = 0; tries < 4 && v; tries++) {
            clheap_u64 fits = free_frames ? clheap_pages_tight_fits(v, m) : clheap_pages_fits(v, m, p);
            if (!fits)
                fits = clheap_pages_fits(v, m, 1u);
            if (!fits)
                break;
            clheap_u32 first = spread ? clheap_pick_bit(fits, r) : clheap_pages_nearest(fits, high);
            clheap_u64 mask = clheap_ones64(m) << first;
            clheap_u64 old = clheap_pages_take_bits(h, desc, c, mask);
            if ((old & mask) == mask)
                return c * 64u + first;
            v = old & ~mask; /* what others left: look again */
        }
        if (++seen >= look)
            return CLHEAP_BM_FAIL;
        /* Re-read which containers are not empty: under a burst the word read before
         * names containers emptied since, and walking those used up the looks (most
         * requests of a burst of large ones then ended in the scan of every segment). */
        if (levels > 1u)
            next = clheap_load64(clheap_bm_container(h, desc, 1u, word)) & clheap_pages_beyond(c, high);
        while (!next) { /* the next level-1 word towards the other end; an empty one counts as a look */
            if (levels <= 1u || (high ? word == 0u : (word + 1u) * 64u >= containers) || ++seen >= look)
                return CLHEAP_BM_FAIL;
            word = high ? word - 1u : word + 1u;
            next = clheap_load64(clheap_bm_container(h, desc, 1u, word));
        }
        clheap_u32 b = clheap_pages_nearest(next, high);
        next &= ~((clheap_u64)1 << b);
        c = word * 64u + b;
        if (c >= containers)
            return CLHEAP_BM_FAIL;
        v = clheap_load64(clheap_bm_level0(h, desc, c));
    }
}

/* m (1..64) frames. Fits in broken segments near the low end first; then a whole
 * segment, broken if m < 64. A burst of requests that all find no fit would each break
 * a segment (the former buddy tier saw a few hundred mixed requests split every segment
 * of a small pool, and the largest ones got NULL with a quarter of it free),
 * so while CLHEAP_PAGES_BREAKERS breaks (or 1/512 of the segments) are under way the
 * others look again for the frames those give back, for up to CLHEAP_PAGES_PASSES rounds;
 * the last round breaks regardless and looks further (bounded). */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m, clheap_u32 seed,
                                                         int small)
{
    clheap_u32 wdesc = clheap_pages_segments_desc(h);
    CLHEAP_GLOBAL clheap_u32 *breaking = h + CLHEAP_HDR_PAGES_SPLITTING;
    clheap_u32 segments = h[wdesc + CLHEAP_BM_BITS];
    clheap_u32 share = segments / CLHEAP_PAGES_BREAK_SHARE;
    clheap_u32 breakers = share > CLHEAP_PAGES_BREAKERS ? share : CLHEAP_PAGES_BREAKERS;
    clheap_u32 width = clheap_pages_width(h);
    clheap_u32 stop;
    int whole = m == CLHEAP_PAGES_SEGMENT, by_ends = CLHEAP_PAGES_BY_ENDS, spread = width > 1u;
    /* Each pass looks in F from the low end, then from the last break down, then takes
     * a whole segment (one call site for the three: see CLHEAP_NO_UNROLL). */
    CLHEAP_NO_UNROLL
    for (clheap_u32 step = whole ? 2u : 0u; step < 3u * CLHEAP_PAGES_PASSES + 3u; step += whole ? 3u : 1u) {
        clheap_u32 pass = step / 3u, s = seed + pass * 0x2545F491u;
        int last = pass == CLHEAP_PAGES_PASSES, segment = step % 3u == 2u, breaks = segment && !whole;
        int near_break = step % 3u == 1u;
#if !CLHEAP_PAGES_NEAR_BREAK /* a preprocessor test: as a constant operand of && it warned in users' builds */
        if (near_break)
            continue;
#endif
        if (pass == 1u && step % 3u == (whole ? 2u : 0u) && !clheap_pages_have(h, m))
            return CLHEAP_BM_FAIL; /* the first pass found nothing, and the pool has not m free frames */
        if (breaks && step == 2u && !small) { /* once, when the first looks found no fit */
            clheap_u32 first = clheap_pages_take_frontier(h, m, 0);
            if (first != CLHEAP_BM_FAIL)
                return first;
        }
        if (breaks) {
            if (!last && clheap_load32(breaking) >= breakers)
                continue;
            clheap_add32(breaking, 1u);
        }
        clheap_u32 pos = segment && last ? clheap_bm_sweep(h, wdesc, s, CLHEAP_PAGES_SWEEP, 1)
                         : segment && !by_ends
                             ? clheap_bm_try_find_and_clear(h, wdesc, s)
                             : clheap_pages_take_fit(h, segment ? wdesc : (clheap_u32)CLHEAP_BM_FREE, segment ? 1u : m,
                                                     near_break, spread && !near_break, s,
                                                     near_break ? CLHEAP_PAGES_NEAR_BREAK
                                                     : last     ? CLHEAP_PAGES_SWEEP
                                                                : CLHEAP_PAGES_NEAR,
                                                     near_break ? 1u : width, &stop,
                                                     near_break ? clheap_load32(h + CLHEAP_HDR_PAGES_LAST_BREAK)
                                                                : CLHEAP_BM_FAIL);
        if (breaks) {
            if (pos != CLHEAP_BM_FAIL) {
                clheap_fence_release(); /* the hand-off from W to F (see the top of this file) */
                clheap_pages_free_frames(h, pos, ~clheap_ones64(m)); /* the frames we keep are the first m */
                clheap_store32(h + CLHEAP_HDR_PAGES_LAST_BREAK, pos);
            }
            clheap_add32(breaking, 0xFFFFFFFFu);
        }
        if (pos == CLHEAP_BM_FAIL)
            continue;
        pos = segment ? pos * CLHEAP_PAGES_SEGMENT : pos;
        /* The next one goes on from here if this broke a segment, or filled a gap at the
         * frontier (a fit of the first look); a gap elsewhere leaves it, so that it stays
         * at the low end. */
        if (!small && !whole) {
            CLHEAP_GLOBAL clheap_u32 *frontier = h + CLHEAP_HDR_PAGES_LOW_FRONTIER;
            clheap_u32 at = segment ? pos : clheap_load32(frontier);
            if (at >= pos && at < pos + m)
                clheap_store32(frontier, pos + m);
        }
        return pos;
    }
    return CLHEAP_BM_FAIL;
}

#define CLHEAP_PAGES_BEST_FIT 0
#define CLHEAP_PAGES_FIRST_FIT 1
#define CLHEAP_PAGES_HIGHEST_FIT 2

/* Scans W's level 0 once, from segment `start` round to the end of the pool (runs do
 * not wrap): the first free run of at least `count` segments (FIRST_FIT), the shortest
 * (BEST_FIT: keeps long runs for long requests) or the highest (HIGHEST_FIT: placement
 * by ends). Returns its first segment and its length in *length, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_pages_find_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 count,
                                                      clheap_u32 start, int fit, clheap_u32 *length)
{
    int first_fit = fit == CLHEAP_PAGES_FIRST_FIT, highest = fit == CLHEAP_PAGES_HIGHEST_FIT;
    clheap_u32 containers = (h[desc + CLHEAP_BM_BITS] + 63u) / 64u, c0 = start / 64u;
    clheap_u64 below = clheap_ones64(start % 64u); /* c0's bits before the start: scanned last */
    if (start % 64u == 0u)
        below = 0;
    clheap_u32 run_start = 0, run = 0, best = CLHEAP_BM_FAIL, best_length = 0xffffffffu;
    for (clheap_u32 step = 0; step <= containers; step++) {
        clheap_u32 c = (c0 + step) % containers;
        clheap_u64 v = clheap_load64(clheap_bm_level0(h, desc, c));
        v = step == 0u ? v & ~below : step == containers ? v & below : v; /* c0 is split in two */
        if (c == 0u) { /* the pool's end ends a run */
            if (run >= count && (highest || run < best_length)) {
                best = run_start;
                best_length = run;
            }
            run = 0;
        }
        for (clheap_u32 b = 0; b < 64u;) {
            clheap_u64 rest = v >> b;
            if (!(rest & 1u)) { /* a taken segment ends the run */
                if (run >= count && (highest || run < best_length)) {
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
    if (run >= count && (highest || run < best_length)) { /* a run reaching the scan's last bit */
        best = run_start;
        best_length = run;
    }
    *length = best_length;
    return best;
}

/* The first segment of a run of `count` free segments anywhere, or FAIL: the best fit
 * (the top of the highest fitting run if `highest`: a request longer than a container,
 * placed by size; the best fit put one among the small blocks at the low end), or, if
 * `from` is not FAIL, the first fit from segment `from` on (see clheap_pages_take), then (if
 * a concurrent request took part of it) first fits from random starts, so
 * that concurrent requests spread. Starts and claims are aligned to the largest power
 * of two <= count where the stretch allows, so that concurrent claims in one stretch
 * leave no gaps too short for the next. At most CLHEAP_PAGES_RUN_TRIES scans of
 * segments / 64 loads, and the claims. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_segments(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 count,
                                                           clheap_u32 seed, int highest, clheap_u32 from)
{
    clheap_u32 desc = clheap_pages_segments_desc(h);
    clheap_u32 bits = h[desc + CLHEAP_BM_BITS];
    if (count > bits)
        return CLHEAP_BM_FAIL;
    clheap_u32 align = 1u;
    while (align <= count / 2u)
        align *= 2u;
    for (clheap_u32 attempt = 0; attempt < CLHEAP_PAGES_RUN_TRIES; attempt++) {
        int resume = !attempt && from != CLHEAP_BM_FAIL;
        clheap_u32 length, start = resume    ? from
                                   : attempt ? clheap_hash32(seed + attempt * 0x9E3779B9u) % bits / align * align
                                             : 0u;
        int fit = attempt || resume ? CLHEAP_PAGES_FIRST_FIT
                  : highest         ? CLHEAP_PAGES_HIGHEST_FIT
                                    : CLHEAP_PAGES_BEST_FIT;
        clheap_u32 first = clheap_pages_find_run(h, desc, count, start, fit, &length);
        if (first == CLHEAP_BM_FAIL) {
            if (attempt)
                continue; /* nothing after this start: another start, or the best fit again */
            return first;
        }
        if (fit == CLHEAP_PAGES_HIGHEST_FIT) { /* the run's top end, aligned down where it can be */
            clheap_u32 top = (first + length - count) / align * align;
            first = top >= first ? top : first + length - count;
        } else {
            clheap_u32 aligned = (first + align - 1u) / align * align;
            if (aligned + count <= first + length)
                first = aligned;
        }
        if (clheap_pages_claim_run(h, desc, first, count))
            return first;
    }
    return CLHEAP_BM_FAIL;
}

/* Free frames at the top (top = 1) or the bottom end of segment s's F container: how
 * far a run of whole free segments beside it extends into it. */
static CLHEAP_INLINE clheap_u32 clheap_pages_edge_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 s, int top)
{
    clheap_u64 taken = ~clheap_load64(clheap_bm_level0(h, CLHEAP_BM_FREE, s));
    if (!taken)
        return CLHEAP_PAGES_SEGMENT; /* a completed segment not yet moved to W (P2) */
    return top ? 63u - clheap_msb64(taken) : clheap_ctz64(taken);
}

/* The best fit for m > 64 frames among the regions of free frames that runs of whole
 * free segments make with the free frames beside them (the top of the segment before,
 * the bottom of the segment after, in F). Returns the region's first frame, its length
 * in frames (*length), or FAIL.
 * One scan of W's level 0 (segments / 64 loads) and two F loads per run long enough. */
static CLHEAP_INLINE clheap_u32 clheap_pages_find_region(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m,
                                                         clheap_u32 *length)
{
    const clheap_u32 S = CLHEAP_PAGES_SEGMENT;
    clheap_u32 desc = clheap_pages_segments_desc(h), segments = h[desc + CLHEAP_BM_BITS];
    clheap_u32 containers = (segments + 63u) / 64u;
    clheap_u32 best = CLHEAP_BM_FAIL, run_start = 0u, run = 0u;
    *length = 0xffffffffu;
    for (clheap_u32 c = 0; c <= containers; c++) {
        clheap_u64 v = c < containers ? clheap_load64(clheap_bm_level0(h, desc, c)) : 0u;
        for (clheap_u32 b = 0; b < 64u;) {
            clheap_u64 rest = v >> b;
            if (rest & 1u) { /* a run goes on */
                clheap_u32 ones = ~rest ? clheap_ctz64(~rest) : 64u - b;
                if (!run)
                    run_start = c * 64u + b;
                run += ones;
                b += ones;
                continue;
            }
            if (run && run * S + 2u * S >= m) { /* a run ends that its edges may make long enough */
                clheap_u32 end = run_start + run;
                clheap_u32 before = run_start ? clheap_pages_edge_frames(h, run_start - 1u, 1) : 0u;
                clheap_u32 after = end < segments ? clheap_pages_edge_frames(h, end, 0) : 0u;
                clheap_u32 frames = before + run * S + after;
                if (frames >= m && frames < *length) {
                    best = run_start * S - before;
                    *length = frames;
                }
            }
            run = 0u;
            if (c == containers)
                break;
            b += rest ? clheap_ctz64(rest) : 64u - b;
        }
    }
    return best;
}

/* m > 64 frames at the top of the best-fitting region (clheap_pages_find_region): the
 * rest of the region stays one stretch, and large requests stay towards the high end.
 * At most `tries` scans (concurrent takes collide); *none is set when a scan found no
 * region at all, so that no other way of taking m frames can succeed either.
 * Why: whole segments alone, placed nearest the high end, left large requests no room
 * once churn had mixed sizes: C11 core, one thread, 32 MiB pool, test_tier's mixed
 * sizes 16 B - 1 MiB brought back to 75% of the pool after freeing half, 3 rounds:
 * NULLs in 36 of 50 seeds (largest free stretch 0.6 - 1.0 MB, 1 MiB asked), 0 of 300
 * with this; 64 MiB, 8 rounds: 30 of 50, then 0 of 50. */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_region(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m, clheap_u32 tries,
                                                         int *none)
{
    *none = 0;
    for (clheap_u32 attempt = 0; attempt < tries; attempt++) {
        clheap_u32 length;
        clheap_u32 first = clheap_pages_find_region(h, m, &length);
        if (first == CLHEAP_BM_FAIL) {
            *none = 1;
            return first;
        }
        first += length - m;
        if (clheap_pages_claim_frames(h, first, m))
            return first;
    }
    return CLHEAP_BM_FAIL;
}

/* Takes `frames` contiguous frames; returns the first, or FAIL. Placement: from the low
 * end if small (blocks and the small tier's runs, whatever their size), else by size;
 * a small take of whole segments that names a frame `near` (not FAIL) in the pool's low
 * half first looks, first fit, at `looks` containers of segments from the one holding
 * it. Why the low half: a hint's runs follow each other (cl/clheap_tier.h), and runs
 * that walked on to the high end would leave large requests there no whole piece.
 * Out of line (CLHEAP_OUTLINE): every path that opens a run, a block or a large
 * allocation reaches it, and inlined it was most of a kernel's code (docs/performance.md,
 * "Where TierAlloc's size comes from"). */
static CLHEAP_INLINE CLHEAP_OUTLINE clheap_u32 clheap_pages_take_uncounted(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames,
                                                            clheap_u32 seed, int small, clheap_u32 near,
                                                            clheap_u32 looks)
{
    if (frames <= CLHEAP_PAGES_SEGMENT)
        return clheap_pages_take_frames(h, frames, seed, small);
    clheap_u32 count = (frames + CLHEAP_PAGES_SEGMENT - 1u) / CLHEAP_PAGES_SEGMENT;
    clheap_u32 seg = CLHEAP_BM_FAIL, wdesc = clheap_pages_segments_desc(h);
    /* A container holds 64 / count such requests, so concurrent ones start over count
     * times as many containers and look through a whole level-1 word before the scan
     * of every segment (with the width of one-segment takes most requests of a burst of
     * large ones ended in that scan). */
    clheap_u32 width = clheap_pages_width(h), stop = 0u;
    int none = 0;
    if (!small) {
        clheap_u32 f = CLHEAP_BM_FAIL;
        if (h[wdesc + CLHEAP_BM_BITS] <= CLHEAP_PAGES_BEST_FIT_SEGMENTS) {
            if (!clheap_pages_have(h, frames))
                return CLHEAP_BM_FAIL; /* the scans below cannot find them */
            f = clheap_pages_take_region(h, frames, CLHEAP_PAGES_REGION_TRIES, &none);
            if (none)
                return f;
        }
        /* Whole segments leave no frames for others to fill. In a small pool too, after
         * the best fit: concurrent requests all pick the same region, and the losers took
         * two whole segments each for 65 frames, and got NULL with half the pool free. */
        if (f == CLHEAP_BM_FAIL && frames % CLHEAP_PAGES_SEGMENT)
            f = clheap_pages_take_frontier(h, frames, 1);
        if (f != CLHEAP_BM_FAIL)
            return f;
    }
    clheap_u32 from = near != CLHEAP_BM_FAIL ? near / CLHEAP_PAGES_SEGMENT / 64u : CLHEAP_BM_FAIL;
    if (count <= 64u && small && looks && from < (h[wdesc + CLHEAP_BM_BITS] + 63u) / 128u)
        seg = clheap_pages_take_fit(h, wdesc, count, 0, 0, seed, looks, 1u, &stop, from);
    if (count <= 64u && seg == CLHEAP_BM_FAIL)
        seg = clheap_pages_take_fit(h, wdesc, count, CLHEAP_PAGES_BY_ENDS && !small, width > 1u, seed, 64u,
                                    width == 1u ? 1u : width * count < 64u ? width * count : 64u, &stop,
                                    CLHEAP_BM_FAIL);
    if (seg == CLHEAP_BM_FAIL && !clheap_pages_have(h, frames))
        return CLHEAP_BM_FAIL; /* the scans below cannot find them */
    /* Longer than a container holds, or none near the end had room. A small-tier run goes
     * on from where the look stopped, first fit: the best fit scans every segment, one
     * dependent load per 64, and once the low end was fragmented that scan set the launch
     * time of large pools (several times the first-fit time). */
    if (seg == CLHEAP_BM_FAIL)
        seg = clheap_pages_take_segments(h, count, seed, CLHEAP_PAGES_BY_ENDS && !small && count > 64u,
                                         small && count <= 64u ? stop * 64u : CLHEAP_BM_FAIL);
    clheap_u32 first = seg * CLHEAP_PAGES_SEGMENT;
    if (seg == CLHEAP_BM_FAIL) { /* a large request may still fit with the frames beside the runs */
        if (small)
            return seg;
        first = clheap_pages_take_region(h, frames, CLHEAP_PAGES_RUN_TRIES, &none);
    } else {
        clheap_u32 spare = count * CLHEAP_PAGES_SEGMENT - frames; /* the small tier's at the top, others' at the bottom */
        if (spare) {
            clheap_fence_release(); /* the hand-off from W to F (see the top of this file) */
            clheap_pages_free_frames(h, small ? seg + count - 1u : seg,
                                     small ? ~clheap_ones64(CLHEAP_PAGES_SEGMENT - spare) : clheap_ones64(spare));
        }
        first += small ? 0u : spare;
    }
    if (!small && first != CLHEAP_BM_FAIL)
        clheap_store32(h + CLHEAP_HDR_PAGES_HIGH_FRONTIER, first);
    return first;
}

/* Segments of group g (the 64 of W's container g) that may hold free frames: the whole
 * ones (W's level 0, also in *whole) and the broken ones with some (F's level 1: a
 * container of F that is not empty has its bit there, cl/clheap_bitmap.h); all 64 where
 * F has no level 1. */
static CLHEAP_INLINE clheap_u64 clheap_pages_group_maybe(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 g, clheap_u64 *whole)
{
    *whole = clheap_load64(clheap_bm_level0(h, clheap_pages_segments_desc(h), g));
    int broken_level = h[CLHEAP_BM_FREE + CLHEAP_BM_LEVELS] > 1u;
    return *whole | (broken_level ? clheap_load64(clheap_bm_container(h, CLHEAP_BM_FREE, 1u, g)) : ~(clheap_u64)0);
}

/* Whether span k (the 64 groups of W's level-1 container k) may hold free frames (W's
 * level 1, F's level 2); 1 where those levels do not exist. */
static CLHEAP_INLINE int clheap_pages_span_maybe(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 k)
{
    clheap_u32 wdesc = clheap_pages_segments_desc(h);
    if (h[wdesc + CLHEAP_BM_LEVELS] < 2u || h[CLHEAP_BM_FREE + CLHEAP_BM_LEVELS] < 3u)
        return 1;
    return (clheap_load64(clheap_bm_container(h, wdesc, 1u, k)) |
            clheap_load64(clheap_bm_container(h, CLHEAP_BM_FREE, 2u, k))) != 0;
}

/* The first stretch of m free frames in address order, across segment boundaries: whole
 * segments (W) and the free frames of broken ones (F) alike; FAIL if none. One pass
 * from the bitmaps' upper levels down: spans and groups of segments with no free frame
 * cost one or two loads, and only segments that may hold free frames are read. A stale
 * upper bit costs a load; a missing one (a release still under way) is concurrent.
 * Why: clheap_pages_take_uncounted's ways score runs with a whole free segment, look inside one F
 * container, or at a frontier; a stretch such as [64s + 24, 64s + 104) with the rest of
 * the pool taken was found by none of them, and malloc of 80 frames returned NULL.
 * Why from the upper levels: read segment by segment, the pass over a pool of 2^17
 * segments was as many dependent loads, and one request that came here while a launch
 * was filling the pool set the launch's time. */
static CLHEAP_INLINE clheap_u32 clheap_pages_find_stretch(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 m)
{
    clheap_u32 segments = h[clheap_pages_segments_desc(h) + CLHEAP_BM_BITS];
    clheap_u32 run = 0u, start = 0u, next = 0u; /* free frames from `start` up to segment `next` */
    CLHEAP_NO_UNROLL
    for (clheap_u32 g = 0; g * 64u < segments; g++) {
        if (g % 64u == 0u && !clheap_pages_span_maybe(h, g / 64u)) {
            g += 63u;
            continue;
        }
        clheap_u64 whole, maybe = clheap_pages_group_maybe(h, g, &whole);
        for (; maybe; maybe &= maybe - 1u) {
            clheap_u32 s = g * 64u + clheap_ctz64(maybe);
            if (s >= segments)
                break;
            if (s != next)
                run = 0u; /* a segment with no free frame lies between */
            next = s + 1u;
            clheap_u64 v = (whole >> (s % 64u)) & 1u ? ~(clheap_u64)0
                                                     : clheap_load64(clheap_bm_level0(h, CLHEAP_BM_FREE, s));
            if (!run)
                start = s * CLHEAP_PAGES_SEGMENT;
            if (!~v) { /* whole (or completed, P2) */
                run += CLHEAP_PAGES_SEGMENT;
                if (run >= m)
                    return start;
                continue;
            }
            if (run + clheap_ctz64(~v) >= m) /* the run ends in this segment's bottom frames */
                return start;
            clheap_u64 inside = m < CLHEAP_PAGES_SEGMENT ? clheap_pages_fits(v, m, 1u) : 0u;
            if (inside)
                return s * CLHEAP_PAGES_SEGMENT + clheap_ctz64(inside);
            clheap_u32 top = 63u - clheap_msb64(~v); /* v is not all ones here */
            run = top;
            start = s * CLHEAP_PAGES_SEGMENT + CLHEAP_PAGES_SEGMENT - top;
        }
    }
    return CLHEAP_BM_FAIL;
}

/* The same, counted in CLHEAP_HDR_PAGES_USED (U). */
static CLHEAP_INLINE clheap_u32 clheap_pages_take_near(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames, clheap_u32 seed,
                                                       int small, clheap_u32 near, clheap_u32 looks)
{
    clheap_u32 first = clheap_pages_take_uncounted(h, frames, seed, small, near, looks);
    if (first != CLHEAP_BM_FAIL)
        clheap_add32(clheap_pages_used_stripe(h, first), frames);
    return first;
}

static CLHEAP_INLINE clheap_u32 clheap_pages_take(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames, clheap_u32 seed,
                                                  int small)
{
    return clheap_pages_take_near(h, frames, seed, small, CLHEAP_BM_FAIL, 0u);
}

/* The last way of a large request (cl/clheap_tier.h: after its other takes failed and
 * everything was settled), while the pool has that many free frames: the first stretch
 * long enough (clheap_pages_find_stretch), counted in U. So a large request fails only
 * where no such stretch is free (or concurrent takes claimed the ones it found). Why
 * only last: a pass over the whole pool by each request whose first take lost a race
 * made launches that fit many times slower. */
static CLHEAP_INLINE CLHEAP_COLD clheap_u32 clheap_pages_take_stretch(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames)
{
    clheap_u32 first = CLHEAP_BM_FAIL;
    CLHEAP_NO_UNROLL
    for (clheap_u32 t = 0; t < CLHEAP_PAGES_STRETCH_TRIES && first == CLHEAP_BM_FAIL; t++) {
        if (!clheap_pages_have(h, frames))
            return CLHEAP_BM_FAIL;
        first = clheap_pages_find_stretch(h, frames);
        if (first == CLHEAP_BM_FAIL)
            return first;
        if (!clheap_pages_claim_frames(h, first, frames))
            first = CLHEAP_BM_FAIL;
    }
    if (first != CLHEAP_BM_FAIL)
        clheap_add32(clheap_pages_used_stripe(h, first), frames);
    return first;
}

/* Initialisation, container i of every level of F (which = 0, empty) or W (which = 1,
 * every segment free); one work-item per container. */
static CLHEAP_INLINE void clheap_pages_init_container(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 which, clheap_u32 i)
{
    clheap_u32 desc = which == 1u   ? clheap_pages_segments_desc(h)
                      : which == 2u ? (clheap_u32)CLHEAP_BM_UNSETTLED(h[CLHEAP_HDR_CLASS_COUNT])
                                    : (clheap_u32)CLHEAP_BM_FREE;
    clheap_bm_init_container(h, desc, i, which == 1u); /* only whole segments start free */
}

#endif
