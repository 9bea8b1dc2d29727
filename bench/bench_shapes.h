/* The shapes of the throughput benchmark, shared by clheap-bench (C) and the peer
 * harnesses in bench/peers/ (CUDA C++), so that both run exactly the same requests and
 * write the same CSV columns. A shape is a request size in bytes, or one of the two
 * mixed shapes: work-item i asks for 16 B << (hash(i) mod 9) (16 B .. 4 KiB) or
 * mod 17 (16 B .. 1 MiB), the hash being cl/clheap_bitmap.h's clheap_hash32. */
#ifndef CLHEAP_BENCH_SHAPES_H
#define CLHEAP_BENCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __CUDACC__
#define BENCH_HD __host__ __device__ /* the CUDA harnesses call them in kernels too */
#else
#define BENCH_HD
#endif

/* A timed run starts from the state the previous run's frees left ("warm", the default:
 * what a program that keeps its heap sees, and what Gallatin's instance sees), or from a
 * freshly initialised heap ("cold", --cold). Bump allocators, which cannot free, always
 * start cold. The CSV's last column says which. */
#define BENCH_MIXED_4K 0u
#define BENCH_MIXED_1M 1u
#define BENCH_THROUGHPUT_COLUMNS                                                                  \
    "allocator,work_items,bytes,malloc_median_s,malloc_min_s,malloc_max_s,free_median_s,mallocs_per_s," \
    "frees_per_s,nulls,runs,start"

BENCH_HD static inline uint32_t bench_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

BENCH_HD static inline uint32_t bench_request_bytes(uint32_t shape, uint32_t id)
{
    return shape == BENCH_MIXED_4K   ? 16u << (bench_hash(id) % 9u)
           : shape == BENCH_MIXED_1M ? 16u << (bench_hash(id) % 17u)
                                     : shape;
}

/* Bytes n work-items of a shape ask for (the benchmark skips shapes above half the heap). */
static inline uint64_t bench_shape_bytes(uint32_t shape, uint32_t n)
{
    if (shape > BENCH_MIXED_1M)
        return (uint64_t)shape * n;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += bench_request_bytes(shape, i);
    return sum;
}

/* The CSV's bytes column: the size, or mixed-4K / mixed-1M. */
static inline void bench_shape_name(uint32_t shape, char *buf, size_t len)
{
    if (shape == BENCH_MIXED_4K)
        snprintf(buf, len, "mixed-4K");
    else if (shape == BENCH_MIXED_1M)
        snprintf(buf, len, "mixed-1M");
    else
        snprintf(buf, len, "%u", (unsigned)shape);
}

/* Full: 16 B .. 1 MiB in powers of 4 and both mixed shapes, at 2^12 .. 2^20 work-items
 * in powers of 4. Quick (CI): 16 B and mixed 16 B - 4 KiB at 2^12. */
static inline const uint32_t *bench_throughput_shapes(int quick, size_t *count)
{
    static const uint32_t full[] = {16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, BENCH_MIXED_4K,
                                    BENCH_MIXED_1M};
    static const uint32_t small[] = {16, BENCH_MIXED_4K};
    *count = quick ? sizeof small / sizeof *small : sizeof full / sizeof *full;
    return quick ? small : full;
}

static inline const uint32_t *bench_throughput_items(int quick, size_t *count)
{
    static const uint32_t full[] = {1u << 12, 1u << 14, 1u << 16, 1u << 18, 1u << 20};
    static const uint32_t small[] = {1u << 12};
    *count = quick ? 1 : sizeof full / sizeof *full;
    return quick ? small : full;
}

/* The oom-launch benchmark (clheap-bench oom-launch, gallatin-bench --oom-launch): every
 * work-item of one launch asks for `bytes` from a heap of heap_mib MiB that holds about
 * half of them or less, so most requests return NULL, and the launch is compared, per
 * request, with the same launch on a heap large enough to hold it (bench_oom_fitting).
 * Full: the shapes where an out-of-memory launch cost TierAlloc 43 - 728 ns a request
 * (issue 45); quick (CI): the same proportions, small. */
typedef struct bench_oom_shape {
    uint32_t items, bytes, heap_mib;
} bench_oom_shape;

static inline const bench_oom_shape *bench_oom_shapes(int quick, size_t *count)
{
    static const bench_oom_shape full[] = {
        {1u << 20, 16384, 8192}, {1u << 20, 65536, 8192}, {1u << 18, 1u << 20, 8192}, {1u << 20, 1024, 256}};
    static const bench_oom_shape small[] = {
        {1u << 12, 16384, 32}, {1u << 11, 65536, 64}, {1u << 9, 1u << 20, 256}, {1u << 14, 1024, 8}};
    *count = quick ? sizeof small / sizeof *small : sizeof full / sizeof *full;
    return quick ? small : full;
}

/* The largest heap of a launch that fits, in MiB: 16 GiB (quick: 256 MiB), or less where
 * the device allows less (max_mib, 0: no limit). The same for every allocator compared. */
static inline uint32_t bench_oom_fitting_cap_mib(int quick, uint64_t max_mib)
{
    uint64_t cap = quick ? 256u : 16384u;
    return (uint32_t)(max_mib && max_mib < cap ? max_mib : cap);
}

/* The launch that fits: the shape's work-items on a heap of twice what they ask for (at
 * least the shape's heap, at most cap_mib); where the cap is too small for that, the
 * work-items halved until they ask for at most half of it. Returns the heap's MiB. */
static inline uint32_t bench_oom_fitting(const bench_oom_shape *s, uint32_t cap_mib, uint32_t *items)
{
    uint64_t want_mib = ((uint64_t)s->items * s->bytes * 2u + (1u << 20) - 1u) >> 20;
    uint64_t heap_mib = want_mib > s->heap_mib ? want_mib : s->heap_mib;
    heap_mib = heap_mib < cap_mib ? heap_mib : cap_mib;
    uint32_t n = s->items;
    while (n > 1u && (uint64_t)n * s->bytes > (heap_mib << 20) / 2u)
        n /= 2u;
    *items = n;
    return (uint32_t)heap_mib;
}

#define BENCH_OOM_LAUNCH_COLUMNS                                                                      \
    "allocator,work_items,bytes,heap_bytes,launch,round,malloc_s,ns_per_request,nulls,counted_nulls," \
    "free_s,status"

#endif
