/* Lock-free hierarchical bitmap (after DynaSOAr, Springer & Masuhara 2019, sec. 4.1),
 * redesigned so that no work-item ever waits for another.
 *
 * Level 0 holds the bits in 64-bit containers; each level above holds one bit per
 * container of the level below, meaning "this container may have a set bit".
 * DynaSOAr keeps the levels consistent by spinning in set/clear until the thread's
 * own change lands; that spin waits for another work-item, which deadlocks on PoCL.
 * Here upper levels are hints kept by three rules, all bounded:
 *   - whoever sets the first bit of a container ORs its bit in the parent (and so on up);
 *   - whoever clears the last bit of a container ANDs its parent bit off, fences
 *     (acquire), then re-reads the container and ORs the bit back if it refilled
 *     meanwhile (the setter fences between its two ORs, so its OR and this re-read
 *     cannot both miss);
 *   - a searcher that follows a parent bit to an empty container repairs it the same way.
 * Invariant when no kernel runs (checked by the host, see heap_walk.c):
 *   a container that is not empty has its bit set in the parent (at every level).
 * The converse may not hold: a parent bit can be set over an empty container (a setter's
 * OR landed after the clearer's re-read). Searchers skip and repair such bits; the host
 * counts them and clheap_heap_repair clears them.
 *
 * A bitmap is described by CLHEAP_BM_DESC_WORDS words in the heap header (see
 * clheap_layout.h): its first container's unit, its bit count, its level count and the
 * container index where each level starts. */
/* Without 64-bit atomics each container is a split word (cl/clheap_port.h, W1 - W3):
 * a setter climbs when the half it set was empty (clheap_bm_was_empty), and a run is
 * claimed by an AND that gives back what it found gone (clheap_bm_take_run_in). Why
 * that keeps the invariant: a container that is not empty has a half that is not, and
 * the setter whose OR last made that half non-empty ORs the parent bit after it,
 * fenced. A clearer that ANDs the parent bit off re-reads that half after it, fenced:
 * the re-read sees the setter's bits and puts the parent bit back, or the setter's OR
 * of the parent comes after the clearer's AND. The argument above, one half at a time. */
#ifndef CLHEAP_BITMAP_H
#define CLHEAP_BITMAP_H

#include "clheap_common.h"

/* clheap_or64 and clheap_and64: cl/clheap_port.h (device and C11 core). */
#ifdef __OPENCL_C_VERSION__
static CLHEAP_INLINE clheap_u32 clheap_popcount64(clheap_u64 v) { return (clheap_u32)popcount(v); }
static CLHEAP_INLINE clheap_u32 clheap_ctz64(clheap_u64 v) { return 63u - (clheap_u32)clz(v & (0ul - v)); }
static CLHEAP_INLINE clheap_u32 clheap_msb64(clheap_u64 v) { return 63u - (clheap_u32)clz(v); } /* v != 0 */
/* Store-then-load ordering across work-items (the re-read rule above needs it). With
 * the PTX probe passed, one device-scope SC fence: the portable three calls compile on
 * NVIDIA to membar.cta and two membar.gl, each on the path of every bitmap level change. */
#ifdef CLHEAP_HAVE_PTX
static CLHEAP_INLINE void clheap_fence_full(void) { asm volatile("fence.sc.gpu;" ::: "memory"); }
#elif defined(CLHEAP_DEVICE_SCOPE_FENCES) && \
    (__OPENCL_C_VERSION__ < 300 || defined(__opencl_c_atomic_order_seq_cst)) /* cl/clheap_port.h */
static CLHEAP_INLINE void clheap_fence_full(void)
{
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
}
#elif defined(CLHEAP_FENCE_BY_ATOMIC)
#define clheap_fence_full() clheap_fence_by_atomic(h)
#else
static CLHEAP_INLINE void clheap_fence_full(void) { mem_fence(CLK_GLOBAL_MEM_FENCE); write_mem_fence(CLK_GLOBAL_MEM_FENCE); read_mem_fence(CLK_GLOBAL_MEM_FENCE); }
#endif
#else
static CLHEAP_INLINE clheap_u32 clheap_popcount64(clheap_u64 v) { return (clheap_u32)__builtin_popcountll(v); }
static CLHEAP_INLINE clheap_u32 clheap_ctz64(clheap_u64 v) { return (clheap_u32)__builtin_ctzll(v); }
static CLHEAP_INLINE clheap_u32 clheap_msb64(clheap_u64 v) { return 63u - (clheap_u32)__builtin_clzll(v); }
/* The device's SC fence: in the model (cl/clheap_port.h) an acquire of what was read and
 * a release for later writes, plus a real store-load barrier for the host threads: a
 * seq_cst read-modify-write of a word no other thread touches (atomic_thread_fence is
 * refused under ThreadSanitizer, and a shared word would order every thread with every
 * other, hiding the races the model is for). */
