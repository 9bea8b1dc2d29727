/* Built by install_consumer.sh against an installed clheap: a kernel that includes
 * "clheap.cl" from <prefix>/share/clheap/cl with -I, as users' kernels do. */
#include <stdio.h>
#include <string.h>

#include <clheap/clheap.h>

static const char *source =
    "#include \"clheap.cl\"\n"
    "__kernel void roundtrip(__global clheap_heap *heap, __global uint *out) {\n"
    "    __global uint *p = clheap_malloc(heap, 40);\n"
    "    out[0] = clheap_unit_of(heap, p);\n"
    "    if (p) { p[9] = 7u; out[1] = p[9]; clheap_free(heap, p); }\n"
    "}\n";

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    cl_platform_id platform;
    cl_device_id device;
    if (clheap_select_device(&platform, &device) != CLHEAP_SUCCESS)
        return 1;
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = 1 << 20;
    clheap_heap *heap;
    if (clheap_heap_create(context, device, queue, &config, &heap) != CLHEAP_SUCCESS)
        return 1;
    char options[512];
    clheap_heap_build_options(heap, options, sizeof options);
    strncat(options, " -I", sizeof options - strlen(options) - 1);
    strncat(options, argv[1], sizeof options - strlen(options) - 1);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (clBuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "build with %s failed:\n%s\n", options, log);
        return 1;
    }
    cl_kernel kernel = clCreateKernel(program, "roundtrip", &err);
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &err);
    clheap_heap_set_kernel_arg(heap, kernel, 0);
    clSetKernelArg(kernel, 1, sizeof out, &out);
    size_t one = 1;
    clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &one, NULL, 0, NULL, NULL);
    cl_uint result[2] = {0, 0};
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL);
    char what[256];
    int ok = result[0] != 0 && result[1] == 7 && clheap_heap_check(heap, what, sizeof what) == CLHEAP_SUCCESS &&
             clheap_heap_read_errors(heap, NULL) == CLHEAP_SUCCESS;
    printf("kernel including clheap.cl via -I: %s\n", ok ? "OK" : "FAILED");
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clheap_heap_destroy(heap);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return ok ? 0 : 1;
}
