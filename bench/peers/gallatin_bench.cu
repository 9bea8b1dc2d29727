/* clheap-bench's `throughput` shapes run on Gallatin (McCoy & Pandey, PPoPP'24), the
 * general-purpose CUDA allocator clheap's default allocator is compared with. This
 * harness is clheap's own; Gallatin's header-only source is fetched at run time and
 * never committed (CMake builds this only when given -DCLHEAP_GALLATIN_DIR).
 *
 *   gallatin-bench [--quick] [--cold] [--runs N] [--csv DIR] [--heap-mib N]
 *   gallatin-bench --oom-launch [--quick] [--runs N] [--csv DIR] [--launch-timeout S]
 *   gallatin-bench --realloc [--quick] [--runs N] [--csv DIR] [--heap-mib N]
 *   gallatin-bench --churn-mixed [--quick] [--runs N] [--csv DIR] [--heap-mib N]
 *                  [--churn DEPTH:MAX:ROUNDS:ITEMS[,...]] [--launch-timeout S]
 *
 * --churn-mixed: clheap-bench churn-mixed's in-kernel churn instead (gallatin_churn.cuh).
 * --oom-launch: clheap-bench oom-launch's launches instead (see oom_launch_main below).
 *
 * Same shapes as clheap-bench throughput (bench/bench_shapes.h): every work-item
 * mallocs and stamps its first word, the pointers are read back and proven disjoint,
 * then every work-item checks its stamp and frees. Times are CUDA events around each
 * kernel; the median of N runs after one warm-up. One Gallatin instance per shape,
 * reused by its runs ("warm", as clheap-bench reuses its heap), or with --cold a new
 * instance for every run (as clheap-bench --cold resets its heap). Writes
 * DIR/throughput-gallatin.csv with the columns of clheap's throughput.csv. */
#include "gallatin_churn.cuh"
#include "gallatin_common.cuh"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

extern "C" {
#include "../bench_shapes.h"
}

__global__ static void malloc_kernel(allocator_type *a, void **out, uint32_t n, uint32_t shape)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n)
        return;
    uint32_t *p = (uint32_t *)a->malloc(bench_request_bytes(shape, id));
    if (p)
        p[0] = id;
    out[id] = p;
}

__global__ static void free_kernel(allocator_type *a, void **in, uint32_t n, unsigned *wrong)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n || !in[id])
        return;
    if (((uint32_t *)in[id])[0] != id)
        atomicAdd(wrong, 1u);
    a->free(in[id]);
}

/* The launch floor (clheap-bench's "empty-kernel" rows): kernels of the same launch shape
 * that allocate nothing, timed as malloc_kernel and free_kernel are. */
__global__ static void floor_malloc_kernel(void **out, uint32_t n)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n)
        out[id] = nullptr;
}

__global__ static void floor_free_kernel(void **in, uint32_t n, unsigned *sink)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n && in[id])
        *sink = 1u;
}

/* One row of clheap-bench's throughput CSV (BENCH_THROUGHPUT_COLUMNS) from the timed runs'
 * malloc times tm and the medians m and f. */
static void csv_row(FILE *csv, const char *name, uint32_t n, const char *shape, const std::vector<double> &tm, double m,
                    double f, long nulls, int runs, const char *start)
{
    if (csv)
        fprintf(csv, "%s,%u,%s,%.9f,%.9f,%.9f,%.9f,%.6e,%.6e,%ld,%d,%s\n", name, n, shape, m,
                *std::min_element(tm.begin(), tm.end()), *std::max_element(tm.begin(), tm.end()), f, n / m, n / f,
                nulls, runs, start);
}

/* NULLs, or -1 if two allocations overlap (address order, each its request's bytes). */
static long verify(const std::vector<uintptr_t> &ptrs, uint32_t shape)
{
    std::vector<std::pair<uintptr_t, uint32_t>> got;
    long nulls = 0;
    for (size_t i = 0; i < ptrs.size(); i++) {
        if (ptrs[i])
            got.push_back({ptrs[i], bench_request_bytes(shape, (uint32_t)i)});
        else
            nulls++;
    }
    std::sort(got.begin(), got.end());
    for (size_t i = 0; i + 1 < got.size(); i++)
        if (got[i].first + got[i].second > got[i + 1].first)
            return -1;
    return nulls;
}

