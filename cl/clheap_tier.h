/* TierAlloc: clheap's default allocator. One heap buffer serves every size from 16 B to
 * the whole pool through two tiers over the same frames:
 *
 *   small  requests up to the largest size class (16 KiB by default) are slots of
 *          DynaSOAr-style blocks (cl/clheap_blocks.h: up to 64 slots, one class per
 *          block, invalidation with rollback). A block's frames come from the page tier
 *          and go back to it when the block empties, so memory freed by one tier is
 *          reusable by the other.
 *   large  larger requests are runs of whole frames from the page tier
 *          (cl/clheap_pages.h: 64-frame segments and the free frames of broken
 *          ones in two hierarchical bitmaps; the unused tail of a run is given back
 *          at once). */
#ifndef CLHEAP_TIER_H
#define CLHEAP_TIER_H

#include "clheap_blocks.h"

/* Fast path of a small malloc (after Gallatin and LLVM libc's GPU malloc, which claim
 * one range of slots per warp): each (class, hint slot) has a 64-bit hint in the header
 * (HINTS(c) slots per class: fewer, or none, where the pool cannot afford a run per
 * slot; a request's slot is its work-group's, see clheap_tier_hint_slot) naming a run
 * of RUN(c) consecutive blocks opened together (one page-tier take of up to 1024
 * frames, 16 segments: 65,536 slots of 16 B, 256 of 4 KiB; 2048 frames in pools of 2 GiB
 * or more, see host/heap_layout.c) and how many of its slots it has handed out.
 * A request (on NVIDIA a whole warp's worth of one class, through inline PTX) takes n
 * slots with one atomic add on the hint, no bitmap search and no block header touched.
 * A run's slots are all reserved in its blocks' allocation bitmaps when it opens, so no
 * other path can take them; freeing one makes its block findable as BlockAlloc's are.
 * The request whose add crosses the run's end is the only one that opens the next run
 * and installs it with an exchange (so no two openers race, and no one waits for the
 * opener: the others look at the next slot's hint, then fall back). An opener that finds
 * no frames for the run installs a wait instead: the hint counts a run's worth of
 * requests, all sent to the fallback, and the one whose add ends the count opens again
 * (clheap_tier_run_take). Why: with 0 installed every next request opened, and where no
 * run fits (a small pool whose free frames are scattered) each of them paid a page-tier
 * take that searched and failed, most of a launch's time (docs/performance.md). The
 * opener takes what the old run lacked from the new one's first slots, counted in the
 * installed hint, and looks for the new run's frames first where the old run ended.
 * Spares (where CLHEAP_TIER_SPARE_AT is set; off by default): each hint has a spare word
 * beside it (clheap_tier_spare_of), 0 or a run opened ahead. The request whose add
 * crosses 1/CLHEAP_TIER_SPARE_AT of the run opens the next run as the crossing request
 * would (page-tier take, headers, listing), while the pool is less than half used and
 * the spare is empty, and stores it with a CAS from 0 (a lost CAS frees the run). The
 * request that crosses the end takes the spare with an exchange and installs it: no
 * page-tier take and no headers while the hint is used up. Why: while a hint's opener
 * works, every request of that hint and its neighbour's falls back, and in small
 * launches of in-kernel churn the opening (a take among the fallbacks' own block takes,
 * then the headers) lasted long enough that fallbacks took more of the mallocs' time
 * than any other step (docs/performance.md, "Spare runs"). Why only in a pool less than
 * half used: a spare is a second run a hint holds, and a fuller pool keeps its frames for
 * requests (the last resort gives spares back with the runs, clheap_tier_close_hint). The
 * fallback is BlockAlloc's search of the class's active blocks and opening single blocks
 * (on split words, which give no hints, batches of up to CLHEAP_TIER_BATCH_FRAMES: the
 * first block for the request, the rest findable and marked; or, where a new block would
 * be mostly unused in a pool short of runs for the class, pieces: frames of their own,
 * large allocations, see clheap_tier_wants_pieces); when that fails, the class's runs are
 * closed (a CAS of each live hint to 0, then their unhanded slots are freed) and the
 * search tried again, so memory held by hints never makes malloc report a full heap.
 * A large malloc that finds no frames closes every class's runs and tries once more.
 * A small request that its class still cannot serve (no free slot, no frames for a
 * block or a piece) closes every class's runs, tries its class once more (a lone request
 * in clheap_tier_reserve_slow, a warp's in clheap_tier_take_larger), then takes a free
 * slot of the first larger class with one (clheap_tier_take_from_larger), unless the
 * heap keeps classes typed (CLHEAP_HDR_TIER_TYPED: parallel_do's type ids). Why: blocks
 * keep their class until they empty, so when the sizes a program asks for shift (a
 * k-d tree's arrays shrink level by level) the pool fills with sparse blocks of the old
 * sizes: clheap-kdtree, 200,000 triangles in 15 MiB, got 13,245 NULLs with 44% of the
 * pool requested, the 64 - 128 B classes' blocks 12% - 31% used.
 *
 * free dispatches on the address in O(1): the frame's out-of-band header names the
 * first frame of its block or large allocation, whose header names the class, or
 * CLHEAP_TIER_LARGE with the run's length in frames.
 *
 * Settling. What a small free does after its AND (make a block that was full findable,
 * give an emptied block's frames back) is most of its time: a chain of dependent
 * atomics and fences on the last freeing lane. In small launches (at most
 * CLHEAP_TIER_DEFER_ITEMS work-items) while the page tier has handed out less than a
 * quarter of the pool (CLHEAP_TIER_DEFER_USED_PERCENT; cl/clheap_blocks.h,
 * clheap_tier_defers), a free that leaves such work sets the block's bit in the
 * unsettled bitmap instead (one OR whose result nobody waits for; bit = the block's
 * first frame, one level). The work is done later by whoever takes the bit with an
 * exchange of its container (clheap_tier_settle_container): requests that open frames
 * for blocks, a share in proportion to what they opened (so launches that take much of
 * the pool do not find it held by marked blocks), a large request or a class short of
 * frames before it would return NULL (bounded, then every container), and
 * clheap_heap_trim. Why only small launches: there the free's latency is the launch's
 * (deferring nearly halves a small launch's free), while a large launch that left its
 * blocks to the next made that one's mallocs several times slower. Why only in a pool
 * that is mostly free: blocks given back late come back where the next takes no longer
 * look, and the large requests of a fuller pool then find no stretch long enough
 * (test_tier's mixed sizes to 1 MiB at 75% of its pool got NULLs when frees deferred
 * below half the pool; below a quarter, none).
 *
 * Keeping (off by default: CLHEAP_TIER_KEEP_ITEMS 0). In launches too large to defer, up
 * to CLHEAP_TIER_KEEP_ITEMS work-items, a free that empties a block keeps it: the block
 * stays findable in its class (activated if that free took it from full) and is marked
 * unsettled, instead of being invalidated and given back at once; requests that open runs
 * there settle nothing. Why: in launches that malloc and free in a loop the emptied block
 * is what the class's next requests need; given back, they fell back while a hint's next
 * run opened (docs/performance.md, "Keeping emptied blocks"). What bounds it: a request on
 * its way to NULL (clheap_tier_take_marks) sets CLHEAP_HDR_KEEP_FULL, and from then on
 * frees give emptied blocks back and openers settle their share, until an opener finds
 * less than CLHEAP_TIER_DEFER_USED_PERCENT of the pool used; that request's last resort
 * settles every marked container, kept blocks among them, as clheap_heap_trim does. Why
 * not a bound on the pool's use: summing the page tier's stripes in every such free cost
 * more than keeping saved, and the hints' runs count in it. Why off: blocks kept by one
 * launch slowed the next launches that took much of the pool (same section).
 *
 * One take (CLHEAP_TIER_ONE_TAKE, every build without the warp paths). A request alone
 * reaches the page tier's take (clheap_pages_take) at one call: the frames of a large
 * request, or of a piece, are taken by its class fallback's call of
 * clheap_block_reserve_new, for the pseudo-class CLHEAP_BLOCK_LARGE, which takes them as a
 * block's but writes nothing (clheap_tier_reserve_slow keeps the large path's attempts,
 * the caller marks the allocation). Why: compilers that inline every call copy the take,
 * the largest piece of the allocator, once per call site; the large path's own copy was
 * most of what made a TierAlloc kernel take minutes to build on llvmpipe. NVIDIA's build
 * keeps the large path's own take (clheap_tier_take_frames), where the driver calls it.
 * Split words also compile out the closing of runs, which they never install (W3).
 *
 * Recycling (CLHEAP_TIER_RECYCLE, on by default; a program's option). Each hint has
 * CLHEAP_TIER_TRACK_SLOTS 64-bit track words (clheap_tier_track_at), of which a program
 * claims the first CLHEAP_TIER_TRACKS: 0, or a run (first frame + 1, its tag) and how
 * many of its blocks emptied (bit 31 of that count: stolen from). The request that opens
 * a run for a hint claims a free track (a CAS, in clheap_tier_take_begin, before the
 * headers), and every block of the run carries the track's slot + 1 (its anchor, word 7)
 * and the tag (word 5); a run no track took has anchor 0. A block whose anchor names a
 * track and that empties (its invalidation succeeded: every slot taken) is held, not
 * given back: its class word becomes held for its track (CLHEAP_TIER_HELD_WORD), so a
 * free into it is refused as no block's, then one add counts it in its track. The add that counts the run's last
 * block leaves the run parked: complete, every block held, still in its track. The
 * hint's next crossing takes a parked run before any spare (a CAS that marks the track
 * being installed, count RUN(c) + 1), its warp's lanes put the blocks back in their
 * class (clheap_tier_unhold), and an add returns the count to 0: tracked afresh, no
 * page-tier take, no headers. The last resort and clheap_heap_trim, closing a hint,
 * steal from its tracks (clheap_tier_steal): an OR sets the flag, then the held blocks
 * are released one by one (the stealer marked walking meanwhile), or a parked run dropped
 * whole with one release; a stolen run's later emptiers give their blocks back, and its
 * completer releases what no stealer did, then frees the track. A block is released by a
 * CAS from held for its track, so a walk over a stolen run's frames never takes a block
 * that a later run, reusing frames the stolen run gave back, holds for another track;
 * and no track is freed while a walk over its run goes on (the walking mark, or the
 * completer walks first), so no later run is held for the same track meanwhile. Why:
 * in launches that malloc and free in a loop, a hint's runs are used up within a few
 * rounds, and each opening (a page-tier take among the fallbacks' and frees' own, then
 * the headers) kept the hint busy while its requests fell back; the blocks of the
 * used-up runs meanwhile went back to the page tier one by one. Why the anchor names the
 * track, and why only the completer and stealers free one: a track is freed only once
 * every block of its run was counted (or by the stealer of a parked run), so no add can
 * come late and be counted for another run; the count is exact and completing a run
 * reads nothing but the add's result. (Hints named the block's hint before, and an add
 * after a run's break could land in a later run's count: the completer had to read
 * every block's class, one load after another, at the end of launches that free runs
 * whole.) Why parked and not a spare or given back at once: a launch that frees runs
 * whole completed several a hint, and a completer that wrote every block of its run made
 * the launch's end wait (docs/performance.md, "Recycling runs"). (A stolen run's
 * completer once released every block of its frames held for its class, whatever the
 * track: after a trim, a game of life on PoCL lost a later run's held blocks that way.)
 *
 * Invariants when no kernel runs (verified by clheap_heap_check), beyond those of the
 * blocks and the pages:
 *   T1  every frame is in exactly one of: a free piece of the page tier, a block (its
 *       first frame's class is 1..count, every frame's owner is the first), a large
 *       allocation (first frame's class is CLHEAP_TIER_LARGE, its length m >= 1, frames
 *       [first, first + m) owned by first, the others' class 0);
 *   T2  a frame outside blocks has no reservable slot (allocation bitmap all ones), so a
 *       stale search can never reserve in it, and a run opens with its slots reserved;
 *   T3  a hint is 0, or a wait (no run; a count, see CLHEAP_TIER_RETRY_AT), or names
 *       a run (first frame + 1) and a count t; if t is below the run's RUN(c) *
 *       CAPACITY(c) slots, every block of the run from slot t on is a block of class c
 *       whose slots from t on are set (held for the hint); a spare is 0 or names a run
 *       (first frame + 1) held whole the same way (t = 0); runs of distinct live hints
 *       and spares do not share a block with unhanded slots.
 *   T4  a block with a free slot that is not in its class's active bitmap is marked
 *       unsettled (so is an empty block not yet given back, kept or not); a mark on a
 *       frame that starts no block, or a block settled since, is stale and harmless (a
 *       settler reads the class first).
 *   T5  a held block (class word CLHEAP_TIER_HELD_WORD(anchor, c)) has every slot set
 *       and is listed in its class's allocated bitmap; its anchor (word 7) is the one
 *       its class word names, and that track follows its run (word 5), a track of a
 *       hint of class c; a spare's blocks are of class c.
 *   T6  a track that follows a run has counted at most RUN(c) of its blocks, is not
 *       marked walking, and counts exactly the held ones whose anchor names it (RUN(c):
 *       parked), or, stolen from, at least them; every
 *       block whose anchor names a track belongs to the run it follows.
 *
 * Linearisation points: small malloc from a run, the add on the hint; otherwise the OR
 * that sets the slot's bit (rolled back if the class re-check fails; for a slot of a
 * larger class the same OR, in that class's block); small free, the
 * AND that clears it (its old value tells a double free); closing a run, the CAS of
 * its hint to 0 (adds before it are counted in the t it saw, adds after it see 0);
 * storing a spare, its CAS from 0; taking one, the exchange that reads it (one taker);
 * recycling: claiming a track, its CAS; holding a block, its count's add (the RUN(c)-th
 * parks the run); taking a parked run, the CAS to RUN(c) + 1; stealing, the OR of the
 * flag (a held block is released by a CAS of its class from held for its track, which
 * its stealer, its own emptier and a stolen run's completer may all try; a parked run
 * is its stealer's, and its exchange frees the track; a walking stealer's mark, its CAS,
 * and its end, the AND that clears it);
 * large malloc, the page tier's take; large free, the CAS of the first frame's class
 * from LARGE to 0 (so of two frees of one allocation exactly one succeeds, the other
 * is counted); settling, the exchange that takes a container's marks (each mark has
 * one settler), then for an empty block the OR that takes every slot (invalidation,
 * rolled back if a slot was taken meanwhile).
 *
 * Happens-before: a run's block headers are written, then clheap_fence_release, then
 * the exchange that installs the hint; a request's add reads that value and computes
 * addresses from it (the frees that follow read the headers). A spare's headers are
 * written, then clheap_fence_release, then its CAS; the taker's exchange reads it, then
 * clheap_fence_acquire, then (its fence_release before) the exchange that installs it.
 * A large allocation's headers (owners, length) are written, then clheap_fence_release,
 * then its class: a free that reads LARGE (after clheap_fence_acquire) sees the length.
 * A free writes class 0, clheap_fence_release, then releases the frames: the next
 * owner's writes come after. A free that marks its block (deferring or keeping it) did
 * so after clheap_fence_release and its AND (one that keeps a block it took from full
 * activates it as clheap_block_reactivate does, after a fence_release of its own); the
 * settler's OR on the block's bitmap reads that AND, then clheap_fence_acquire, then
 * it gives the frames back as a free does. Recycling: a run's anchors are written after
 * its track's claim and before the fence_release that precedes its install (so before
 * any block can empty); a held block's class, incarnation and seal are written, then
 * clheap_fence_release, then its count's add; the adds form one release sequence on the
 * track, so the crossing whose CAS reads the parked count (then clheap_fence_acquire)
 * sees every block held, and a walking stealer's CAS (then clheap_fence_acquire) every
 * counted block's held word. The crossing's lanes put the blocks back in their class, each lane then
 * clheap_fence_release and the warp sync, then clheap_fence_release and the add that
 * tracks the run afresh: a stealer that reads that add sees no block of the run held
 * from before. */

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_tier_hint_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                                   clheap_u32 slot)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(h + CLHEAP_HDR_HINT_FIRST + 2u * (c * h[CLHEAP_HDR_HINT_SLOTS] + slot));
}

