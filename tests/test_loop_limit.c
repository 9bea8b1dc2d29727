/* Devices that end loops early (clheap_device_loop_limit: Mesa's llvmpipe gives a work-item
 * 65535 loop iterations a launch, all its loops together, then ends each loop after one
 * iteration). There a clheap_malloc or clheap_free that finds its work-item's iterations
 * spent does nothing: malloc returns NULL, both count contended, and the heap keeps every
 * allocation it had. A work-item with iterations left is served as usual. Iterations that
 * run out inside a call leave the circular family's, BitmapAlloc's and the bump
 * allocators' heaps sound (not BlockAlloc's or TierAlloc's). FreeHeap is refused there.
 * On a device whose loops run whole (PoCL) the probe must say 0, and the same kernels
 * show that the build with the check (-DCLHEAP_LOOP_LIMIT, forced) serves every request.
 * Usage: test_loop_limit [allocator name...] (default: the device's default; not FreeHeap,
 * whose kernels' requests are serial and refused when they meet). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

enum { HEAP_BYTES = 16 << 20, ITEMS = 64, PROBE_LIMIT = 1 << 17 };

/* `spend` loop iterations (a volatile load each: no compiler folds them), then one
 * malloc and the free of `held` (an allocation an earlier launch made), then one more
 * iteration-counting loop of 2 or 3 (spend % 2 + 2, so that no compiler unrolls it):
 * out[4 i] the iterations the first loop ran, out[4 i + 1] the malloc's unit,
 * out[4 i + 2] the second loop's count (all of them: iterations were left). */
