/* realloc: the rest of C's allocation API in kernels against doing it by hand, in one
 * program per allocator (bench/peers/gallatin_bench.cu --realloc runs the by-hand
 * variants on Gallatin, which has no realloc, calloc or aligned_alloc):
 *   push     each work-item grows an array by doubling from 16 B to 4 KiB, writing the
 *            new elements at every step, as a push_back would: clheap_realloc, or
 *            malloc + copy + free;
 *   grow     each work-item's allocation (made beforehand) grows once, from 100 B to
 *            128 B (its slot holds it: in place) and from 1000 B to 2000 B (it moves):
 *            clheap_realloc, or malloc + copy + free, and the new bytes written;
 *   calloc   clheap_calloc, or malloc and the kernel zeroing it itself (64 B, 4 KiB);
 *   aligned  clheap_aligned_alloc(A, A), or clheap_malloc(A), for A = 16 B, 256 B, 4 KiB.
 * Only the timed kernel is timed; an untimed one then verifies every word (and every
 * address's alignment) and frees. The two variants of a shape run in turn, run by run; the
 * median of --runs runs after a warm-up; a wrong word, a misaligned address or a bad free
 * counted by the heap fails the shape. CSV: realloc.csv. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define RESIZE_COLUMNS "allocator,test,variant,work_items,bytes,seconds,min_seconds,max_seconds,nulls,wrong,runs"

static const char *resize_source =
    "/* counts[0]: NULLs, counts[1]: wrong words or misaligned addresses, counts[2]: allocations\n"
    " * over twice the size asked (aligned_alloc's frames, or a larger class's slot) */\n"
    "__kernel void push_realloc(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint max) {\n"
    "    uint id = get_global_id(0), have = 0;\n"
    "    __global uint *p = 0;\n"
    "    for (uint bytes = 16u; bytes <= max; bytes *= 2u) {\n"
    "        __global uint *q = clheap_realloc(heap, p, bytes);\n"
    "        if (!q) { atomic_inc(counts); break; }\n"
    "        for (uint w = have / 4u; w < bytes / 4u; w++) q[w] = id + w;\n"
    "        p = q;\n"
    "        have = bytes;\n"
    "    }\n"
    "    units[id] = have == max ? clheap_unit_of(heap, p) : 0u;\n"
    "    if (have != max) clheap_free(heap, p);\n"
    "}\n"
    "__kernel void push_by_hand(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint max) {\n"
    "    uint id = get_global_id(0), have = 0;\n"
    "    __global uint *p = 0;\n"
    "    for (uint bytes = 16u; bytes <= max; bytes *= 2u) {\n"
    "        __global uint *q = clheap_malloc(heap, bytes);\n"
    "        if (!q) { atomic_inc(counts); break; }\n"
    "        for (uint w = 0; w < have / 4u; w++) q[w] = p[w];\n"
    "        clheap_free(heap, p);\n"
    "        for (uint w = have / 4u; w < bytes / 4u; w++) q[w] = id + w;\n"
    "        p = q;\n"
    "        have = bytes;\n"
    "    }\n"
    "    units[id] = have == max ? clheap_unit_of(heap, p) : 0u;\n"
    "    if (have != max) clheap_free(heap, p);\n"
    "}\n"
    "__kernel void grow_prepare(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint from) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_malloc(heap, from);\n"
    "    if (!p) atomic_inc(counts);\n"
    "    for (uint w = 0; p && w < from / 4u; w++) p[w] = id + w;\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void grow_realloc(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint from,\n"
    "                           uint to) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (!units[id]) return;\n"
    "    __global uint *q = clheap_realloc(heap, clheap_pointer(heap, units[id]), to);\n"
    "    if (!q) { atomic_inc(counts); return; }\n"
    "    for (uint w = from / 4u; w < to / 4u; w++) q[w] = id + w;\n"
    "    units[id] = clheap_unit_of(heap, q);\n"
    "}\n"
    "__kernel void grow_by_hand(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint from,\n"
    "                           uint to) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (!units[id]) return;\n"
    "    __global uint *p = clheap_pointer(heap, units[id]), *q = clheap_malloc(heap, to);\n"
    "    if (!q) { atomic_inc(counts); return; }\n"
    "    for (uint w = 0; w < from / 4u; w++) q[w] = p[w];\n"
    "    clheap_free(heap, p);\n"
    "    for (uint w = from / 4u; w < to / 4u; w++) q[w] = id + w;\n"
    "    units[id] = clheap_unit_of(heap, q);\n"
    "}\n"
    "/* Verifies words [0, bytes / 4) = id + w, then frees (push and grow). */\n"
    "__kernel void check_words(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    uint id = get_global_id(0), wrong = 0;\n"
    "    __global uint *p = clheap_pointer(heap, units[id]);\n"
    "    for (uint w = 0; p && w < bytes / 4u; w++) wrong += p[w] != id + w;\n"
    "    if (wrong) atomic_add(counts + 1, wrong);\n"
    "    clheap_free(heap, p);\n"
    "    units[id] = 0u;\n"
    "}\n"
    "__kernel void zero_calloc(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    __global uint *p = clheap_calloc(heap, 1u, bytes);\n"
    "    if (!p) atomic_inc(counts);\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void zero_by_hand(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (!p) atomic_inc(counts);\n"
    "    for (uint w = 0; p && w < bytes / 4u; w++) p[w] = 0u;\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, p);\n"
    "}\n"
    "/* Verifies zeros, then stamps every word (check_words verifies the stamps and frees; the\n"
    " * next run's memory is dirty). */\n"
    "__kernel void check_zero(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    uint id = get_global_id(0), wrong = 0;\n"
    "    __global uint *p = clheap_pointer(heap, units[id]);\n"
    "    for (uint w = 0; p && w < bytes / 4u; w++) { wrong += p[w] != 0u; p[w] = id + w; }\n"
    "    if (wrong) atomic_add(counts + 1, wrong);\n"
    "}\n"
    "__kernel void aligned_k(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    __global uint *p = clheap_aligned_alloc(heap, bytes, bytes);\n"
    "    if (!p) atomic_inc(counts);\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void malloc_k(__global clheap_heap *heap, __global uint *units, __global uint *counts, uint bytes) {\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (!p) atomic_inc(counts);\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, p);\n"
    "}\n"
    "/* Counts addresses off `alignment` (the aligned variant only), then stamps every word\n"
    " * (check_words verifies the stamps and frees: two work-items given one slot fail it). */\n"
    "__kernel void check_aligned(__global clheap_heap *heap, __global uint *units, __global uint *counts,\n"
    "                            uint bytes, uint alignment) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global uint *p = clheap_pointer(heap, units[id]);\n"
    "    if (p && ((ulong)p & (alignment - 1u))) atomic_inc(counts + 1);\n"
    "    if (p && clheap_usable_size(heap, p) > 2u * bytes) atomic_inc(counts + 2);  /* not a slot of its size */\n"
    "    for (uint w = 0; p && w < bytes / 4u; w++) p[w] = id + w;\n"
    "}\n";