static CLHEAP_INLINE void clheap_fence_full(void)
{
    atomic_fetch_add_explicit(&clheap_core_orders.barrier, 0u, memory_order_seq_cst);
    clheap_fence_release();
}
#endif

#define CLHEAP_BM_FAIL 0xffffffffu

/* Whether a container whose OR of `bits` found `old` was empty before it, as far as that
 * setter can tell, so that it must set the bit above: with 64-bit atomics the whole
 * container was 0; in a split word, a half that `bits` set in was 0 (W2). */
static CLHEAP_INLINE int clheap_bm_was_empty(clheap_u64 old, clheap_u64 bits)
{
#if CLHEAP_ATOMICS64
    (void)bits;
    return old == 0;
#else
    return (((clheap_u32)bits != 0u) & ((clheap_u32)old == 0u)) | (((bits >> 32) != 0u) & ((old >> 32) == 0u));
#endif
}

/* Rotates right: bit r of v becomes bit 0. */
static CLHEAP_INLINE clheap_u64 clheap_rotr64(clheap_u64 v, clheap_u32 r)
{
    r &= 63u;
    return r ? (v >> r) | (v << (64u - r)) : v;
}

/* The rank-th set bit of v, counted from the lowest (v has more than rank bits). */
static CLHEAP_INLINE clheap_u32 clheap_nth_bit(clheap_u64 v, clheap_u32 rank)
{
    for (; rank; rank--)
        v &= v - 1u;
    return clheap_ctz64(v);
}

/* The first set bit of v at or after position r, cyclically (v != 0). */
static CLHEAP_INLINE clheap_u32 clheap_pick_bit(clheap_u64 v, clheap_u32 r)
{
    return (clheap_ctz64(clheap_rotr64(v, r)) + r) & 63u;
}

/* Container `index` of level 0, which starts at the bitmap's first container (the host
 * writes it so, and the heap check verifies it): one header load where a level's address
 * takes two. Only for a level that is 0 where it is written: a select in the climbing
 * loops (clheap_bm_set_at) made NVIDIA's frees slower (docs/performance.md). */
static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_bm_level0(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                                clheap_u32 index)
{
    return (CLHEAP_GLOBAL clheap_u64 *)(h + (clheap_size)h[desc + CLHEAP_BM_UNIT] * 4u) + index;
}

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u64 *clheap_bm_container(CLHEAP_GLOBAL clheap_u32 *h,
                                                                   clheap_u32 desc, clheap_u32 level,
                                                                   clheap_u32 index)
{
    return clheap_bm_level0(h, desc, h[desc + CLHEAP_BM_LEVEL0 + level] + index);
}

#if CLHEAP_FAST_BUILD
/* Sets the bits above (level, index), whose container was empty, while each container it
 * lands in was empty: clheap_bm_set_at's climb, one function in a build for development. */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_bm_set_above(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                               clheap_u32 level, clheap_u32 index)
{
    clheap_u32 top = h[desc + CLHEAP_BM_LEVELS] - 1u;
    for (clheap_u32 l = level + 1u; l <= top; l++) {
        index >>= 6;
        clheap_fence_full();
        clheap_u64 old = clheap_or64(clheap_bm_container(h, desc, l, index >> 6), (clheap_u64)1 << (index & 63u));
        if (!clheap_bm_was_empty(old, (clheap_u64)1 << (index & 63u)))
            return;
    }
}
#endif

/* Sets bit `index` of `level` and, while the container it landed in was empty, the bits
 * above it. Returns the container's previous value. */
