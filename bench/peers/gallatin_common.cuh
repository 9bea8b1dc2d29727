/* What the Gallatin harness's headers share (one translation unit, gallatin_bench.cu): the instance type, CUDA error checks, the median. */
#ifndef CLHEAP_GALLATIN_COMMON_CUH
#define CLHEAP_GALLATIN_COMMON_CUH

#include <gallatin/allocators/gallatin.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using allocator_type = gallatin::allocators::Gallatin<16ull * 1024 * 1024, 16, 4096>;

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* DIR/name, its header line written, or NULL (no DIR, or it cannot be written). Line
 * buffered: every row reaches the file as it is written, before a fork copies the buffer
 * and whatever a time limit kills. */
static inline FILE *gallatin_csv_open(const char *dir, const char *name, const char *header)
{
    if (!dir)
        return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *csv = fopen(path, "w");
    if (csv) {
        setvbuf(csv, NULL, _IOLBF, 0);
        fprintf(csv, "%s\n", header);
    }
    return csv;
}

static inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