/* A hint's index (class * slots + slot), which orders its spare and its tracks. */
static CLHEAP_INLINE clheap_u32 clheap_tier_hint_index(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u64 *hint)
{
    return (clheap_u32)(((CLHEAP_GLOBAL clheap_u32 *)hint - h) - CLHEAP_HDR_HINT_FIRST) / 2u;
}

/* The spare word of a hint (see Spares above): after all the hints, one 32-bit word each. */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_tier_spare_of(CLHEAP_GLOBAL clheap_u32 *h,
                                                                    CLHEAP_GLOBAL clheap_u64 *hint)
{
    return h + CLHEAP_HDR_SPARE_FIRST(h[CLHEAP_HDR_CLASS_COUNT], h[CLHEAP_HDR_HINT_SLOTS]) +
           clheap_tier_hint_index(h, hint);
}

/* Claims a free track of `hint` for its run at `run` (see Recycling), in a program that
 * recycles and an untyped heap: the anchor its blocks are to carry (the track's slot + 1),
 * or 0 if none is free. Before the run's headers (a spare opened ahead: at its install,
 * clheap_tier_anchor_run), so before any of its slots is handed out. */
static CLHEAP_INLINE clheap_u32 clheap_tier_claim_track(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u64 *hint,
                                                        clheap_u32 run)
{
#if CLHEAP_ATOMICS64
    if (!CLHEAP_TIER_RECYCLE || !hint || h[CLHEAP_HDR_TIER_TYPED])
        return 0u;
    clheap_u32 first = clheap_tier_hint_index(h, hint) * CLHEAP_TIER_TRACK_SLOTS;
    CLHEAP_NO_UNROLL
    for (clheap_u32 k = 0; k < CLHEAP_TIER_TRACKS; k++) {
        CLHEAP_GLOBAL clheap_u64 *track = clheap_tier_track_at(h, first + k);
        clheap_u64 v = clheap_load64(track); /* free: no run (a late stealer's flag may be left) */
        if (!(v >> 32) && clheap_cas64(track, v, (clheap_u64)(run + 1u) << 32) == v)
            return first + k + 1u;
    }
#else
    (void)h;
    (void)hint;
    (void)run;
#endif
    return 0u;
}

/* Slots a run of class c holds: RUN(c) blocks of CAPACITY(c). */
static CLHEAP_INLINE clheap_u32 clheap_tier_run_slots(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    return h[CLHEAP_HDR_CLASS_RUN + c] * h[CLHEAP_HDR_CLASS_CAPACITY + c];
}

/* Unit of slot `index` of the run of class c starting at frame `run`. */
static CLHEAP_INLINE clheap_u32 clheap_tier_run_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c,
                                                     clheap_u32 index)
{
    clheap_u32 capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c];
    return clheap_slot_unit(h, run + index / capacity * h[CLHEAP_HDR_CLASS_FRAMES + c], c, index % capacity);
}

/* Frees the slots [from, blocks * CAPACITY(c)) of a run nobody hands out any more:
 * settling its blocks at once (`later` 0: a closed run, whose closer searches them
 * next), or as a user's free does (a run opened for one request, its unwanted slots:
 * in a small launch, marking its blocks is cheaper on the fallback path than making
 * them findable). */