#if CLHEAP_FAST_BUILD
static CLHEAP_INLINE clheap_u64 clheap_bm_set_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                 clheap_u32 level, clheap_u32 index)
{
    clheap_u64 first = clheap_or64(clheap_bm_container(h, desc, level, index >> 6), (clheap_u64)1 << (index & 63u));
    if (clheap_bm_was_empty(first, (clheap_u64)1 << (index & 63u)) && level + 1u < h[desc + CLHEAP_BM_LEVELS])
        clheap_bm_set_above(h, desc, level, index);
    return first;
}
#else
static CLHEAP_INLINE clheap_u64 clheap_bm_set_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                 clheap_u32 level, clheap_u32 index)
{
    clheap_u32 top = h[desc + CLHEAP_BM_LEVELS] - 1u;
    clheap_u64 first = 0;
    for (clheap_u32 l = level;; l++, index >>= 6) {
        clheap_u64 old = clheap_or64(clheap_bm_container(h, desc, l, index >> 6),
                                     (clheap_u64)1 << (index & 63u));
        if (l == level)
            first = old;
        if (!clheap_bm_was_empty(old, (clheap_u64)1 << (index & 63u)) || l == top)
            return first;
        clheap_fence_full();
    }
}
#endif

/* The container (level, index) was seen empty: clear its bit in the levels above, with
 * the re-read that restores it if the container refilled. */
static CLHEAP_INLINE CLHEAP_SLOW_CALL void clheap_bm_clear_above(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                                 clheap_u32 level, clheap_u32 index)
{
    clheap_u32 top = h[desc + CLHEAP_BM_LEVELS] - 1u;
    for (; level < top; level++, index >>= 6) {
        clheap_u64 bit = (clheap_u64)1 << (index & 63u);
        clheap_u64 old = clheap_and64(clheap_bm_container(h, desc, level + 1u, index >> 6), ~bit);
        /* Happens-before: a setter ORs the container, fences, then ORs our parent bit. If
         * our AND came after that OR, it read what the OR wrote, and this acquire orders
         * the re-read after the setter's container OR, which it then sees; if before,
         * the setter's OR puts the bit back. Without the fence the two relaxed atomics
         * may run in either order (a GPU did: the re-read missed the setter and the AND
         * cleared its bit, leaving a container that is not empty under a clear bit). */
        clheap_fence_acquire();
        if (clheap_or64(clheap_bm_container(h, desc, level, index), 0) != 0) {
            clheap_bm_set_at(h, desc, level + 1u, index); /* refilled: put it back */
            return;
        }
        if ((old & ~bit) != 0)
            return; /* the parent still has other bits */
    }
}

/* Sets bit pos; returns 1 if this call changed it from 0. */
static CLHEAP_INLINE int clheap_bm_try_set(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 pos)
{
    return !((clheap_bm_set_at(h, desc, 0u, pos) >> (pos & 63u)) & 1u);
}

/* Clears the bits of mask in level-0 container c with one AND and returns the value it
 * found; if that took exactly the container's last bits, clears its bit above. */
static CLHEAP_INLINE clheap_u64 clheap_bm_clear_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                                     clheap_u64 mask)
{
    clheap_u64 old = clheap_and64(clheap_bm_level0(h, desc, c), ~mask);
    if (old == mask) {
        clheap_fence_full();
        clheap_bm_clear_above(h, desc, 0u, c);
    }
    return old;
}

/* Clears bit pos; returns 1 if this call changed it from 1. */
static CLHEAP_INLINE int clheap_bm_try_clear(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 pos)
{
    clheap_u64 bit = (clheap_u64)1 << (pos & 63u);
    return (clheap_bm_clear_bits(h, desc, pos >> 6, bit) & bit) != 0;
}

static CLHEAP_INLINE int clheap_bm_get(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 pos)
{
    return (int)((clheap_load64(clheap_bm_level0(h, desc, pos >> 6)) >> (pos & 63u)) & 1u);
}

#define CLHEAP_BM_STALE (CLHEAP_BM_FAIL - 1u) /* a descent met a stale hint (and repaired it) */

#define CLHEAP_BM_HIGHEST 0xFFFFFFFFu /* clheap_bm_descend's r: the highest set bit at each level */

/* One descent from the top to a level-0 container that had a set bit, taking at each
 * level the first set bit at or after that level's 6 bits of r (r = 0: the lowest;
 * CLHEAP_BM_HIGHEST: the highest). Returns the container index at level 0 and its
 * value; FAIL if the bitmap is empty; STALE if it met an empty container under a set
 * bit, whose hint it repaired. */
static CLHEAP_INLINE clheap_u32 clheap_bm_descend(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 r,
                                                  clheap_u64 *value)
{
    clheap_u32 top = h[desc + CLHEAP_BM_LEVELS] - 1u, index = 0;
    for (clheap_u32 l = top;; l--) {
        clheap_u64 v = clheap_load64(clheap_bm_container(h, desc, l, index));
        if (v == 0) {
            if (l == top)
                return CLHEAP_BM_FAIL; /* nothing set anywhere */
            clheap_bm_clear_above(h, desc, l, index);
            return CLHEAP_BM_STALE;
        }
        if (l == 0) {
            *value = v;
            return index;
        }
        index = index * 64u + (r == CLHEAP_BM_HIGHEST ? clheap_msb64(v) : clheap_pick_bit(v, r >> ((l * 6u) & 31u)));
    }
}

