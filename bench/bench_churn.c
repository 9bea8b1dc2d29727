/* churn: the same malloc/free kernel launched again and again on one heap, each launch
 * timed, to show whether an allocator's state degrades under steady churn (issue 11: the
 * CircularMalloc family's launches grew from 2.3 s to over 150 s on the H100, its list
 * fragmenting into free chunks that never merge). Every work-item mallocs 16 - 64 B (the
 * size drawn per launch), writes its id over every word, reads them back and frees; a
 * launch is verified by its NULL and overwritten-word counts. Per allocator that frees
 * concurrently: the first, median and last launch, last / first, and the free chunks the
 * heap's walk finds at the end (the CircularMalloc family's fragmentation). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *churn_source =
    "__kernel void churn(__global clheap_heap *heap, uint launch, __global uint *counts) {\n"
    "    uint id = get_global_id(0);\n"
    "    uint bytes = 16u + 16u * (clheap_hash32(id ^ (launch * 0x9E3779B1u)) % 4u);\n"
    "    __global uint *p = clheap_malloc(heap, bytes);\n"
    "    if (!p) { atomic_inc(&counts[0]); return; }\n"
    "    for (uint w = 0; w < bytes / 4u; w++) p[w] = id;\n"
    "    for (uint w = 0; w < bytes / 4u; w++) if (p[w] != id) { atomic_inc(&counts[1]); break; }\n"
    "    clheap_free(heap, p);\n"
    "}\n";

int bench_churn(bench_env *env)
{
    size_t items = env->quick ? (size_t)1 << 14 : (size_t)1 << 20;
    int launches = env->quick ? 10 : 100;
    uint64_t heap_bytes = env->heap_bytes ? env->heap_bytes : env->quick ? 64ull << 20 : 1ull << 30;
    FILE *csv = bench_csv_open(env, "churn", "allocator,work_items,launch,seconds,nulls,wrong");
    printf("churn: %d launches of %zu work-items each malloc 16 - 64 B, write, check and free (%llu MiB heap)\n",
           launches, items, (unsigned long long)(heap_bytes >> 20));
    printf("  %-12s %12s %12s %12s %10s %8s %10s %8s %12s\n", "allocator", "first ms", "median ms", "last ms",
           "last/first", "NULLs", "contended", "wrong", "free chunks");
    int failures = 0;
    double *times = malloc((size_t)launches * sizeof *times), *sorted = malloc((size_t)launches * sizeof *sorted);
    if (!times || !sorted)
        return 1;
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        /* The bump allocators cannot free; FreeHeap serves one work-item at a time. */
        if (!bench_wants(env, (clheap_allocator)a) || a == CLHEAP_ATOMIC_MALLOC || a == CLHEAP_ATOMIC_WRAP_MALLOC ||
            a == CLHEAP_FREE_HEAP)
            continue;
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = heap_bytes;
        config.slot_bytes = 64; /* BitmapAlloc: the largest request */
        clheap_heap *heap;
        cl_program program;
        if (bench_heap_make(env, &config, 1, &churn_source, &heap, &program)) {
            failures++;
            continue;
        }
        cl_int err, made;
        cl_kernel kernel = clCreateKernel(program, "churn", &made);
        cl_mem counts = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &err);
        if (made != CL_SUCCESS)
            err = made;
        cl_uint zero[2] = {0, 0}, got[2] = {0, 0};
        long nulls = 0, wrong = 0;
        for (cl_uint launch = 0; launch < (cl_uint)launches && err == CL_SUCCESS; launch++) {
            err = clEnqueueWriteBuffer(env->queue, counts, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL);
            clheap_heap_set_kernel_arg(heap, kernel, 0);
            clSetKernelArg(kernel, 1, sizeof launch, &launch);
            clSetKernelArg(kernel, 2, sizeof counts, &counts);
            size_t local = 256;
            cl_event e;
            err = clEnqueueNDRangeKernel(env->queue, kernel, 1, NULL, &items, &local, 0, NULL, &e);
            if (err != CL_SUCCESS)
                break;
            clEnqueueReadBuffer(env->queue, counts, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL);
            times[launch] = bench_event_seconds(e);
            clReleaseEvent(e);
            nulls += got[0];
            wrong += got[1];
            if (csv)
                fprintf(csv, "%s,%zu,%u,%.9f,%u,%u\n", clheap_allocator_name((clheap_allocator)a), items, launch,
                        times[launch], got[0], got[1]);
        }
        clheap_heap_errors errors = {0}; /* which NULLs were given up on with memory possibly free */
        clheap_heap_read_errors(heap, &errors);
        char what[256] = "";
        clheap_status sound = clheap_heap_check(heap, what, sizeof what);
        clheap_heap_stats stats = {0};
        if (sound == CLHEAP_SUCCESS)
            sound = clheap_heap_calculate_stats(heap, &stats);
        if (err != CL_SUCCESS || wrong || sound != CLHEAP_SUCCESS) {
            printf("  %-12s FAILED: %s%s%ld words overwritten\n", clheap_allocator_name((clheap_allocator)a),
                   err != CL_SUCCESS ? "OpenCL error; " : "", sound != CLHEAP_SUCCESS ? what : "", wrong);
            failures++;
        } else {
            memcpy(sorted, times, (size_t)launches * sizeof *times);
            printf("  %-12s %12.3f %12.3f %12.3f %10.2f %8ld %10u %8ld %12llu\n",
                   clheap_allocator_name((clheap_allocator)a), times[0] * 1e3, bench_median(sorted, launches) * 1e3,
                   times[launches - 1] * 1e3, times[launches - 1] / times[0], nulls, errors.contended, wrong,
                   (unsigned long long)stats.free_chunks);
        }
        clReleaseMemObject(counts);
        clReleaseKernel(kernel);
        clReleaseProgram(program);
        clheap_heap_destroy(heap);
    }
    free(times);
    free(sorted);
    if (csv)
        fclose(csv);
    return failures != 0;
}
