/* clheap-bench churn on the scheduled C11 core: the same launch again and again on one
 * CircularMalloc heap, every work-item mallocing 16 - 64 B, stamping it, checking it and
 * freeing it, as bench/bench_churn.c's kernel does on a GPU. A warp's requests are one
 * claim for their sum and its frees one run (cl/clheap.cl, clheap_circular_malloc_warp
 * and clheap_circular_free_warp, which need PTX: their steps are written out below, in
 * the order the leader and lanes take them). Lanes are warps, `resident` of them at a
 * time (a GPU holds a few thousand warps of a launch at once), interleaved at every
 * shared access (tests/coroutine_lanes.h).
 * Why: on the H100 CMalloc's launches under churn take 1.4x - 3x its first (issue 11);
 * PoCL runs a work-group's work-items one after another and does not show it. Here a
 * launch's cost is its shared accesses, the same for a seed every time, so a change to
 * the walk can be judged without a GPU before one is spent on it.
 *   core_churn ALLOCATOR [launches [warps [resident [heap MiB [seed]]]]]
 * prints per launch: shared accesses (total, per warp, in the claims), the walks' events
 * (cl/clheap_circular.h), NULLs, free chunks, the roving offset's place in the pool; then
 * first / median / last. CORE_CHURN_HOLD=K: every K-th launch mallocs in one launch and
 * frees in the next, the heap checked between them. CORE_CHURN_PACED=J: lanes paced, J% jitter
 * (tests/coroutine_lanes.h); CORE_CHURN_RESET=1: the roving offset sent home before every
 * launch (a diagnosis). Exit status 1 if a word was overwritten, a heap check failed or a
 * request got NULL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The walk's events (cl/clheap_circular.h), counted here only: core_heap.c's copy of
 * the walk, which this program does not call, counts nothing. */
enum { EVENT_STEP, EVENT_SMALL, EVENT_WALK_MERGE, EVENT_DEAD, EVENT_RESTART, EVENTS };
static uint64_t events[EVENTS];
#define CLHEAP_CIRCULAR_EVENT(what) (events[EVENT_##what]++)

#include "core_heap.h"
#include "coroutine_lanes.h"
#include "../cl/clheap_circular.h"
#include "../cl/clheap_bitmap.h" /* clheap_hash32, as the churn kernel's sizes */

enum { WARP = 32, GROUP = 256 };

typedef struct churn {
    core_heap heap;
    int fused, multi;
    uint32_t launch, warps, resident;
    uint64_t nulls, wrong, walk; /* walk: shared accesses in the warps' claims */
    /* With CORE_CHURN_HOLD=K, every K-th launch is two: one that mallocs (into held) and
     * one that frees, with a heap check between them, while every part of every warp's
     * claim is live. */
    enum { BOTH, MALLOC_ONLY, FREE_ONLY } phase;
    uint32_t *held;
} churn;

static uint32_t churn_bytes(uint32_t id, uint32_t launch)
{
    return 16u + 16u * (clheap_hash32(id ^ (launch * 0x9E3779B1u)) % 4u);
}

/* clheap_circular_malloc_warp: the lowest lane claims one chunk for the warp's sum, writes
 * every part's header, the chunk after the claim names the last part as its prev, and the
 * claimed chunk's next is pointed at the second part last; if the sum does not fit,
 * each lane claims alone. */
static void warp_malloc(churn *c, const uint32_t *bytes, uint32_t n, uint32_t *units)
{
    uint32_t *h = c->heap.words, need[WARP], total = 0, end = 0;
    for (uint32_t k = 0; k < n; k++) {
        need[k] = clheap_units_for(bytes[k], h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START] - 1u) + 1u;
        total += need[k];
    }
    int why;
    uint64_t before = coroutine_lanes_own_steps();
    uint32_t base = clheap_circular_claim(h, total, c->fused, c->multi, &end, &why);
    c->walk += coroutine_lanes_own_steps() - before;
    if (!base) {
        for (uint32_t k = 0; k < n; k++)
            units[k] = clheap_circular_malloc_unit(h, bytes[k], c->fused, c->multi);
        return;
    }
    uint32_t run = 0, last = base;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t part = base + run, next = k + 1 < n ? part + need[k] : end;
        if (run)
            clheap_write_header(h, c->fused, part, 1u, next, last);
        clheap_store32(clheap_chunk(h, part) + CLHEAP_CHUNK_WORD_REQUEST, bytes[k]);
        units[k] = part + 1u;
        last = part;
        run += need[k];
    }
    if (n > 1) {
        clheap_circular_set_prev(h, end, last);
        clheap_fence_release();
        if (c->fused)
            clheap_store64(clheap_fused_word(h, base), clheap_fused(base, 1u, base + need[0]));
        else
            clheap_store32(clheap_chunk(h, base) + CLHEAP_CHUNK_WORD_NEXT, base + need[0]);
    }
}

