/* clheap device API: include this from your kernels, built with the options that
 * clheap_heap_build_options() returns (they choose the allocator), or let
 * clheap_heap_build_program() prepend it for you.
 *
 *   __kernel void k(__global clheap_heap *heap, ...) {
 *       __global int *p = clheap_malloc(heap, 64 * sizeof(int));
 *       if (p) { ...; clheap_free(heap, p); }
 *   }
 *
 * clheap_malloc returns NULL when the heap is full (in bounded time, never waiting for
 * another work-item) or the size is 0 or larger than the pool; every allocation is
 * 16-byte aligned. Pointers are valid only within one kernel launch: to keep an
 * allocation between launches store clheap_unit_of(heap, p), a 32-bit offset in 16-byte
 * units (0 = NULL), and turn it back with clheap_pointer(heap, unit). Errors (bad
 * frees, NULL returns) are counted in the heap header; the host reads them with
 * clheap_heap_read_errors(). */
#ifndef CLHEAP_CL
#define CLHEAP_CL

#include "clheap_port.h"
#include "clheap_config.h"
#include "clheap_layout.h"
#include "clheap_common.h"
#include "clheap_bump.h"
#include "clheap_circular.h"
#include "clheap_blocks.h"
#include "clheap_tier.h"
#include "clheap_freeheap.h"
#include "clheap_resize.h"

#ifndef CLHEAP_ALLOCATOR
#error "clheap.cl: build with clheap_heap_build_options() (it defines CLHEAP_ALLOCATOR)"
#endif
/* Without 64-bit atomics: every allocator but the fused variants, whose headers are
 * swapped whole (the host refuses them first, host/heap.c; this names the reason for a
 * build made by hand). */
#if !CLHEAP_ATOMICS64 && (CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMALLOC || CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMMALLOC)
#error "clheap.cl: this allocator needs 64-bit atomics (cl_khr_int64_base_atomics, _extended_atomics)"
#endif

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMALLOC || CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMMALLOC
#define CLHEAP_FUSED 1
#else
#define CLHEAP_FUSED 0
#endif
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_CMMALLOC || CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMMALLOC
#define CLHEAP_MULTI 1
#else
#define CLHEAP_MULTI 0
#endif
#define CLHEAP_IS_CIRCULAR (CLHEAP_ALLOCATOR >= CLHEAP_KIND_CMALLOC && CLHEAP_ALLOCATOR <= CLHEAP_KIND_CFMMALLOC)
/* Allocators made of DynaSOAr-style blocks (group coalescing, parallel_do, SOA helpers). */
#define CLHEAP_HAS_BLOCKS (CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS || CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER)

/* Opaque: kernels take `__global clheap_heap *heap`; the host passes the heap buffer. */
typedef struct clheap_heap clheap_heap;

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_words(CLHEAP_GLOBAL clheap_heap *heap)
{
    return (CLHEAP_GLOBAL clheap_u32 *)heap;
}

#if defined(CLHEAP_HAVE_PTX) && (CLHEAP_HAS_BLOCKS || CLHEAP_IS_CIRCULAR)
/* Warp-level request coalescing on NVIDIA (enabled by the library only after a probe
 * compile of these instructions succeeds): the converged lanes that ask for the same
 * class elect a leader, which reserves all their slots in one block with one atomic
 * (DynaSOAr sec. 4.2) and hands them out with shuffles. The .sync instructions name
 * exactly those lanes; the hardware converges them there, so this is not a wait on
 * another work-item's progress. Lanes the leader's block could not serve go alone. */
static CLHEAP_INLINE clheap_u32 clheap_ptx_activemask(void)
{
    clheap_u32 m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}
static CLHEAP_INLINE clheap_u32 clheap_ptx_laneid(void)
{
    clheap_u32 l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
/* The lanes of mask holding the same value as this one. A slow instruction on NVIDIA (one
 * more on malloc's path slowed every launch of small requests; docs/performance.md): a
 * yes-or-no question takes clheap_ptx_ballot, and two values one match of both. */
static CLHEAP_INLINE clheap_u32 clheap_ptx_match(clheap_u32 mask, clheap_u32 v)
{
    clheap_u32 r;
    asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask));
    return r;
}
static CLHEAP_INLINE clheap_u32 clheap_ptx_match64(clheap_u32 mask, clheap_u64 v)
{
    clheap_u32 r;
    asm volatile("match.any.sync.b64 %0, %1, %2;" : "=r"(r) : "l"(v), "r"(mask));
    return r;
}
/* The lanes of mask whose p is true. */
static CLHEAP_INLINE clheap_u32 clheap_ptx_ballot(clheap_u32 mask, int p)
{
    clheap_u32 r;
    asm volatile("{ .reg .pred q; setp.ne.s32 q, %1, 0; vote.sync.ballot.b32 %0, q, %2; }" : "=r"(r) : "r"(p), "r"(mask));
    return r;
}
static CLHEAP_INLINE clheap_u32 clheap_ptx_shfl(clheap_u32 mask, clheap_u32 v, clheap_u32 src)
{
    clheap_u32 r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(src), "r"(mask));
    return r;
}
/* Brings the lanes of `mask` together again after one of them took a branch alone.
 * Needed before the shuffles that follow it: NVIDIA's OpenCL compiler treats its own
 * reconvergence point as enough and issues those shuffles without a wait, which fails
 * when another group of the same warp runs the same code meanwhile (seen on a GPU:
 * lanes read a leader that had not arrived, and reserved slots leaked). */
static CLHEAP_INLINE void clheap_ptx_syncwarp(clheap_u32 mask)
{
    asm volatile("bar.warp.sync %0;" ::"r"(mask));
}
#if CLHEAP_IS_CIRCULAR
/* CircularMalloc family: the converged lanes' small requests are served from one
 * chunk that the lowest lane claims for their sum. It writes a used header for each
 * lane's part, lane order, linked chunk to chunk, and publishes the chain by pointing
 * the claimed chunk's next at the second part last: every part is then an ordinary
 * chunk, freed on its own. Walkers see 32 times fewer claimants on the roving offsets. */
