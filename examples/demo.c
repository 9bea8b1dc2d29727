/* clheap demo: the three ways clheap hands out memory, in one program, each checked.
 *  1. the host buffer cache: an iterative OpenCL program (a stencil-like loop that
 *     allocates its temporaries inside the loop body, as Futhark-generated code does);
 *  2. host-enqueued heap allocations: the host asks the device heap for memory without
 *     waiting, a kernel fills it, another checks and the host enqueues the frees;
 *  3. clheap_malloc / clheap_free inside a kernel, with the default allocator.
 * Prints what each path did. Runs on the device clheap_select_device picks
 * (CLHEAP_PLATFORM / CLHEAP_DEVICE override it). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static const char *kernel_source =
    "__kernel void smooth(__global const float *in, __global float *out, int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    float left = in[i > 0 ? i - 1 : i], right = in[i + 1 < n ? i + 1 : i];\n"
    "    out[i] = 0.25f * left + 0.5f * in[i] + 0.25f * right;\n"
    "}\n";

/* Paths 2 and 3, built with the heap's allocator (clheap_heap_build_program). */
static const char *heap_source =
    "/* Entry i of the table was allocated by the host: i + 1 words, each set to i. */\n"
    "__kernel void fill(__global clheap_heap *heap, __global const uint *table) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint *p = clheap_pointer(heap, table[i]);\n"
    "    for (uint w = 0; p && w <= i % 64u; w++) p[w] = i;\n"
    "}\n"
    "__kernel void count_wrong(__global clheap_heap *heap, __global const uint *table, __global uint *wrong) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint *p = clheap_pointer(heap, table[i]);\n"
    "    if (!p) { atomic_inc(wrong); return; }\n"
    "    for (uint w = 0; w <= i % 64u; w++) if (p[w] != i) atomic_inc(wrong);\n"
    "}\n"
    "/* Each work-item keeps a data-dependent number of values in the heap for a while. */\n"
    "__kernel void sums(__global clheap_heap *heap, __global uint *out) {\n"
    "    uint i = get_global_id(0), n = 1u + i % 100u;\n"
    "    __global uint *p = clheap_malloc(heap, n * sizeof(uint));\n"
    "    if (!p) { out[i] = 0xffffffffu; return; }\n"
    "    for (uint k = 0; k < n; k++) p[k] = k;\n"
    "    uint sum = 0;\n"
    "    for (uint k = 0; k < n; k++) sum += p[k];\n"
    "    clheap_free(heap, p);\n"
    "    out[i] = sum;\n"
    "}\n";

/* Paths 2 and 3 on one device heap with the default allocator; the host buffers they
 * use come from the cache. Returns whether every check held. */
