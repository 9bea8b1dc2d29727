/* The C11 core under a chosen interleaving. Threads ("lanes") take turns one shared-word
 * access at a time: cl/clheap_port.h calls clheap_core_schedule_step before each (this
 * target defines CLHEAP_CORE_SCHEDULED), and the next lane is drawn at random from a
 * fixed seed. Why: real threads on a CPU interleave in stretches of thousands of
 * accesses, a GPU's lanes at every access, and the races of a burst (two requests
 * claiming one segment, a frontier moved under a claim) only show at that grain: at
 * fc121ef a 64-lane burst filled 66% of the heap with 24 KiB requests and 63% with
 * 65 KiB here, 96.5% and 64% on the H100 (run 27), where one request at a
 * time and free-running threads filled 99%. It is harsher than a GPU, whose warps run a
 * branch's lanes together. One lane runs at a time, so a run is the same every time.
 * Every allocation is stamped over its whole extent and verified; the heap's check runs
 * when the lanes are done and after everything is freed. */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_heap.h"
#include "mixed_rounds.h"
#include "../cl/clheap_bitmap.h" /* clheap_hash32: test_tier's kernels choose what to free with it */

/* Built with -DCLHEAP_ATOMICS64=0 (test_core_schedule_atomics32): a device without 64-bit
 * atomics, whose bitmap words are split (cl/clheap_port.h); the fused lists need 64-bit
 * ones and are left out. */
#if CLHEAP_ATOMICS64
#define FUSED_LISTS CLHEAP_CFMALLOC, CLHEAP_CFMMALLOC
#else
#define FUSED_LISTS CLHEAP_CMALLOC
#endif

enum { MAX_LANES = 128, MAX_HELD = 4096 };

static struct {
    sem_t turn[MAX_LANES];
    int running[MAX_LANES];
    int lanes;
    uint64_t random;
} schedule;
static _Thread_local int lane_index = -1; /* -1: not a lane (set-up and checks run freely) */

static uint32_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* Gives the turn to a running lane drawn at random (possibly the caller). */
static void hand_on(void)
{
    int candidates[MAX_LANES], n = 0;
    for (int i = 0; i < schedule.lanes; i++)
        if (schedule.running[i])
            candidates[n++] = i;
    if (n)
        sem_post(&schedule.turn[candidates[next_random(&schedule.random) % (uint32_t)n]]);
}

void clheap_core_schedule_step(void)
{
    if (lane_index < 0)
        return;
    hand_on();
    sem_wait(&schedule.turn[lane_index]);
}

typedef struct lane {
    int index;
    void (*work)(struct lane *);
    void *shared;
    uint32_t held, units[MAX_HELD], bytes[MAX_HELD];
    uint64_t granted_bytes, random;
} lane;

static void *lane_main(void *arg)
{
    lane *l = arg;
    lane_index = l->index;
    sem_wait(&schedule.turn[l->index]);
    l->work(l);
    schedule.running[l->index] = 0;
    lane_index = -1;
    hand_on();
    return NULL;
}

/* Runs work on n lanes, one shared access at a time, until every lane has returned. */
static void run_lanes(lane *lanes, int n, uint64_t seed)
{
    assert_true(n > 0 && n <= MAX_LANES);
    pthread_t threads[MAX_LANES];
    schedule.lanes = n;
    schedule.random = seed | 1u;
    for (int i = 0; i < n; i++) {
        assert_int_equal(sem_init(&schedule.turn[i], 0, 0), 0);
        schedule.running[i] = 1;
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, lane_main, &lanes[i]), 0);
    hand_on();
    for (int i = 0; i < n; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < n; i++)
        sem_destroy(&schedule.turn[i]);
}

static uint32_t stamp_of(const lane *l, uint32_t k)
{
    return ((uint32_t)l->index << 20) ^ (k * 0x9E3779B1u);
}