static CLHEAP_INLINE clheap_u32 clheap_circular_malloc_warp(__global clheap_u32 *h, clheap_size bytes)
{
    clheap_u32 payload = clheap_units_for(bytes, h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START] - 1u);
    if (!payload) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 need = payload + 1u;
    /* Only small requests are combined: a warp's sum of large ones needs a large chunk,
     * which takes a long walk to find (combined, 256 B requests ran many times slower). */
    int small = need <= CLHEAP_WARP_COALESCE_UNITS;
    clheap_u32 mask = clheap_ptx_ballot(clheap_ptx_activemask(), small); /* read by small lanes only */
    if (!small)
        return clheap_circular_malloc_unit(h, bytes, CLHEAP_FUSED, CLHEAP_MULTI);
    clheap_ptx_syncwarp(mask); /* the other lanes' branch */
    clheap_u32 lane = clheap_ptx_laneid();
    clheap_u32 leader = 31u - clz(mask & (0u - mask));
    clheap_u32 total = 0u, offset = 0u;
    for (clheap_u32 m = mask; m; m &= m - 1u) {
        clheap_u32 src = 31u - clz(m & (0u - m));
        clheap_u32 v = clheap_ptx_shfl(mask, need, src);
        offset += src < lane ? v : 0u;
        total += v;
    }
    clheap_u32 base = 0u, end = 0u;
    int why; /* a failed claim for the sum is no NULL yet: the lanes try alone below */
    if (lane == leader && total >= need) /* total < need: the sum overflowed */
        base = clheap_circular_claim(h, total, CLHEAP_FUSED, CLHEAP_MULTI, &end, &why);
    clheap_ptx_syncwarp(mask); /* the leader's claim */
    base = clheap_ptx_shfl(mask, base, leader);
    end = clheap_ptx_shfl(mask, end, leader);
    if (!base) /* the sum did not fit: each lane alone */
        return clheap_circular_malloc_unit(h, bytes, CLHEAP_FUSED, CLHEAP_MULTI);
    clheap_u32 run = 0u, last = base;
    for (clheap_u32 m = mask; m; m &= m - 1u) {
        clheap_u32 src = 31u - clz(m & (0u - m));
        clheap_ptx_syncwarp(mask); /* the leader's writes of the previous part */
        clheap_u32 v = clheap_ptx_shfl(mask, need, src);
        clheap_u32 b = clheap_ptx_shfl(mask, (clheap_u32)bytes, src);
        if (lane == leader) {
            clheap_u32 part = base + run, next = (m & (m - 1u)) ? part + v : end;
            if (run)
                clheap_write_header(h, CLHEAP_FUSED, part, 1u, next, last);
            clheap_store32(clheap_chunk(h, part) + CLHEAP_CHUNK_WORD_REQUEST, b);
            last = part;
        }
        run += v;
    }
    if (lane == leader && (mask & (mask - 1u))) { /* one part: the claimed chunk is it */
        clheap_circular_set_prev(h, end, last); /* the chunk after the claim follows the last part now */
        clheap_fence_release(); /* every part's header before the chain is linked in */
        if (CLHEAP_FUSED)
            clheap_store64(clheap_fused_word(h, base), clheap_fused(base, 1u, base + need));
        else
            clheap_store32(clheap_chunk(h, base) + CLHEAP_CHUNK_WORD_NEXT, base + need);
    }
    /* No lane leaves with its address before every part's header is written and the chain
     * linked: under independent thread scheduling a lane that freed its part at once
     * could meet no header there (counted as a bad free, the part leaked). Never seen on a
     * GPU, but only this sync makes it impossible: bar.warp.sync orders the leader's
     * writes before the lanes' later accesses. */
    clheap_ptx_syncwarp(mask);
    return base + offset + 1u;
}
#endif

#if CLHEAP_IS_CIRCULAR
/* CircularMalloc family: the lanes freeing chunks that follow one another (a warp's
 * coalesced parts, freed together) leave one free chunk, not one per lane. Free merges
 * only forward, and lanes freeing in lockstep all find their successor still in use, so
 * a launch that mallocs and frees per warp left 32 chunks of 2 - 5 units per warp claim;
 * the next launches' warp claims walked ever longer over them (`clheap-bench churn`'s
 * launches grew from milliseconds to many seconds).
 * A lane whose chunk begins where another lane's ends frees it plainly; after a warp
 * sync, every other lane, which owns the chunk before such a run, swallows the run (its
 * length found by pointer jumping over the lanes) and, as every free does, one free
 * chunk after it, no more: absorbing up to 32 chunks let a lone lane merge away the
 * pre-split chunks other walkers stood on (the papers' Alloc-Dealloc with one lane a
 * warp ran several times slower than with the exact run). An absorb lost to a walker's claim
 * ends the run there. The one free chunk after the run, and the merge of the whole into
 * a free chunk before it, stop at walls as every free's merges do (cl/clheap_circular.h). */
static CLHEAP_INLINE void clheap_circular_free_warp(__global clheap_u32 *h, __global void *ptr)
{
    clheap_u32 mask = clheap_ptx_activemask();
    clheap_u32 o = 0u, next = 0u;
    int valid = clheap_circular_free_check(h, ptr, CLHEAP_FUSED, &o, &next);
    clheap_u32 peers = clheap_ptx_ballot(mask, valid); /* read by valid lanes only */
    if (!valid)
        return;
    clheap_ptx_syncwarp(peers); /* the other lanes' branch */
    clheap_u32 lane = clheap_ptx_laneid(), succ = 32u; /* the lane whose chunk begins where ours ends */
    int follows = 0;
    for (clheap_u32 m = peers; m; m &= m - 1u) {
        clheap_u32 src = 31u - clz(m & (0u - m));
        follows |= clheap_ptx_shfl(peers, next, src) == o;
        succ = clheap_ptx_shfl(peers, o, src) == next ? src : succ;
    }
    clheap_u32 run = succ < 32u ? 1u : 0u; /* the lanes' chunks that follow ours, in a row */
    for (int step = 0; step < 5; step++) {
        clheap_u32 from = succ < 32u ? succ : lane;
        clheap_u32 their_run = clheap_ptx_shfl(peers, run, from), their_succ = clheap_ptx_shfl(peers, succ, from);
        if (succ < 32u) {
            run += their_run;
            succ = their_succ;
        }
    }
    if (follows)
        clheap_circular_release(h, CLHEAP_FUSED, o, next);
    clheap_ptx_syncwarp(peers); /* the followers' chunks are free before the lane before them absorbs them */
    if (follows)
        return;
    for (clheap_u32 k = 0u; k <= run && clheap_circular_absorb_next(h, CLHEAP_FUSED, CLHEAP_MULTI, o, h[CLHEAP_HDR_POOL_END],
                                                                   &next, k == run); k++) {
    }
    clheap_circular_remerge(h, CLHEAP_FUSED, CLHEAP_MULTI,
                            clheap_circular_merge_back_and_release(h, CLHEAP_FUSED, CLHEAP_MULTI, o, next));
}
#endif

#if CLHEAP_HAS_BLOCKS
static CLHEAP_INLINE clheap_u64 clheap_ptx_shfl64(clheap_u32 mask, clheap_u64 v, clheap_u32 src)
{
    return (clheap_u64)clheap_ptx_shfl(mask, (clheap_u32)v, src) |
           ((clheap_u64)clheap_ptx_shfl(mask, (clheap_u32)(v >> 32), src) << 32);
}