typedef struct resize_env {
    bench_env *env;
    clheap_allocator allocator;
    clheap_heap *heap;
    cl_program program;
    cl_mem units, counts;
    FILE *csv;
    int failures;
} resize_env;

/* Sets kernel `name`'s arguments (heap, units, counts, then up to two uints). */
static cl_kernel resize_kernel(resize_env *r, const char *name, int nargs, cl_uint a, cl_uint b)
{
    cl_int err;
    cl_kernel k = clCreateKernel(r->program, name, &err);
    if (err != CL_SUCCESS)
        return NULL;
    clheap_heap_set_kernel_arg(r->heap, k, 0);
    clSetKernelArg(k, 1, sizeof r->units, &r->units);
    clSetKernelArg(k, 2, sizeof r->counts, &r->counts);
    if (nargs > 0)
        clSetKernelArg(k, 3, sizeof a, &a);
    if (nargs > 1)
        clSetKernelArg(k, 4, sizeof b, &b);
    return k;
}

static cl_int resize_launch(resize_env *r, cl_kernel k, size_t items, double *seconds)
{
    size_t local = 256;
    cl_event e;
    cl_int err = clEnqueueNDRangeKernel(r->env->queue, k, 1, NULL, &items, &local, 0, NULL, &e);
    if (err != CL_SUCCESS)
        return err;
    err = clWaitForEvents(1, &e);
    if (seconds)
        *seconds = bench_event_seconds(e);
    clReleaseEvent(e);
    return err;
}