/* Plain stores: a lane writes between its shared accesses, while no other lane runs. */
static void stamp(core_heap *heap, uint32_t unit, uint32_t bytes, uint32_t value)
{
    uint32_t *p = core_heap_pointer(heap, unit);
    for (uint32_t i = 0; i < bytes / 4u; i++)
        p[i] = value;
    for (uint32_t i = bytes & ~3u; i < bytes; i++)
        ((unsigned char *)p)[i] = (unsigned char)value;
}

static int stamped(core_heap *heap, uint32_t unit, uint32_t bytes, uint32_t value)
{
    const uint32_t *p = core_heap_pointer(heap, unit);
    for (uint32_t i = 0; i < bytes / 4u; i++)
        if (p[i] != value)
            return 0;
    for (uint32_t i = bytes & ~3u; i < bytes; i++)
        if (((const unsigned char *)p)[i] != (unsigned char)value)
            return 0;
    return 1;
}

static void check_heap(core_heap *heap, const char *when, clheap_heap_stats *stats)
{
    char what[256] = "";
    if (core_heap_walk(heap, stats, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check %s: %s", when, what);
}

/* A heap of `bytes` for allocator a (4 compute units), checked fresh: *fresh its stats. */
static void make_heap(core_heap *heap, clheap_allocator a, uint64_t bytes, clheap_heap_stats *fresh)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = a;
    config.size_bytes = bytes;
    config.slot_bytes = 256; /* BitmapAlloc: every size the churn asks for */
    assert_int_equal(core_heap_create(&config, 4, heap), CLHEAP_SUCCESS);
    check_heap(heap, "fresh", fresh);
}

/* Every lane's allocations still hold their stamps; then the heap is checked, all is
 * freed, and the heap must be empty and sound. Returns the bytes the lanes held. */
static uint64_t verify_and_free(core_heap *heap, lane *lanes, int n, const char *who)
{
    uint64_t held = 0;
    for (int i = 0; i < n; i++)
        for (uint32_t k = 0; k < lanes[i].held; k++) {
            if (!stamped(heap, lanes[i].units[k], lanes[i].bytes[k], stamp_of(&lanes[i], k)))
                fail_msg("%s: lane %d's allocation %u (%u B at unit %u) was overwritten", who, i, k,
                         lanes[i].bytes[k], lanes[i].units[k]);
            held += lanes[i].bytes[k];
        }
    clheap_heap_stats stats;
    check_heap(heap, who, &stats);
    for (int i = 0; i < n; i++)
        for (uint32_t k = 0; k < lanes[i].held; k++)
            core_heap_free_unit(heap, lanes[i].units[k], (uint32_t)i);
    core_heap_trim(heap);
    check_heap(heap, who, &stats);
    if (stats.used_bytes)
        fail_msg("%s: %llu B still used with everything freed", who, (unsigned long long)stats.used_bytes);
    return held;
}

/* ---- a burst that fills the pool ------------------------------------------------ */

typedef struct fill {
    core_heap *heap;
    uint32_t bytes;
} fill;

/* As clheap-bench oom's kernel: malloc until the first NULL (at most MAX_HELD). */
static void fill_until_null(lane *l)
{
    fill *f = l->shared;
    while (l->held < MAX_HELD) {
        uint32_t unit = core_heap_malloc(f->heap, f->bytes, (uint32_t)l->index);
        if (!unit)
            return;
        stamp(f->heap, unit, f->bytes, stamp_of(l, l->held));
        l->units[l->held] = unit;
        l->bytes[l->held++] = f->bytes;
    }
}

/* One size that is not a whole number of TierAlloc's 64 KiB segments, filling a 64 MiB
 * pool from 128 lanes at once. The floor is below the 90% the H100 must reach because this schedule is harsher
 * (see the top). With one add on a frontier (CLHEAP_PAGES_FRONTIER_TRIES 1) the sizes
 * here filled 56% - 79%. */
static void burst_fills_sizes_between_segments(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {17408, 24576, 66560, 200000};
    static lane lanes[MAX_LANES];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        core_heap heap;
        clheap_heap_stats fresh;
        make_heap(&heap, CLHEAP_TIER_ALLOC, 64u << 20, &fresh);
        fill f = {&heap, sizes[s]};
        memset(lanes, 0, sizeof lanes);
        for (int i = 0; i < MAX_LANES; i++)
            lanes[i] = (lane){.index = i, .work = fill_until_null, .shared = &f};
        run_lanes(lanes, MAX_LANES, 0x5EED0000u + s);
        char who[64];
        snprintf(who, sizeof who, "%u B burst", sizes[s]);
        uint64_t held = verify_and_free(&heap, lanes, MAX_LANES, who);
        double share = (double)held / (double)fresh.pool_bytes;
        print_message("%u B x %d lanes: %.1f%% of the pool before the first NULL of every lane\n", sizes[s],
                      MAX_LANES, 100.0 * share);
        if (share < 0.80)
            fail_msg("%u B: the burst filled %.1f%% of the pool", sizes[s], 100.0 * share);
        core_heap_destroy(&heap);
    }
}

