/* clheap device core portability: the same allocator source compiles as OpenCL C 1.2
 * (device) and as C11 with <stdatomic.h> (host: ThreadSanitizer stress test, fuzzer).
 *
 * Shared words are only touched through these helpers: plain loads are hoisted out of
 * loops by both PoCL and NVIDIA, so loads are volatile (OpenCL) or atomic (C11).
 * Fences: OpenCL's mem_fence(CLK_GLOBAL_MEM_FENCE) is work-group scope on NVIDIA
 * (membar.cta); read_/write_mem_fence(CLK_GLOBAL_MEM_FENCE) are device scope
 * (membar.gl) there, which is what publishing a header to other work-groups needs (with
 * the PTX probe passed, fence.acq_rel.gpu, below); on OpenCL C 2.0 and later the fences
 * are device-scope atomic_work_item_fence (below). */
#ifndef CLHEAP_PORT_H
#define CLHEAP_PORT_H

/* 64-bit atomics (cl_khr_int64_base_atomics and _extended_atomics): 1 unless the host
 * builds for a device without them (host/heap.c passes -DCLHEAP_ATOMICS64=0). Without
 * them a 64-bit word's OR, AND and exchange are two 32-bit atomics (the split word, at
 * the end of this file), and no word has a 64-bit compare-and-swap or add: an allocator
 * that needs one (the fused CircularMalloc variants) does not compile, and the host
 * refuses it first (clheap_allocator_needs_atomics64). */
#ifndef CLHEAP_ATOMICS64
#define CLHEAP_ATOMICS64 1
#endif

#ifdef __OPENCL_C_VERSION__
#if CLHEAP_ATOMICS64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif
/* OpenCL C 2.0 and later (3.0: where the device has device scope and acquire/release
 * order; without the generic address space the atomics' named-space overloads serve): the
 * memory model's scopes. There OpenCL C 1.2's fences
 * are work-group scope, and so are its atomics as SPIR-V carries them (llvm-spirv 14 gives
 * atomic_add & co. work-group scope: SPIRV-LLVM-Translator issue 934), so every fence and
 * atomic below names device scope: the edges they make join work-groups. */
#if __OPENCL_C_VERSION__ >= 200 && (__OPENCL_C_VERSION__ < 300 || (defined(__opencl_c_atomic_scope_device) && \
                                                                    defined(__opencl_c_atomic_order_acq_rel)))
#define CLHEAP_DEVICE_SCOPE_FENCES 1
#endif

#define CLHEAP_GLOBAL __global
#define CLHEAP_INLINE inline
/* Before a bounded retry loop whose body inlines a large path: unrolled, the copies
 * multiplied until NVIDIA's compiler took minutes over one program. */
#define CLHEAP_NO_UNROLL _Pragma("unroll 1")
/* A path taken only on the way to a NULL: compiled as a function of its own, so that its
 * registers do not count against malloc's fast path (NVIDIA allocates a kernel's
 * registers for its largest inlined path). */
#define CLHEAP_COLD __attribute__((noinline))
/* A function that many call sites reach (a slow path, or malloc and free themselves):
 * compiled once, as a function, however many there are (the program stays small). */
#define CLHEAP_OUTLINE __attribute__((noinline))
typedef uint clheap_u32;
typedef ulong clheap_u64;
typedef ulong clheap_size;

