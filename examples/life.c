/* clheap life: Conway's game of life on a torus in the O(alive cells) form of DynaSOAr's
 * benchmark (Springer & Masuhara, paper 001): each live cell, and each dead cell next to
 * one (a candidate: it may come alive), is a 16-byte device-heap object, created and
 * freed on the device every generation, and a map of the torus names the object at each
 * cell. A generation is three kernels over the list of objects: live cells create the
 * candidates around them (malloc, then a compare-and-swap into the map; the loser frees
 * its object), every object counts its live neighbours through the map, and objects
 * that die are freed and leave the map while the survivors form the next list.
 *
 * Beside it runs the version with static, precomputed allocation: the O(cells) kernel
 * over two byte grids. Both are timed per generation (clFinish after each); the heap
 * version is checked every --check-every generations against the CPU's dense game of
 * the same start: the map's cells exactly, every object's cell and state, the number of
 * objects the heap holds, and the heap's invariants; at the end the host frees every
 * object with one enqueued batch and the heap must be empty.
 * Allocators: every one that frees concurrently (the bump allocators cannot free, and
 * FreeHeap serves one work-item at a time by design); --allocator all runs them in turn.
 * Usage: clheap-life [--size N (256)] [--generations G (64)] [--check-every K (1)]
 *                    [--allocator NAME|all (the device's default)] [--heap-mib M (the start's
 *                    objects 8 times over)] [--fit] [--csv FILE] [--options "-DCLHEAP_..."
 *                    (build options of the game's program)] [--no-warp (no warp coalescing)]
 * --fit: the heap stays at --heap-mib, and the largest torus (to 8 cells, or 1/16) whose
 * game runs the generations verified in it is searched, per allocator (the space
 * efficiency test of DynaSOAr's paper). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The start: a random soup of density 3/8 in the central quarter of the torus (a few
 * percent of the cells live, then ash and gliders: the regime the O(alive) form is for). */
static int soup(uint32_t cell, uint32_t n)
{
    uint32_t x = cell % n, y = cell / n, h = cell * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return x >= 3 * n / 8 && x < 5 * n / 8 && y >= 3 * n / 8 && y < 5 * n / 8 && h % 8 < 3;
}

static const char *kernel_source =
    "typedef struct { uint cell, alive, next, unused; } life_cell; /* one 16-byte unit */\n"
    "enum { NULLS, LISTED, KEPT };\n"
    "uint neighbour(uint cell, uint k, uint n) { /* k in 0..7 */\n"
    "    uint j = k < 4u ? k : k + 1u, x = cell % n, y = cell / n;\n"
    "    x = (x + n + j % 3u - 1u) % n; y = (y + n + j / 3u - 1u) % n;\n"
    "    return y * n + x;\n"
    "}\n"
    "/* The start's live cells. Idempotent, like spawn. */\n"
    "__kernel void init(__global clheap_heap *heap, __global uint *map, __global uint *list,\n"
    "                   __global const uint *cells, uint count, __global uint *counters) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count || map[cells[id]]) return;\n"
    "    __global life_cell *c = clheap_malloc(heap, sizeof(life_cell));\n"
    "    if (!c) { atomic_inc(&counters[NULLS]); return; }\n"
    "    c->cell = cells[id]; c->alive = 1u; c->next = 0u;\n"
    "    map[cells[id]] = clheap_unit_of(heap, c);\n"
    "    list[atomic_inc(&counters[LISTED])] = map[cells[id]];\n"
    "}\n"
    "/* Live cells create the candidates around them. Idempotent: run again after a growth,\n"
    " * it creates only those that got NULL. The map is read through volatile: other\n"
    " * work-items write it meanwhile. */\n"
    "__kernel void spawn(__global clheap_heap *heap, __global uint *map, __global uint *list,\n"
    "                    uint count, uint n, __global uint *counters) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    __global const life_cell *c = clheap_pointer(heap, list[id]);\n"
    "    if (!c->alive) return;\n"
    "    for (uint k = 0; k < 8u; k++) {\n"
    "        uint nb = neighbour(c->cell, k, n);\n"
    "        if (((volatile __global uint *)map)[nb]) continue;\n"
    "        __global life_cell *p = clheap_malloc(heap, sizeof(life_cell));\n"
    "        if (!p) { atomic_inc(&counters[NULLS]); continue; }\n"
    "        p->cell = nb; p->alive = 0u; p->next = 0u;\n"
    "        uint unit = clheap_unit_of(heap, p);\n"
    "        if (atomic_cmpxchg(&map[nb], 0u, unit) != 0u) { clheap_free(heap, p); continue; }\n"
    "        list[atomic_inc(&counters[LISTED])] = unit;\n"
    "    }\n"
    "}\n"
    "__kernel void decide(__global clheap_heap *heap, __global const uint *map, __global const uint *list,\n"
    "                     uint count, uint n) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    __global life_cell *c = clheap_pointer(heap, list[id]);\n"
    "    uint alive = 0u;\n"
    "    for (uint k = 0; k < 8u; k++) {\n"
    "        __global const life_cell *o = clheap_pointer(heap, map[neighbour(c->cell, k, n)]);\n"
    "        alive += o ? o->alive : 0u;\n"
    "    }\n"
    "    c->next = alive == 3u || (c->alive && alive == 2u);\n"
    "}\n"
    "__kernel void apply(__global clheap_heap *heap, __global uint *map, __global const uint *list,\n"
    "                    uint count, __global uint *kept, __global uint *counters) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    __global life_cell *c = clheap_pointer(heap, list[id]);\n"
    "    if (c->next) { c->alive = 1u; kept[atomic_inc(&counters[KEPT])] = list[id]; }\n"
    "    else { map[c->cell] = 0u; clheap_free(heap, c); }\n"
    "}\n"
    "/* counters[NULLS] counts objects whose cell, state or map entry is wrong. */\n"
    "__kernel void verify(__global clheap_heap *heap, __global const uint *map, __global const uint *list,\n"
    "                     uint count, uint n, __global uint *counters) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (id >= count) return;\n"
    "    __global const life_cell *c = clheap_pointer(heap, list[id]);\n"
    "    if (!c || c->alive != 1u || c->cell >= n * n || map[c->cell] != list[id]) atomic_inc(&counters[NULLS]);\n"
    "}\n"
    "/* The static version: one work-item per cell, two byte grids. */\n"
    "__kernel void dense(__global const uchar *in, __global uchar *out, uint n) {\n"
    "    uint cell = get_global_id(0);\n"
    "    if (cell >= n * n) return;\n"
    "    uint alive = 0u;\n"
    "    for (uint k = 0; k < 8u; k++) alive += in[neighbour(cell, k, n)];\n"
    "    out[cell] = alive == 3u || (in[cell] && alive == 2u);\n"
    "}\n";

