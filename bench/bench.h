/* Shared by clheap-bench's tests: the OpenCL setup, options, timing and reporting. */
#ifndef CLHEAP_BENCH_H
#define CLHEAP_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clheap/clheap.h"

typedef struct bench_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue; /* profiling enabled */
    char device_name[512];
    int quick;              /* CI mode: small sizes, one run, no timing claims */
    int runs;               /* timed runs per configuration */
    int cold;               /* throughput, realloc: reset the heap before every run, not only the first */
    const char *csv_dir;    /* NULL: no CSV files */
    const char *only;       /* NULL, or the allocators to run (names, comma-separated) */
    uint64_t heap_bytes;    /* throughput's heap; 0: 8 GiB (quick: sized to the shape) */
    const char *build_options; /* --options: appended to the heap programs' build options */
    const char *shapes;     /* NULL, or throughput's shapes to run (ITEMSxBYTES, comma-separated) */
    const char *churn;      /* NULL, or churn-mixed's shapes (DEPTH:MAX:ROUNDS:ITEMS, comma-separated) */
    int launch_limit_s;     /* churn-mixed: the longest one launch may take, in seconds */
    int no_warp;            /* churn-mixed: heaps without warp coalescing (--no-warp) */
} bench_env;

double bench_now_seconds(void);
/* Whether --only lets allocator a run. */
int bench_wants(const bench_env *env, clheap_allocator a);
/* Whether throughput runs `items` work-items of `shape` (bench_shape_name's text). */
int bench_wants_shape(const bench_env *env, size_t items, const char *shape);
double bench_median(double *values, int n);   /* sorts values */
void bench_min_max(const double *values, int n, double *min, double *max);
/* The bad-free counters of e, summed: double, not a chunk, outside, unaligned. */
uint32_t bench_bad_frees(const clheap_heap_errors *e);

/* Opens a CSV file <csv_dir>/<name>.csv with the header line, or returns NULL. */
FILE *bench_csv_open(const bench_env *env, const char *name, const char *header);

#define BENCH_CHECK(call)                                                                 \
    do {                                                                                  \
        clheap_status bench_status_ = (call);                                             \
        if (bench_status_ != CLHEAP_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,               \
                    clheap_status_string(bench_status_));                                 \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* A device heap of one allocator with clheap-bench's kernels built for it. */
typedef struct heap_run {
    clheap_heap *heap;
    cl_program program;
    cl_kernel malloc_k, malloc_mixed_k, free_k, ad_k, acd_k, prob_k, fill_k;
} heap_run;

/* Writes the program's binary (NVIDIA: PTX text with a trailing NUL) to <csv_dir>/<name>,
 * for reading and assembling offline (ptxas) without device time; returns its bytes (0:
 * none, or a program of several devices). Nothing is written without --csv. */
size_t bench_save_binary(const bench_env *env, cl_program program, const char *name);
/* A heap of config with the sources built for it (the allocator's source in front,
 * --options appended); on failure says why, makes nothing and returns 1. With
 * CLHEAP_BENCH_BINARIES=1 in the environment the binary is saved (bench_save_binary) as
 * program-<allocator>-<n>.bin, n counting this process's saved programs (bench_free's own
 * program, where bench_heap_open builds one: program-<allocator>-free-<n>.bin). */
int bench_heap_make(bench_env *env, const clheap_heap_config *config, size_t count, const char **sources,
                    clheap_heap **heap, cl_program *program);
/* Which of heap_run's kernels a heap's program has (the others stay NULL); every set has
 * free_k. THROUGHPUT: malloc_k and malloc_mixed_k; GROUP: both are the work-group
 * coalescing kernel, on a heap without warp coalescing; PAPERS: ad_k, acd_k, prob_k,
 * fill_k. */
typedef enum { BENCH_KERNELS_THROUGHPUT, BENCH_KERNELS_GROUP, BENCH_KERNELS_PAPERS } bench_kernel_set;
/* request: the payload (BitmapAlloc's slot size). */
int bench_heap_open(bench_env *env, clheap_allocator a, uint64_t bytes, uint32_t request, bench_kernel_set set,
                    heap_run *r);
void bench_heap_close(heap_run *r);
double bench_event_seconds(cl_event e);
/* Allocations (16-byte units, 0 = NULL) of sizes[i] bytes, or of the throughput shape
 * `bytes` if sizes is NULL: disjoint and inside the pool? Returns the NULLs, or -1 if not. */
long bench_verify_units(const uint32_t *units, size_t n, const uint32_t *sizes, uint32_t bytes, uint64_t pool_begin,
                        uint64_t pool_bytes);

int bench_cache(bench_env *env);
int bench_papers(bench_env *env);
int bench_linux_scalability(bench_env *env);
int bench_oom(bench_env *env);
int bench_oom_launch(bench_env *env);
int bench_throughput(bench_env *env);
int bench_registers(bench_env *env);
int bench_compile(bench_env *env);
/* Turns off the compile caches bench_compile knows; before any platform loads. */
void bench_compile_caches_off(void);
int bench_freeheap(bench_env *env);
int bench_churn(bench_env *env);
int bench_resize(bench_env *env);
int bench_churn_mixed(bench_env *env);

#endif
