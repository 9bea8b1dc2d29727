/* Bitmap allocators over hierarchical bitmaps (cl/clheap_bitmap.h):
 *
 * BitmapAlloc: the pool is slots of one size (chosen at heap creation); a bitmap marks
 * free slots; malloc finds-and-clears a bit, free sets it (double frees are seen).
 *
 * Block allocator (DynaSOAr, Springer & Masuhara 2019, sec. 3): the pool is frames of a
 * fixed size; a block of size class c takes FRAMES(c) contiguous frames (inside one
 * 64-bit container of the free-frame bitmap, so one CAS takes them all) and holds
 * CAPACITY(c) <= 64 slots of the class's size (<= 32 on split words, all in the low half
 * of the allocation word, whose high half stays all ones: cl/clheap_port.h, W2). Per class, an allocated-block bitmap lists
 * its blocks (parallel_do enumerates them) and an active-block bitmap lists those not
 * full (malloc's fast path). Per frame, a header at a fixed offset holds the class, the
 * block's first frame, the allocation bitmap and the iteration bitmap.
 *
 *   malloc  fast path: pick an active block of the class (bitmap rotation by work-item
 *           and retry), reserve a free slot with one atomic OR; if that filled the
 *           block, deactivate it; then re-read the class and roll back if the block was
 *           reclaimed and reused for another class meanwhile (DynaSOAr appendix A.3).
 *           After CLHEAP_BLOCK_FAST_TRIES misses: slow path, take frames and initialise a
 *           block (class first, fence, then the allocation bitmap).
 *   free    clear the slot's bit; if the block was full (and is not empty now), activate
 *           it; if it is now empty, invalidate it (set every slot bit; roll back if a slot
 *           was taken meanwhile) and return its frames.
 * No step waits for another work-item. DynaSOAr's set/clear spin in two places; here:
 *   - deactivating a full block is followed by a fence and a re-read of its allocation
 *     bitmap, and the block is re-activated if a free landed meanwhile (a free that
 *     makes a full block not full fences before it activates it), so at kernel end every
 *     allocated block that is not full is active (a full block may still be marked
 *     active; malloc skips it and clears the mark);
 *   - bitmap hierarchy updates follow cl/clheap_bitmap.h's rules. */
#ifndef CLHEAP_BLOCKS_H
#define CLHEAP_BLOCKS_H

#include "clheap_pages.h"

/* Happens-before, each edge and the fence that gives it (device atomics are relaxed;
 * the C11 build models exactly these fences, cl/clheap_port.h, and test_core_threads
 * writes the payload with plain stores, so ThreadSanitizer reports a free or malloc path
 * that lacks one; it did for BitmapAlloc's malloc and TierAlloc's run handout, whose
 * ordering is the address dependency named by clheap_fence_dependency):
 *   - opening (clheap_block_new): the frames' owners, the class and the iteration
 *     bitmap are written (of every block of a batch), clheap_fence_release, then the
 *     allocation bitmaps that make slots reservable, clheap_fence_release, then the
 *     blocks are listed (and a batch's others activated and marked). A reserver's OR
 *     on the allocation bitmap is followed by clheap_fence_acquire and a re-read of the
 *     class: it sees this block's class or a later one, and rolls back if it changed.
 *   - invalidation: the OR that sets every slot bit is the point after which no slot can
 *     be reserved; the class is then stored 0, clheap_fence_release, and the frames go
 *     back to the free bitmap or the page tier, whose next taker uses
 *     clheap_fence_acquire before writing headers, so its writes follow ours.
 *   - free: the user's last writes to the slot, clheap_fence_release, then the AND that
 *     clears its bit (on NVIDIA the warp's lanes reach the leader's fence through the
 *     warp sync before it); the next reserver's OR reads that AND's result (the same
 *     word), so its user's writes land after ours. Without the fence a write still in
 *     flight from the freeing work-item could land on the next owner's data.
 *
 * Incarnations: a racing double free must not free a slot of the block that reuses the
 * frames. Two frees of slot s: the second reads the block's class, the first's AND empties
 * the block, which is reclaimed and may reopen; the second's AND would then land on a
 * free frame or on a new block. Each block's first frame counts the blocks reclaimed
 * there (CLHEAP_BLOCK_WORD_INCARNATION), and:
 *   I1  a free reads the count with the class (clheap_frame_locate) and again just before
 *       its AND, with its clheap_fence_release between that read and the AND (a release
 *       orders earlier loads before later writes; after the fence, a GPU performed the
 *       read after the AND, saw the bump of a reclaim that the free's own AND had let
 *       another work-item make, and refused a legitimate free): a changed count means
 *       the block it named was reclaimed before its AND, so it ORs the bits its AND
 *       cleared back, counts a double free and does nothing else. A free of a live slot
 *       never sees a change: its block cannot empty, so neither be reclaimed, before its
 *       own AND;
 *   I2  the reclaimer, after its invalidation (every slot taken), stores the class 0 and
 *       bumps the count, clheap_fence_release, then ORs all ones in again (the seal): a
 *       stale AND that came between the two is repaired. Legitimate frees all came
 *       before the invalidation, which found their bits clear, and reservers and
 *       rollbacks only clear bits they set;
 *   I3  the frames' next owner overwrites the word: block_new stores its free slots
 *       after its class (as before), a run's opener ORs all ones in before it writes the
 *       class (clheap_block_write_headers; runs never wrote the word), so a stale AND
 *       that hit the free frame is repaired.
 *   A stale AND before the seal sees every slot taken, so with two slots a block or more
 *   (host/heap_layout.c) it can only take its block for a full one and make it findable,
 *   which searchers repair. The bump and the ORs are atomics whose results nobody waits
 *   for, so a repair there is not counted.
 * Limits: a stale free whose second read comes before the reclaim and whose AND comes
 * after a block reopened there clears a bit of the new block (a window of one AND); a
 * stale reserver that reserves that bit before the free ORs it back, or the bit a stale
 * AND cleared on a free frame before block_new's store, keeps it. A stale free whose
 * pointer names a slot live in a new block of the same class is a free of that slot,
 * which no heap can tell from its owner's. Closing the window needs the free's atomic to
 * name the block's life: a tag in the allocation word, which leaves fewer than 64 slots
 * a block, and a CAS for the AND. Both were built and measured (docs/performance.md, "A
 * tagged allocation word"); they cost more speed than this window of a user's bug is
 * worth, so it stays. */

/* ---- BitmapAlloc ------------------------------------------------------------------ */