static const char *kernels =
    "__kernel void take(__global clheap_heap *heap, __global uint *units) {\n"
    "    units[get_global_id(0)] = clheap_unit_of(heap, clheap_malloc(heap, 16));\n"
    "}\n"
    "__kernel void spend_then_call(__global clheap_heap *heap, __global uint *out, uint spend,\n"
    "                              __global const uint *held) {\n"
    "    uint i = get_global_id(0), ran = 0, after = 0;\n"
    "    for (uint k = 0; k < spend; k++) {\n"
    "        if (((volatile __global uint *)out)[4u * i + 3u] == 0xFFFFFFFFu) break;\n"
    "        ran++;\n"
    "    }\n"
    "    out[4u * i] = ran;\n"
    "    __global uint *p = clheap_malloc(heap, 16);\n"
    "    out[4u * i + 1u] = clheap_unit_of(heap, p);\n"
    "    if (p) p[0] = i;\n"
    "    clheap_free(heap, clheap_pointer(heap, held[i]));\n"
    "    for (uint k = 0; k < spend % 2u + 2u; k++) {\n"
    "        if (((volatile __global uint *)out)[4u * i + 3u] == 0xFFFFFFFFu) break;\n"
    "        after++;\n"
    "    }\n"
    "    out[4u * i + 2u] = after;\n"
    "}\n"
    "/* Each SIMD vector of llvmpipe (8 work-items) spends all but 2 - 601 of its iterations,\n"
    " * a different number each, so that they run out at every point inside the malloc. */\n"
    "__kernel void cut_inside(__global clheap_heap *heap, __global uint *units, uint limit, uint seed) {\n"
    "    uint i = get_global_id(0), spend = limit - 2u - (i / 8u * 37u + seed) % 600u;\n"
    "    for (uint k = 0; k < spend; k++)\n"
    "        if (((volatile __global uint *)units)[i] == 0xFFFFFFFFu) break;\n"
    "    __global uint *p = clheap_malloc(heap, 16u << (i + seed) % 8u);\n"
    "    units[i] = clheap_unit_of(heap, p);\n"
    "    if (p) p[0] = i + 1u;\n"
    "}\n"
    "/* Verifies each allocation's stamp, then frees it, its iterations cut as cut_inside's\n"
    " * where limit is not 0. */\n"
    "__kernel void stamps_and_free(__global clheap_heap *heap, __global const uint *units, uint limit,\n"
    "                              uint seed, __global uint *wrong) {\n"
    "    uint i = get_global_id(0), spend = limit ? limit - 2u - (i / 8u * 41u + seed) % 600u : 0u;\n"
    "    __global uint *p = clheap_pointer(heap, units[i]);\n"
    "    if (p && p[0] != i + 1u) atomic_inc(wrong);\n"
    "    for (uint k = 0; k < spend; k++)\n"
    "        if (((volatile __global uint *)units)[i] == 0xFFFFFFFFu) break;\n"
    "    clheap_free(heap, p);\n"
    "}\n"
    "/* Each work-item's 4 KiB allocation, every unit stamped (limit unused). */\n"
    "__kernel void stamp_4k(__global clheap_heap *heap, __global uint *units, uint limit, uint seed) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint4 *p = (__global uint4 *)clheap_malloc(heap, 4096u);\n"
    "    units[i] = clheap_unit_of(heap, p);\n"
    "    for (uint w = 0; p && w < 256u; w++) p[w] = (uint4)(i, w, seed, 7u);\n"
    "}\n"
    "/* Each SIMD vector keeps 2 - 401 of its iterations for a realloc to 8 KiB, so that they\n"
    " * run out before it, in its malloc, or (most) in its copy of 256 units; a NULL leaves\n"
    " * units[i] as it was. The new allocations of cut copies stay allocated, so the heap\n"
    " * fills and stamp_4k may get NULL in later rounds. */\n"
    "__kernel void realloc_cut(__global clheap_heap *heap, __global uint *units, uint limit, uint seed) {\n"
    "    uint i = get_global_id(0), spend = limit - 2u - (i / 8u * 37u + seed) % 400u;\n"
    "    for (uint k = 0; k < spend; k++)\n"
    "        if (((volatile __global uint *)units)[i] == 0xFFFFFFFFu) break;\n"
    "    __global void *q = units[i] ? clheap_realloc(heap, clheap_pointer(heap, units[i]), 8192u) : 0;\n"
    "    if (q) units[i] = clheap_unit_of(heap, q);\n"
    "}\n"
    "/* The stamp's units wherever the allocation now lies, then its free (limit unused). */\n"
    "__kernel void check_4k(__global clheap_heap *heap, __global uint *units, uint limit, uint seed,\n"
    "                       __global uint *wrong) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint4 *p = (__global uint4 *)clheap_pointer(heap, units[i]);\n"
    "    for (uint w = 0; p && w < 256u; w++)\n"
    "        if (any(p[w] != (uint4)(i, w, seed, 7u))) atomic_inc(wrong);\n"
    "    clheap_free(heap, p);\n"
    "}\n"
    "/* The same cut for a calloc of 4 KiB, on memory check_4k freed with its stamps. */\n"
    "__kernel void calloc_cut(__global clheap_heap *heap, __global uint *units, uint limit, uint seed) {\n"
    "    uint i = get_global_id(0), spend = limit - 2u - (i / 8u * 37u + seed) % 400u;\n"
    "    for (uint k = 0; k < spend; k++)\n"
    "        if (((volatile __global uint *)units)[i] == 0xFFFFFFFFu) break;\n"
    "    units[i] = clheap_unit_of(heap, clheap_calloc(heap, 256u, 16u));\n"
    "}\n"
    "__kernel void check_zero(__global clheap_heap *heap, __global uint *units, uint limit, uint seed,\n"
    "                         __global uint *wrong) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint4 *p = (__global uint4 *)clheap_pointer(heap, units[i]);\n"
    "    for (uint w = 0; p && w < 256u; w++)\n"
    "        if (any(p[w] != (uint4)(0u))) atomic_inc(wrong);\n"
    "    clheap_free(heap, p);\n"
    "}\n";

typedef struct loop_test {
    cl_fixture cl;
    clheap_allocator allocator;
} loop_test;

