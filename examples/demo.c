/* clheap demo: an iterative OpenCL program (a stencil-like loop that allocates its
 * temporaries inside the loop body, as Futhark-generated code does) served by the host
 * buffer cache. Prints what the cache saved. Runs on the device clheap_select_device
 * picks (CLHEAP_PLATFORM / CLHEAP_DEVICE override it). */
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


int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    CHECK(clheap_select_device(&platform, &device));
    char name[512];
    clheap_describe_device(device, name, sizeof name);
    printf("clheap %s demo on %s\n", CLHEAP_VERSION_STRING, name);

    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err);
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
    CHECK(clheap_cache_destroy(cache));
    free(host);
    clReleaseKernel(smooth);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    int ok = total > 999.0 && total < 1001.0 && s.driver_allocs <= 3;
    printf("%s\n", ok ? "demo OK" : "demo FAILED");
    return ok ? 0 : 1;
}