/* ---- oom-launch ----------------------------------------------------------------------
 * clheap-bench oom-launch's launches (bench_oom_shapes): n work-items each malloc the
 * shape's bytes from a new Gallatin instance of the shape's heap, in rounds (each
 * round's frees before the next), verified as the throughput runs are (disjoint, stamps
 * intact at the free). Gallatin counts no NULLs: counted_nulls is -1. Each launch runs in
 * a child process under a time limit, since a kernel that never ends cannot be stopped
 * inside its process: the parent touches no CUDA, kills a child past the limit, and
 * writes the launch's row with status "timeout" (or "failed" if the child died). */
static int oom_rounds(const bench_oom_shape *s, uint32_t n, uint32_t heap_mib, const char *launch, int rounds,
                      FILE *csv)
{
    uint64_t heap_bytes = (uint64_t)heap_mib << 20;
    allocator_type *a = allocator_type::generate_on_device(heap_bytes, 42, false);
    void **ptrs;
    unsigned *wrong_d;
    CHECK(cudaMalloc(&ptrs, n * sizeof(void *)));
    CHECK(cudaMalloc(&wrong_d, sizeof(unsigned)));
    std::vector<uintptr_t> host(n);
    unsigned blocks = (n + 255) / 256;
    cudaEvent_t e0, e1, e2, e3;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaEventCreate(&e3);
    int bad = 0;
    for (int k = 0; k < rounds; k++) {
        CHECK(cudaMemset(wrong_d, 0, sizeof(unsigned)));
        cudaEventRecord(e0);
        malloc_kernel<<<blocks, 256>>>(a, ptrs, n, s->bytes);
        cudaEventRecord(e1);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(host.data(), ptrs, n * sizeof(void *), cudaMemcpyDeviceToHost));
        long nulls = verify(host, s->bytes);
        cudaEventRecord(e2);
        free_kernel<<<blocks, 256>>>(a, ptrs, n, wrong_d);
        cudaEventRecord(e3);
        CHECK(cudaDeviceSynchronize());
        unsigned wrong = 0;
        CHECK(cudaMemcpy(&wrong, wrong_d, sizeof wrong, cudaMemcpyDeviceToHost));
        float ms_m = 0, ms_f = 0;
        cudaEventElapsedTime(&ms_m, e0, e1);
        cudaEventElapsedTime(&ms_f, e2, e3);
        const char *status = nulls < 0 || wrong ? "wrong" : "ok";
        bad |= nulls < 0 || wrong;
        if (csv)
            fprintf(csv, "Gallatin,%u,%u,%llu,%s,%d,%.9f,%.3f,%ld,-1,%.9f,%s\n", n, s->bytes,
                    (unsigned long long)heap_bytes, launch, k, ms_m * 1e-3, ms_m * 1e6 / n, nulls, ms_f * 1e-3, status);
        printf("  %-10s %9u %9u %9u %-5s round %d: malloc %.3f ms (%.3f ns/req), %ld NULL (%.1f%%), free %.3f ms %s\n",
               "Gallatin", n, s->bytes, heap_mib, launch, k, ms_m, ms_m * 1e6 / n, nulls,
               nulls < 0 ? 0.0 : 100.0 * nulls / n, ms_f, status);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaEventDestroy(e3);
    CHECK(cudaFree(ptrs));
    CHECK(cudaFree(wrong_d));
    allocator_type::free_on_device(a);
    CHECK(cudaDeviceSynchronize());
    return bad;
}