static cl_mem buffer(const cl_fixture *f, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(f->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    return b;
}

static void launch(const cl_fixture *f, cl_kernel k)
{
    size_t global = ITEMS;
    assert_int_equal(clEnqueueNDRangeKernel(f->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(f->queue), CL_SUCCESS);
}

static uint32_t contended(clheap_heap *heap)
{
    clheap_heap_errors e;
    clheap_status s = clheap_heap_read_errors(heap, &e);
    assert_true(s == CLHEAP_SUCCESS || s == CLHEAP_ERROR_DEVICE_CONTENDED);
    return e.contended;
}

/* Live allocations the heap's walk finds. */
static uint64_t live(clheap_heap *heap)
{
    clheap_heap_stats s;
    assert_int_equal(clheap_heap_calculate_stats(heap, &s), CLHEAP_SUCCESS);
    return s.live_bytes;
}

/* What a launch of spend_then_call saw. */
typedef struct spent {
    int served;              /* mallocs served */
    cl_uint ran_min;         /* the fewest iterations a work-item's first loop ran */
    cl_uint after_min, after_max; /* what its last loop ran: 1 where loops were cut */
} spent;

/* Whether the allocator frees (the bump allocators do not). */
static int frees(clheap_allocator a)
{
    return a != CLHEAP_ATOMIC_MALLOC && a != CLHEAP_ATOMIC_WRAP_MALLOC;
}

/* One launch of spend_then_call: each work-item spends `spend` iterations, then mallocs
 * and frees one allocation of take's (made by an earlier launch). */
static spent spend_and_call(loop_test *t, clheap_heap *heap, cl_program program, cl_uint spend)
{
    cl_int err;
    cl_kernel take = clCreateKernel(program, "take", &err), call = clCreateKernel(program, "spend_then_call", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem held = buffer(&t->cl, ITEMS * 4), out = buffer(&t->cl, ITEMS * 16);
    cl_uint zeros[ITEMS * 4] = {0}, got[ITEMS * 4], held_units[ITEMS];
    assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, out, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, take, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(take, 1, sizeof held, &held), CL_SUCCESS);
    launch(&t->cl, take);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, held, CL_TRUE, 0, sizeof held_units, held_units, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < ITEMS; i++)
        assert_int_not_equal(held_units[i], 0);
    uint64_t held_bytes = live(heap);
    uint32_t contended_before = contended(heap);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, call, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(call, 1, sizeof out, &out), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(call, 2, sizeof spend, &spend), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(call, 3, sizeof held, &held), CL_SUCCESS);
    launch(&t->cl, call);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
    spent r = {0, spend, ~0u, 0};
    for (int i = 0; i < ITEMS; i++) {
        r.served += got[4 * i + 1] != 0;
        r.ran_min = got[4 * i] < r.ran_min ? got[4 * i] : r.ran_min;
        r.after_min = got[4 * i + 2] < r.after_min ? got[4 * i + 2] : r.after_min;
        r.after_max = got[4 * i + 2] > r.after_max ? got[4 * i + 2] : r.after_max;
    }
    int served = r.served;
    /* A call that did nothing is counted, once: a malloc and a free per work-item. */
    assert_int_equal(contended(heap) - contended_before, 2u * (uint32_t)(ITEMS - served));
    /* A work-item whose malloc was refused also kept its held allocation (its free did
     * nothing): what is live is the served mallocs and the unfreed helds, no more. */
    if (served == 0 || (served == ITEMS && frees(t->allocator))) /* all kept, or ITEMS freed, ITEMS new of one size */
        assert_int_equal(live(heap), held_bytes);
    assert_heap_sound(heap, clheap_allocator_name(t->allocator));
    clReleaseMemObject(held);
    clReleaseMemObject(out);
    clReleaseKernel(take);
    clReleaseKernel(call);
    return r;
}

static clheap_heap *heap_with_program(loop_test *t, const char *options, cl_program *program)
{
    clheap_heap *heap = fixture_heap(&t->cl, t->allocator, HEAP_BYTES);
    static char log[16384];
    assert_int_equal(clheap_heap_build_program(heap, 1, &kernels, options, program, log, sizeof log), CLHEAP_SUCCESS);
    return heap;
}