static CLHEAP_INLINE clheap_u32 clheap_bitmap_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                          clheap_u32 seed)
{
    clheap_u32 slot_units = h[CLHEAP_HDR_SLOT_UNITS];
    if (bytes == 0 || bytes > (clheap_size)slot_units * CLHEAP_UNIT) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 slot = clheap_bm_try_find_and_clear(h, CLHEAP_BM_FREE, seed);
    /* Random descents lose races when many work-items search at once (under a random
     * stress with at most half of the slots in use they answered NULL, called out of
     * memory): sweep containers in order before giving up, and call a failure while the
     * top level still shows free slots contended. */
    if (slot == CLHEAP_BM_FAIL)
        slot = clheap_bm_sweep(h, CLHEAP_BM_FREE, seed ^ 0x5bd1e995u, CLHEAP_BITMAP_SWEEP, 1);
    if (slot == CLHEAP_BM_FAIL) {
        clheap_count_error(h, clheap_bm_any_set(h, CLHEAP_BM_FREE) ? CLHEAP_HDR_ERR_CONTENDED
                                                                   : CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    clheap_fence_dependency(); /* the caller's writes follow the clear that won the slot */
    return h[CLHEAP_HDR_POOL_START] + slot * slot_units;
}

static CLHEAP_INLINE void clheap_bitmap_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    if (!ptr)
        return;
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], slot_units = h[CLHEAP_HDR_SLOT_UNITS];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first, first + h[CLHEAP_BM_FREE + CLHEAP_BM_BITS] * slot_units);
    if (!unit)
        return;
    if ((unit - first) % slot_units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return;
    }
    clheap_fence_release(); /* the slot's last writes before it can be taken again */
    if (!clheap_bm_try_set(h, CLHEAP_BM_FREE, (unit - first) / slot_units))
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
}

/* ---- blocks ----------------------------------------------------------------------- */

/* Where a block's frames come from: BlockAlloc's free-frame bitmap (runs inside one
 * container), or TierAlloc's page tier. A compile-time choice on the device; the host
 * build of the core has every kind in one program and asks the header. */
static CLHEAP_INLINE int clheap_frames_from_pages(CLHEAP_GLOBAL clheap_u32 *h)
{
#ifdef CLHEAP_ALLOCATOR
    (void)h;
    return CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER;
#else
    return h[CLHEAP_HDR_KIND] == CLHEAP_KIND_TIER;
#endif
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_block_header(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return h + ((clheap_size)h[CLHEAP_HDR_BLOCK_HEADERS] + (clheap_size)frame * CLHEAP_BLOCK_HEADER_UNITS) * 4u;
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_block_alloc_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_ALLOC);
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_block_iter_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_ITER);
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_block_incarnation(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_INCARNATION;
}

/* A block is reclaimed at `frame` (I1, I2). */
static CLHEAP_INLINE void clheap_block_next_incarnation(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    clheap_add32(clheap_block_incarnation(h, frame), 1u); /* nobody waits for its result */
}

/* The incarnation a free reads again just before its AND (I1): a load whose value the
 * AND does not wait for. */
static CLHEAP_INLINE clheap_u32 clheap_block_incarnation_now(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return clheap_load32(clheap_block_incarnation(h, frame));
}

/* After a free's AND cleared `bits`: 1 if the block it read with `incarnation` was
 * reclaimed before the AND (`now`, read just before it, differs), the bits then ORed
 * back (I1). */
static CLHEAP_INLINE int clheap_block_gone(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 incarnation,
                                           clheap_u32 now, clheap_u64 bits)
{
    if (now == incarnation)
        return 0;
    clheap_or64(clheap_block_alloc_bits(h, frame), bits);
    return 1;
}

/* Bits of the slots a block of class c really has. */
static CLHEAP_INLINE clheap_u64 clheap_class_slots(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    return clheap_ones64(h[CLHEAP_HDR_CLASS_CAPACITY + c]);
}

/* The smallest class whose slots hold `bytes`, or CLHEAP_MAX_CLASSES. */
static CLHEAP_INLINE clheap_u32 clheap_class_for(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    clheap_u32 count = h[CLHEAP_HDR_CLASS_COUNT];
    for (clheap_u32 c = 0; c < count; c++)
        if (bytes <= h[CLHEAP_HDR_CLASS_BYTES + c])
            return c;
    return CLHEAP_MAX_CLASSES;
}

/* Unit of slot `slot` of the block starting at `frame` of class c. */
static CLHEAP_INLINE clheap_u32 clheap_slot_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                 clheap_u32 slot)
{
    return h[CLHEAP_HDR_POOL_START] + frame * h[CLHEAP_HDR_FRAME_UNITS] +
           slot * (h[CLHEAP_HDR_CLASS_BYTES + c] / CLHEAP_UNIT);
}

/* A full block was deactivated: if a free landed meanwhile, activate it again.
 * Happens-before: a free that makes a full block not full ANDs the allocation word,
 * fences (release), then sets the active bit (clheap_block_reactivate). If our clear
 * of the active bit came after that set, it read what the set wrote, and the acquire
 * here orders the re-read after the free's AND, which it sees; if before, the free's
 * set stands. Without the two fences each pair of relaxed atomics may run in either
 * order, and the block stays neither full nor findable. */
static CLHEAP_INLINE void clheap_block_deactivate(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c)
{
    clheap_bm_try_clear(h, CLHEAP_BM_ACTIVE(c), frame);
    clheap_fence_acquire();
    if (~clheap_or64(clheap_block_alloc_bits(h, frame), 0) != 0)
        clheap_bm_try_set(h, CLHEAP_BM_ACTIVE(c), frame);
}

/* A full block that our AND on its allocation word made not full: findable again, the
 * AND released before the set (clheap_block_deactivate's edge). */
static CLHEAP_INLINE void clheap_block_reactivate(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c)
{
    clheap_fence_release();
    clheap_bm_try_set(h, CLHEAP_BM_ACTIVE(c), frame);
}

static CLHEAP_INLINE void clheap_block_release_slots(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame,
                                                     clheap_u32 c, clheap_u64 bits);

/* Tries to reserve up to `want` slots of class c in the block at `frame`; returns the
 * bits reserved (0 if none: full, invalidated, or reused for another class). */