/* One launch's rounds in a child, at most `limit` seconds; its rows go to csv. */
static int oom_launch_child(const bench_oom_shape *s, uint32_t n, uint32_t heap_mib, const char *launch, int rounds,
                            FILE *csv, int limit)
{
    fflush(stdout);
    if (csv)
        fflush(csv);
    pid_t child = fork();
    if (child == 0)
        _exit(oom_rounds(s, n, heap_mib, launch, rounds, csv) ? 1 : 0);
    if (child < 0)
        return 1;
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 50) { /* a benchmark harness's time limit, not a test's */
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            break;
        if (waited_ms >= limit * 1000) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            printf("  %-10s %9u %9u %9u %-5s TIMEOUT after %d s\n", "Gallatin", n, s->bytes, heap_mib, launch,
                   limit);
            if (csv)
                fprintf(csv, "Gallatin,%u,%u,%llu,%s,0,,,,-1,,timeout\n", n, s->bytes,
                        (unsigned long long)heap_mib << 20, launch);
            return 1;
        }
        usleep(50 * 1000);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
        return WEXITSTATUS(status);
    printf("  %-10s %9u %9u %9u %-5s FAILED (the child died)\n", "Gallatin", n, s->bytes, heap_mib, launch);
    if (csv)
        fprintf(csv, "Gallatin,%u,%u,%llu,%s,0,,,,-1,,failed\n", n, s->bytes, (unsigned long long)heap_mib << 20,
                launch);
    return 1;
}

static int oom_launch_main(int quick, int runs, const char *csv_dir, int limit)
{
    FILE *csv = gallatin_csv_open(csv_dir, "oom_launch-gallatin.csv", BENCH_OOM_LAUNCH_COLUMNS);
    printf("gallatin-bench oom-launch: %d rounds a launch, at most %d s a launch\n", runs, limit);
    size_t count;
    const bench_oom_shape *shapes = bench_oom_shapes(quick, &count);
    int failures = 0;
    /* The parent touches no CUDA (its children could not use it after a fork), so no
     * device limit here: the H100's and H200's are above the cap. */
    uint32_t cap_mib = bench_oom_fitting_cap_mib(quick, 0);
    for (size_t i = 0; i < count; i++) {
        uint32_t fit_items, fit_mib = bench_oom_fitting(&shapes[i], cap_mib, &fit_items);
        failures += oom_launch_child(&shapes[i], shapes[i].items, shapes[i].heap_mib, "over", runs, csv, limit);
        failures += oom_launch_child(&shapes[i], fit_items, fit_mib, "fits", runs, csv, limit);
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}

/* ---- realloc ---------------------------------------------------------------------------
 * clheap-bench realloc's by-hand variants (bench/bench_resize.c) on Gallatin, which has no
 * realloc, calloc or aligned_alloc: push (16 B doubling to 4 KiB, malloc + copy + free, the
 * new elements written), grow (100 -> 128 B and 1000 -> 2000 B, prepared untimed),
 * calloc (malloc and zeroing, 64 B and 4 KiB) and malloc of 16 B, 256 B and 4 KiB, whose
 * `wrong` column counts the addresses off that size (Gallatin promises no alignment
 * beyond 16 B). An untimed kernel verifies every word and frees; a wrong word fails the
 * run. One instance for all of them, as clheap-bench uses one heap. CSV:
 * realloc-gallatin.csv, clheap-bench's realloc.csv columns. */
#define RESIZE_COLUMNS "allocator,test,variant,work_items,bytes,seconds,min_seconds,max_seconds,nulls,wrong,runs"

__global__ static void push_by_hand(allocator_type *a, uint32_t **out, uint32_t n, unsigned *counts)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x, have = 0;
    if (id >= n)
        return;
    uint32_t *p = nullptr;
    for (uint32_t bytes = 16; bytes <= 4096; bytes *= 2) {
        uint32_t *q = (uint32_t *)a->malloc(bytes);
        if (!q) {
            atomicAdd(counts, 1u);
            break;
        }
        for (uint32_t w = 0; w < have / 4; w++)
            q[w] = p[w];
        if (p)
            a->free(p);
        for (uint32_t w = have / 4; w < bytes / 4; w++)
            q[w] = id + w;
        p = q;
        have = bytes;
    }
    if (have != 4096 && p)
        a->free(p);
    out[id] = have == 4096 ? p : nullptr;
}

__global__ static void grow_prepare(allocator_type *a, uint32_t **out, uint32_t n, unsigned *counts, uint32_t from)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n)
        return;
    uint32_t *p = (uint32_t *)a->malloc(from);
    if (!p)
        atomicAdd(counts, 1u);
    for (uint32_t w = 0; p && w < from / 4; w++)
        p[w] = id + w;
    out[id] = p;
}