/* Where the device cuts loops: a work-item that spent them all is refused, counted, and
 * loses nothing; one that spent all but a few hundred is served. */
static void spent_iterations_refuse_the_call(void **state)
{
    loop_test *t = *state;
    unsigned limit = clheap_device_loop_limit(t->cl.device);
    if (!limit) {
        print_message("the device runs loops whole (up to %d iterations)\n", PROBE_LIMIT);
        skip();
    }
    cl_program program;
    clheap_heap *heap = heap_with_program(t, NULL, &program);
    spent all = spend_and_call(t, heap, program, limit);
    assert_int_equal(all.ran_min, limit); /* the kernel's own loop ran to the limit */
    assert_int_equal(all.after_max, 1);   /* and every loop after it ran once */
    assert_int_equal(all.served, 0);
    /* With 512 left (TierAlloc: 4,096, its calls take more of them, docs/design.md), both
     * calls run whole: the loop after them still runs its 2. */
    cl_uint left = t->allocator == CLHEAP_TIER_ALLOC ? 4096u : 512u;
    spent most = spend_and_call(t, heap, program, limit - left);
    assert_int_equal(most.ran_min, limit - left);
    assert_int_equal(most.after_min, (limit - left) % 2u + 2u);
    assert_int_equal(most.served, ITEMS);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
}

/* One launch of `kernel` over CUT_ITEMS work-items with (heap, units, limit, seed[, wrong]). */
enum { CUT_ITEMS = 1024 };
static void launch_cut(loop_test *t, clheap_heap *heap, cl_kernel kernel, cl_mem units, cl_uint limit, cl_uint seed,
                       cl_mem wrong)
{
    assert_int_equal(clheap_heap_set_kernel_arg(heap, kernel, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 1, sizeof units, &units), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 2, sizeof limit, &limit), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 3, sizeof seed, &seed), CL_SUCCESS);
    if (wrong)
        assert_int_equal(clSetKernelArg(kernel, 4, sizeof wrong, &wrong), CL_SUCCESS);
    size_t global = CUT_ITEMS;
    assert_int_equal(clEnqueueNDRangeKernel(t->cl.queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS);
}

/* Where the device cuts loops, the iterations running out at every point inside a malloc
 * or a free leave the heap sound: the mallocs served hand out disjoint memory (each keeps
 * its stamp), and freeing everything again, uncut, empties the heap (a free that was cut
 * after it freed counts a double free then). */
static void cuts_inside_calls_leave_the_heap_sound(void **state)
{
    loop_test *t = *state;
    unsigned limit = clheap_device_loop_limit(t->cl.device);
    if (!limit)
        skip();
    clheap_allocator a = t->allocator == CLHEAP_AUTO_ALLOCATOR ? clheap_device_allocator(t->cl.device, 0) : t->allocator;
    if (a == CLHEAP_BLOCK_ALLOC || a == CLHEAP_TIER_ALLOC) {
        /* Their bitmaps' must-finish loops (a climb, a block's frame headers) are cut
         * too: docs/design.md, "Loops that end early". */
        print_message("%s: not cut-safe inside a call\n", clheap_allocator_name(a));
        skip();
    }
    cl_program program;
    clheap_heap *heap = heap_with_program(t, NULL, &program);
    cl_int err;
    cl_kernel cut = clCreateKernel(program, "cut_inside", &err), sweep = clCreateKernel(program, "stamps_and_free", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem units = buffer(&t->cl, CUT_ITEMS * 4), wrong = buffer(&t->cl, 4);
    int served = 0;
    for (cl_uint seed = 0; seed < 8u; seed++) {
        cl_uint zero = 0, got[CUT_ITEMS], words_wrong = 1;
        assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, wrong, CL_TRUE, 0, 4, &zero, 0, NULL, NULL), CL_SUCCESS);
        launch_cut(t, heap, cut, units, limit, seed, NULL);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, units, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_heap_sound(heap, "after mallocs cut inside");
        for (int i = 0; i < CUT_ITEMS; i++)
            served += got[i] != 0;
        launch_cut(t, heap, sweep, units, limit, seed, wrong); /* frees cut inside */
        assert_heap_sound(heap, "after frees cut inside");
        launch_cut(t, heap, sweep, units, 0, seed, wrong); /* the same frees, whole */
        assert_heap_sound(heap, "after the frees");
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, wrong, CL_TRUE, 0, 4, &words_wrong, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_int_equal(words_wrong, 0);
        if (frees(t->allocator))
            assert_int_equal(live(heap), 0);
    }
    print_message("%s: %d of %d mallocs cut inside were served\n", clheap_allocator_name(t->allocator), served,
                  8 * CUT_ITEMS);
    clReleaseMemObject(units);
    clReleaseMemObject(wrong);
    clReleaseKernel(cut);
    clReleaseKernel(sweep);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
}

