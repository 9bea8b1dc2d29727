/* The rest of C's allocation API over each allocator's own records: the bytes an
 * allocation may use, resizing in place, and aligned placement. cl/clheap.cl builds
 * clheap_usable_size, clheap_realloc, clheap_calloc and clheap_aligned_alloc from these;
 * the C11 core (tests/core_heap.c) runs the same functions under ThreadSanitizer.
 *
 * Usable bytes: a slot of the allocation's class (BlockAlloc, TierAlloc's small tier), a
 * BitmapAlloc slot, a large allocation's frames from the pointer on, a chunk's payload
 * up to the next chunk (CircularMalloc family), a FreeHeap block's payload. The bump
 * allocators keep no sizes, so they have none. The pointer is checked as free checks it,
 * and a pointer free would refuse is counted as free counts it: 0 usable bytes is a
 * pointer that names no live allocation.
 *
 * In place: realloc keeps the pointer when the allocation already holds the new size
 * (C allows that when shrinking; no slot or chunk is split). A TierAlloc large
 * allocation also grows over the frames after it, when the page tier has them free, and
 * shrinks by giving back the frames it no longer needs.
 *
 * Aligned: alignments of 16 B or less are every allocation's. Beyond that:
 *   TierAlloc  a class whose slot size is a multiple of the alignment, where the frames
 *              (so every block) lie on it, or above a frame where the slot it got does
 *              (a run's blocks are whole segments); otherwise a large allocation: frames
 *              for the size plus the alignment, of which those before the aligned address
 *              and after the end go back to the page tier at once, and the pointer lies
 *              `offset` units into the first frame kept (R1);
 *   BlockAlloc such a class, or refused;
 *   BitmapAlloc every slot, where the slot size and the pool's start are multiples of
 *              the alignment, or refused;
 *   bump       the size plus the alignment, the pointer rounded up;
 *   FreeHeap   a block for the size plus the alignment, the units before the aligned
 *              payload a free block of their own (clheap_freeheap_aligned_unit);
 *   CircularMalloc family  refused: an aligned pointer would need a chunk split before
 *              it, and walkers that claim chunks only split them at the tail.
 * A refusal is NULL counted as a bad size, as is an alignment that is not a power of
 * two or is above CLHEAP_MAX_ALIGNMENT.
 *
 * Invariants when no kernel runs (verified by clheap_heap_check), beyond cl/clheap_tier.h's:
 *   R1  a large allocation's header word CLHEAP_BLOCK_WORD_OFFSET is less than a frame's
 *       units; its pointer is its first frame's unit plus that offset, and free,
 *       usable_size and realloc accept that pointer only;
 *   R2  no class word is CLHEAP_TIER_RESIZING (the check reports such a frame as neither
 *       free nor a block's start).
 * Linearisation points: a resize in place, the CAS of the class word from LARGE to
 * RESIZING; a free or resize that meets RESIZING is a free of no live allocation
 * (counted, nothing changed), and the resize ends with the store of LARGE.
 * Happens-before: the resizer's CAS, then clheap_fence_acquire, reads the length and
 * offset the allocation's malloc or last resize released; it writes the new frames'
 * owners and the length, then clheap_fence_release, then LARGE, which a later free reads
 * before its clheap_fence_acquire. Frames a shrink gives back follow the new length and
 * clheap_fence_release (the caller's last writes to them), as a free's do. Frames a
 * grow claims are read only after clheap_fence_acquire (cl/clheap_pages.h). */
#ifndef CLHEAP_RESIZE_H
#define CLHEAP_RESIZE_H

#include "clheap_bump.h"
#include "clheap_circular.h"
#include "clheap_freeheap.h"
#include "clheap_tier.h"

/* The address of unit `unit` of the heap, as a number (alignment tests only). */
static CLHEAP_INLINE clheap_size clheap_unit_address(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit)
{
    return (clheap_size)(uintptr_t)(h + (clheap_size)unit * 4u);
}

/* 1 if clheap_aligned_alloc takes `alignment`: a power of two up to CLHEAP_MAX_ALIGNMENT. */
static CLHEAP_INLINE int clheap_alignment_valid(clheap_size alignment)
{
    return alignment && !(alignment & (alignment - 1u)) && alignment <= CLHEAP_MAX_ALIGNMENT;
}

