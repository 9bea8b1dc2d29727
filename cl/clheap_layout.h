/* The device heap's layout: shared, word for word, by the OpenCL C allocators, the host
 * library (which reads heaps back to check them) and the host-compiled core.
 *
 * The heap is one buffer of 16-byte units. Unit 0 onward holds the header (32-bit
 * words, indices below); the pool starts at unit HDR_POOL_START. The bitmap kinds'
 * bitmaps and block headers follow the pool (so growth extends it in place); FreeHeap's
 * free-heap array precedes it, and after a growth follows it. Everything kept in the
 * heap between kernels is an offset in 16-byte units, never a pointer: 32-bit offsets
 * address 64 GiB, the fused variants' 31-bit offsets 32 GiB. Offset 0 is the header,
 * so an offset of 0 means NULL. */
#ifndef CLHEAP_LAYOUT_H
#define CLHEAP_LAYOUT_H

#define CLHEAP_UNIT 16u
#define CLHEAP_MAGIC 0x50484c43u /* "CLHP" */
#define CLHEAP_LAYOUT_VERSION 18u

/* Allocator kinds (CLHEAP_KIND_*) and the device's error counter words (CLHEAP_HDR_ERR_*):
 * generated, with the C API's names for them, from cmake/vocabulary.cmake. */
#include "clheap_vocabulary.h"

/* Header word indices. */
#define CLHEAP_HDR_MAGIC 0
#define CLHEAP_HDR_VERSION 1
#define CLHEAP_HDR_KIND 2
#define CLHEAP_HDR_POOL_START 3   /* unit of the first chunk (bump: first allocation) */
#define CLHEAP_HDR_POOL_END 4     /* unit of the sentinel header (bump: one past the end) */
#define CLHEAP_HDR_OFFSET_COUNT 5 /* roving offsets: 1, or one per compute unit */
#define CLHEAP_HDR_HEAP_UNITS 6   /* circular: units per pre-split sub-heap */
#define CLHEAP_HDR_PRESPLIT 7     /* CLHEAP_PRESPLIT_* */
#define CLHEAP_HDR_PRESPLIT_ARG 8 /* binary: root chunk units R; uniform: chunk units */
#define CLHEAP_HDR_PRESPLIT_LEVELS 9
#define CLHEAP_HDR_CHUNKS_PER_HEAP 10
/* Words CLHEAP_HDR_ERR_FIRST .. + CLHEAP_HDR_ERR_COUNT: the error counters (clheap_vocabulary.h). */
/* Bump allocators: a 64-bit counter (words 24-25, 8-byte aligned) of units handed out
 * since pool start; 64 bits so that failed requests can never wrap it. */
#define CLHEAP_HDR_BUMP 24
/* FreeHeap (cl/clheap_freeheap.h): the lock of its serial operations, the unit of its
 * free-heap array (entry i is word i; word 0 unused), the array's capacity in entries
 * and how many are in use (the free blocks). */
#define CLHEAP_HDR_FH_LOCK 27
#define CLHEAP_HDR_FH_ENTRIES 24
#define CLHEAP_HDR_FH_CAPACITY 25
#define CLHEAP_HDR_FH_COUNT 26
/* Circular family: roving offsets start here, CLHEAP_HDR_OFFSET_COUNT of them. */
#define CLHEAP_HDR_OFFSETS 32
#define CLHEAP_HDR_FIXED_WORDS 32

/* Bitmap allocators (kinds 7 and 8). Their pool holds slots (7) or frames (8). */
#define CLHEAP_HDR_SLOT_UNITS 8     /* BitmapAlloc: units per slot */
#define CLHEAP_HDR_CLASS_COUNT 10   /* blocks: size classes */
#define CLHEAP_HDR_FRAME_UNITS 11   /* blocks: units per frame */
#define CLHEAP_HDR_FRAME_COUNT 12   /* blocks: frames in the pool */
#define CLHEAP_HDR_BLOCK_HEADERS 13 /* blocks: unit of the per-frame header array */
#define CLHEAP_HDR_BITMAP_UNITS 14  /* units of the bitmap region (for initialisation) */
#define CLHEAP_HDR_BITMAP_FIRST 15  /* unit where the bitmap region starts */
#define CLHEAP_HDR_SEGMENT_ORDER 9  /* TierAlloc: a segment is 2^S = 64 frames (cl/clheap_pages.h) */
#define CLHEAP_HDR_HINT_SLOTS 26    /* TierAlloc: block hints per class (cl/clheap_tier.h) */
#define CLHEAP_HDR_PAGES_SPLITTING 27 /* TierAlloc: whole segments being broken now (0 between kernels) */
#define CLHEAP_HDR_TIER_TYPED 28    /* TierAlloc: 1: objects only in their own class's blocks (cl/clheap_tier.h) */
#define CLHEAP_HDR_PAGES_LOW_FRONTIER 29  /* TierAlloc: where the next large request under a segment begins (a hint) */
#define CLHEAP_HDR_PAGES_HIGH_FRONTIER 30 /* TierAlloc: where the next one over a segment ends (a hint) */
#define CLHEAP_HDR_PAGES_LAST_BREAK 31    /* TierAlloc: the segment broken last, where looks in F begin (a hint) */
/* Bitmap kinds: the width of the device's atomics the layout was planned for, 64 or 32.
 * At 32 a 64-bit word is split (cl/clheap_port.h): a block has at most 32 slots (W2) and
 * TierAlloc no hint slot in use (W3). */