static CLHEAP_INLINE clheap_u32 clheap_load32(CLHEAP_GLOBAL clheap_u32 *p)
{
    return *(volatile CLHEAP_GLOBAL clheap_u32 *)p;
}
static CLHEAP_INLINE void clheap_store32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    *(volatile CLHEAP_GLOBAL clheap_u32 *)p = v;
}
static CLHEAP_INLINE clheap_u64 clheap_load64(CLHEAP_GLOBAL clheap_u64 *p)
{
    return *(volatile CLHEAP_GLOBAL clheap_u64 *)p;
}
static CLHEAP_INLINE void clheap_store64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    *(volatile CLHEAP_GLOBAL clheap_u64 *)p = v;
}
#ifdef CLHEAP_DEVICE_SCOPE_FENCES
/* Relaxed at device scope, as OpenCL C 1.2's atomics are on the devices clheap runs on. */
#define CLHEAP_ATOMIC32(p) ((volatile CLHEAP_GLOBAL atomic_uint *)(p))
#define CLHEAP_ATOMIC64(p) ((volatile CLHEAP_GLOBAL atomic_ulong *)(p))
#define CLHEAP_RELAXED_DEVICE memory_order_relaxed, memory_scope_device
static CLHEAP_INLINE clheap_u32 clheap_cas32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 expected,
                                             clheap_u32 desired)
{
    atomic_compare_exchange_strong_explicit(CLHEAP_ATOMIC32(p), &expected, desired, memory_order_relaxed,
                                            CLHEAP_RELAXED_DEVICE);
    return expected; /* the old value, whether or not it swapped */
}
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE clheap_u64 clheap_cas64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 expected,
                                             clheap_u64 desired)
{
    atomic_compare_exchange_strong_explicit(CLHEAP_ATOMIC64(p), &expected, desired, memory_order_relaxed,
                                            CLHEAP_RELAXED_DEVICE);
    return expected;
}
#endif
static CLHEAP_INLINE clheap_u32 clheap_add32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_fetch_add_explicit(CLHEAP_ATOMIC32(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u32 clheap_or32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_fetch_or_explicit(CLHEAP_ATOMIC32(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u32 clheap_and32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_fetch_and_explicit(CLHEAP_ATOMIC32(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u32 clheap_xchg32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_exchange_explicit(CLHEAP_ATOMIC32(p), v, CLHEAP_RELAXED_DEVICE);
}
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE clheap_u64 clheap_add64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atomic_fetch_add_explicit(CLHEAP_ATOMIC64(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u64 clheap_xchg64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atomic_exchange_explicit(CLHEAP_ATOMIC64(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u64 clheap_or64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atomic_fetch_or_explicit(CLHEAP_ATOMIC64(p), v, CLHEAP_RELAXED_DEVICE);
}
static CLHEAP_INLINE clheap_u64 clheap_and64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atomic_fetch_and_explicit(CLHEAP_ATOMIC64(p), v, CLHEAP_RELAXED_DEVICE);
}
#endif
#else
static CLHEAP_INLINE clheap_u32 clheap_cas32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 expected,
                                             clheap_u32 desired)
{
    return atomic_cmpxchg((volatile CLHEAP_GLOBAL clheap_u32 *)p, expected, desired);
}
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE clheap_u64 clheap_cas64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 expected,
                                             clheap_u64 desired)
{
    return atom_cmpxchg(p, expected, desired);
}
#endif
static CLHEAP_INLINE clheap_u32 clheap_add32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_add((volatile CLHEAP_GLOBAL clheap_u32 *)p, v);
}
static CLHEAP_INLINE clheap_u32 clheap_or32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_or((volatile CLHEAP_GLOBAL clheap_u32 *)p, v);
}
static CLHEAP_INLINE clheap_u32 clheap_and32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_and((volatile CLHEAP_GLOBAL clheap_u32 *)p, v);
}
static CLHEAP_INLINE clheap_u32 clheap_xchg32(CLHEAP_GLOBAL clheap_u32 *p, clheap_u32 v)
{
    return atomic_xchg((volatile CLHEAP_GLOBAL clheap_u32 *)p, v);
}
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE clheap_u64 clheap_add64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atom_add(p, v);
}
static CLHEAP_INLINE clheap_u64 clheap_xchg64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atom_xchg(p, v);
}
static CLHEAP_INLINE clheap_u64 clheap_or64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atom_or(p, v);
}
static CLHEAP_INLINE clheap_u64 clheap_and64(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)
{
    return atom_and(p, v);
}
#endif
#endif
/* Publish: everything written before is visible device-wide before what follows.
 * Consume: reads after clheap_fence_acquire see what the publisher wrote before its
 * release fence. Every edge the headers document joins work-groups, so both are device
 * scope. OpenCL C 1.2 has no scopes: read_/write_mem_fence are what NVIDIA lowers to
 * membar.gl and PoCL to CPU fences (above). From OpenCL C 2.0 on, the memory model makes
 * those two work-group scope, so there the fences are atomic_work_item_fence at device
 * scope (OpenCL C 3.0: where the device has that scope and acquire/release order). */
