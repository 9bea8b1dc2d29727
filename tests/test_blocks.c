/* BlockAlloc (DynaSOAr-style blocks): what the generic heap tests do not cover. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "../cl/clheap_layout.h"

static const char *kernels =
    "__kernel void fill(__global clheap_heap *heap, __global uint *units, uint per_item, uint bytes) {\n"
    "    uint id = get_global_id(0), k = 0;\n"
    "    for (; k < per_item; k++) {\n"
    "        uint u = clheap_malloc_unit(heap, bytes);\n"
    "        units[id * per_item + k] = u;\n"
    "        if (!u) break;\n"
    "    }\n"
    "    for (k++; k < per_item; k++) units[id * per_item + k] = 0u;\n"
    "}\n"
    "__kernel void free_units(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint u = units[get_global_id(0)];\n"
    "    if (u) clheap_free_unit(heap, u);\n"
    "}\n"
    "__kernel void make_objects(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, p);\n"
    "    if (p) { p[0] = 0u; p[1] = 1u; }  /* visits, generation */\n"
    "}\n"
    "__kernel void visit(__global clheap_heap *heap, __global const uint *blocks, uint count,\n"
    "                    uint cls, uint bytes, __global uint *spawned) {\n"
    "    __global uint *obj = clheap_parallel_do_object(heap, blocks, count, cls, get_global_id(0));\n"
    "    if (!obj) return;\n"
    "    atomic_inc(&obj[0]);\n"
    "    __global uint *child = clheap_malloc(heap, bytes);  /* created during the launch */\n"
    "    if (child) { child[0] = 0u; child[1] = 2u; atomic_inc(spawned); }\n"
    "}\n"
    "__kernel void census(__global clheap_heap *heap, uint cls, __global uint *out) {\n"
    "    if (get_global_id(0) != 0) return;\n"
    "    uint cursor = 0, u, n = 0, originals = 0, once = 0, children_visited = 0;\n"
    "    while ((u = clheap_device_do_next(heap, cls, &cursor))) {\n"
    "        __global uint *o = clheap_pointer(heap, u);\n"
    "        n++;\n"
    "        if (o[1] == 1u) { originals++; once += o[0] == 1u; }\n"
    "        else children_visited += o[0] != 0u;\n"
    "    }\n"
    "    out[0] = n; out[1] = originals; out[2] = once; out[3] = children_visited;\n"
    "}\n"
    "__kernel void group_alloc(__global clheap_heap *heap, __global uint *units, uint bytes) {\n"
    "    __local uint scratch[CLHEAP_GROUP_SCRATCH_WORDS];\n"
    "    uint id = get_global_id(0);\n"
    "    int want = id % 3u != 0u;\n"
    "    uint mine = id % 5u == 0u ? bytes * 2u : bytes;  /* some ask for another class */\n"
    "    __global uint *p = clheap_malloc_group(heap, mine, want, scratch);\n"
    "    units[id] = clheap_unit_of(heap, p);\n"
    "    if (p) for (uint i = 0; i < mine / 4u; i++) p[i] = id + 1u;\n"
    "}\n"
    "__kernel void group_verify(__global clheap_heap *heap, __global const uint *units, uint bytes,\n"
    "                           __global uint *bad) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (!units[id]) return;\n"
    "    __global uint *p = clheap_pointer(heap, units[id]);\n"
    "    uint mine = id % 5u == 0u ? bytes * 2u : bytes;\n"
    "    for (uint i = 0; i < mine / 4u; i++) if (p[i] != id + 1u) { atomic_inc(bad); return; }\n"
    "}\n"
    "/* A 16-byte object stored field by field: float x, uint y, ulong z. */\n"
    "__kernel void soa_write(__global clheap_heap *heap, __global uint *units, uint capacity) {\n"
    "    uint id = get_global_id(0);\n"
    "    __global void *obj = clheap_malloc(heap, 16);\n"
    "    units[id] = clheap_unit_of(heap, obj);\n"
    "    if (!obj) return;\n"
    "    __global void *base = clheap_block_base(heap, obj);\n"
    "    uint s = clheap_slot_index(heap, obj);\n"
    "    *CLHEAP_SOA_FIELD(float, base, capacity, 0, s) = (float)id;\n"
    "    *CLHEAP_SOA_FIELD(uint, base, capacity, 4, s) = id * 3u;\n"
    "    *CLHEAP_SOA_FIELD(ulong, base, capacity, 8, s) = (ulong)id << 33;\n"
    "}\n"
    "__kernel void soa_check(__global clheap_heap *heap, __global const uint *units, uint capacity,\n"
    "                        __global uint *bad) {\n"
    "    uint id = get_global_id(0);\n"
    "    if (!units[id]) return;\n"
    "    __global void *obj = clheap_pointer(heap, units[id]);\n"
    "    __global void *base = clheap_block_base(heap, obj);\n"
    "    uint s = clheap_slot_index(heap, obj);\n"
    "    if (s >= capacity || *CLHEAP_SOA_FIELD(float, base, capacity, 0, s) != (float)id ||\n"
    "        *CLHEAP_SOA_FIELD(uint, base, capacity, 4, s) != id * 3u ||\n"
    "        *CLHEAP_SOA_FIELD(ulong, base, capacity, 8, s) != (ulong)id << 33) atomic_inc(bad);\n"
    "}\n";