static CLHEAP_INLINE void clheap_tier_release_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c,
                                                  clheap_u32 from, clheap_u32 blocks, int later)
{
    clheap_u32 capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c], frames = h[CLHEAP_HDR_CLASS_FRAMES + c];
    for (clheap_u32 b = from / capacity; b < blocks; b++) {
        clheap_u32 lo = b == from / capacity ? from % capacity : 0u;
        clheap_u64 bits = clheap_class_slots(h, c) & ~(lo ? clheap_ones64(lo) : (clheap_u64)0);
        clheap_u32 block = run + b * frames;
        if (later)
            clheap_block_after_free(h, block, c, clheap_and64(clheap_block_alloc_bits(h, block), ~bits), bits);
        else
            clheap_block_release_slots(h, block, c, bits);
    }
}

/* What a request for n slots of one class got: indices [first, first + k) of the run at
 * `run`, then [0, k2) of the run at `run2` (the next run, which this request opened),
 * then the slots `got` of the block at `frame` (FAIL if none); the rest go alone, or,
 * if `frame` is CLHEAP_TIER_PIECES, take pieces (see clheap_tier_wants_pieces), or, if
 * it is CLHEAP_TIER_NOTHING, end in NULL: the fallback found that nothing can serve the
 * class (clheap_tier_nothing_for), what each of them would find again alone. */
#define CLHEAP_TIER_PIECES (CLHEAP_BM_FAIL - 1u)
#define CLHEAP_TIER_NOTHING (CLHEAP_BM_FAIL - 2u)
typedef struct {
    clheap_u32 run, first, k, run2, k2, frame;
    clheap_u64 got;
} clheap_tier_grant;

/* This request's hint slot: its work-group's, and while the launch has fewer groups than
 * slots, its group's 32-item slices spread over the slots left unused. Why: with 16
 * groups (2^12 x 4 KiB) a group's run of 128 slots lasted half of its 256 requests, and
 * the warps that came while it was reopened each opened runs of their own; spread over
 * the slots they take less than half the time. With as many groups as slots or more, a
 * slot serves whole groups, as before (spreading those too made mid-sized launches of
 * mixed sizes several times slower). */
static CLHEAP_INLINE clheap_u32 clheap_tier_hint_slot(clheap_u32 hints)
{
    clheap_u32 groups = clheap_group_count();
    return (clheap_group_index() + (groups < hints ? clheap_warp_in_group() * groups : 0u)) % hints;
}

/* A hint with no run whose count is below this, and whose count an add takes to it or
 * past it, is opened by that add's request: an opening that failed installs this value
 * less the run's slots (clheap_tier_take_finish). The count of an empty hint or of one
 * being opened stays far below it (each opening overwrites it), so neither is confused
 * with a wait. */
#define CLHEAP_TIER_RETRY_AT 0x80000000u

/* Hands out up to n slots of class c from the run of this request's hint (or, while
 * that is used up or being opened, the next slot's: CLHEAP_TIER_HINT_LOOKS), into g's
 * first range. Returns the hint if this request must open its next run: the one whose
 * add crosses the run's end, or ends a wait (or the first on an empty hint); no other
 * can while the hint is used up, waiting or empty. Also the hint, with *ahead set, if
 * its add crossed 1/CLHEAP_TIER_SPARE_AT of the run (exactly one add of a run's life
 * does: the counts it hands out are disjoint and consecutive): it may open the spare.
 * Else NULL. An add on a busy hint hands out nothing: a used-up run's count only grows,
 * and an opening's exchange overwrites it. */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_tier_run_take(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                                    clheap_u32 n, clheap_tier_grant *g, int *ahead)
{
    *ahead = 0;
    clheap_u32 hints = h[CLHEAP_HDR_CLASS_HINTS + c];
    if (!hints)
        return 0; /* a class whose runs the pool cannot afford: blocks only */
#if CLHEAP_ATOMICS64 /* else the layout gives no hint slots: no 64-bit add (W3, cl/clheap_port.h) */
    clheap_u32 slot = clheap_tier_hint_slot(hints), total = clheap_tier_run_slots(h, c);
    CLHEAP_NO_UNROLL
    for (clheap_u32 look = 0; look < CLHEAP_TIER_HINT_LOOKS && look < hints; look++) {
        CLHEAP_GLOBAL clheap_u64 *hint = clheap_tier_hint_at(h, c, (slot + look) % hints);
        clheap_u64 old = clheap_add64(hint, n);
        clheap_u32 f = (clheap_u32)(old >> 32), t = (clheap_u32)old;
        if (f && t < total) {
            g->k = n < total - t ? n : total - t;
            g->run = f - 1u;
            g->first = t;
            clheap_fence_dependency(); /* the slots' users write where this add pointed them */
#if CLHEAP_TIER_SPARE_AT
            clheap_u32 at = total / CLHEAP_TIER_SPARE_AT;
            *ahead = t + n < total && t < at && t + n >= at;
#endif
            return t + n < total && !*ahead ? 0 : hint;
        }
        if (!f && (!t || (t < CLHEAP_TIER_RETRY_AT && t + n >= CLHEAP_TIER_RETRY_AT)))
            return hint; /* empty, or the add that ends a failed opening's wait */
    }
#else
    (void)n;
    (void)g;
#endif
    return 0;
}

/* Frees a run of class c nobody hands out (a spare): every slot, its blocks settled. */
static CLHEAP_INLINE void clheap_tier_release_whole(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c)
{
    clheap_tier_release_run(h, run, c, 0u, h[CLHEAP_HDR_CLASS_RUN + c], 0);
}

/* Takes the spare of `hint` if it has one: its run's first frame, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_tier_take_spare(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u64 *hint)
{
    CLHEAP_GLOBAL clheap_u32 *spare = clheap_tier_spare_of(h, hint);
    clheap_u32 v = clheap_load32(spare) ? clheap_xchg32(spare, 0u) : 0u;
    if (!v)
        return CLHEAP_BM_FAIL;
    clheap_fence_acquire(); /* the spare's headers, written before its CAS */
    return v - 1u;
}

/* Takes a run that a track of `hint` holds parked (complete, every block held: see
 * Recycling), in a program that recycles: its first frame, or FAIL; *anchor, its track's
 * slot + 1 (its blocks' anchors already). The tracks' loads go together; one CAS, on the
 * first parked one, marks it being installed (count RUN(c) + 1, which stealers leave),
 * and the run is this request's; clheap_tier_take_finish tracks it afresh. */
static CLHEAP_INLINE clheap_u32 clheap_tier_take_parked(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u64 *hint,
                                                        clheap_u32 c, clheap_u32 *anchor)
{
#if CLHEAP_ATOMICS64
    if (!CLHEAP_TIER_RECYCLE)
        return CLHEAP_BM_FAIL;
    clheap_u32 first = clheap_tier_hint_index(h, hint) * CLHEAP_TIER_TRACK_SLOTS, k = CLHEAP_TIER_TRACKS;
    CLHEAP_GLOBAL clheap_u64 *tracks = clheap_tier_track_at(h, first);
    clheap_u64 seen = 0;
    for (clheap_u32 i = CLHEAP_TIER_TRACKS; i-- > 0;) { /* unrolled: the loads go together */
        clheap_u64 v = clheap_load64(tracks + i);
        int parked = (v >> 32) && (clheap_u32)v == h[CLHEAP_HDR_CLASS_RUN + c]; /* complete, not stolen */
        k = parked ? i : k;
        seen = parked ? v : seen;
    }
    if (k == CLHEAP_TIER_TRACKS || clheap_cas64(tracks + k, seen, seen + 1u) != seen)
        return CLHEAP_BM_FAIL;
    clheap_fence_acquire(); /* the blocks' HELD stores, released before their counts */
    *anchor = first + k + 1u;
    return (clheap_u32)(seen >> 32) - 1u;
#else
    (void)h;
    (void)hint;
    (void)c;
    (void)anchor;
    return CLHEAP_BM_FAIL;
#endif
}

/* Steals the held blocks of every run the hint at `index` tracks (see Recycling). */
static CLHEAP_INLINE void clheap_tier_steal_hint(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 index)
{
    for (clheap_u32 k = 0; k < CLHEAP_TIER_TRACK_SLOTS; k++) /* in every build: other programs may track */
        clheap_tier_steal(h, index, k);
}

/* The blocks [index, ...) (every stride-th) of a parked run of class c back in their
 * class, before its install hands out their slots (their anchors and runs stay). */
static CLHEAP_INLINE void clheap_tier_unhold(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c,
                                             clheap_u32 index, clheap_u32 stride)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c];
    CLHEAP_NO_UNROLL
    for (clheap_u32 b = index; b < h[CLHEAP_HDR_CLASS_RUN + c]; b += stride)
        clheap_store32(clheap_block_header(h, run + b * frames) + CLHEAP_BLOCK_WORD_CLASS, c + 1u);
}

/* Writes `anchor` (a claimed track's slot + 1) and the run in every block of the run of
 * class c at `run` (a spare opened ahead, installed: its headers were written untracked). */
static CLHEAP_INLINE void clheap_tier_anchor_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c,
                                                 clheap_u32 anchor)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c], end = run + h[CLHEAP_HDR_CLASS_RUN + c] * frames;
    CLHEAP_NO_UNROLL
    for (clheap_u32 b = run; b < end; b += frames) {
        clheap_store32(clheap_block_header(h, b) + CLHEAP_BLOCK_WORD_RUN, run + 1u);
        clheap_store32(clheap_block_header(h, b) + CLHEAP_BLOCK_WORD_ANCHOR, anchor);
    }
}

/* Ends the run a hint hands out, if one is live, and frees its remaining slots, after
 * stealing from its tracks (so their runs' blocks are given back, not held); drops its
 * spare's run. */
