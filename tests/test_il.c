/* SPIR-V programs: clheap_heap_build_program_il with the modules tests/CMakeLists.txt
 * compiles ahead of time (cmake/clheapSpirv.cmake; tests/spirv_check.sh validates them).
 * Where the device takes IL, a heap builds its own allocator's module, runs it with every
 * word checked, and refuses another allocator's. Where it takes none (PoCL 3.1), the call
 * says CLHEAP_ERROR_UNSUPPORTED and returns no program, so that path is tested up to
 * validation. Everywhere: the allocator tag a module carries, checked on programs built
 * from source with CLHEAP_IL, and bad arguments refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "program_il.h"

static cl_fixture fx;

static clheap_heap *make_heap(clheap_allocator allocator)
{
    return fixture_heap(&fx, allocator, 16u << 20);
}

/* The module tests/CMakeLists.txt compiled for `allocator`, read whole; free() it. */
static unsigned char *read_module(const char *allocator, size_t *bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/spirv_%s.spv", CLHEAP_TEST_SPIRV_DIR, allocator);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *data = malloc(1u << 20);
    assert_non_null(data);
    *bytes = fread(data, 1, 1u << 20, f);
    fclose(f);
    assert_true(*bytes > 20 && *bytes < (1u << 20));
    assert_int_equal(data[0] | data[1] << 8 | data[2] << 16 | (unsigned)data[3] << 24, 0x07230203); /* SPIR-V magic */
    return data;
}

/* Runs the module's every_call kernel on 1024 work-items: no device error, the heap sound. */
static void run_every_call(clheap_heap *heap, cl_program program)
{
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, "every_call", &err);
    assert_int_equal(err, CL_SUCCESS);
    size_t items = 1024;
    cl_mem out = clCreateBuffer(fx.context, CL_MEM_READ_WRITE, items * sizeof(cl_uint), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_heap_set_kernel_arg(heap, kernel, 0), CLHEAP_SUCCESS);
    assert_int_equal(clSetKernelArg(kernel, 1, sizeof out, &out), CL_SUCCESS);
    assert_int_equal(clEnqueueNDRangeKernel(fx.queue, kernel, 1, NULL, &items, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(fx.queue), CL_SUCCESS);
    assert_int_equal(clheap_heap_read_errors(heap, NULL), CLHEAP_SUCCESS);
    assert_heap_sound(heap, "after the SPIR-V kernel");
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
}

static void the_heaps_own_module_or_unsupported(void **state)
{
    (void)state;
    clheap_heap *heap = make_heap(CLHEAP_TIER_ALLOC);
    size_t bytes = 0, other_bytes = 0;
    unsigned char *own = read_module("TierAlloc", &bytes), *other = read_module("BlockAlloc", &other_bytes);
    cl_program program = (cl_program)(uintptr_t)1;
    char log[1024];
    clheap_status status = clheap_heap_build_program_il(heap, own, bytes, NULL, &program, log, sizeof log);
    if (!clheap_il_supported(fx.device)) {
        assert_int_equal(status, CLHEAP_ERROR_UNSUPPORTED);
        assert_null(program);
        assert_int_equal(clheap_heap_build_program_il(heap, other, other_bytes, NULL, &program, log, sizeof log),
                         CLHEAP_ERROR_UNSUPPORTED);
        printf("  this device takes no IL: the modules are tested up to validation\n");
    } else {
        assert_int_equal(status, CLHEAP_SUCCESS);
        run_every_call(heap, program);
        clReleaseProgram(program);
        program = (cl_program)(uintptr_t)1;
        assert_int_equal(clheap_heap_build_program_il(heap, other, other_bytes, NULL, &program, log, sizeof log),
                         CLHEAP_ERROR_BUILD_FAILED);
        assert_null(program);
        assert_non_null(strstr(log, "clheap_il_allocator_9"));
    }
    free(own);
    free(other);
    assert_int_equal(clheap_heap_destroy(heap), CLHEAP_SUCCESS);
}

/* Built from source with CLHEAP_IL, a program names its allocator and no other; without
 * it, none. */
static void the_tag_names_the_allocator(void **state)
{
    (void)state;
    static const char *source = "__kernel void k(__global clheap_heap *heap) { clheap_free(heap, clheap_malloc(heap, 16)); }\n";
    const clheap_allocator kinds[2] = {CLHEAP_TIER_ALLOC, CLHEAP_BLOCK_ALLOC};
    for (int i = 0; i < 2; i++) {
        clheap_heap *heap = make_heap(kinds[i]);
        cl_program tagged = NULL, plain = NULL;
        char log[1024];
        assert_int_equal(clheap_heap_build_program(heap, 1, &source, "-DCLHEAP_IL=1", &tagged, log, sizeof log),
                         CLHEAP_SUCCESS);
        assert_int_equal(clheap_heap_build_program(heap, 1, &source, "", &plain, log, sizeof log), CLHEAP_SUCCESS);
        for (int j = 0; j < 2; j++)
            assert_int_equal(clheap_il_names_allocator(tagged, (int)kinds[j], 1), i == j);
        assert_false(clheap_il_names_allocator(tagged, (int)kinds[i], 0));
        assert_false(clheap_il_names_allocator(plain, (int)kinds[i], 1));
        clReleaseProgram(tagged);
        clReleaseProgram(plain);
        assert_int_equal(clheap_heap_destroy(heap), CLHEAP_SUCCESS);
    }
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    clheap_heap *heap = make_heap(CLHEAP_TIER_ALLOC);
    size_t bytes = 0;
    unsigned char *own = read_module("TierAlloc", &bytes);
    cl_program program = NULL;
    assert_int_equal(clheap_heap_build_program_il(heap, NULL, bytes, NULL, &program, NULL, 0),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_build_program_il(heap, own, 0, NULL, &program, NULL, 0), CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_build_program_il(heap, own, bytes, NULL, NULL, NULL, 0), CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_build_program_il(NULL, own, bytes, NULL, &program, NULL, 0),
                     CLHEAP_ERROR_INVALID_ARGUMENT);
    assert_int_equal(clheap_heap_destroy(heap), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_build_program_il(heap, own, bytes, NULL, &program, NULL, 0),
                     CLHEAP_ERROR_INVALID_HANDLE); /* destroyed */
    free(own);
}

static int setup(void **state)
{
    (void)state;
    return cl_fixture_open(&fx);
}

static int teardown(void **state)
{
    (void)state;
    cl_fixture_close(&fx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_heaps_own_module_or_unsupported),
        cmocka_unit_test(the_tag_names_the_allocator),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