typedef struct blocks_test {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
} blocks_test;

enum { HEAP_BYTES = 8 << 20, LOCAL = 64 };

static void assert_heap_ok(blocks_test *t)
{
    assert_heap_sound(t->heap, NULL);
}

static cl_kernel kernel(blocks_test *t, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(t->program, name, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(t->heap, k, 0), CLHEAP_SUCCESS);
    return k;
}

static void arg(cl_kernel k, cl_uint index, size_t size, const void *value)
{
    assert_int_equal(clSetKernelArg(k, index, size, value), CL_SUCCESS);
}

/* The kernels have no bounds checks: item counts are whole work-groups. */
static void run(blocks_test *t, cl_kernel k, size_t items)
{
    size_t global = items < LOCAL ? LOCAL : items, local = LOCAL;
    assert_true(items < LOCAL ? items == 1 : items % LOCAL == 0);
    assert_int_equal(clEnqueueNDRangeKernel(t->cl.queue, k, 1, NULL, &global, &local, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS);
    assert_heap_ok(t);
}

static cl_mem buffer(blocks_test *t, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_uint zero = 0;
    assert_int_equal(clEnqueueFillBuffer(t->cl.queue, b, &zero, sizeof zero, 0, bytes, 0, NULL, NULL),
                     CL_SUCCESS);
    return b;
}

static void read(blocks_test *t, cl_mem b, void *dst, size_t bytes)
{
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, b, CL_TRUE, 0, bytes, dst, 0, NULL, NULL), CL_SUCCESS);
}

static clheap_heap_stats stats_of(blocks_test *t)
{
    clheap_heap_stats s;
    assert_int_equal(clheap_heap_calculate_stats(t->heap, &s), CLHEAP_SUCCESS);
    return s;
}

static uint32_t class_of(const clheap_heap_stats *s, uint32_t bytes)
{
    for (uint32_t c = 0; c < s->class_count; c++)
        if (s->class_bytes[c] >= bytes)
            return c;
    fail_msg("no class holds %u bytes", bytes);
    return 0;
}

static int setup(void **state)
{
    blocks_test *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_BLOCK_ALLOC;
    config.size_bytes = HEAP_BYTES;
    if (clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &t->heap) != CLHEAP_SUCCESS)
        return -1;
    static char log[16384];
    if (clheap_heap_build_program(t->heap, 1, &kernels, NULL, &t->program, log, sizeof log) !=
        CLHEAP_SUCCESS) {
        fprintf(stderr, "%s\n", log);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    blocks_test *t = *state;
    clReleaseProgram(t->program);
    int ok = clheap_heap_destroy(t->heap) == CLHEAP_SUCCESS;
    cl_fixture_close(&t->cl);
    free(t);
    return ok ? 0 : -1;
}

static size_t fill_with(blocks_test *t, cl_mem units, size_t items, cl_uint per_item, cl_uint bytes)
{
    cl_kernel k = kernel(t, "fill");
    arg(k, 1, sizeof units, &units);
    arg(k, 2, sizeof per_item, &per_item);
    arg(k, 3, sizeof bytes, &bytes);
    run(t, k, items);
    clReleaseKernel(k);
    uint32_t *u = malloc(items * per_item * sizeof *u);
    read(t, units, u, items * per_item * sizeof *u);
    size_t n = 0;
    for (size_t i = 0; i < items * per_item; i++)
        n += u[i] != 0;
    free(u);
    return n;
}