/* ---- random mallocs and frees near full ------------------------------------------ */

typedef struct churn {
    core_heap *heap;
    uint32_t ops, keep, wrong, nulls;
} churn;

/* Objects of 16 - 256 B: mallocs until keep are held (or the first NULL), then ops of a
 * malloc (while fewer than keep are held) or the free of a random one after its stamp
 * is verified, half and half. A lane cannot fail the test: it counts. */
static void churn_lane(lane *l)
{
    churn *c = l->shared;
    for (uint32_t op = 0, filling = 1; op < c->ops;) {
        uint32_t r = next_random(&l->random);
        op += !filling;
        if (l->held < c->keep && (filling || l->held == 0 || r % 2u)) {
            uint32_t bytes = 16u * (1u + r / 2u % 16u);
            uint32_t unit = core_heap_malloc(c->heap, bytes, (uint32_t)l->index);
            if (!unit) {
                c->nulls++;
                filling = 0;
                continue;
            }
            l->units[l->held] = unit;
            l->bytes[l->held] = bytes;
            stamp(c->heap, unit, bytes, stamp_of(l, l->held));
            filling = ++l->held < c->keep && filling;
        } else {
            uint32_t k = r / 2u % l->held, last = l->held - 1u;
            c->wrong += !stamped(c->heap, l->units[k], l->bytes[k], stamp_of(l, k));
            core_heap_free_unit(c->heap, l->units[k], (uint32_t)l->index);
            if (k != last) { /* the last one moves into k: restamp it as k */
                l->units[k] = l->units[last];
                l->bytes[k] = l->bytes[last];
                c->wrong += !stamped(c->heap, l->units[k], l->bytes[k], stamp_of(l, last));
                stamp(c->heap, l->units[k], l->bytes[k], stamp_of(l, k));
            }
            l->held--;
        }
    }
}

/* The bitmap kinds (their protocols are the intricate ones; the CircularMalloc family's
 * list walks near full would take minutes at this grain), on the smallest heap (1 MiB)
 * with up to 90% of its pool asked for at once, so that mallocs run out and recover: no
 * allocation is overwritten, and the heap's check passes when the lanes are done and
 * when all is freed. (H100 run 25: one BlockAlloc game of life near full ended in
 * HEAP_CORRUPT.) */
