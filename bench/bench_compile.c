/* compile: what building costs a user (issue 46). For every allocator: the heap's own
 * program (clheap_heap_create, timed whole: its build is nearly all of it), then a user
 * kernel with 1, 4 and 8 malloc + free sites (--quick: 1) built with
 * clheap_heap_build_program, timed, with its binary's size (on NVIDIA the PTX text; with
 * --csv the binaries are saved beside the CSV).
 * Cold builds need the driver's caches off before the platform loads: main.c calls
 * bench_compile_caches_off (CUDA_CACHE_DISABLE=1, POCL_KERNEL_CACHE=0, and clheap's own
 * CLHEAP_PROGRAM_CACHE=off) when this test runs alone; otherwise, or on a platform whose
 * cache it does not know, the rows say "warm" or "unknown", not "cold". */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The probe: per site p = malloc(16 * (id % k + 1)); if (p) { use; free(p); }, each
 * site with its own k so that the compiler cannot merge them. */
static char *user_kernel(unsigned sites)
{
    size_t len = 256 + 160u * sites;
    char *src = malloc(len);
    if (!src)
        return NULL;
    int at = snprintf(src, len, "__kernel void user_sites(__global clheap_heap *heap, __global uint *out) {\n"
                                "    uint id = get_global_id(0), sum = 0u;\n");
    for (unsigned s = 0; s < sites; s++)
        at += snprintf(src + at, len - (size_t)at,
                       "    { __global uint *p = clheap_malloc(heap, 16u * (id %% %uu + 1u));\n"
                       "      if (p) { p[0] = id; sum += p[0]; clheap_free(heap, p); } }\n",
                       s + 2u);
    snprintf(src + at, len - (size_t)at, "    out[id] = sum;\n}\n");
    return src;
}

/* The compile caches this test knows: a platform (by a part of its name), the variable
 * that turns its cache off, and the value that does. */
static const struct {
    const char *platform, *variable, *off;
} caches[] = {
    {"NVIDIA", "CUDA_CACHE_DISABLE", "1"},
    {"Portable Computing Language", "POCL_KERNEL_CACHE", "0"},
};
enum { CACHE_COUNT = sizeof caches / sizeof caches[0] };

void bench_compile_caches_off(void)
{
    for (int i = 0; i < CACHE_COUNT; i++)
        setenv(caches[i].variable, caches[i].off, 1);
    setenv("CLHEAP_PROGRAM_CACHE", "off", 0); /* clheap's own, on every platform, unless set */
}

/* Whether this process's builds are cold: the platform's cache variable as
 * bench_compile_caches_off set it (or the user did). */
static const char *build_state(bench_env *env)
{
    char name[256] = "";
    clGetPlatformInfo(env->platform, CL_PLATFORM_NAME, sizeof name, name, NULL);
    for (int i = 0; i < CACHE_COUNT; i++) {
        if (!strstr(name, caches[i].platform))
            continue;
        const char *v = getenv(caches[i].variable), *own = getenv("CLHEAP_PROGRAM_CACHE");
        return v && strcmp(v, caches[i].off) == 0 && own && strcmp(own, "off") == 0 ? "cold" : "warm";
    }
    return "unknown";
}

/* Seconds to build `sites` sites against heap (and the binary's bytes, saved as
 * compile-<allocator>-<sites>.bin beside the CSV), or -1. */
static double user_build(const bench_env *env, clheap_heap *heap, const char *allocator, unsigned sites,
                         size_t *binary)
{
    char *src = user_kernel(sites);
    static char log[16384];
    cl_program program = NULL;
    *binary = 0;
    double t0 = bench_now_seconds();
    const char *sources[] = {src};
    clheap_status st = src ? clheap_heap_build_program(heap, 1, sources, env->build_options, &program, log, sizeof log)
                           : CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    double t = bench_now_seconds() - t0;
    free(src);
    if (st != CLHEAP_SUCCESS)
        return -1.0;
    char name[128];
    snprintf(name, sizeof name, "compile-%s-%u.bin", allocator, sites);
    *binary = bench_save_binary(env, program, name);
    clReleaseProgram(program);
    return t;
}

int bench_compile(bench_env *env)
{
    static const unsigned site_counts[] = {1, 4, 8};
    unsigned counts = env->quick ? 1u : 3u;
    const char *state = build_state(env);
    FILE *csv = bench_csv_open(env, "compile", "allocator,what,sites,seconds,binary_bytes,build");
    printf("compile: build seconds (%s builds%s), user kernel binary bytes\n", state,
           strcmp(state, "cold") ? "; run `clheap-bench compile` alone for cold ones" : "");
    printf("  %-17s %10s", "allocator", "heap");
    for (unsigned i = 0; i < counts; i++)
        printf("  %2u site%s %12s", site_counts[i], site_counts[i] > 1 ? "s" : " ", "bytes");
    printf("\n");
    int failures = 0;
    for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++) {
        /* FreeHeap too (bench_wants leaves it out of the concurrent tests). */
        int wanted = a == CLHEAP_FREE_HEAP ? !env->only || strstr(env->only, "FreeHeap") != NULL
                                           : bench_wants(env, (clheap_allocator)a);
        if (!wanted)
            continue;
        const char *name = clheap_allocator_name((clheap_allocator)a);
        clheap_heap_config config = clheap_heap_config_default();
        config.allocator = (clheap_allocator)a;
        config.size_bytes = 16u << 20;
        clheap_heap *heap;
        double t0 = bench_now_seconds();
        clheap_status st = clheap_heap_create(env->context, env->device, env->queue, &config, &heap);
        double create = bench_now_seconds() - t0;
        if (st != CLHEAP_SUCCESS) {
            printf("  %-17s heap: %s\n", name, clheap_status_string(st));
            failures++;
            continue;
        }
        printf("  %-17s %10.3f", name, create);
        if (csv)
            fprintf(csv, "%s,heap,0,%.6f,,%s\n", name, create, state);
        for (unsigned i = 0; i < counts; i++) {
            size_t bytes;
            double t = user_build(env, heap, name, site_counts[i], &bytes);
            failures += t < 0 || bytes == 0;
            printf("  %8.3f %12zu", t, bytes);
            if (csv)
                fprintf(csv, "%s,user,%u,%.6f,%zu,%s\n", name, site_counts[i], t, bytes, state);
        }
        printf("\n");
        clheap_heap_destroy(heap);
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}
