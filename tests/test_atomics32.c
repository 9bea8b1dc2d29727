/* Devices without 64-bit atomics (cl/clheap_port.h, CLHEAP_ATOMICS64): the default is
 * TierAlloc on both widths (the fallback only where loops end early) and serves every
 * size, the allocators that need 64-bit atomics are refused, and the others run a random
 * stress with every word stamped and verified, bad frees counted and the heap check
 * sound. On a device with them, the same tests check the other side: nothing is refused.
 * CI runs it on PoCL as it is, on PoCL with CLHEAP_ATOMICS64=0 (the 32-bit build forced),
 * and on Mesa's rusticl (none, and loops that end early). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "../cl/clheap_config.h" /* CLHEAP_NV_MAX_REGISTERS */

enum { HEAP_BYTES = 16 << 20, ITEMS = 1024, LOCAL = 64, ROUNDS = 3, LARGEST = 8192 };

static const char *kernels =
    "/* Each work-item mallocs a random size and stamps every word with its id and round. */\n"
    "__kernel void stamp(__global clheap_heap *heap, __global uint *units, __global uint *sizes, uint round) {\n"
    "    uint i = get_global_id(0);\n"
    "    uint size = 4u + clheap_hash32(i * 2654435761u + round) % " "8192u;\n"
    "    __global uint *p = clheap_malloc(heap, size);\n"
    "    units[i] = clheap_unit_of(heap, p);\n"
    "    sizes[i] = size;\n"
    "    for (uint w = 0; p && w < size / 4u; w++) p[w] = i ^ (round << 24) ^ (w << 12);\n"
    "}\n"
    "__kernel void verify_free(__global clheap_heap *heap, __global const uint *units,\n"
    "                          __global const uint *sizes, uint round, __global uint *wrong) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint *p = (__global uint *)clheap_pointer(heap, units[i]);\n"
    "    for (uint w = 0; p && w < sizes[i] / 4u; w++)\n"
    "        if (p[w] != (i ^ (round << 24) ^ (w << 12))) atomic_inc(wrong);\n"
    "    if (p && (i & 1u)) clheap_free(heap, p);\n"
    "}\n"
    "/* Frees of what is already free: at the start, and 16 bytes in. */\n"
    "__kernel void bad_frees(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uchar *p = (__global uchar *)clheap_pointer(heap, units[i]);\n"
    "    if (p && (i & 1u)) clheap_free(heap, p);\n"
    "    else if (p) clheap_free(heap, p + 16);\n"
    "}\n"
    "/* Four requests every allocator refuses: 0 bytes, more than the pool, a calloc whose\n"
    "   product overflows, an alignment that is no power of two. */\n"
    "__kernel void bad_sizes(__global clheap_heap *heap, __global uint *got) {\n"
    "    got[0] = clheap_unit_of(heap, clheap_malloc(heap, 0));\n"
    "    got[1] = clheap_unit_of(heap, clheap_malloc(heap, (size_t)1 << 40));\n"
    "    got[2] = clheap_unit_of(heap, clheap_calloc(heap, ((size_t)1 << 62) + 1u, 4)); /* wraps to 4 */\n"
    "    got[3] = clheap_unit_of(heap, clheap_aligned_alloc(heap, 48, 64));\n"
    "}\n"
    "__kernel void free_rest(__global clheap_heap *heap, __global const uint *units) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (!(i & 1u)) clheap_free(heap, clheap_pointer(heap, units[i]));\n"
    "}\n";

/* Requests of 64 KiB - 1 MiB, larger than BlockAlloc's largest class: stamped at both
 * ends, then verified and freed. */