static void free_all(blocks_test *t, cl_mem units, size_t count)
{
    cl_kernel k = kernel(t, "free_units");
    arg(k, 1, sizeof units, &units);
    run(t, k, count);
    clReleaseKernel(k);
}

static void blocks_are_reused_across_size_classes(void **state)
{
    blocks_test *t = *state;
    const size_t items = 8192;
    const cl_uint per_item = 64; /* 524288 x 16 B: more than the 8 MiB heap holds */
    cl_mem units = buffer(t, items * per_item * sizeof(cl_uint));
    clheap_heap_stats s = stats_of(t);
    uint32_t small = class_of(&s, 16), large = class_of(&s, 4096);
    uint64_t frames = s.free_chunks;
    /* 16-byte objects until NULL: every frame becomes a block of the small class. */
    size_t n_small = fill_with(t, units, items, per_item, 16);
    s = stats_of(t);
    print_message("16 B: %zu objects in %llu blocks; %llu of %llu frames free\n", n_small,
                  (unsigned long long)s.class_blocks[small], (unsigned long long)s.free_chunks,
                  (unsigned long long)frames);
    assert_int_equal(s.class_objects[small], n_small);
    assert_int_equal(s.free_chunks, 0);
    free_all(t, units, items * per_item);
    s = stats_of(t);
    /* Empty blocks were invalidated and their frames returned. */
    for (uint32_t c = 0; c < s.class_count; c++)
        assert_int_equal(s.class_blocks[c], 0);
    assert_int_equal(s.free_chunks, frames);
    /* The same frames now serve 4 KiB objects. */
    size_t n_large = fill_with(t, units, items, 8, 4096);
    s = stats_of(t);
    print_message("4 KiB: %zu objects in %llu blocks; %llu frames free\n", n_large,
                  (unsigned long long)s.class_blocks[large], (unsigned long long)s.free_chunks);
    assert_int_equal(s.class_objects[large], n_large);
    assert_true(s.class_blocks[large] > 0);
    assert_true(s.free_chunks < 64); /* less than one block of the large class is left */
    free_all(t, units, items * 8);
    /* Blocks of 16 frames (256 B class) pack containers without gaps: runs start at
     * multiples of 16, so filling leaves less than one block's frames unused. */
    size_t n_mid = fill_with(t, units, items, 8, 256);
    s = stats_of(t);
    uint32_t mid = class_of(&s, 256);
    print_message("256 B: %zu objects in %llu blocks; %llu frames free\n", n_mid,
                  (unsigned long long)s.class_blocks[mid], (unsigned long long)s.free_chunks);
    assert_int_equal(s.class_objects[mid], n_mid);
    assert_true(s.free_chunks < 16);
    /* The host's hierarchical walk lists exactly the allocated blocks, each once. */
    size_t listed = 0;
    assert_int_equal(clheap_heap_indices(t->heap, mid, NULL, 0, &listed), CLHEAP_SUCCESS);
    assert_int_equal(listed, s.class_blocks[mid]);
    uint32_t *frames_listed = malloc(listed * sizeof *frames_listed);
    assert_int_equal(clheap_heap_indices(t->heap, mid, frames_listed, listed, &listed), CLHEAP_SUCCESS);
    for (size_t i = 0; i < listed; i++) {
        assert_int_equal(frames_listed[i] % 16, 0); /* 16-frame blocks start aligned */
        if (i)
            assert_true(frames_listed[i] > frames_listed[i - 1]);
    }
    free(frames_listed);
    free_all(t, units, items * 8);
    clReleaseMemObject(units);
}