static void churn_near_full_keeps_every_heap_sound(void **state)
{
    (void)state;
    static const clheap_allocator allocators[] = {CLHEAP_TIER_ALLOC, CLHEAP_BLOCK_ALLOC, CLHEAP_BITMAP_ALLOC};
    enum { LANES = 16 };
    static lane lanes[LANES];
    const char *env = getenv("CLHEAP_SCHEDULE_SEEDS");
    uint32_t seeds = env ? (uint32_t)atoi(env) : 2u;
    for (size_t a = 0; a < sizeof allocators / sizeof *allocators; a++)
        for (uint32_t seed = 0; seed < seeds; seed++) {
            core_heap heap;
            clheap_heap_stats fresh;
            make_heap(&heap, allocators[a], 1u << 20, &fresh);
            churn c = {&heap, 200, (uint32_t)(fresh.pool_bytes * 9 / 10 / 136 / LANES), 0, 0};
            memset(lanes, 0, sizeof lanes);
            for (int i = 0; i < LANES; i++)
                lanes[i] = (lane){.index = i, .work = churn_lane, .shared = &c,
                                  .random = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) + seed};
            run_lanes(lanes, LANES, 0xC0FFEEu + seed * 7919u + a);
            char who[64];
            snprintf(who, sizeof who, "%s, seed %u", clheap_allocator_name(allocators[a]), seed);
            if (c.wrong)
                fail_msg("%s: %u allocations overwritten", who, c.wrong);
            verify_and_free(&heap, lanes, LANES, who);
            print_message("%s: %u NULL\n", who, c.nulls);
            core_heap_destroy(&heap);
        }
}

/* TierAlloc's churn in a mostly free pool, where frees in middle launches keep the blocks
 * they empty (lanes 3, 7, ...: core_heap.h; keeping is on in this build) and the others'
 * searches take them again, racing their marks' settlers: no allocation is overwritten
 * and the heap's check passes. */
static void churn_mostly_free_reuses_kept_blocks(void **state)
{
    (void)state;
    enum { LANES = 16 };
    static lane lanes[LANES];
    for (uint32_t seed = 0; seed < 2u; seed++) {
        core_heap heap;
        clheap_heap_stats fresh;
        make_heap(&heap, CLHEAP_TIER_ALLOC, 16u << 20, &fresh);
        churn c = {&heap, 400, 8, 0, 0};
        memset(lanes, 0, sizeof lanes);
        for (int i = 0; i < LANES; i++)
            lanes[i] = (lane){.index = i, .work = churn_lane, .shared = &c,
                              .random = 0xD1B54A32D192ED03ull * (uint64_t)(i + 1) + seed};
        run_lanes(lanes, LANES, 0xFEEDu + seed * 7919u);
        char who[64];
        snprintf(who, sizeof who, "mostly free, seed %u", seed);
        if (c.wrong)
            fail_msg("%s: %u allocations overwritten", who, c.wrong);
        if (c.nulls)
            fail_msg("%s: %u NULL in a mostly free pool", who, c.nulls);
        verify_and_free(&heap, lanes, LANES, who);
        core_heap_destroy(&heap);
    }
}

/* ---- the CircularMalloc family's lists under churn ---------------------------------- */

typedef struct launch {
    core_heap *heap;
    uint32_t objects, wrong, nulls;
} launch;

/* One work-item group of clheap-bench churn: objects of 16 - 64 B mallocked and stamped,
 * then each verified and freed. */
static void launch_lane(lane *l)
{
    launch *c = l->shared;
    for (uint32_t k = 0; k < c->objects; k++) {
        uint32_t bytes = 16u * (1u + next_random(&l->random) % 4u);
        uint32_t unit = core_heap_malloc(c->heap, bytes, (uint32_t)l->index);
        if (!unit) {
            c->nulls++;
            continue;
        }
        l->units[l->held] = unit;
        l->bytes[l->held] = bytes;
        stamp(c->heap, unit, bytes, stamp_of(l, l->held));
        l->held++;
    }
    for (uint32_t k = 0; k < l->held; k++) {
        c->wrong += !stamped(c->heap, l->units[k], l->bytes[k], stamp_of(l, k));
        core_heap_free_unit(c->heap, l->units[k], (uint32_t)l->index);
    }
    l->held = 0;
}

