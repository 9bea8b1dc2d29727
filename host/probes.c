/* Device behaviours no query reports, measured once per device: by one small program of
 * two kernels, or on NVIDIA by whether two programs of inline PTX build (host/probes.h
 * says what each answer means and what it changes). */
#include "probes.h"

#include <pthread.h>
#include <string.h>

/* Work-items of one work-group that make different numbers of fences, each counting
 * its own: where a fence is a work-group barrier (Mesa 22.3's llvmpipe), those past the
 * fences the others never reach stop there and their count falls short.
 * One work-item that loops LOOP_PROBE_ITERATIONS times, each iteration a load of a
 * private volatile (no compiler counts the loop in closed form; no global memory's
 * latency a turn on a GPU): where the device counts a work-item's loop iterations
 * against one budget and then ends each loop after its first iteration (gallivm's
 * LP_MAX_TGSI_LOOP_ITERATIONS, 65,535, shared by every loop of the kernel), it counts
 * fewer. */
static const char *probe_source =
    "__kernel void fences(__global uint *out) {\n"
    "    uint l = get_local_id(0), n = 0;\n"
    "    for (uint i = 0; i < l; i++) {\n"
    "        read_mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "        n++;\n"
    "    }\n"
    "    out[l] = n + 1;\n"
    "}\n"
    "__kernel void loops(__global uint *out, uint iterations) {\n"
    "    volatile uint stop = 0;\n"
    "    uint n = 0;\n"
    "    for (uint i = 0; i < iterations; i++) {\n"
    "        if (stop) break;\n"
    "        n++;\n"
    "    }\n"
    "    out[0] = n;\n"
    "}\n";
enum { FENCE_PROBE_ITEMS = 64, LOOP_PROBE_ITERATIONS = 1 << 17, PROBED_DEVICES = 16 };

/* Runs kernel `name` of probe over items work-items (one group) with out as its first
 * argument (and `iterations` as its second where nonzero); out comes back. */
static cl_int run_probe(cl_context context, cl_device_id device, cl_program probe, const char *name, size_t items,
                        cl_uint iterations, cl_uint *out, size_t words)
{
    cl_int err;
    cl_kernel kernel = clCreateKernel(probe, name, &err);
    cl_command_queue queue = err == CL_SUCCESS ? clCreateCommandQueue(context, device, 0, &err) : NULL;
    cl_mem buffer = err == CL_SUCCESS ? clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                                       words * sizeof *out, out, &err) : NULL;
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    if (err == CL_SUCCESS && iterations)
        err = clSetKernelArg(kernel, 1, sizeof iterations, &iterations);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, &items, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, words * sizeof *out, out, 0, NULL, NULL);
    if (buffer)
        clReleaseMemObject(buffer);
    if (queue)
        clReleaseCommandQueue(queue);
    if (kernel)
        clReleaseKernel(kernel);
    return err;
}

/* 1 if the fence probe finished and some work-item's count fell short. */
static int probe_fences(cl_context context, cl_device_id device, cl_program probe)
{
    size_t max_group = 0;
    clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL);
    size_t items = max_group < FENCE_PROBE_ITEMS ? max_group : FENCE_PROBE_ITEMS;
    cl_uint out[FENCE_PROBE_ITEMS] = {0};
    if (items < 2 || run_probe(context, device, probe, "fences", items, 0, out, FENCE_PROBE_ITEMS) != CL_SUCCESS)
        return 0;
    int short_count = 0;
    for (size_t l = 0; l < items; l++)
        short_count |= out[l] != l + 1u;
    return short_count;
}

/* The iterations the loop probe counted, if fewer than it asked for; else 0. */
static unsigned probe_loops(cl_context context, cl_device_id device, cl_program probe)
{
    cl_uint out[1] = {0};
    if (run_probe(context, device, probe, "loops", 1, LOOP_PROBE_ITERATIONS, out, 1) != CL_SUCCESS)
        return 0;
    return out[0] < LOOP_PROBE_ITERATIONS ? out[0] : 0u;
}