/* The heap's bad-free counters, summed. */
static uint32_t resize_bad_frees(resize_env *r)
{
    clheap_heap_errors e;
    clheap_heap_read_errors(r->heap, &e);
    return bench_bad_frees(&e);
}

/* After bad frees: which counters, and what the heap check finds (a diagnosis, not a
 * repair: the next shapes run on this heap as it is). */
static void resize_explain_bad_frees(resize_env *r)
{
    clheap_heap_errors e;
    char what[512] = "";
    clheap_heap_read_errors(r->heap, &e);
    clheap_status st = clheap_heap_check(r->heap, what, sizeof what);
    printf("    bad frees so far: double %u, not a chunk %u, outside %u, unaligned %u; heap check: %s%s%s\n",
           e.double_free, e.free_not_chunk, e.free_outside, e.free_unaligned, clheap_status_string(st),
           what[0] ? ", " : "", what);
}

/* One variant of a shape: its timed kernel, the untimed check after it (verifies, or
 * stamps every word, and frees, or not), a second untimed check (NULL, or check_words:
 * verifies the stamps and frees), and what its runs measured. */
typedef struct resize_variant {
    const char *name;
    cl_kernel timed, check, verify;
    double t[16];
    cl_uint counts[3]; /* NULLs, wrong words or misaligned addresses, allocations over twice the size */
    uint32_t bad_frees, bad_runs; /* counted by the heap after this variant's runs, and in how many */
} resize_variant;

/* The variants of one shape, their runs interleaved (a warm-up, then env->runs timed runs
 * of each, in turn, the order reversed every other run), so that neither inherits a heap
 * state the other never sees: in a fixed order a state that alternates run by run would
 * meet one variant always and the other never. Each run is `prepare` (untimed, may be
 * NULL), the timed kernel, then the check; with --cold (env->cold) a heap reset first, so
 * that every run of every variant meets the same fresh heap. One row each. */
