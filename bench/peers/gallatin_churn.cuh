/* gallatin-bench --churn-mixed: clheap-bench churn-mixed's in-kernel churn on Gallatin, the
 * same kernel, shapes, stamps and CSV columns (bench/bench_churn_mixed.h). Each shape runs in
 * a child process on a new instance (as clheap-bench resets its heap), one warm-up launch
 * then N timed ones, each under the time limit: the parent touches no CUDA, kills a child past
 * it and writes a "timeout" row, and a child that dies (a crash, a CUDA error) gets a
 * "failed" row. Gallatin has no error counters: bad_frees is -1 and the NULLs are what its
 * malloc returned. Writes DIR/churn_mixed-gallatin.csv.
 * Included by gallatin_bench.cu alone: Gallatin's header defines kernels, so the harness is
 * one translation unit. */
#ifndef CLHEAP_GALLATIN_CHURN_CUH
#define CLHEAP_GALLATIN_CHURN_CUH

#include "gallatin_common.cuh"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include "../bench_churn_mixed.h"
}

enum { CHILD_OK = 0, CHILD_WRONG = 4 }; /* any other exit: the child failed before its row */

/* clheap-bench's churn_mixed kernel (BENCH_CHURN_KERNEL_SOURCE) on Gallatin. */
__global__ static void churn_mixed(allocator_type *a, uint32_t n, uint32_t rounds, uint32_t depth,
                                   uint32_t max_shift, unsigned *counts)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x, nulls = 0, wrong = 0, sum = 0;
    if (id >= n)
        return;
    uint32_t *ring[BENCH_CHURN_MAX_DEPTH];
    for (uint32_t k = 0; k < depth; k++)
        ring[k] = nullptr;
    for (uint32_t r = 0; r < rounds + depth; r++) {
        uint32_t k = r % depth;
        uint32_t *old = ring[k], *p = nullptr;
        if (old) {
            uint32_t words = bench_churn_bytes(id, r - depth, max_shift) / 4u, s = bench_churn_stamp(id, r - depth);
            wrong += (old[0] != s) + (old[words - 1u] != s);
            a->free(old);
        }
        if (r < rounds) {
            uint32_t bytes = bench_churn_bytes(id, r, max_shift), s = bench_churn_stamp(id, r);
            p = (uint32_t *)a->malloc(bytes);
            sum += bytes;
            if (p) {
                p[0] = s;
                p[bytes / 4u - 1u] = s;
            } else {
                nulls++;
            }
        }
        ring[k] = p;
    }
    if (nulls)
        atomicAdd(&counts[0], nulls);
    if (wrong)
        atomicAdd(&counts[1], wrong);
    if (id < BENCH_CHURN_SUM_ITEMS)
        atomicAdd(&counts[2], sum);
}

static void churn_row(FILE *csv, const bench_churn_shape *s, double bound, const std::vector<double> &t,
                      unsigned nulls, unsigned wrong, int runs, const char *status)
{
    char range[16];
    bench_churn_range_name(s, range, sizeof range);
    double m = t.empty() ? 0 : median(t), lo = t.empty() ? 0 : *std::min_element(t.begin(), t.end());
    double hi = t.empty() ? 0 : *std::max_element(t.begin(), t.end()), rate = m > 0 ? (double)s->items * s->rounds / m : 0;
    printf("  %-10s %9u %6u %5u %5s %6.1f%% %10.3f %12.3e %8u %6u %5s %s\n", "Gallatin", s->items, s->rounds, s->depth,
           range, bound * 100, m * 1e3, rate, nulls, wrong, "-", status);
    if (csv) /* line buffered: the row is in the file before the child exits */
        fprintf(csv, "Gallatin,%u,%u,%u,%s,%.4f,%.9f,%.9f,%.9f,%.6e,%u,%u,-1,%d,%s\n", s->items, s->rounds, s->depth,
                range, bound, m, lo, hi, rate, nulls, wrong, runs, status);
}