/* The first unit at or after `unit` whose address is a multiple of `alignment`. */
static CLHEAP_INLINE clheap_u32 clheap_align_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_size alignment)
{
    clheap_size address = clheap_unit_address(h, unit);
    return unit + (clheap_u32)(((alignment - address % alignment) % alignment) / CLHEAP_UNIT);
}

/* ---- copying and zeroing whole 16-byte units ---------------------------------------- */

#ifdef __OPENCL_C_VERSION__
static CLHEAP_INLINE void clheap_copy_units(__global void *dst, __global const void *src, clheap_size units)
{
    __global uint4 *d = (__global uint4 *)dst;
    __global const uint4 *s = (__global const uint4 *)src;
    for (clheap_size i = 0; i < units; i++)
        d[i] = s[i];
}
static CLHEAP_INLINE void clheap_zero_units(__global void *dst, clheap_size units)
{
    __global uint4 *d = (__global uint4 *)dst;
    for (clheap_size i = 0; i < units; i++)
        d[i] = (uint4)(0u);
}
#else
#include <string.h>
static CLHEAP_INLINE void clheap_copy_units(void *dst, const void *src, clheap_size units)
{
    memcpy(dst, src, units * CLHEAP_UNIT);
}
static CLHEAP_INLINE void clheap_zero_units(void *dst, clheap_size units)
{
    memset(dst, 0, units * CLHEAP_UNIT);
}
#endif

/* ---- usable bytes, checked as free checks the pointer ------------------------------- */

/* A large allocation at `unit`, first frame f, whose class word read LARGE. */
static CLHEAP_INLINE clheap_size clheap_tier_large_usable(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 f)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, f);
    clheap_fence_acquire(); /* the length and offset released before LARGE */
    clheap_u32 frames = clheap_load32(header + CLHEAP_BLOCK_WORD_ITER);
    clheap_u32 offset = clheap_load32(header + CLHEAP_BLOCK_WORD_OFFSET), frame_units = h[CLHEAP_HDR_FRAME_UNITS];
    if (unit != h[CLHEAP_HDR_POOL_START] + f * frame_units + offset || offset >= frames * frame_units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return 0u;
    }
    return ((clheap_size)frames * frame_units - offset) * CLHEAP_UNIT;
}

/* BlockAlloc and TierAlloc: a slot whose allocation bit is set, or a large allocation
 * (*large); *unit and *frame get the pointer's unit and its block or allocation's first
 * frame, for clheap_blocks_resize_in_place. */
static CLHEAP_INLINE clheap_size clheap_blocks_usable_at(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr,
                                                         clheap_u32 *unit_out, clheap_u32 *frame_out, int *large)
{
    clheap_u32 frame = 0u, cls = 0u, slot, incarnation;
    clheap_u32 unit = clheap_frame_locate(h, ptr, &frame, &cls, &incarnation);
    *unit_out = unit;
    *frame_out = frame;
    *large = unit && cls == CLHEAP_TIER_LARGE;
    if (!unit)
        return 0u;
    if (*large)
        return clheap_tier_large_usable(h, unit, frame);
    if (!clheap_block_slot_in(h, unit, frame, cls, &slot))
        return 0u;
    if (!((clheap_load64(clheap_block_alloc_bits(h, frame)) >> slot) & 1u)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
        return 0u;
    }
    return h[CLHEAP_HDR_CLASS_BYTES + cls - 1u];
}

static CLHEAP_INLINE clheap_size clheap_blocks_usable(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    clheap_u32 unit, frame;
    int large;
    return clheap_blocks_usable_at(h, ptr, &unit, &frame, &large);
}

/* BitmapAlloc: a slot whose free bit is clear. */
static CLHEAP_INLINE clheap_size clheap_bitmap_usable(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], slot_units = h[CLHEAP_HDR_SLOT_UNITS];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first, first + h[CLHEAP_BM_FREE + CLHEAP_BM_BITS] * slot_units);
    if (!unit)
        return 0u;
    if ((unit - first) % slot_units) {
        clheap_count_error(h, CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
        return 0u;
    }
    if (clheap_bm_get(h, CLHEAP_BM_FREE, (unit - first) / slot_units)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
        return 0u;
    }
    return (clheap_size)slot_units * CLHEAP_UNIT;
}