#define CLHEAP_HDR_ATOMIC_BITS 25
#define CLHEAP_HDR_SETTLE_CURSOR 24 /* TierAlloc (the bump counter's word): the unsettled-blocks container the next bounded settle starts at (a hint) */
/* Size classes (blocks): class c's slot bytes, frames per block, slots per block and
 * (TierAlloc) blocks per run, the unit its per-work-group-slot hints bump through. */
#define CLHEAP_MAX_CLASSES 32
#define CLHEAP_HDR_CLASS_BYTES 32
#define CLHEAP_HDR_CLASS_FRAMES (CLHEAP_HDR_CLASS_BYTES + CLHEAP_MAX_CLASSES)
#define CLHEAP_HDR_CLASS_CAPACITY (CLHEAP_HDR_CLASS_FRAMES + CLHEAP_MAX_CLASSES)
#define CLHEAP_HDR_CLASS_RUN (CLHEAP_HDR_CLASS_CAPACITY + CLHEAP_MAX_CLASSES)
#define CLHEAP_HDR_CLASS_HINTS (CLHEAP_HDR_CLASS_RUN + CLHEAP_MAX_CLASSES) /* hint slots in use, <= HINT_SLOTS */
/* Bitmap descriptors: unit of the first container, bits, levels, and the container
 * index where each level starts. */
#define CLHEAP_BM_UNIT 0
#define CLHEAP_BM_BITS 1
#define CLHEAP_BM_LEVELS 2
#define CLHEAP_BM_LEVEL0 3
#define CLHEAP_BM_MAX_LEVELS 6
#define CLHEAP_BM_DESC_WORDS 9
#define CLHEAP_HDR_BITMAPS (CLHEAP_HDR_CLASS_HINTS + CLHEAP_MAX_CLASSES)
/* BitmapAlloc: bitmap 0 = free slots. Blocks: bitmap 0 = free frames, then for each
 * class c: 1 + 2c = allocated blocks (level 0 only: never searched), 2 + 2c = active
 * (allocated, not full) blocks.
 * TierAlloc: the same, bitmap 0 being the page tier's free frames of broken segments,
 * then 1 + 2 * count its whole free segments, 2 + 2 * count its unsettled blocks (one
 * level, bit = a block's first frame, cl/clheap_tier.h). */
#define CLHEAP_PAGE_BITMAPS 2
#define CLHEAP_BM_DESC(i) (CLHEAP_HDR_BITMAPS + (i) * CLHEAP_BM_DESC_WORDS)
#define CLHEAP_BM_FREE CLHEAP_BM_DESC(0)
#define CLHEAP_BM_ALLOCATED(c) CLHEAP_BM_DESC(1 + 2 * (c))
#define CLHEAP_BM_ACTIVE(c) CLHEAP_BM_DESC(2 + 2 * (c))
#define CLHEAP_BM_SEGMENTS(classes) CLHEAP_BM_DESC(1 + 2 * (classes))
#define CLHEAP_BM_UNSETTLED(classes) CLHEAP_BM_DESC(2 + 2 * (classes))
#define CLHEAP_HDR_BITMAP_WORDS \
    (CLHEAP_HDR_BITMAPS + (1 + 2 * CLHEAP_MAX_CLASSES + CLHEAP_PAGE_BITMAPS) * CLHEAP_BM_DESC_WORDS)
/* TierAlloc: per class, CLHEAP_HDR_HINT_SLOTS 64-bit run hints (cl/clheap_tier.h):
 * high word the run's first frame + 1 (0: none), low word the slots handed out; after
 * all of them, one 32-bit spare word per hint, in the same order (0, or a run opened
 * ahead: its first frame + 1). */
#define CLHEAP_HDR_HINT_FIRST (CLHEAP_HDR_PAGES_USED + CLHEAP_PAGES_USED_STRIPES * CLHEAP_PAGES_USED_STRIDE)
/* The first spare word, and the words the hints and spares take, for `classes` classes of
 * `slots` hint slots (the host passes 64-bit counts, so a corrupted header cannot wrap). */