static void parallel_do_visits_each_live_object_once(void **state)
{
    blocks_test *t = *state;
    const size_t n = 3072;
    const cl_uint bytes = 32;
    clheap_heap_stats s = stats_of(t);
    cl_uint cls = class_of(&s, bytes);
    cl_mem units = buffer(t, n * sizeof(cl_uint));
    cl_kernel make = kernel(t, "make_objects");
    arg(make, 1, sizeof units, &units);
    arg(make, 2, sizeof bytes, &bytes);
    run(t, make, n);
    clReleaseKernel(make);
    /* Free every third object, so blocks have holes the iteration must skip. */
    uint32_t *u = malloc(n * sizeof *u);
    read(t, units, u, n * sizeof *u);
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_not_equal(u[i], 0);
        if (i % 3 == 0)
            u[i] = 0;
        else
            live++;
    }
    cl_mem doomed = buffer(t, n * sizeof(cl_uint));
    uint32_t *d = calloc(n, sizeof *d);
    read(t, units, d, n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = i % 3 == 0 ? d[i] : 0;
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, doomed, CL_TRUE, 0, n * sizeof *d, d, 0, NULL, NULL),
                     CL_SUCCESS);
    free_all(t, doomed, n);
    cl_mem spawned = buffer(t, sizeof(cl_uint));
    cl_kernel visit = kernel(t, "visit");
    arg(visit, 3, sizeof cls, &cls);
    arg(visit, 4, sizeof bytes, &bytes);
    arg(visit, 5, sizeof spawned, &spawned);
    assert_int_equal(clheap_heap_parallel_do(t->heap, cls, visit, 1, 0), CLHEAP_SUCCESS);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS);
    assert_heap_ok(t);
    cl_uint children = 0;
    read(t, spawned, &children, sizeof children);

    cl_mem out = buffer(t, 4 * sizeof(cl_uint));
    cl_kernel census = kernel(t, "census");
    arg(census, 1, sizeof cls, &cls);
    arg(census, 2, sizeof out, &out);
    run(t, census, 1);
    cl_uint c[4];
    read(t, out, c, sizeof c);
    print_message("parallel_do: %zu live objects, %u visited once, %u created during the launch\n", live,
                  c[2], children);
    assert_int_equal(children, live);      /* one visit each, each made a child */
    assert_int_equal(c[1], live);          /* device_do sees every original... */
    assert_int_equal(c[2], live);          /* ...each visited exactly once */
    assert_int_equal(c[0], live + children); /* and every child */
    assert_int_equal(c[3], 0);             /* no child was visited */
    s = stats_of(t);
    assert_int_equal(s.class_objects[cls], live + children);
    clReleaseKernel(visit);
    clReleaseKernel(census);
    clReleaseMemObject(out);
    clReleaseMemObject(spawned);
    clReleaseMemObject(doomed);
    clReleaseMemObject(units);
    free(u);
    free(d);
}

static void group_requests_are_coalesced_and_disjoint(void **state)
{
    blocks_test *t = *state;
    const size_t n = 4096;
    const cl_uint bytes = 48;
    cl_mem units = buffer(t, n * sizeof(cl_uint));
    cl_kernel k = kernel(t, "group_alloc");
    arg(k, 1, sizeof units, &units);
    arg(k, 2, sizeof bytes, &bytes);
    run(t, k, n);
    uint32_t *u = malloc(n * sizeof *u);
    read(t, units, u, n * sizeof *u);
    size_t granted = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 3 == 0)
            assert_int_equal(u[i], 0); /* did not ask */
        else
            granted += u[i] != 0;
    }
    assert_int_equal(granted, n - (n + 2) / 3);
    cl_mem bad = buffer(t, sizeof(cl_uint));
    cl_kernel v = kernel(t, "group_verify");
    arg(v, 1, sizeof units, &units);
    arg(v, 2, sizeof bytes, &bytes);
    arg(v, 3, sizeof bad, &bad);
    run(t, v, n);
    cl_uint wrong = 1;
    read(t, bad, &wrong, sizeof wrong);
    assert_int_equal(wrong, 0);
    clheap_heap_stats s = stats_of(t);
    /* Coalesced per work-group: the 48 B requests of a 64-item group (about 34) take one
     * block; the 96 B requests (every fifth item) are served one by one. */
    uint32_t cls = class_of(&s, bytes), other = class_of(&s, 2 * bytes);
    assert_int_equal(s.class_objects[cls] + s.class_objects[other], granted);
    assert_true(s.class_objects[other] > 0);
    assert_true(s.class_blocks[cls] <= n / LOCAL + 1);
    free_all(t, units, n);
    clReleaseKernel(k);
    clReleaseKernel(v);
    clReleaseMemObject(bad);
    clReleaseMemObject(units);
    free(u);
}