/* CircularMalloc family: a used chunk's payload, up to the next chunk. */
static CLHEAP_INLINE clheap_size clheap_circular_usable(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr, int fused)
{
    clheap_u32 o, next;
    if (!clheap_circular_free_check(h, ptr, fused, &o, &next))
        return 0u;
    return next > o + 1u ? (clheap_size)(next - o - 1u) * CLHEAP_UNIT : 0u;
}

/* FreeHeap: a used block's payload (checked as clheap_freeheap_free_unit checks it). */
static CLHEAP_INLINE clheap_size clheap_freeheap_usable(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
    clheap_u32 first = h[CLHEAP_HDR_POOL_START], end = h[CLHEAP_HDR_POOL_END];
    clheap_u32 unit = clheap_unit_of_free(h, ptr, first + 1u, end);
    if (!unit)
        return 0u;
    clheap_u32 b = unit - 1u;
    CLHEAP_GLOBAL clheap_u32 *header = clheap_fh_unit(h, b);
    clheap_u32 tag = clheap_load32(header + CLHEAP_FH_WORD_TAG), size = clheap_load32(header + CLHEAP_FH_WORD_SIZE);
    if (tag == CLHEAP_FLAG_USED(b) && size <= end - unit - 1u &&
        clheap_load32(clheap_fh_unit(h, b + size + 1u) + CLHEAP_FH_WORD_POS) == tag)
        return (clheap_size)size * CLHEAP_UNIT;
    clheap_count_error(h, tag == CLHEAP_FLAG_FREE(b) || tag == CLHEAP_FLAG_DEAD ? CLHEAP_HDR_ERR_DOUBLE_FREE
                                                                               : CLHEAP_HDR_ERR_FREE_NOT_CHUNK);
    return 0u;
}

/* Where an allocator records the bytes asked for (the statistics' requested bytes), an
 * allocation that realloc keeps in place records its new size. */
static CLHEAP_INLINE void clheap_circular_note_size(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr,
                                                    clheap_size bytes)
{
    clheap_u32 o = clheap_unit_of_free(h, ptr, h[CLHEAP_HDR_POOL_START] + 1u, h[CLHEAP_HDR_POOL_END]) - 1u;
    clheap_store32(clheap_chunk(h, o) + CLHEAP_CHUNK_WORD_REQUEST, (clheap_u32)bytes);
}
static CLHEAP_INLINE void clheap_freeheap_note_size(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr,
                                                    clheap_size bytes)
{
    clheap_u32 b = clheap_unit_of_free(h, ptr, h[CLHEAP_HDR_POOL_START] + 1u, h[CLHEAP_HDR_POOL_END]) - 1u;
    clheap_store32(clheap_fh_unit(h, b) + CLHEAP_FH_WORD_BYTES, bytes > 0xffffffffu ? 0xffffffffu : (clheap_u32)bytes);
}

/* ---- TierAlloc: large allocations resized in place ----------------------------------- */

/* Resizes the large allocation at `unit` (first frame f, class word read LARGE) to hold
 * `bytes` (1 up to the pool's bytes) without moving it: 1 if done. It grows over the
 * frames after it if the page tier gives all of them (one claim, all or none), and
 * shrinks by giving back the frames it no longer needs. 0 if the frames are not free or
 * another free or resize holds the allocation (R2): the caller moves it. */