static const char *large_kernels =
    "__kernel void large(__global clheap_heap *heap, __global uint *units) {\n"
    "    uint i = get_global_id(0), words = (16384u << (i % 5u));\n"
    "    __global uint *p = clheap_malloc(heap, words * 4u);\n"
    "    if (p) { p[0] = i; p[words - 1u] = ~i; }\n"
    "    units[i] = clheap_unit_of(heap, p);\n"
    "}\n"
    "__kernel void large_free(__global clheap_heap *heap, __global const uint *units, __global uint *wrong) {\n"
    "    uint i = get_global_id(0), words = (16384u << (i % 5u));\n"
    "    __global uint *p = (__global uint *)clheap_pointer(heap, units[i]);\n"
    "    if (p && (p[0] != i || p[words - 1u] != ~i)) atomic_inc(wrong);\n"
    "    clheap_free(heap, p);\n"
    "}\n";
enum { LARGE_ITEMS = 16 };

/* The allocators that swap 64-bit words whole (the fused headers), listed here apart
 * from the library's clheap_allocator_needs_atomics64, which must agree. The bitmap
 * kinds run on split words (cl/clheap_port.h). */
static int needs_atomics64(clheap_allocator a)
{
    return a == CLHEAP_CFMALLOC || a == CLHEAP_CFMMALLOC;
}

/* The allocators the stress runs: those named on the command line, else every one a
 * device without 64-bit atomics gets but BitmapAlloc (one slot size, 16 B here). */
static clheap_allocator stressed[CLHEAP_ALLOCATOR_LAST + 1];
static int stressed_count;

static int group_setup(void **state)
{
    cl_fixture *f = calloc(1, sizeof *f);
    if (!f || cl_fixture_open(f) != 0)
        return -1;
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    cl_fixture_close(*state);
    free(*state);
    return 0;
}

/* Each allocator that needs 64-bit atomics is refused where there are none, and the
 * refusal says why; every allocator is made where there are (but FreeHeap where loops
 * end early). */
static void allocators_needing_atomics64_are_refused(void **state)
{
    cl_fixture *f = *state;
    int atomics64 = clheap_device_has_atomics64(f->device);
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = HEAP_BYTES;
        clheap_heap *heap = NULL;
        clheap_status status = clheap_heap_create(f->context, f->device, f->queue, &config, &heap);
        assert_int_equal(clheap_allocator_needs_atomics64((clheap_allocator)a), needs_atomics64((clheap_allocator)a));
        assert_int_equal(clheap_device_runs(f->device, (clheap_allocator)a), status == CLHEAP_SUCCESS);
        if (!atomics64 && needs_atomics64((clheap_allocator)a)) {
            assert_int_equal(status, CLHEAP_ERROR_UNSUPPORTED);
            assert_null(heap);
            assert_non_null(strstr(clheap_status_string(status), "64-bit atomics"));
        } else if (a == CLHEAP_FREE_HEAP && clheap_device_loop_limit(f->device)) {
            assert_int_equal(status, CLHEAP_ERROR_UNSUPPORTED); /* tests/test_loop_limit.c */
        } else {
            assert_int_equal(status, CLHEAP_SUCCESS);
            assert_int_equal(clheap_heap_allocator(heap), a);
            clheap_heap_destroy(heap);
        }
    }
}