/* The bits of the slots (0..63) the lanes of mask name. With redux (sm_80) two
 * instructions; without it a shuffle per lane, which made small frees markedly slower. */
static CLHEAP_INLINE clheap_u64 clheap_ptx_slot_bits(clheap_u32 mask, clheap_u32 slot)
{
#ifdef CLHEAP_HAVE_REDUX
    clheap_u32 lo, hi;
    asm volatile("redux.sync.or.b32 %0, %1, %2;" : "=r"(lo) : "r"(slot < 32u ? 1u << slot : 0u), "r"(mask));
    asm volatile("redux.sync.or.b32 %0, %1, %2;" : "=r"(hi) : "r"(slot < 32u ? 0u : 1u << (slot - 32u)), "r"(mask));
    return (clheap_u64)lo | ((clheap_u64)hi << 32);
#else
    clheap_u64 bits = 0;
    for (clheap_u32 m = mask; m; m &= m - 1u)
        bits |= (clheap_u64)1 << clheap_ptx_shfl(mask, slot, 31u - clz(m & (0u - m)));
    return bits;
#endif
}

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
/* TierAlloc: the lanes asking for one class are served by the lowest lane, which takes
 * their slots from its run with one add (clheap_tier_take_begin). A leader that opens a
 * run has every small request's lane of the warp write a share of its headers, each
 * lane releasing its writes before the warp sync after which the leader lists and
 * installs the run (clheap_tier_take_finish). Lanes the grant could not serve go alone;
 * if it says pieces, the lowest of those lanes takes them all as one large allocation,
 * which they split. One call of clheap_tier_malloc_first serves them all, and one of
 * clheap_tier_take_larger every request still without a slot.
 * Large requests (each a run of frames of its own) and 0 B go alone before the first .sync
 * instruction: inside, a large lane's long way through the page tier, beside the small
 * lanes' syncs, hung warps on NVIDIA (docs/design.md, "Warp coalescing"). */
static CLHEAP_INLINE clheap_u32 clheap_tier_malloc_warp(__global clheap_u32 *h, clheap_size bytes)
{
    clheap_u32 c = bytes ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    if (c == CLHEAP_MAX_CLASSES) /* large (or 0 B): alone, before the warp's .sync ops */
        return clheap_tier_malloc_large(h, bytes, clheap_rotation_seed(), 0);
    clheap_u32 mask = clheap_ptx_activemask(); /* the lanes here are all small */
    clheap_u32 pieces = 0u, first_piece = 0u, taker = 0u, opened = 0u;
    clheap_u32 lane = clheap_ptx_laneid(), peers = clheap_ptx_match(mask, c);
    clheap_u32 leader = 31u - clz(peers & (0u - peers));
    clheap_u32 rank = popcount(peers & ((1u << lane) - 1u)), n = popcount(peers);
    clheap_tier_grant g = {0u, 0u, 0u, 0u, 0u, CLHEAP_BM_FAIL, 0u};
    clheap_tier_opening o = {0, CLHEAP_BM_FAIL, 0u, 0u, CLHEAP_TIER_FRESH, 0u};
    if (lane == leader)
        clheap_tier_take_begin(h, c, n, clheap_rotation_seed(), &g, &o);
    clheap_ptx_syncwarp(mask); /* every leader's branch */
    int opens = lane == leader && o.run != CLHEAP_BM_FAIL && o.kind != CLHEAP_TIER_READY; /* headers, or blocks to unhold */
    clheap_u32 openers = clheap_ptx_ballot(mask, opens);
    if (openers) { /* the same for every lane of mask */
        clheap_u32 index = popcount(mask & ((1u << lane) - 1u)), stride = popcount(mask);
        for (clheap_u32 left = openers; left; left &= left - 1u) {
            clheap_u32 src = 31u - clz(left & (0u - left));
            clheap_tier_opening p = o;
            clheap_u32 cls = clheap_ptx_shfl(mask, c, src);
            p.run = clheap_ptx_shfl(mask, o.run, src);
            p.blocks = clheap_ptx_shfl(mask, o.blocks, src);
            p.anchor = clheap_ptx_shfl(mask, o.anchor, src);
            p.kind = clheap_ptx_shfl(mask, o.kind, src);
            clheap_tier_prepare(h, cls, &p, index, stride);
            opened += p.kind == CLHEAP_TIER_PARKED ? 0u : p.blocks * h[CLHEAP_HDR_CLASS_FRAMES + cls];
        }
        clheap_fence_release(); /* this lane's headers before the leader lists the runs */
        clheap_ptx_syncwarp(mask);
    }
    if (lane == leader)
        clheap_tier_take_finish(h, c, clheap_rotation_seed(), &g, &o, CLHEAP_TIER_INSTALL);
    clheap_ptx_syncwarp(mask); /* every run installed before any leader falls back */
    if (lane == leader)
        clheap_tier_take_finish(h, c, clheap_rotation_seed(), &g, &o, CLHEAP_TIER_FALL_BACK);
    clheap_ptx_syncwarp(peers); /* the leader's branch */
    g.run = clheap_ptx_shfl(peers, g.run, leader);
    g.first = clheap_ptx_shfl(peers, g.first, leader);
    g.k = clheap_ptx_shfl(peers, g.k, leader);
    g.run2 = clheap_ptx_shfl(peers, g.run2, leader);
    g.k2 = clheap_ptx_shfl(peers, g.k2, leader);
    g.frame = clheap_ptx_shfl(peers, g.frame, leader);
    g.got = clheap_ptx_shfl64(peers, g.got, leader);
    clheap_u32 unit = clheap_tier_grant_unit(h, c, &g, rank);
    int nothing = g.frame == CLHEAP_TIER_NOTHING; /* the leader's fallback found nothing: the lanes it left end in NULL */
    if (g.frame == CLHEAP_TIER_PIECES) { /* ranks from k + k2 on */
        first_piece = g.k + g.k2;
        pieces = n - first_piece;
        taker = clheap_nth_bit(peers, first_piece);
    }
    clheap_u32 frames = pieces ? clheap_tier_piece_frames(h, c) : 0u;
    int null = 0; /* a request that ends in NULL: counted below, with the warp's others */
    if (!unit && !nothing && (!pieces || lane == taker))
        unit = clheap_tier_malloc_first(h, pieces ? (clheap_size)pieces * frames * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT
                                                  : bytes,
                                        clheap_rotation_seed() + 0x5bd1e995u, pieces != 0u, 0);
    if (pieces) { /* the same for every lane of peers */
        clheap_ptx_syncwarp(peers); /* the taker's branch and its header writes */
        clheap_u32 base = clheap_ptx_shfl(peers, unit, taker);
        if (rank >= first_piece)
            unit = clheap_tier_piece_of(h, base, rank - first_piece, frames);
    }
    if (!unit) {
        unit = nothing ? 0u : clheap_tier_take_larger(h, c, clheap_rotation_seed() + rank, 0);
        null = !unit;
    }
    /* One add for the warp's NULLs: each lane's own add to the one counter made a launch
     * whose requests mostly fail wait on that word. */
    clheap_u32 nulls = clheap_ptx_ballot(mask, null);
    if (null && lane == 31u - clz(nulls & (0u - nulls)))
        clheap_add32(h + CLHEAP_HDR_ERR_OUT_OF_MEMORY, popcount(nulls));
#if CLHEAP_TIER_SETTLE_PER_SEGMENT
    /* The warp settles the share of what it opened (see cl/clheap_tier.h), last, where
     * little else is live. */
    if (opened) { /* the same for every lane of mask */
        clheap_ptx_syncwarp(mask);
        clheap_u32 index = popcount(mask & ((1u << lane) - 1u)), leader = 31u - clz(mask & (0u - mask));
        /* The claimer decides for the warp whether it settles (clheap_tier_openers_settle
         * reads, and may write, a header word). */
        clheap_u32 share = index || !clheap_tier_openers_settle(h) ? 0u : clheap_tier_settle_share(h, opened);
        clheap_u32 start = share ? clheap_tier_settle_claim(h, share) : 0u;
        clheap_ptx_syncwarp(mask); /* the claimer's branch (see clheap_ptx_syncwarp) */
        start = clheap_ptx_shfl(mask, start, leader);
        share = clheap_ptx_shfl(mask, share, leader);
        clheap_tier_settle_range(h, start, share, index, popcount(mask));
    }
#endif
    return unit;
}
#else
/* BlockAlloc: the lanes asking for one class are served by the lowest lane, which
 * reserves up to all of their slots in one block with one OR; lanes it could not serve
 * go alone. */