enum { NULLS, LISTED, KEPT };

/* The CPU's dense generation, the reference. */
static void cpu_step(const uint8_t *in, uint8_t *out, uint32_t n)
{
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            uint32_t alive = 0;
            for (uint32_t dy = 0; dy < 3; dy++)
                for (uint32_t dx = 0; dx < 3; dx++)
                    if (dx != 1 || dy != 1)
                        alive += in[(y + n + dy - 1) % n * n + (x + n + dx - 1) % n];
            out[y * n + x] = alive == 3 || (in[y * n + x] && alive == 2);
        }
}

typedef struct world {
    cl_context context;
    cl_command_queue queue;
    cl_device_id device;
    uint32_t n, generations, check_every, heap_mib;
    int fixed; /* --fit: the heap never grows */
    clheap_allocator allocator; /* --fit: the one being tried */
    int no_warp;                /* --no-warp: config.no_warp_coalescing */
} world;

typedef struct outcome {
    int ok, full; /* full: mallocs got NULL that no growth could answer */
    double heap_ms, static_ms; /* per generation */
    uint32_t alive, peak_objects, growths;
    uint64_t heap_bytes;
} outcome;

/* Runs an idempotent kernel (argument 0 the heap) until its mallocs get no NULL,
 * growing the heap by its policy in between (a heap that may not grow is tried again
 * as it is); counters come back read. 0 if NULLs remain after 16 tries. */
static int run_until_no_nulls(clheap_heap *heap, cl_command_queue queue, cl_kernel kernel, uint32_t items,
                              cl_mem counter_buf, cl_uint *counters, uint32_t *growths)
{
    for (int tries = 0; tries < 16; tries++) {
        CHECK(clheap_heap_set_kernel_arg(heap, kernel, 0)); /* the buffer is new after a growth */
        run_kernel(queue, kernel, items);
        CHECK(clEnqueueReadBuffer(queue, counter_buf, CL_TRUE, 0, 3 * sizeof(cl_uint), counters, 0, NULL, NULL));
        if (!counters[NULLS])
            return 1;
        int grew = 0;
        clheap_status grown = clheap_heap_grow_if_needed(heap, &grew);
        if (grown != CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY) /* that one: no growth allowed */
            CHECK(grown);
        *growths += (uint32_t)grew;
        counters[NULLS] = 0;
        CHECK(clEnqueueWriteBuffer(queue, counter_buf, CL_TRUE, 0, sizeof(cl_uint), &counters[NULLS], 0, NULL, NULL));
    }
    return 0;
}