static CLHEAP_INLINE clheap_u64 clheap_block_reserve(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                     clheap_u32 want, clheap_u32 seed)
{
    CLHEAP_GLOBAL clheap_u64 *alloc = clheap_block_alloc_bits(h, frame);
    clheap_u64 v = clheap_load64(alloc);
    clheap_u64 free_bits = ~v;
    if (!free_bits)
        return 0;
    clheap_u64 mask;
    if (want == 1u) {
        mask = (clheap_u64)1 << clheap_pick_bit(free_bits, seed);
    } else { /* the first `want` free bits */
        mask = 0;
        for (clheap_u32 k = 0; k < want && free_bits; k++) {
            clheap_u64 lowest = free_bits & (0 - free_bits);
            mask |= lowest;
            free_bits &= free_bits - 1u;
        }
    }
    clheap_u64 old = clheap_or64(alloc, mask);
    clheap_u64 got = mask & ~old;
    if (!got)
        return 0;
    if ((old | got) == ~(clheap_u64)0)
        clheap_block_deactivate(h, frame, c);
    /* The block may have been reclaimed and reinitialised for another class between our
     * choice and our OR; its class was written before its bitmap (with a fence). */
    clheap_fence_acquire();
    if (clheap_load32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_CLASS) != c + 1u) {
        clheap_u32 actual = clheap_load32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_CLASS);
        if (actual != 0u && actual <= h[CLHEAP_HDR_CLASS_COUNT])
            clheap_block_release_slots(h, frame, actual - 1u, got);
        return 0;
    }
    return got;
}

/* The allocated-block bitmap only lists a class's blocks: parallel_do, device_do and the
 * heap check read its containers, and no search descends it. So it has one level
 * (host/heap_layout.c), and listing or unlisting a block is one atomic whose result
 * nobody waits for: with the upper levels kept as for a searched bitmap, every block
 * that emptied a container also paid a fence and two more dependent atomics. */
static CLHEAP_INLINE void clheap_block_list_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 container,
                                                 clheap_u64 bits)
{
    clheap_or64(clheap_bm_level0(h, CLHEAP_BM_ALLOCATED(c), container), bits);
}

static CLHEAP_INLINE void clheap_block_unlist(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 frame)
{
    clheap_and64(clheap_bm_level0(h, CLHEAP_BM_ALLOCATED(c), frame >> 6), ~((clheap_u64)1 << (frame & 63u)));
}

/* Ends the life of an empty, invalidated block of class c: out of the active bitmap (if
 * `active`: it may be there, see clheap_block_after_release), its class word `word` (0,
 * or CLHEAP_TIER_HELD_WORD for a block held for its run), its incarnation bumped, then
 * sealed (I2). */
static CLHEAP_INLINE void clheap_block_retire(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                              int active, clheap_u32 word)
{
    if (active)
        clheap_bm_try_clear(h, CLHEAP_BM_ACTIVE(c), frame);
    clheap_store32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_CLASS, word);
    clheap_block_next_incarnation(h, frame);
    clheap_fence_release();
    clheap_or64(clheap_block_alloc_bits(h, frame), ~(clheap_u64)0); /* the seal (I2) */
}

/* Returns a block's frames to the free-frame bitmap once it is empty and invalidated.
 * `active`: whether it may be in the active bitmap (see clheap_block_after_release). */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_block_reclaim(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                                int active)
{
    clheap_block_unlist(h, c, frame);
    clheap_block_retire(h, frame, c, active, 0u);
    if (clheap_frames_from_pages(h))
        clheap_pages_release(h, frame, h[CLHEAP_HDR_CLASS_FRAMES + c]);
    else
        clheap_bm_put_run(h, CLHEAP_BM_FREE, frame, h[CLHEAP_HDR_CLASS_FRAMES + c]);
}

/* ---- TierAlloc's recycling (cl/clheap_tier.h, "Recycling") ---- */

#if CLHEAP_TIER_TRACKS < 1 || CLHEAP_TIER_TRACKS > CLHEAP_TIER_TRACK_SLOTS
#error "CLHEAP_TIER_TRACKS: 1 to CLHEAP_TIER_TRACK_SLOTS (cl/clheap_config.h)"
#endif

/* Track slot `slot` (a hint's index * CLHEAP_TIER_TRACK_SLOTS + k): the word a block's
 * CLHEAP_BLOCK_WORD_ANCHOR names, less 1. */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_tier_track_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 slot)
{
    clheap_u32 first = CLHEAP_HDR_TRACK_FIRST(h[CLHEAP_HDR_CLASS_COUNT], h[CLHEAP_HDR_HINT_SLOTS]);
    return (CLHEAP_GLOBAL clheap_u64 *)(h + first + 2u * slot);
}

/* Releases the block at `frame` of class c if this work-item takes it from held for the
 * track `anchor` names (the block's own emptier, a stealer of its run and a stolen
 * run's completer may all try: one CAS wins). Its slots stay taken (T2), and its
 * incarnation was bumped when it was held. */
static CLHEAP_INLINE void clheap_tier_release_held(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                   clheap_u32 anchor)
{
    clheap_u32 held = CLHEAP_TIER_HELD_WORD(anchor, c);
    if (clheap_cas32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_CLASS, held, 0u) != held)
        return;
    clheap_block_unlist(h, c, frame);
    clheap_fence_release(); /* the class before the frames' next owner writes */
    clheap_pages_release(h, frame, h[CLHEAP_HDR_CLASS_FRAMES + c]);
}

/* Releases every block of the run of class c at `run` still held for the track `anchor`
 * names. Only while that track follows the run (a walking stealer's flag, or a stolen
 * run's completer before it frees the track): a block of the run that was given back
 * may now be another run's, held for another track, which the CAS leaves alone. */
static CLHEAP_INLINE void clheap_tier_release_run_held(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c,
                                                       clheap_u32 anchor)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c], end = run + h[CLHEAP_HDR_CLASS_RUN + c] * frames;
    CLHEAP_NO_UNROLL
    for (clheap_u32 b = run; b < end; b += frames)
        clheap_tier_release_held(h, b, c, anchor);
}

/* Gives back a whole run of class c that this work-item owns (every block held or
 * unhanded, so every bit of each allocation bitmap already set: no seal to write), with
 * one page-tier release. */
static CLHEAP_INLINE void clheap_tier_drop_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 run, clheap_u32 c)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c], blocks = h[CLHEAP_HDR_CLASS_RUN + c];
    clheap_u64 listed = 0;
    CLHEAP_NO_UNROLL
    for (clheap_u32 b = run; b < run + blocks * frames; b += frames) {
        listed |= (clheap_u64)1 << (b & 63u);
        if (b + frames >= run + blocks * frames || (b + frames) >> 6 != b >> 6) { /* one AND a container */
            clheap_and64(clheap_bm_level0(h, CLHEAP_BM_ALLOCATED(c), b >> 6), ~listed);
            listed = 0;
        }
        clheap_store32(clheap_block_header(h, b) + CLHEAP_BLOCK_WORD_CLASS, 0u);
        clheap_block_next_incarnation(h, b);
    }
    clheap_fence_release(); /* the classes before the frames' next owner writes */
    clheap_pages_release(h, run, blocks * frames);
}