/* Launches of the churn benchmark's kind on each list allocator, at a light load (a few
 * hundred objects in 16 MiB): every walk, split, merge and warp-free path meets others
 * at every access (the family's happens-before edges are argued in
 * cl/clheap_circular.h, not checked by ThreadSanitizer). No NULL, no stamp overwritten,
 * and after every launch the heap's check passes and nothing is in use. */
static void launches_on_the_lists_lose_nothing(void **state)
{
    (void)state;
    static const clheap_allocator allocators[] = {CLHEAP_CMALLOC, CLHEAP_CMMALLOC, FUSED_LISTS};
    enum { LANES = 16, LAUNCHES = 3 };
    static lane lanes[LANES];
    for (size_t a = 0; a < sizeof allocators / sizeof *allocators; a++) {
        core_heap heap;
        clheap_heap_stats stats, fresh;
        make_heap(&heap, allocators[a], 16u << 20, &fresh);
        for (uint32_t n = 0; n < LAUNCHES; n++) {
            launch c = {&heap, 32, 0, 0};
            for (int i = 0; i < LANES; i++)
                lanes[i] = (lane){.index = i, .work = launch_lane, .shared = &c,
                                  .random = 0x2545F4914F6CDD1Dull * (uint64_t)(i + 1) + n};
            run_lanes(lanes, LANES, 0xB0A710u + n * 31u + a);
            const char *name = clheap_allocator_name(allocators[a]);
            if (c.wrong || c.nulls)
                fail_msg("%s, launch %u: %u stamps overwritten, %u NULL", name, n, c.wrong, c.nulls);
            check_heap(&heap, name, &stats);
            if (stats.used_bytes)
                fail_msg("%s, launch %u: %llu B in use after every free", name, n,
                         (unsigned long long)stats.used_bytes);
            print_message("%s, launch %u: %llu free chunks (fresh: %llu)\n", name, n,
                          (unsigned long long)stats.free_chunks, (unsigned long long)fresh.free_chunks);
            /* Frees merge back and forward, so the launch's chunks coalesce but where two
             * neighbours' frees missed each other (each saw the other in use). With
             * forward merges only, 278 - 870 of these launches' 512 stayed apart. */
            if (stats.free_chunks > fresh.free_chunks + LANES * c.objects / 4u)
                fail_msg("%s, launch %u: %llu free chunks, %llu on the fresh heap: frees did not coalesce", name, n,
                         (unsigned long long)stats.free_chunks, (unsigned long long)fresh.free_chunks);
            /* The single-offset variants' frees look at their neighbours once more after
             * the release (clheap_circular_remerge): 0 - 3 chunks stay apart in these
             * launches, 25 - 103 without it (the multi variants: 37 - 120). */
            int single = allocators[a] == CLHEAP_CMALLOC || allocators[a] == CLHEAP_CFMALLOC;
            if (single && stats.free_chunks > fresh.free_chunks + LANES)
                fail_msg("%s, launch %u: %llu free chunks, %llu on the fresh heap: frees did not merge again", name,
                         n, (unsigned long long)stats.free_chunks, (unsigned long long)fresh.free_chunks);
        }
        core_heap_destroy(&heap);
    }
}

/* Frees one at a time, in random order, of objects of 16 - 64 B taken by four work-groups
 * (the multi variants' four sub-heaps): every free merges with free neighbours but not
 * across the pre-split chunks' starts, so when all are freed the pool is the fresh
 * heap's pre-split chunks again: no more chunks, none smaller, and not fewer (a walk's
 * merge of a pre-split chunk too small for it may take away a few, 1 of 2048 here).
 * Frees that merged only forward left 4060 chunks, the largest half the fresh one. */