__global__ static void grow_by_hand(allocator_type *a, uint32_t **ptrs, uint32_t n, unsigned *counts, uint32_t from,
                                    uint32_t to)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n || !ptrs[id])
        return;
    uint32_t *p = ptrs[id], *q = (uint32_t *)a->malloc(to);
    if (!q) {
        atomicAdd(counts, 1u);
        return;
    }
    for (uint32_t w = 0; w < from / 4; w++)
        q[w] = p[w];
    a->free(p);
    for (uint32_t w = from / 4; w < to / 4; w++)
        q[w] = id + w;
    ptrs[id] = q;
}

__global__ static void check_words(allocator_type *a, uint32_t **ptrs, uint32_t n, unsigned *counts, uint32_t bytes)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x, wrong = 0;
    if (id >= n || !ptrs[id])
        return;
    for (uint32_t w = 0; w < bytes / 4; w++)
        wrong += ptrs[id][w] != id + w;
    if (wrong)
        atomicAdd(counts + 1, wrong);
    a->free(ptrs[id]);
    ptrs[id] = nullptr;
}

__global__ static void zero_by_hand(allocator_type *a, uint32_t **out, uint32_t n, unsigned *counts, uint32_t bytes)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n)
        return;
    uint32_t *p = (uint32_t *)a->malloc(bytes);
    if (!p)
        atomicAdd(counts, 1u);
    for (uint32_t w = 0; p && w < bytes / 4; w++)
        p[w] = 0;
    out[id] = p;
}

__global__ static void check_zero(allocator_type *a, uint32_t **ptrs, uint32_t n, unsigned *counts, uint32_t bytes)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x, wrong = 0;
    if (id >= n || !ptrs[id])
        return;
    for (uint32_t w = 0; w < bytes / 4; w++) {
        wrong += ptrs[id][w] != 0;
        ptrs[id][w] = 0xffffffffu;
    }
    if (wrong)
        atomicAdd(counts + 1, wrong);
    a->free(ptrs[id]);
    ptrs[id] = nullptr;
}

__global__ static void plain_malloc(allocator_type *a, uint32_t **out, uint32_t n, unsigned *counts, uint32_t bytes)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n)
        return;
    uint32_t *p = (uint32_t *)a->malloc(bytes);
    if (!p)
        atomicAdd(counts, 1u);
    out[id] = p;
}

/* Counts in counts[2] the addresses off `bytes`, writes the first and last word, frees. */
__global__ static void check_placed(allocator_type *a, uint32_t **ptrs, uint32_t n, unsigned *counts, uint32_t bytes)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n || !ptrs[id])
        return;
    if ((uintptr_t)ptrs[id] % bytes)
        atomicAdd(counts + 2, 1u);
    ptrs[id][0] = id;
    ptrs[id][bytes / 4 - 1] = id;
    a->free(ptrs[id]);
    ptrs[id] = nullptr;
}

enum resize_step { STEP_PUSH, STEP_GROW_PREPARE, STEP_GROW, STEP_CHECK_WORDS, STEP_ZERO, STEP_CHECK_ZERO, STEP_MALLOC,
                   STEP_CHECK_PLACED };

static void resize_step(allocator_type *a, int step, uint32_t **ptrs, uint32_t n, unsigned *counts, uint32_t x,
                        uint32_t y)
{
    unsigned blocks = (n + 255) / 256;
    switch (step) {
    case STEP_PUSH: push_by_hand<<<blocks, 256>>>(a, ptrs, n, counts); break;
    case STEP_GROW_PREPARE: grow_prepare<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    case STEP_GROW: grow_by_hand<<<blocks, 256>>>(a, ptrs, n, counts, x, y); break;
    case STEP_CHECK_WORDS: check_words<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    case STEP_ZERO: zero_by_hand<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    case STEP_CHECK_ZERO: check_zero<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    case STEP_MALLOC: plain_malloc<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    default: check_placed<<<blocks, 256>>>(a, ptrs, n, counts, x); break;
    }
}

