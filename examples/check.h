/* What the examples share: their error handling (any clheap or OpenCL failure ends the
 * program with the call and its explanation; a library never exits, a demo may), their
 * device, launches, command-line options and clock, and the count of a heap's objects
 * they check. */
#ifndef CLHEAP_EXAMPLES_CHECK_H
#define CLHEAP_EXAMPLES_CHECK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clheap/clheap.h"
#include "fit.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        clheap_status check_status_ = (call);                                              \
        if (check_status_ != CLHEAP_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s\n  -> %s\n", __FILE__, __LINE__, #call,             \
                    clheap_status_string(check_status_));                                  \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

/* Wall-clock seconds, for timing host loops that wait on the queue. */
static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CLHEAP_PROFILE=1 in the environment: a diagnosis of where a program's time goes. Every
 * launch through run_kernel and timed_parallel_do is waited for, and its time summed per
 * kernel: run_kernel's from the queue's profiling events, timed_parallel_do's as the host
 * saw it (the library's helper launches, the block count read back and the kernel); the
 * table goes to stderr at exit. Waiting changes the program's own timings: compare
 * allocators by the table, not by the program's lines. */
typedef struct profile_row {
    char name[64];
    double seconds;
    unsigned launches;
} profile_row;
static profile_row profile_rows[32];

static inline int profiling(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("CLHEAP_PROFILE");
        on = v && strcmp(v, "1") == 0;
    }
    return on;
}

static inline void profile_print(void)
{
    fprintf(stderr, "profile (CLHEAP_PROFILE=1): kernel, launches, ms in all, us a launch\n");
    for (int i = 0; i < 32 && profile_rows[i].launches; i++)
        fprintf(stderr, "  %-28s %8u %10.3f %10.2f\n", profile_rows[i].name, profile_rows[i].launches,
                profile_rows[i].seconds * 1e3, profile_rows[i].seconds * 1e6 / profile_rows[i].launches);
}

static inline void profile_add(cl_kernel kernel, const char *suffix, double seconds)
{
    char name[64] = "";
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 16, name, NULL);
    strcat(name, suffix);
    int i = 0;
    while (i < 31 && profile_rows[i].launches && strcmp(profile_rows[i].name, name))
        i++;
    if (!profile_rows[i].launches) {
        if (i == 0)
            atexit(profile_print);
        snprintf(profile_rows[i].name, sizeof profile_rows[i].name, "%s", name);
    }
    profile_rows[i].seconds += seconds;
    profile_rows[i].launches++;
}

/* The device clheap_select_device picks (CLHEAP_PLATFORM, CLHEAP_DEVICE), a context and
 * an in-order queue on it (profiling with CLHEAP_PROFILE=1); name gets the device's
 * description. */
static inline void open_device(cl_device_id *device, cl_context *context, cl_command_queue *queue, char *name,
                               size_t len)
{
    cl_platform_id platform;
    CHECK(clheap_select_device(&platform, device));
    clheap_describe_device(*device, name, len);
    cl_int err;
    *context = clCreateContext(NULL, 1, device, NULL, NULL, &err);
    CHECK(err);
    *queue = clCreateCommandQueue(*context, *device, profiling() ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    CHECK(err);
}

/* Whether device runs allocator a (clheap_device_runs); if not, says so on the line the
 * workload's result would take, for --allocator all to go on with the next. */
static inline int device_runs(cl_device_id device, clheap_allocator a)
{
    if (clheap_device_runs(device, a))
        return 1;
    printf("%-12s refused on this device (clheap_device_runs)\n", clheap_allocator_name(a));
    return 0;
}

/* Build options for the examples' programs (--options "..."): a device macro of
 * cl/clheap_config.h set for the program's clheap_malloc and clheap_free, as
 * docs/tuning.md describes, so a tuning can be tried on a workload without a rebuild. */
static const char *example_options = "";

/* Builds source with the heap's allocator and example_options; on failure prints the
 * build log and exits. */
static inline cl_program build_or_exit(clheap_heap *heap, const char *source)
{
    static char log[16384];
    cl_program program = NULL;
    clheap_status built = clheap_heap_build_program(heap, 1, &source, example_options, &program, log, sizeof log);
    if (built != CLHEAP_SUCCESS)
        fprintf(stderr, "%s\n", log);
    CHECK(built);
    return program;
}

static inline cl_kernel kernel_or_exit(cl_program program, const char *name)
{
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    CHECK(err);
    return kernel;
}

static inline cl_mem buffer_or_exit(cl_context context, cl_mem_flags flags, size_t bytes, void *host)
{
    cl_int err;
    cl_mem buffer = clCreateBuffer(context, flags, bytes, host, &err);
    CHECK(err);
    return buffer;
}

/* Launches kernel over `items` work-items in groups of 64 (none if items is 0). */
static inline void run_kernel(cl_command_queue queue, cl_kernel kernel, size_t items)
{
    size_t local = 64, global = (items + local - 1) / local * local;
    if (!global)
        return;
    cl_event e = NULL;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, profiling() ? &e : NULL));
    if (!e)
        return;
    cl_ulong start = 0, end = 0;
    CHECK(clWaitForEvents(1, &e));
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    clReleaseEvent(e);
    profile_add(kernel, "", (double)(end - start) * 1e-9);
}

