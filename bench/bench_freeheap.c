/* freeheap: FreeHeap (paper 003) is serial, so what it offers is operations per second of
 * one work-item: batches of 1 .. 10^5 host-enqueued mallocs of 16 B - 1 KiB, then the
 * batch's frees, each timed by its event. Every run is verified: every request granted,
 * the allocations disjoint and inside the pool, the heap check passing after the mallocs
 * and, after the frees, the pool one free block again with no error counted. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* 0 if the batch's allocations are granted, in the pool and pairwise disjoint, and the
 * heap check passes. */
static int verify_batch(clheap_heap *heap, const uint32_t *units, const uint32_t *sizes, size_t n)
{
    uint64_t begin = 0, bytes = 0;
    clheap_heap_pool_range(heap, &begin, &bytes);
    if (bench_verify_units(units, n, sizes, 0, begin, bytes) != 0)
        return 1;
    char what[256];
    return clheap_heap_check(heap, what, sizeof what) != CLHEAP_SUCCESS;
}

int bench_freeheap(bench_env *env)
{
    static const size_t batches[] = {1, 10, 100, 1000, 10000, 100000};
    size_t count = env->quick ? 4 : sizeof batches / sizeof *batches, largest = batches[count - 1];
    FILE *csv = bench_csv_open(env, "freeheap", "allocator,batch,malloc_median_s,free_median_s,mallocs_per_s,"
                                                "frees_per_s,nulls,runs");
    printf("freeheap: host-enqueued batches on FreeHeap (serial: one work-item), 16 B - 1 KiB each\n");
    printf("  %8s %12s %12s %14s %14s %6s\n", "batch", "malloc ms", "free ms", "mallocs/s", "frees/s", "NULL");
    uint32_t *sizes = malloc(largest * sizeof *sizes), *units = malloc(largest * sizeof *units);
    double *malloc_s = malloc((size_t)env->runs * sizeof *malloc_s), *free_s = malloc((size_t)env->runs * sizeof *free_s);
    clheap_heap *heap = NULL;
    cl_mem sizes_buf = NULL, units_buf = NULL;
    int failures = 0;
    if (!sizes || !units || !malloc_s || !free_s) {
        failures = 1;
        goto done;
    }
    uint64_t asked = 0;
    for (size_t i = 0; i < largest; i++)
        asked += sizes[i] = 16u << (i % 7);
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = CLHEAP_FREE_HEAP;
    config.size_bytes = (asked + largest * 2u * CLHEAP_UNIT_BYTES) * 2u + (16u << 20);
    clheap_status status = clheap_heap_create(env->context, env->device, env->queue, &config, &heap);
    cl_int err = CL_SUCCESS;
    if (status == CLHEAP_SUCCESS)
        sizes_buf = clCreateBuffer(env->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, largest * sizeof *sizes,
                                   sizes, &err);
    if (status == CLHEAP_SUCCESS && err == CL_SUCCESS)
        units_buf = clCreateBuffer(env->context, CL_MEM_READ_WRITE, largest * sizeof *units, NULL, &err);
    if (status != CLHEAP_SUCCESS || err != CL_SUCCESS) {
        fprintf(stderr, "freeheap: %s\n", clheap_status_string(status != CLHEAP_SUCCESS ? status : err));
        failures = 1;
        goto done;
    }
    for (size_t b = 0; b < count && !failures; b++) {
        size_t n = batches[b];
        uint32_t nulls = 0;
        for (int run = 0; run < env->runs && !failures; run++) {
            cl_event allocated = NULL, freed = NULL;
            status = clheap_heap_enqueue_malloc(heap, NULL, n, 0, sizes_buf, units_buf, 0, 0, NULL, &allocated);
            if (status == CLHEAP_SUCCESS)
                status = clEnqueueReadBuffer(env->queue, units_buf, CL_TRUE, 0, n * sizeof *units, units, 0, NULL,
                                             NULL);
            for (size_t i = 0; status == CLHEAP_SUCCESS && i < n; i++)
                nulls += units[i] == 0;
            if (status != CLHEAP_SUCCESS || verify_batch(heap, units, sizes, n)) {
                fprintf(stderr, "freeheap: batch of %zu: %s\n", n,
                        status != CLHEAP_SUCCESS ? clheap_status_string(status) : "NULL, overlap or heap check");
                failures = 1;
            }
            if (!failures)
                status = clheap_heap_enqueue_free(heap, NULL, n, units_buf, 0, 0, NULL, &freed);
            clheap_heap_stats s;
            if (!failures && (status != CLHEAP_SUCCESS || clFinish(env->queue) != CL_SUCCESS ||
                              clheap_heap_calculate_stats(heap, &s) != CLHEAP_SUCCESS || s.free_chunks != 1 ||
                              s.used_chunks != 0 || clheap_heap_read_errors(heap, NULL) != CLHEAP_SUCCESS)) {
                fprintf(stderr, "freeheap: batch of %zu: the frees did not give the pool back whole\n", n);
                failures = 1;
            }
            if (!failures) {
                malloc_s[run] = bench_event_seconds(allocated);
                free_s[run] = bench_event_seconds(freed);
            }
            if (allocated)
                clReleaseEvent(allocated);
            if (freed)
                clReleaseEvent(freed);
        }
        if (failures)
            break;
        double m = bench_median(malloc_s, env->runs), f = bench_median(free_s, env->runs);
        printf("  %8zu %12.3f %12.3f %14.3e %14.3e %6u\n", n, m * 1e3, f * 1e3, n / m, n / f, nulls);
        if (csv)
            fprintf(csv, "FreeHeap,%zu,%.9f,%.9f,%.6e,%.6e,%u,%d\n", n, m, f, n / m, n / f, nulls, env->runs);
    }
done:
    if (csv)
        fclose(csv);
    if (units_buf)
        clReleaseMemObject(units_buf);
    if (sizes_buf)
        clReleaseMemObject(sizes_buf);
    clheap_heap_destroy(heap);
    free(sizes);
    free(units);
    free(malloc_s);
    free(free_s);
    return failures;
}