/* Where the device cuts loops, a realloc whose iterations run out before or inside its
 * copy returns NULL and leaves the old allocation and its words (clheap_realloc), and one
 * whose copy ran whole moved them all: every allocation, wherever it lies, holds its stamp.
 * Then a calloc cut the same way on that freed memory returns NULL or zeros. The circular
 * family only: cut inside its malloc, its heap stays sound (above); the bump allocators do
 * not realloc. */
static void a_cut_realloc_keeps_the_old_words(void **state)
{
    loop_test *t = *state;
    unsigned limit = clheap_device_loop_limit(t->cl.device);
    clheap_allocator a = t->allocator;
    if (!limit || a < CLHEAP_CMALLOC || a > CLHEAP_CFMMALLOC)
        skip();
    cl_program program;
    clheap_heap *heap = heap_with_program(t, NULL, &program);
    cl_int err;
    cl_kernel stamp = clCreateKernel(program, "stamp_4k", &err), cut = clCreateKernel(program, "realloc_cut", &err),
              check = clCreateKernel(program, "check_4k", &err), zeroed = clCreateKernel(program, "calloc_cut", &err),
              zeros = clCreateKernel(program, "check_zero", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem units = buffer(&t->cl, CUT_ITEMS * 4), wrong = buffer(&t->cl, 4);
    int kept = 0, moved = 0, calloc_nulls = 0;
    for (cl_uint seed = 0; seed < 4u; seed++) {
        cl_uint zero = 0, before[CUT_ITEMS], after[CUT_ITEMS], words_wrong = 1;
        assert_int_equal(clEnqueueWriteBuffer(t->cl.queue, wrong, CL_TRUE, 0, 4, &zero, 0, NULL, NULL), CL_SUCCESS);
        launch_cut(t, heap, stamp, units, limit, seed, NULL);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, units, CL_TRUE, 0, sizeof before, before, 0, NULL, NULL),
                         CL_SUCCESS);
        launch_cut(t, heap, cut, units, limit, seed, NULL);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, units, CL_TRUE, 0, sizeof after, after, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_heap_sound(heap, "after reallocs cut");
        for (int i = 0; i < CUT_ITEMS; i++) {
            kept += before[i] && after[i] == before[i];
            moved += after[i] != before[i];
        }
        launch_cut(t, heap, check, units, limit, seed, wrong);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, wrong, CL_TRUE, 0, 4, &words_wrong, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_int_equal(words_wrong, 0);
        assert_heap_sound(heap, "after the frees");
        launch_cut(t, heap, zeroed, units, limit, seed, NULL);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, units, CL_TRUE, 0, sizeof after, after, 0, NULL, NULL),
                         CL_SUCCESS);
        for (int i = 0; i < CUT_ITEMS; i++)
            calloc_nulls += after[i] == 0;
        launch_cut(t, heap, zeros, units, limit, seed, wrong);
        assert_int_equal(clEnqueueReadBuffer(t->cl.queue, wrong, CL_TRUE, 0, 4, &words_wrong, 0, NULL, NULL),
                         CL_SUCCESS);
        assert_int_equal(words_wrong, 0);
        assert_heap_sound(heap, "after the callocs");
    }
    print_message("%s: %d reallocs cut kept their allocation, %d moved whole; %d callocs cut\n",
                  clheap_allocator_name(a), kept, moved, calloc_nulls);
    assert_true(kept > 0); /* the cuts happened */
    assert_true(moved > 0);
    assert_true(calloc_nulls > 0);
    clReleaseMemObject(units);
    clReleaseMemObject(wrong);
    clReleaseKernel(stamp);
    clReleaseKernel(cut);
    clReleaseKernel(check);
    clReleaseKernel(zeroed);
    clReleaseKernel(zeros);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
}