static CLHEAP_INLINE void clheap_tier_close_hint(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 slot)
{
    CLHEAP_GLOBAL clheap_u64 *hint = clheap_tier_hint_at(h, c, slot);
    clheap_u32 total = clheap_tier_run_slots(h, c), spare = clheap_tier_take_spare(h, hint);
    if (spare != CLHEAP_BM_FAIL)
        clheap_tier_drop_run(h, spare, c);
    clheap_tier_steal_hint(h, c * h[CLHEAP_HDR_HINT_SLOTS] + slot);
    clheap_u64 v = clheap_load64(hint);
    for (int tries = 0; tries < CLHEAP_TIER_CLOSE_TRIES; tries++) {
        clheap_u32 f = (clheap_u32)(v >> 32), t = (clheap_u32)v;
        if (!f || t >= total)
            return; /* empty, or used up: its opener owns it */
#if CLHEAP_ATOMICS64
        clheap_u64 seen = clheap_cas64(hint, v, 0);
#else
        clheap_u64 seen = ~v; /* never reached: no hint is ever installed (W3) */
#endif
        if (seen == v) {
            clheap_tier_steal_hint(h, c * h[CLHEAP_HDR_HINT_SLOTS] + slot);
            clheap_tier_release_run(h, f - 1u, c, t, h[CLHEAP_HDR_CLASS_RUN + c], 0);
            return;
        }
        v = seen;
    }
}

/* Closes every run of class c (or of every class if c is CLHEAP_MAX_CLASSES): the
 * memory held for hints, given back before a malloc reports the heap full. */
static CLHEAP_INLINE void clheap_tier_close_runs(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
#if !CLHEAP_ATOMICS64
    /* Split words install no run and no spare (W3 of cl/clheap_port.h: no hint slots):
     * nothing to close. Compiled out: each of its sites was a copy of a run's release. */
    (void)h;
    (void)c;
    return;
#endif
    int all = c == CLHEAP_MAX_CLASSES;
    if (all)
        clheap_store32(h + CLHEAP_HDR_RUNS_OPEN, 0u); /* before the loads: a run installed after sets it again */
    clheap_u32 end = all ? h[CLHEAP_HDR_CLASS_COUNT] : c + 1u;
    for (clheap_u32 k = all ? 0u : c; k < end; k++)
        for (clheap_u32 s = 0; s < h[CLHEAP_HDR_CLASS_HINTS + k]; s++)
            clheap_tier_close_hint(h, k, s);
}

/* Settling (see the top of this file): the block at `frame`, whose unsettled mark this
 * work-item took. In use and not full: made findable (its active mark). Empty: taken
 * whole with one OR (invalidated) and its frames returned to the page tier. Full, or no
 * block any more (a mark that came after its settling): nothing. */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_tier_settle_block(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, frame);
    clheap_u32 cls = clheap_load32(header + CLHEAP_BLOCK_WORD_CLASS), count = h[CLHEAP_HDR_CLASS_COUNT];
    if (cls == 0u || cls > count)
        return;
    clheap_u64 slots = clheap_class_slots(h, cls - 1u);
    CLHEAP_GLOBAL clheap_u64 *alloc = clheap_block_alloc_bits(h, frame);
    CLHEAP_NO_UNROLL
    for (int attempt = 0; attempt < 2; attempt++) {
        clheap_u64 seen = clheap_or64(alloc, slots), ours = slots & ~seen;
        /* The block may have been settled by another (it was marked twice) and reopened
         * since its class was read: the reopener wrote the class before the bitmap. */
        clheap_fence_acquire();
        clheap_u32 now = clheap_load32(header + CLHEAP_BLOCK_WORD_CLASS);
        if (now != cls) {
            if (ours && now != 0u && now <= count)
                clheap_block_release_slots(h, frame, now - 1u, ours);
            return;
        }
        if ((seen & slots) == 0u) {
            clheap_block_emptied(h, frame, cls - 1u, 1);
            return;
        }
        if (!ours)
            return; /* full: a free of one of its slots marks it again */
        /* In use: give its free slots back; if frees emptied it meanwhile (they saw them
         * taken, so none of them marked it), once more. */
        clheap_u64 left = clheap_and64(alloc, ~ours);
        if (((left & ~ours) & slots) != 0u) {
            clheap_bm_try_set(h, CLHEAP_BM_ACTIVE(cls - 1u), frame);
            return;
        }
    }
    clheap_block_mark_unsettled(h, frame); /* bounded: the next settler has it */
    clheap_store32(clheap_block_mark_flag(h, frame), 1u);
}

/* Settles the blocks marked in container k of the unsettled bitmap, taken with one
 * exchange (so each mark has one settler). */
static CLHEAP_INLINE void clheap_tier_settle_container(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 k)
{
    CLHEAP_GLOBAL clheap_u64 *word = clheap_bm_level0(h, CLHEAP_BM_UNSETTLED(h[CLHEAP_HDR_CLASS_COUNT]), k);
    if (!clheap_load64(word))
        return;
    clheap_u64 bits = clheap_xchg64(word, 0);
    CLHEAP_NO_UNROLL
    for (; bits; bits &= bits - 1u)
        clheap_tier_settle_block(h, k * 64u + clheap_ctz64(bits));
}

/* Containers of the unsettled bitmap. */
static CLHEAP_INLINE clheap_u32 clheap_tier_settle_containers(CLHEAP_GLOBAL clheap_u32 *h)
{
    return (h[CLHEAP_HDR_FRAME_COUNT] + 63u) / 64u;
}

/* Containers a request that opened `frames` frames settles. */
static CLHEAP_INLINE clheap_u32 clheap_tier_settle_share(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames)
{
    clheap_u32 n = (frames + 63u) / 64u * CLHEAP_TIER_SETTLE_PER_SEGMENT, total = clheap_tier_settle_containers(h);
    return n < total ? n : total;
}

/* The first of n containers (n at most all) taken from the shared cursor: the next
 * request's start where this one's ends, so concurrent settlers visit different ones. */
static CLHEAP_INLINE clheap_u32 clheap_tier_settle_claim(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 n)
{
    return clheap_add32(h + CLHEAP_HDR_SETTLE_CURSOR, n) % clheap_tier_settle_containers(h);
}

/* Settles containers start + index, start + index + stride, ... below start + n (mod
 * the count): one work-item alone (index 0, stride 1), or on NVIDIA the lanes of a warp
 * share them (clheap_tier_malloc_warp). */
static CLHEAP_INLINE void clheap_tier_settle_range(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 start, clheap_u32 n,
                                                   clheap_u32 index, clheap_u32 stride)
{
    clheap_u32 total = clheap_tier_settle_containers(h);
    CLHEAP_NO_UNROLL
    for (clheap_u32 i = index; i < n; i += stride)
        clheap_tier_settle_container(h, (start + i) % total);
}

/* Settles every container (`all`), or the next CLHEAP_TIER_SETTLE_LOOKS from the cursor. */
static CLHEAP_INLINE void clheap_tier_settle(CLHEAP_GLOBAL clheap_u32 *h, int all)
{
    clheap_u32 total = clheap_tier_settle_containers(h);
    clheap_u32 n = all || total < CLHEAP_TIER_SETTLE_LOOKS ? total : CLHEAP_TIER_SETTLE_LOOKS;
    clheap_tier_settle_range(h, all ? 0u : clheap_tier_settle_claim(h, n), n, 0u, 1u);
}

/* The last resort's settling: every container, if a free marked a block since the last
 * time (CLHEAP_PAGES_MARKED_WORD, cl/clheap_layout.h). The flags are hints: cleared,
 * then a full fence, then the scan; a mark whose flag store was seen before its OR is
 * left to the bounded settlers and clheap_heap_trim. */
static CLHEAP_INLINE int clheap_tier_take_marks(CLHEAP_GLOBAL clheap_u32 *h)
{
    clheap_tier_stop_keeping(h);
    int any = 0;
    for (clheap_u32 i = 0; i < CLHEAP_PAGES_USED_STRIPES; i++) {
        CLHEAP_GLOBAL clheap_u32 *flag = clheap_block_mark_flag(h, i * CLHEAP_PAGES_SEGMENT); /* stripe i's */
        if (clheap_load32(flag)) {
            clheap_store32(flag, 0u);
            any = 1;
        }
    }
    if (any)
        clheap_fence_full(); /* the flags cleared before the scan reads the marks */
    return any;
}
static CLHEAP_INLINE CLHEAP_COLD void clheap_tier_settle_marked(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (clheap_tier_take_marks(h))
        clheap_tier_settle(h, 1);
}

/* Every class's runs closed, if one was installed since the last time (CLHEAP_HDR_RUNS_OPEN). */
static CLHEAP_INLINE void clheap_tier_close_all(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (clheap_load32(h + CLHEAP_HDR_RUNS_OPEN))
        clheap_tier_close_runs(h, CLHEAP_MAX_CLASSES);
}

/* Whether a request's last resort can find nothing, from one round of independent
 * loads: no run open (CLHEAP_HDR_RUNS_OPEN, so clheap_tier_close_all gives nothing
 * back), no mark flag set (so clheap_tier_settle_marked settles nothing), fewer than m
 * free frames in the page tier (frames - U, P5), and for a small request of class c
 * (c < CLHEAP_MAX_CLASSES) no active block of c or, untyped, of a larger class (each
 * active bitmap's top container empty). Then the request returns NULL at once: what its
 * scans would conclude, under the same races (a free whose release it does not see yet
 * is concurrent with it), at the cost of one round of loads. Why: in a launch that asks
 * for more than the pool, every failing request ran the whole last resort, hundreds of
 * dependent loads, and such a launch took many times one that fits. */
