/* clheap-bench: the papers' allocator tests on any OpenCL device.
 * Usage: clheap-bench [--quick] [--cold] [--runs N] [--csv DIR] [--only ALLOCATOR[,...]] [--heap-mib N] [--options STR]
 *                     [--shapes ITEMSxBYTES[,...]] [--churn DEPTH:MAX:ROUNDS:ITEMS[,...]] [--launch-timeout S]
 *                     [--no-warp] [TEST...]
 * --options: extra OpenCL build options for the heaps' programs (an allocator's compile-time
 * tunables, such as -DCLHEAP_BLOCK_FAST_TRIES=8), so a variant needs no rebuild.
 * --shapes: throughput runs only these shapes of its sweep, named as in its CSV (work_items x
 * bytes: 262144xmixed-4K,4096x16), so a variant's rounds on a few shapes take seconds.
 * --churn: churn-mixed's shapes instead of its defaults (bench/bench_churn_mixed.h), e.g.
 * 4:4K:16:65536 (a ring of 4, 16 B - 4 KiB, 16 rounds, 2^16 work-items). --launch-timeout:
 * churn-mixed's limit for one launch (60 s); past it the row says timeout and the process ends.
 * --no-warp: churn-mixed's heaps without warp coalescing (NVIDIA), to tell its paths apart.
 * Tests: cache, throughput, registers, papers (AD, ACD, P), linux, oom, oom-launch, freeheap, churn,
 * realloc (realloc, calloc and aligned_alloc against doing it by hand), churn-mixed (in-kernel
 * churn with a ring of live allocations per work-item). No test
 * named: all of those. compile (build times and binary sizes) runs only when named; named
 * alone, it turns the driver's compile caches off first, so that its builds are cold. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct bench_test {
    const char *name;
    int (*run)(bench_env *env);
} bench_test;

static const bench_test tests[] = {
    {"cache", bench_cache},
    {"throughput", bench_throughput},
    {"registers", bench_registers},
    {"papers", bench_papers},
    {"linux", bench_linux_scalability},
    {"oom", bench_oom},
    {"oom-launch", bench_oom_launch},
    {"freeheap", bench_freeheap},
    {"churn", bench_churn},
    {"realloc", bench_resize},
    {"churn-mixed", bench_churn_mixed},
    {"compile", bench_compile}, /* last: not in the default set (see above) */
};
enum { TEST_COUNT = sizeof tests / sizeof tests[0], DEFAULT_TESTS = TEST_COUNT - 1 };

static int usage(void)
{
    fprintf(stderr, "usage: clheap-bench [--quick] [--cold] [--runs N] [--csv DIR] [--only ALLOCATOR[,...]] [--heap-mib N] "
                    "[--options STR] [--shapes ITEMSxBYTES[,...]]\n"
                    "                    [--churn DEPTH:MAX:ROUNDS:ITEMS[,...]] [--launch-timeout S] [--no-warp] [TEST...]\ntests:");
    for (int i = 0; i < TEST_COUNT; i++)
        fprintf(stderr, " %s", tests[i].name);
    fprintf(stderr, "\n");
    return 2;
}

int main(int argc, char **argv)
{
    /* Line-buffered, so a run killed at its time limit still shows what it measured. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_env env = {0};
    env.runs = 5;
    env.launch_limit_s = 60;
    int selected[TEST_COUNT] = {0}, any_selected = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            env.quick = 1;
        } else if (strcmp(argv[i], "--cold") == 0) {
            env.cold = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            env.runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            env.csv_dir = argv[++i];
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            env.only = argv[++i];
        } else if (strcmp(argv[i], "--heap-mib") == 0 && i + 1 < argc) {
            env.heap_bytes = strtoull(argv[++i], NULL, 10) << 20;
        } else if (strcmp(argv[i], "--options") == 0 && i + 1 < argc) {
            env.build_options = argv[++i];
        } else if (strcmp(argv[i], "--shapes") == 0 && i + 1 < argc) {
            env.shapes = argv[++i];
        } else if (strcmp(argv[i], "--churn") == 0 && i + 1 < argc) {
            env.churn = argv[++i];
        } else if (strcmp(argv[i], "--no-warp") == 0) {
            env.no_warp = 1;
        } else if (strcmp(argv[i], "--launch-timeout") == 0 && i + 1 < argc) {
            env.launch_limit_s = atoi(argv[++i]);
        } else {
            int found = 0;
            for (int t = 0; t < TEST_COUNT; t++)
                if (strcmp(argv[i], tests[t].name) == 0)
                    selected[t] = found = any_selected = 1;
            if (!found)
                return usage();
        }
    }
    if (env.quick && env.runs == 5)
        env.runs = 1;
    if (env.runs < 1 || env.runs > 15 || env.launch_limit_s < 1)
        return usage();

    /* compile alone: cold builds, the caches off before any platform loads (one may hold
     * these programs from an earlier run). Other tests keep the caches, as users do. */
    int named = 0;
    for (int t = 0; t < TEST_COUNT; t++)
        named += selected[t];
    if (named == 1 && selected[TEST_COUNT - 1])
        bench_compile_caches_off();
    BENCH_CHECK(clheap_select_device(&env.platform, &env.device));
    clheap_describe_device(env.device, env.device_name, sizeof env.device_name);
    cl_int err;
    env.context = clCreateContext(NULL, 1, &env.device, NULL, NULL, &err);
    BENCH_CHECK(err);
    env.queue = clCreateCommandQueue(env.context, env.device, CL_QUEUE_PROFILING_ENABLE, &err);
    BENCH_CHECK(err);
    printf("clheap-bench %s on %s%s\n", CLHEAP_VERSION_STRING, env.device_name,
           env.quick ? " (quick mode: numbers are not measurements)" : "");

    int failures = 0;
    for (int t = 0; t < TEST_COUNT; t++)
        if (any_selected ? selected[t] : t < DEFAULT_TESTS)
            failures += tests[t].run(&env) != 0;
    clReleaseCommandQueue(env.queue);
    clReleaseContext(env.context);
    return failures ? 1 : 0;
}
