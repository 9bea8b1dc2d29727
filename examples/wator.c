/* clheap wator: Dewdney's Wa-Tor, fish and sharks on a toroidal grid, in the form of
 * DynaSOAr's benchmark (Springer & Masuhara, paper 001): every fish (16 bytes) and every
 * shark (32 bytes) is a device-heap object, born with malloc and freed when it is eaten
 * or starves, and a map of the grid names the object in each cell. A step is two halves,
 * fish then sharks, each three launches:
 *   prepare  every agent picks a neighbour (N, E, S, W) to move to, at random among the
 *            empty ones (a shark prefers those holding fish) and sets a request bit there;
 *   decide   every cell with requests grants one of them, at random (a static kernel);
 *   update   a granted agent moves; a shark that moves onto a fish eats it; an agent
 *            whose breeding timer is up leaves a newborn behind (malloc); a shark whose
 *            energy runs out dies (free).
 * "At random" is a hash of (step, phase, cell), so the outcome does not depend on which
 * work-item runs first, and every version of the game plays the same one. An eaten fish
 * is marked, and frees itself at its next prepare: objects are never freed under a
 * work-item that may still visit them.
 *
 * Agents are visited the paper's way where the allocator can: BlockAlloc and TierAlloc
 * enumerate a class's live objects with clheap_heap_parallel_do (objects born during
 * the launch are not visited); the others (and these with --lists) keep lists of
 * their agents' offsets, compacted by every launch (the paper's stand-alone
 * parallel_do).
 *
 * Beside it runs the version with static allocation: the agents' fields inside the
 * cells (one array per field, as the paper's baseline), the same kernels over cells.
 * Both are timed per step (clFinish after each); every --check-every steps both are
 * compared with the CPU's sequential game, cell by cell (kind, breeding timer, energy),
 * every object's cell is checked against the map, the heap must hold exactly the
 * living agents and the eaten fish not yet freed, and its check must pass. At the end
 * every object is freed and the heap must be empty. A birth that gets NULL ends the
 * game as "full" (the heap is too small): exit status 3 when that is all that went
 * wrong, 1 when something was wrong, 0 when every game verified.
 * Usage: clheap-wator [--size N (256)] [--steps S (100)] [--check-every K (1)]
 *                     [--allocator NAME|all (BlockAlloc)] [--heap-mib M (128 bytes a
 *                     cell)] [--lists] [--fit] [--csv FILE] [--options "-DCLHEAP_..."
 *                     (build options of its program)]
 * --fit: the heap stays at --heap-mib, and the largest grid (to 8 cells, or 1/16) whose
 * game runs the steps verified in it is searched, per allocator (the paper's space
 * efficiency test). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The game's rules, one text compiled as OpenCL C by the device and as C by the host's
 * reference: breeding ages of fish and sharks, a shark's energy at birth and what a fish
 * gives it (with these a 256 x 256 sea has a wave of fish, a wave of sharks that eat
 * nearly all of them, then damped waves: the paper's "massive number of (de)allocations
 * in waves, until an equilibrium"), and the random choices. */
#define WATOR_RULES(X)                                                                   \
    X(enum { FISH_BREED = 4, SHARK_BREED = 10, SHARK_ENERGY = 3, FISH_ENERGY = 3 };     \
      enum { EMPTY, FISH, SHARK, EATEN };                                                \
      WATOR_FN uint wator_mix(uint x) {                                                  \
          x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; \
          return x;                                                                      \
      }                                                                                  \
      WATOR_FN uint wator_random(uint step, uint phase, uint cell) {                     \
          return wator_mix(cell * 0x9E3779B1u + wator_mix(step * 8u + phase));           \
      }                                                                                  \
      /* d: 0 north, 1 east, 2 south, 3 west */                                          \
      WATOR_FN uint wator_neighbour(uint cell, uint d, uint n) {                         \
          uint x = cell % n, y = cell / n;                                               \
          if (d == 0u) y = (y + n - 1u) % n;                                             \
          else if (d == 1u) x = (x + 1u) % n;                                            \
          else if (d == 2u) y = (y + 1u) % n;                                            \
          else x = (x + n - 1u) % n;                                                     \
          return y * n + x;                                                              \
      }                                                                                  \
      /* The direction an agent asks for: among prey (bit d: a fish at d) if any, else  \
       * among room (empty cells); 4 if none. Also a cell's pick among its requests. */  \
      WATOR_FN uint wator_pick(uint prey, uint room, uint step, uint phase, uint cell) { \
          uint from = prey ? prey : room, count = popcount(from);                        \
          if (!count) return 4u;                                                         \
          uint k = wator_random(step, phase, cell) % count;                              \
          for (uint d = 0u; d < 4u; d++)                                                 \
              if ((from >> d & 1u) && k-- == 0u) return d;                               \
          return 4u;                                                                     \
      })
#define WATOR_TEXT(...) #__VA_ARGS__ "\n"
#define WATOR_CODE(...) __VA_ARGS__
#define WATOR_FN static inline
#define popcount(x) ((uint)__builtin_popcount(x))
typedef unsigned int uint;
WATOR_RULES(WATOR_CODE)
#undef popcount