static CLHEAP_INLINE CLHEAP_COLD int clheap_tier_nothing_for(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 m)
{
    if (clheap_load32(h + CLHEAP_HDR_RUNS_OPEN) || clheap_pages_have(h, m))
        return 0;
    for (clheap_u32 i = 0; i < CLHEAP_PAGES_USED_STRIPES; i++) /* each flag shares its line with a U stripe */
        if (clheap_load32(clheap_block_mark_flag(h, i * CLHEAP_PAGES_SEGMENT)))
            return 0;
    clheap_u32 last = c == CLHEAP_MAX_CLASSES ? c : h[CLHEAP_HDR_TIER_TYPED] ? c + 1u : h[CLHEAP_HDR_CLASS_COUNT];
    for (clheap_u32 d = c; d < last; d++)
        if (clheap_bm_any_set(h, CLHEAP_BM_ACTIVE(d)))
            return 0;
    return 1;
}

/* Frames of one piece of class c. */
static CLHEAP_INLINE clheap_u32 clheap_tier_piece_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    clheap_u32 frame_bytes = h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    return (h[CLHEAP_HDR_CLASS_BYTES + c] + frame_bytes - 1u) / frame_bytes;
}

/* The fewest free frames a request of class c could use: a piece, or in typed heaps a
 * block (clheap_tier_wants_pieces). */
static CLHEAP_INLINE clheap_u32 clheap_tier_least_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    return h[CLHEAP_HDR_TIER_TYPED] ? h[CLHEAP_HDR_CLASS_FRAMES + c] : clheap_tier_piece_frames(h, c);
}

/* Whether `want` requests of class c that found no block with a free slot take pieces,
 * large allocations of their own frames, rather than open a block: in a pool too small
 * for a run per hint slot of the class (host/heap_layout.c, plan_runs) or of at most
 * CLHEAP_TIER_PIECES_POOL_FRAMES frames, when their frames are under half of a block's,
 * and, where the class has no run at all, only if a piece is exactly its frames (no
 * byte of it wasted).
 * On split words (no hints, W3 of cl/clheap_port.h) only the pool's size says it is short
 * of runs: judged by the missing hints, every pool was, and in large pools on a GPU the
 * 1 - 16 KiB requests of large mixed-size launches took pieces, a page-tier take each,
 * and ran slower than with blocks (docs/performance.md, "Pieces on split words").
 * Why every class in small pools: the classes with a run per hint slot have herds too.
 * A launch's warps of one (class, hint slot) arrive while the first of them opens the
 * hint's run, and each other one found no block and opened its own (on the scheduled C11
 * core, test_stress's first burst opened hundreds of blocks of one or two objects each,
 * a sixth of the pool, and large requests got NULL; with pieces and the page tier's
 * look at its last break, few or none). Why not in larger pools: there a herd's blocks
 * are a small share of the pool, and pieces put a page-tier take and give-back on the
 * path of a warp that met a busy hint: in a large pool they made mixed small mallocs
 * many times slower, where fewer breaks at once (cl/clheap_pages.h) already remove the
 * first burst's NULLs.
 * Why the last rule: a class without runs has every request on this path, so pieces of
 * a frame for smaller objects were all it ever got, and a pool filled one request at a
 * time (PoCL: no warp batches) held 12.5% objects of 128 B, 50% of 512 B.
 * Why: on a fresh heap a launch's warps all arrive before any block is opened, and each
 * that falls back opens its own. On a GPU, a few hundred warps asking for half of a
 * small heap opened blocks of 32 or 64 KiB with a few objects each, filled the pool and
 * got hundreds of NULLs; with pieces for those classes only, the small classes still
 * opened hundreds of small blocks.
 * Why only there: pieces are a page take where one opened block serves the fallbacks
 * after it.
 * A piece that its object leaves more than half unused (a class under half a frame: one
 * small object a frame) only while the page tier has handed out less than
 * CLHEAP_TIER_PIECES_USED_PERCENT of the pool. Why: such pieces serve a fresh pool's
 * first burst (test_core_burst got NULLs without them), but in a pool kept mostly in use
 * whose requests keep falling back (clheap-kdtree at 20x its root's array, on a GPU:
 * runs of one block, soon used up) every small request took a frame of its own, and since
 * pieces open no block that later requests find, so did the next ones: NULLs with the
 * pool far from full, and larger trees built several times slower (docs/performance.md,
 * "Pieces in a pool in use").
 * Never in typed heaps (CLHEAP_HDR_TIER_TYPED): a piece is no slot of any block, so
 * parallel_do and device_do, which visit a class's blocks, would never meet it.
 * How: the requests that take pieces are one large allocation, taken through the large
 * path that every malloc has anyway, which they then split (clheap_tier_piece_of). A
 * piece path of its own in the warp's leader cost the warp-coalesced malloc registers,
 * and small mallocs got markedly slower without ever taking it; a page take per request
 * left some of a burst's requests NULL with memory free, the takes at the pool's low end
 * contended. */
static CLHEAP_INLINE int clheap_tier_wants_pieces(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 want)
{
    if (h[CLHEAP_HDR_TIER_TYPED])
        return 0; /* a piece is in no class's blocks: parallel_do and device_do would miss it */
    clheap_u32 hints = h[CLHEAP_HDR_CLASS_HINTS + c];
    /* Split words give no hints whatever the pool (W3): there only its size counts. */
    int short_of_runs = (CLHEAP_ATOMICS64 && hints < h[CLHEAP_HDR_HINT_SLOTS]) ||
                        h[CLHEAP_HDR_FRAME_COUNT] <= CLHEAP_TIER_PIECES_POOL_FRAMES;
    clheap_u32 bytes = h[CLHEAP_HDR_CLASS_BYTES + c], frame_bytes = h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    clheap_u32 frames = clheap_tier_piece_frames(h, c);
    return short_of_runs && 2u * want * frames < h[CLHEAP_HDR_CLASS_FRAMES + c] &&
           (hints || bytes % frame_bytes == 0u) &&
           (frames * frame_bytes <= 2u * bytes || clheap_tier_used_below(h, CLHEAP_TIER_PIECES_USED_PERCENT));
}

/* Makes frames [f, f + frames), taken from the page tier (after clheap_fence_acquire),
 * a large allocation whose pointer lies `offset` units into its first frame (0 but for
 * clheap_aligned_alloc, cl/clheap_resize.h, R1): owners, length and offset, then
 * clheap_fence_release, then the class. Returns the pointer's unit. */
static CLHEAP_INLINE clheap_u32 clheap_tier_mark_large_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 f, clheap_u32 frames,
                                                          clheap_u32 offset)
{
    for (clheap_u32 g = f; g < f + frames; g++)
        clheap_store32(clheap_block_header(h, g) + CLHEAP_BLOCK_WORD_OWNER, f);
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, f);
    clheap_store32(header + CLHEAP_BLOCK_WORD_ITER, frames);
    clheap_store32(header + CLHEAP_BLOCK_WORD_OFFSET, offset);
    clheap_fence_release(); /* length and offset before the class that makes it an allocation */
    clheap_store32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE);
    return h[CLHEAP_HDR_POOL_START] + f * h[CLHEAP_HDR_FRAME_UNITS] + offset;
}

static CLHEAP_INLINE clheap_u32 clheap_tier_mark_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 f, clheap_u32 frames)
{
    return clheap_tier_mark_large_at(h, f, frames, 0u);
}

/* Piece `index` of the large allocation at unit `base` taken for a group's pieces of
 * class c, `frames` frames each: the piece's frames become an allocation of their own.
 * Nobody else knows of the allocation yet, so rewriting its headers races with nobody
 * (on NVIDIA the warp sync after the take orders the taker's writes before these).
 * base 0 (no frames for them): 0, and each request goes on to clheap_tier_take_larger
 * as a lone one would. */
static CLHEAP_INLINE clheap_u32 clheap_tier_piece_of(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 base,
                                                     clheap_u32 index, clheap_u32 frames)
{
    if (!base)
        return 0u;
    return clheap_tier_mark_large(h, (base - h[CLHEAP_HDR_POOL_START]) / h[CLHEAP_HDR_FRAME_UNITS] + index * frames,
                                  frames);
}

/* Slots of class c when the run gave none: BlockAlloc's search, then (unless the
 * requests take pieces: CLHEAP_TIER_PIECES) its block opening; if they fail, tried again
 * after settling (clheap_tier_settle), then after closing the class's runs, and, with
 * `last` (a lone request: clheap_tier_malloc_first), once more after closing every
 * class's runs and settling every mark: the last resort's own class (the rest is
 * clheap_tier_take_from_larger). Why settle first: closing the runs that the class's
 * other requests are handing out sends them all to open new ones. Why the last resort's
 * try is here: compilers that inline every call (Mesa's rusticl) copied the block opening
 * and its page-tier take once per call site. CLHEAP_TIER_NOTHING if, before the second
 * try, nothing can serve the class (clheap_tier_nothing_for).
 * c CLHEAP_BLOCK_LARGE (CLHEAP_TIER_ONE_TAKE, see "One take"): `want` frames of a large
 * request, taken as clheap_tier_take_frames takes them (first alone; then after closing
 * every run and settling a share; then after settling every mark, and by the first
 * stretch long enough), through the same call of clheap_block_reserve_new. */
