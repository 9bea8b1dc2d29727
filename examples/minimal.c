/* The README's example: every work-item mallocs a data-dependent array in a kernel,
 * fills and sums it, and frees it. Build: cc minimal.c $(pkg-config --cflags --libs clheap) */
#include <stdio.h>

#include <clheap/clheap.h>

static const char *source =
    "__kernel void sums(__global clheap_heap *heap, __global uint *out) {\n"
    "    uint i = get_global_id(0), n = 1u + i % 100u;\n"
    "    __global uint *p = clheap_malloc(heap, n * sizeof(uint));\n"
    "    if (!p) { out[i] = 0xffffffffu; return; }          /* NULL: heap full */\n"
    "    for (uint k = 0; k < n; k++) p[k] = k;\n"
    "    uint s = 0;\n"
    "    for (uint k = 0; k < n; k++) s += p[k];\n"
    "    out[i] = s;\n"
    "    clheap_free(heap, p);\n"
    "}\n";

int main(void)
{
    enum { N = 4096 };
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clheap_select_device(&platform, &device) != CLHEAP_SUCCESS)
        return 1;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);

    clheap_heap_config config = clheap_heap_config_default(); /* TierAlloc, 64 MiB */
    clheap_heap *heap;
    clheap_status status = clheap_heap_create(context, device, queue, &config, &heap);
    cl_program program = NULL;
    char log[4096];
    if (status == CLHEAP_SUCCESS)
        status = clheap_heap_build_program(heap, 1, &source, "", &program, log, sizeof log);
    if (status != CLHEAP_SUCCESS) {
        const char *detail = status == CLHEAP_ERROR_BUILD_FAILED ? log : "";
        fprintf(stderr, "%s\n%s\n", clheap_status_string(status), detail);
        return 1;
    }
    cl_kernel kernel = clCreateKernel(program, "sums", &err);
    cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, N * sizeof(cl_uint), NULL, &err);
    clheap_heap_set_kernel_arg(heap, kernel, 0);
    clSetKernelArg(kernel, 1, sizeof out, &out);
    size_t global = N;
    clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    cl_uint sums[N];
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL);

    int wrong = 0;
    for (cl_uint i = 0; i < N; i++) {
        cl_uint n = 1 + i % 100;
        wrong += sums[i] != n * (n - 1) / 2;
    }
    char what[256];
    status = clheap_heap_check(heap, what, sizeof what); /* reads the heap back, verifies it */
    const char *verdict = status == CLHEAP_SUCCESS ? "sound" : what;
    printf("%d of %d sums wrong; heap check: %s\n", wrong, N, verdict);

    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return wrong || status != CLHEAP_SUCCESS;
}