#if CLHEAP_ATOMICS64
/* The walking mark of a stealer that set the stolen flag on a run neither parked nor
 * being installed (`v`, the track as the flag left it): a CAS, at most
 * CLHEAP_TIER_CLOSE_TRIES tries, only while the run's count is short of its `blocks`.
 * Returns whether it is set. Why the mark: while it stands no completer frees the track,
 * so no later run can be held for the track while the stealer walks its run. A stealer
 * that cannot set it walks nothing: the completer does, before it frees the track. */
static CLHEAP_INLINE int clheap_tier_walk_begin(CLHEAP_GLOBAL clheap_u64 *track, clheap_u64 v, clheap_u32 blocks)
{
    clheap_u32 tag = (clheap_u32)(v >> 32);
    for (int tries = 0; tries < CLHEAP_TIER_CLOSE_TRIES; tries++) {
        if ((clheap_u32)(v >> 32) != tag || ((clheap_u32)v & CLHEAP_TIER_EMPTIED_MASK) >= blocks)
            return 0;
        clheap_u64 seen = clheap_cas64(track, v, v | CLHEAP_TIER_WALKING);
        if (seen == v)
            return 1;
        v = seen;
    }
    return 0;
}

/* Clears a walking mark; if the run completed meanwhile, its completer left the track to
 * the walker, which frees it (every block was released: by its emptier after the flag,
 * or by the walk). */
static CLHEAP_INLINE void clheap_tier_walk_end(CLHEAP_GLOBAL clheap_u64 *track, clheap_u32 blocks)
{
    clheap_u64 old = clheap_and64(track, ~(clheap_u64)CLHEAP_TIER_WALKING);
    if (((clheap_u32)old & CLHEAP_TIER_EMPTIED_MASK) == blocks)
        clheap_xchg64(track, 0);
}
#endif

/* Takes the held blocks of the run that track k of the hint at `index` follows (the last
 * resort, closing a hint): the stolen flag first (an OR: there is one stealer, the one
 * that set it), so that the run's later emptiers give their blocks back and its
 * completer frees the track; then each held block, released (clheap_tier_walk_begin). A
 * parked run, every block held, is this work-item's: the track freed, the run dropped
 * whole. If the run left the track meanwhile the flag lands on a free track or a later
 * run's (which then only gives its blocks back), and nothing is released here; a run
 * being installed again is left to start stolen from (its installer unholds every block). */
static CLHEAP_INLINE void clheap_tier_steal(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 index, clheap_u32 k)
{
#if CLHEAP_ATOMICS64
    clheap_u32 anchor = index * CLHEAP_TIER_TRACK_SLOTS + k + 1u;
    CLHEAP_GLOBAL clheap_u64 *track = clheap_tier_track_at(h, anchor - 1u);
    clheap_u64 v = clheap_load64(track);
    if (!(v >> 32) || (v & CLHEAP_TIER_STOLEN))
        return;
    clheap_u32 c = index / h[CLHEAP_HDR_HINT_SLOTS], blocks = h[CLHEAP_HDR_CLASS_RUN + c];
    clheap_u32 run = (clheap_u32)(v >> 32) - 1u;
    clheap_u64 old = clheap_or64(track, CLHEAP_TIER_STOLEN);
    if ((old >> 32) != (v >> 32) || (old & CLHEAP_TIER_STOLEN))
        return;
    clheap_u32 counted = (clheap_u32)old & CLHEAP_TIER_EMPTIED_MASK;
    if (counted > blocks)
        return; /* being installed again: it starts stolen from (its emptiers give back) */
    if (counted < blocks) { /* its held blocks released while marked walking */
        if (!clheap_tier_walk_begin(track, old | CLHEAP_TIER_STOLEN, blocks))
            return;
        clheap_fence_acquire(); /* the held stores of the blocks counted before the flag */
        clheap_tier_release_run_held(h, run, c, anchor);
        clheap_tier_walk_end(track, blocks);
        return;
    }
    if ((clheap_xchg64(track, 0) >> 32) != (v >> 32))
        return; /* not by T6: a parked run is the stealer's once flagged */
    clheap_fence_acquire(); /* the held stores of its blocks, released before their counts */
    clheap_tier_drop_run(h, run, c); /* every block held, and this work-item's */
#else
    (void)h;
    (void)index;
    (void)k;
#endif
}

/* Counts the held block of class c whose anchor names its track, for its run `tag` (first
 * frame + 1): one add. Returns 0 if the caller is to release its block (the run was
 * stolen from). The add that makes the count RUN(c) completes the run: every block
 * counted, so every one held since its own add, and no other add can come (T6). A
 * complete run stays parked in its track, for its hint's next crossing
 * (clheap_tier_take_parked) or the last resort. A stolen one's completer releases what
 * is still held (blocks counted before the flag that no walking stealer released), then
 * frees the track; while a stealer walks, it leaves both to it. Why parked and not given
 * back or made a spare there: a launch that frees runs whole completes several a hint,
 * and a completer that wrote every block of its run made the launch's end wait for it. */
static CLHEAP_INLINE int clheap_tier_count_held(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 anchor, clheap_u32 tag,
                                                clheap_u32 c)
{
#if CLHEAP_ATOMICS64
    CLHEAP_GLOBAL clheap_u64 *track = clheap_tier_track_at(h, anchor - 1u);
    clheap_u64 old = clheap_add64(track, 1u);
    if ((clheap_u32)(old >> 32) != tag) { /* not by T6; if a heap breaks it, the count is mended */
        clheap_add64(track, ~(clheap_u64)0);
        return 0;
    }
    if (((clheap_u32)old & CLHEAP_TIER_EMPTIED_MASK) + 1u != h[CLHEAP_HDR_CLASS_RUN + c])
        return (old & CLHEAP_TIER_STOLEN) == 0;
    if (old & CLHEAP_TIER_WALKING)
        return 0; /* its stealer frees the track when its walk ends */
    if (old & CLHEAP_TIER_STOLEN) {
        clheap_fence_acquire(); /* the other blocks' held stores, released before their adds */
        clheap_tier_release_run_held(h, tag - 1u, c, anchor); /* this block's too */
        clheap_xchg64(track, 0); /* after the walk: no later run is held for the track during it */
    }
    else if (!clheap_load32(h + CLHEAP_HDR_RUNS_OPEN))
        clheap_store32(h + CLHEAP_HDR_RUNS_OPEN, 1u); /* a parked run for clheap_tier_close_all */
    return 1;
#else
    (void)h;
    (void)anchor;
    (void)tag;
    (void)c;
    return 0;
#endif
}