#ifdef CLHEAP_DEVICE_SCOPE_FENCES
static CLHEAP_INLINE void clheap_fence_release(void)
{
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
}
static CLHEAP_INLINE void clheap_fence_acquire(void)
{
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);
}
#elif defined(CLHEAP_FENCE_BY_ATOMIC)
/* Where the driver makes OpenCL C 1.2's fences work-group barriers (Mesa 22.3's llvmpipe:
 * a work-group's SIMD vectors that reach different numbers of fences stop there, and the
 * work-items beyond a fence never run; host/heap.c probes for it and passes this), each
 * fence is an atomic add of 0 to a header word (clheap_fence_by_atomic, cl/clheap_common.h):
 * the compiler keeps accesses on their side of it, and those drivers lower it to a
 * locked CPU instruction, a full fence. Every caller has the heap's words in `h`. */
#define clheap_fence_release() clheap_fence_by_atomic(h)
#define clheap_fence_acquire() clheap_fence_by_atomic(h)
#elif defined(CLHEAP_HAVE_PTX)
/* NVIDIA lowers read_/write_mem_fence to membar.gl, an SC fence. The edges these two make
 * are release/acquire ones (the C11 model below gives them no more), and PTX's
 * fence.acq_rel.gpu, with the relaxed device-scope atomics around it, makes exactly those;
 * the store-load rule has clheap_fence_full (cl/clheap_bitmap.h), which stays SC. */
