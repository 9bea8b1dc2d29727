/* TierAlloc: clheap's default allocator. One heap buffer serves every size from 16 B to
 * the whole pool through two tiers over the same frames:
 *
 *   small  requests up to the largest size class (16 KiB by default) are slots of
 *          DynaSOAr-style blocks (cl/clheap_blocks.h: up to 64 slots, one class per
 *          block, invalidation with rollback). A block's frames come from the page tier
 *          and go back to it when the block empties, so memory freed by one tier is
 *          reusable by the other.
 *   large  larger requests are runs of whole frames from the page tier
 *          (cl/clheap_pages.h: a segmented buddy system over hierarchical bitmaps; the
 *          unused tail of a power-of-two piece is given back at once).
 *
 * Fast path of a small malloc: each (class, work-group slot) has a hint word in the
 * header naming the block it last used; the request (on NVIDIA, a whole warp's worth of
 * the same class, through inline PTX) reserves slots there with one atomic OR and no
 * bitmap search. Only when that block is full does it fall back to BlockAlloc's search of
 * the class's active blocks, then to opening a block.
 *
 * free dispatches on the address in O(1): the frame's out-of-band header names the
 * first frame of its block or large allocation, whose header names the class, or
 * CLHEAP_TIER_LARGE with the run's length in frames.
 *
 * Invariants when no kernel runs (verified by clheap_heap_check), beyond those of the
 * blocks and the pages:
 *   T1  every frame is in exactly one of: a free piece of the page tier, a block (its
 *       first frame's class is 1..count, every frame's owner is the first), a large
 *       allocation (first frame's class is CLHEAP_TIER_LARGE, its length m >= 1, frames
 *       [first, first + m) owned by first, the others' class 0);
 *   T2  a frame outside blocks has no reservable slot (allocation bitmap all ones), so a
 *       stale hint or search can never reserve in it;
 *   T3  hints name frames inside the pool (they are hints: the block may be full, freed,
 *       or reused for another class; block_reserve's class re-check detects that).
 *
 * Linearisation points: small malloc, the OR that sets the slot's bit (rolled back if
 * the class re-check fails); small free, the AND that clears it; large malloc, the
 * page tier's take; large free, the CAS of the first frame's class from LARGE to 0
 * (so of two frees of one allocation exactly one succeeds, the other is counted).
 *
 * Happens-before: a large allocation's headers (owners, length) are written, then
 * clheap_fence_release, then its class: a free that reads LARGE (after
 * clheap_fence_acquire) sees the length. A free writes class 0, clheap_fence_release,
 * then releases the frames: the next owner's writes come after. */
#ifndef CLHEAP_TIER_H
#define CLHEAP_TIER_H

#include "clheap_blocks.h"

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_tier_hint(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c)
{
    clheap_u32 slots = h[CLHEAP_HDR_HINT_SLOTS];
    return h + CLHEAP_HDR_HINT_FIRST + c * slots + clheap_group_index() % slots;
}

/* Reserves up to `want` slots of class c, first in the hinted block; returns the block's
 * first frame and the bits reserved in *got, or FAIL. */
static CLHEAP_INLINE clheap_u32 clheap_tier_reserve(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 c, clheap_u32 want,
                                                    clheap_u32 seed, clheap_u64 *got)
{
    CLHEAP_GLOBAL clheap_u32 *hint = clheap_tier_hint(h, c);
    clheap_u32 frame = clheap_load32(hint);
    if (frame) {
        *got = clheap_block_reserve(h, frame - 1u, c, want, clheap_hash32(seed) >> 26);
        if (*got)
            return frame - 1u;
    }
    frame = clheap_block_reserve_any(h, c, want, seed, got);
    if (frame != CLHEAP_BM_FAIL)
        clheap_store32(hint, frame + 1u);
    return frame;
}

/* Frames a request of `bytes` needs, or 0 if it is 0 or more than the pool. */
static CLHEAP_INLINE clheap_u32 clheap_tier_frames_for(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes)
{
    clheap_size frame_bytes = (clheap_size)h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    clheap_size frames = (bytes + frame_bytes - 1u) / frame_bytes;
    return bytes && frames <= h[CLHEAP_HDR_FRAME_COUNT] ? (clheap_u32)frames : 0u;
}

static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                         clheap_u32 seed)
{
    clheap_u32 frames = clheap_tier_frames_for(h, bytes);
    if (!frames) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 f = clheap_pages_take(h, frames, seed);
    if (f == CLHEAP_BM_FAIL) {
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    clheap_fence_acquire();
    for (clheap_u32 g = f + 1u; g < f + frames; g++)
        clheap_store32(clheap_block_header(h, g) + CLHEAP_BLOCK_WORD_OWNER, f);
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, f);
    clheap_store32(header + CLHEAP_BLOCK_WORD_OWNER, f);
    clheap_store32(header + CLHEAP_BLOCK_WORD_ITER, frames);
    clheap_fence_release(); /* the length before the class that makes it an allocation */
    clheap_store32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE);
    return h[CLHEAP_HDR_POOL_START] + f * h[CLHEAP_HDR_FRAME_UNITS];
}

static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size bytes,
                                                        clheap_u32 seed)
{
    clheap_u32 c = bytes ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    if (c == CLHEAP_MAX_CLASSES)
        return clheap_tier_malloc_large(h, bytes, seed);
    clheap_u64 got;
    clheap_u32 frame = clheap_tier_reserve(h, c, 1u, seed, &got);
    if (frame == CLHEAP_BM_FAIL) {
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    return clheap_slot_unit(h, frame, c, clheap_ctz64(got));
}

static CLHEAP_INLINE void clheap_tier_free(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    if (!ptr)
        return;
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], frame_units = h[CLHEAP_HDR_FRAME_UNITS];
    clheap_u32 frames = h[CLHEAP_HDR_FRAME_COUNT];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first, first + frames * frame_units);
    if (!unit)
        return;
    clheap_u32 f = clheap_load32(clheap_block_header(h, (unit - first) / frame_units) + CLHEAP_BLOCK_WORD_OWNER);
    CLHEAP_GLOBAL clheap_u32 *header = f < frames ? clheap_block_header(h, f) : 0;
    if (!header || clheap_load32(header + CLHEAP_BLOCK_WORD_CLASS) != CLHEAP_TIER_LARGE) {
        clheap_blocks_free(h, ptr); /* a slot, or counted there as not one */
        return;
    }
    if (unit != first + f * frame_units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return;
    }
    clheap_fence_acquire();
    clheap_u32 length = clheap_load32(header + CLHEAP_BLOCK_WORD_ITER);
    if (clheap_cas32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE, 0u) != CLHEAP_TIER_LARGE) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
        return;
    }
    clheap_store32(header + CLHEAP_BLOCK_WORD_ITER, 0u);
    clheap_fence_release(); /* the header is a free frame's before the frames are free */
    clheap_pages_put(h, f, length);
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
        clheap_u32 desc = CLHEAP_BM_DESC(b);
        clheap_u32 levels = h[desc + CLHEAP_BM_LEVELS];
        clheap_u32 total = h[desc + CLHEAP_BM_LEVEL0 + levels - 1u] + 1u; /* containers, all levels */
        if (i < total)
            clheap_bm_init_container(h, desc, i, b == 0u);
    }
    if (kind != CLHEAP_KIND_BITMAP)
        clheap_blocks_init_frame(h, i);
}

#endif