static void frees_in_any_order_give_back_the_presplit(void **state)
{
    (void)state;
    static const clheap_allocator allocators[] = {CLHEAP_CMALLOC, CLHEAP_CMMALLOC, FUSED_LISTS};
    enum { OBJECTS = 4000 };
    static uint32_t units[OBJECTS];
    for (size_t a = 0; a < sizeof allocators / sizeof *allocators; a++) {
        const char *name = clheap_allocator_name(allocators[a]);
        core_heap heap;
        clheap_heap_stats stats, fresh;
        make_heap(&heap, allocators[a], 4u << 20, &fresh);
        uint64_t random = 0x853C49E6748FEA9Bull + a;
        for (uint32_t round = 0; round < 3; round++) {
            for (uint32_t k = 0; k < OBJECTS; k++) {
                units[k] = core_heap_malloc(&heap, 16u * (1u + next_random(&random) % 4u), k % 4u);
                if (!units[k])
                    fail_msg("%s, round %u: NULL for object %u", name, round, k);
            }
            for (uint32_t k = OBJECTS - 1u; k > 0; k--) { /* shuffle */
                uint32_t j = next_random(&random) % (k + 1u), t = units[k];
                units[k] = units[j];
                units[j] = t;
            }
            for (uint32_t k = 0; k < OBJECTS; k++)
                core_heap_free_unit(&heap, units[k], k % 4u);
            check_heap(&heap, name, &stats);
            print_message("%s, round %u: %llu free chunks\n", name, round, (unsigned long long)stats.free_chunks);
            if (stats.used_bytes || stats.free_chunks > fresh.free_chunks ||
                stats.free_chunks < fresh.free_chunks - fresh.free_chunks / 100u ||
                stats.largest_free_bytes < fresh.largest_free_bytes)
                fail_msg("%s, round %u: %llu B used, %llu free chunks (largest %llu B) where the fresh heap has %llu "
                         "(largest %llu B)", name, round, (unsigned long long)stats.used_bytes,
                         (unsigned long long)stats.free_chunks, (unsigned long long)stats.largest_free_bytes,
                         (unsigned long long)fresh.free_chunks, (unsigned long long)fresh.largest_free_bytes);
        }
        core_heap_destroy(&heap);
    }
}

/* ---- test_tier's mixed rounds at 75% ------------------------------------------------ */

typedef struct mixed {
    core_heap *heap;
    uint32_t count, freeing, free_seed, wrong;
    uint32_t *sizes, *units;
} mixed;

/* One lane of test_tier's launches: requests index, index + lanes, ... (work-group
 * index / 2); or the frees of the kept half, each after its stamp is verified. */
static void mixed_lane(lane *l)
{
    mixed *m = l->shared;
    for (uint32_t id = (uint32_t)l->index; id < m->count; id += (uint32_t)schedule.lanes) {
        if (m->freeing) {
            if (!m->units[id] || (clheap_hash32(id ^ m->free_seed) & 1u) == 0u)
                continue;
            m->wrong += !stamped(m->heap, m->units[id], m->sizes[id], id + 1u);
            core_heap_free_unit(m->heap, m->units[id], 1u);
            m->units[id] = 0;
        } else if (!m->units[id] && m->sizes[id]) {
            m->units[id] = core_heap_malloc(m->heap, m->sizes[id], (uint32_t)l->index / 2u);
            if (m->units[id])
                stamp(m->heap, m->units[id], m->sizes[id], id + 1u);
        }
    }
}

/* tests/test_tier.c's mixed_sizes_at_75_percent_never_null (its sizes, its seed, its
 * frees) on 64 lanes: sizes 16 B - 1 MiB brought to 75% of a 32 MiB heap's pool six
 * times, half freed between, and not one NULL. Why here too: on the H100 that test got
 * a NULL in about 1 of 22 runs (run 39: a 1 MiB request found no free piece of 1 MiB
 * with 7.4 MB free), and one run there says little; here a schedule is the same every
 * time. Schedules 3 and 101 got that NULL (round 4) before large requests scanned for
 * the best fit up to CLHEAP_PAGES_REGION_TRIES times; CLHEAP_SCHEDULE_SEEDS=N runs
 * schedules 1 .. N instead. */
