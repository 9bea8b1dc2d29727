/* The shapes of the churn-mixed benchmark, shared by clheap-bench (C, and the OpenCL C
 * kernel it builds from churn_mixed_kernel_source) and bench/peers' harnesses (CUDA C++), so
 * that both run exactly the same requests and write the same CSV columns.
 *
 * In-kernel churn: each work-item runs `rounds` rounds; round r mallocs
 * bench_churn_bytes(id, r) (16 B << (hash mod (max_shift + 1)): 16 B up to 4 KiB, 64 KiB or
 * 1 MiB) and stamps its first and last word with bench_churn_stamp(id, r). A ring of `depth`
 * slots keeps the work-item's live allocations: before round r takes slot r mod depth, the
 * allocation there (round r - depth) has both its words verified and is freed; after the
 * last round the ring is drained the same way. So at most `depth` allocations a work-item
 * are live, and the heap is empty when the launch ends. */
#ifndef CLHEAP_BENCH_CHURN_MIXED_H
#define CLHEAP_BENCH_CHURN_MIXED_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_shapes.h"

#define BENCH_CHURN_MAX_DEPTH 16u /* the ring's slots, a private array in the kernel */
#define BENCH_CHURN_SUM_ITEMS 64u /* work-items 0..63 add up their sizes: the harnesses' cross-check */
/* Those two as text, for the OpenCL C kernel below (which the C compiler sees as a string). */
#define BENCH_CHURN_TEXT_(x) #x
#define BENCH_CHURN_TEXT(x) BENCH_CHURN_TEXT_(x)
#define BENCH_CHURN_COLUMNS                                                                              \
    "allocator,work_items,rounds,depth,max_bytes,live_bound,median_s,min_s,max_s,mallocs_per_s,nulls,wrong," \
    "bad_frees,runs,status"

typedef struct bench_churn_shape {
    uint32_t depth;     /* live allocations a work-item keeps, 1 .. BENCH_CHURN_MAX_DEPTH */
    uint32_t max_shift; /* sizes 16 B << 0 .. max_shift: 8 (4 KiB), 12 (64 KiB), 16 (1 MiB) */
    uint32_t rounds;
    uint32_t items;
} bench_churn_shape;

BENCH_HD static inline uint32_t bench_churn_bytes(uint32_t id, uint32_t round, uint32_t max_shift)
{
    return 16u << (bench_hash(id ^ bench_hash(round * 0x9E3779B1u + 0x632BE5ABu)) % (max_shift + 1u));
}

BENCH_HD static inline uint32_t bench_churn_stamp(uint32_t id, uint32_t round)
{
    return bench_hash(id + round * 0x85EBCA6Bu) | 1u;
}

/* The same two functions in OpenCL C (clheap_hash32 is bench_hash), then the kernel. */
#define BENCH_CHURN_KERNEL_SOURCE                                                                          \
    "static uint churn_bytes(uint id, uint round, uint max_shift) {\n"                                     \
    "    return 16u << (clheap_hash32(id ^ clheap_hash32(round * 0x9E3779B1u + 0x632BE5ABu)) % (max_shift + 1u));\n" \
    "}\n"                                                                                                  \
    "static uint churn_stamp(uint id, uint round) { return clheap_hash32(id + round * 0x85EBCA6Bu) | 1u; }\n" \
    "/* counts: NULLs, wrong words, the sizes work-items 0..63 asked for (bench_churn_mixed.h) */\n"        \
    "__kernel void churn_mixed(__global clheap_heap *heap, uint n, uint rounds, uint depth, uint max_shift,\n" \
    "                          __global uint *counts) {\n"                                                 \
    "    uint id = get_global_id(0), nulls = 0, wrong = 0, sum = 0;\n"                                   \
    "    if (id >= n) return;\n"                                                                       \
    "    __global uint *ring[" BENCH_CHURN_TEXT(BENCH_CHURN_MAX_DEPTH) "];\n"                             \
    "    for (uint k = 0; k < depth; k++) ring[k] = 0;\n"                                                 \
    "    for (uint r = 0; r < rounds + depth; r++) {\n"                                                   \
    "        uint k = r % depth;\n"                                                                       \
    "        __global uint *old = ring[k], *p = 0;\n"                                                     \
    "        if (old) {\n"                                                                                \
    "            uint words = churn_bytes(id, r - depth, max_shift) / 4u, s = churn_stamp(id, r - depth);\n" \
    "            wrong += (old[0] != s) + (old[words - 1u] != s);\n"                                      \
    "            clheap_free(heap, old);\n"                                                              \
    "        }\n"                                                                                         \
    "        if (r < rounds) {\n"                                                                         \
    "            uint bytes = churn_bytes(id, r, max_shift), s = churn_stamp(id, r);\n"                   \
    "            p = clheap_malloc(heap, bytes);\n"                                                      \
    "            sum += bytes;\n"                                                                         \
    "            if (p) { p[0] = s; p[bytes / 4u - 1u] = s; } else nulls++;\n"                            \
    "        }\n"                                                                                         \
    "        ring[k] = p;\n"                                                                              \
    "    }\n"                                                                                             \
    "    if (nulls) atomic_add(&counts[0], nulls);\n"                                                     \
    "    if (wrong) atomic_add(&counts[1], wrong);\n"                                                     \
    "    if (id < " BENCH_CHURN_TEXT(BENCH_CHURN_SUM_ITEMS) ") atomic_add(&counts[2], sum);\n"             \
    "}\n"