static CLHEAP_INLINE clheap_u32 clheap_blocks_malloc_warp(__global clheap_u32 *h, clheap_size bytes)
{
    clheap_u32 c = bytes ? clheap_class_for(h, bytes) : CLHEAP_MAX_CLASSES;
    clheap_u32 mask = clheap_ptx_activemask();
    clheap_u32 peers = clheap_ptx_match(mask, c);
    if (c == CLHEAP_MAX_CLASSES) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
    clheap_u32 lane = clheap_ptx_laneid();
    clheap_u32 leader = 31u - clz(peers & (0u - peers));
    clheap_u32 rank = popcount(peers & ((1u << lane) - 1u)), n = popcount(peers);
    clheap_u32 frame = CLHEAP_BM_FAIL, why; /* unserved lanes go alone and count their own */
    clheap_u64 got = 0;
    if (lane == leader)
        frame = clheap_block_reserve_any(h, c, n, clheap_rotation_seed(), &got, &why);
    clheap_ptx_syncwarp(peers); /* the leader's branch */
    frame = clheap_ptx_shfl(peers, frame, leader);
    got = clheap_ptx_shfl64(peers, got, leader);
    if (frame != CLHEAP_BM_FAIL && rank < clheap_popcount64(got))
        return clheap_slot_unit(h, frame, c, clheap_nth_bit(got, rank));
    return clheap_blocks_malloc_unit(h, bytes, clheap_rotation_seed() + 0x5bd1e995u);
}
#endif

/* Blocks: the lanes freeing slots of one block clear all their bits with one AND of the
 * lowest lane; each lane reads its own bit in the old value (a double free finds it
 * clear, and of two lanes freeing one slot the higher is counted). Bad pointers are
 * handled by their own lane; TierAlloc's large allocations go alone before the first
 * .sync instruction, as large requests do (clheap_tier_malloc_warp). */
static CLHEAP_INLINE void clheap_blocks_free_warp(__global clheap_u32 *h, __global void *ptr)
{
    clheap_u32 frame = 0u, cls = 0u, slot = 0u, incarnation = 0u;
    clheap_u32 unit = ptr ? clheap_frame_locate(h, ptr, &frame, &cls, &incarnation) : 0u;
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    if (unit && cls == CLHEAP_TIER_LARGE) { /* alone, before the warp's .sync ops */
        clheap_tier_free_large(h, unit, frame);
        return;
    }
#endif
    clheap_u32 mask = clheap_ptx_activemask();
    int small = unit && clheap_block_slot_in(h, unit, frame, cls, &slot);
    /* Lanes of one block and incarnation (cl/clheap_blocks.h, I1) share an AND. */
    clheap_u32 peers = clheap_ptx_match64(mask, ((clheap_u64)(small ? frame : 0xffffffffu) << 32) | incarnation);
    if (!small)
        return;
    clheap_ptx_syncwarp(peers); /* the other lanes' branch */
    clheap_u32 lane = clheap_ptx_laneid(), leader = 31u - clz(peers & (0u - peers));
    clheap_u64 bits = clheap_ptx_slot_bits(peers, slot);
    /* Two lanes freeing one slot: the higher is counted (a match only when bits are missing). */
    int repeated = clheap_popcount64(bits) < (clheap_u32)popcount(peers) &&
                   (clheap_ptx_match(peers, slot) & ((1u << lane) - 1u)) != 0u;
    clheap_u64 old = 0;
    if (lane == leader) {
        /* The lanes' last writes to their slots (ordered before the leader's by the warp
         * sync above), and the incarnation read (I1), before the AND: cl/clheap_blocks.h. */
        clheap_u32 now = clheap_block_incarnation_now(h, frame);
        clheap_fence_release();
        old = clheap_and64(clheap_block_alloc_bits(h, frame), ~bits);
        if ((old & bits) && clheap_block_gone(h, frame, incarnation, now, old & bits))
            old = 0; /* every lane counts a double free */
        else if (old & bits)
            clheap_block_after_free(h, frame, cls - 1u, old, old & bits);
    }
    clheap_ptx_syncwarp(peers); /* the leader's branch */
    old = clheap_ptx_shfl64(peers, old, leader);
    if (repeated || !((old >> slot) & 1u))
        clheap_count_error(h, CLHEAP_HDR_ERR_DOUBLE_FREE);
}
#endif
#endif

/* Whether the host formatted this heap (clheap_heap_create: the magic in word 0). A malloc
 * or free on any other buffer, zeroed or not, does nothing but count
 * CLHEAP_HDR_ERR_UNFORMATTED there, which the host can read: the header's other words
 * are no layout, and following them could read or write anywhere. */