static cl_mem buffer(cl_fixture *f, size_t bytes)
{
    cl_int err;
    cl_mem b = clCreateBuffer(f->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    return b;
}

static void run(cl_fixture *f, cl_kernel k, int args, ...)
{
    va_list ap;
    va_start(ap, args);
    for (int i = 1; i <= args; i++) {
        size_t size = va_arg(ap, size_t);
        const void *value = va_arg(ap, const void *);
        assert_int_equal(clSetKernelArg(k, (cl_uint)i, size, value), CL_SUCCESS);
    }
    va_end(ap);
    size_t global = ITEMS, local = LOCAL;
    assert_int_equal(clEnqueueNDRangeKernel(f->queue, k, 1, NULL, &global, &local, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(f->queue), CL_SUCCESS);
}

/* The default heap's requests larger than BlockAlloc's classes: all served, their words
 * intact and the pool whole again (TierAlloc); where loops end early (the fallback,
 * BlockAlloc) each is NULL and counted as a bad size. */
static void default_serves_large_requests(cl_fixture *f, clheap_heap *heap)
{
    cl_program program;
    static char log[16384];
    assert_int_equal(clheap_heap_build_program(heap, 1, &large_kernels, NULL, &program, log, sizeof log),
                     CLHEAP_SUCCESS);
    cl_int err;
    cl_kernel large = clCreateKernel(program, "large", &err), large_free = clCreateKernel(program, "large_free", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem units = buffer(f, LARGE_ITEMS * 4), wrong = buffer(f, 4);
    cl_uint zero = 0, got[LARGE_ITEMS], words_wrong = 1;
    assert_int_equal(clEnqueueWriteBuffer(f->queue, wrong, CL_TRUE, 0, 4, &zero, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, large, 0), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, large_free, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(large, 1, sizeof units, &units), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(large_free, 1, sizeof units, &units), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(large_free, 2, sizeof wrong, &wrong), CL_SUCCESS);
    size_t global = LARGE_ITEMS;
    assert_int_equal(clEnqueueNDRangeKernel(f->queue, large, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(f->queue, units, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
    int fallback = clheap_heap_allocator(heap) == CLHEAP_FALLBACK_ALLOCATOR;
    for (int i = 0; i < LARGE_ITEMS; i++)
        assert_int_equal(got[i] != 0, !fallback);
    clheap_heap_errors e;
    clheap_status read = clheap_heap_read_errors(heap, &e);
    assert_int_equal(read, fallback ? CLHEAP_ERROR_DEVICE_BAD_SIZE : CLHEAP_SUCCESS);
    assert_int_equal(e.bad_size, fallback ? LARGE_ITEMS : 0);
    assert_int_equal(e.out_of_memory + e.contended, 0);
    assert_heap_sound(heap, "large requests");
    assert_int_equal(clEnqueueNDRangeKernel(f->queue, large_free, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(f->queue, wrong, CL_TRUE, 0, 4, &words_wrong, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(words_wrong, 0);
    assert_heap_sound(heap, "large requests freed");
    clheap_heap_stats s;
    assert_int_equal(clheap_heap_trim(heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_calculate_stats(heap, &s), CLHEAP_SUCCESS);
    assert_int_equal(s.live_bytes, 0);
    assert_int_equal(s.free_bytes, s.pool_bytes);
    clReleaseMemObject(units);
    clReleaseMemObject(wrong);
    clReleaseKernel(large);
    clReleaseKernel(large_free);
    clReleaseProgram(program);
}

/* The default resolves by the device (TierAlloc on both widths, the fallback where loops
 * end early), the options and the description say which, and it serves large requests
 * unless it is the fallback. */
static void default_is_the_devices_best(void **state)
{
    cl_fixture *f = *state;
    int atomics64 = clheap_device_has_atomics64(f->device);
    clheap_heap *heap = NULL;
    assert_int_equal(clheap_heap_config_default().allocator, CLHEAP_AUTO_ALLOCATOR);
    assert_int_equal(clheap_heap_create(f->context, f->device, f->queue, NULL, &heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_allocator(heap),
                     clheap_device_loop_limit(f->device) ? CLHEAP_FALLBACK_ALLOCATOR : CLHEAP_DEFAULT_ALLOCATOR);
    assert_int_equal(clheap_device_allocator(f->device, 0), clheap_heap_allocator(heap));
    assert_int_equal(clheap_device_allocator(f->device, 1), CLHEAP_TYPED_ALLOCATOR);
    char options[256], described[1024];
    assert_int_equal(clheap_heap_build_options(heap, options, sizeof options), CLHEAP_SUCCESS);
    assert_int_equal(strstr(options, "-DCLHEAP_ATOMICS64=0") != NULL, !atomics64);
    /* NVIDIA's register cap: TierAlloc's programs in warp-coalesced builds only (other
     * compilers refuse the option) */
    int cap_built = CLHEAP_NV_MAX_REGISTERS > 0;
    int capped = cap_built && clheap_heap_allocator(heap) == CLHEAP_TIER_ALLOC && strstr(options, "-DCLHEAP_HAVE_PTX=1");
    assert_int_equal(strstr(options, "-cl-nv-maxrregcount=") != NULL, capped);
    clheap_describe_device(f->device, described, sizeof described);
    assert_non_null(strstr(described, atomics64 ? "64-bit atomics" : "32-bit atomics"));
    char names_default[64];
    snprintf(names_default, sizeof names_default, "default %s", clheap_allocator_name(clheap_heap_allocator(heap)));
    assert_non_null(strstr(described, names_default));
    print_message("%s: %s\n", described, options);
    assert_heap_sound(heap, "default");
    default_serves_large_requests(f, heap);
    clheap_heap_destroy(heap);
}

/* Rounds of random sizes (every word stamped, verified, half freed), then bad frees
 * counted without a change to the heap, then everything freed and the pool whole. */
static void stress_allocator(cl_fixture *f, clheap_allocator allocator)
{
    clheap_heap *heap = fixture_heap(f, allocator, HEAP_BYTES);
    cl_program program;
    static char log[16384];
    assert_int_equal(clheap_heap_build_program(heap, 1, &kernels, NULL, &program, log, sizeof log), CLHEAP_SUCCESS);
    cl_int err;
    cl_kernel stamp = clCreateKernel(program, "stamp", &err), verify = clCreateKernel(program, "verify_free", &err);
    cl_kernel bad = clCreateKernel(program, "bad_frees", &err), rest = clCreateKernel(program, "free_rest", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem units = buffer(f, ITEMS * 4), sizes = buffer(f, ITEMS * 4), wrong = buffer(f, 4);
    cl_kernel all[4] = {stamp, verify, bad, rest};
    for (int k = 0; k < 4; k++)
        assert_int_equal(clheap_heap_set_kernel_arg(heap, all[k], 0), CLHEAP_SUCCESS);
    int bump = allocator == CLHEAP_ATOMIC_MALLOC || allocator == CLHEAP_ATOMIC_WRAP_MALLOC;
    cl_uint zero = 0, granted = 0;
    for (cl_uint round = 0; round < (bump ? 1u : (cl_uint)ROUNDS); round++) {
        clheap_heap_errors before, after;
        clheap_status read = clheap_heap_read_errors(heap, &before); /* an earlier round's NULLs */
        assert_true(read == CLHEAP_SUCCESS || read == CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY);
        assert_int_equal(clEnqueueWriteBuffer(f->queue, wrong, CL_TRUE, 0, 4, &zero, 0, NULL, NULL), CL_SUCCESS);
        run(f, stamp, 3, sizeof units, &units, sizeof sizes, &sizes, sizeof round, &round);
        run(f, verify, 4, sizeof units, &units, sizeof sizes, &sizes, sizeof round, &round, sizeof wrong, &wrong);
        cl_uint words_wrong = 1, got[ITEMS];
        assert_int_equal(clEnqueueReadBuffer(f->queue, wrong, CL_TRUE, 0, 4, &words_wrong, 0, NULL, NULL), CL_SUCCESS);
        assert_int_equal(words_wrong, 0);
        assert_int_equal(clEnqueueReadBuffer(f->queue, units, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
        granted = 0;
        for (int i = 0; i < ITEMS; i++)
            granted += got[i] != 0;
        /* Every NULL is counted, and nothing else is. */
        read = clheap_heap_read_errors(heap, &after);
        assert_true(read == CLHEAP_SUCCESS || read == CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY);
        assert_int_equal(after.out_of_memory - before.out_of_memory + after.contended - before.contended,
                         ITEMS - granted);
        assert_int_equal(after.bad_size + after.free_outside + after.free_unaligned + after.free_not_chunk +
                             after.double_free, 0);
        assert_true(granted > ITEMS / 2);
        assert_heap_sound(heap, clheap_allocator_name(allocator));
        if (!bump) /* the even ones, which the round kept live */
            run(f, rest, 1, sizeof units, &units);
    }
    /* Bad sizes: NULL, each counted once as a bad size, nothing else changed. */
    cl_kernel sizes_kernel = clCreateKernel(program, "bad_sizes", &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, sizes_kernel, 0), CLHEAP_SUCCESS);
    cl_mem got = buffer(f, 4 * sizeof(cl_uint));
    assert_int_equal(clSetKernelArg(sizes_kernel, 1, sizeof got, &got), CL_SUCCESS);
    clheap_heap_errors before, after;
    clheap_status read = clheap_heap_read_errors(heap, &before);
    assert_true(read == CLHEAP_SUCCESS || read == CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY);
    size_t one = 1;
    assert_int_equal(clEnqueueNDRangeKernel(f->queue, sizes_kernel, 1, NULL, &one, &one, 0, NULL, NULL), CL_SUCCESS);
    cl_uint units_got[4] = {1, 1, 1, 1};
    assert_int_equal(clEnqueueReadBuffer(f->queue, got, CL_TRUE, 0, sizeof units_got, units_got, 0, NULL, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(units_got[i], 0);
    assert_int_equal(clheap_heap_read_errors(heap, &after), CLHEAP_ERROR_DEVICE_BAD_SIZE);
    assert_int_equal(after.bad_size - before.bad_size, 4);
    assert_int_equal(after.out_of_memory, before.out_of_memory);
    assert_heap_sound(heap, "after bad sizes");
    clReleaseMemObject(got);
    clReleaseKernel(sizes_kernel);
    if (!bump) {
        /* Every allocation of the last round is free: each is freed again, the odd ones at
         * their start, the even ones 16 bytes in (a double free, or no chunk there where
         * the free chunks merged). Each is counted once, and the heap is as it was. */
        run(f, bad, 1, sizeof units, &units);
        clheap_heap_errors e;
        assert_int_equal(clheap_heap_read_errors(heap, &e), CLHEAP_ERROR_DEVICE_BAD_FREE);
        assert_int_equal(e.free_outside + e.free_unaligned + e.free_not_chunk + e.double_free, granted);
        assert_heap_sound(heap, "after bad frees");
        assert_int_equal(clheap_heap_trim(heap), CLHEAP_SUCCESS); /* TierAlloc's open runs and empty blocks */
        clheap_heap_stats s;
        assert_int_equal(clheap_heap_calculate_stats(heap, &s), CLHEAP_SUCCESS);
        assert_int_equal(s.live_bytes, 0);
        assert_int_equal(s.free_bytes, s.pool_bytes);
    }
    clReleaseMemObject(units);
    clReleaseMemObject(sizes);
    clReleaseMemObject(wrong);
    for (int k = 0; k < 4; k++)
        clReleaseKernel(all[k]);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
}

/* The allocators a device without 64-bit atomics runs, on this device as it is. */
static void the_32_bit_allocators_stay_sound(void **state)
{
    for (int i = 0; i < stressed_count; i++) {
        print_message("%s\n", clheap_allocator_name(stressed[i]));
        stress_allocator(*state, stressed[i]);
    }
}

int main(int argc, char **argv)
{
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        int wanted = argc < 2 && !needs_atomics64((clheap_allocator)a) && a != CLHEAP_BITMAP_ALLOC &&
                     a != CLHEAP_FREE_HEAP; /* FreeHeap serialises: its own tests */
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], clheap_allocator_name((clheap_allocator)a)) == 0;
        if (wanted)
            stressed[stressed_count++] = (clheap_allocator)a;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_is_the_devices_best),
        cmocka_unit_test(allocators_needing_atomics64_are_refused),
        cmocka_unit_test(the_32_bit_allocators_stay_sound),
    };
    return cmocka_run_group_tests_name("atomics32", tests, group_setup, group_teardown);
}