static CLHEAP_INLINE void clheap_fence_release(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
static CLHEAP_INLINE void clheap_fence_acquire(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
#else
static CLHEAP_INLINE void clheap_fence_release(void) { write_mem_fence(CLK_GLOBAL_MEM_FENCE); }
static CLHEAP_INLINE void clheap_fence_acquire(void) { read_mem_fence(CLK_GLOBAL_MEM_FENCE); }
#endif
/* The caller's accesses that follow depend on the value just read (a malloc's address).
 * OpenCL C 1.2: no fence, the dependency orders them on every GPU clheap runs on. The
 * OpenCL 2.0 model orders nothing by dependency, so there it is an acquire fence. Named
 * so that the C11 model (below) can treat it as the acquire it stands for. */
#ifdef CLHEAP_DEVICE_SCOPE_FENCES
static CLHEAP_INLINE void clheap_fence_dependency(void) { clheap_fence_acquire(); }
#else
static CLHEAP_INLINE void clheap_fence_dependency(void) {}
#endif
/* Which roving offset a multi-offset allocator uses. OpenCL has no SM id: the
 * work-group id spreads groups over the offsets the way a scheduler spreads them over
 * compute units. */
#define clheap_group_index() ((clheap_u32)get_group_id(0))
/* The launch's group count and this work-item's 32-item slice of its group (a warp on
 * NVIDIA): TierAlloc spreads small launches over its hint slots with them. */
#define clheap_group_count() ((clheap_u32)get_num_groups(0))
#define clheap_warp_in_group() ((clheap_u32)get_local_id(0) / 32u)
/* Work-items in the launch: TierAlloc's free chooses how much of its work to defer. */
#define clheap_launch_items() ((clheap_size)get_global_size(0) * get_global_size(1) * get_global_size(2))
/* Seed for bitmap rotation: spreads work-items (DynaSOAr rotates by warp id). */
#define clheap_rotation_seed() ((clheap_u32)get_global_id(0) * 0x9E3779B1u + (clheap_u32)get_global_id(1))

#else /* C11 on the host */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CLHEAP_GLOBAL
#define CLHEAP_INLINE inline
#define CLHEAP_NO_UNROLL
#define CLHEAP_COLD
#define CLHEAP_OUTLINE
typedef uint32_t clheap_u32;
typedef uint64_t clheap_u64;
typedef size_t clheap_size;

/* The host build models the device's orderings, no stronger (DEVELOPERS.md), so that
 * ThreadSanitizer sees a missing device fence as a race on the data it should have
 * ordered: the payload, which the tests write with plain stores. Every shared-word access
 * is relaxed, as the device's volatile accesses and atomics are. TSan ignores standalone
 * fences, so each device fence becomes orderings it checks, within one operation (a
 * malloc or a free: tests/core_heap.c calls clheap_core_begin first):
 *   clheap_fence_release   every later atomic write of the operation (store, or
 *                          read-modify-write that writes) is a release; it is also an
 *                          acquire as below, since the devices' release fence is an
 *                          acquire too (fence.acq_rel.gpu or membar.gl on NVIDIA, a CPU
 *                          fence on PoCL). A free with no fence before the atomic that
 *                          makes its slot reusable leaves the payload's last writes
 *                          unordered.
 *   clheap_fence_acquire   acquire re-loads of the words the operation's atomic reads
 *                          touched (the last CLHEAP_CORE_READS of them), which synchronise
 *                          with the releases that wrote them, as the device's fence after
 *                          those reads does.
 *   clheap_fence_dependency  no fence on the device: what follows (the caller's writes to
 *                          the address a malloc just won) depends on the value read, and
 *                          no GPU performs a store before its address is known. The model
 *                          cannot see dependencies, so it treats it as clheap_fence_acquire.
 * Compare-and-swap reads like a load and writes like a store. */
/* Tests that choose the interleaving (tests/test_core_schedule.c) get a call before
 * every shared-word access, the word it is about to touch in clheap_core_next_word (a
 * replay stops a lane there: tests/test_core_replay.c); other builds nothing. */
#ifdef CLHEAP_CORE_SCHEDULED
void clheap_core_schedule_step(void);
extern const void *clheap_core_next_word;
#define CLHEAP_CORE_STEP(p) (clheap_core_next_word = (const void *)(p), clheap_core_schedule_step())
#else
#define CLHEAP_CORE_STEP(p) ((void)0)
#endif
#define CLHEAP_A32(p) ((_Atomic clheap_u32 *)(p))
#define CLHEAP_A64(p) ((_Atomic clheap_u64 *)(p))
#ifndef CLHEAP_CORE_READS
#define CLHEAP_CORE_READS 16
#endif
typedef struct {
    void *word[CLHEAP_CORE_READS];
    unsigned char wide[CLHEAP_CORE_READS];
    unsigned count;  /* reads recorded since the last acquire (the ring keeps the last ones) */
    int release;     /* a release fence came earlier in the operation */
    _Atomic unsigned barrier; /* clheap_fence_full's private word (cl/clheap_bitmap.h) */
} clheap_core_order;
extern _Thread_local clheap_core_order clheap_core_orders;

static CLHEAP_INLINE void clheap_core_read(void *p, int wide)
{
    unsigned i = clheap_core_orders.count++ % CLHEAP_CORE_READS;
    clheap_core_orders.word[i] = p;
    clheap_core_orders.wide[i] = (unsigned char)wide;
}
static CLHEAP_INLINE memory_order clheap_core_write_order(void)
{
    return clheap_core_orders.release ? memory_order_release : memory_order_relaxed;
}
/* A new operation: no fence of the last one orders anything of this one. */
static CLHEAP_INLINE void clheap_core_begin(void)
{
    clheap_core_orders.release = 0;
    clheap_core_orders.count = 0;
}
static CLHEAP_INLINE clheap_u32 clheap_load32(clheap_u32 *p)
{
    CLHEAP_CORE_STEP(p);
    clheap_core_read(p, 0);
    return atomic_load_explicit(CLHEAP_A32(p), memory_order_relaxed);
}
static CLHEAP_INLINE void clheap_store32(clheap_u32 *p, clheap_u32 v)
{
    CLHEAP_CORE_STEP(p);
    atomic_store_explicit(CLHEAP_A32(p), v, clheap_core_write_order());
}
#if CLHEAP_ATOMICS64 /* else the split word's (below): one size of atomic on each word */
static CLHEAP_INLINE clheap_u64 clheap_load64(clheap_u64 *p)
{
    CLHEAP_CORE_STEP(p);
    clheap_core_read(p, 1);
    return atomic_load_explicit(CLHEAP_A64(p), memory_order_relaxed);
}
static CLHEAP_INLINE void clheap_store64(clheap_u64 *p, clheap_u64 v)
{
    CLHEAP_CORE_STEP(p);
    atomic_store_explicit(CLHEAP_A64(p), v, clheap_core_write_order());
}
#endif
static CLHEAP_INLINE clheap_u32 clheap_cas32(clheap_u32 *p, clheap_u32 expected, clheap_u32 desired)
{
    CLHEAP_CORE_STEP(p);
    clheap_core_read(p, 0);
    atomic_compare_exchange_strong_explicit(CLHEAP_A32(p), &expected, desired, clheap_core_write_order(),
                                            memory_order_relaxed);
    return expected;
}
#if CLHEAP_ATOMICS64
static CLHEAP_INLINE clheap_u64 clheap_cas64(clheap_u64 *p, clheap_u64 expected, clheap_u64 desired)
{
    CLHEAP_CORE_STEP(p);
    clheap_core_read(p, 1);
    atomic_compare_exchange_strong_explicit(CLHEAP_A64(p), &expected, desired, clheap_core_write_order(),
                                            memory_order_relaxed);
    return expected;
}
#endif
/* The core's read-modify-writes: a scheduling step, the word noted for the next acquire
 * fence (clheap_core_read; wide: a 64-bit word), then the atomic in the device's write
 * order. One body for all, each a line below. */
#define CLHEAP_CORE_RMW(name, type, wide, word, atomic)             \
    static CLHEAP_INLINE type name(type *p, type v)                 \
    {                                                               \
        CLHEAP_CORE_STEP(p);                                        \
        clheap_core_read(p, wide);                                  \
        return atomic(word(p), v, clheap_core_write_order());      \
    }
CLHEAP_CORE_RMW(clheap_add32, clheap_u32, 0, CLHEAP_A32, atomic_fetch_add_explicit)
CLHEAP_CORE_RMW(clheap_or32, clheap_u32, 0, CLHEAP_A32, atomic_fetch_or_explicit)
CLHEAP_CORE_RMW(clheap_and32, clheap_u32, 0, CLHEAP_A32, atomic_fetch_and_explicit)
CLHEAP_CORE_RMW(clheap_xchg32, clheap_u32, 0, CLHEAP_A32, atomic_exchange_explicit)
#if CLHEAP_ATOMICS64
CLHEAP_CORE_RMW(clheap_add64, clheap_u64, 1, CLHEAP_A64, atomic_fetch_add_explicit)
CLHEAP_CORE_RMW(clheap_xchg64, clheap_u64, 1, CLHEAP_A64, atomic_exchange_explicit)
CLHEAP_CORE_RMW(clheap_or64, clheap_u64, 1, CLHEAP_A64, atomic_fetch_or_explicit)
CLHEAP_CORE_RMW(clheap_and64, clheap_u64, 1, CLHEAP_A64, atomic_fetch_and_explicit)
#endif
static CLHEAP_INLINE void clheap_fence_acquire(void)
{
    unsigned n = clheap_core_orders.count < CLHEAP_CORE_READS ? clheap_core_orders.count : CLHEAP_CORE_READS;
    for (unsigned i = 0; i < n; i++) {
        if (clheap_core_orders.wide[i])
            (void)atomic_load_explicit(CLHEAP_A64(clheap_core_orders.word[i]), memory_order_acquire);
        else
            (void)atomic_load_explicit(CLHEAP_A32(clheap_core_orders.word[i]), memory_order_acquire);
    }
    clheap_core_orders.count = 0;
}
static CLHEAP_INLINE void clheap_fence_release(void)
{
#ifndef CLHEAP_CORE_UNFENCED /* tests/CMakeLists.txt: the check that TSan sees these fences */
    clheap_fence_acquire();
    clheap_core_orders.release = 1;
#endif
}
static CLHEAP_INLINE void clheap_fence_dependency(void) { clheap_fence_acquire(); }
/* The host build's "work-group id": set by each thread of the stress test. */
extern _Thread_local clheap_u32 clheap_host_group_index;
#define clheap_group_index() clheap_host_group_index
#define clheap_group_count() 1u
#define clheap_warp_in_group() 0u
/* The host build's launch size: set by the tests' threads (tests/core_heap.c). */
extern _Thread_local clheap_u32 clheap_host_launch_items;
#define clheap_launch_items() clheap_host_launch_items
#define clheap_rotation_seed() (clheap_host_group_index * 0x9E3779B1u)
#endif

#if !CLHEAP_ATOMICS64
/* The split word: without 64-bit atomics, the 64-bit words of the bitmap layers (the
 * containers of cl/clheap_bitmap.h, a block's allocation bits) are two 32-bit atomic
 * words, its halves. Each bit still changes by one atomic, and an OR, AND or exchange
 * returns every bit as its half's atomic found it; but the halves are read at two
 * moments, so the value returned is no snapshot of the word. The protocols above keep
 * three rules for it, each written where it is relied on:
 *   W1  an OR, AND or exchange is one atomic on each half, the low one first, also on a
 *       half it leaves unchanged: each half's result is its latest value, as the one
 *       64-bit atomic's is (a re-read, an OR of 0, relies on it);
 *   W2  a change that exactly one work-item must see is seen in one half: a bitmap
 *       setter climbs when the half it set was empty (clheap_bm_was_empty), and a
 *       block's slots lie in the low half (at most 32 a block, host/heap_layout.c), its
 *       high half all ones for good, so every allocation-word result is exact;
 *   W3  no word is compared-and-swapped or added to whole: a claim is an AND whose
 *       failed part goes back (cl/clheap_bitmap.h, cl/clheap_pages.h), and TierAlloc's
 *       run hints, a {run, handed out} pair bumped by one add, are absent (the layout
 *       gives no hint slots, cl/clheap_tier.h).
 * The C11 model (tests) splits its words the same way and runs the same protocols. */
#ifdef __OPENCL_C_VERSION__
#ifdef __ENDIAN_LITTLE__
#define CLHEAP_HIGH_HALF 1 /* the 32-bit word, of two, that holds bits 32 - 63 */
#else
#define CLHEAP_HIGH_HALF 0
#endif
#else
#define CLHEAP_HIGH_HALF (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#endif

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_half(CLHEAP_GLOBAL clheap_u64 *p, int high)
{
    return (CLHEAP_GLOBAL clheap_u32 *)p + (high ? CLHEAP_HIGH_HALF : 1 - CLHEAP_HIGH_HALF);
}
static CLHEAP_INLINE clheap_u64 clheap_join(clheap_u32 low, clheap_u32 high)
{
    return (clheap_u64)high << 32 | low;
}
#ifndef __OPENCL_C_VERSION__
static CLHEAP_INLINE clheap_u64 clheap_load64(clheap_u64 *p)
{
    clheap_u32 low = clheap_load32(clheap_half(p, 0));
    return clheap_join(low, clheap_load32(clheap_half(p, 1)));
}
static CLHEAP_INLINE void clheap_store64(clheap_u64 *p, clheap_u64 v)
{
    clheap_store32(clheap_half(p, 0), (clheap_u32)v);
    clheap_store32(clheap_half(p, 1), (clheap_u32)(v >> 32));
}
#endif
/* OR, AND, exchange: both halves by their 32-bit atomic, the low one first, also a half
 * the operand leaves as it is (W1), so that a result is the latest value of each half,
 * and no branch: a compiler that inlines every call (Mesa's) copies these thousands of
 * times. One body for the three. */
#define CLHEAP_SPLIT_RMW(name, atomic32)                                                        \
    static CLHEAP_INLINE clheap_u64 name(CLHEAP_GLOBAL clheap_u64 *p, clheap_u64 v)             \
    {                                                                                           \
        clheap_u32 was_low = atomic32(clheap_half(p, 0), (clheap_u32)v);                        \
        return clheap_join(was_low, atomic32(clheap_half(p, 1), (clheap_u32)(v >> 32)));        \
    }
CLHEAP_SPLIT_RMW(clheap_or64, clheap_or32)
CLHEAP_SPLIT_RMW(clheap_and64, clheap_and32)
CLHEAP_SPLIT_RMW(clheap_xchg64, clheap_xchg32)
#endif

#endif
