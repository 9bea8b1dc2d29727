/* clheap marching: paper 003's motivating case. A kernel polygonises an animated
 * implicit surface (marching tetrahedra, the marching-cubes family) and emits a
 * data-dependent number of triangles per chunk of the grid straight into device heap
 * allocations: no host-side count, no readback before allocating, no buffer sized for
 * the worst case. Each frame frees the chunk's previous triangles on the device. The
 * heap starts small and grows by its policy when a frame's mallocs fail, and only the
 * failed chunks run again (clheap_heap_grow_if_needed: one 4-byte read per frame).
 *
 * Checked every frame against a CPU polygonisation of the same surface: the triangle
 * count of every chunk exactly, its area to 1e-4, the heap's invariants; at the end
 * the host frees every chunk's triangles with one enqueued batch and the heap is empty.
 * Usage: clheap-marching [--cells N (multiple of 4, default 64)] [--frames F (8)]
 *                        [--heap-mib M (1)] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { CHUNK = 4, BALLS = 4, MAX_TRIANGLES = CHUNK * CHUNK * CHUNK * 6 * 2, TRIANGLE_BYTES = 9 * sizeof(float) };

/* The surface and its polygonisation, written once: compiled here as C (the CPU
 * reference) and handed to the device as text (XSTR below), so both run the same code.
 * The surface is integer so that both classify every corner alike: corner p is inside
 * when max over the balls of r^2 - |p - c|^2 is > 0; the balls move along integer
 * triangle waves. Marching tetrahedra over one chunk of CHUNK^3 cells: each cube is six
 * tetrahedra around its 0-7 diagonal; one with one or three corners inside yields a
 * triangle, with two a quad (two triangles); vertices lie where the field crosses 0
 * along the edges. polygonise writes the chunk's triangles (9 floats each) to out unless
 * out is 0, and returns how many. */