static CLHEAP_INLINE int clheap_tier_resize_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 f,
                                                  clheap_size bytes)
{
    CLHEAP_GLOBAL clheap_u32 *header = clheap_block_header(h, f);
    if (clheap_cas32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE, CLHEAP_TIER_RESIZING) != CLHEAP_TIER_LARGE)
        return 0;
    clheap_fence_acquire(); /* the length and offset its malloc or last resize released */
    clheap_u32 frames = clheap_load32(header + CLHEAP_BLOCK_WORD_ITER);
    clheap_u32 offset = unit - h[CLHEAP_HDR_POOL_START] - f * h[CLHEAP_HDR_FRAME_UNITS];
    clheap_u32 need = clheap_tier_frames_for(h, bytes + (clheap_size)offset * CLHEAP_UNIT);
    int done = need != 0u;
    if (done && need > frames) {
        done = f + need <= h[CLHEAP_HDR_FRAME_COUNT] && clheap_pages_claim_frames(h, f + frames, need - frames);
        if (done) {
            clheap_fence_acquire(); /* the frames' headers as their last owner left them */
            clheap_add32(clheap_pages_used_stripe(h, f + frames), need - frames);
            for (clheap_u32 g = f + frames; g < f + need; g++)
                clheap_store32(clheap_block_header(h, g) + CLHEAP_BLOCK_WORD_OWNER, f);
            clheap_store32(header + CLHEAP_BLOCK_WORD_ITER, need);
        }
    } else if (done && need < frames) {
        clheap_store32(header + CLHEAP_BLOCK_WORD_ITER, need);
        clheap_fence_release(); /* the caller's last writes to the frames it gives back */
        clheap_pages_release(h, f + need, frames - need);
    }
    clheap_fence_release(); /* owners and length before LARGE */
    clheap_store32(header + CLHEAP_BLOCK_WORD_CLASS, CLHEAP_TIER_LARGE);
    return done;
}

/* TierAlloc and BlockAlloc: 1 if realloc may keep the allocation that
 * clheap_blocks_usable_at checked (`usable` bytes, its unit, frame and kind) for `bytes`: it
 * holds them, or (a TierAlloc large allocation) was resized to. */
static CLHEAP_INLINE int clheap_blocks_resize_in_place(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 unit, clheap_u32 frame,
                                                       int large, clheap_size usable, clheap_size bytes)
{
    if (!large)
        return bytes <= usable;
    return bytes <= (clheap_size)h[CLHEAP_HDR_FRAME_COUNT] * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT &&
           clheap_tier_resize_large(h, unit, frame, bytes);
}


/* ---- aligned placement ---------------------------------------------------------------- */


/* TierAlloc and BlockAlloc: the bytes to ask malloc for so that its slot lies on
 * `alignment` (above 16): the smallest class from `bytes`'s whose slot size is a
 * multiple of it, where the pool's frames lie on it; 0 if there is none. `verified` (the
 * caller tests the address and has another way: TierAlloc) also where only blocks that
 * begin on it serve it: an alignment above a frame, with the pool on it up to 4 KiB
 * (host/heap_layout.c); a run's blocks are whole segments. TierAlloc's last resort may
 * also answer from a larger class. */
static CLHEAP_INLINE clheap_size clheap_blocks_aligned_bytes(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment,
                                                             clheap_size bytes, int verified)
{
    clheap_size frame_bytes = (clheap_size)h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT;
    clheap_size pool = clheap_unit_address(h, h[CLHEAP_HDR_POOL_START]);
    int frames_on_it = frame_bytes % alignment == 0u && pool % alignment == 0u;
    if (!frames_on_it && !(verified && pool % (alignment < 4096u ? alignment : 4096u) == 0u))
        return 0u;
    for (clheap_u32 c = clheap_class_for(h, bytes); c < h[CLHEAP_HDR_CLASS_COUNT]; c++)
        if (h[CLHEAP_HDR_CLASS_BYTES + c] % alignment == 0u)
            return h[CLHEAP_HDR_CLASS_BYTES + c];
    return 0u;
}

/* TierAlloc: a large allocation of `bytes` (1 up to the pool's bytes) whose pointer lies
 * on `alignment`; its unit, or 0 (counted). It takes frames for bytes + alignment - 16,
 * keeps those from the one holding the aligned address for `bytes`, and gives the
 * others back. */