static const char *kernel_source =
    "#define WATOR_FN\n" WATOR_RULES(WATOR_TEXT)
    "enum { KIND, CELL, TARGET, EGG, ENERGY }; /* an agent's words; ENERGY: sharks only */\n"
    "enum { NULLS, LISTED, LISTED_SHARKS };\n"
    "/* decide: cell c grants one of its requests (bit d: the agent at neighbour d) and\n"
    " * clears them; grant[c] is the granted agent's cell + 1, or 0. A static kernel. */\n"
    "__kernel void decide(__global uint *request, __global uint *grant, uint step, uint phase, uint n) {\n"
    "    uint c = get_global_id(0);\n"
    "    if (c >= n * n) return;\n"
    "    uint d = wator_pick(0u, request[c], step, phase, c);\n"
    "    grant[c] = d < 4u ? wator_neighbour(c, d, n) + 1u : 0u;\n"
    "    request[c] = 0u;\n"
    "}\n"
    "/* prepare, one agent: ages it and asks for a neighbour. The map does not change\n"
    " * during prepare, and an object's kind never changes while it is in the map. */\n"
    "void prepare(__global clheap_heap *heap, __global uint *a, __global const uint *map,\n"
    "             __global uint *request, uint step, uint n) {\n"
    "    uint cell = a[CELL], prey = 0u, room = 0u;\n"
    "    a[EGG]++;\n"
    "    for (uint d = 0u; d < 4u; d++) {\n"
    "        uint u = map[wator_neighbour(cell, d, n)];\n"
    "        if (!u) room |= 1u << d;\n"
    "        else if (a[KIND] == SHARK && ((__global const uint *)clheap_pointer(heap, u))[KIND] == FISH)\n"
    "            prey |= 1u << d;\n"
    "    }\n"
    "    uint d = wator_pick(prey, room, step, 2u * a[KIND], cell);\n"
    "    a[TARGET] = d < 4u ? wator_neighbour(cell, d, n) : cell;\n"
    "    if (d < 4u) atomic_or(&request[a[TARGET]], 1u << ((d + 2u) % 4u));\n"
    "}\n"
    "/* update, one agent (unit u): moves if granted, eats, breeds, starves. Returns the\n"
    " * newborn's unit (0: none) in *born; 0 if the agent died (and was freed). */\n"
    "int update(__global clheap_heap *heap, __global uint *a, uint u, __global uint *map,\n"
    "           __global const uint *grant, uint n, __global uint *counters, uint *born) {\n"
    "    uint cell = a[CELL], target = a[TARGET], kind = a[KIND];\n"
    "    *born = 0u;\n"
    "    if (target != cell && grant[target] == cell + 1u) {\n"
    "        uint prey = map[target]; /* sharks only ask for empty cells or fish */\n"
    "        if (prey) {\n"
    "            ((__global uint *)clheap_pointer(heap, prey))[KIND] = EATEN;\n"
    "            a[ENERGY] += FISH_ENERGY;\n"
    "        }\n"
    "        map[target] = u;\n"
    "        map[cell] = 0u;\n"
    "        a[CELL] = a[TARGET] = target;\n"
    "        if (a[EGG] >= (kind == FISH ? FISH_BREED : SHARK_BREED)) {\n"
    "            a[EGG] = 0u;\n"
    "            __global uint *b = clheap_malloc(heap, kind == FISH ? 16u : 32u);\n"
    "            if (!b) { atomic_inc(&counters[NULLS]); }\n"
    "            else {\n"
    "                b[KIND] = kind; b[CELL] = b[TARGET] = cell; b[EGG] = 0u;\n"
    "                if (kind == SHARK) b[ENERGY] = SHARK_ENERGY;\n"
    "                *born = clheap_unit_of(heap, b);\n"
    "                map[cell] = *born;\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    if (kind == SHARK && --a[ENERGY] == 0u) {\n"
    "        map[a[CELL]] = 0u;\n"
    "        clheap_free(heap, a);\n"
    "        return 0;\n"
    "    }\n"
    "    return 1;\n"
    "}\n"
    "/* The start: an object for every agent of the static sea (listed if `listing`). */\n"
    "__kernel void init(__global clheap_heap *heap, __global uint *map, __global const uint *sea, uint n,\n"
    "                   uint listing, __global uint *fish, __global uint *sharks, __global uint *counters) {\n"
    "    uint c = get_global_id(0);\n"
    "    if (c >= n * n || sea[3u * c] == EMPTY) return;\n"
    "    uint kind = sea[3u * c];\n"
    "    __global uint *a = clheap_malloc(heap, kind == FISH ? 16u : 32u);\n"
    "    if (!a) { atomic_inc(&counters[NULLS]); return; }\n"
    "    a[KIND] = kind; a[CELL] = a[TARGET] = c; a[EGG] = sea[3u * c + 1u];\n"
    "    if (kind == SHARK) a[ENERGY] = sea[3u * c + 2u];\n"
    "    map[c] = clheap_unit_of(heap, a);\n"
    "    if (listing && kind == FISH) fish[atomic_inc(&counters[LISTED])] = map[c];\n"
    "    if (listing && kind == SHARK) sharks[atomic_inc(&counters[LISTED_SHARKS])] = map[c];\n"
    "}\n"
    "/* Visits by list: `from` holds `count` agents; those that live on, and newborns, are\n"
    " * appended to `to`. Eaten fish free themselves at prepare. */\n"
    "__kernel void prepare_listed(__global clheap_heap *heap, __global const uint *map, __global uint *request,\n"
    "                             uint step, uint n, __global const uint *from, uint count, __global uint *to,\n"
    "                             __global uint *counters) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    __global uint *a = clheap_pointer(heap, from[id]);\n"
    "    if (a[KIND] == EATEN) { clheap_free(heap, a); return; }\n"
    "    to[atomic_inc(&counters[LISTED])] = from[id];\n"
    "    prepare(heap, a, map, request, step, n);\n"
    "}\n"
    "__kernel void update_listed(__global clheap_heap *heap, __global uint *map, __global const uint *grant, uint n,\n"
    "                            __global const uint *from, uint count, __global uint *to,\n"
    "                            __global uint *counters) {\n"
    "    uint id = get_global_id(0), born;\n"
    "    if (id >= count) return;\n"
    "    if (update(heap, clheap_pointer(heap, from[id]), from[id], map, grant, n, counters, &born))\n"
    "        to[atomic_inc(&counters[LISTED])] = from[id];\n"
    "    if (born) to[atomic_inc(&counters[LISTED])] = born;\n"
    "}\n"
    "#if CLHEAP_HAS_BLOCKS\n"
    "/* Visits by clheap_heap_parallel_do over the agents' class (the last two arguments). */\n"
    "__kernel void prepare_each(__global clheap_heap *heap, __global const uint *map, __global uint *request,\n"
    "                           uint step, uint n, uint cls, __global const uint *blocks, uint count) {\n"
    "    __global uint *a = clheap_parallel_do_object(heap, blocks, count, cls, get_global_id(0));\n"
    "    if (!a) return;\n"
    "    if (a[KIND] == EATEN) { clheap_free(heap, a); return; }\n"
    "    prepare(heap, a, map, request, step, n);\n"
    "}\n"
    "__kernel void update_each(__global clheap_heap *heap, __global uint *map, __global const uint *grant, uint n,\n"
    "                          __global uint *counters, uint cls, __global const uint *blocks, uint count) {\n"
    "    __global uint *a = clheap_parallel_do_object(heap, blocks, count, cls, get_global_id(0));\n"
    "    uint born;\n"
    "    if (a) update(heap, a, clheap_unit_of(heap, a), map, grant, n, counters, &born);\n"
    "}\n"
    "__kernel void free_each(__global clheap_heap *heap, uint cls, __global const uint *blocks, uint count) {\n"
    "    clheap_free(heap, clheap_parallel_do_object(heap, blocks, count, cls, get_global_id(0)));\n"
    "}\n"
    "#endif\n"
    "/* The map as the CPU keeps its sea: per cell kind, breeding timer, energy; an object\n"
    " * in the wrong cell, or of no agent's kind, reads as kind 0xff. */\n"
    "__kernel void census(__global clheap_heap *heap, __global const uint *map, uint n, __global uint *out) {\n"
    "    uint c = get_global_id(0);\n"
    "    if (c >= n * n) return;\n"
    "    __global const uint *a = clheap_pointer(heap, map[c]);\n"
    "    uint kind = a ? a[KIND] : EMPTY;\n"
    "    out[3u * c] = a && (a[CELL] != c || (kind != FISH && kind != SHARK)) ? 0xffu : kind;\n"
    "    out[3u * c + 1u] = a ? a[EGG] : 0u;\n"
    "    out[3u * c + 2u] = kind == SHARK ? a[ENERGY] : 0u;\n"
    "}\n"
    "/* The static version: the agent's fields inside its cell (sea[3c + KIND, EGG, ENERGY:\n"
    " * KIND - 1 ...]), target[c] marks the cells whose agent acts in this half (n * n: none),\n"
    " * so an agent that moves into a cell is not visited twice. */\n"
    "__kernel void static_prepare(__global uint *sea, __global uint *target, __global uint *request,\n"
    "                             uint step, uint n, uint who) {\n"
    "    uint c = get_global_id(0);\n"
    "    if (c >= n * n) return;\n"
    "    target[c] = n * n;\n"
    "    if (sea[3u * c] != who) return;\n"
    "    uint prey = 0u, room = 0u;\n"
    "    sea[3u * c + 1u]++;\n"
    "    for (uint d = 0u; d < 4u; d++) {\n"
    "        uint k = sea[3u * wator_neighbour(c, d, n)];\n"
    "        room |= (k == EMPTY) << d;\n"
    "        prey |= (who == SHARK && k == FISH) << d;\n"
    "    }\n"
    "    uint d = wator_pick(prey, room, step, 2u * who, c);\n"
    "    target[c] = d < 4u ? wator_neighbour(c, d, n) : c;\n"
    "    if (d < 4u) atomic_or(&request[target[c]], 1u << ((d + 2u) % 4u));\n"
    "}\n"
    "__kernel void static_update(__global uint *sea, __global const uint *target, __global const uint *grant,\n"
    "                            uint n, uint who) {\n"
    "    uint c = get_global_id(0);\n"
    "    if (c >= n * n || target[c] == n * n) return;\n"
    "    uint t = target[c], at = c;\n"
    "    if (t != c && grant[t] == c + 1u) {\n"
    "        uint egg = sea[3u * c + 1u], energy = sea[3u * c + 2u];\n"
    "        if (sea[3u * t] == FISH && who == SHARK) energy += FISH_ENERGY;\n"
    "        sea[3u * c] = EMPTY; sea[3u * c + 1u] = 0u; sea[3u * c + 2u] = 0u;\n"
    "        if (egg >= (who == FISH ? FISH_BREED : SHARK_BREED)) {\n"
    "            egg = 0u;\n"
    "            sea[3u * c] = who;\n"
    "            sea[3u * c + 2u] = who == SHARK ? SHARK_ENERGY : 0u;\n"
    "        }\n"
    "        sea[3u * t] = who; sea[3u * t + 1u] = egg; sea[3u * t + 2u] = energy;\n"
    "        at = t;\n"
    "    }\n"
    "    if (who == SHARK && --sea[3u * at + 2u] == 0u) {\n"
    "        sea[3u * at] = EMPTY; sea[3u * at + 1u] = 0u;\n"
    "    }\n"
    "}\n";