static CLHEAP_INLINE int clheap_has_magic(CLHEAP_GLOBAL clheap_u32 *h)
{
    return h[CLHEAP_HDR_MAGIC] == CLHEAP_MAGIC;
}

/* Loops that end early. Mesa's llvmpipe gives a work-item CLHEAP_LOOP_LIMIT loop
 * iterations a launch (65535), all its loops together, its kernel's and clheap's; past
 * them it ends every loop after one iteration, silently (the host measures this:
 * clheap_device_loop_limit). A call cut short there can leave half a protocol done (a
 * bitmap's climb, a block's frame headers). So on such a device a call first runs a loop
 * of two iterations (its bound read, so that no compiler unrolls it); one iteration means
 * the work-item's iterations are spent, and the call does nothing. A call whose
 * iterations run out inside it is not caught: the circular family, BitmapAlloc and the
 * bump allocators keep a sound heap then, BlockAlloc and TierAlloc may not
 * (docs/design.md, "Loops that end early"). */
static CLHEAP_INLINE int clheap_loops_run(CLHEAP_GLOBAL clheap_u32 *h)
{
#if defined(CLHEAP_LOOP_LIMIT) && CLHEAP_LOOP_LIMIT
    clheap_u32 want = clheap_load32(h + CLHEAP_HDR_MAGIC) == CLHEAP_MAGIC ? 2u : 3u, ran = 0u;
    CLHEAP_NO_UNROLL
    for (clheap_u32 i = 0; i < want; i++)
        ran += clheap_load32(h + CLHEAP_HDR_MAGIC) == CLHEAP_MAGIC;
    return ran == want;
#else
    (void)h;
    return 1;
#endif
}

/* clheap_loops_run, counting contended where it is 0. At a call's start; and after a loop
 * over the caller's data (calloc's zeroing, realloc's copy): a work-item whose iterations
 * ran out inside it finds them spent here as well, and its caller returns NULL instead of
 * memory holding other words (realloc's ptr stays allocated and unchanged; the new
 * allocation cannot be freed then, a free's loops being cut too, and stays allocated).
 * Elsewhere a constant 1. */
static CLHEAP_INLINE int clheap_loops_left(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (clheap_loops_run(h))
        return 1;
    clheap_count_error(h, CLHEAP_HDR_ERR_CONTENDED);
    return 0;
}

/* Whether a call may go on: the heap is formatted (else it counts unformatted) and the
 * work-item's loops still run whole (else it counts contended: clheap_loops_left). */
static CLHEAP_INLINE int clheap_formatted(CLHEAP_GLOBAL clheap_u32 *h)
{
    if (!clheap_has_magic(h)) {
        clheap_count_error(h, CLHEAP_HDR_ERR_UNFORMATTED);
        return 0;
    }
    return clheap_loops_left(h);
}

/* malloc returning the 16-byte-unit offset of the allocation (0 = NULL). Out of line but
 * in warp-coalesced builds, as clheap_free (CLHEAP_ENTRY, cl/clheap_config.h says why). */