static CLHEAP_INLINE clheap_u32 clheap_tier_aligned_large(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment,
                                                          clheap_size bytes, clheap_u32 seed)
{
    clheap_u32 frames = clheap_tier_frames_for(h, bytes + alignment - CLHEAP_UNIT);
    clheap_u32 frame_units = h[CLHEAP_HDR_FRAME_UNITS];
    clheap_u32 f = frames ? clheap_tier_take_frames(h, frames, seed) : CLHEAP_BM_FAIL;
    if (f == CLHEAP_BM_FAIL) {
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
        return 0u;
    }
    clheap_u32 start = h[CLHEAP_HDR_POOL_START] + f * frame_units;
    clheap_u32 pad = clheap_align_unit(h, start, alignment) - start; /* units */
    clheap_u32 skip = pad / frame_units, offset = pad % frame_units;
    clheap_u32 keep = clheap_tier_frames_for(h, bytes + (clheap_size)offset * CLHEAP_UNIT);
    if (skip)
        clheap_pages_release(h, f, skip);
    if (skip + keep < frames)
        clheap_pages_release(h, f + skip + keep, frames - skip - keep);
    return clheap_tier_mark_large_at(h, f + skip, keep, offset);
}


/* Bump allocators: bytes + alignment - 16 taken, the pointer rounded up. */
static CLHEAP_INLINE clheap_u32 clheap_bump_aligned_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment,
                                                         clheap_size bytes, int wrap)
{
    clheap_size pool = (clheap_size)(h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START]) * CLHEAP_UNIT;
    clheap_size padded = bytes <= pool ? bytes + alignment - CLHEAP_UNIT : bytes; /* too large: refused below */
    clheap_u32 unit = wrap ? clheap_atomic_wrap_malloc_unit(h, padded) : clheap_atomic_malloc_unit(h, padded);
    return unit ? clheap_align_unit(h, unit, alignment) : 0u;
}

/* FreeHeap (under its lock, as its malloc): a block for `bytes` whose payload lies on
 * `alignment` (above 16 B). It takes need + alignment / 16 - 1 + CLHEAP_FH_MIN_BLOCK
 * units; the units before the first payload unit on the alignment at least a whole block
 * in (or none, where the payload already lies on it) become a free block of their own. F5
 * holds: the block taken was free, so the one before it is allocated (or it starts the
 * pool), and the one after the gap is this allocation. What the slack leaves after the
 * payload stays in it (usable_size counts it). Its unit, or 0 (counted). */
static CLHEAP_INLINE clheap_u32 clheap_freeheap_aligned_unit(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment,
                                                             clheap_size bytes)
{
    clheap_u32 need = clheap_fh_units_for(h, bytes);
    clheap_u32 slack = (clheap_u32)(alignment / CLHEAP_UNIT) - 1u + CLHEAP_FH_MIN_BLOCK;
    if (!need || !clheap_fh_lock(h))
        return 0u;
    clheap_u32 asked = bytes > 0xffffffffu ? 0xffffffffu : (clheap_u32)bytes; /* for the statistics */
    clheap_u32 unit = need + slack > need ? clheap_fh_take(h, need + slack, asked) : 0u;
    if (unit) {
        clheap_u32 b = unit - 1u, size = clheap_fh_size(h, b), at = clheap_align_unit(h, unit, alignment);
        if (at != unit && at - unit < CLHEAP_FH_MIN_BLOCK)
            at = clheap_align_unit(h, unit + CLHEAP_FH_MIN_BLOCK, alignment);
        clheap_u32 gap = at - unit; /* the free block [b, b + gap) */
        if (gap) {
            clheap_fh_write_block(h, b, gap - 2u, 0u, CLHEAP_FLAG_FREE(b), 0u);
            clheap_fh_insert(h, clheap_fh_entries(h), b);
            clheap_fh_write_block(h, at - 1u, size - gap, 0u, CLHEAP_FLAG_USED(at - 1u), asked);
        }
        unit = at;
    }
    clheap_fh_unlock(h);
    if (!unit)
        clheap_count_error(h, CLHEAP_HDR_ERR_OUT_OF_MEMORY);
    return unit;
}

/* BitmapAlloc: 1 if every slot lies on `alignment`. */
static CLHEAP_INLINE int clheap_bitmap_aligned(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment)
{
    return ((clheap_size)h[CLHEAP_HDR_SLOT_UNITS] * CLHEAP_UNIT) % alignment == 0u &&
           clheap_unit_address(h, h[CLHEAP_HDR_POOL_START]) % alignment == 0u;
}


#endif