static void resize_rows(resize_env *r, const char *test, size_t items, cl_uint bytes, cl_kernel prepare,
                        resize_variant *v, int n)
{
    cl_int err = CL_SUCCESS;
    uint32_t bad_before = resize_bad_frees(r);
    for (int run = 0; run <= r->env->runs && err == CL_SUCCESS; run++) {
        for (int j = 0; j < n && err == CL_SUCCESS; j++) {
            int i = run % 2 ? n - 1 - j : j;
            cl_uint got[3] = {0, 0, 0};
            err = clEnqueueWriteBuffer(r->env->queue, r->counts, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            if (err == CL_SUCCESS && r->env->cold) {
                if (clheap_heap_reset(r->heap) != CLHEAP_SUCCESS)
                    err = CL_INVALID_OPERATION;
                bad_before = resize_bad_frees(r); /* a reset may clear the counters */
            }
            if (err == CL_SUCCESS && prepare)
                err = resize_launch(r, prepare, items, NULL);
            if (err == CL_SUCCESS)
                err = resize_launch(r, v[i].timed, items, &v[i].t[run]);
            if (err == CL_SUCCESS)
                err = resize_launch(r, v[i].check, items, NULL);
            if (err == CL_SUCCESS && v[i].verify)
                err = resize_launch(r, v[i].verify, items, NULL);
            if (err == CL_SUCCESS)
                err = clEnqueueReadBuffer(r->env->queue, r->counts, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            v[i].counts[0] += got[0];
            v[i].counts[1] += got[1];
            v[i].counts[2] += got[2];
            uint32_t bad_now = resize_bad_frees(r);
            v[i].bad_frees += bad_now - bad_before;
            v[i].bad_runs += bad_now != bad_before;
            bad_before = bad_now;
        }
    }
    const char *name = clheap_allocator_name(r->allocator);
    int explain = 0;
    for (int i = 0; i < n; i++) {
        if (err != CL_SUCCESS || v[i].counts[1] || v[i].bad_frees) {
            printf("  %-10s %-13s %-8s %9zu %6u   FAILED: ", name, test, v[i].name, items, bytes);
            if (err != CL_SUCCESS)
                printf("OpenCL error\n");
            else
                printf("%u wrong words or misaligned addresses, %u bad frees in %u of %d runs\n", v[i].counts[1],
                       v[i].bad_frees, v[i].bad_runs, r->env->runs + 1);
            explain |= v[i].bad_frees != 0;
            r->failures++;
            continue;
        }
        double lo, hi;
        bench_min_max(v[i].t + 1, r->env->runs, &lo, &hi);
        double median = bench_median(v[i].t + 1, r->env->runs);
        printf("  %-10s %-13s %-8s %9zu %6u %10.3f %12.3e %8u", name, test, v[i].name, items, bytes, median * 1e3,
               (double)items / median, v[i].counts[0]);
        if (v[i].counts[2]) /* aligned_alloc's frames way, or a larger class's slot */
            printf("   %u over twice the size", v[i].counts[2]);
        printf("\n");
        if (r->csv)
            fprintf(r->csv, "%s,%s,%s,%zu,%u,%.9f,%.9f,%.9f,%u,%u,%d\n", name, test, v[i].name, items, bytes, median,
                    lo, hi, v[i].counts[0], v[i].counts[1], r->env->runs);
    }
    if (explain)
        resize_explain_bad_frees(r);
}

/* The two variants of one shape: the API's and by hand, interleaved. */
static void resize_pair(resize_env *r, const char *test, size_t items, cl_uint bytes, cl_kernel prepare,
                        cl_kernel api, const char *api_name, cl_kernel by_hand, const char *hand_name,
                        cl_kernel check, cl_kernel verify)
{
    resize_variant v[2] = {{api_name, api, check, verify, {0}, {0, 0, 0}, 0, 0},
                           {hand_name, by_hand, check, verify, {0}, {0, 0, 0}, 0, 0}};
    resize_rows(r, test, items, bytes, prepare, v, 2);
}

static void resize_allocator(resize_env *r, const size_t *items, int n_items)
{
    /* The bump allocators keep no sizes and never give memory back: no resizing, and one
     * pass of the others. */
    int resizes = r->allocator != CLHEAP_ATOMIC_MALLOC && r->allocator != CLHEAP_ATOMIC_WRAP_MALLOC;
    cl_kernel k[12] = {0};
    for (int i = 0; i < n_items; i++) {
        size_t n = items[i];
        if (resizes) {
            k[0] = resize_kernel(r, "push_realloc", 1, 4096, 0);
            k[1] = resize_kernel(r, "push_by_hand", 1, 4096, 0);
            k[2] = resize_kernel(r, "check_words", 1, 4096, 0);
            resize_pair(r, "push", n, 4096, NULL, k[0], "realloc", k[1], "by-hand", k[2], NULL);
            const cl_uint grows[][2] = {{100, 128}, {1000, 2000}};
            for (int g = 0; g < 2; g++) {
                k[3] = resize_kernel(r, "grow_prepare", 1, grows[g][0], 0);
                k[4] = resize_kernel(r, "grow_realloc", 2, grows[g][0], grows[g][1]);
                k[5] = resize_kernel(r, "grow_by_hand", 2, grows[g][0], grows[g][1]);
                k[6] = resize_kernel(r, "check_words", 1, grows[g][1], 0);
                resize_pair(r, g ? "grow-moves" : "grow-in-place", n, grows[g][1], k[3], k[4], "realloc", k[5],
                            "by-hand", k[6], NULL);
                for (int j = 3; j <= 6; j++)
                    clReleaseKernel(k[j]);
            }
            for (int j = 0; j <= 2; j++)
                clReleaseKernel(k[j]);
        }
        if (!resizes && i > 0)
            continue;
        const cl_uint zero_bytes[] = {64, 4096}, aligns[] = {16, 256, 4096};
        for (int z = 0; z < 2; z++) {
            k[7] = resize_kernel(r, "zero_calloc", 1, zero_bytes[z], 0);
            k[8] = resize_kernel(r, "zero_by_hand", 1, zero_bytes[z], 0);
            k[9] = resize_kernel(r, "check_zero", 1, zero_bytes[z], 0);
            cl_kernel verify = resize_kernel(r, "check_words", 1, zero_bytes[z], 0);
            resize_pair(r, "calloc", n, zero_bytes[z], NULL, k[7], "calloc", k[8], "by-hand", k[9], verify);
            for (int j = 7; j <= 9; j++)
                clReleaseKernel(k[j]);
            clReleaseKernel(verify);
        }
        for (int a = 0; a < 3; a++) {
            k[10] = resize_kernel(r, "aligned_k", 1, aligns[a], 0);
            k[11] = resize_kernel(r, "malloc_k", 1, aligns[a], 0);
            cl_kernel check = resize_kernel(r, "check_aligned", 2, aligns[a], aligns[a]);
            cl_kernel check_plain = resize_kernel(r, "check_aligned", 2, aligns[a], 16);
            cl_kernel verify = resize_kernel(r, "check_words", 1, aligns[a], 0);
            resize_variant v[2] = {{"aligned", k[10], check, verify, {0}, {0, 0, 0}, 0, 0},
                                   {"malloc", k[11], check_plain, verify, {0}, {0, 0, 0}, 0, 0}};
            resize_rows(r, "aligned", n, aligns[a], NULL, v, 2);
            clReleaseKernel(k[10]);
            clReleaseKernel(k[11]);
            clReleaseKernel(check);
            clReleaseKernel(check_plain);
            clReleaseKernel(verify);
        }
    }
}

int bench_resize(bench_env *env)
{
    static const size_t full[] = {1u << 16, 1u << 18, 1u << 20}, quick[] = {1u << 12};
    const size_t *items = env->quick ? quick : full;
    int n_items = env->quick ? 1 : 3;
    uint64_t heap_bytes = env->heap_bytes ? env->heap_bytes : env->quick ? 64ull << 20 : 8ull << 30;
    resize_env r = {env, CLHEAP_TIER_ALLOC, NULL, NULL, NULL, NULL, NULL, 0};
    r.csv = bench_csv_open(env, "realloc", RESIZE_COLUMNS);
    printf("realloc: the rest of C's API against doing it by hand (%llu MiB heap, median of %d runs%s)\n",
           (unsigned long long)(heap_bytes >> 20), env->runs, env->cold ? ", each on a fresh heap" : "");
    printf("  %-10s %-13s %-8s %9s %6s %10s %12s %8s\n", "allocator", "test", "variant", "items", "bytes", "ms",
           "per second", "NULLs");
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        /* By default the allocators realloc is for; --only names others. */
        int wanted = env->only ? bench_wants(env, (clheap_allocator)a)
                               : a == CLHEAP_TIER_ALLOC || a == CLHEAP_BLOCK_ALLOC;
        if (!wanted)
            continue;
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = heap_bytes;
        config.slot_bytes = 4096; /* BitmapAlloc: the largest request */
        r.allocator = (clheap_allocator)a;
        if (bench_heap_make(env, &config, 1, &resize_source, &r.heap, &r.program)) {
            r.failures++;
            continue;
        }
        cl_int err;
        size_t most = items[n_items - 1];
        r.units = clCreateBuffer(env->context, CL_MEM_READ_WRITE, most * sizeof(cl_uint), NULL, &err);
        r.counts = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 3 * sizeof(cl_uint), NULL, &err);
        if (r.units && r.counts)
            resize_allocator(&r, items, n_items);
        else
            r.failures++;
        clReleaseMemObject(r.units);
        clReleaseMemObject(r.counts);
        clReleaseProgram(r.program);
        clheap_heap_destroy(r.heap);
    }
    if (r.csv)
        fclose(r.csv);
    return r.failures != 0;
}