static int heap_paths(cl_context context, cl_device_id device, cl_command_queue queue, clheap_cache *cache)
{
    enum { REQUESTS = 4096, ITEMS = 1 << 16 };
    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = 64u << 20;
    clheap_heap *heap = NULL;
    CHECK(clheap_heap_create(context, device, queue, &config, &heap));
    cl_program program = build_or_exit(heap, heap_source);
    cl_int err;
    cl_kernel fill = clCreateKernel(program, "fill", &err);
    CHECK(err);
    cl_kernel count_wrong = clCreateKernel(program, "count_wrong", &err);
    CHECK(err);
    cl_kernel sums = clCreateKernel(program, "sums", &err);
    CHECK(err);
    cl_mem table = NULL, sizes = NULL, wrong = NULL, out = NULL;
    CHECK(clheap_cache_alloc(cache, REQUESTS * sizeof(cl_uint), "handle-table", &table));
    CHECK(clheap_cache_alloc(cache, REQUESTS * sizeof(cl_uint), "sizes", &sizes));
    CHECK(clheap_cache_alloc(cache, sizeof(cl_uint), "wrong", &wrong));
    CHECK(clheap_cache_alloc(cache, ITEMS * sizeof(cl_uint), "sums", &out));

    /* 2. The host asks for REQUESTS allocations of 4 - 256 bytes; nothing waits until the
     *    check's result is read. */
    static cl_uint size_of[REQUESTS];
    uint64_t asked = 0;
    for (cl_uint i = 0; i < REQUESTS; i++)
        asked += size_of[i] = 4u * (1u + i % 64u);
    cl_uint zero = 0, wrong_words = 1;
    CHECK(clEnqueueWriteBuffer(queue, sizes, CL_FALSE, 0, sizeof size_of, size_of, 0, NULL, NULL));
    CHECK(clEnqueueWriteBuffer(queue, wrong, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL));
    CHECK(clheap_heap_enqueue_malloc(heap, queue, REQUESTS, 0, sizes, table, 0, 0, NULL, NULL));
    size_t global = REQUESTS;
    CHECK(clheap_heap_set_kernel_arg(heap, fill, 0));
    CHECK(clSetKernelArg(fill, 1, sizeof table, &table));
    CHECK(clEnqueueNDRangeKernel(queue, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clheap_heap_set_kernel_arg(heap, count_wrong, 0));
    CHECK(clSetKernelArg(count_wrong, 1, sizeof table, &table));
    CHECK(clSetKernelArg(count_wrong, 2, sizeof wrong, &wrong));
    CHECK(clEnqueueNDRangeKernel(queue, count_wrong, 1, NULL, &global, NULL, 0, NULL, NULL));
    clheap_heap_stats during;
    CHECK(clheap_heap_calculate_stats(heap, &during));
    CHECK(clheap_heap_enqueue_free(heap, queue, REQUESTS, table, 0, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, wrong, CL_TRUE, 0, sizeof wrong_words, &wrong_words, 0, NULL, NULL));
    printf("host-enqueued: %d allocations (%llu bytes asked) filled by one kernel, checked by another: "
           "%u wrong words; %llu objects live before the enqueued frees\n",
           REQUESTS, (unsigned long long)asked, wrong_words, live_objects(&during));

    /* 3. Every work-item mallocs 1 - 100 values inside the kernel, sums them and frees. */
    static cl_uint got[ITEMS];
    CHECK(clheap_heap_set_kernel_arg(heap, sums, 0));
    CHECK(clSetKernelArg(sums, 1, sizeof out, &out));
    global = ITEMS;
    CHECK(clEnqueueNDRangeKernel(queue, sums, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    cl_uint bad_sums = 0;
    uint64_t kept = 0;
    for (cl_uint i = 0; i < ITEMS; i++) {
        cl_uint n = 1u + i % 100u;
        bad_sums += got[i] != n * (n - 1u) / 2u;
        kept += n * sizeof(cl_uint);
    }
    clheap_heap_errors errors;
    clheap_status heap_errors = clheap_heap_read_errors(heap, &errors);
    clheap_heap_stats after;
    CHECK(clheap_heap_calculate_stats(heap, &after));
    char what[256] = "";
    clheap_status sound = clheap_heap_check(heap, what, sizeof what);
    printf("in-kernel (%s): %d work-items each kept 1 - 100 values (%llu bytes in all) and freed them: "
           "%u wrong sums, %u NULL; heap check: %s\n",
           clheap_allocator_name(clheap_heap_allocator(heap)), ITEMS, (unsigned long long)kept, bad_sums,
           errors.out_of_memory, sound == CLHEAP_SUCCESS ? "sound" : what);
    static char json[8192];
    CHECK(clheap_heap_stats_json(&after, json, sizeof json, NULL));
    printf("heap stats after both: %llu objects live; %s\n", live_objects(&after), json);

    CHECK(clheap_cache_free(cache, table));
    CHECK(clheap_cache_free(cache, sizes));
    CHECK(clheap_cache_free(cache, wrong));
    CHECK(clheap_cache_free(cache, out));
    clReleaseKernel(fill);
    clReleaseKernel(count_wrong);
    clReleaseKernel(sums);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
    return wrong_words == 0 && bad_sums == 0 && heap_errors == CLHEAP_SUCCESS && sound == CLHEAP_SUCCESS &&
           live_objects(&during) == REQUESTS && live_objects(&after) == 0;
}


int main(void)
{
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char name[512];
    open_device(&device, &context, &queue, name, sizeof name);
    printf("clheap %s demo on %s\n", CLHEAP_VERSION_STRING, name);

    cl_int err;
    cl_program program = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
    cl_kernel smooth = clCreateKernel(program, "smooth", &err);
    CHECK(err);

    clheap_cache *cache = NULL;
    CHECK(clheap_cache_create(context, device, NULL, &cache));

    enum { N = 1 << 16, STEPS = 200 };
    const size_t bytes = N * sizeof(float);
    float *host = malloc(bytes);
    for (int i = 0; i < N; i++)
        host[i] = (i == N / 2) ? 1000.0f : 0.0f;

    cl_mem state = NULL;
    CHECK(clheap_cache_alloc(cache, bytes, "state", &state));
    CHECK(clEnqueueWriteBuffer(queue, state, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    for (int step = 0; step < STEPS; step++) {
        /* A fresh output buffer every step: the cache hands back last step's input. */
        cl_mem next = NULL;
        CHECK(clheap_cache_alloc(cache, bytes, "step-output", &next));
        int n = N;
        CHECK(clSetKernelArg(smooth, 0, sizeof state, &state));
        CHECK(clSetKernelArg(smooth, 1, sizeof next, &next));
        CHECK(clSetKernelArg(smooth, 2, sizeof n, &n));
        size_t global = N;
        CHECK(clEnqueueNDRangeKernel(queue, smooth, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clheap_cache_free(cache, state)); /* safe: the in-order queue orders reuse */
        state = next;
    }
    CHECK(clEnqueueReadBuffer(queue, state, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    double total = 0;
    for (int i = 0; i < N; i++)
        total += host[i];
    printf("after %d smoothing steps the mass is %.3f (expected 1000.000)\n", STEPS, total);

    clheap_cache_stats s;
    CHECK(clheap_cache_get_stats(cache, &s));
    printf("%d buffer allocations: %llu served from the cache, %llu from the driver\n",
           STEPS + 1, (unsigned long long)s.hits, (unsigned long long)s.driver_allocs);
    char json[1024];
    CHECK(clheap_cache_stats_json(cache, json, sizeof json, NULL));
    printf("cache stats: %s\n", json);

    CHECK(clheap_cache_free(cache, state));
    int heap_ok = heap_paths(context, device, queue, cache);
    CHECK(clheap_cache_destroy(cache));
    free(host);
    clReleaseKernel(smooth);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    int ok = total > 999.0 && total < 1001.0 && s.driver_allocs <= 3 && heap_ok;
    printf("%s\n", ok ? "demo OK" : "demo FAILED");
    return ok ? 0 : 1;
}