/* Descends to a level-0 container that had a set bit, choosing among set bits by
 * rotating with `seed` (DynaSOAr's bitmap rotation, so that work-items spread over
 * containers). Returns the container index at level 0 and its value, or FAIL. Stale
 * hints met on the way are repaired and the descent tried again, at most
 * CLHEAP_BM_FIND_TRIES times. */
static CLHEAP_INLINE clheap_u32 clheap_bm_find_container(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                         clheap_u32 seed, clheap_u64 *value)
{
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BM_FIND_TRIES; attempt++) {
        clheap_u32 c = clheap_bm_descend(h, desc, clheap_hash32(seed + attempt * 0x9E3779B9u), value);
        if (c != CLHEAP_BM_STALE)
            return c;
    }
    return CLHEAP_BM_FAIL;
}

/* The position of some set bit, or FAIL (it may be cleared by the time it is used). */
static CLHEAP_INLINE clheap_u32 clheap_bm_try_find_set(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                       clheap_u32 seed)
{
    clheap_u64 v;
    clheap_u32 c = clheap_bm_find_container(h, desc, seed, &v);
    return c == CLHEAP_BM_FAIL ? c : c * 64u + clheap_pick_bit(v, clheap_hash32(seed) >> 26);
}

/* Finds a set bit and clears it; returns its position, or FAIL after bounded tries. */
static CLHEAP_INLINE clheap_u32 clheap_bm_try_find_and_clear(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                             clheap_u32 seed)
{
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BM_FIND_TRIES; attempt++) {
        clheap_u32 pos = clheap_bm_try_find_set(h, desc, seed + attempt * 0x632BE5ABu);
        if (pos == CLHEAP_BM_FAIL || clheap_bm_try_clear(h, desc, pos))
            return pos;
    }
    return CLHEAP_BM_FAIL;
}

/* Whether the top level shows a set bit anywhere (it may be stale by a few operations). */
static CLHEAP_INLINE int clheap_bm_any_set(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc)
{
    return clheap_load64(clheap_bm_container(h, desc, h[desc + CLHEAP_BM_LEVELS] - 1u, 0u)) != 0;
}

/* Where a sweep starts (a container index from the seed), the bitmap's container count,
 * and how many level-0 containers the sweep visits: at most max_containers, none if the
 * top level says the bitmap is empty. */
static CLHEAP_INLINE clheap_u32 clheap_bm_sweep_span(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 seed,
                                                     clheap_u32 max_containers, clheap_u32 *start,
                                                     clheap_u32 *containers)
{
    *containers = (h[desc + CLHEAP_BM_BITS] + 63u) / 64u;
    *start = clheap_hash32(seed) % *containers;
    if (!clheap_bm_any_set(h, desc))
        return 0u;
    return *containers < max_containers ? *containers : max_containers;
}

/* The last resort of a search that would otherwise fail while bits may be set (random
 * descents lose races under heavy contention): visit up to max_containers level-0
 * containers in order from a rotated start and try every set bit. Bounded; immediate
 * when the top level says the bitmap is empty. Returns the position cleared, or FAIL;
 * if clear is 0 it clears nothing and returns the first set bit seen. */
static CLHEAP_INLINE clheap_u32 clheap_bm_sweep(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 seed,
                                                clheap_u32 max_containers, int clear)
{
    clheap_u32 start, containers;
    clheap_u32 visits = clheap_bm_sweep_span(h, desc, seed, max_containers, &start, &containers);
    for (clheap_u32 i = 0; i < visits; i++) {
        clheap_u32 c = (start + i) % containers;
        for (clheap_u64 v = clheap_load64(clheap_bm_level0(h, desc, c)); v;) {
            clheap_u32 pos = c * 64u + clheap_ctz64(v);
            if (!clear)
                return pos;
            clheap_u64 bit = v & (0u - v), old = clheap_bm_clear_bits(h, desc, c, bit);
            if (old & bit)
                return pos;
            v &= old; /* the bits others took since (this one too) are not tried */
        }
    }
    return CLHEAP_BM_FAIL;
}