static CLHEAP_INLINE CLHEAP_ENTRY clheap_u32 clheap_malloc_unit(CLHEAP_GLOBAL clheap_heap *heap, clheap_size size)
{
    if (!clheap_formatted(clheap_words(heap)))
        return 0u;
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    return clheap_freeheap_malloc_unit(clheap_words(heap), size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC
    return clheap_atomic_malloc_unit(clheap_words(heap), size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC_WRAP
    return clheap_atomic_wrap_malloc_unit(clheap_words(heap), size);
#elif CLHEAP_IS_CIRCULAR && CLHEAP_WARP_COALESCED
    return clheap_circular_malloc_warp(clheap_words(heap), size);
#elif CLHEAP_IS_CIRCULAR
    return clheap_circular_malloc_unit(clheap_words(heap), size, CLHEAP_FUSED, CLHEAP_MULTI);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP
    return clheap_bitmap_malloc_unit(clheap_words(heap), size, clheap_rotation_seed());
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER && CLHEAP_WARP_COALESCED
    return clheap_tier_malloc_warp(clheap_words(heap), size);
#elif CLHEAP_HAS_BLOCKS && CLHEAP_WARP_COALESCED
    return clheap_blocks_malloc_warp(clheap_words(heap), size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS
    return clheap_blocks_malloc_unit(clheap_words(heap), size, clheap_rotation_seed());
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    return clheap_tier_malloc_unit(clheap_words(heap), size, clheap_rotation_seed());
#else
#error "clheap.cl: unknown CLHEAP_ALLOCATOR"
#endif
}

static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_pointer(CLHEAP_GLOBAL clheap_heap *heap,
                                                        clheap_u32 unit)
{
    return clheap_unit_pointer(clheap_words(heap), unit);
}

/* The offset of a pointer clheap_malloc returned (0 for NULL). */
static CLHEAP_INLINE clheap_u32 clheap_unit_of(CLHEAP_GLOBAL clheap_heap *heap,
                                               CLHEAP_GLOBAL void *ptr)
{
    if (!ptr)
        return 0u;
    return (clheap_u32)(((CLHEAP_GLOBAL unsigned char *)ptr - (CLHEAP_GLOBAL unsigned char *)heap) /
                        CLHEAP_UNIT);
}

static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_malloc(CLHEAP_GLOBAL clheap_heap *heap,
                                                       clheap_size size)
{
    return clheap_pointer(heap, clheap_malloc_unit(heap, size));
}

static CLHEAP_INLINE CLHEAP_ENTRY void clheap_free(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *ptr)
{
    if (!ptr || !clheap_formatted(clheap_words(heap)))
        return;
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    clheap_freeheap_free(clheap_words(heap), ptr);
#elif CLHEAP_IS_CIRCULAR && CLHEAP_WARP_COALESCED
    clheap_circular_free_warp(clheap_words(heap), ptr);
#elif CLHEAP_IS_CIRCULAR
    clheap_circular_free(clheap_words(heap), ptr, CLHEAP_FUSED, CLHEAP_MULTI);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP
    clheap_bitmap_free(clheap_words(heap), ptr);
#elif CLHEAP_HAS_BLOCKS && CLHEAP_WARP_COALESCED
    clheap_blocks_free_warp(clheap_words(heap), ptr);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BLOCKS
    clheap_blocks_free(clheap_words(heap), ptr);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    clheap_tier_free(clheap_words(heap), ptr);
#else
    clheap_bump_free(clheap_words(heap), ptr);
#endif
}

static CLHEAP_INLINE void clheap_free_unit(CLHEAP_GLOBAL clheap_heap *heap, clheap_u32 unit)
{
    clheap_free(heap, clheap_pointer(heap, unit));
}

/* ---- the rest of C's allocation API (cl/clheap_resize.h says what each allocator does) ---- */

/* The bytes `ptr` may use, checked as clheap_free checks it (a bad pointer is counted as
 * free counts it, and gives 0). The bump allocators keep no sizes: 0, nothing counted. */
static CLHEAP_INLINE clheap_size clheap_usable_bytes(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL void *ptr)
{
#if CLHEAP_HAS_BLOCKS
    return clheap_blocks_usable(h, ptr);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP
    return clheap_bitmap_usable(h, ptr);
#elif CLHEAP_IS_CIRCULAR
    return clheap_circular_usable(h, ptr, CLHEAP_FUSED);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    return clheap_freeheap_usable(h, ptr);
#else
    (void)h;
    (void)ptr;
    return 0u;
#endif
}

/* The bytes the allocation at `ptr` may really use: at least the size it was asked for,
 * and all of them may be written. 0 for NULL, for a pointer that is no live allocation
 * (counted as clheap_free counts it), and on the bump allocators, which keep no sizes. */
static CLHEAP_INLINE size_t clheap_usable_size(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *ptr)
{
    if (!ptr || !clheap_formatted(clheap_words(heap)))
        return 0u;
    return clheap_usable_bytes(clheap_words(heap), ptr);
}

/* malloc of count * size bytes, zeroed. A product that overflows is a bad size (NULL). */
static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_calloc(CLHEAP_GLOBAL clheap_heap *heap, size_t count, size_t size)
{
    if (size && count > (size_t)-1 / size) {
        if (clheap_formatted(clheap_words(heap)))
            clheap_count_error(clheap_words(heap), CLHEAP_HDR_ERR_BAD_SIZE);
        return 0;
    }
    CLHEAP_GLOBAL void *p = clheap_malloc(heap, count * size);
    if (p)
        clheap_zero_units(p, (count * size + CLHEAP_UNIT - 1u) / CLHEAP_UNIT);
    return p && clheap_loops_left(clheap_words(heap)) ? p : 0;
}

/* C's realloc. NULL: malloc. Size 0: frees ptr and returns NULL. Otherwise the pointer is
 * kept where the allocation holds `size` (TierAlloc's large allocations also grow over
 * free frames after them, and give back frames when they shrink); else a new
 * allocation gets min(old, new) bytes and ptr is freed. NULL if none: ptr stays
 * allocated and unchanged. A ptr that is no live allocation is counted as clheap_free
 * counts it, and gives NULL; so does any ptr on the bump allocators (counted as a bad
 * size), which keep no sizes. Compiled as clheap_malloc is (CLHEAP_ENTRY): it runs the
 * malloc and free, whose warp paths must not be called out of line. */
static CLHEAP_INLINE CLHEAP_ENTRY CLHEAP_GLOBAL void *clheap_realloc(CLHEAP_GLOBAL clheap_heap *heap,
                                                                    CLHEAP_GLOBAL void *ptr, size_t size)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    if (!ptr)
        return clheap_malloc(heap, size);
    if (!size) {
        clheap_free(heap, ptr);
        return 0;
    }
    if (!clheap_formatted(h))
        return 0;
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC || CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC_WRAP
    clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
    return 0;
#else
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    clheap_u32 unit, frame;
    int large;
    clheap_size usable = clheap_blocks_usable_at(h, ptr, &unit, &frame, &large);
    if (!usable)
        return 0;
    int in_place = clheap_blocks_resize_in_place(h, unit, frame, large, usable, size);
#else
    clheap_size usable = clheap_usable_bytes(h, ptr);
    if (!usable)
        return 0;
    int in_place = size <= usable;
#endif
    if (in_place) {
#if CLHEAP_IS_CIRCULAR
        clheap_circular_note_size(h, ptr, size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
        clheap_freeheap_note_size(h, ptr, size);
#endif
        return ptr;
    }
    CLHEAP_GLOBAL void *moved = clheap_malloc(heap, size);
    if (moved) {
        clheap_size keep = size < usable ? size : usable;
        clheap_copy_units(moved, ptr, (keep + CLHEAP_UNIT - 1u) / CLHEAP_UNIT);
        if (!clheap_loops_left(h))
            return 0; /* the copy was cut: ptr stays */
        clheap_free(heap, ptr);
    }
    return moved;
#endif
}

/* TierAlloc asks for the alignment itself when the size is no larger and the alignment is
 * at most this many bytes: with power-of-two classes (the default) that class's slots lie
 * on it wherever its blocks do, which the address check after the malloc confirms; up to
 * 4 KiB, the pool's own alignment (host/heap_layout.c), a block mostly does. */
#define CLHEAP_TIER_ALIGNED_DIRECT_BYTES 4096u

/* clheap_aligned_alloc (alignment above 16): the bytes its malloc site asks for, 0 for
 * its other ways. TierAlloc's direct case reads one header word, the pool's start (in a
 * buffer that lies on less than the alignment, as PoCL's 128-byte ones may, no slot of the
 * class lies on it, and frames serve it at once), and no class word: a malloc after
 * dependent loads of the class table cost up to a quarter of its time on NVIDIA. */
static CLHEAP_INLINE clheap_size clheap_aligned_malloc_bytes(CLHEAP_GLOBAL clheap_u32 *h, clheap_size alignment,
                                                              clheap_size size)
{
#if CLHEAP_HAS_BLOCKS
    int tier = CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER;
    if (!size || !clheap_alignment_valid(alignment))
        return 0u;
    if (tier && size <= alignment && alignment <= CLHEAP_TIER_ALIGNED_DIRECT_BYTES &&
        clheap_unit_address(h, h[CLHEAP_HDR_POOL_START]) % alignment == 0u)
        return alignment;
    if (clheap_has_magic(h))
        return clheap_blocks_aligned_bytes(h, alignment, size, tier);
#endif
    return 0u;
}

/* clheap_aligned_alloc's ways that are not a plain malloc: bad alignments and sizes
 * (counted), the bump allocators' rounding, BitmapAlloc's slots, FreeHeap's blocks,
 * TierAlloc's frames, and refusals (NULL, counted as a bad size). `misplaced` (a unit, or
 * 0) is a slot the malloc way gave off the alignment (TierAlloc's last resort answers
 * from a larger class), freed here by its own lane: this is a call, and a call must not
 * run the warp paths (CLHEAP_ENTRY). Out of line (CLHEAP_OUTLINE): one copy per program,
 * off the ways that are a malloc. */
static CLHEAP_INLINE CLHEAP_OUTLINE clheap_u32 clheap_aligned_unit_other(CLHEAP_GLOBAL clheap_heap *heap,
                                                                        clheap_size alignment, clheap_size size,
                                                                        clheap_u32 misplaced)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    if (misplaced)
        clheap_tier_free(h, clheap_pointer(heap, misplaced));
#endif
    if (!clheap_formatted(h))
        return 0u;
    if (!clheap_alignment_valid(alignment) || !size) {
        clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
        return 0u;
    }
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC || CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC_WRAP
    return clheap_bump_aligned_unit(h, alignment, size, CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC_WRAP);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_BITMAP
    if (clheap_bitmap_aligned(h, alignment))
        return clheap_malloc_unit(heap, size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
    return clheap_freeheap_aligned_unit(h, alignment, size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_TIER
    if (size <= (clheap_size)h[CLHEAP_HDR_FRAME_COUNT] * h[CLHEAP_HDR_FRAME_UNITS] * CLHEAP_UNIT)
        return clheap_tier_aligned_large(h, alignment, size, clheap_rotation_seed());
#endif
    clheap_count_error(h, CLHEAP_HDR_ERR_BAD_SIZE);
    return 0u;
}

/* C's aligned_alloc: `size` bytes at an address that is a multiple of `alignment`, a
 * power of two up to CLHEAP_MAX_ALIGNMENT (any other is a bad size: NULL). Freed with
 * clheap_free, resized with clheap_realloc (which may move it to 16-byte alignment).
 * Which allocators serve which alignments: cl/clheap_resize.h; a refusal is NULL counted
 * as a bad size. Alignments up to 16 B, and the block allocators' classes, are one
 * malloc site here, its address checked after; the other ways are one call
 * (clheap_aligned_unit_other). Why not all of it out of line: a call that then calls
 * clheap_malloc made 16 B requests slower on NVIDIA (docs/performance.md, the
 * aligned_alloc runs). */
static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_aligned_alloc(CLHEAP_GLOBAL clheap_heap *heap, size_t alignment,
                                                             size_t size)
{
    int plain = alignment && alignment <= CLHEAP_UNIT; /* every allocation lies on 16 B */
    clheap_size bytes = plain ? size : clheap_aligned_malloc_bytes(clheap_words(heap), alignment, size);
    CLHEAP_GLOBAL void *p = 0;
    if (plain || bytes) {
        p = clheap_malloc(heap, bytes);
        if (plain || !p || (clheap_size)(uintptr_t)p % alignment == 0u)
            return p;
    }
    return clheap_pointer(heap, clheap_aligned_unit_other(heap, alignment, size, clheap_unit_of(heap, p)));
}

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_FREEHEAP
/* FreeHeap (paper 003): `count` elements of `stride` bytes; returns their address in
 * stride units from the heap buffer's start (element i is at (address + i) * stride
 * bytes), 0 if none; *handle gets the unit to give clheap_free_unit. Serial: see
 * cl/clheap_freeheap.h. */
static CLHEAP_INLINE clheap_size clheap_malloc_strided(CLHEAP_GLOBAL clheap_heap *heap, clheap_u32 count,
                                                       clheap_u32 stride, clheap_u32 *handle)
{
    *handle = 0u;
    if (!clheap_formatted(clheap_words(heap)))
        return 0u;
    return clheap_freeheap_malloc_strided(clheap_words(heap), count, stride, handle);
}
#endif

#ifdef __OPENCL_C_VERSION__
/* Work-group request coalescing. Every work-item of the work-group must call this in
 * uniform control flow (it has barriers); `want` says whether this work-item wants
 * memory, `size` may differ between work-items. With the block allocator the requests
 * of the smallest size class asked for are served together: one work-item reserves their
 * slots, up to 64 with one atomic per block (DynaSOAr's request coalescing); requests of
 * other classes are served one by one. Other allocators serve each request alone.
 * scratch: a __local array of CLHEAP_GROUP_SCRATCH_WORDS words. */
#define CLHEAP_GROUP_MAX_GRANTS 32
#define CLHEAP_GROUP_SCRATCH_WORDS (3 + 4 * CLHEAP_GROUP_MAX_GRANTS)
static CLHEAP_INLINE __global void *clheap_malloc_group(__global clheap_heap *heap, clheap_size size, int want,
                                                        __local clheap_u32 *scratch)
{
#if CLHEAP_HAS_BLOCKS
    __global clheap_u32 *h = clheap_words(heap);
    /* Unformatted: nobody joins, and every barrier is still met by all (no early return). */
    int formatted = clheap_has_magic(h);
    clheap_u32 lid = (clheap_u32)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
    clheap_u32 c = formatted && want && size ? clheap_class_for(h, size) : CLHEAP_MAX_CLASSES;
    if (lid == 0u) {
        scratch[0] = 0u;
        scratch[2] = CLHEAP_MAX_CLASSES;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c != CLHEAP_MAX_CLASSES)
        atomic_min((volatile __local clheap_u32 *)&scratch[2], c);
    barrier(CLK_LOCAL_MEM_FENCE);
    clheap_u32 shared_class = scratch[2];
    int joins = c != CLHEAP_MAX_CLASSES && c == shared_class;
    clheap_u32 rank = joins ? atomic_inc((volatile __local clheap_u32 *)scratch) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE); /* every work-item has read scratch[2]: it is free for the reason */
    if (lid == 0u) {
        clheap_u32 remaining = scratch[0], grants = 0u, why = CLHEAP_HDR_ERR_OUT_OF_MEMORY;
        if (remaining && !clheap_loops_run(h)) { /* the leader's loops end early: nobody is served */
            remaining = 0u;
            why = CLHEAP_HDR_ERR_CONTENDED;
        }
        scratch[2] = why; /* what an unserved work-item counts */
        while (remaining && grants < CLHEAP_GROUP_MAX_GRANTS) {
            clheap_u64 got;
            clheap_u32 frame = clheap_block_reserve_any(h, shared_class, remaining < 64u ? remaining : 64u,
                                                        clheap_rotation_seed() + grants, &got, &why);
            if (frame == CLHEAP_BM_FAIL) {
                scratch[2] = why;
                break;
            }
            __local clheap_u32 *g = scratch + 3 + 4 * grants++;
            g[0] = frame;
            g[1] = clheap_popcount64(got);
            g[2] = (clheap_u32)got;
            g[3] = (clheap_u32)(got >> 32);
            remaining -= g[1];
        }
        scratch[1] = grants;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!want)
        return 0;
    if (!formatted) {
        clheap_count_error(h, CLHEAP_HDR_ERR_UNFORMATTED);
        return 0;
    }
    if (!joins) /* a bad size, or another class than the group's: served alone */
        return clheap_malloc(heap, size);
    for (clheap_u32 k = 0, before = 0; k < scratch[1]; k++) {
        __local clheap_u32 *g = scratch + 3 + 4 * k;
        if (rank < before + g[1]) {
            clheap_u64 bits = (clheap_u64)g[2] | ((clheap_u64)g[3] << 32);
            return clheap_pointer(heap, clheap_slot_unit(h, g[0], shared_class, clheap_nth_bit(bits, rank - before)));
        }
        before += g[1];
    }
    clheap_count_error(h, (int)scratch[2]);
    return 0;
#else
    (void)scratch;
    return want ? clheap_malloc(heap, size) : 0;
#endif
}
#endif

#if CLHEAP_HAS_BLOCKS
/* parallel_do: with `blocks`/`block_count` from clheap_heap_parallel_do, work-item i
 * handles slot i % 64 of block i / 64, and gets its object only if the slot was live
 * when the launch began (the iteration bitmap): objects created during the launch are
 * not visited. Returns NULL for work-items without an object. */
static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_parallel_do_object(CLHEAP_GLOBAL clheap_heap *heap,
                                                                   CLHEAP_GLOBAL const clheap_u32 *blocks,
                                                                   clheap_u32 block_count, clheap_u32 c,
                                                                   clheap_u32 index)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    if (index / 64u >= block_count)
        return 0;
    clheap_u32 frame = blocks[index / 64u], slot = index % 64u;
    if (!((clheap_load64(clheap_block_iter_bits(h, frame)) >> slot) & 1u))
        return 0;
    return clheap_pointer(heap, clheap_slot_unit(h, frame, c, slot));
}

/* device_do: the unit of the next live object of class c after *cursor (start with 0),
 * or 0 at the end. Walks the class's allocated-block bitmap, then each block's slots. */
static CLHEAP_INLINE clheap_u32 clheap_device_do_next(CLHEAP_GLOBAL clheap_heap *heap, clheap_u32 c,
                                                      clheap_u32 *cursor)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    clheap_u32 frames = h[CLHEAP_HDR_FRAME_COUNT];
    for (clheap_u32 pos = *cursor; pos / 64u < frames;) {
        clheap_u32 frame = pos / 64u, slot = pos % 64u;
        if (slot == 0u && !clheap_bm_get(h, CLHEAP_BM_ALLOCATED(c), frame)) {
            pos += 64u;
            continue;
        }
        clheap_u64 live = clheap_load64(clheap_block_alloc_bits(h, frame)) & clheap_class_slots(h, c);
        live = slot ? live & (~(clheap_u64)0 << slot) : live;
        if (!live || clheap_load32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_CLASS) != c + 1u) {
            pos = (frame + 1u) * 64u;
            continue;
        }
        slot = clheap_ctz64(live);
        *cursor = frame * 64u + slot + 1u;
        return clheap_slot_unit(h, frame, c, slot);
    }
    *cursor = frames * 64u;
    return 0u;
}