/* One row: prepare (untimed, -1: none), the timed step, the check; warm-up + runs. */
static int resize_row(allocator_type *a, FILE *csv, const char *test, const char *variant, uint32_t n, uint32_t bytes,
                      int prepare, int timed, int check, uint32_t x, uint32_t y, int runs, uint32_t **ptrs,
                      unsigned *counts_d)
{
    CHECK(cudaMemset(counts_d, 0, 3 * sizeof(unsigned)));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t;
    for (int run = 0; run <= runs; run++) {
        if (prepare >= 0)
            resize_step(a, prepare, ptrs, n, counts_d, x, y);
        CHECK(cudaDeviceSynchronize());
        cudaEventRecord(e0);
        resize_step(a, timed, ptrs, n, counts_d, x, y);
        cudaEventRecord(e1);
        CHECK(cudaDeviceSynchronize());
        resize_step(a, check, ptrs, n, counts_d, y ? y : x, 0); /* the bytes to check */
        CHECK(cudaDeviceSynchronize());
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (run > 0)
            t.push_back(ms * 1e-3);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    unsigned counts[3];
    CHECK(cudaMemcpy(counts, counts_d, sizeof counts, cudaMemcpyDeviceToHost));
    if (counts[1]) {
        printf("  %-10s %-13s %-8s %9u %6u   FAILED: %u wrong words\n", "Gallatin", test, variant, n, bytes, counts[1]);
        return 1;
    }
    double m = median(t);
    printf("  %-10s %-13s %-8s %9u %6u %10.3f %12.3e %8u%s\n", "Gallatin", test, variant, n, bytes, m * 1e3, n / m,
           counts[0], counts[2] ? " (some off the size's alignment)" : "");
    if (csv)
        fprintf(csv, "Gallatin,%s,%s,%u,%u,%.9f,%.9f,%.9f,%u,%u,%d\n", test, variant, n, bytes, m,
                *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()), counts[0], counts[2],
                runs);
    return 0;
}