/* `count` (1..64) consecutive ones from bit 0. */
static CLHEAP_INLINE clheap_u64 clheap_ones64(clheap_u32 count)
{
    return count == 64u ? ~(clheap_u64)0 : (((clheap_u64)1 << count) - 1u);
}

static CLHEAP_INLINE void clheap_bm_put_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                             clheap_u64 bits);

/* Clears a run of `count` (1..64) set bits in level-0 container c, whose value was read
 * as v; returns the first position, or FAIL (no run left in it, or four lost CASes).
 * Runs start at multiples of `count` when one is free (so a container packs 64 / count
 * runs, where arbitrary starts would leave gaps no run fits in), else at the lowest free
 * start. A lost CAS is retried against the value it returned; *fit (may be NULL) is set
 * when a run was there to take. */
static CLHEAP_INLINE clheap_u32 clheap_bm_take_run_in(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                                      clheap_u64 v, clheap_u32 count, int *fit)
{
    clheap_u64 aligned = 0;
    for (clheap_u32 k = 0; k + count <= 64u; k += count)
        aligned |= (clheap_u64)1 << k;
    clheap_u64 ones = clheap_ones64(count);
#if CLHEAP_ATOMICS64
    CLHEAP_GLOBAL clheap_u64 *word = clheap_bm_level0(h, desc, c);
#endif
    for (int retry = 0; retry < 4 && v; retry++) {
        /* starts: bit i set iff bits i .. i+count-1 are all set */
        clheap_u64 starts = v;
        for (clheap_u32 k = 1u; k < count && starts; k++)
            starts &= v >> k;
        if (count > 1u)
            starts &= ~(clheap_u64)0 >> (count - 1u);
        if (!starts)
            break; /* fragmented container */
        if (fit)
            *fit = 1;
        clheap_u64 preferred = starts & aligned ? starts & aligned : starts;
        clheap_u32 first = clheap_ctz64(preferred);
        clheap_u64 run = ones << first;
#if CLHEAP_ATOMICS64
        clheap_u64 seen = clheap_cas64(word, v, v & ~run);
        if (seen == v) {
            if ((v & ~run) == 0)
                clheap_bm_clear_above(h, desc, 0u, c);
            return c * 64u + first;
        }
        v = seen; /* someone else took bits here: look again at what is left */
#else /* W3: the AND takes the run if every bit of it was there, else gives back its part */
        clheap_u64 seen = clheap_bm_clear_bits(h, desc, c, run);
        if ((seen & run) == run)
            return c * 64u + first;
        if (seen & run)
            clheap_bm_put_bits(h, desc, c, seen & run);
        v = seen & ~run;
#endif
    }
    return CLHEAP_BM_FAIL;
}

/* Clears a run of `count` (1..64) set bits inside one level-0 container found by
 * rotated descents; returns the first position, or FAIL. Used to take contiguous frames
 * for a block. */
static CLHEAP_INLINE clheap_u32 clheap_bm_try_take_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                       clheap_u32 count, clheap_u32 seed)
{
    for (clheap_u32 attempt = 0; attempt < CLHEAP_BM_FIND_TRIES; attempt++) {
        clheap_u64 v;
        clheap_u32 c = clheap_bm_find_container(h, desc, seed + attempt * 0x632BE5ABu, &v);
        if (c == CLHEAP_BM_FAIL)
            return c;
        clheap_u32 pos = clheap_bm_take_run_in(h, desc, c, v, count, (int *)0);
        if (pos != CLHEAP_BM_FAIL)
            return pos;
    }
    return CLHEAP_BM_FAIL;
}

/* The last resort of a run search whose descents lost their races: up to max_containers
 * level-0 containers in order from a rotated start, each tried for a run. Returns the
 * first position taken, or FAIL; *fit is set if a run was there (so a FAIL was lost
 * races, not a lack of room in the containers swept). */
static CLHEAP_INLINE clheap_u32 clheap_bm_sweep_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 count,
                                                    clheap_u32 seed, clheap_u32 max_containers, int *fit)
{
    clheap_u32 start, containers;
    clheap_u32 visits = clheap_bm_sweep_span(h, desc, seed, max_containers, &start, &containers);
    for (clheap_u32 i = 0; i < visits; i++) {
        clheap_u32 c = (start + i) % containers;
        clheap_u64 v = clheap_load64(clheap_bm_level0(h, desc, c));
        clheap_u32 pos = v ? clheap_bm_take_run_in(h, desc, c, v, count, fit) : CLHEAP_BM_FAIL;
        if (pos != CLHEAP_BM_FAIL)
            return pos;
    }
    return CLHEAP_BM_FAIL;
}

