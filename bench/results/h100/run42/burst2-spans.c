/* test_stress's first round (fresh heap, every work-item mallocs once) on the scheduled C11 core with many
 * lanes: one shared access at a time by a lane drawn at random (O(1) per step).
 *   ./burst2 SCHED LANES [ITEMS [MIB]]   env ROUNDS=N: test_stress's rounds after the first (free, then malloc
 *   with probability 1/2), one line each; MAP=1: where each kind of request landed, the W map, the frontiers. */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_heap.h"
#include "clheap_layout.h"
static uint32_t clheap_hash32_(uint32_t x){x^=x>>16;x*=0x7feb352du;x^=x>>15;x*=0x846ca68bu;x^=x>>16;return x;}
enum { MAX_LANES = 40000 };
static sem_t turn[MAX_LANES];
static int run_list[MAX_LANES], run_pos[MAX_LANES], nrun;
static uint64_t rnd;
static _Thread_local int lane_index = -1;
static uint32_t next_random(void) { rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17; return (uint32_t)(rnd >> 16); }
static void hand_on(void) { if (nrun) sem_post(&turn[run_list[next_random() % (uint32_t)nrun]]); }
void clheap_core_schedule_step(void) { if (lane_index < 0) return; hand_on(); sem_wait(&turn[lane_index]); }
static void finish(int i) { int p = run_pos[i], last = run_list[--nrun]; run_list[p] = last; run_pos[last] = p; }
static core_heap heap;
static uint32_t *sizes, *units, count; static int nl;
#ifdef CLHEAP_PATH_STATS
unsigned long clheap_path_stats[32];
#endif
static uint32_t round_no;
static uint32_t stress_bytes(uint32_t r);
static void *lane_main(void *arg) {
    int i = (int)(intptr_t)arg; lane_index = i;
    sem_wait(&turn[i]);
    for (uint32_t id = (uint32_t)i; id < count; id += (uint32_t)nl) {
        uint32_t r = clheap_hash32_(id ^ clheap_hash32_(round_no * 0x632BE5ABu + 7u));
        int want = 1;
        if (units[id]) { core_heap_free_unit(&heap, units[id], (uint32_t)i / 2u); units[id] = 0; want = r & 1u; }
        if (want && round_no) sizes[id] = stress_bytes(clheap_hash32_(r + 0x5bd1e995u));
        if (want) units[id] = core_heap_malloc(&heap, sizes[id], (uint32_t)i / 2u);
        else sizes[id] = 0;
    }
    finish(i); lane_index = -1; hand_on(); return NULL;
}
static uint32_t stress_bytes(uint32_t r) {
    uint32_t kind = r & 255u, octave = (r >> 8) % 5u, base;
    if (kind == 0u) base = 65536u << octave; else if (kind < 32u) base = 2048u << octave; else base = 16u << ((r >> 8) % 7u);
    uint32_t bytes = (base + clheap_hash32_(r) % base) & ~3u; return bytes < 16u ? 16u : bytes;
}
int main(int argc, char **argv) {
    uint64_t sched = strtoull(argv[1], 0, 0); nl = atoi(argv[2]);
    uint32_t items = argc > 3 ? (uint32_t)atoi(argv[3]) : 32768; uint64_t mib = argc > 4 ? strtoull(argv[4],0,0) : 256;
    clheap_heap_config config = clheap_heap_config_default(); config.size_bytes = mib << 20;
    if (core_heap_create(&config, 132, &heap) != CLHEAP_SUCCESS) return 2;
    clheap_heap_stats s; char what[256];
    sizes = calloc(items, 4); units = calloc(items, 4);
    uint64_t asked = 0; uint32_t nlarge = 0;
    for (uint32_t i = 0; i < items; i++) { sizes[i] = stress_bytes(clheap_hash32_(i * 0x9E3779B9u + (uint32_t)sched)); asked += sizes[i]; nlarge += sizes[i] > 65536u; }
    count = items; rnd = sched * 1000 + 1;
    pthread_attr_t at; pthread_attr_init(&at); pthread_attr_setstacksize(&at, 128 << 10);
    pthread_t *t = calloc((size_t)nl, sizeof *t);
    for (int i = 0; i < nl; i++) { sem_init(&turn[i], 0, 0); run_list[i] = i; run_pos[i] = i; }
    uint32_t rounds = getenv("ROUNDS") ? (uint32_t)atoi(getenv("ROUNDS")) : 1, nulls = 0, lnulls = 0; uint64_t granted = 0, nullb = 0;
    for (round_no = 0; round_no < rounds; round_no++) {
    uint64_t live_before = 0; for (uint32_t i = 0; i < items; i++) if (units[i]) live_before += sizes[i];
    for (int i = 0; i < nl; i++) { run_list[i] = i; run_pos[i] = i; }
    nrun = nl;
    for (int i = 0; i < nl; i++) if (pthread_create(&t[i], &at, lane_main, (void *)(intptr_t)i)) { printf("thread %d failed\n", i); return 4; }
    hand_on();
    for (int i = 0; i < nl; i++) pthread_join(t[i], NULL);
    uint32_t rn = 0; uint64_t rg = 0, rnb = 0;
    for (uint32_t i = 0; i < items; i++) { if (units[i]) rg += sizes[i]; else if (sizes[i]) { rn++; rnb += sizes[i]; } }
    if (rounds > 1) { clheap_heap_stats s2; char w2[256]; core_heap_close_low_span(&heap); core_heap_walk(&heap, &s2, w2, sizeof w2);
      printf("round %u: NULL %u, before %.1f%% + now %.1f%% + nulls %.1f%% of pool (asked <= %.1f%%), largest free %llu, low frontier %u\n", round_no, rn, 100.0*live_before/s2.pool_bytes, 100.0*rg/s2.pool_bytes, 100.0*rnb/s2.pool_bytes, 100.0*(live_before+rg+rnb)/s2.pool_bytes, (unsigned long long)s2.largest_free_bytes, (unsigned)(((uint64_t *)(heap.words + 24))[0] >> 36)); fflush(stdout); }
    }
    for (uint32_t i = 0; i < items; i++) { if (units[i]) granted += sizes[i]; else if (sizes[i]) { nulls++; nullb += sizes[i]; lnulls += sizes[i] > 65536u; } }
    core_heap_close_low_span(&heap); if (core_heap_walk(&heap, &s, what, sizeof what) != CLHEAP_SUCCESS) { printf("CHECK FAIL %s\n", what); return 3; }
    printf("sched %llu lanes %d: asked %.1f%%, granted %.1f%%, NULL %u (%u of %u large; %.1f MiB), largest free %llu\n",
           (unsigned long long)sched, nl, 100.0*asked/s.pool_bytes, 100.0*granted/s.pool_bytes, nulls, lnulls, nlarge, nullb/1048576.0,
           (unsigned long long)s.largest_free_bytes);
#ifdef CLHEAP_PATH_STATS
    printf("PATHS"); for (int i = 0; i < 20; i++) printf(" %lu", clheap_path_stats[i]); printf("\n");
#endif
    if (getenv("MAP")) { /* whole free segments per container of W: 0-9, then letters for 10-63, # for 64 */
        uint32_t *h = heap.words; uint32_t desc = CLHEAP_BM_SEGMENTS(h[CLHEAP_HDR_CLASS_COUNT]);
        uint32_t bits = h[desc + CLHEAP_BM_BITS];
        printf("low frontier %u high %u of %u frames\n", (unsigned)(((uint64_t *)(h + 24))[0] >> 36), h[CLHEAP_HDR_PAGES_HIGH_FRONTIER], h[CLHEAP_HDR_FRAME_COUNT]);
        uint32_t fu = h[CLHEAP_HDR_FRAME_UNITS], ps = h[CLHEAP_HDR_POOL_START], nc = (h[CLHEAP_HDR_FRAME_COUNT] / 64 + 63) / 64;
        uint32_t cnt[3][128] = {{0}};
        for (uint32_t i = 0; i < count; i++) if (units[i]) {
            uint32_t c = (units[i] - ps) / fu / 64 / 64; int k = sizes[i] <= 16384 ? 0 : sizes[i] <= 65536 ? 1 : 2; cnt[k][c]++; }
        const char *nm[3] = {"small ", "medium", "large "};
        for (int k = 0; k < 3; k++) { printf("%s map: ", nm[k]); for (uint32_t c = 0; c < nc; c++) { uint32_t n = cnt[k][c]; putchar(n == 0 ? '.' : n < 10 ? '0' + (int)n : n < 100 ? 'a' + (int)(n / 10) : n < 1000 ? 'A' + (int)(n / 100) : '#'); } printf("\n"); }
        printf("W map: ");
        for (uint32_t c = 0; c < (bits + 63) / 64; c++) {
            uint64_t v; memcpy(&v, (uint64_t *)(void *)(h + (size_t)h[desc + CLHEAP_BM_UNIT] * 4u) + h[desc + CLHEAP_BM_LEVEL0] + c, 8);
            int n = __builtin_popcountll(v); putchar(n == 64 ? '#' : n < 10 ? '0' + n : 'a' + (n - 10) / 2);
        }
        printf("\n");
    }
    printf("TOTAL NULL %u\n", nulls);
    return 0;
}