static void mixed_rounds_at_75_percent_never_null(void **state)
{
    (void)state;
    enum { LANES = 64, MAX = 1 << 16 };
    static lane lanes[LANES];
    static uint32_t sizes[MAX], units[MAX];
    static const uint64_t regressions[] = {3, 101};
    const char *env = getenv("CLHEAP_SCHEDULE_SEEDS");
    uint64_t runs = env ? (uint64_t)atoi(env) : sizeof regressions / sizeof *regressions;
    for (uint64_t r = 0; r < runs; r++) {
        uint64_t schedule_seed = env ? r + 1u : regressions[r];
        core_heap heap;
        clheap_heap_stats stats;
        make_heap(&heap, CLHEAP_TIER_ALLOC, 32u << 20, &stats);
        memset(sizes, 0, sizeof sizes);
        memset(units, 0, sizeof units);
        mixed m = {&heap, 0, 0, 0, 0, sizes, units};
        uint64_t limit = stats.pool_bytes * 3u / 4u, live = 0;
        unsigned seed = MIXED_FIRST_SEED;
        for (int round = 0; round < MIXED_ROUNDS; round++) {
            for (;;) { /* as test_tier: new requests until 75% of the pool is asked for */
                uint32_t bytes = mixed_round_size(&seed);
                if (live + bytes > limit || m.count == MAX)
                    break;
                sizes[m.count++] = bytes;
                live += bytes;
            }
            for (int i = 0; i < LANES; i++)
                lanes[i] = (lane){.index = i, .work = mixed_lane, .shared = &m};
            m.freeing = 0;
            run_lanes(lanes, LANES, schedule_seed * 1000u + (uint64_t)round);
            uint32_t nulls = 0;
            for (uint32_t i = 0; i < m.count; i++)
                nulls += sizes[i] && !units[i];
            char who[96];
            snprintf(who, sizeof who, "schedule %llu, round %d", (unsigned long long)schedule_seed, round);
            check_heap(&heap, who, &stats);
            if (nulls)
                fail_msg("%s: %u NULL with %.1f%% of the pool asked for (largest free piece %llu B)", who, nulls,
                         100.0 * (double)live / (double)stats.pool_bytes,
                         (unsigned long long)stats.largest_free_bytes);
            m.freeing = 1;
            m.free_seed = mixed_round_free_seed(round);
            run_lanes(lanes, LANES, schedule_seed * 1000u + 500u + (uint64_t)round);
            if (m.wrong)
                fail_msg("%s: %u allocations overwritten", who, m.wrong);
            live = 0;
            for (uint32_t i = 0; i < m.count; i++) {
                sizes[i] = units[i] ? sizes[i] : 0u; /* freed: not asked for again */
                live += sizes[i];
            }
        }
        for (uint32_t i = 0; i < m.count; i++)
            if (units[i]) {
                if (!stamped(&heap, units[i], sizes[i], i + 1u))
                    fail_msg("schedule %llu: request %u overwritten", (unsigned long long)schedule_seed, i);
                core_heap_free_unit(&heap, units[i], 1u);
            }
        core_heap_trim(&heap);
        check_heap(&heap, "all freed", &stats);
        if (stats.used_bytes)
            fail_msg("schedule %llu: %llu B still used with everything freed", (unsigned long long)schedule_seed,
                     (unsigned long long)stats.used_bytes);
        print_message("schedule %llu: %d rounds at 75%%, no NULL\n", (unsigned long long)schedule_seed, MIXED_ROUNDS);
        core_heap_destroy(&heap);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(burst_fills_sizes_between_segments),
        cmocka_unit_test(churn_near_full_keeps_every_heap_sound),
        cmocka_unit_test(churn_mostly_free_reuses_kept_blocks),
        cmocka_unit_test(launches_on_the_lists_lose_nothing),
        cmocka_unit_test(frees_in_any_order_give_back_the_presplit),
        cmocka_unit_test(mixed_rounds_at_75_percent_never_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