/* A block of class c that a work-item emptied and invalidated (every slot taken): held
 * for its run if its anchor names a track (in every build: another program of the heap
 * may recycle; `active`: whether it may be in the active bitmap), else reclaimed
 * (clheap_block_reclaim). */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_block_emptied(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame,
                                                                clheap_u32 c, int active)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, frame);
    clheap_u32 anchor =
        CLHEAP_ATOMICS64 && clheap_frames_from_pages(h) ? clheap_load32(header + CLHEAP_BLOCK_WORD_ANCHOR) : 0u;
    if (!anchor) {
        clheap_block_reclaim(h, frame, c, active);
        return;
    }
    clheap_u32 tag = clheap_load32(header + CLHEAP_BLOCK_WORD_RUN);
    clheap_block_retire(h, frame, c, active, CLHEAP_TIER_HELD_WORD(anchor, c));
    clheap_fence_release(); /* held before the count that a completer or stealer reads */
    if (!clheap_tier_count_held(h, anchor, tag, c))
        clheap_tier_release_held(h, frame, c, anchor);
}

/* After the AND that freed `bits` of the block at `frame` of class c found `old`
 * (every bit of `bits` set in it): activation if it was full and is not empty now,
 * invalidation if it is empty.
 * A release that takes a full block straight to empty leaves it out of the active
 * bitmap: the block is reclaimed at once, and marking it only to unmark it cost two
 * hierarchical updates with their fences on the free's critical path (every 4 KiB and
 * 16 KiB block that one warp frees whole). Only that path skips the active bitmap; any
 * rollback counts the block as possibly active, so at worst a stale mark is left, which
 * searchers repair (a full-or-free frame never hands out a slot). */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_block_after_release(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame,
                                                                      clheap_u32 c, clheap_u64 old, clheap_u64 bits)
{
    CLHEAP_GLOBAL clheap_u64 *alloc = clheap_block_alloc_bits(h, frame);
    clheap_u64 slots = clheap_class_slots(h, c);
    int active = old != ~(clheap_u64)0; /* not full before: active (invariant at kernel end) */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (((old & ~bits) & slots) != 0) {
            if (old == ~(clheap_u64)0) /* was full */
                clheap_block_reactivate(h, frame, c);
            return;
        }
        /* Empty: invalidate by taking every slot. Success iff none was taken meanwhile. */
        clheap_u64 before = clheap_or64(alloc, slots);
        if ((before & slots) == 0) {
            clheap_block_emptied(h, frame, c, active);
            return;
        }
        /* Roll back exactly the bits we set; if that empties the block again, retry. */
        clheap_u64 ours = slots & ~before;
        old = clheap_and64(alloc, ~ours);
        bits = ours;
        active = 1;
        if (old == ~(clheap_u64)0 && ours)
            clheap_block_reactivate(h, frame, c);
    }
}

/* TierAlloc: marks the block at `frame` unsettled (cl/clheap_tier.h): one atomic whose
 * result nobody waits for. */
static CLHEAP_INLINE void clheap_block_mark_unsettled(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    clheap_or64(clheap_bm_level0(h, CLHEAP_BM_UNSETTLED(h[CLHEAP_HDR_CLASS_COUNT]), frame >> 6),
                (clheap_u64)1 << (frame & 63u));
}

/* The mark flag of frame's stripe (cl/clheap_layout.h, CLHEAP_PAGES_MARKED_WORD). */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_block_mark_flag(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    return clheap_pages_used_stripe(h, frame) + CLHEAP_PAGES_MARKED_WORD;
}

/* Whether the page tier has handed out less than `percent` of the pool. */
static CLHEAP_INLINE int clheap_tier_used_below(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 percent)
{
    return (clheap_u64)clheap_pages_used(h) * 100u < (clheap_u64)h[CLHEAP_HDR_FRAME_COUNT] * percent;
}

static CLHEAP_INLINE int clheap_tier_defers(CLHEAP_GLOBAL clheap_u32 *h)
{
    return clheap_launch_items() <= CLHEAP_TIER_DEFER_ITEMS &&
           clheap_tier_used_below(h, CLHEAP_TIER_DEFER_USED_PERCENT);
}

/* Whether a launch of this size keeps emptied blocks: too large to defer, not too large
 * to keep (cl/clheap_tier.h, "Keeping"). */
static CLHEAP_INLINE int clheap_tier_keeping_launch(void)
{
    clheap_size items = clheap_launch_items();
    return items > CLHEAP_TIER_DEFER_ITEMS && items <= CLHEAP_TIER_KEEP_ITEMS;
}

/* Whether a free that empties a block keeps it: in such a launch, unless the pool was
 * short of frames since (CLHEAP_HDR_KEEP_FULL: one load of a word rarely written; summing
 * the page tier's stripes in every such free cost more than the keeping saved). */
static CLHEAP_INLINE int clheap_tier_keeps(CLHEAP_GLOBAL clheap_u32 *h)
{
    return clheap_tier_keeping_launch() && !clheap_load32(h + CLHEAP_HDR_KEEP_FULL);
}

/* A request on its way to NULL (cl/clheap_tier.h, clheap_tier_take_marks): frees stop
 * keeping until an opener finds the pool mostly free again. */
static CLHEAP_INLINE void clheap_tier_stop_keeping(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (CLHEAP_TIER_KEEP_ITEMS && !clheap_load32(h + CLHEAP_HDR_KEEP_FULL))
        clheap_store32(h + CLHEAP_HDR_KEEP_FULL, 1u);
}

/* Keeps the block at `frame` of class c, which the AND that found `old` emptied: findable
 * in its class (activated if that AND took it from full), and marked unsettled, so that
 * settlers (cl/clheap_tier.h), the last resort and clheap_heap_trim give it back. */
static CLHEAP_INLINE void clheap_block_keep(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                            clheap_u64 old)
{
    if (old == ~(clheap_u64)0)
        clheap_block_reactivate(h, frame, c);
    clheap_block_mark_unsettled(h, frame);
}

/* Whether a request that opened frames settles its share of the unsettled bitmap: not
 * while frees keep emptied blocks (cl/clheap_tier.h, "Keeping"), which settling would give
 * back. Once the pool was short of frames, the opener that finds less than
 * CLHEAP_TIER_DEFER_USED_PERCENT of it used lets frees keep again. */
static CLHEAP_INLINE int clheap_tier_openers_settle(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (!clheap_tier_keeping_launch())
        return 1;
    if (!clheap_load32(h + CLHEAP_HDR_KEEP_FULL))
        return 0;
    if (!clheap_tier_used_below(h, CLHEAP_TIER_DEFER_USED_PERCENT))
        return 1;
    clheap_store32(h + CLHEAP_HDR_KEEP_FULL, 0u);
    return 0;
}