static CLHEAP_INLINE clheap_u32 clheap_tier_reserve_slow(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                         clheap_u32 want, clheap_u32 seed, clheap_u64 *got,
                                                         int last)
{
    clheap_u32 frame = CLHEAP_BM_FAIL, why; /* unread: TierAlloc counts a NULL where the request ends */
    int large = clheap_block_is_large(h, c);
    CLHEAP_NO_UNROLL
    for (clheap_u32 attempt = 0; attempt < (last && !large ? 4u : 3u) && frame == CLHEAP_BM_FAIL; attempt++) {
        clheap_u32 s = seed ^ 0x68E31DA4u * attempt;
        if (attempt == 1u && clheap_tier_nothing_for(h, c, large ? want : clheap_tier_least_frames(h, c)))
            return CLHEAP_TIER_NOTHING;
#if CLHEAP_TIER_ONE_TAKE
        if (attempt == 2u && !large)
            clheap_tier_close_runs(h, c);
        if (attempt == 3u || (large && attempt == 1u))
            clheap_tier_close_all(h); /* large: every class's runs */
        /* A share (frees not yet settled may have left slots or frames), or every mark
         * (the last resort; large, the last attempt): one call, as in
         * clheap_tier_take_frames. */
        if (attempt == 1u || ((attempt == 3u || (large && attempt == 2u)) && clheap_tier_take_marks(h)))
            clheap_tier_settle(h, attempt != 1u);
#else
        if (attempt == 1u)
            clheap_tier_settle(h, 0); /* frees not yet settled may have left slots or frames */
        if (attempt == 2u)
            clheap_tier_close_runs(h, c);
        if (attempt == 3u) {
            clheap_tier_close_all(h);
            clheap_tier_settle_marked(h);
        }
#endif
        frame = large ? CLHEAP_BM_FAIL : clheap_block_reserve_active(h, c, want, s, got);
        if (frame == CLHEAP_BM_FAIL && !attempt && !large && clheap_tier_wants_pieces(h, c, want))
            return CLHEAP_TIER_PIECES;
        if (frame == CLHEAP_BM_FAIL &&
            (attempt < 3u || clheap_pages_have(h, large ? want : h[CLHEAP_HDR_CLASS_FRAMES + c])))
            frame = clheap_block_reserve_new(h, c, want, s, got, &why);
        if (frame == CLHEAP_BM_FAIL && large && attempt == 2u) { /* a stretch the placed ways miss */
            frame = clheap_pages_take_stretch(h, want);
            if (frame != CLHEAP_BM_FAIL)
                clheap_fence_acquire(); /* the frames' last owner released them after its header writes */
        }
    }
    return frame;
}

/* A run a request opens (see clheap_tier_take_begin): its first frame (FAIL if none),
 * its blocks, the hint it is for (NULL: the request's own run), the slots the request
 * still needs, and what it is: CLHEAP_TIER_FRESH (frames just taken: its headers are to
 * be written), CLHEAP_TIER_SPARE (fresh, for the hint's spare), CLHEAP_TIER_READY (the
 * hint's spare, taken: headers written and listed by its opener) or CLHEAP_TIER_PARKED (a
 * recycled run from a track: listed, its blocks held until the request's lanes put them
 * back in their class, clheap_tier_prepare). */
#define CLHEAP_TIER_FRESH 0u
#define CLHEAP_TIER_SPARE 1u
#define CLHEAP_TIER_READY 2u
#define CLHEAP_TIER_PARKED 3u
typedef struct {
    CLHEAP_GLOBAL clheap_u64 *hint;
    clheap_u32 run, blocks, need, kind, anchor; /* anchor: its headers' (clheap_tier_claim_track) */
} clheap_tier_opening;

/* Whether a spare may be opened: the spare is empty and the page tier has handed out
 * less than half of the pool (see Spares at the top of this file). */
static CLHEAP_INLINE int clheap_tier_spare_wanted(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u64 *hint)
{
    return !clheap_load32(clheap_tier_spare_of(h, hint)) && clheap_pages_used(h) < h[CLHEAP_HDR_FRAME_COUNT] / 2u;
}

/* n requests of class c served together (a warp's, on NVIDIA), in steps around the
 * writing of the headers of the run it may open (clheap_block_write_headers, then
 * clheap_fence_release by every writer). Begin: slots from the hint's run, and the frames
 * of a run to open: the hint's next run if this request's add crossed the end (what the
 * old run lacked comes from the new one's first slots, counted in the hint it
 * installs), or, if more than one block holds, a run of its own (its unwanted slots
 * freed at once, so others find its blocks). Finish, first part: list the run, install
 * it or free what is not wanted; second part: one block for what is still missing (see
 * clheap_tier_grant). One call site opens runs (see CLHEAP_NO_UNROLL).
 * Where a hint's next run goes: first in the segment containers from where its last run
 * ended (CLHEAP_TIER_NEAR_LOOKS, first fit), then as any small-tier take. Why: every
 * opener descended to the pool's low end, where the launch's other openers and blocks
 * were taking too (most of the takes' bit claims failed, and a take kept an opener's
 * hint busy all the while); a hint that follows its own runs meets few others there.
 * Why the crossing request opens what the old run lacked: before, it opened a block for
 * them, a second page-tier take on the launch's critical path; and while a hint's opener
 * works the other warps of its group fall back, where for classes of 16 or 4 slots per
 * block (4 KiB, 16 KiB) one block served half or an eighth of a warp and the rest went
 * alone, one malloc per work-item (an order of magnitude slower).
 * Why the headers are a step of their own: a run of 1024 frames is 1024 owner words; one
 * lane writing them kept the hint's other requests falling back for as long. */
static CLHEAP_INLINE void clheap_tier_take_begin(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 n,
                                                 clheap_u32 seed, clheap_tier_grant *g, clheap_tier_opening *o)
{
    g->run = g->first = g->k = g->run2 = g->k2 = 0u; /* defined even when the run gave nothing */
    g->frame = CLHEAP_BM_FAIL;
    g->got = 0;
    int ahead;
    o->hint = clheap_tier_run_take(h, c, n, g, &ahead);
    o->kind = ahead ? CLHEAP_TIER_SPARE : CLHEAP_TIER_FRESH;
    if (ahead && !clheap_tier_spare_wanted(h, o->hint))
        o->hint = 0; /* the spare is there, or the pool keeps its frames */
    /* a parked run first: a spare opened ahead (CLHEAP_TIER_SPARE_AT) waits, it holds no
     * block emptied */
    o->anchor = 0u;
    clheap_u32 ready = o->hint && !ahead ? clheap_tier_take_parked(h, o->hint, c, &o->anchor) : CLHEAP_BM_FAIL;
    if (ready != CLHEAP_BM_FAIL)
        o->kind = CLHEAP_TIER_PARKED;
    else if (o->hint && !ahead && (ready = clheap_tier_take_spare(h, o->hint)) != CLHEAP_BM_FAIL)
        o->kind = CLHEAP_TIER_READY;
    clheap_u32 capacity = h[CLHEAP_HDR_CLASS_CAPACITY + c];
    o->need = n - g->k;
    /* need > 1 first: a class holds at least one slot a block, and a lone request (n = 1,
     * a constant where clheap_tier_malloc_first calls) lets the compiler drop this take */
    o->blocks = o->hint                                ? h[CLHEAP_HDR_CLASS_RUN + c]
                : o->need > 1u && o->need > capacity ? (o->need + capacity - 1u) / capacity
                                                     : 0u;
    clheap_u32 near = o->hint && g->k ? g->run + h[CLHEAP_HDR_CLASS_RUN + c] * h[CLHEAP_HDR_CLASS_FRAMES + c]
                                      : CLHEAP_BM_FAIL;
    o->run = ready != CLHEAP_BM_FAIL ? ready
             : o->blocks ? clheap_pages_take_near(h, o->blocks * h[CLHEAP_HDR_CLASS_FRAMES + c], seed, 1, near,
                                                  CLHEAP_TIER_NEAR_LOOKS)
                         : CLHEAP_BM_FAIL;
    if (o->run != CLHEAP_BM_FAIL && ready == CLHEAP_BM_FAIL)
        clheap_fence_acquire(); /* the frames' last owner released them after its header writes */
    if (o->run != CLHEAP_BM_FAIL && o->kind == CLHEAP_TIER_FRESH)
        o->anchor = clheap_tier_claim_track(h, o->hint, o->run);
}

/* A lane's share (blocks or frames index, index + stride, ...) of what an opening needs
 * before its install: a fresh run's headers, or a parked run's blocks back in their class. */
static CLHEAP_INLINE void clheap_tier_prepare(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, const clheap_tier_opening *o,
                                              clheap_u32 index, clheap_u32 stride)
{
    if (o->kind == CLHEAP_TIER_PARKED)
        clheap_tier_unhold(h, o->run, c, index, stride);
    else
        clheap_block_write_headers(h, o->run, c, o->blocks, index, stride, 1, o->anchor);
}

/* Finish's parts: CLHEAP_TIER_INSTALL, CLHEAP_TIER_FALL_BACK, or both. On NVIDIA the
 * leaders of a warp run them with a warp sync between (clheap_tier_malloc_warp). Why:
 * with independent thread scheduling the warp ran one leader's fallback search before
 * another leader's install, and the hint stayed busy for as long (the sync makes the
 * install come several times sooner after the headers). */