/* The first frame of the block (or TierAlloc large allocation) holding `obj`, and its
 * class word in *cls; FAIL for a pointer outside the pool or a frame naming no owner in
 * it (every header read stays in the heap, whatever the pointer). */
static CLHEAP_INLINE clheap_u32 clheap_object_block(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *obj,
                                                    clheap_u32 *cls)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    clheap_u32 frame_units = h[CLHEAP_HDR_FRAME_UNITS], first = h[CLHEAP_HDR_POOL_START];
    clheap_u32 frames = h[CLHEAP_HDR_FRAME_COUNT];
    CLHEAP_GLOBAL unsigned char *pool = (CLHEAP_GLOBAL unsigned char *)clheap_pointer(heap, first);
    CLHEAP_GLOBAL unsigned char *p = (CLHEAP_GLOBAL unsigned char *)obj;
    if (p < pool || (clheap_size)(p - pool) >= (clheap_size)frames * frame_units * CLHEAP_UNIT)
        return CLHEAP_BM_FAIL;
    clheap_u32 frame = (clheap_u32)((clheap_size)(p - pool) / CLHEAP_UNIT / frame_units);
    clheap_u32 owner = clheap_load32(clheap_block_header(h, frame) + CLHEAP_BLOCK_WORD_OWNER);
    if (owner >= frames)
        return CLHEAP_BM_FAIL;
    *cls = clheap_load32(clheap_block_header(h, owner) + CLHEAP_BLOCK_WORD_CLASS);
    return owner;
}