/* What a user's free does after its AND freed `bits` of the block at `frame` of class c
 * and found `old`: where there is something to settle (the block was full, or it is
 * empty now), TierAlloc marks it unsettled if it defers (clheap_tier_defers), or keeps
 * it if it emptied it and keeps (clheap_tier_keeps); otherwise, and always in
 * BlockAlloc, the block is settled at once (clheap_block_after_release). */
static CLHEAP_INLINE void clheap_block_after_free(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                  clheap_u64 old, clheap_u64 bits)
{
    int empty = ((old & ~bits) & clheap_class_slots(h, c)) == 0;
    if (!clheap_frames_from_pages(h) || (old != ~(clheap_u64)0 && !empty)) {
        clheap_block_after_release(h, frame, c, old, bits);
        return;
    }
    /* The stripe's mark flag is loaded with U's stripes (the same lines), and set only if
     * clear: a store by every marking free to lines every free reads slowed the frees of
     * small launches. */
    clheap_u32 flagged = clheap_load32(clheap_block_mark_flag(h, frame));
    if (clheap_tier_defers(h))
        clheap_block_mark_unsettled(h, frame);
    else if (empty && clheap_tier_keeps(h))
        clheap_block_keep(h, frame, c, old);
    else {
        clheap_block_after_release(h, frame, c, old, bits);
        return;
    }
    if (!flagged)
        clheap_store32(clheap_block_mark_flag(h, frame), 1u);
}

/* Frees `bits` (all set) of the block at `frame` of class c. */
static CLHEAP_INLINE void clheap_block_release_slots(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame,
                                                     clheap_u32 c, clheap_u64 bits)
{
    clheap_block_after_release(h, frame, c, clheap_and64(clheap_block_alloc_bits(h, frame), ~bits), bits);
}

/* Blocks of class c an opening for `want` slots takes: TierAlloc on split words, which has
 * no run hints, opens as many as fit in CLHEAP_TIER_BATCH_FRAMES frames, or in
 * CLHEAP_TIER_BATCH_WHOLE_FRAMES where the request wants a whole block or more (a warp's
 * worth of one class: its class's other warps come in numbers too), at most the class's
 * run (which the layout shrinks in small pools); everything else opens one. */
static CLHEAP_INLINE clheap_u32 clheap_block_batch(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 want)
{
#if !CLHEAP_ATOMICS64 && CLHEAP_TIER_BATCH_FRAMES
    if (clheap_frames_from_pages(h)) {
        clheap_u32 budget = want >= h[CLHEAP_HDR_CLASS_CAPACITY + c] ? CLHEAP_TIER_BATCH_WHOLE_FRAMES
                                                                      : CLHEAP_TIER_BATCH_FRAMES;
        clheap_u32 fit = budget / h[CLHEAP_HDR_CLASS_FRAMES + c], run = h[CLHEAP_HDR_CLASS_RUN + c];
        return fit < 2u || run < 2u ? 1u : run < fit ? run : fit;
    }
#endif
    (void)h;
    (void)c;
    (void)want;
    return 1u;
}

/* Writes the headers of the frames [first + index, first + blocks * FRAMES(c)) of blocks
 * being opened, every stride-th: each frame names its block's first frame, whose header
 * also gets the class and an empty iteration bitmap. The opener writes all of them (index
 * 0, stride 1); on NVIDIA the lanes of a run opener's warp share them (see
 * clheap_tier_take_begin). `hold` (a run's blocks): every slot held (T2) before the class
 * names the block, whatever a free that raced the frames' last block cleared (I3); else
 * the opener stores the allocation words itself after its release (clheap_block_new). */
static CLHEAP_INLINE void clheap_block_write_headers(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 first, clheap_u32 c,
                                                     clheap_u32 blocks, clheap_u32 index, clheap_u32 stride,
                                                     int hold, clheap_u32 anchor)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c];
    CLHEAP_NO_UNROLL
    for (clheap_u32 i = index; i < blocks * frames; i += stride) {
        clheap_u32 block = first + i / frames * frames;
        CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, first + i);
        clheap_store32(header + CLHEAP_BLOCK_WORD_OWNER, block);
        if (first + i == block) {
            if (hold)
                clheap_or64(clheap_block_alloc_bits(h, block), ~(clheap_u64)0);
            clheap_store64(clheap_block_iter_bits(h, block), 0);
            if (anchor)
                clheap_store32(header + CLHEAP_BLOCK_WORD_RUN, first + 1u);
            clheap_store32(header + CLHEAP_BLOCK_WORD_ANCHOR, anchor);
            clheap_store32(header + CLHEAP_BLOCK_WORD_CLASS, c + 1u);
        }
    }
}

/* Publishes the `count` blocks just opened at `frame` (their headers released): lists
 * them all in the class's allocated-block bitmap; activates the first if `first_free` (its
 * opener left slots free); and if `others_free` (a batch, clheap_block_new) activates the
 * others and marks them unsettled (T4 of cl/clheap_tier.h: an empty block not given back),
 * so that requests find them and settlers, the last resort and clheap_heap_trim give back
 * those no request took. A run's blocks (both 0) stay held for its hint. One OR per
 * container of each bitmap: 64 dependent ORs made a run's opener, and the requests that
 * fall back while it works, wait on its latency, and a batch's 64 blocks activated and
 * marked one by one were 128 dependent atomics on the opener's path. */
static CLHEAP_INLINE void clheap_block_publish(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                               clheap_u32 count, int first_free, int others_free)
{
    clheap_u32 frames = h[CLHEAP_HDR_CLASS_FRAMES + c], end = frame + count * frames;
    clheap_u64 listed = 0, offered = 0;
    CLHEAP_NO_UNROLL
    for (clheap_u32 b = frame; b < end; b += frames) {
        clheap_u64 bit = (clheap_u64)1 << (b & 63u);
        listed |= bit;
        offered |= others_free && b != frame ? bit : (clheap_u64)0;
        if (b + frames < end && (b + frames) >> 6 == b >> 6)
            continue;
        clheap_block_list_bits(h, c, b >> 6, listed);
        clheap_u64 active = offered | (first_free && b >> 6 == frame >> 6 ? (clheap_u64)1 << (frame & 63u)
                                                                           : (clheap_u64)0);
        if (active)
            clheap_bm_put_bits(h, CLHEAP_BM_ACTIVE(c), b >> 6, active);
        if (offered) {
            clheap_or64(clheap_bm_level0(h, CLHEAP_BM_UNSETTLED(h[CLHEAP_HDR_CLASS_COUNT]), b >> 6), offered);
            if (!clheap_load32(clheap_block_mark_flag(h, b)))
                clheap_store32(clheap_block_mark_flag(h, b), 1u);
        }
        listed = offered = 0;
    }
}