enum { NULLS, LISTED, LISTED_SHARKS, COUNTERS };

/* The start: a quarter of the cells fish, one in 32 sharks, their timers spread. */
static void populate(uint32_t *sea, uint32_t n)
{
    for (uint32_t c = 0; c < n * n; c++) {
        uint32_t r = wator_mix(c ^ 0xABCDEFu) % 64u, *s = sea + 3u * c;
        s[0] = r < 16u ? FISH : r < 18u ? SHARK : EMPTY;
        s[1] = s[0] == FISH ? wator_mix(c) % FISH_BREED : s[0] == SHARK ? wator_mix(c) % SHARK_BREED : 0u;
        s[2] = s[0] == SHARK ? SHARK_ENERGY : 0u;
    }
}

/* One half step of the CPU's sequential game (who: FISH or SHARK), the reference.
 * Returns the fish eaten. */
static uint32_t cpu_half(uint32_t *sea, uint32_t n, uint32_t step, uint32_t who, uint32_t *target,
                         uint32_t *request)
{
    uint32_t cells = n * n, eaten = 0;
    for (uint32_t c = 0; c < cells; c++) {
        target[c] = cells;
        if (sea[3u * c] != who)
            continue;
        uint32_t prey = 0, room = 0;
        sea[3u * c + 1]++;
        for (uint32_t d = 0; d < 4; d++) {
            uint32_t k = sea[3u * wator_neighbour(c, d, n)];
            room |= (uint32_t)(k == EMPTY) << d;
            prey |= (uint32_t)(who == SHARK && k == FISH) << d;
        }
        uint32_t d = wator_pick(prey, room, step, 2u * who, c);
        target[c] = d < 4 ? wator_neighbour(c, d, n) : c;
        if (d < 4)
            request[target[c]] |= 1u << ((d + 2) % 4);
    }
    for (uint32_t c = 0; c < cells; c++) { /* decide; request becomes the grant */
        uint32_t d = wator_pick(0, request[c], step, 2u * who + 1u, c);
        request[c] = d < 4 ? wator_neighbour(c, d, n) + 1u : 0u;
    }
    for (uint32_t c = 0; c < cells; c++) {
        if (target[c] == cells)
            continue;
        uint32_t t = target[c], at = c, *s = sea + 3u * c;
        if (t != c && request[t] == c + 1u) {
            uint32_t egg = s[1], energy = s[2];
            if (who == SHARK && sea[3u * t] == FISH) {
                energy += FISH_ENERGY;
                eaten++;
            }
            s[0] = s[1] = s[2] = 0;
            if (egg >= (who == FISH ? FISH_BREED : SHARK_BREED)) {
                egg = 0;
                s[0] = who;
                s[2] = who == SHARK ? SHARK_ENERGY : 0u;
            }
            uint32_t *d = sea + 3u * t;
            d[0] = who, d[1] = egg, d[2] = energy;
            at = t;
        }
        if (who == SHARK && --sea[3u * at + 2] == 0)
            sea[3u * at] = sea[3u * at + 1] = 0;
    }
    memset(request, 0, cells * sizeof *request);
    return eaten;
}