static void soa_fields_round_trip(void **state)
{
    blocks_test *t = *state;
    const size_t n = 1024;
    clheap_heap_stats s = stats_of(t);
    cl_uint capacity = s.class_capacity[class_of(&s, 16)];
    cl_mem units = buffer(t, n * sizeof(cl_uint));
    cl_kernel w = kernel(t, "soa_write");
    arg(w, 1, sizeof units, &units);
    arg(w, 2, sizeof capacity, &capacity);
    run(t, w, n);
    cl_mem bad = buffer(t, sizeof(cl_uint));
    cl_kernel c = kernel(t, "soa_check");
    arg(c, 1, sizeof units, &units);
    arg(c, 2, sizeof capacity, &capacity);
    arg(c, 3, sizeof bad, &bad);
    run(t, c, n);
    cl_uint wrong = 1;
    read(t, bad, &wrong, sizeof wrong);
    assert_int_equal(wrong, 0);
    free_all(t, units, n);
    clReleaseKernel(w);
    clReleaseKernel(c);
    clReleaseMemObject(bad);
    clReleaseMemObject(units);
}

/* After concurrent kernels the bitmaps satisfy the strict invariant (the checks above);
 * stale hints may remain, and the repair pass removes every one of them. */
static void repair_makes_every_level_agree(void **state)
{
    blocks_test *t = *state;
    const size_t items = 2048;
    cl_mem units = buffer(t, items * 4 * sizeof(cl_uint));
    for (int round = 0; round < 3; round++) {
        fill_with(t, units, items, 4, 16u << round);
        free_all(t, units, items * 4);
    }
    /* Plant a legal stale hint, as a setter whose OR lands after a clearer's re-read
     * leaves one: the top bit of the class-0 active bitmap over an empty container. */
    uint32_t header[CLHEAP_HDR_BITMAP_WORDS];
    cl_mem heap_buffer = clheap_heap_buffer(t->heap);
    read(t, heap_buffer, header, sizeof header);
    const uint32_t *d = header + CLHEAP_BM_ACTIVE(0);
    assert_true(d[CLHEAP_BM_LEVELS] >= 2);
    size_t top = (size_t)d[CLHEAP_BM_UNIT] * 16 + (size_t)d[CLHEAP_BM_LEVEL0 + d[CLHEAP_BM_LEVELS] - 1] * 8;
    uint64_t top_value;
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, heap_buffer, CL_TRUE, top, 8, &top_value, 0, NULL, NULL),
                     CL_SUCCESS);
    uint64_t below = d[CLHEAP_BM_BITS]; /* containers on the level under the top */
    for (uint32_t l = 0; l + 1 < d[CLHEAP_BM_LEVELS]; l++)
        below = (below + 63) / 64;
    uint64_t planted = top_value | (1ull << (below - 1)); /* over the last container below */
    assert_int_not_equal(planted, top_value);
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, heap_buffer, CL_TRUE, top, 8, &planted, 0, NULL, NULL),
                     CL_SUCCESS);
    assert_heap_ok(t); /* allowed: a hint, not a violation */
    clheap_heap_stats before = stats_of(t);
    assert_true(before.stale_hints >= 1);
    uint64_t repaired = 0;
    assert_int_equal(clheap_heap_repair(t->heap, &repaired), CLHEAP_SUCCESS);
    clheap_heap_stats after = stats_of(t);
    print_message("stale hints after 3 rounds: %llu (repair changed %llu bits), after repair: %llu\n",
                  (unsigned long long)before.stale_hints, (unsigned long long)repaired,
                  (unsigned long long)after.stale_hints);
    assert_true(repaired >= before.stale_hints);
    assert_int_equal(after.stale_hints, 0);
    assert_heap_ok(t);
    /* The repaired heap still allocates everything. */
    size_t n = fill_with(t, units, items, 4, 64);
    assert_int_equal(n, items * 4);
    free_all(t, units, items * 4);
    clReleaseMemObject(units);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(blocks_are_reused_across_size_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(parallel_do_visits_each_live_object_once, setup, teardown),
        cmocka_unit_test_setup_teardown(group_requests_are_coalesced_and_disjoint, setup, teardown),
        cmocka_unit_test_setup_teardown(soa_fields_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(repair_makes_every_level_agree, setup, teardown),
    };
    return cmocka_run_group_tests_name("blocks", tests, NULL, NULL);
}