#define MARCHING_CODE                                                                      \
    static int tri_wave(int t, int period)                                                 \
    {                                                                                      \
        t %= 2 * period;                                                                   \
        return t < period ? t : 2 * period - t;                                            \
    }                                                                                      \
    static int field(const int *p, int cells, int frame)                                   \
    {                                                                                      \
        int best = -0x7fffffff;                                                            \
        for (int b = 0; b < 4; b++) {                                                      \
            int r = cells / 6 + b * cells / 24;                                            \
            int dx = p[0] - (cells / 4 + tri_wave(frame * (b + 1) + b * 7, cells / 2));    \
            int dy = p[1] - (cells / 3 + tri_wave(frame * (3 - b % 3) + b * 11, cells / 3)); \
            int dz = p[2] - (cells / 2 + (b - 2) * cells / 8);                             \
            int v = r * r - (dx * dx + dy * dy + dz * dz);                                 \
            best = v > best ? v : best;                                                    \
        }                                                                                  \
        return best;                                                                       \
    }                                                                                      \
    static void put_edge(GLOBAL float *out, unsigned at, const int *a, int va, const int *b, int vb) \
    {                                                                                      \
        float t = (float)va / (float)(va - vb);                                            \
        for (int i = 0; i < 3; i++)                                                        \
            out[at + i] = (float)a[i] + t * (float)(b[i] - a[i]);                          \
    }                                                                                      \
    static unsigned polygonise(int cx, int cy, int cz, int cells, int frame, GLOBAL float *out) \
    {                                                                                      \
        const int axes[6][2] = {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};            \
        unsigned k = 0;                                                                    \
        for (int cube = 0; cube < 64; cube++) {                                            \
            int p[8][3], v[8];                                                             \
            for (int c = 0; c < 8; c++) {                                                  \
                p[c][0] = cx * 4 + cube % 4 + (c & 1);                                     \
                p[c][1] = cy * 4 + cube / 4 % 4 + (c >> 1 & 1);                            \
                p[c][2] = cz * 4 + cube / 16 + (c >> 2 & 1);                               \
                v[c] = field(p[c], cells, frame);                                          \
            }                                                                              \
            for (int t = 0; t < 6; t++) {                                                  \
                int corner[4] = {0, 1 << axes[t][0], 1 << axes[t][0] | 1 << axes[t][1], 7}; \
                int in[4], outside[4], ni = 0, no = 0;                                     \
                for (int j = 0; j < 4; j++) {                                              \
                    if (v[corner[j]] > 0)                                                  \
                        in[ni++] = corner[j];                                              \
                    else                                                                   \
                        outside[no++] = corner[j];                                         \
                }                                                                          \
                if (ni == 1 || ni == 3) {                                                  \
                    int l = ni == 1 ? in[0] : outside[0];                                  \
                    for (int e = 0; e < 3; e++) {                                          \
                        int o = ni == 1 ? outside[e] : in[e];                              \
                        if (out)                                                           \
                            put_edge(out, 9u * k + 3u * (unsigned)e, p[l], v[l], p[o], v[o]); \
                    }                                                                      \
                    k++;                                                                   \
                } else if (ni == 2) {                                                      \
                    const int quad[6][2] = {{0, 0}, {0, 1}, {1, 1}, {0, 0}, {1, 1}, {1, 0}}; \
                    for (int e = 0; out && e < 6; e++) {                                   \
                        int a = in[quad[e][0]], b = outside[quad[e][1]];                   \
                        put_edge(out, 9u * k + 3u * (unsigned)e, p[a], v[a], p[b], v[b]);  \
                    }                                                                      \
                    k += 2;                                                                \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        return k;                                                                          \
    }
#define STR(...) #__VA_ARGS__
#define XSTR(...) STR(__VA_ARGS__)

#define GLOBAL __global
static const char *kernel_source =
    XSTR(MARCHING_CODE) "\n"
    "/* One work-item per chunk. retry == 0: a new frame, the chunk's previous triangles\n"
    " * are freed first; retry == 1: only chunks whose malloc failed (count set, no unit). */\n"
    "__kernel void emit(__global clheap_heap *heap, int cells, int frame, int retry,\n"
    "                   __global uint *units, __global uint *counts) {\n"
    "    int m = cells / 4, c = (int)get_global_id(0);\n"
    "    if (c >= m * m * m) return;\n"
    "    if (retry && !(counts[c] && !units[c])) return;\n"
    "    if (units[c]) { clheap_free_unit(heap, units[c]); units[c] = 0u; }\n"
    "    int cx = c % m, cy = c / m % m, cz = c / (m * m);\n"
    "    uint n = polygonise(cx, cy, cz, cells, frame, 0);\n"
    "    counts[c] = n;\n"
    "    if (!n) return;\n"
    "    __global float *out = clheap_malloc(heap, n * 9u * sizeof(float));\n"
    "    if (!out) return; /* counted in the heap; retried after growth */\n"
    "    polygonise(cx, cy, cz, cells, frame, out);\n"
    "    units[c] = clheap_unit_of(heap, out);\n"
    "}\n"
    "/* A later kernel that only reads what emit left: each chunk's surface area. */\n"
    "__kernel void measure(__global clheap_heap *heap, int chunks, __global const uint *units,\n"
    "                      __global const uint *counts, __global float *area) {\n"
    "    int c = (int)get_global_id(0);\n"
    "    if (c >= chunks) return;\n"
    "    __global const float *t = clheap_pointer(heap, units[c]);\n"
    "    float sum = 0.0f;\n"
    "    for (uint k = 0; t && k < counts[c]; k++, t += 9) {\n"
    "        float3 p = (float3)(t[0], t[1], t[2]), q = (float3)(t[3], t[4], t[5]), r = (float3)(t[6], t[7], t[8]);\n"
    "        sum += 0.5f * length(cross(q - p, r - p));\n"
    "    }\n"
    "    area[c] = units[c] || !counts[c] ? sum : -1.0f;\n"
    "}\n";
#undef GLOBAL

/* The CPU reference: the same code, compiled as C. */
#define GLOBAL
MARCHING_CODE
#undef GLOBAL

static double triangle_area(const float *t)
{
    double ux = t[3] - t[0], uy = t[4] - t[1], uz = t[5] - t[2];
    double vx = t[6] - t[0], vy = t[7] - t[1], vz = t[8] - t[2];
    double cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
    return 0.5 * sqrt(cx * cx + cy * cy + cz * cz);
}

int main(int argc, char **argv)
{
    int cells = arg_int(argc, argv, "--cells", 64), frames = arg_int(argc, argv, "--frames", 8);
    int heap_mib = arg_int(argc, argv, "--heap-mib", 1);
    if (cells < CHUNK || cells % CHUNK || frames < 1 || heap_mib < 1) {
        fprintf(stderr, "usage: %s [--cells N (multiple of %d)] [--frames F] [--heap-mib M]\n", argv[0], CHUNK);
        return 2;
    }
    int m = cells / CHUNK, chunks = m * m * m;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char name[256];
    open_device(&device, &context, &queue, name, sizeof name);
    printf("device: %s\n", name);

    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = (uint64_t)heap_mib << 20;
    config.grow.factor = 2.0;
    config.grow.max_bytes = 1u << 30;
    clheap_heap *heap = NULL;
    CHECK(clheap_heap_create(context, device, queue, &config, &heap));
    cl_program program = build_or_exit(heap, kernel_source);
    cl_kernel emit = kernel_or_exit(program, "emit"), measure = kernel_or_exit(program, "measure");
    size_t table_bytes = (size_t)chunks * sizeof(cl_uint);
    cl_mem units = buffer_or_exit(context, CL_MEM_READ_WRITE, table_bytes, NULL);
    cl_mem counts = buffer_or_exit(context, CL_MEM_READ_WRITE, table_bytes, NULL);
    cl_mem areas = buffer_or_exit(context, CL_MEM_READ_WRITE, (size_t)chunks * sizeof(float), NULL);
    cl_uint zero = 0;
    CHECK(clEnqueueFillBuffer(queue, units, &zero, sizeof zero, 0, table_bytes, 0, NULL, NULL));
    CHECK(clEnqueueFillBuffer(queue, counts, &zero, sizeof zero, 0, table_bytes, 0, NULL, NULL));

    uint32_t *got_counts = malloc(table_bytes);
    float *got_areas = malloc((size_t)chunks * sizeof(float));
    float *triangles = malloc((size_t)MAX_TRIANGLES * TRIANGLE_BYTES);
    if (!got_counts || !got_areas || !triangles)
        return 2;
    size_t global = ((size_t)chunks + 63) / 64 * 64, local = 64;
    int ok = 1, growths = 0;
    for (int frame = 0; frame < frames && ok; frame++) {
        int retries = 0;
        for (int retry = 0;; retry = 1) { /* the frame, then its failed chunks after each growth */
            CHECK(clheap_heap_set_kernel_arg(heap, emit, 0));
            CHECK(clSetKernelArg(emit, 1, sizeof cells, &cells));
            CHECK(clSetKernelArg(emit, 2, sizeof frame, &frame));
            CHECK(clSetKernelArg(emit, 3, sizeof retry, &retry));
            CHECK(clSetKernelArg(emit, 4, sizeof units, &units));
            CHECK(clSetKernelArg(emit, 5, sizeof counts, &counts));
            CHECK(clEnqueueNDRangeKernel(queue, emit, 1, NULL, &global, &local, 0, NULL, NULL));
            int grew = 0;
            CHECK(clheap_heap_grow_if_needed(heap, &grew));
            if (!grew)
                break;
            growths++;
            if (++retries > 16) {
                fprintf(stderr, "frame %d: chunks still failing after %d growths\n", frame, retries);
                return 1;
            }
        }
        CHECK(clheap_heap_set_kernel_arg(heap, measure, 0));
        CHECK(clSetKernelArg(measure, 1, sizeof chunks, &chunks));
        CHECK(clSetKernelArg(measure, 2, sizeof units, &units));
        CHECK(clSetKernelArg(measure, 3, sizeof counts, &counts));
        CHECK(clSetKernelArg(measure, 4, sizeof areas, &areas));
        CHECK(clEnqueueNDRangeKernel(queue, measure, 1, NULL, &global, &local, 0, NULL, NULL));

        /* The check: every chunk against the CPU's polygonisation of the same frame. */
        CHECK(clEnqueueReadBuffer(queue, counts, CL_FALSE, 0, table_bytes, got_counts, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(queue, areas, CL_TRUE, 0, (size_t)chunks * sizeof(float), got_areas, 0, NULL, NULL));
        uint64_t total = 0, wrong = 0;
        double area = 0.0;
        for (int c = 0; c < chunks; c++) {
            uint32_t n = polygonise(c % m, c / m % m, c / (m * m), cells, frame, triangles);
            double a = 0.0;
            for (uint32_t k = 0; k < n; k++)
                a += triangle_area(triangles + 9 * k);
            wrong += got_counts[c] != n || fabs(got_areas[c] - a) > 1e-4 * (1.0 + a);
            total += n;
            area += a;
        }
        char what[256] = "";
        clheap_status sound = clheap_heap_check(heap, what, sizeof what);
        clheap_heap_stats s;
        CHECK(clheap_heap_calculate_stats(heap, &s));
        printf("frame %d: %llu triangles (area %.1f, %llu B) in %d chunks, the heap holding %llu B of %llu MiB; "
               "%llu chunks wrong%s%s\n",
               frame, (unsigned long long)total, area, (unsigned long long)total * TRIANGLE_BYTES, chunks,
               (unsigned long long)s.used_bytes,
               (unsigned long long)(clheap_heap_size(heap) >> 20), (unsigned long long)wrong,
               sound == CLHEAP_SUCCESS ? "" : "; heap check: ", what);
        ok = wrong == 0 && sound == CLHEAP_SUCCESS && s.errors.out_of_memory == 0;
    }
    /* The host frees every chunk's triangles at once: entries that are 0 are skipped. */
    CHECK(clheap_heap_enqueue_free(heap, queue, (size_t)chunks, units, 0, 0, NULL, NULL));
    CHECK(clFinish(queue));
    clheap_heap_stats s;
    CHECK(clheap_heap_trim(heap));
    CHECK(clheap_heap_calculate_stats(heap, &s));
    unsigned long long objects = live_objects(&s);
    printf("%d growths to %llu MiB; a buffer per chunk sized for its worst case would take %llu MiB; "
           "after the host's batch free %llu objects remain\n",
           growths, (unsigned long long)(clheap_heap_size(heap) >> 20),
           (unsigned long long)((uint64_t)chunks * MAX_TRIANGLES * TRIANGLE_BYTES >> 20), objects);
    ok = ok && objects == 0 && s.errors.bad_size + s.errors.double_free + s.errors.free_not_chunk == 0;

    free(got_counts);
    free(got_areas);
    free(triangles);
    clReleaseMemObject(units);
    clReleaseMemObject(counts);
    clReleaseMemObject(areas);
    clReleaseKernel(emit);
    clReleaseKernel(measure);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    printf(ok ? "marching OK\n" : "marching FAILED\n");
    return ok ? 0 : 1;
}