static uint64_t sea_hash(const uint32_t *sea, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < 3ull * n * n; i++)
        h = (h ^ sea[i]) * 1099511628211ull;
    return h;
}

typedef struct world {
    cl_context context;
    cl_command_queue queue;
    cl_device_id device;
    uint32_t n, steps, check_every, heap_mib;
    int fixed, lists;
    clheap_allocator allocator; /* --fit: the one being tried */
    FILE *trace; /* per step: allocator, step, fish, sharks, heap ms, static ms */
    /* The CPU's game, played once per size: the sea's hash after every checked step,
     * and the populations after every step. */
    uint32_t reference_n;
    uint64_t *hash;
    uint32_t *fish, *sharks, *eaten;
} world;

typedef struct outcome {
    int ok, full;
    double heap_ms, static_ms; /* per step */
    uint32_t fish, sharks, peak_agents;
    int enumerated; /* by clheap_heap_parallel_do */
    uint64_t heap_bytes;
} outcome;

static int checked(const world *w, uint32_t step)
{
    return step % w->check_every == 0 || step == w->steps;
}

/* The CPU's game for w->n, unless it is already played. */
static void play_reference(world *w)
{
    if (w->reference_n == w->n)
        return;
    uint32_t n = w->n, cells = n * n;
    uint32_t *sea = malloc(3ull * cells * sizeof *sea), *target = malloc(cells * sizeof *target);
    uint32_t *request = calloc(cells, sizeof *request);
    free(w->hash), free(w->fish), free(w->sharks), free(w->eaten);
    w->hash = calloc(w->steps + 1u, sizeof *w->hash);
    w->fish = calloc(w->steps + 1u, sizeof *w->fish);
    w->sharks = calloc(w->steps + 1u, sizeof *w->sharks);
    w->eaten = calloc(w->steps + 1u, sizeof *w->eaten);
    if (!sea || !target || !request || !w->hash || !w->fish || !w->sharks || !w->eaten)
        exit(2);
    populate(sea, n);
    for (uint32_t s = 0; s <= w->steps; s++) {
        if (s) {
            cpu_half(sea, n, s, FISH, target, request);
            w->eaten[s] = cpu_half(sea, n, s, SHARK, target, request);
        }
        for (uint32_t c = 0; c < cells; c++) {
            w->fish[s] += sea[3u * c] == FISH;
            w->sharks[s] += sea[3u * c] == SHARK;
        }
        if (checked(w, s))
            w->hash[s] = sea_hash(sea, n);
    }
    w->reference_n = n;
    free(sea), free(target), free(request);
}