static outcome play(const world *w, clheap_allocator allocator)
{
    outcome r = {.ok = 1};
    uint32_t n = w->n, cells = n * n, count = 0;
    /* Every cell holds at most one object, so a list of `cells` entries always suffices. */
    size_t list_bytes = (size_t)cells * sizeof(cl_uint);
    uint8_t *ref = calloc(cells, 1), *ref_next = calloc(cells, 1), *got = malloc(cells);
    uint32_t *start = malloc(list_bytes), *got_map = malloc(list_bytes);
    if (!ref || !ref_next || !got || !start || !got_map)
        exit(2);
    for (uint32_t c = 0; c < cells; c++)
        if ((ref[c] = (uint8_t)soup(c, n)))
            start[count++] = c;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = allocator;
    /* Room for the start's objects eight times over (the pre-split allocators serve small
     * requests from a share of their pool), unless --heap-mib; later generations grow it
     * when they need, unless --fit. */
    config.size_bytes = w->heap_mib ? (uint64_t)w->heap_mib << 20 : 1u << 20;
    while (!w->heap_mib && config.size_bytes < (uint64_t)count * 16 * 8)
        config.size_bytes *= 2;
    config.slot_bytes = 16; /* BitmapAlloc: the objects' size */
    config.no_warp_coalescing = (uint32_t)w->no_warp;
    config.grow.factor = w->fixed ? 0.0 : 2.0;
    config.grow.max_bytes = (uint64_t)cells * 16 * 8 + (64u << 20);
    clheap_heap *heap = NULL;
    CHECK(clheap_heap_create(w->context, w->device, w->queue, &config, &heap));
    cl_program program = build_or_exit(heap, kernel_source);
    cl_kernel init = kernel_or_exit(program, "init"), spawn = kernel_or_exit(program, "spawn");
    cl_kernel decide = kernel_or_exit(program, "decide"), apply = kernel_or_exit(program, "apply");
    cl_kernel verify = kernel_or_exit(program, "verify"), dense = kernel_or_exit(program, "dense");
    cl_mem map = buffer_or_exit(w->context, CL_MEM_READ_WRITE, list_bytes, NULL);
    cl_mem lists[2] = {buffer_or_exit(w->context, CL_MEM_READ_WRITE, list_bytes, NULL),
                       buffer_or_exit(w->context, CL_MEM_READ_WRITE, list_bytes, NULL)};
    cl_mem counter_buf = buffer_or_exit(w->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL);
    cl_mem grids[2] = {buffer_or_exit(w->context, CL_MEM_READ_WRITE, cells, NULL),
                       buffer_or_exit(w->context, CL_MEM_READ_WRITE, cells, NULL)};
    cl_mem start_buf = buffer_or_exit(w->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                      (count ? count : 1) * sizeof(cl_uint), start);
    cl_uint zero = 0, counters[3] = {0, 0, 0};
    CHECK(clEnqueueFillBuffer(w->queue, map, &zero, sizeof zero, 0, list_bytes, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(w->queue, grids[0], CL_TRUE, 0, cells, ref, 0, NULL, NULL));
    set_args(heap, init, 5, ARG(map), ARG(lists[0]), ARG(start_buf), ARG(count), ARG(counter_buf));
    r.ok = run_until_no_nulls(heap, w->queue, init, count, counter_buf, counters, &r.growths);
    r.full = !r.ok;
    if (!r.ok && !w->fixed)
        fprintf(stderr, "%s: %u of the start's %u objects still NULL\n", clheap_allocator_name(allocator),
                counters[NULLS], count);
    count = counters[LISTED];
    double heap_s = 0, static_s = 0;
    int cur = 0;
    for (uint32_t g = 1; g <= w->generations && r.ok; g++) {
        double t0 = now();
        counters[NULLS] = 0, counters[LISTED] = count, counters[KEPT] = 0;
        CHECK(clEnqueueWriteBuffer(w->queue, counter_buf, CL_FALSE, 0, sizeof counters, counters, 0, NULL, NULL));
        set_args(heap, spawn, 5, ARG(map), ARG(lists[cur]), ARG(count), ARG(n), ARG(counter_buf));
        if (!run_until_no_nulls(heap, w->queue, spawn, count, counter_buf, counters, &r.growths)) {
            if (!w->fixed)
                fprintf(stderr, "generation %u: %u candidates still NULL\n", g, counters[NULLS]);
            r.ok = 0;
            r.full = 1;
            count = counters[LISTED]; /* the batch free below takes the candidates too */
            break;
        }
        uint32_t listed = counters[LISTED];
        r.peak_objects = listed > r.peak_objects ? listed : r.peak_objects;
        set_args(heap, decide, 4, ARG(map), ARG(lists[cur]), ARG(listed), ARG(n));
        run_kernel(w->queue, decide, listed);
        set_args(heap, apply, 5, ARG(map), ARG(lists[cur]), ARG(listed), ARG(lists[1 - cur]), ARG(counter_buf));
        run_kernel(w->queue, apply, listed);
        CHECK(clEnqueueReadBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
        count = counters[KEPT];
        cur = 1 - cur;
        heap_s += now() - t0;

        t0 = now();
        CHECK(clSetKernelArg(dense, 0, sizeof grids[0], &grids[(g - 1) % 2]));
        CHECK(clSetKernelArg(dense, 1, sizeof grids[1], &grids[g % 2]));
        CHECK(clSetKernelArg(dense, 2, sizeof n, &n));
        run_kernel(w->queue, dense, cells);
        CHECK(clFinish(w->queue));
        static_s += now() - t0;

        cpu_step(ref, ref_next, n);
        memcpy(ref, ref_next, cells);
        if (g % w->check_every && g != w->generations)
            continue;
        uint32_t alive = 0, wrong = 0;
        CHECK(clEnqueueReadBuffer(w->queue, map, CL_FALSE, 0, list_bytes, got_map, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(w->queue, grids[g % 2], CL_TRUE, 0, cells, got, 0, NULL, NULL));
        for (uint32_t c = 0; c < cells; c++) {
            alive += ref[c];
            wrong += (got_map[c] != 0) != ref[c] || got[c] != ref[c];
        }
        counters[NULLS] = 0;
        CHECK(clEnqueueWriteBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof(cl_uint), &counters[NULLS], 0, NULL, NULL));
        set_args(heap, verify, 5, ARG(map), ARG(lists[cur]), ARG(count), ARG(n), ARG(counter_buf));
        run_kernel(w->queue, verify, count);
        CHECK(clEnqueueReadBuffer(w->queue, counter_buf, CL_TRUE, 0, sizeof(cl_uint), &counters[NULLS], 0, NULL, NULL));
        char what[256] = "";
        clheap_status sound = clheap_heap_check(heap, what, sizeof what);
        uint64_t objects = heap_objects(heap);
        if (wrong || counters[NULLS] || count != alive || objects != alive || sound != CLHEAP_SUCCESS) {
            printf("%s: generation %u: %u alive (CPU %u), %u cells wrong, %u objects wrong, the heap holding %llu "
                   "objects%s%s\n",
                   clheap_allocator_name(allocator), g, count, alive, wrong, counters[NULLS],
                   (unsigned long long)objects, sound == CLHEAP_SUCCESS ? "" : "; heap check: ", what);
            r.ok = 0;
        }
        r.alive = alive;
    }
    /* The host frees every object at once; the heap must then hold none. */
    if (count)
        CHECK(clheap_heap_enqueue_free(heap, w->queue, count, lists[cur], 0, 0, NULL, NULL));
    if (!heap_empty_and_sound(heap, clheap_allocator_name(allocator))) {
        r.full = 0; /* a failure of its own, whatever else happened */
        r.ok = 0;
    }
    r.heap_ms = 1e3 * heap_s / w->generations;
    r.static_ms = 1e3 * static_s / w->generations;
    r.heap_bytes = clheap_heap_size(heap);
    free(ref), free(ref_next), free(got), free(start), free(got_map);
    cl_mem buffers[] = {map, lists[0], lists[1], counter_buf, grids[0], grids[1], start_buf};
    cl_kernel kernels[] = {init, spawn, decide, apply, verify, dense};
    release_all(buffers, sizeof buffers / sizeof *buffers, kernels, sizeof kernels / sizeof *kernels);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
    return r;
}

/* --fit: one game on an n x n torus with w->allocator (see largest_fit). */
static int attempt(void *ctx, uint32_t n)
{
    world *w = ctx;
    w->n = n;
    outcome r = play(w, w->allocator);
    return r.ok ? 1 : r.full ? 0 : -1;
}

int main(int argc, char **argv)
{
    world w;
    w.n = (uint32_t)arg_int(argc, argv, "--size", 256);
    w.generations = (uint32_t)arg_int(argc, argv, "--generations", 64);
    w.check_every = (uint32_t)arg_int(argc, argv, "--check-every", 1);
    w.heap_mib = (uint32_t)arg_int(argc, argv, "--heap-mib", 0);
    w.fixed = arg_flag(argc, argv, "--fit");
    w.no_warp = arg_flag(argc, argv, "--no-warp");
    example_options = arg_str(argc, argv, "--options", "");
    fit_range fit = {0, 0, 0}; /* where --fit looks: to resume a search cut off by a time limit */
    int fit_ok = fit_range_args(argc, argv, 32768, &fit);
    const char *which = arg_str(argc, argv, "--allocator", NULL); /* NULL: the device's default */
    const char *csv_path = arg_str(argc, argv, "--csv", NULL);
    if (w.n < 8 || w.n > 32768 || w.generations < 1 || w.check_every < 1 || (w.fixed && !w.heap_mib) || !fit_ok) {
        fprintf(stderr, "usage: %s [--size N (8..32768)] [--generations G] [--check-every K] "
                        "[--allocator NAME|all] [--heap-mib M] [--fit [--fit-known K] [--fit-from N] [--fit-to N]] [--csv FILE] "
                        "[--options \"BUILD OPTIONS\"] [--no-warp]\n", argv[0]);
        return 2;
    }
    char name[256];
    open_device(&w.device, &w.context, &w.queue, name, sizeof name);
    printf("device: %s\n", name);
    /* The device's default first, then every other allocator that frees concurrently. */
    clheap_allocator first = clheap_device_allocator(w.device, 0);
    clheap_allocator order[] = {first, CLHEAP_TIER_ALLOC, CLHEAP_BLOCK_ALLOC, CLHEAP_BITMAP_ALLOC, CLHEAP_CMALLOC,
                                CLHEAP_CFMALLOC, CLHEAP_CMMALLOC, CLHEAP_CFMMALLOC};
    which = which ? which : clheap_allocator_name(first);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "allocator,size,generations,alive,peak_objects,heap_ms_per_generation,"
                     "static_ms_per_generation,heap_bytes,growths,verified\n");
    int ok = 1, ran = 0, played = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        const char *a = clheap_allocator_name(order[i]);
        if (strcmp(which, "all") != 0 && strcmp(which, a) != 0)
            continue;
        if (i && order[i] == first)
            continue;
        ran++;
        if (!device_runs(w.device, order[i]))
            continue;
        played++;
        if (w.fixed) { /* the largest torus whose game fits the heap as it is */
            uint32_t fits;
            w.allocator = order[i];
            int sound = largest_fit(attempt, &w, a, fit, &fits);
            printf("%-12s %u MiB heap, %u generations: the largest torus that fits is %ux%u%s\n", a, w.heap_mib,
                   w.generations, fits, fits, sound ? "" : " (a larger one FAILED for another reason)");
            ok = ok && sound && fits > 0;
            continue;
        }
        outcome r = play(&w, order[i]);
        printf("%-12s %ux%u, %u generations: %u alive at the end (peak %u objects), heap %.3f ms / generation, "
               "static %.3f ms (%.2fx), heap grown to %llu MiB (%u growths): %s\n",
               a, w.n, w.n, w.generations, r.alive, r.peak_objects, r.heap_ms, r.static_ms,
               r.static_ms > 0 ? r.heap_ms / r.static_ms : 0.0, (unsigned long long)(r.heap_bytes >> 20), r.growths,
               r.ok ? "verified" : "WRONG");
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%s,%u,%u,%u,%u,%.6f,%.6f,%llu,%u,%d\n", a, w.n, w.generations, r.alive, r.peak_objects,
                    r.heap_ms, r.static_ms, (unsigned long long)r.heap_bytes, r.growths, r.ok);
            fflush(csv); /* a run cut off by a time limit keeps the rows it finished */
        }
        ok = ok && r.ok;
    }
    if (csv)
        fclose(csv);
    clReleaseCommandQueue(w.queue);
    clReleaseContext(w.context);
    if (!ran) {
        fprintf(stderr, "unknown allocator %s\n", which);
        return 2;
    }
    if (!played) { /* every allocator asked for is refused here: nothing was verified */
        printf("life FAILED: the device refuses %s\n", which);
        return 1;
    }
    printf(ok ? "life OK\n" : "life FAILED\n");
    return ok ? 0 : 1;
}
