/* run 46's replay: test_stress's rounds on the scheduled C11 core (one shared access at a time by a lane drawn
 * at random), the lanes as coroutines (ucontext) instead of threads: 32,768 lanes in seconds, with the same
 * schedules as run 41's burst2.c (which took 12 minutes at 32,000 lanes).
 *   ./mk.sh TREE OUT [-D...]; ./OUT SCHED LANES [ITEMS [MIB]]
 *   env WARP=2: every lane one item, a warp's (32 lanes') small requests of one class by its lowest lane through
 *   core_heap_malloc_many (as clheap_tier_malloc_warp on NVIDIA), work-groups of 256; WARP=1: one lane per warp;
 *   ROUNDS=N, MAP=1 as burst2.c; SNAP=K: the W and F maps every K steps; CLASSES=1: blocks and objects per class.
 *   -DCLHEAP_PATH_STATS needs a tree with counters (PS/PP macros), not in main. */
#include <ucontext.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core_heap.h"
#include "clheap_layout.h"
static uint32_t clheap_hash32_(uint32_t x){x^=x>>16;x*=0x7feb352du;x^=x>>15;x*=0x846ca68bu;x^=x>>16;return x;}
enum { MAX_LANES = 40000 };
#ifdef CLHEAP_HDR_PAGES_LOW_FRONTIER
#define LOWF(h) ((h)[CLHEAP_HDR_PAGES_LOW_FRONTIER])
#else
#define LOWF(h) 0u
#endif
#ifdef SPANS
#define CLOSE(hp) core_heap_close_low_span(hp)
#else
#define CLOSE(hp) ((void)0)
#endif
static ucontext_t ctx[MAX_LANES], main_ctx;
static char *stacks;
enum { STACK = 64 << 10 };
static int run_list[MAX_LANES], run_pos[MAX_LANES], nrun;
static uint64_t rnd;
static int lane_index = -1;
static uint32_t next_random(void) { rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17; return (uint32_t)(rnd >> 16); }
static core_heap heap;
static unsigned long steps, snap_every;
static void snap(void) {
    uint32_t *h = heap.words; uint32_t desc = CLHEAP_BM_SEGMENTS(h[CLHEAP_HDR_CLASS_COUNT]);
    uint32_t bits = h[desc + CLHEAP_BM_BITS];
    printf("%9lu run %5d fr %6u W ", steps, nrun, LOWF(h));
    for (uint32_t c = 0; c < (bits + 63) / 64; c++) {
        uint64_t v; memcpy(&v, (uint64_t *)(void *)(h + (size_t)h[desc + CLHEAP_BM_UNIT] * 4u) + h[desc + CLHEAP_BM_LEVEL0] + c, 8);
        int n = __builtin_popcountll(v); putchar(n == 64 ? '#' : n < 10 ? '0' + n : 'a' + (n - 10) / 2);
    }
    printf(" F ");
    for (uint32_t c = 0; c < (bits + 63) / 64; c++) { uint32_t n = 0;
        for (uint32_t k = 0; k < 64; k++) { uint64_t v; memcpy(&v, (uint64_t *)(void *)(h + (size_t)h[CLHEAP_BM_FREE + CLHEAP_BM_UNIT] * 4u) + h[CLHEAP_BM_FREE + CLHEAP_BM_LEVEL0] + c * 64 + k, 8); n += __builtin_popcountll(v); }
        n /= 64; putchar(n == 0 ? '.' : n < 10 ? '0' + n : n < 64 ? 'a' + (n - 10) / 2 : '#'); }
    printf("\n");
}
void clheap_core_schedule_step(void) {
    if (lane_index < 0) return;
    if (snap_every && ++steps % snap_every == 0) snap();
    int me = lane_index, next = run_list[next_random() % (uint32_t)nrun];
    if (next == me) return;
    lane_index = next; swapcontext(&ctx[me], &ctx[next]);
}
static void finish(int i) { int p = run_pos[i], last = run_list[--nrun]; run_list[p] = last; run_pos[last] = p; }
static uint32_t *sizes, *units, count; static int nl;
#ifdef CLHEAP_PATH_STATS
unsigned long clheap_path_stats[64];
unsigned long clheap_path_pos[16][128];
#endif
static uint32_t round_no;
static uint32_t stress_bytes(uint32_t r);
static int warp_mode;
static uint32_t clheap_class_for(uint32_t *h, uint32_t bytes) {
    for (uint32_t c = 0; c < h[CLHEAP_HDR_CLASS_COUNT]; c++) if (h[CLHEAP_HDR_CLASS_BYTES + c] >= bytes) return c;
    return CLHEAP_MAX_CLASSES;
}
static void warp_main(int i) {
    uint32_t lo = (uint32_t)i * 32u, hi = lo + 32u < count ? lo + 32u : count, group = (uint32_t)i / 8u;
    uint32_t want[32] = {0};
    for (uint32_t id = lo; id < hi; id++) {
        uint32_t r = clheap_hash32_(id ^ clheap_hash32_(round_no * 0x632BE5ABu + 7u));
        want[id - lo] = 1;
        if (units[id]) { core_heap_free_unit(&heap, units[id], group); units[id] = 0; want[id - lo] = r & 1u; }
        if (want[id - lo] && round_no) sizes[id] = stress_bytes(clheap_hash32_(r + 0x5bd1e995u));
        if (!want[id - lo]) sizes[id] = 0;
    }
    uint32_t *h = heap.words, done[32] = {0};
    for (uint32_t id = lo; id < hi; id++) {
        if (!want[id - lo] || done[id - lo]) continue;
        uint32_t c = clheap_class_for(h, sizes[id]);
        if (c == CLHEAP_MAX_CLASSES) { units[id] = core_heap_malloc(&heap, sizes[id], group); done[id - lo] = 1; continue; }
        uint32_t ids[32], n = 0, got[32];
        for (uint32_t j = id; j < hi; j++)
            if (want[j - lo] && !done[j - lo] && clheap_class_for(h, sizes[j]) == c) { ids[n++] = j; done[j - lo] = 1; }
        core_heap_malloc_many(&heap, h[CLHEAP_HDR_CLASS_BYTES + c], n, got, group);
        for (uint32_t k = 0; k < n; k++) units[ids[k]] = got[k];
    }
    finish(i);
    if (nrun) { int next = run_list[next_random() % (uint32_t)nrun]; lane_index = next; setcontext(&ctx[next]); }
    lane_index = -1; setcontext(&main_ctx);
}
static uint32_t *wantv;
static void lane2_main(int i) {
    /* every lane its own item; a warp's small requests of one class by the group's lowest lane */
    uint32_t id = (uint32_t)i, group = id / 256u, lo = id / 32u * 32u, hi = lo + 32u < count ? lo + 32u : count;
    if (units[id]) { core_heap_free_unit(&heap, units[id], group); units[id] = 0; }
    clheap_core_schedule_step(); clheap_core_schedule_step();
    if (wantv[id]) {
        uint32_t *h = heap.words, c = clheap_class_for(h, sizes[id]);
        if (c == CLHEAP_MAX_CLASSES) units[id] = core_heap_malloc(&heap, sizes[id], group);
        else {
            int leader = 1;
            for (uint32_t j = lo; j < id; j++) if (wantv[j] && sizes[j] && clheap_class_for(h, sizes[j]) == c) leader = 0;
            if (leader) {
                uint32_t ids[32], n = 0, got[32];
                for (uint32_t j = id; j < hi; j++) if (wantv[j] && sizes[j] && clheap_class_for(h, sizes[j]) == c) ids[n++] = j;
                core_heap_malloc_many(&heap, h[CLHEAP_HDR_CLASS_BYTES + c], n, got, group);
                for (uint32_t k = 0; k < n; k++) units[ids[k]] = got[k];
            }
        }
    }
    finish(i);
    if (nrun) { int next = run_list[next_random() % (uint32_t)nrun]; lane_index = next; setcontext(&ctx[next]); }
    lane_index = -1; setcontext(&main_ctx);
}
static void lane_main(int i) {
    if (warp_mode == 2) lane2_main(i);
    if (warp_mode) warp_main(i);
    for (uint32_t id = (uint32_t)i; id < count; id += (uint32_t)nl) {
        uint32_t r = clheap_hash32_(id ^ clheap_hash32_(round_no * 0x632BE5ABu + 7u));
        int want = 1;
        if (units[id]) { core_heap_free_unit(&heap, units[id], (uint32_t)i / 2u); units[id] = 0; want = r & 1u; }
        if (want && round_no) sizes[id] = stress_bytes(clheap_hash32_(r + 0x5bd1e995u));
        if (want) units[id] = core_heap_malloc(&heap, sizes[id], (uint32_t)i / 2u);
        else sizes[id] = 0;
    }
    finish(i);
    if (nrun) { int next = run_list[next_random() % (uint32_t)nrun]; lane_index = next; setcontext(&ctx[next]); }
    lane_index = -1; setcontext(&main_ctx);
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
    count = items; rnd = sched * 1000 + 1; warp_mode = getenv("WARP") ? atoi(getenv("WARP")) : 0; if (warp_mode == 1) nl = (int)((items + 31) / 32); if (warp_mode == 2) nl = (int)items; wantv = calloc(items, 4); snap_every = getenv("SNAP") ? strtoul(getenv("SNAP"), 0, 0) : 0;
    stacks = mmap(NULL, (size_t)nl * STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    uint32_t rounds = getenv("ROUNDS") ? (uint32_t)atoi(getenv("ROUNDS")) : 1, nulls = 0, lnulls = 0; uint64_t granted = 0, nullb = 0;
    for (round_no = 0; round_no < rounds; round_no++) {
    uint64_t live_before = 0; for (uint32_t i = 0; i < items; i++) if (units[i]) live_before += sizes[i];
    for (int i = 0; i < nl; i++) { run_list[i] = i; run_pos[i] = i; }
    nrun = nl;
    if (warp_mode == 2) for (uint32_t id = 0; id < items; id++) {
        uint32_t r = clheap_hash32_(id ^ clheap_hash32_(round_no * 0x632BE5ABu + 7u));
        wantv[id] = units[id] ? r & 1u : 1u;
        if (wantv[id] && round_no) sizes[id] = stress_bytes(clheap_hash32_(r + 0x5bd1e995u));
        if (!wantv[id]) sizes[id] = 0;
    }
    for (int i = 0; i < nl; i++) { getcontext(&ctx[i]); ctx[i].uc_stack.ss_sp = stacks + (size_t)i * STACK; ctx[i].uc_stack.ss_size = STACK; ctx[i].uc_link = NULL; makecontext(&ctx[i], (void (*)(void))lane_main, 1, i); }
    { int first = run_list[next_random() % (uint32_t)nrun]; lane_index = first; swapcontext(&main_ctx, &ctx[first]); }
    uint32_t rn = 0; uint64_t rg = 0, rnb = 0;
    for (uint32_t i = 0; i < items; i++) { if (units[i]) rg += sizes[i]; else if (sizes[i]) { rn++; rnb += sizes[i]; } }
    if (rounds > 1) { clheap_heap_stats s2; char w2[256]; CLOSE(&heap); core_heap_walk(&heap, &s2, w2, sizeof w2);
      printf("round %u: NULL %u, before %.1f%% + now %.1f%% + nulls %.1f%% of pool (asked <= %.1f%%), largest free %llu, low frontier %u\n", round_no, rn, 100.0*live_before/s2.pool_bytes, 100.0*rg/s2.pool_bytes, 100.0*rnb/s2.pool_bytes, 100.0*(live_before+rg+rnb)/s2.pool_bytes, (unsigned long long)s2.largest_free_bytes, LOWF(heap.words)); fflush(stdout); }
    }
    for (uint32_t i = 0; i < items; i++) { if (units[i]) granted += sizes[i]; else if (sizes[i]) { nulls++; nullb += sizes[i]; lnulls += sizes[i] > 65536u; } }
    CLOSE(&heap); if (core_heap_walk(&heap, &s, what, sizeof what) != CLHEAP_SUCCESS) { printf("CHECK FAIL %s\n", what); return 3; }
    printf("sched %llu lanes %d: asked %.1f%%, granted %.1f%%, NULL %u (%u of %u large; %.1f MiB), largest free %llu\n",
           (unsigned long long)sched, nl, 100.0*asked/s.pool_bytes, 100.0*granted/s.pool_bytes, nulls, lnulls, nlarge, nullb/1048576.0,
           (unsigned long long)s.largest_free_bytes);
#ifdef CLHEAP_PATH_STATS
    printf("PATHS"); for (int i = 0; i < 64; i++) if (clheap_path_stats[i]) printf(" %d:%lu", i, clheap_path_stats[i]); printf("\n");
    { const char *pn[16] = {"runs", "large", "lowfr", "highfr", "mF0", "mF", "mbrk", "mlast", "sF0", "sF", "sbrk", "slast", "", "", "", "piece"};
      for (int k = 0; k < 16; k++) { unsigned long t = 0; for (int c = 0; c < 64; c++) t += clheap_path_pos[k][c]; if (!t) continue;
        printf("%-6s %6lu: ", pn[k], t); for (int c = 0; c < 62; c++) { unsigned long n = clheap_path_pos[k][c]; putchar(n == 0 ? '.' : n < 10 ? '0' + (int)n : n < 100 ? 'a' + (int)(n / 10) : n < 1000 ? 'A' + (int)(n / 100) : '#'); } printf("\n"); } }
#endif
    if (getenv("MAP")) { /* whole free segments per container of W: 0-9, then letters for 10-63, # for 64 */
        uint32_t *h = heap.words; uint32_t desc = CLHEAP_BM_SEGMENTS(h[CLHEAP_HDR_CLASS_COUNT]);
        uint32_t bits = h[desc + CLHEAP_BM_BITS];
        printf("low frontier %u high %u of %u frames\n", LOWF(h), h[CLHEAP_HDR_PAGES_HIGH_FRONTIER], h[CLHEAP_HDR_FRAME_COUNT]);
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
    if (getenv("CLASSES")) { uint64_t fb = (uint64_t)heap.words[CLHEAP_HDR_FRAME_UNITS] * 16u;
      for (uint32_t c = 0; c < s.class_count; c++) printf("class %6u B: cap %2u blocks %6llu objects %7llu frames %7llu fill %.1f%%\n", s.class_bytes[c], s.class_capacity[c], (unsigned long long)s.class_blocks[c], (unsigned long long)s.class_objects[c], (unsigned long long)(s.class_blocks[c] * heap.words[CLHEAP_HDR_CLASS_FRAMES + c]), 100.0 * s.class_objects[c] / (s.class_blocks[c] * s.class_capacity[c] + 1e-9));
      printf("large %llu allocations %llu bytes; frame %llu B; hints %u slots\n", (unsigned long long)s.large_count, (unsigned long long)s.large_bytes, (unsigned long long)fb, heap.words[CLHEAP_HDR_HINT_SLOTS]);
      for (uint32_t c = 0; c < s.class_count; c++) printf(" c%u run %u hints %u frames %u;", c, heap.words[CLHEAP_HDR_CLASS_RUN + c], heap.words[CLHEAP_HDR_CLASS_HINTS + c], heap.words[CLHEAP_HDR_CLASS_FRAMES + c]); printf("\n"); }
    printf("TOTAL NULL %u\n", nulls);
    return 0;
}