#define CLHEAP_TIER_INSTALL 1
#define CLHEAP_TIER_FALL_BACK 2
#define CLHEAP_TIER_LAST_RESORT 4 /* the fallback's last try too (clheap_tier_reserve_slow) */
static CLHEAP_INLINE void clheap_tier_take_finish(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 seed,
                                                  clheap_tier_grant *g, const clheap_tier_opening *o, int parts)
{
    if ((parts & CLHEAP_TIER_INSTALL) && o->blocks) {
        clheap_u32 total = o->blocks * h[CLHEAP_HDR_CLASS_CAPACITY + c];
        clheap_u32 keep = o->need < total ? o->need : total; /* a warp may want more */
        /* Listed with its slots held (T2): only the hint, or this request, hands them out. */
        if (o->run != CLHEAP_BM_FAIL && o->kind < CLHEAP_TIER_READY)
            clheap_block_publish(h, o->run, c, o->blocks, 0, 0);
        if (o->hint && o->kind == CLHEAP_TIER_SPARE) {
            if (o->run != CLHEAP_BM_FAIL &&
                clheap_cas32(clheap_tier_spare_of(h, o->hint), 0u, o->run + 1u) != 0u)
                clheap_tier_release_whole(h, o->run, c); /* another spare came first */
            else if (o->run != CLHEAP_BM_FAIL)
                clheap_store32(h + CLHEAP_HDR_RUNS_OPEN, 1u); /* a spare for clheap_tier_close_all */
        }
        else if (o->hint) { /* a run used up at once is not installed: the next request opens one */
            int installs = o->run != CLHEAP_BM_FAIL && keep < total;
            /* no frames: a run's worth (total: a hint's run is RUN(c) blocks) of requests
             * go to the fallback before the next try */
            clheap_u64 wait = o->run == CLHEAP_BM_FAIL ? CLHEAP_TIER_RETRY_AT - total : 0u;
            if (o->kind == CLHEAP_TIER_READY) { /* a spare opened ahead: tracked from here */
                clheap_u32 anchor = clheap_tier_claim_track(h, o->hint, o->run);
                if (anchor)
                    clheap_tier_anchor_run(h, o->run, c, anchor);
            }
#if CLHEAP_ATOMICS64 /* else nothing is parked */
            if (o->kind == CLHEAP_TIER_PARKED) { /* its blocks back in their class: tracked afresh */
                clheap_fence_release(); /* the class stores before a stealer can act on the track */
                clheap_add64(clheap_tier_track_at(h, o->anchor - 1u),
                             0u - (clheap_u64)(h[CLHEAP_HDR_CLASS_RUN + c] + 1u));
            }
#endif
            if (o->kind >= CLHEAP_TIER_READY)
                clheap_fence_release(); /* the spare's headers, acquired in take_begin, before the run is handed out */
            clheap_xchg64(o->hint, installs ? ((clheap_u64)(o->run + 1u) << 32) | keep : wait);
            if (installs)
                clheap_store32(h + CLHEAP_HDR_RUNS_OPEN, 1u); /* a hint for clheap_tier_close_all */
        }
        else if (o->run != CLHEAP_BM_FAIL && keep < total)
            clheap_tier_release_run(h, o->run, c, keep, o->blocks, CLHEAP_TIER_RELEASE_LATER);
        if (o->run != CLHEAP_BM_FAIL && o->kind != CLHEAP_TIER_SPARE) {
            g->run2 = o->run;
            g->k2 = keep;
        }
    }
    clheap_u32 missing = o->need - g->k2;
    if ((parts & CLHEAP_TIER_FALL_BACK) && missing)
        g->frame = clheap_tier_reserve_slow(h, c, missing, seed, &g->got, (parts & CLHEAP_TIER_LAST_RESORT) != 0);
}

/* Both steps by one work-item, finish's `parts` (CLHEAP_TIER_LAST_RESORT: a lone request). */
static CLHEAP_INLINE void clheap_tier_take_many(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 n,
                                                clheap_u32 seed, clheap_tier_grant *g, int parts)
{
    clheap_tier_opening o;
    clheap_tier_take_begin(h, c, n, seed, g, &o);
    int fresh = o.run != CLHEAP_BM_FAIL && o.kind < CLHEAP_TIER_READY;
    if (fresh || o.kind == CLHEAP_TIER_PARKED) {
        clheap_tier_prepare(h, c, &o, 0u, 1u);
        clheap_fence_release(); /* headers before the blocks are listed or their slots handed out */
    }
    clheap_tier_take_finish(h, c, seed, g, &o, parts);
    if (fresh && clheap_tier_openers_settle(h)) {
        clheap_u32 share = clheap_tier_settle_share(h, o.blocks * h[CLHEAP_HDR_CLASS_FRAMES + c]);
        clheap_tier_settle_range(h, clheap_tier_settle_claim(h, share), share, 0u, 1u);
    }
}

/* The unit g gives the request of rank `rank`, or 0 if it goes alone. */
static CLHEAP_INLINE clheap_u32 clheap_tier_grant_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                       const clheap_tier_grant *g, clheap_u32 rank)
{
    if (rank < g->k)
        return clheap_tier_run_unit(h, g->run, c, g->first + rank);
    rank -= g->k;
    if (rank < g->k2)
        return clheap_tier_run_unit(h, g->run2, c, rank);
    rank -= g->k2;
    if (g->frame >= CLHEAP_TIER_NOTHING || rank >= clheap_popcount64(g->got))
        return 0u;
    return clheap_slot_unit(h, g->frame, c, clheap_nth_bit(g->got, rank));
}

/* Frames a request of `bytes` needs, or 0 if it is 0 or more than the pool. The pool is
 * compared first: rounding up a size near the type's maximum would wrap. */
static CLHEAP_INLINE clheap_u32 clheap_tier_frames_for(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    clheap_size frame_bytes = (clheap_size)h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    if (!bytes || bytes > (clheap_size)h[CLHEAP_HDR_FRAME_COUNT] * frame_bytes)
        return 0u;
    return (clheap_u32)((bytes - 1u) / frame_bytes + 1u);
}

/* `frames` frames (1 up to the pool's) from the page tier for a large allocation, after
 * clheap_fence_acquire: the first one, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_tier_take_frames(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frames, clheap_u32 seed)
{
    clheap_u32 f = CLHEAP_BM_FAIL;
    CLHEAP_NO_UNROLL
    for (clheap_u32 attempt = 0; attempt < 3u && f == CLHEAP_BM_FAIL; attempt++) {
        if (attempt == 1u && clheap_tier_nothing_for(h, CLHEAP_MAX_CLASSES, frames))
            return CLHEAP_BM_FAIL;
        if (attempt == 1u) /* the runs' unused slots and unsettled blocks may hold the frames it needs */
            clheap_tier_close_all(h);
        /* Attempt 1 settles a share of the containers, 2 every one (clheap_tier_settle_marked: a
         * scan of the whole bitmap, so only on the way to a NULL), at one call: a compiler that
         * inlines every call (Mesa's rusticl) copied the settling once per site. */
        if (attempt == 1u || (attempt == 2u && clheap_tier_take_marks(h)))
            clheap_tier_settle(h, attempt == 2u);
        f = clheap_pages_take(h, frames, seed ^ 0x68E31DA4u * attempt, 0);
        if (attempt == 2u && f == CLHEAP_BM_FAIL) /* a stretch the placed ways miss (cl/clheap_pages.h) */
            f = clheap_pages_take_stretch(h, frames);
    }
    if (f != CLHEAP_BM_FAIL)
        clheap_fence_acquire();
    return f;
}

/* The unit of a large allocation of `bytes` (not 0 and at most the pool), or 0. */
static CLHEAP_INLINE clheap_u32 clheap_tier_take_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                       clheap_u32 seed)
{
    clheap_u32 frames = clheap_tier_frames_for(h, bytes), f = clheap_tier_take_frames(h, frames, seed);
    return f == CLHEAP_BM_FAIL ? 0u : clheap_tier_mark_large(h, f, frames);
}

/* The last resort's end, for a small request of class c that its class could not serve:
 * a free slot of a larger class's active blocks, unless classes are typed (when nothing
 * can serve c, clheap_tier_nothing_for, their bitmaps are empty: a load each). Counts the
 * NULL if none and `count`. */