static uint32_t class_of(const clheap_heap_stats *s, uint32_t bytes)
{
    for (uint32_t c = 0; c < s->class_count; c++)
        if (s->class_bytes[c] >= bytes)
            return c;
    return UINT32_MAX;
}


/* A launch that visits `count` listed agents and lists those that live on from the
 * start of its list: counters come back read; returns how many it listed. */
static cl_uint run_listed(cl_command_queue queue, cl_kernel kernel, cl_uint count, cl_mem counter_buf,
                          cl_uint *counters)
{
    cl_uint zero = 0;
    CHECK(clEnqueueWriteBuffer(queue, counter_buf, CL_FALSE, LISTED * sizeof(cl_uint), sizeof zero, &zero, 0, NULL,
                               NULL));
    run_kernel(queue, kernel, count);
    CHECK(clEnqueueReadBuffer(queue, counter_buf, CL_TRUE, 0, COUNTERS * sizeof(cl_uint), counters, 0, NULL, NULL));
    return counters[LISTED];
}

/* Compares the device's sea with the reference; counts the cells that differ. */
static uint32_t cells_wrong(const uint32_t *got, const uint32_t *want, uint32_t cells)
{
    uint32_t wrong = 0;
    for (uint32_t c = 0; c < cells; c++)
        wrong += memcmp(got + 3u * c, want + 3u * c, 3 * sizeof *got) != 0;
    return wrong;
}