static int resize_main(int quick, int runs, const char *csv_dir, uint64_t heap_bytes)
{
    FILE *csv = gallatin_csv_open(csv_dir, "realloc-gallatin.csv", RESIZE_COLUMNS);
    printf("gallatin-bench realloc: by hand, heap %llu MiB, median of %d runs\n", (unsigned long long)(heap_bytes >> 20),
           runs);
    allocator_type *a = allocator_type::generate_on_device(heap_bytes, 42, false);
    static const uint32_t full[] = {1u << 16, 1u << 18, 1u << 20}, small[] = {1u << 12};
    const uint32_t *items = quick ? small : full;
    int n_items = quick ? 1 : 3, failures = 0;
    uint32_t **ptrs;
    unsigned *counts_d;
    CHECK(cudaMalloc(&ptrs, items[n_items - 1] * sizeof(uint32_t *)));
    CHECK(cudaMalloc(&counts_d, 3 * sizeof(unsigned)));
    for (int i = 0; i < n_items; i++) {
        uint32_t n = items[i];
        failures += resize_row(a, csv, "push", "by-hand", n, 4096, -1, STEP_PUSH, STEP_CHECK_WORDS, 4096, 0, runs, ptrs,
                               counts_d);
        failures += resize_row(a, csv, "grow-in-place", "by-hand", n, 128, STEP_GROW_PREPARE, STEP_GROW,
                               STEP_CHECK_WORDS, 100, 128, runs, ptrs, counts_d);
        failures += resize_row(a, csv, "grow-moves", "by-hand", n, 2000, STEP_GROW_PREPARE, STEP_GROW, STEP_CHECK_WORDS,
                               1000, 2000, runs, ptrs, counts_d);
        for (uint32_t bytes : {64u, 4096u})
            failures += resize_row(a, csv, "calloc", "by-hand", n, bytes, -1, STEP_ZERO, STEP_CHECK_ZERO, bytes, 0,
                                   runs, ptrs, counts_d);
        for (uint32_t bytes : {16u, 256u, 4096u})
            failures += resize_row(a, csv, "aligned", "malloc", n, bytes, -1, STEP_MALLOC, STEP_CHECK_PLACED, bytes, 0,
                                   runs, ptrs, counts_d);
    }
    CHECK(cudaFree(ptrs));
    CHECK(cudaFree(counts_d));
    allocator_type::free_on_device(a);
    if (csv)
        fclose(csv);
    return failures != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int quick = 0, runs = 5, cold = 0, oom = 0, limit = 60, resize = 0, churn = 0;
    const char *csv_dir = NULL, *churn_spec = NULL;
    uint64_t heap_bytes = 8ull << 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--cold"))
            cold = 1;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_dir = argv[++i];
        else if (!strcmp(argv[i], "--heap-mib") && i + 1 < argc)
            heap_bytes = strtoull(argv[++i], NULL, 10) << 20;
        else if (!strcmp(argv[i], "--oom-launch"))
            oom = 1;
        else if (!strcmp(argv[i], "--realloc"))
            resize = 1;
        else if (!strcmp(argv[i], "--churn-mixed"))
            churn = 1;
        else if (!strcmp(argv[i], "--churn") && i + 1 < argc)
            churn_spec = argv[++i];
        else if (!strcmp(argv[i], "--launch-timeout") && i + 1 < argc)
            limit = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gallatin-bench [--quick] [--cold] [--runs N] [--csv DIR] [--heap-mib N]\n"
                            "       gallatin-bench --oom-launch [--quick] [--runs N] [--csv DIR] [--launch-timeout S]\n"
                            "       gallatin-bench --realloc [--quick] [--runs N] [--csv DIR] [--heap-mib N]\n"
                            "       gallatin-bench --churn-mixed [--quick] [--runs N] [--csv DIR] [--heap-mib N]\n"
                            "                      [--churn DEPTH:MAX:ROUNDS:ITEMS[,...]] [--launch-timeout S]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 15 || limit < 1)
        return 2;
    if (oom)
        return oom_launch_main(quick, runs, csv_dir, limit); /* before any CUDA call: it forks */
    if (churn) /* before any CUDA call: it forks */
        return churn_mixed_main(quick, runs, csv_dir, heap_bytes, churn_spec, limit);
    if (resize)
        return resize_main(quick, runs, csv_dir, heap_bytes);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("gallatin-bench on %s, heap %llu MiB, median of %d runs, %s\n", prop.name,
           (unsigned long long)(heap_bytes >> 20), runs, cold ? "a new instance each" : "one instance per shape");
    FILE *csv = gallatin_csv_open(csv_dir, "throughput-gallatin.csv", BENCH_THROUGHPUT_COLUMNS);
    printf("  %-16s %9s %8s %12s %12s %14s %14s %8s\n", "allocator", "items", "bytes", "malloc ms", "free ms",
           "malloc/s", "free/s", "NULLs");
    int failures = 0;
    size_t nshapes, nitems;
    const uint32_t *shapes = bench_throughput_shapes(quick, &nshapes);
    const uint32_t *items = bench_throughput_items(quick, &nitems);
    for (size_t ii = 0; ii < nitems; ii++) {
        uint32_t n = items[ii];
        unsigned blocks = (n + 255) / 256, *sink;
        void **ptrs;
        CHECK(cudaMalloc(&ptrs, n * sizeof(void *)));
        CHECK(cudaMalloc(&sink, sizeof(unsigned)));
        cudaEvent_t e0, e1, e2, e3;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaEventCreate(&e2);
        cudaEventCreate(&e3);
        std::vector<double> tm, tf;
        for (int run = 0; run <= runs; run++) { /* run 0: warm-up */
            cudaEventRecord(e0);
            floor_malloc_kernel<<<blocks, 256>>>(ptrs, n);
            cudaEventRecord(e1);
            CHECK(cudaDeviceSynchronize());
            cudaEventRecord(e2);
            floor_free_kernel<<<blocks, 256>>>(ptrs, n, sink);
            cudaEventRecord(e3);
            CHECK(cudaDeviceSynchronize());
            float ms_m = 0, ms_f = 0;
            cudaEventElapsedTime(&ms_m, e0, e1);
            cudaEventElapsedTime(&ms_f, e2, e3);
            if (run > 0) {
                tm.push_back(ms_m * 1e-3);
                tf.push_back(ms_f * 1e-3);
            }
        }
        double m = median(tm), f = median(tf);
        printf("  %-16s %9u %8s %12.3f %12.3f\n", "empty-kernel", n, "0", m * 1e3, f * 1e3);
        csv_row(csv, "empty-kernel", n, "0", tm, m, f, 0, runs, "warm");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        cudaEventDestroy(e2);
        cudaEventDestroy(e3);
        CHECK(cudaFree(ptrs));
        CHECK(cudaFree(sink));
    }
    for (size_t ii = 0; ii < nitems; ii++) {
        for (size_t si = 0; si < nshapes; si++) {
            uint32_t n = items[ii], shape = shapes[si];
            if (bench_shape_bytes(shape, n) > heap_bytes / 2)
                continue; /* capped at half the heap, as clheap's */
            allocator_type *a = allocator_type::generate_on_device(heap_bytes, 42, false);
            void **ptrs;
            unsigned *wrong_d;
            CHECK(cudaMalloc(&ptrs, n * sizeof(void *)));
            CHECK(cudaMalloc(&wrong_d, sizeof(unsigned)));
            CHECK(cudaMemset(wrong_d, 0, sizeof(unsigned)));
            cudaEvent_t e0, e1, e2;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            cudaEventCreate(&e2);
            std::vector<double> tm, tf;
            std::vector<uintptr_t> host(n);
            long nulls = 0;
            int bad = 0;
            unsigned blocks = (n + 255) / 256;
            for (int run = 0; run <= runs; run++) { /* run 0: warm-up */
                if (cold && run > 0) {
                    allocator_type::free_on_device(a);
                    a = allocator_type::generate_on_device(heap_bytes, 42 + run, false);
                    CHECK(cudaDeviceSynchronize());
                }
                cudaEventRecord(e0);
                malloc_kernel<<<blocks, 256>>>(a, ptrs, n, shape);
                cudaEventRecord(e1);
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaMemcpy(host.data(), ptrs, n * sizeof(void *), cudaMemcpyDeviceToHost));
                long v = verify(host, shape);
                bad |= v < 0;
                nulls = v;
                cudaEvent_t f0;
                cudaEventCreate(&f0);
                cudaEventRecord(f0);
                free_kernel<<<blocks, 256>>>(a, ptrs, n, wrong_d);
                cudaEventRecord(e2);
                CHECK(cudaDeviceSynchronize());
                float ms_m = 0, ms_f = 0;
                cudaEventElapsedTime(&ms_m, e0, e1);
                cudaEventElapsedTime(&ms_f, f0, e2);
                cudaEventDestroy(f0);
                if (run > 0) {
                    tm.push_back(ms_m * 1e-3);
                    tf.push_back(ms_f * 1e-3);
                }
            }
            unsigned wrong = 0;
            CHECK(cudaMemcpy(&wrong, wrong_d, sizeof wrong, cudaMemcpyDeviceToHost));
            char bytes_text[16];
            bench_shape_name(shape, bytes_text, sizeof bytes_text);
            if (bad || wrong) {
                printf("  %-16s %9u %8s   WRONG: %s\n", "Gallatin", n, bytes_text,
                       bad ? "overlapping allocations" : "stamps overwritten");
                failures++;
            } else {
                double m = median(tm), f = median(tf);
                printf("  %-16s %9u %8s %12.3f %12.3f %14.3e %14.3e %8ld\n", "Gallatin", n, bytes_text, m * 1e3,
                       f * 1e3, n / m, n / f, nulls);
                csv_row(csv, "Gallatin", n, bytes_text, tm, m, f, nulls, runs, cold ? "cold" : "warm");
            }
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
            cudaEventDestroy(e2);
            CHECK(cudaFree(ptrs));
            CHECK(cudaFree(wrong_d));
            allocator_type::free_on_device(a);
            CHECK(cudaDeviceSynchronize());
        }
    }
    if (csv)
        fclose(csv);
    return failures != 0;
}