/* The class a TierAlloc large request passes where CLHEAP_TIER_ONE_TAKE routes its take
 * through clheap_block_new (cl/clheap_tier.h, "One take"), with its frames as `want`. */
#define CLHEAP_BLOCK_LARGE CLHEAP_MAX_CLASSES

/* Whether c is that class in this build (a constant 0 where the large path has a take
 * of its own, so that build's code is unchanged). */
static CLHEAP_INLINE int clheap_block_is_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    return CLHEAP_TIER_ONE_TAKE && clheap_frames_from_pages(h) && c == CLHEAP_BLOCK_LARGE;
}

/* Slow path: take frames for a new block of class c (a batch of them, see
 * clheap_block_batch, where the frames for one are taken) and reserve `want` slots in the
 * first. The frames come from the page tier, or from BlockAlloc's free-frame bitmap by
 * rotated descents or, when `fit` is given (the last try), by a sweep that sets *fit if it
 * met a run it could have taken. For CLHEAP_BLOCK_LARGE: `want` frames placed as a large
 * request's, returned after clheap_fence_acquire with nothing written (*got 0). */
static CLHEAP_INLINE clheap_u32 clheap_block_new(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 want,
                                                 clheap_u32 seed, clheap_u64 *got, int *fit)
{
    int large = clheap_block_is_large(h, c);
    clheap_u32 frames = large ? want : h[CLHEAP_HDR_CLASS_FRAMES + c];
    clheap_u32 count = large ? 1u : clheap_block_batch(h, c, want), frame;
    if (clheap_frames_from_pages(h)) {
        /* The batch, then one block, from one call site of the page tier's take: compilers
         * that inline every call (Mesa's rusticl) copy the whole take once per site. */
        CLHEAP_NO_UNROLL
        for (;;) {
            frame = clheap_pages_take(h, count * frames, seed, !large);
            if (frame != CLHEAP_BM_FAIL || count == 1u)
                break;
            count = 1u;
        }
    } else {
        frame = fit ? clheap_bm_sweep_run(h, CLHEAP_BM_FREE, frames, seed, CLHEAP_BLOCK_SWEEP, fit)
                    : clheap_bm_try_take_run(h, CLHEAP_BM_FREE, frames, seed);
    }
    if (frame == CLHEAP_BM_FAIL)
        return CLHEAP_BM_FAIL;
    clheap_fence_acquire(); /* the frames' last owner released them after its header writes */
    if (large) {
        *got = 0;
        return frame;
    }
    clheap_block_write_headers(h, frame, c, count, 0u, 1u, 0, 0u);
    clheap_fence_release(); /* the class is visible before any slot is */
    /* Reserve our slots as we open the block: the first `want` slots are ours. */
    clheap_u64 slots = clheap_class_slots(h, c);
    clheap_u64 mine = 0, rest = slots;
    for (clheap_u32 k = 0; k < want && rest; k++) {
        mine |= rest & (0 - rest);
        rest &= rest - 1u;
    }
    clheap_store64(clheap_block_alloc_bits(h, frame), ~slots | mine);
    for (clheap_u32 b = 1u; b < count; b++)
        clheap_store64(clheap_block_alloc_bits(h, frame + b * frames), ~slots);
    clheap_fence_release();
    clheap_block_publish(h, frame, c, count, rest != 0, 1);
    *got = mine;
    return frame;
}

/* Reserves up to `want` (1..64) slots of class c in a block that has some free (the
 * fast path of the search); returns the block's first frame and the reserved bits in
 * *got, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_block_reserve_active(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                            clheap_u32 want, clheap_u32 seed, clheap_u64 *got)
{
    CLHEAP_NO_UNROLL
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BLOCK_FAST_TRIES; attempt++) {
        clheap_u32 s = seed + attempt * 0x9E3779B9u;
        clheap_u32 frame = clheap_bm_try_find_set(h, CLHEAP_BM_ACTIVE(c), s);
        if (frame == CLHEAP_BM_FAIL)
            break;
        *got = clheap_block_reserve(h, frame, c, want, clheap_hash32(s) >> 26);
        if (*got)
            return frame;
        /* Full (or stale): if it is full, its active mark is stale; repair it. */
        if (clheap_load64(clheap_block_alloc_bits(h, frame)) == ~(clheap_u64)0)
            clheap_block_deactivate(h, frame, c);
    }
    *got = 0;
    return CLHEAP_BM_FAIL;
}

/* The slow path: a new block of class c with `want` slots reserved, or, when no frames
 * are free, a last look for an active block someone opened meanwhile. On FAIL, *why says
 * which error the NULL counts: CLHEAP_HDR_ERR_CONTENDED if the last look met frames or
 * slots it lost to others (BlockAlloc: the sweep of CLHEAP_BLOCK_SWEEP free-frame
 * containers found a fitting run), else CLHEAP_HDR_ERR_OUT_OF_MEMORY (nothing fitted).
 * CLHEAP_BLOCK_LARGE: clheap_block_new's one take of `want` frames. */
static CLHEAP_INLINE clheap_u32 clheap_block_reserve_new(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                         clheap_u32 want, clheap_u32 seed, clheap_u64 *got,
                                                         clheap_u32 *why)
{
    int fit = 0, none = 0;
    CLHEAP_NO_UNROLL
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BLOCK_SLOW_TRIES; attempt++) {
        int last = attempt + 1u == CLHEAP_BLOCK_SLOW_TRIES;
        clheap_u32 frame = none ? CLHEAP_BM_FAIL
                                : clheap_block_new(h, c, want, seed + 0x51ED27u * (attempt + 1u), got,
                                                   last && !clheap_frames_from_pages(h) ? &fit : (int *)0);
        if (frame != CLHEAP_BM_FAIL)
            return frame;
        if (clheap_block_is_large(h, c))
            break; /* a large request's one take: its caller's attempts retry */
        /* TierAlloc: the page tier's looks are not tried again while it has fewer free
         * frames than a block takes (cl/clheap_pages.h, clheap_pages_have). */
        none = none || (clheap_frames_from_pages(h) && !clheap_pages_have(h, h[CLHEAP_HDR_CLASS_FRAMES + c]));
        /* No free frames: one last look for an active block someone opened meanwhile,
         * the last time sweeping the active bitmap rather than sampling it. */
        frame = last ? clheap_bm_sweep(h, CLHEAP_BM_ACTIVE(c), seed, CLHEAP_BLOCK_SWEEP, 0)
                     : clheap_bm_try_find_set(h, CLHEAP_BM_ACTIVE(c), seed ^ 0xABCDu * (attempt + 1u));
        if (frame != CLHEAP_BM_FAIL) {
            *got = clheap_block_reserve(h, frame, c, want, clheap_hash32(seed + attempt) >> 26);
            if (*got)
                return frame;
            fit |= last;
        }
    }
    *got = 0;
    *why = fit ? CLHEAP_HDR_ERR_CONTENDED : CLHEAP_HDR_ERR_OUT_OF_MEMORY;
    return CLHEAP_BM_FAIL;
}