/* The child: one shape on a new instance; exits CHILD_OK or CHILD_WRONG after its row. */
static int churn_child(const bench_churn_shape *s, uint64_t heap_bytes, double bound, int runs, FILE *csv)
{
    allocator_type *a = allocator_type::generate_on_device(heap_bytes, 42, false);
    unsigned *counts_d, counts[3], nulls = 0, wrong = 0, sum_wrong = 0, sum = bench_churn_sum(s);
    CHECK(cudaMalloc(&counts_d, sizeof counts));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t;
    for (int run = 0; run <= runs; run++) { /* run 0: warm-up */
        CHECK(cudaMemset(counts_d, 0, sizeof counts));
        cudaEventRecord(e0);
        churn_mixed<<<(s->items + 255) / 256, 256>>>(a, s->items, s->rounds, s->depth, s->max_shift, counts_d);
        cudaEventRecord(e1);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(counts, counts_d, sizeof counts, cudaMemcpyDeviceToHost));
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (run > 0)
            t.push_back(ms * 1e-3);
        nulls += counts[0];
        wrong += counts[1];
        sum_wrong += counts[2] != sum;
    }
    churn_row(csv, s, bound, t, nulls, wrong, runs, wrong || sum_wrong ? "wrong" : "ok");
    if (sum_wrong)
        printf("    sizes asked differ from bench_churn_mixed.h's in %u launches\n", sum_wrong);
    allocator_type::free_on_device(a);
    CHECK(cudaDeviceSynchronize());
    return wrong || sum_wrong ? CHILD_WRONG : CHILD_OK;
}

/* One shape in a child under `limit` seconds a launch (its warm-up and runs: limit x (runs + 2)). */
static int churn_shape(const bench_churn_shape *s, uint64_t heap_bytes, int runs, FILE *csv, int limit)
{
    /* The pool Gallatin manages is the heap's bytes: the bound's denominator. */
    double bound = (double)bench_churn_live_bound(s) / (double)heap_bytes;
    fflush(stdout);
    if (csv)
        fflush(csv);
    pid_t child = fork();
    if (child == 0)
        _exit(churn_child(s, heap_bytes, bound, runs, csv));
    if (child < 0)
        return 1;
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 50) { /* a benchmark harness's time limit, not a test's */
        if (waitpid(child, &status, WNOHANG) == child)
            break;
        if (waited_ms >= limit * 1000 * (runs + 2)) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            churn_row(csv, s, bound, {}, 0, 0, runs, "timeout");
            return 1;
        }
        usleep(50 * 1000);
    }
    if (WIFEXITED(status) && (WEXITSTATUS(status) == CHILD_OK || WEXITSTATUS(status) == CHILD_WRONG))
        return WEXITSTATUS(status) != CHILD_OK;
    churn_row(csv, s, bound, {}, 0, 0, runs, "failed");
    return 1;
}

static int churn_mixed_main(int quick, int runs, const char *csv_dir, uint64_t heap_bytes, const char *spec, int limit)
{
    bench_churn_shape given[32];
    size_t n;
    const bench_churn_shape *shapes = bench_churn_chosen(quick, spec, given, sizeof given / sizeof *given, &n);
    if (!shapes)
        return 2;
    FILE *csv = gallatin_csv_open(csv_dir, "churn_mixed-gallatin.csv", BENCH_CHURN_COLUMNS);
    printf("gallatin-bench churn-mixed: heap %llu MiB, median of %d launches, at most %d s a launch\n",
           (unsigned long long)(heap_bytes >> 20), runs, limit);
    bench_churn_print_header();
    int failures = 0;
    for (size_t i = 0; i < n; i++)
        failures += churn_shape(&shapes[i], heap_bytes, runs, csv, limit);
    if (csv)
        fclose(csv);
    return failures != 0;
}

#endif