int clheap_device_is_nvidia(cl_device_id device)
{
    char platform_name[256] = "";
    cl_platform_id platform = NULL;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, NULL);
    return strstr(platform_name, "NVIDIA") != NULL;
}

/* The inline PTX that warp coalescing uses, in a kernel of its own: if this builds, the
 * allocator's PTX path will (sm_70 and later). */
static const char *ptx_probe_source =
    "__kernel void probe(__global uint *out) {\n"
    "    uint m, l, r, r2, b, s;\n"
    "    asm volatile(\"activemask.b32 %0;\" : \"=r\"(m));\n"
    "    asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(l));\n"
    "    asm volatile(\"match.any.sync.b32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(l), \"r\"(m));\n"
    "    asm volatile(\"match.any.sync.b64 %0, %1, %2;\" : \"=r\"(r2) : \"l\"((ulong)l), \"r\"(m));\n"
    "    asm volatile(\"{ .reg .pred q; setp.ne.s32 q, %1, 0; vote.sync.ballot.b32 %0, q, %2; }\"\n"
    "                 : \"=r\"(b) : \"r\"(l), \"r\"(m));\n"
    "    r ^= r2 ^ b;\n"
    "    asm volatile(\"bar.warp.sync %0;\" ::\"r\"(m));\n"
    "    asm volatile(\"shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;\" : \"=r\"(s) : \"r\"(r), \"r\"(0u), \"r\"(m));\n"
    "    asm volatile(\"fence.sc.gpu;\" ::: \"memory\");\n"
    "    out[get_global_id(0)] = s;\n"
    "}\n";

/* The warp reduction the coalesced free uses where it exists (sm_80 and later). */
static const char *redux_probe_source =
    "__kernel void probe(__global uint *out) {\n"
    "    uint m, r;\n"
    "    asm volatile(\"activemask.b32 %0;\" : \"=r\"(m));\n"
    "    asm volatile(\"redux.sync.or.b32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(out[0]), \"r\"(m));\n"
    "    out[get_global_id(0)] = r;\n"
    "}\n";

static int probe_builds(cl_context context, cl_device_id device, const char *source)
{
    cl_int err;
    cl_program probe = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    if (err != CL_SUCCESS)
        return 0;
    int ok = clBuildProgram(probe, 1, &device, "", NULL, NULL) == CL_SUCCESS;
    clReleaseProgram(probe);
    return ok;
}

/* clheap_probed.ptx_level on an NVIDIA device: builds only, nothing runs. */
static int ptx_level(cl_context context, cl_device_id device)
{
    if (!probe_builds(context, device, ptx_probe_source))
        return 0;
    return probe_builds(context, device, redux_probe_source) ? 2 : 1;
}

/* In context (or a context of its own): on NVIDIA builds the PTX probes; elsewhere
 * builds the probe program and runs both its kernels. */
static clheap_probed probe(cl_context context, cl_device_id device)
{
    clheap_probed answers = {0, 0, 0};
    cl_int err = CL_SUCCESS;
    cl_context own = context ? NULL : clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return answers;
    cl_context in = context ? context : own;
    if (clheap_device_is_nvidia(device)) {
        answers.ptx_level = ptx_level(in, device);
    } else {
        cl_program program = clCreateProgramWithSource(in, 1, &probe_source, NULL, &err);
        if (err == CL_SUCCESS && clBuildProgram(program, 1, &device, "", NULL, NULL) == CL_SUCCESS) {
            answers.fences_are_barriers = probe_fences(in, device, program);
            answers.loop_limit = probe_loops(in, device, program);
        }
        if (err == CL_SUCCESS)
            clReleaseProgram(program);
    }
    if (own)
        clReleaseContext(own);
    return answers;
}

clheap_probed clheap_probe_device(cl_context context, cl_device_id device)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static cl_device_id probed[PROBED_DEVICES];
    static clheap_probed answers[PROBED_DEVICES];
    static size_t count;
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < count && probed[i] != device)
        i++;
    clheap_probed found = i < count ? answers[i] : probe(context, device);
    if (i == count && count < PROBED_DEVICES) {
        probed[count] = device;
        answers[count++] = found;
    }
    pthread_mutex_unlock(&lock);
    return found;
}