/* clheap_circular_free_warp: every lane checks its chunk; a lane whose chunk begins where
 * another lane's ends releases it; then each other lane swallows the run of lanes'
 * chunks after its own and one free chunk more, merges back and releases. */
static void warp_free(churn *c, const uint32_t *units, uint32_t n)
{
    uint32_t *h = c->heap.words, o[WARP], next[WARP], succ[WARP], run[WARP];
    int valid[WARP], follows[WARP];
    for (uint32_t k = 0; k < n; k++)
        valid[k] = clheap_circular_free_check(h, clheap_unit_pointer(h, units[k]), c->fused, &o[k], &next[k]);
    for (uint32_t k = 0; k < n; k++) {
        follows[k] = 0;
        succ[k] = WARP;
        for (uint32_t j = 0; valid[k] && j < n; j++) {
            follows[k] |= valid[j] && next[j] == o[k];
            succ[k] = valid[j] && o[j] == next[k] ? j : succ[k];
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        run[k] = 0;
        for (uint32_t j = succ[k]; j < WARP && run[k] < WARP; j = succ[j])
            run[k]++;
    }
    for (uint32_t k = 0; k < n; k++)
        if (valid[k] && follows[k])
            clheap_circular_release(h, c->fused, o[k], next[k]);
    for (uint32_t k = 0; k < n; k++) {
        if (!valid[k] || follows[k])
            continue;
        for (uint32_t r = 0; r <= run[k] && clheap_circular_absorb_next(h, c->fused, c->multi, o[k],
                                                                       h[CLHEAP_HDR_POOL_END], &next[k], r == run[k]);
             r++) {
        }
        clheap_circular_remerge(h, c->fused, c->multi,
                                clheap_circular_merge_back_and_release(h, c->fused, c->multi, o[k], next[k]));
    }
}

/* One resident slot: the launch's warps slot, slot + resident, ... in turn. */
static void slot_work(uint32_t slot, void *arg)
{
    churn *c = arg;
    for (uint32_t w = slot; w < c->warps; w += c->resident) {
        uint32_t bytes[WARP], units[WARP], n = WARP;
        clheap_core_begin();
        clheap_host_group_index = w * WARP / GROUP;
        if (c->phase == FREE_ONLY) {
            warp_free(c, c->held + (size_t)w * WARP, n);
            continue;
        }
        for (uint32_t k = 0; k < n; k++)
            bytes[k] = churn_bytes(w * WARP + k, c->launch);
        warp_malloc(c, bytes, n, units);
        for (uint32_t k = 0; k < n; k++) {
            if (!units[k]) {
                c->nulls++;
                continue;
            }
            uint32_t *p = core_heap_pointer(&c->heap, units[k]);
            for (uint32_t i = 0; i < bytes[k] / 4u; i++)
                p[i] = w * WARP + k;
        }
        clheap_core_schedule_step(); /* other warps run between the writes and the checks */
        for (uint32_t k = 0; k < n; k++) {
            const uint32_t *p = core_heap_pointer(&c->heap, units[k]);
            for (uint32_t i = 0; units[k] && i < bytes[k] / 4u; i++)
                if (p[i] != w * WARP + k) {
                    c->wrong++;
                    break;
                }
        }
        if (c->phase == MALLOC_ONLY) {
            memcpy(c->held + (size_t)w * WARP, units, n * sizeof *units);
            continue;
        }
        clheap_core_begin();
        warp_free(c, units, n);
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s ALLOCATOR [launches [warps [resident [heap MiB [seed]]]]]\n", argv[0]);
        return 2;
    }
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_ALLOCATOR_LAST + 1;
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++)
        if (!strcmp(argv[1], clheap_allocator_name((clheap_allocator)a)))
            config.allocator = (clheap_allocator)a;
    if (config.allocator > CLHEAP_ALLOCATOR_LAST || !clheap_allocator_is_circular(config.allocator)) {
        fprintf(stderr, "%s: not one of the CircularMalloc family\n", argv[1]);
        return 2;
    }
    uint32_t launches = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 20;
    churn c = {.warps = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 2048,
               .resident = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 512,
               .fused = clheap_allocator_is_fused(config.allocator),
               .multi = clheap_allocator_is_multi(config.allocator)};
    config.size_bytes = (argc > 5 ? strtoull(argv[5], NULL, 0) : 64) << 20;
    uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 0) : 1;
    const char *pace = getenv("CORE_CHURN_PACED"); /* the jitter in percent; unset: not paced */
    coroutine_lanes_pace(pace != NULL, pace ? (uint32_t)strtoul(pace, NULL, 0) : 0u);
    const char *hold_env = getenv("CORE_CHURN_HOLD");
    uint32_t hold = hold_env ? (uint32_t)strtoul(hold_env, NULL, 0) : 0u;
    const char *reset_env = getenv("CORE_CHURN_RESET");
    int reset = reset_env && *reset_env == '1' && !c.multi;
    if (!launches || !c.warps || !c.resident || c.resident > c.warps) {
        fprintf(stderr, "launches, warps and resident must be positive, resident at most warps\n");
        return 2;
    }
    if (core_heap_create(&config, 132, &c.heap) != CLHEAP_SUCCESS) {
        fprintf(stderr, "cannot make the heap\n");
        return 2;
    }
    printf("%s: %u launches of %u warps (%u resident), %llu MiB, seed %llu\n", argv[1], launches, c.warps, c.resident,
           (unsigned long long)(config.size_bytes >> 20), (unsigned long long)seed);
    printf("%6s %12s %9s %9s %11s %11s %9s %8s %8s %6s %11s %7s\n", "launch", "accesses", "per warp", "claim's",
           "walk steps", "too small", "merges", "dead", "restarts", "NULLs", "free chunks", "rover %");
    uint64_t *accesses = calloc(launches, sizeof *accesses);
    c.held = calloc((size_t)c.warps * WARP, sizeof *c.held);
    int failed = !accesses || !c.held;
    for (uint32_t l = 0; !failed && l < launches; l++) {
        c.launch = l;
        if (reset) /* a diagnosis: every launch starts where the first did */
            c.heap.words[CLHEAP_HDR_OFFSETS] = c.heap.words[CLHEAP_HDR_POOL_START];
        uint64_t before = coroutine_lanes_steps(), nulls = c.nulls, walk = c.walk, seen[EVENTS];
        memcpy(seen, events, sizeof seen);
        clheap_heap_stats stats;
        char what[256] = "";
        c.phase = hold && l % hold == hold - 1u ? MALLOC_ONLY : BOTH;
        if (coroutine_lanes_run(c.resident, slot_work, &c, seed * 1000003u + l) != 0) {
            fprintf(stderr, "no stacks for the lanes\n");
            failed = 1;
            break;
        }
        if (c.phase == MALLOC_ONLY) {
            uint64_t live = 0;
            for (size_t i = 0; i < (size_t)c.warps * WARP; i++)
                live += c.held[i] != 0;
            if (core_heap_walk(&c.heap, &stats, what, sizeof what) != CLHEAP_SUCCESS || stats.used_chunks != live) {
                printf("launch %u, everything held: heap check %s, %llu chunks in use for %llu allocations\n", l,
                       what[0] ? what : "sound", (unsigned long long)stats.used_chunks, (unsigned long long)live);
                failed = 1;
            }
            c.phase = FREE_ONLY;
            if (coroutine_lanes_run(c.resident, slot_work, &c, seed * 1000033u + l) != 0) {
                failed = 1;
                break;
            }
        }
        accesses[l] = coroutine_lanes_steps() - before;
        if (core_heap_walk(&c.heap, &stats, what, sizeof what) != CLHEAP_SUCCESS) {
            printf("launch %u: heap check failed: %s\n", l, what);
            failed = 1;
        }
        const uint32_t *h = c.heap.words;
        uint32_t first = h[CLHEAP_HDR_POOL_START], span = h[CLHEAP_HDR_POOL_END] - first;
#define EVENTS_SINCE(what) (unsigned long long)(events[EVENT_##what] - seen[EVENT_##what])
        printf("%6u %12llu %9.1f %9.1f %11llu %11llu %9llu %8llu %8llu %6llu %11llu %7.1f\n", l,
               (unsigned long long)accesses[l], (double)accesses[l] / c.warps, (double)(c.walk - walk) / c.warps,
               EVENTS_SINCE(STEP), EVENTS_SINCE(SMALL), EVENTS_SINCE(WALK_MERGE), EVENTS_SINCE(DEAD),
               EVENTS_SINCE(RESTART), (unsigned long long)(c.nulls - nulls), (unsigned long long)stats.free_chunks,
               100.0 * (h[CLHEAP_HDR_OFFSETS] - first) / span);
        fflush(stdout);
    }
    if (!failed) {
        uint64_t first = accesses[0], last = accesses[launches - 1];
        qsort(accesses, launches, sizeof *accesses, compare_u64);
        printf("first %llu, median %llu (%.2fx), last %llu (%.2fx); %llu NULL, %llu words wrong\n",
               (unsigned long long)first, (unsigned long long)accesses[launches / 2],
               (double)accesses[launches / 2] / (double)first, (unsigned long long)last, (double)last / (double)first,
               (unsigned long long)c.nulls, (unsigned long long)c.wrong);
    }
    free(accesses);
    free(c.held);
    core_heap_destroy(&c.heap);
    return failed || c.nulls || c.wrong;
}