/* Sets bits of level-0 container c, whose address is `word`, and while the containers it
 * lands in were empty the bits above (clheap_bm_set_at's climb from level 1); returns the
 * container's previous value. */
static CLHEAP_INLINE clheap_u64 clheap_bm_put_bits_at(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                      CLHEAP_GLOBAL clheap_u64 *word, clheap_u32 c, clheap_u64 bits)
{
    clheap_u64 old = clheap_or64(word, bits);
    if (clheap_bm_was_empty(old, bits) && h[desc + CLHEAP_BM_LEVELS] > 1u) {
        clheap_fence_full();
        clheap_bm_set_at(h, desc, 1u, c);
    }
    return old;
}

/* Sets a run of count bits inside one container (the inverse of try_take_run). */
static CLHEAP_INLINE void clheap_bm_put_bits(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 c,
                                             clheap_u64 bits)
{
    clheap_bm_put_bits_at(h, desc, clheap_bm_level0(h, desc, c), c, bits);
}

static CLHEAP_INLINE void clheap_bm_put_run(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc, clheap_u32 pos,
                                            clheap_u32 count)
{
    clheap_bm_put_bits(h, desc, pos >> 6, clheap_ones64(count) << (pos & 63u));
}

/* Initialisation: container `i` of all levels (one work-item each) set to `fill`
 * (all bits of the level that exist) or 0. */
static CLHEAP_INLINE void clheap_bm_init_container(CLHEAP_GLOBAL clheap_u32 *h, clheap_u32 desc,
                                                   clheap_u32 i, int fill)
{
    clheap_u32 levels = h[desc + CLHEAP_BM_LEVELS];
    clheap_u32 bits = h[desc + CLHEAP_BM_BITS];
    for (clheap_u32 l = 0; l < levels; l++) {
        clheap_u32 containers = (bits + 63u) / 64u;
        if (i < containers) {
            clheap_u64 v = 0;
            if (fill) {
                clheap_u32 here = bits - i * 64u;
                v = clheap_ones64(here >= 64u ? 64u : here);
            }
            clheap_store64(clheap_bm_container(h, desc, l, i), v);
            return;
        }
        i -= containers;
        bits = containers;
    }
}

/* Growth (clheap_heap_grow): container i (all levels numbered on, as above) of bitmap
 * `desc` of the grown heap h, from the same bitmap of the old heap: its old value, with
 * bits [lo, hi) (the new items that start set) and the bits above them set. Every old
 * container keeps its index at its level, so its parent bit stays where it was; a level
 * the old bitmap lacked has one bit over all the old containers, set if the old top
 * container is not empty. Writes only h's container i: one work-item per container. */
static CLHEAP_INLINE void clheap_bm_grow_container(CLHEAP_GLOBAL clheap_u32 *h, CLHEAP_GLOBAL clheap_u32 *old,
                                                   clheap_u32 desc, clheap_u32 i, clheap_u32 lo, clheap_u32 hi)
{
    clheap_u32 levels = h[desc + CLHEAP_BM_LEVELS], old_levels = old[desc + CLHEAP_BM_LEVELS];
    clheap_u32 bits = h[desc + CLHEAP_BM_BITS], old_bits = old[desc + CLHEAP_BM_BITS];
    for (clheap_u32 l = 0; l < levels; l++) {
        clheap_u32 containers = (bits + 63u) / 64u, old_containers = (old_bits + 63u) / 64u;
        if (i < containers) {
            clheap_u64 v = 0;
            if (l < old_levels && i < old_containers)
                v = clheap_load64(clheap_bm_container(old, desc, l, i));
            else if (l >= old_levels && i == 0u)
                v = clheap_load64(clheap_bm_container(old, desc, old_levels - 1u, 0u)) != 0u;
            if (lo < hi) { /* level-l bits [lo >> 6l, (hi - 1) >> 6l] cover the new set items */
                clheap_u32 first = lo >> (6u * l), last = (hi - 1u) >> (6u * l);
                first = first > i * 64u ? first : i * 64u;
                last = last < i * 64u + 63u ? last : i * 64u + 63u;
                if (first <= last)
                    v |= clheap_ones64(last - first + 1u) << (first - i * 64u);
            }
            clheap_store64(clheap_bm_container(h, desc, l, i), v);
            return;
        }
        i -= containers;
        bits = containers;
        old_bits = l < old_levels ? old_containers : 1u;
    }
}

#endif