static CLHEAP_INLINE CLHEAP_COLD clheap_u32 clheap_tier_take_from_larger(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                                       clheap_u32 seed, int count)
{
    clheap_u64 got = 0;
    clheap_u32 frame = CLHEAP_BM_FAIL, d = c;
    clheap_u32 last = h[CLHEAP_HDR_TIER_TYPED] ? c : h[CLHEAP_HDR_CLASS_COUNT] - 1u;
    CLHEAP_NO_UNROLL
    while (frame == CLHEAP_BM_FAIL && d < last)
        frame = clheap_block_reserve_active(h, ++d, 1u, seed, &got);
    if (frame == CLHEAP_BM_FAIL) {
        if (count)
            clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    return clheap_slot_unit(h, frame, d, clheap_ctz64(got));
}

/* The last resort of a small request of class c (see the top of this file): every
 * class's runs closed, its own class once more (a block may open now), then a free slot
 * of a larger class's active blocks, unless classes are typed. Counts the NULL if none
 * and `count` (a warp counts its lanes' NULLs with one add: clheap_tier_malloc_warp).
 * Only requests about to fail come here, so the fast paths pay nothing. */
static CLHEAP_INLINE CLHEAP_COLD clheap_u32 clheap_tier_take_larger(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                                  clheap_u32 seed, int count)
{
    clheap_u64 got = 0;
    clheap_u32 why;
    if (clheap_tier_nothing_for(h, c, clheap_tier_least_frames(h, c))) {
        if (count)
            clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    clheap_tier_close_all(h);
    clheap_tier_settle_marked(h);
    clheap_u32 frame = clheap_block_reserve_active(h, c, 1u, seed, &got);
    if (frame == CLHEAP_BM_FAIL && clheap_pages_have(h, h[CLHEAP_HDR_CLASS_FRAMES + c]))
        frame = clheap_block_reserve_new(h, c, 1u, seed, &got, &why);
    return frame != CLHEAP_BM_FAIL ? clheap_slot_unit(h, frame, c, clheap_ctz64(got))
                                   : clheap_tier_take_from_larger(h, c, seed, count);
}

/* A large request (no class: above the last class, or 0 B) alone: frames for it, or 0
 * (counted as a bad size, or out of memory unless `quiet`). */
static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                         clheap_u32 seed, int quiet)
{
    if (!clheap_tier_frames_for(h, bytes)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 unit = clheap_tier_take_large(h, bytes, seed);
    if (!unit && !quiet)
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
    return unit;
}

/* One request, all but the last resort: 0 for a small request of class c that must go
 * on to clheap_tier_take_larger (which counts its NULL), or with `last` all but the
 * last resort's larger classes (clheap_tier_take_from_larger). `large`: it goes straight
 * to the large path, whatever its size, and a failure is not counted (the pieces of a
 * group, see clheap_tier_wants_pieces: each goes on to the last resort where it is
 * split, clheap_tier_piece_of). One request alone that should take a piece is its own.
 * Why the warp-coalesced malloc keeps the last resort to itself: it has two ways to it
 * (this and the pieces), and inlined at both it cost registers on the fast path. Why the
 * piece and the large request share one call of clheap_tier_malloc_large, and a lone
 * request's own class is tried last inside clheap_tier_reserve_slow: compilers that
 * inline every call (Mesa's rusticl) copied the page tier's whole take once per site.
 * With CLHEAP_TIER_ONE_TAKE the large request's frames come through the fallback's call
 * (see "One take" at the top of this file). */
#if CLHEAP_TIER_ONE_TAKE
static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_first(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                         clheap_u32 seed, int large, int last)
{
    clheap_u32 c = bytes && !large ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    clheap_u32 m = c == CLHEAP_MAX_CLASSES ? clheap_tier_frames_for(h, bytes) : 0u;
    if (c == CLHEAP_MAX_CLASSES && !m) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    if (c != CLHEAP_MAX_CLASSES) { /* the hint's run, or one this request opens */
        clheap_tier_grant g;
        clheap_tier_take_many(h, c, 1u, seed, &g, CLHEAP_TIER_INSTALL);
        if (g.k || g.k2)
            return clheap_tier_grant_unit(h, c, &g, 0u);
    }
    /* The class's fallback, or the frames of a large request or of a piece: one call. */
    CLHEAP_NO_UNROLL
    for (int pass = 0; pass < 2; pass++) {
        clheap_u64 got = 0;
        clheap_u32 frame = clheap_tier_reserve_slow(h, c, c == CLHEAP_MAX_CLASSES ? m : 1u, seed, &got, last);
        if (c != CLHEAP_MAX_CLASSES && frame == CLHEAP_TIER_PIECES) {
            /* Its own piece, uncounted: a class's size (at most 32 frames) is never more
             * than the pool (whole 64-frame segments). */
            c = CLHEAP_MAX_CLASSES;
            m = clheap_tier_frames_for(h, bytes);
            large = 1;
            continue;
        }
        if (c != CLHEAP_MAX_CLASSES)
            return frame < CLHEAP_TIER_NOTHING ? clheap_slot_unit(h, frame, c, clheap_ctz64(got)) : 0u;
        if (frame < CLHEAP_TIER_NOTHING)
            return clheap_tier_mark_large(h, frame, m);
        if (!large)
            clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    return 0u;
}
#else
static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_first(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                         clheap_u32 seed, int large, int last)
{
    clheap_u32 c = bytes && !large ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    if (c != CLHEAP_MAX_CLASSES) {
        clheap_tier_grant g;
        clheap_tier_take_many(h, c, 1u, seed, &g,
                              CLHEAP_TIER_INSTALL | CLHEAP_TIER_FALL_BACK | (last ? CLHEAP_TIER_LAST_RESORT : 0));
        if (g.frame != CLHEAP_TIER_PIECES)
            return clheap_tier_grant_unit(h, c, &g, 0u);
        /* Its own piece: frames, uncounted. A class's size (at most 32 frames) always
         * passes the large path's size check (the pool is whole 64-frame segments). */
        large = 1;
    }
    return clheap_tier_malloc_large(h, bytes, seed, large); /* its one site: see above */
}
#endif

static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                        clheap_u32 seed)
{
    clheap_u32 unit = clheap_tier_malloc_first(h, bytes, seed, 0, 1);
    if (unit || !bytes) /* the class is looked up again only on the way to a NULL */
        return unit;
    clheap_u32 c = clheap_class_for(h, bytes); /* its class's last try was malloc_first's */
    return c == CLHEAP_MAX_CLASSES ? 0u : clheap_tier_take_from_larger(h, c, seed, 1);
}

/* Frees a large allocation whose first frame is f (unit is where the pointer points). */
static CLHEAP_INLINE void clheap_tier_free_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 f)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, f);
    if (unit != h[CLHEAP_HDR_POOL_START] + f * h[CLHEAP_HDR_FRAME_UNITS] + clheap_load32(header + CLHEAP_BLOCK_WORD_OFFSET)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return;
    }
    if (clheap_cas32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE, 0u) != CLHEAP_TIER_LARGE) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
        return;
    }
    /* The length of the allocation the CAS took, read after it: a length read before
     * could be a freed one's that the frames held earlier, and a racing double free then
     * released its successor's neighbours too. */
    clheap_fence_acquire();
    clheap_u32 length = clheap_load32(header + CLHEAP_BLOCK_WORD_ITER);
    clheap_store64(clheap_block_iter_bits(h, f), 0); /* length and offset */
    clheap_fence_release(); /* the header is a free frame's before the frames are free */
    clheap_pages_release(h, f, length);
}

static CLHEAP_INLINE void clheap_tier_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    clheap_u32 frame, cls, slot, incarnation;
    if (!ptr)
        return;
    clheap_u32 unit = clheap_frame_locate(h, ptr, &frame, &cls, &incarnation);
    if (!unit)
        return;
    if (cls == CLHEAP_TIER_LARGE)
        clheap_tier_free_large(h, unit, frame);
    else if (clheap_block_slot_in(h, unit, frame, cls, &slot))
        clheap_block_free_slot(h, frame, cls - 1u, slot, incarnation);
}

/* Initialisation of the bitmap kinds (BitmapAlloc, BlockAlloc, TierAlloc), item i of
 * max(containers, frames): container i of every level of every bitmap, then frame i's
 * header. Bitmap 0 (free slots or frames) starts full, class bitmaps empty, TierAlloc's
 * page tier with its whole segments free. One work-item per item on the device
 * (clheap_init_bitmaps); the host build of the core loops over them. */
static CLHEAP_INLINE void clheap_bitmap_kinds_init_item(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 bitmap_count,
                                                        clheap_u32 i)
{
    clheap_u32 kind = h[CLHEAP_HDR_KIND];
    clheap_u32 class_bitmaps = kind == CLHEAP_KIND_BITMAP ? 0u : 2u * h[CLHEAP_HDR_CLASS_COUNT];
    for (clheap_u32 b = 0; b < bitmap_count; b++) {
        if (kind == CLHEAP_KIND_TIER && (b == 0u || b > class_bitmaps)) {
            clheap_pages_init_container(h, b ? b - class_bitmaps : 0u, i);
            continue;
        }
        clheap_bm_init_container(h, CLHEAP_BM_DESC(b), i, b == 0u); /* nothing past its containers */
    }
    if (kind != CLHEAP_KIND_BITMAP)
        clheap_blocks_init_frame(h, i);
}

/* Growth of the bitmap kinds (clheap_heap_grow), item i of max(containers, frames,
 * hints), on the grown heap h whose header already has the new layout's words
 * (host/heap_layout.c, clheap_layout_plan_growth), reading the old heap's bitmaps and
 * block headers, which sat where the pool now extends. Container i of every level of
 * every bitmap keeps its old bits, and the new items start as at initialisation: free
 * (bitmap 0 of BitmapAlloc and BlockAlloc; TierAlloc's whole segments, the host keeping
 * both sizes whole segments), in no class. Frame i's header is copied or, for a new
 * frame, written free. TierAlloc: hint i is cleared; its runs were closed first
 * (clheap_close_runs), so what a hint still names is used up and holds nothing, and a
 * run's length may change with the pool's. One work-item per item (clheap_grow); the
 * host build of the core loops over them. */
static CLHEAP_INLINE void clheap_bitmap_kinds_grow_item(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *old,
                                                        clheap_u32 i)
{
    clheap_u32 kind = h[CLHEAP_HDR_KIND];
    clheap_u32 class_bitmaps = kind == CLHEAP_KIND_BITMAP ? 0u : 2u * h[CLHEAP_HDR_CLASS_COUNT];
    clheap_u32 count = 1u + class_bitmaps + (kind == CLHEAP_KIND_TIER ? (clheap_u32)CLHEAP_PAGE_BITMAPS : 0u);
    for (clheap_u32 b = 0; b < count; b++) {
        clheap_u32 desc = CLHEAP_BM_DESC(b);
        int starts_free = kind == CLHEAP_KIND_TIER ? b == class_bitmaps + 1u : b == 0u; /* W, not the marks */
        clheap_u32 lo = old[desc + CLHEAP_BM_BITS], hi = starts_free ? h[desc + CLHEAP_BM_BITS] : lo;
        clheap_bm_grow_container(h, old, desc, i, lo, hi);
    }
    if (kind == CLHEAP_KIND_BITMAP)
        return;
    if (i < old[CLHEAP_HDR_FRAME_COUNT]) {
        CLHEAP_GLOBAL clheap_u32 *from = clheap_block_header(old, i), *to = clheap_block_header(h, i);
        for (clheap_u32 w = 0; w < CLHEAP_BLOCK_HEADER_UNITS * 4u; w++)
            clheap_store32(to + w, clheap_load32(from + w));
    } else {
        clheap_blocks_init_frame(h, i);
    }
    if (kind == CLHEAP_KIND_TIER && i < h[CLHEAP_HDR_CLASS_COUNT] * h[CLHEAP_HDR_HINT_SLOTS])
        clheap_store64(clheap_tier_hint_at(h, i / h[CLHEAP_HDR_HINT_SLOTS], i % h[CLHEAP_HDR_HINT_SLOTS]), 0);
}

#endif
