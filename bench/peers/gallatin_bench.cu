/* clheap-bench's `throughput` shapes run on Gallatin (McCoy & Pandey, PPoPP'24), the
 * general-purpose CUDA allocator clheap's default allocator is compared with. This
 * harness is clheap's own; Gallatin's header-only source is fetched at run time and
 * never committed (CMake builds this only when given -DCLHEAP_GALLATIN_DIR).
 *
 *   gallatin-bench [--quick] [--cold] [--runs N] [--csv DIR] [--heap-mib N]
 *   gallatin-bench --oom-launch [--quick] [--runs N] [--csv DIR] [--launch-timeout S]
 *
 * --oom-launch: clheap-bench oom-launch's launches instead (see oom_launch_main below).
 *
 * Same shapes as clheap-bench throughput (bench/bench_shapes.h): every work-item
 * mallocs and stamps its first word, the pointers are read back and proven disjoint,
 * then every work-item checks its stamp and frees. Times are CUDA events around each
 * kernel; the median of N runs after one warm-up. One Gallatin instance per shape,
 * reused by its runs ("warm", as clheap-bench reuses its heap), or with --cold a new
 * instance for every run (as clheap-bench --cold resets its heap). Writes
 * DIR/throughput-gallatin.csv with the columns of clheap's throughput.csv. */
#include <gallatin/allocators/gallatin.cuh>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "../bench_shapes.h"
}

using allocator_type = gallatin::allocators::Gallatin<16ull * 1024 * 1024, 16, 4096>;

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

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

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

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
    FILE *csv = NULL;
    if (csv_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/oom_launch-gallatin.csv", csv_dir);
        csv = fopen(path, "w");
        if (csv) {
            fprintf(csv, "%s\n", BENCH_OOM_LAUNCH_COLUMNS);
            setvbuf(csv, NULL, _IOLBF, 0);
        }
    }
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

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int quick = 0, runs = 5, cold = 0, oom = 0, limit = 60;
    const char *csv_dir = NULL;
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
        else if (!strcmp(argv[i], "--launch-timeout") && i + 1 < argc)
            limit = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gallatin-bench [--quick] [--cold] [--runs N] [--csv DIR] [--heap-mib N]\n"
                            "       gallatin-bench --oom-launch [--quick] [--runs N] [--csv DIR] [--launch-timeout S]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 15 || limit < 1)
        return 2;
    if (oom)
        return oom_launch_main(quick, runs, csv_dir, limit); /* before any CUDA call: it forks */
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("gallatin-bench on %s, heap %llu MiB, median of %d runs, %s\n", prop.name,
           (unsigned long long)(heap_bytes >> 20), runs, cold ? "a new instance each" : "one instance per shape");
    FILE *csv = NULL;
    if (csv_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/throughput-gallatin.csv", csv_dir);
        csv = fopen(path, "w");
        if (csv)
            fprintf(csv, "%s\n", BENCH_THROUGHPUT_COLUMNS);
    }
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