/* clheap_heap_parallel_do (kernel's blocks argument at blocks_arg, groups of 64). */
static inline void timed_parallel_do(clheap_heap *heap, cl_command_queue queue, uint32_t class_index,
                                     cl_kernel kernel, cl_uint blocks_arg)
{
    double t0 = 0;
    if (profiling()) {
        CHECK(clFinish(queue));
        t0 = now();
    }
    CHECK(clheap_heap_parallel_do(heap, class_index, kernel, blocks_arg, 0));
    if (profiling()) {
        CHECK(clFinish(queue));
        profile_add(kernel, " (parallel_do)", now() - t0);
    }
}

/* Sets `count` arguments of kernel, given as ARG(x) pairs: from argument 1 on, after the
 * heap's as argument 0, or from argument 0 if heap is NULL. */
static inline void set_args(clheap_heap *heap, cl_kernel kernel, int count, ...)
{
    if (heap)
        CHECK(clheap_heap_set_kernel_arg(heap, kernel, 0));
    va_list ap;
    va_start(ap, count);
    for (int i = 0; i < count; i++) {
        size_t size = va_arg(ap, size_t);
        const void *value = va_arg(ap, const void *);
        CHECK(clSetKernelArg(kernel, (cl_uint)(i + (heap != NULL)), size, value));
    }
    va_end(ap);
}
#define ARG(x) sizeof(x), (const void *)&(x)

/* Releases a program's buffers and kernels (NULL entries are skipped). */
static inline void release_all(cl_mem *buffers, size_t nbuffers, cl_kernel *kernels, size_t nkernels)
{
    for (size_t i = 0; i < nbuffers; i++)
        if (buffers[i])
            clReleaseMemObject(buffers[i]);
    for (size_t i = 0; i < nkernels; i++)
        if (kernels[i])
            clReleaseKernel(kernels[i]);
}

/* The value after option `name`, or fallback. */
static inline const char *arg_str(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return fallback;
}

static inline int arg_int(int argc, char **argv, const char *name, int fallback)
{
    const char *value = arg_str(argc, argv, name, NULL);
    return value ? atoi(value) : fallback;
}

/* Whether the flag `name` is given. */
static inline int arg_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

/* --fit's range from --fit-known K (default 0), --fit-from N (default 64, or 2K after a
 * K, at most L) and --fit-to L (default `largest`): 0 unless 8 <= N <= L <= largest and
 * K < N. */
static inline int fit_range_args(int argc, char **argv, uint32_t largest, fit_range *range)
{
    long known = arg_int(argc, argv, "--fit-known", 0), last = arg_int(argc, argv, "--fit-to", (int)largest);
    const char *from = arg_str(argc, argv, "--fit-from", NULL);
    long first = from ? atoi(from) : 0;
    if (!first)
        first = known ? 2 * known : 64;
    if (!from && first > last)
        first = last;
    if (known < 0 || first < 8 || first > last || last > (long)largest || known >= first)
        return 0;
    *range = (fit_range){(uint32_t)known, (uint32_t)first, (uint32_t)last};
    return 1;
}

/* Objects a heap holds: its classes' objects and large allocations (BlockAlloc,
 * TierAlloc: their used slots also count slots that runs hold back), else its chunks. */
static inline unsigned long long live_objects(const clheap_heap_stats *s)
{
    if (!s->class_count)
        return s->used_chunks;
    unsigned long long n = s->large_count;
    for (uint32_t c = 0; c < s->class_count; c++)
        n += s->class_objects[c];
    return n;
}

/* Objects the heap holds, from its own walk, once TierAlloc's runs have given back the
 * slots they held for its fast path; UINT64_MAX if the walk finds the heap unsound
 * (the caller's clheap_heap_check says why). */
static inline uint64_t heap_objects(clheap_heap *heap)
{
    clheap_heap_stats s;
    CHECK(clheap_heap_trim(heap));
    clheap_status walked = clheap_heap_calculate_stats(heap, &s);
    if (walked == CLHEAP_ERROR_HEAP_CORRUPT)
        return UINT64_MAX;
    CHECK(walked);
    return live_objects(&s);
}

/* After a program has freed every object: the heap must hold none, count no bad free
 * and pass its check. Otherwise says what is wrong, under `who`, and returns 0. */
static inline int heap_empty_and_sound(clheap_heap *heap, const char *who)
{
    uint64_t left = heap_objects(heap);
    char what[256] = "";
    clheap_status sound = clheap_heap_check(heap, what, sizeof what);
    clheap_heap_errors errors; /* its status names the first counter set: NULLs are expected here */
    clheap_status read = clheap_heap_read_errors(heap, &errors);
    if (read < 0)
        CHECK(read);
    uint32_t bad = errors.double_free + errors.free_not_chunk + errors.free_outside + errors.bad_size;
    if (!left && !bad && sound == CLHEAP_SUCCESS)
        return 1;
    printf("%s: with every object freed the heap holds %llu objects, %u bad frees or sizes%s%s\n", who,
           left == UINT64_MAX ? 0ull : (unsigned long long)left, bad,
           sound == CLHEAP_SUCCESS ? "" : "; heap check: ", what);
    return 0;
}

#endif