/* What work-items 0..63 ask for in all rounds (mod 2^32), as counts[2] adds it up. */
static inline uint32_t bench_churn_sum(const bench_churn_shape *s)
{
    uint32_t sum = 0;
    for (uint32_t id = 0; id < BENCH_CHURN_SUM_ITEMS && id < s->items; id++)
        for (uint32_t r = 0; r < s->rounds; r++)
            sum += bench_churn_bytes(id, r, s->max_shift);
    return sum;
}

/* An upper bound of the bytes live at once: each work-item's largest ring, summed. */
static inline uint64_t bench_churn_live_bound(const bench_churn_shape *s)
{
    uint64_t total = 0;
    uint32_t ring[BENCH_CHURN_MAX_DEPTH];
    for (uint32_t id = 0; id < s->items; id++) {
        uint64_t live = 0, most = 0;
        for (uint32_t r = 0; r < s->rounds; r++) {
            uint32_t k = r % s->depth, bytes = bench_churn_bytes(id, r, s->max_shift);
            live = live - (r >= s->depth ? ring[k] : 0u) + bytes;
            ring[k] = bytes;
            most = live > most ? live : most;
        }
        total += most;
    }
    return total;
}

/* The default shapes: issue 51's four (depth 4) and the other depths and ranges; quick (CI):
 * two small ones. */
static inline const bench_churn_shape *bench_churn_shapes(int quick, size_t *count)
{
    static const bench_churn_shape full[] = {
        {4, 8, 16, 1u << 16},  {4, 8, 16, 1u << 20}, {4, 8, 64, 1u << 18}, {4, 12, 16, 1u << 16},
        {1, 8, 16, 1u << 20},  {16, 8, 16, 1u << 18}, {16, 12, 8, 1u << 14}, {4, 16, 8, 1u << 12},
    };
    static const bench_churn_shape small[] = {{4, 8, 4, 1u << 12}, {16, 12, 20, 1u << 8}};
    *count = quick ? sizeof small / sizeof *small : sizeof full / sizeof *full;
    return quick ? small : full;
}

/* The table's header line; both harnesses print their rows in its columns. */
static inline void bench_churn_print_header(void)
{
    printf("  %-10s %9s %6s %5s %5s %7s %10s %12s %8s %6s %5s %s\n", "allocator", "items", "rounds", "depth", "max",
           "live<=", "ms", "mallocs/s", "NULLs", "wrong", "bad", "status");
}

/* The range's name (max_bytes column): 4K, 64K, 1M, or the bytes. */
static inline void bench_churn_range_name(const bench_churn_shape *s, char *buf, size_t len)
{
    uint32_t max = 16u << s->max_shift;
    if (max >= (1u << 20) && max % (1u << 20) == 0)
        snprintf(buf, len, "%uM", max >> 20);
    else if (max >= 1024u && max % 1024u == 0)
        snprintf(buf, len, "%uK", max >> 10);
    else
        snprintf(buf, len, "%u", max);
}

/* --churn DEPTH:MAX:ROUNDS:ITEMS[,...] (MAX a power of two from 16 B: 4K, 64K, 1M or bytes);
 * at most `room` shapes into out. Returns how many, or 0 if the text is not such a list. */
static inline size_t bench_churn_parse(const char *text, bench_churn_shape *out, size_t room)
{
    size_t n = 0;
    while (text && *text && n < room) {
        unsigned depth, rounds, items;
        char max_text[16];
        int used = 0;
        if (sscanf(text, "%u:%15[0-9KkMm]:%u:%u%n", &depth, max_text, &rounds, &items, &used) != 4)
            return 0;
        char *end;
        unsigned long max = strtoul(max_text, &end, 10);
        max <<= *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 0;
        uint32_t shift = 0;
        while (shift < 24 && (16ul << shift) < max)
            shift++;
        if ((16ul << shift) != max || !depth || depth > BENCH_CHURN_MAX_DEPTH || !rounds || !items)
            return 0;
        out[n].depth = depth;
        out[n].max_shift = shift;
        out[n].rounds = rounds;
        out[n++].items = items;
        text += used;
        if (*text == ',')
            text++;
        else if (*text)
            return 0;
    }
    return text && *text ? 0 : n;
}

/* The shapes to run: the defaults, or `spec` (see bench_churn_parse) parsed into `given`,
 * of `room` entries; NULL if spec is no such list. */
static inline const bench_churn_shape *bench_churn_chosen(int quick, const char *spec, bench_churn_shape *given,
                                                          size_t room, size_t *count)
{
    if (!spec)
        return bench_churn_shapes(quick, count);
    *count = bench_churn_parse(spec, given, room);
    return *count ? given : NULL;
}

#endif
