/* Host cache benchmark: a Futhark-like loop of alloc/free over 20 allocation sites whose
 * sizes span 4 KiB - 64 MiB (each site's size wobbles by up to 1/8 between iterations),
 * served by clheap_cache against the raw driver path (clCreateBuffer + residency probe +
 * clReleaseMemObject). Host wall-clock time: these are host API calls. */
#include <math.h>
#include <stdlib.h>

#include "bench.h"

enum { SITES = 20, LIVE_WINDOW = 3 };

typedef struct site {
    char tag[16];
    size_t base_size;
} site;

static size_t size_at(const site *s, unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    size_t wobble = s->base_size / 8;
    return s->base_size - wobble + ((*seed >> 8) % (2 * wobble + 1));
}

static int probe(cl_command_queue queue, cl_mem buffer)
{
    const cl_uchar zero = 0;
    cl_event done;
    if (clEnqueueFillBuffer(queue, buffer, &zero, 1, 0, 1, 0, NULL, &done) != CL_SUCCESS)
        return -1;
    clWaitForEvents(1, &done);
    clReleaseEvent(done);
    return 0;
}

/* One pass of the loop. cache == NULL: the raw driver path. Returns seconds. */
static double run_loop(bench_env *env, clheap_cache *cache, const site *sites, int iterations,
                       uint64_t *driver_calls)
{
    cl_mem window[LIVE_WINDOW] = {0};
    unsigned seed = 42;
    double start = bench_now_seconds();
    for (int it = 0; it < iterations; it++) {
        const site *s = &sites[it % SITES];
        size_t size = size_at(s, &seed);
        int slot = it % LIVE_WINDOW;
        if (window[slot]) {
            if (cache)
                clheap_cache_free(cache, window[slot]);
            else
                clReleaseMemObject(window[slot]);
        }
        cl_mem buffer = NULL;
        if (cache) {
            if (clheap_cache_alloc(cache, size, s->tag, &buffer) != CLHEAP_SUCCESS)
                return -1;
        } else {
            cl_int err;
            buffer = clCreateBuffer(env->context, CL_MEM_READ_WRITE, size, NULL, &err);
            if (err != CL_SUCCESS || probe(env->queue, buffer) != 0)
                return -1;
            *driver_calls += 1;
        }
        window[slot] = buffer;
    }
    for (int slot = 0; slot < LIVE_WINDOW; slot++) {
        if (window[slot]) {
            if (cache)
                clheap_cache_free(cache, window[slot]);
            else
                clReleaseMemObject(window[slot]);
        }
    }
    return bench_now_seconds() - start;
}

int bench_cache(bench_env *env)
{
    site sites[SITES];
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    double log_lo = log(4096.0), log_hi = log(64.0 * 1024 * 1024);
    for (int i = 0; i < SITES; i++) {
        snprintf(sites[i].tag, sizeof sites[i].tag, "site-%02d", i);
        size_t size = (size_t)exp(log_lo + (log_hi - log_lo) * i / (SITES - 1));
        if (size > max_alloc * 7 / 8)
            size = (size_t)(max_alloc * 7 / 8);
        sites[i].base_size = size;
    }
    int iterations = env->quick ? 1000 : 10000;
    int runs = env->runs;
    double raw[16], cached[16];
    uint64_t raw_calls = 0, cache_calls = 0;
    clheap_cache_stats stats = {0};
    for (int r = 0; r < runs + 1; r++) { /* run 0 warms up the driver and is discarded */
        uint64_t calls = 0;
        double t_raw = run_loop(env, NULL, sites, iterations, &calls);
        clheap_cache *cache = NULL;
        BENCH_CHECK(clheap_cache_create(env->context, env->device, NULL, &cache));
        double t_cache = run_loop(env, cache, sites, iterations, NULL);
        BENCH_CHECK(clheap_cache_get_stats(cache, &stats));
        BENCH_CHECK(clheap_cache_destroy(cache));
        if (t_raw < 0 || t_cache < 0) {
            fprintf(stderr, "cache bench: allocation failed\n");
            return 1;
        }
        if (r > 0) {
            raw[r - 1] = t_raw;
            cached[r - 1] = t_cache;
        }
        raw_calls = calls;
        cache_calls = stats.driver_allocs;
    }
    double raw_min, raw_max, cache_min, cache_max;
    bench_min_max(raw, runs, &raw_min, &raw_max);
    bench_min_max(cached, runs, &cache_min, &cache_max);
    double raw_median = bench_median(raw, runs), cache_median = bench_median(cached, runs);
    printf("cache: %d iterations over %d sites (4 KiB - 64 MiB), %d timed runs\n", iterations,
           SITES, runs);
    printf("  %-22s %12s %12s %12s %14s\n", "path", "median ms", "min ms", "max ms",
           "driver allocs");
    printf("  %-22s %12.2f %12.2f %12.2f %14llu\n", "raw create+probe+release", raw_median * 1e3,
           raw_min * 1e3, raw_max * 1e3, (unsigned long long)raw_calls);
    printf("  %-22s %12.2f %12.2f %12.2f %14llu\n", "clheap_cache", cache_median * 1e3,
           cache_min * 1e3, cache_max * 1e3, (unsigned long long)cache_calls);
    printf("  speed-up %.1fx; cache hits %llu of %d\n", raw_median / cache_median,
           (unsigned long long)stats.hits, iterations);
    FILE *csv = bench_csv_open(env, "cache",
                               "path,iterations,median_s,min_s,max_s,driver_allocs");
    if (csv) {
        fprintf(csv, "raw,%d,%.6f,%.6f,%.6f,%llu\n", iterations, raw_median, raw_min, raw_max,
                (unsigned long long)raw_calls);
        fprintf(csv, "clheap_cache,%d,%.6f,%.6f,%.6f,%llu\n", iterations, cache_median,
                cache_min, cache_max, (unsigned long long)cache_calls);
        fclose(csv);
    }
    return 0;
}