static outcome play(world *w, clheap_allocator allocator)
{
    outcome r = {.ok = 1};
    play_reference(w);
    uint32_t n = w->n, cells = n * n;
    size_t sea_bytes = 3ull * cells * sizeof(cl_uint), map_bytes = (size_t)cells * sizeof(cl_uint);
    uint32_t *sea = malloc(sea_bytes), *got = malloc(sea_bytes);
    if (!sea || !got)
        exit(2);
    populate(sea, n);
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = allocator;
    config.size_bytes = w->heap_mib ? (uint64_t)w->heap_mib << 20 : ((uint64_t)cells * 128 + (1u << 20) - 1) >> 20 << 20;
    config.slot_bytes = 32; /* BitmapAlloc: the larger agent */
    config.typed_classes = 1; /* TierAlloc: parallel_do visits a class as one kind of agent */
    config.grow.factor = 0.0;
    clheap_heap *heap = NULL;
    CHECK(clheap_heap_create(w->context, w->device, w->queue, &config, &heap));
    cl_program program = build_or_exit(heap, kernel_source);
    clheap_heap_stats stats;
    CHECK(clheap_heap_calculate_stats(heap, &stats)); /* the classes */
    cl_uint cls[3] = {0, class_of(&stats, 16), class_of(&stats, 32)};
    r.enumerated = !w->lists && stats.class_count && cls[FISH] != cls[SHARK] && cls[SHARK] != UINT32_MAX;
    cl_kernel init = kernel_or_exit(program, "init"), decide = kernel_or_exit(program, "decide");
    cl_kernel prepare = kernel_or_exit(program, r.enumerated ? "prepare_each" : "prepare_listed");
    cl_kernel update = kernel_or_exit(program, r.enumerated ? "update_each" : "update_listed");
    cl_kernel free_each = r.enumerated ? kernel_or_exit(program, "free_each") : NULL, census = kernel_or_exit(program, "census");
    cl_kernel static_prepare = kernel_or_exit(program, "static_prepare");
    cl_kernel static_update = kernel_or_exit(program, "static_update");
    cl_mem map = buffer_or_exit(w->context, CL_MEM_READ_WRITE, map_bytes, NULL);
    cl_mem request = buffer_or_exit(w->context, CL_MEM_READ_WRITE, map_bytes, NULL);
    cl_mem grant = buffer_or_exit(w->context, CL_MEM_READ_WRITE, map_bytes, NULL);
    cl_mem target = buffer_or_exit(w->context, CL_MEM_READ_WRITE, map_bytes, NULL);
    cl_mem static_sea = buffer_or_exit(w->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sea_bytes, sea);
    cl_mem snapshot = buffer_or_exit(w->context, CL_MEM_READ_WRITE, sea_bytes, NULL);
    cl_mem counter_buf = buffer_or_exit(w->context, CL_MEM_READ_WRITE, COUNTERS * sizeof(cl_uint), NULL);
    /* Lists of each kind's agents, two each: prepare compacts the first into the second,
     * update the second back into the first. Every cell holds at most one agent, and
     * a list also holds its eaten fish (at most one a shark), so 2 x cells suffices. */
    size_t list_bytes = r.enumerated ? sizeof(cl_uint) : 2 * map_bytes;
    cl_mem lists[3][2];
    for (int k = FISH; k <= SHARK; k++)
        for (int j = 0; j < 2; j++)
            lists[k][j] = buffer_or_exit(w->context, CL_MEM_READ_WRITE, list_bytes, NULL);
    cl_uint zero = 0, counters[COUNTERS] = {0}, listing = !r.enumerated, count[3] = {0, 0, 0};
    CHECK(clEnqueueFillBuffer(w->queue, map, &zero, sizeof zero, 0, map_bytes, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(w->queue, request, &zero, sizeof zero, 0, map_bytes, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
    set_args(heap, init, 7, ARG(map), ARG(static_sea), ARG(n), ARG(listing), ARG(lists[FISH][0]),
             ARG(lists[SHARK][0]), ARG(counter_buf));
    run_kernel(w->queue, init, cells);
    CHECK(clEnqueueReadBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
    r.full = counters[NULLS] != 0;
    count[FISH] = counters[LISTED], count[SHARK] = counters[LISTED_SHARKS];
    double heap_s = 0, static_s = 0;
    for (uint32_t s = 1; s <= w->steps && !r.full; s++) {
        double t0 = now();
        for (cl_uint who = FISH; who <= SHARK; who++) {
            cl_uint phase = 2u * who + 1u;
            if (r.enumerated) {
                set_args(heap, prepare, 5, ARG(map), ARG(request), ARG(s), ARG(n), ARG(cls[who]));
                timed_parallel_do(heap, w->queue, cls[who], prepare, 6);
            } else {
                set_args(heap, prepare, 8, ARG(map), ARG(request), ARG(s), ARG(n), ARG(lists[who][0]),
                         ARG(count[who]), ARG(lists[who][1]), ARG(counter_buf));
                count[who] = run_listed(w->queue, prepare, count[who], counter_buf, counters);
            }
            set_args(NULL, decide, 5, ARG(request), ARG(grant), ARG(s), ARG(phase), ARG(n));
            run_kernel(w->queue, decide, cells);
            if (r.enumerated) {
                set_args(heap, update, 5, ARG(map), ARG(grant), ARG(n), ARG(counter_buf), ARG(cls[who]));
                timed_parallel_do(heap, w->queue, cls[who], update, 6);
            } else {
                set_args(heap, update, 7, ARG(map), ARG(grant), ARG(n), ARG(lists[who][1]), ARG(count[who]),
                         ARG(lists[who][0]), ARG(counter_buf));
                count[who] = run_listed(w->queue, update, count[who], counter_buf, counters);
            }
        }
        if (r.enumerated)
            CHECK(clEnqueueReadBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
        double heap_step = now() - t0;
        heap_s += heap_step;
        r.full = counters[NULLS] != 0;

        t0 = now();
        for (cl_uint who = FISH; who <= SHARK; who++) {
            cl_uint phase = 2u * who + 1u;
            set_args(NULL, static_prepare, 6, ARG(static_sea), ARG(target), ARG(request), ARG(s), ARG(n), ARG(who));
            run_kernel(w->queue, static_prepare, cells);
            set_args(NULL, decide, 5, ARG(request), ARG(grant), ARG(s), ARG(phase), ARG(n));
            run_kernel(w->queue, decide, cells);
            set_args(NULL, static_update, 5, ARG(static_sea), ARG(target), ARG(grant), ARG(n), ARG(who));
            run_kernel(w->queue, static_update, cells);
        }
        CHECK(clFinish(w->queue));
        double static_step = now() - t0;
        static_s += static_step;
        uint32_t agents = w->fish[s] + w->sharks[s];
        r.peak_agents = agents > r.peak_agents ? agents : r.peak_agents;
        if (w->trace)
            fprintf(w->trace, "%s,%u,%u,%u,%u,%.6f,%.6f\n", clheap_allocator_name(allocator), n, s, w->fish[s],
                    w->sharks[s], 1e3 * heap_step, 1e3 * static_step);
        if (r.full || !checked(w, s))
            continue;
        /* The static sea against the CPU's game, the heap's against the static sea. */
        CHECK(clEnqueueReadBuffer(w->queue, static_sea, CL_TRUE, 0, sea_bytes, sea, 0, NULL, NULL));
        set_args(heap, census, 3, ARG(map), ARG(n), ARG(snapshot));
        run_kernel(w->queue, census, cells);
        CHECK(clEnqueueReadBuffer(w->queue, snapshot, CL_TRUE, 0, sea_bytes, got, 0, NULL, NULL));
        uint32_t wrong = cells_wrong(got, sea, cells);
        int static_right = sea_hash(sea, n) == w->hash[s];
        uint64_t objects = heap_objects(heap), expected = (uint64_t)agents + w->eaten[s];
        char what[256] = "";
        clheap_status sound = clheap_heap_check(heap, what, sizeof what);
        int listed_right = r.enumerated || (count[FISH] == w->fish[s] + w->eaten[s] && count[SHARK] == w->sharks[s]);
        if (wrong || !static_right || objects != expected || !listed_right || sound != CLHEAP_SUCCESS) {
            printf("%s: step %u: %u cells differ from the static version%s; the heap holds %llu objects (%llu "
                   "agents and eaten fish)%s%s%s\n",
                   clheap_allocator_name(allocator), s, wrong, static_right ? "" : ", which differs from the CPU's",
                   (unsigned long long)objects, (unsigned long long)expected, listed_right ? "" : "; lists wrong",
                   sound == CLHEAP_SUCCESS ? "" : "; heap check: ", what);
            r.ok = 0;
            break;
        }
        r.fish = w->fish[s], r.sharks = w->sharks[s];
    }
    /* Every object freed; the heap must then hold none. */
    if (r.enumerated) {
        for (cl_uint who = FISH; who <= SHARK; who++) {
            set_args(heap, free_each, 1, ARG(cls[who]));
            timed_parallel_do(heap, w->queue, cls[who], free_each, 2);
        }
    } else {
        for (cl_uint who = FISH; who <= SHARK; who++)
            if (count[who])
                CHECK(clheap_heap_enqueue_free(heap, w->queue, count[who], lists[who][0], 0, 0, NULL, NULL));
    }
    if (!heap_empty_and_sound(heap, clheap_allocator_name(allocator))) {
        r.full = 0; /* a failure of its own, whatever else happened */
        r.ok = 0;
    }
    r.ok = r.ok && !r.full;
    r.heap_ms = 1e3 * heap_s / w->steps;
    r.static_ms = 1e3 * static_s / w->steps;
    r.heap_bytes = clheap_heap_size(heap);
    free(sea), free(got);
    cl_mem buffers[] = {map, request, grant, target, static_sea, snapshot, counter_buf,
                        lists[FISH][0], lists[FISH][1], lists[SHARK][0], lists[SHARK][1]};
    cl_kernel kernels[] = {init, decide, prepare, update, free_each, census, static_prepare, static_update};
    release_all(buffers, sizeof buffers / sizeof *buffers, kernels, sizeof kernels / sizeof *kernels);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
    return r;
}

/* --fit: one game on an n x n sea with w->allocator (see largest_fit). */
static int attempt(void *ctx, uint32_t n)
{
    world *w = ctx;
    w->n = n;
    outcome r = play(w, w->allocator);
    return r.ok ? 1 : r.full ? 0 : -1;
}

int main(int argc, char **argv)
{
    world w = {0};
    w.n = (uint32_t)arg_int(argc, argv, "--size", 256);
    w.steps = (uint32_t)arg_int(argc, argv, "--steps", 100);
    w.check_every = (uint32_t)arg_int(argc, argv, "--check-every", 1);
    w.heap_mib = (uint32_t)arg_int(argc, argv, "--heap-mib", 0);
    w.fixed = arg_flag(argc, argv, "--fit");
    fit_range fit = {0, 0, 0}; /* where --fit looks: to resume a search cut off by a time limit */
    int fit_ok = fit_range_args(argc, argv, 16384, &fit);
    w.lists = arg_flag(argc, argv, "--lists");
    example_options = arg_str(argc, argv, "--options", "");
    const char *which = arg_str(argc, argv, "--allocator", clheap_allocator_name(CLHEAP_TYPED_ALLOCATOR));
    const char *csv_path = arg_str(argc, argv, "--csv", NULL), *trace_path = arg_str(argc, argv, "--trace", NULL);
    if (w.n < 8 || w.n > 16384 || w.steps < 1 || w.check_every < 1 || (w.fixed && !w.heap_mib) || !fit_ok) {
        fprintf(stderr, "usage: %s [--size N (8..16384)] [--steps S] [--check-every K] [--allocator NAME|all] "
                        "[--heap-mib M] [--lists] [--fit [--fit-known K] [--fit-from N] [--fit-to N]] [--csv FILE] [--trace FILE] "
                        "[--options \"BUILD OPTIONS\"]\n", argv[0]);
        return 2;
    }
    char name[256];
    open_device(&w.device, &w.context, &w.queue, name, sizeof name);
    printf("device: %s\n", name);
    /* The default first (the heap is typed: CLHEAP_TYPED_ALLOCATOR), then every other
     * allocator that frees concurrently. */
    clheap_allocator order[] = {CLHEAP_TYPED_ALLOCATOR, CLHEAP_TIER_ALLOC, CLHEAP_BLOCK_ALLOC, CLHEAP_BITMAP_ALLOC,
                                CLHEAP_CMALLOC, CLHEAP_CFMALLOC, CLHEAP_CMMALLOC, CLHEAP_CFMMALLOC};
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    w.trace = trace_path ? fopen(trace_path, "w") : NULL;
    if ((csv_path && !csv) || (trace_path && !w.trace)) {
        fprintf(stderr, "cannot write %s\n", csv && trace_path ? trace_path : csv_path);
        return 2;
    }
    if (csv)
        fprintf(csv, "allocator,size,steps,fish,sharks,peak_agents,enumeration,heap_ms_per_step,"
                     "static_ms_per_step,heap_bytes,result\n");
    if (w.trace)
        fprintf(w.trace, "allocator,size,step,fish,sharks,heap_ms,static_ms\n");
    int wrong = 0, full = 0, ran = 0, played = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        const char *a = clheap_allocator_name(order[i]);
        if (strcmp(which, "all") != 0 && strcmp(which, a) != 0)
            continue;
        if (i && order[i] == order[0])
            continue;
        ran++;
        if (!device_runs(w.device, order[i]))
            continue;
        played++;
        if (w.fixed) { /* the largest sea whose game fits the heap as it is */
            uint32_t fits;
            w.allocator = order[i];
            int sound = largest_fit(attempt, &w, a, fit, &fits);
            printf("%-12s %u MiB heap, %u steps: the largest sea that fits is %ux%u%s\n", a, w.heap_mib, w.steps,
                   fits, fits, sound ? "" : " (a larger one FAILED for another reason)");
            wrong += !sound || !fits;
            continue;
        }
        outcome r = play(&w, order[i]);
        const char *result = r.ok ? "verified" : r.full ? "full" : "WRONG";
        printf("%-12s %ux%u, %u steps (%s): %u fish and %u sharks at the end (peak %u agents), heap %.3f ms / "
               "step, static %.3f ms (%.2fx), heap %llu MiB: %s\n",
               a, w.n, w.n, w.steps, r.enumerated ? "parallel_do" : "lists", r.fish, r.sharks, r.peak_agents,
               r.heap_ms, r.static_ms, r.static_ms > 0 ? r.heap_ms / r.static_ms : 0.0,
               (unsigned long long)(r.heap_bytes >> 20), result);
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%s,%u,%u,%u,%u,%u,%s,%.6f,%.6f,%llu,%s\n", a, w.n, w.steps, r.fish, r.sharks,
                    r.peak_agents, r.enumerated ? "parallel_do" : "lists", r.heap_ms, r.static_ms,
                    (unsigned long long)r.heap_bytes, result);
            fflush(csv); /* a run cut off by a time limit keeps the rows it finished */
        }
        wrong += !r.ok && !r.full;
        full += r.full;
    }
    if (csv)
        fclose(csv);
    if (w.trace)
        fclose(w.trace);
    free(w.hash), free(w.fish), free(w.sharks), free(w.eaten);
    clReleaseCommandQueue(w.queue);
    clReleaseContext(w.context);
    if (!ran) {
        fprintf(stderr, "unknown allocator %s\n", which);
        return 2;
    }
    if (!played) { /* every allocator asked for is refused here: nothing was verified */
        printf("wator FAILED: the device refuses %s\n", which);
        return 1;
    }
    printf(wrong ? "wator FAILED\n" : full ? "wator: some heaps were too small\n" : "wator OK\n");
    return wrong ? 1 : full ? 3 : 0;
}