/* Reserves up to `want` (1..64) slots of class c; returns the block's first frame and
 * the reserved bits in *got, or FAIL with *got = 0 and *why the error to count. */
static CLHEAP_INLINE clheap_u32 clheap_block_reserve_any(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c,
                                                         clheap_u32 want, clheap_u32 seed, clheap_u64 *got,
                                                         clheap_u32 *why)
{
    clheap_u32 frame = clheap_block_reserve_active(h, c, want, seed, got);
    return frame != CLHEAP_BM_FAIL ? frame : clheap_block_reserve_new(h, c, want, seed, got, why);
}

static CLHEAP_INLINE clheap_u32 clheap_blocks_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                          clheap_u32 seed)
{
    clheap_u32 c = bytes ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    if (c == CLHEAP_MAX_CLASSES) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u64 got;
    clheap_u32 why;
    clheap_u32 frame = clheap_block_reserve_any(h, c, 1u, seed, &got, &why);
    if (frame == CLHEAP_BM_FAIL) {
        clheap_count_error(h, (int)why);
        return 0u;
    }
    return clheap_slot_unit(h, frame, c, clheap_ctz64(got));
}

/* The slot of `unit` in the block at `frame` (its frame's owner), whose first frame's
 * class word is `cls`; 0 (and an error counted) if it names no slot. */
static CLHEAP_INLINE int clheap_block_slot_in(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 frame,
                                              clheap_u32 cls, clheap_u32 *slot_out)
{
    if (cls == 0u || cls > h[CLHEAP_HDR_CLASS_COUNT]) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE); /* its block was freed */
        return 0;
    }
    clheap_u32 slot_units = h[CLHEAP_HDR_CLASS_BYTES + cls - 1u] / CLHEAP_UNIT;
    clheap_u32 offset = unit - h[CLHEAP_HDR_POOL_START] - frame * h[CLHEAP_HDR_FRAME_UNITS];
    if (offset % slot_units || offset / slot_units >= h[CLHEAP_HDR_CLASS_CAPACITY + cls - 1u]) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return 0;
    }
    *slot_out = offset / slot_units;
    return 1;
}

/* The unit a pointer to be freed names, its frame's owner, the owner's class word and
 * its incarnation (I1); 0 (and an error counted) if the pointer is outside the pool or
 * misaligned. */
static CLHEAP_INLINE clheap_u32 clheap_frame_locate(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr,
                                                    clheap_u32 *owner_out, clheap_u32 *cls_out,
                                                    clheap_u32 *incarnation_out)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], frame_units = h[CLHEAP_HDR_FRAME_UNITS];
    clheap_u32 frames = h[CLHEAP_HDR_FRAME_COUNT];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first, first + frames * frame_units);
    if (!unit)
        return 0u;
    clheap_u32 owner = clheap_load32(clheap_block_header(h, (unit - first) / frame_units) + CLHEAP_BLOCK_WORD_OWNER);
    *owner_out = owner;
    *cls_out = owner < frames ? clheap_load32(clheap_block_header(h, owner) + CLHEAP_BLOCK_WORD_CLASS) : 0u;
    *incarnation_out = owner < frames ? clheap_load32(clheap_block_incarnation(h, owner)) : 0u;
    return unit;
}

/* Frees slot `slot` of the block at `frame` of class c, read with `incarnation`: one
 * AND, whose old value tells a double free, and the incarnation read again just before
 * it (I1) one that raced the block's reclaim. */
static CLHEAP_INLINE void clheap_block_free_slot(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame, clheap_u32 c,
                                                 clheap_u32 slot, clheap_u32 incarnation)
{
    clheap_u64 bit = (clheap_u64)1 << slot;
    clheap_u32 now = clheap_block_incarnation_now(h, frame);
    /* The freed slot's last writes, and the read above (I1), before the AND. */
    clheap_fence_release();
    clheap_u64 old = clheap_and64(clheap_block_alloc_bits(h, frame), ~bit);
    if ((old & bit) && clheap_block_gone(h, frame, incarnation, now, old & bit))
        old = 0;
    if (!(old & bit))
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
    else
        clheap_block_after_free(h, frame, c, old, bit);
}

static CLHEAP_INLINE void clheap_blocks_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    clheap_u32 frame, cls, slot, incarnation;
    if (!ptr)
        return;
    clheap_u32 unit = clheap_frame_locate(h, ptr, &frame, &cls, &incarnation);
    if (unit && clheap_block_slot_in(h, unit, frame, cls, &slot))
        clheap_block_free_slot(h, frame, cls - 1u, slot, incarnation);
}

/* ---- initialisation (one work-item per frame, and per bitmap container) ----------- */

static CLHEAP_INLINE void clheap_blocks_init_frame(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 frame)
{
    if (frame >= h[CLHEAP_HDR_FRAME_COUNT])
        return;
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, frame);
    clheap_store32(header + CLHEAP_BLOCK_WORD_CLASS, 0u);
    clheap_store32(header + CLHEAP_BLOCK_WORD_OWNER, frame);
    clheap_store64(clheap_block_alloc_bits(h, frame), ~(clheap_u64)0); /* free frame: nothing reservable */
    clheap_store64(clheap_block_iter_bits(h, frame), 0);
    clheap_store32(clheap_block_incarnation(h, frame), 0u);
}

/* ---- typed objects: SOA layout and enumeration ------------------------------------- *
 * A block of class c holds CAPACITY(c) objects. Stored as structure-of-arrays, field k of
 * slot s lives at  block_base + capacity * (bytes of fields 0..k-1) + s * sizeof(field k).
 * clheap_block_base / clheap_slot_index turn an object pointer from clheap_malloc into
 * the block's base and the slot, so a kernel can store an object field by field. */
#define CLHEAP_SOA_FIELD(type, block_base, capacity, prefix_bytes, slot) \
    ((CLHEAP_GLOBAL type *)((CLHEAP_GLOBAL unsigned char *)(block_base) + (clheap_size)(capacity) * (prefix_bytes)) + (slot))

#endif