/* FreeHeap serves a batch on one work-item, whose sifts a device that ends loops early
 * would cut: refused there, and only there. */
static void free_heap_is_refused_where_loops_end_early(void **state)
{
    loop_test *t = *state;
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_FREE_HEAP;
    config.size_bytes = HEAP_BYTES;
    clheap_heap *heap = NULL;
    clheap_status status = clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &heap);
    char described[1024];
    clheap_describe_device(t->cl.device, described, sizeof described);
    if (clheap_device_loop_limit(t->cl.device)) {
        assert_int_equal(status, CLHEAP_ERROR_UNSUPPORTED);
        assert_non_null(strstr(clheap_status_string(status), "loops"));
        assert_null(heap);
        assert_null(strstr(described, "FreeHeap"));
        assert_non_null(strstr(described, "loops cut past"));
    } else {
        assert_int_equal(status, CLHEAP_SUCCESS);
        assert_null(strstr(described, "loops cut past"));
    }
    clheap_heap_destroy(heap);
}

/* Where loops run whole: the probe says so, and the check compiled in anyway serves
 * every call even after more iterations than llvmpipe's limit. */
static void whole_loops_are_served(void **state)
{
    loop_test *t = *state;
    if (clheap_device_loop_limit(t->cl.device))
        skip();
    cl_program program;
    clheap_heap *heap = heap_with_program(t, "-DCLHEAP_LOOP_LIMIT=65535", &program);
    spent r = spend_and_call(t, heap, program, 70000u);
    assert_int_equal(r.ran_min, 70000u);
    assert_int_equal(r.after_min, 70000u % 2u + 2u);
    assert_int_equal(r.served, ITEMS);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
}

static int open_fixture(void **state)
{
    loop_test *t = *state;
    return cl_fixture_open(&t->cl);
}

static int close_fixture(void **state)
{
    loop_test *t = *state;
    cl_fixture_close(&t->cl);
    return 0;
}

int main(int argc, char **argv)
{
    int failures = 0;
    for (int a = 1; a <= (argc > 1 ? argc - 1 : 1); a++) {
        loop_test t = {.allocator = CLHEAP_AUTO_ALLOCATOR};
        for (int k = CLHEAP_ATOMIC_MALLOC; argc > 1 && k <= CLHEAP_ALLOCATOR_LAST; k++)
            if (strcmp(argv[a], clheap_allocator_name((clheap_allocator)k)) == 0)
                t.allocator = (clheap_allocator)k;
        if (argc > 1 && t.allocator == CLHEAP_AUTO_ALLOCATOR) {
            fprintf(stderr, "unknown allocator %s\n", argv[a]);
            return 1;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_prestate_setup_teardown(spent_iterations_refuse_the_call, open_fixture, close_fixture, &t),
            cmocka_unit_test_prestate_setup_teardown(cuts_inside_calls_leave_the_heap_sound, open_fixture,
                                                     close_fixture, &t),
            cmocka_unit_test_prestate_setup_teardown(whole_loops_are_served, open_fixture, close_fixture, &t),
            cmocka_unit_test_prestate_setup_teardown(a_cut_realloc_keeps_the_old_words, open_fixture, close_fixture,
                                                     &t),
            cmocka_unit_test_prestate_setup_teardown(free_heap_is_refused_where_loops_end_early, open_fixture,
                                                     close_fixture, &t),
        };
        failures += _cmocka_run_group_tests(argc > 1 ? argv[a] : "default", tests, sizeof tests / sizeof tests[0],
                                            NULL, NULL);
    }
    return failures;
}