/* The start of frame `frame` of the pool. */
static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_frame_pointer(CLHEAP_GLOBAL clheap_heap *heap, clheap_u32 frame)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    return clheap_pointer(heap, h[CLHEAP_HDR_POOL_START] + frame * h[CLHEAP_HDR_FRAME_UNITS]);
}

/* The block base and slot index of an object (for CLHEAP_SOA_FIELD). An object that is
 * no slot of a block (a TierAlloc large allocation or piece, or a pointer outside the
 * pool) is its own base, slot 0. */
static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_block_base(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *obj)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    clheap_u32 cls = 0u, owner = clheap_object_block(heap, obj, &cls);
    if (owner == CLHEAP_BM_FAIL || cls == 0u || cls > h[CLHEAP_HDR_CLASS_COUNT])
        return obj;
    return clheap_frame_pointer(heap, owner);
}
static CLHEAP_INLINE clheap_u32 clheap_slot_index(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *obj)
{
    CLHEAP_GLOBAL clheap_u32 *h = clheap_words(heap);
    clheap_u32 cls = 0u, owner = clheap_object_block(heap, obj, &cls);
    if (owner == CLHEAP_BM_FAIL || cls == 0u || cls > h[CLHEAP_HDR_CLASS_COUNT])
        return 0u;
    CLHEAP_GLOBAL unsigned char *base = (CLHEAP_GLOBAL unsigned char *)clheap_frame_pointer(heap, owner);
    return (clheap_u32)(((CLHEAP_GLOBAL unsigned char *)obj - base) / h[CLHEAP_HDR_CLASS_BYTES + cls - 1u]);
}
#endif

#ifdef CLHEAP_IL
/* A program compiled ahead of time to SPIR-V (cmake/clheapSpirv.cmake) names the allocator
 * it was compiled for in a kernel's name, and the build without 64-bit atomics by a
 * suffix, since the IL keeps no -D options: clheap_heap_build_program_il refuses a module
 * without the heap's allocator and build. */
#if CLHEAP_ATOMICS64
#define CLHEAP_IL_TAG2(n) clheap_il_allocator_##n
#else
#define CLHEAP_IL_TAG2(n) clheap_il_allocator_##n##_atomics32
#endif
#define CLHEAP_IL_TAG(n) CLHEAP_IL_TAG2(n)
__kernel void CLHEAP_IL_TAG(CLHEAP_ALLOCATOR)(void) {}
#endif

#endif