#define CLHEAP_HDR_SPARE_FIRST(classes, slots) (CLHEAP_HDR_HINT_FIRST + 2u * (classes) * (slots))
/* After the spares (on an even word), CLHEAP_TIER_TRACK_SLOTS 64-bit track words per hint,
 * in the same order: 0, or a run whose emptied blocks are held for it (cl/clheap_tier.h,
 * "Recycling"): high word its first frame + 1, low word the blocks that emptied
 * (CLHEAP_TIER_EMPTIED_MASK) and two flags: stolen from, and a stealer still releasing
 * the run's held blocks (never set between kernels). A program claims the first
 * CLHEAP_TIER_TRACKS of them (cl/clheap_config.h); every program steals from all of them. */
#define CLHEAP_TIER_TRACK_SLOTS 8u
#define CLHEAP_TIER_STOLEN 0x80000000u
#define CLHEAP_TIER_WALKING 0x40000000u
#define CLHEAP_TIER_EMPTIED_MASK 0x3FFFFFFFu
#define CLHEAP_HDR_TRACK_FIRST(classes, slots) ((CLHEAP_HDR_SPARE_FIRST(classes, slots) + (classes) * (slots) + 1u) / 2u * 2u)
#define CLHEAP_TIER_HINT_WORDS(classes, slots) ((3u + 2u * CLHEAP_TIER_TRACK_SLOTS) * (classes) * (slots) + 1u)
/* TierAlloc: the frames the page tier has handed out (cl/clheap_pages.h, P5), the sum
 * (mod 2^32) of CLHEAP_PAGES_USED_STRIPES words a 128-byte line apart, before the hints;
 * a take or release adds to the stripe of its first frame's segment. Why striped: one
 * word took an add from every block a launch emptied, and a launch of frees that
 * emptied many blocks waited on it. */
#define CLHEAP_PAGES_USED_STRIPES 32u
#define CLHEAP_PAGES_USED_STRIDE 32u
/* Hints in the stripes' otherwise unused words (any value is valid; a fresh heap has 0):
 * word 1 of a stripe's line is set by a free that marks a block of that stripe's
 * segments unsettled, and cleared by a request about to fail before it settles every
 * container (cl/clheap_tier.h, clheap_tier_settle_marked); word 2 of stripe 0 is set by
 * every run a hint installs and cleared before every run is closed
 * (clheap_tier_close_all). Why: each request of a launch that asks for more than the
 * pool did both before its NULL, a scan of the whole unsettled bitmap and a load of
 * every hint, so its NULLs cost many times what its successes did. */
#define CLHEAP_PAGES_MARKED_WORD 1u
#define CLHEAP_HDR_RUNS_OPEN (CLHEAP_HDR_PAGES_USED + 2)
/* Word 8 of stripe 0 (its own 32-byte sector: frees read it, takes add to word 0): set
 * by a request on its way to NULL, cleared by an opener that finds the pool mostly free;
 * while set, frees keep no emptied block (cl/clheap_tier.h, "Keeping"). Any value is
 * valid. */
#define CLHEAP_HDR_KEEP_FULL (CLHEAP_HDR_PAGES_USED + 8)
#define CLHEAP_HDR_PAGES_USED ((CLHEAP_HDR_BITMAP_WORDS + 31) & ~31)

/* Block header, one per frame (2 units, fixed offsets, the same in every block so a
 * stale reference always finds a header where it looks):
 *   word 0 class + 1 on a block's first frame (0: none), word 1 the block's first frame,
 *   words 2-3 allocation bitmap (1 = slot taken; slots past the capacity and every slot
 *   of a free frame are 1, so nothing can be reserved there), words 4-5 iteration
 *   bitmap (parallel_do's snapshot), word 6 the block's incarnation on its first frame
 *   (cl/clheap_blocks.h: bumped whenever a block there is reclaimed, so a free that
 *   raced the reclaim sees that its block is gone; any start value). */
#define CLHEAP_BLOCK_HEADER_UNITS 2u
#define CLHEAP_BLOCK_WORD_CLASS 0
#define CLHEAP_BLOCK_WORD_OWNER 1
#define CLHEAP_BLOCK_WORD_ALLOC 2
#define CLHEAP_BLOCK_WORD_ITER 4
#define CLHEAP_BLOCK_WORD_INCARNATION 6
/* TierAlloc, untyped heaps, a block of a tracked run (cl/clheap_tier.h, "Recycling"): word
 * 5 the run's first frame + 1, word 7 its track's slot + 1 (0 in every other block). */
