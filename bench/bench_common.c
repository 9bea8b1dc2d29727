#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whether the comma-separated `list` has `name`. */
static int bench_list_has(const char *list, const char *name)
{
    size_t len = name ? strlen(name) : 0;
    for (const char *p = list; name && *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

int bench_wants(const bench_env *env, clheap_allocator a)
{
    if (a == CLHEAP_FREE_HEAP)
        return 0; /* serial by design: every test here has work-items allocate at once */
    if (clheap_allocator_needs_atomics64(a) && !clheap_device_has_atomics64(env->device))
        return 0; /* refused there (docs/design.md) */
    return !env->only || bench_list_has(env->only, clheap_allocator_name(a));
}

int bench_wants_shape(const bench_env *env, size_t items, const char *shape)
{
    char name[48];
    snprintf(name, sizeof name, "%zux%s", items, shape);
    return !env->shapes || bench_list_has(env->shapes, name);
}

double bench_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void bench_min_max(const double *values, int n, double *min, double *max)
{
    *min = *max = values[0];
    for (int i = 1; i < n; i++) {
        if (values[i] < *min)
            *min = values[i];
        if (values[i] > *max)
            *max = values[i];
    }
}

uint32_t bench_bad_frees(const clheap_heap_errors *e)
{
    return e->double_free + e->free_not_chunk + e->free_outside + e->free_unaligned;
}

FILE *bench_csv_open(const bench_env *env, const char *name, const char *header)
{
    if (!env->csv_dir)
        return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.csv", env->csv_dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        setvbuf(f, NULL, _IOLBF, 0); /* rows reach the file as they come: a run cut off by its time limit keeps them */
        fprintf(f, "%s\n", header);
    }
    else
        fprintf(stderr, "cannot write %s\n", path);
    return f;
}