#define CLHEAP_BLOCK_WORD_RUN 5
#define CLHEAP_BLOCK_WORD_ANCHOR 7
/* TierAlloc: the class word of an emptied block held for its run: CLHEAP_TIER_HELD in
 * bits 25 - 31, the slot of the track it is held for (its anchor - 1, below 2^20: 32
 * classes x 4096 hint slots x 8 tracks) in bits 5 - 24, its class in bits 0 - 4. Why the
 * track in the word: the stealers and the completer of a run release its held blocks
 * with one CAS of this word, which then cannot take a block that a later run reusing
 * the frames holds for another track. */
#define CLHEAP_TIER_HELD 0x48000000u /* "H" */
#define CLHEAP_TIER_HELD_MASK 0xFE000000u
#define CLHEAP_TIER_HELD_WORD(anchor, c) (CLHEAP_TIER_HELD | ((anchor) - 1u) << 5 | (c))
#define CLHEAP_TIER_IS_HELD(word) (((word) & CLHEAP_TIER_HELD_MASK) == CLHEAP_TIER_HELD)
#define CLHEAP_TIER_HELD_CLASS(word) ((word) & 31u)
#define CLHEAP_TIER_HELD_ANCHOR(word) ((((word) >> 5) & 0xFFFFFu) + 1u)
/* TierAlloc: the class word of a large allocation's first frame (no block has it); its
 * word CLHEAP_BLOCK_WORD_ITER holds the allocation's length in frames, and word
 * CLHEAP_BLOCK_WORD_OFFSET the units from the frame to the pointer malloc returned
 * (0 but for aligned_alloc: cl/clheap_resize.h). */
#define CLHEAP_TIER_LARGE 0x4C524745u /* "LRGE" */
#define CLHEAP_BLOCK_WORD_OFFSET 5
/* TierAlloc: the class word of a large allocation that one realloc is resizing in place
 * (cl/clheap_resize.h); never seen between kernels. */
#define CLHEAP_TIER_RESIZING 0x52535A45u /* "RSZE" */

#define CLHEAP_PRESPLIT_BINARY 0  /* eq. 1 of Vinkler & Havran: C(i) = R / 2^floor(log2 i) */
#define CLHEAP_PRESPLIT_UNIFORM 1 /* equal chunks (the ScatterAlloc-like baseline) */

/* Chunk header: one 16-byte unit before each payload, so payloads stay 16-byte aligned.
 *   unfused (CMalloc, CMMalloc): word 0 flag, word 1 next chunk's unit, word 2 bytes requested
 *   fused (CFMalloc, CFMMalloc): words 0-1 one 64-bit word {check:32 | used:1 | next:31},
 *                                word 2 bytes requested
 *   both: word 3 the previous chunk's unit (0 for the first chunk; cl/clheap_circular.h)
 * Flags are tagged with a hash of the header's own unit: FREE(x) and USED(x) are
 * distinct non-zero values found only at x, and a header merged away is set DEAD (0).
 * A walker holding a stale offset (the header was merged into its predecessor and may
 * now be user data) therefore cannot mistake user data for a header except with
 * probability 2^-32, and restarts from the pool's first chunk, whose header is never
 * merged away. */
#define CLHEAP_CHUNK_WORD_FLAG 0
#define CLHEAP_CHUNK_WORD_NEXT 1
#define CLHEAP_CHUNK_WORD_REQUEST 2
#define CLHEAP_CHUNK_WORD_PREV 3
#define CLHEAP_FLAG_DEAD 0u
#define CLHEAP_FUSED_USED_BIT 0x80000000u
#define CLHEAP_FUSED_NEXT_MASK 0x7fffffffu

/* FreeHeap block (cl/clheap_freeheap.h): a header unit, the payload, a footer unit. */
#define CLHEAP_FH_WORD_SIZE 0  /* header and footer: payload units */
#define CLHEAP_FH_WORD_POS 1   /* header: position in the free-heap (0: allocated); footer: the header's tag */
#define CLHEAP_FH_WORD_TAG 2   /* header: CLHEAP_FLAG_FREE(b), CLHEAP_FLAG_USED(b) or DEAD */
#define CLHEAP_FH_WORD_BYTES 3 /* header: bytes asked for */
#define CLHEAP_FH_MIN_BLOCK 3u /* header, one payload unit, footer */

#define CLHEAP_TAG(unit) ((((unit) * 0x9E3779B1u) ^ 0x5BD1E995u) | 2u)
#define CLHEAP_FLAG_FREE(unit) (CLHEAP_TAG(unit) & ~1u)
#define CLHEAP_FLAG_USED(unit) (CLHEAP_TAG(unit) | 1u)

#endif
