/* Device heap, host side: plans the layout, builds the allocator into programs, runs
 * initialisation on the device, reads heaps back to check them. */
#include "clheap/heap.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_image.h"
#include "heap_layout.h"
#include "heap_walk.h"
#include "program_il.h"
#include "probes.h"
#include "programs.h"
#include "registry.h"
#include "report.h"
#include "../cl/clheap_config.h" /* CLHEAP_MAX_ALIGNMENT */
#include "../cl/clheap_layout.h"

extern const char clheap_embedded_device_source[];
extern const char clheap_embedded_kernels_source[];

struct clheap_heap {
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    cl_mem buffer;
    cl_program program;         /* the library's own set-up kernels for this allocator */
    cl_program enqueue_program; /* its host-enqueued malloc, built on first use */
    cl_program enqueue_free_program; /* and free (without NVIDIA's register cap) */
    cl_kernel init_chunks;  /* circular, FreeHeap: clheap_init_chunks; bitmap kinds: clheap_init_bitmaps */
    cl_kernel collect_blocks; /* BlockAlloc: parallel_do's block list */
    cl_kernel close_runs;     /* TierAlloc: run hints closed before parallel_do */
    cl_kernel settle;         /* TierAlloc: unsettled blocks settled after that */
    cl_kernel enqueue_malloc; /* host-enqueued allocations: made on first use */
    cl_kernel enqueue_free;
    cl_kernel grow;           /* clheap_grow, made on first use */
    cl_mem block_list;        /* BlockAlloc: that list */
    cl_mem block_count;       /* BlockAlloc: its length */
    clheap_heap_config config;
    clheap_layout layout;
    int warp_coalescing; /* BlockAlloc, TierAlloc, circular family on NVIDIA: probed.ptx_level */
    int atomics64;       /* clheap_device_has_atomics64: 0 builds with -DCLHEAP_ATOMICS64=0 */
    clheap_probed probed; /* host/probes.h: -DCLHEAP_FENCE_BY_ATOMIC=1, -DCLHEAP_LOOP_LIMIT=n */
    pthread_mutex_t lock;      /* recursive: every call but build_program holds it (enter) */
    cl_command_queue *queues;  /* other queues enqueue_malloc/free used, retained: grow and */
    size_t queue_count;        /* destroy finish them (their work reads the buffer) */
};

const char *clheap_heap_program_source(void)
{
    return clheap_embedded_device_source;
}

/* Every call on a heap runs between enter and leave: inside the handle (a destroy waits
 * for it, host/registry.h) and under the heap's lock, so calls from several threads run
 * one at a time. NULL is an invalid argument; a handle not (or no longer) registered is
 * invalid. The lock is recursive: grow_if_needed, grow and parallel_do call other calls. */
static clheap_status enter(const clheap_heap *heap)
{
    if (!heap)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (!clheap_registry_enter(heap, CLHEAP_HANDLE_HEAP))
        return CLHEAP_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&((clheap_heap *)heap)->lock);
    return CLHEAP_SUCCESS;
}

static void leave(const clheap_heap *heap)
{
    pthread_mutex_unlock(&((clheap_heap *)heap)->lock);
    clheap_registry_leave(heap);
}

/* Every other queue a batch was enqueued on, then the heap's queue, finished: the heap's
 * queue waits for those batches (enqueue_beside), so theirs go first. */
static cl_int finish_queues(clheap_heap *heap)
{
    cl_int err = CL_SUCCESS;
    for (size_t i = 0; i < heap->queue_count && err == CL_SUCCESS; i++)
        err = clFinish(heap->queues[i]);
    return err == CL_SUCCESS ? clFinish(heap->queue) : err;
}

/* Retains a queue other than the heap's the first time a batch is enqueued on it. */
static clheap_status remember_queue(clheap_heap *heap, cl_command_queue queue)
{
    for (size_t i = 0; i < heap->queue_count; i++)
        if (heap->queues[i] == queue)
            return CLHEAP_SUCCESS;
    cl_command_queue *grown = realloc(heap->queues, (heap->queue_count + 1) * sizeof *grown);
    if (!grown)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    heap->queues = grown;
    cl_int err = clRetainCommandQueue(queue);
    if (err == CL_SUCCESS)
        heap->queues[heap->queue_count++] = queue;
    return err;
}

/* A public call's body: `call` (the static heap_* function of the same name) between
 * enter and leave. */
#define CLHEAP_INSIDE(heap, call)                                                                                     \
    clheap_status status = enter(heap);                                                                               \
    if (status == CLHEAP_SUCCESS) {                                                                                   \
        status = call;                                                                                                \
        leave(heap);                                                                                                  \
    }                                                                                                                 \
    return status

cl_mem clheap_heap_buffer(const clheap_heap *heap)
{
    cl_mem buffer = NULL;
    if (enter(heap) == CLHEAP_SUCCESS) {
        buffer = heap->buffer;
        leave(heap);
    }
    return buffer;
}

static clheap_status heap_pool_range(const clheap_heap *heap, uint64_t *begin, uint64_t *bytes)
{
    if (!begin || !bytes)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    const uint32_t *h = heap->layout.header;
    *begin = (uint64_t)h[CLHEAP_HDR_POOL_START] * CLHEAP_UNIT_BYTES;
    *bytes = (uint64_t)(h[CLHEAP_HDR_POOL_END] - h[CLHEAP_HDR_POOL_START]) * CLHEAP_UNIT_BYTES;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_pool_range(const clheap_heap *heap, uint64_t *begin, uint64_t *bytes)
{
    CLHEAP_INSIDE(heap, heap_pool_range(heap, begin, bytes));
}

clheap_allocator clheap_heap_allocator(const clheap_heap *heap)
{
    clheap_allocator allocator = (clheap_allocator)0;
    if (enter(heap) == CLHEAP_SUCCESS) {
        allocator = heap->config.allocator;
        leave(heap);
    }
    return allocator;
}

/* The options, for a heap being created (not registered yet) or a live one, to go before
 * user_options (NULL: none). */
static clheap_status write_build_options(const clheap_heap *heap, const char *user_options, char *buf, size_t len)
{
    char cap[48] = "", loops[40] = "";
    if (heap->probed.loop_limit)
        snprintf(loops, sizeof loops, " -DCLHEAP_LOOP_LIMIT=%u", heap->probed.loop_limit);
    unsigned registers = clheap_register_cap(heap->config.allocator, heap->warp_coalescing, user_options);
    if (registers)
        snprintf(cap, sizeof cap, " -cl-nv-maxrregcount=%u", registers);
    int n = snprintf(buf, len, "-DCLHEAP_ALLOCATOR=%d%s%s%s%s%s%s", (int)heap->config.allocator,
                     heap->warp_coalescing ? " -DCLHEAP_HAVE_PTX=1" : "",
                     heap->warp_coalescing > 1 ? " -DCLHEAP_HAVE_REDUX=1" : "",
                     heap->atomics64 ? "" : " -DCLHEAP_ATOMICS64=0",
                     heap->probed.fences_are_barriers ? " -DCLHEAP_FENCE_BY_ATOMIC=1" : "", loops, cap);
    return n >= 0 && (size_t)n < len ? CLHEAP_SUCCESS : CLHEAP_ERROR_BUFFER_TOO_SMALL;
}

static clheap_status heap_build_options(const clheap_heap *heap, char *buf, size_t len)
{
    if (!buf || len == 0)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    return write_build_options(heap, NULL, buf, len);
}

clheap_status clheap_heap_build_options(const clheap_heap *heap, char *buf, size_t len)
{
    CLHEAP_INSIDE(heap, heap_build_options(heap, buf, len));
}

/* Pieces join makes of count sources: the allocator source, then a #line and a source each. */
#define JOINED(count) (2 * (count) + 1)

/* The allocator source, then each source after a #line that restarts its numbering, so
 * a build log names the user's own lines ("source 1", line 2), not the joined text's;
 * and the heap's options followed by `options`. Free both *all and *all_options. */
static clheap_status join(const clheap_heap *heap, size_t count, const char **sources, const char *options,
                          const char ***all_out, char **all_options)
{
    const char **all = malloc(JOINED(count) * sizeof *all + (count ? count : 1) * 48);
    char heap_options[160];
    write_build_options(heap, options, heap_options, sizeof heap_options);
    size_t options_len = strlen(heap_options) + (options ? strlen(options) : 0) + 2;
    *all_options = malloc(options_len);
    if (!all || !*all_options) {
        free(all);
        free(*all_options);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    char (*lines)[48] = (char (*)[48])(all + JOINED(count));
    all[0] = clheap_embedded_device_source;
    for (size_t i = 0; i < count; i++) {
        snprintf(lines[i], sizeof lines[i], "\n#line 1 \"source %zu\"\n", i + 1);
        all[1 + 2 * i] = lines[i];
        all[2 + 2 * i] = sources[i];
    }
    snprintf(*all_options, options_len, "%s %s", heap_options, options ? options : "");
    *all_out = all;
    return CLHEAP_SUCCESS;
}

/* Builds allocator source + sources with the heap's options + options (uncached). */
static clheap_status build(clheap_heap *heap, size_t count, const char **sources, const char *options,
                           cl_program *out, char *log, size_t log_len)
{
    if (log && log_len)
        log[0] = '\0';
    const char **all;
    char *all_options;
    clheap_status status = join(heap, count, sources, options, &all, &all_options);
    if (status != CLHEAP_SUCCESS)
        return status;
    status = clheap_programs_build(heap->context, heap->device, all, (cl_uint)JOINED(count), all_options, out, log,
                                   log_len);
    free(all);
    free(all_options);
    return status;
}

/* The library's own kernels (cl/clheap_kernels.cl), in three programs: the set-up part
 * (initialisation, growth, parallel_do's helpers) into heap->program at creation, for the
 * allocators that need it, or on first use; clheap_heap_enqueue_malloc's into
 * heap->enqueue_program and _free's into heap->enqueue_free_program on first use. Why
 * apart: the enqueue kernels inline the whole allocator, and building them made nearly
 * all of a heap's creation time on NVIDIA; and the free is built without NVIDIA's
 * register cap, under which a kernel that only frees gets more registers than it needs
 * (cl/clheap_config.h, CLHEAP_NV_MAX_REGISTERS). Each is shared with the other heaps of
 * its context, device and options, and cached on disk (host/programs.c). */
#define OWN_SETUP 1
#define OWN_ENQUEUE 2
#define OWN_ENQUEUE_FREE 3
static clheap_status build_own_program(clheap_heap *heap, int part)
{
    const char *kernels = clheap_embedded_kernels_source;
    const char **all;
    char *all_options, part_option[64];
    snprintf(part_option, sizeof part_option, "-DCLHEAP_KERNELS_PART=%d%s", part,
             part == OWN_ENQUEUE_FREE ? " -DCLHEAP_NV_MAX_REGISTERS=0" : "");
    clheap_status status = join(heap, 1, &kernels, part_option, &all, &all_options);
    if (status != CLHEAP_SUCCESS)
        return status;
    status = clheap_programs_get(heap->context, heap->device, all, JOINED(1), all_options,
                                 part == OWN_SETUP     ? &heap->program
                                 : part == OWN_ENQUEUE ? &heap->enqueue_program
                                                       : &heap->enqueue_free_program);
    free(all);
    free(all_options);
    return status;
}

/* Reads the buffer's first `bytes` into a new host image (blocking); free() it. */
static clheap_status read_image(clheap_heap *heap, size_t bytes, uint32_t **image)
{
    *image = malloc(bytes);
    if (!*image)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    cl_int err = finish_queues(heap); /* batches on other queues write the heap: done first */
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(heap->queue, heap->buffer, CL_TRUE, 0, bytes, *image, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        free(*image);
        *image = NULL;
    }
    return err;
}

/* The bitmap kinds' header, then their bitmaps and block headers (which follow the
 * pool), read into one image without the pool: the image's header names their units
 * there, `moved` units lower than in the heap. */
static clheap_status read_metadata(clheap_heap *heap, uint32_t **image, uint64_t *moved)
{
    const uint32_t *h = heap->layout.header;
    size_t header_bytes = heap->layout.header_words * sizeof(uint32_t);
    uint64_t first = h[CLHEAP_HDR_BITMAP_FIRST];
    size_t meta_bytes = (size_t)(heap->layout.total_units - first) * CLHEAP_UNIT_BYTES;
    *moved = first - heap->layout.header_words / 4u;
    *image = malloc(header_bytes + meta_bytes);
    if (!*image)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    cl_int err = finish_queues(heap); /* batches on other queues write the heap: done first */
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(heap->queue, heap->buffer, CL_FALSE, 0, header_bytes, *image, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(heap->queue, heap->buffer, CL_TRUE, (size_t)first * CLHEAP_UNIT_BYTES, meta_bytes,
                                  (char *)*image + header_bytes, 0, NULL, NULL);
    clheap_status status = err != CL_SUCCESS ? err : clheap_image_header_matches(&heap->layout, *image, NULL, 0);
    if (status != CLHEAP_SUCCESS) {
        clFinish(heap->queue); /* the first read may still be writing into the image */
        free(*image);
        *image = NULL;
        return status;
    }
    uint32_t *w = *image;
    for (uint32_t b = 0; b < heap->layout.bitmap_count; b++)
        w[CLHEAP_BM_DESC(b) + CLHEAP_BM_UNIT] -= (uint32_t)*moved;
    w[CLHEAP_HDR_BITMAP_FIRST] -= (uint32_t)*moved;
    if (clheap_allocator_has_blocks(heap->config.allocator))
        w[CLHEAP_HDR_BLOCK_HEADERS] -= (uint32_t)*moved;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_build_program(clheap_heap *heap, size_t count, const char **sources,
                                        const char *options, cl_program *program, char *log,
                                        size_t log_len)
{
    if (!program || (count && !sources))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (!heap)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    /* Inside the handle but not under its lock: a build can take long, and reads only
     * what never changes after create (context, device, configuration). */
    if (!clheap_registry_enter(heap, CLHEAP_HANDLE_HEAP))
        return CLHEAP_ERROR_INVALID_HANDLE;
    *program = NULL;
    clheap_status status = build(heap, count, sources, options, program, log, log_len);
    clheap_registry_leave(heap);
    return status;
}

clheap_status clheap_heap_build_program_il(clheap_heap *heap, const void *il, size_t il_bytes, const char *options,
                                           cl_program *program, char *log, size_t log_len)
{
    if (!program || !il || !il_bytes || !heap)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    /* Not under the handle's lock, as clheap_heap_build_program. */
    if (!clheap_registry_enter(heap, CLHEAP_HANDLE_HEAP))
        return CLHEAP_ERROR_INVALID_HANDLE;
    *program = NULL;
    clheap_status status = clheap_program_from_il(heap->context, heap->device, (int)heap->config.allocator,
                                                  heap->atomics64, il, il_bytes, options, program, log, log_len);
    clheap_registry_leave(heap);
    return status;
}

static clheap_status heap_set_kernel_arg(const clheap_heap *heap, cl_kernel kernel, cl_uint index)
{
    if (!kernel)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    return clSetKernelArg(kernel, index, sizeof heap->buffer, &heap->buffer);
}

clheap_status clheap_heap_set_kernel_arg(const clheap_heap *heap, cl_kernel kernel, cl_uint index)
{
    CLHEAP_INSIDE(heap, heap_set_kernel_arg(heap, kernel, index));
}

/* Writes the header and enqueues the chunk initialisation: nothing is read back. */
static clheap_status enqueue_initialisation(clheap_heap *heap)
{
    /* Blocking: a create that fails after this frees the header the write reads. */
    cl_int err = clEnqueueWriteBuffer(heap->queue, heap->buffer, CL_TRUE, 0,
                                      heap->layout.header_words * sizeof(uint32_t),
                                      heap->layout.header, 0, NULL, NULL);
    if (err != CL_SUCCESS || !heap->init_chunks)
        return err;
    cl_uint chunk_count = heap->layout.chunk_count, bitmap_count = heap->layout.bitmap_count;
    int bitmaps = clheap_allocator_is_bitmap(heap->config.allocator);
    err = clSetKernelArg(heap->init_chunks, 0, sizeof heap->buffer, &heap->buffer);
    if (err == CL_SUCCESS && bitmaps)
        err = clSetKernelArg(heap->init_chunks, 1, sizeof bitmap_count, &bitmap_count);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->init_chunks, bitmaps ? 2 : 1, sizeof chunk_count, &chunk_count);
    size_t local = 64, global = ((size_t)chunk_count + 1 + local - 1) / local * local;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(heap->queue, heap->init_chunks, 1, NULL, &global, &local, 0,
                                     NULL, NULL);
    return err;
}

static clheap_status heap_reset(clheap_heap *heap)
{
    return enqueue_initialisation(heap);
}

clheap_status clheap_heap_reset(clheap_heap *heap)
{
    CLHEAP_INSIDE(heap, heap_reset(heap));
}

static void release_parts(clheap_heap *heap)
{
    if (heap->init_chunks)
        clReleaseKernel(heap->init_chunks);
    if (heap->grow)
        clReleaseKernel(heap->grow);
    if (heap->collect_blocks)
        clReleaseKernel(heap->collect_blocks);
    if (heap->close_runs)
        clReleaseKernel(heap->close_runs);
    if (heap->settle)
        clReleaseKernel(heap->settle);
    if (heap->enqueue_malloc)
        clReleaseKernel(heap->enqueue_malloc);
    if (heap->enqueue_free)
        clReleaseKernel(heap->enqueue_free);
    if (heap->block_list)
        clReleaseMemObject(heap->block_list);
    if (heap->block_count)
        clReleaseMemObject(heap->block_count);
    clheap_programs_put(heap->program);
    clheap_programs_put(heap->enqueue_program);
    clheap_programs_put(heap->enqueue_free_program);
    if (heap->buffer)
        clReleaseMemObject(heap->buffer);
    if (heap->queue)
        clReleaseCommandQueue(heap->queue);
    for (size_t i = 0; i < heap->queue_count; i++)
        clReleaseCommandQueue(heap->queues[i]);
    free(heap->queues);
    if (heap->context)
        clReleaseContext(heap->context);
    clheap_layout_free(&heap->layout);
    pthread_mutex_destroy(&heap->lock);
    free(heap);
}

clheap_status clheap_heap_create(cl_context context, cl_device_id device, cl_command_queue queue,
                                 const clheap_heap_config *config, clheap_heap **out)
{
    if (!context || !device || !queue || !out)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    clheap_heap_config cfg = config ? *config : clheap_heap_config_default();
    if (cfg.min_chunk_bytes == 0)
        cfg.min_chunk_bytes = 256;
    if (cfg.uniform_chunk_bytes == 0)
        cfg.uniform_chunk_bytes = 4096;
    cl_ulong max_alloc = 0;
    cl_uint compute_units = 1;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof compute_units,
                              &compute_units, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (cfg.size_bytes > max_alloc)
        return CLHEAP_ERROR_SIZE_TOO_LARGE;
    if (cfg.grow.factor != 0.0 && !(cfg.grow.factor > 1.0 && isfinite(cfg.grow.factor)))
        return CLHEAP_ERROR_INVALID_ARGUMENT; /* 0 (never grows), or finite and above 1 */
    /* Without 64-bit atomics every allocator but the fused ones builds (the bitmap kinds
     * on split words, cl/clheap_port.h). The default is the fallback where the device ends
     * loops early (TierAlloc's build takes minutes there), the typed one for a typed heap.
     * Refused: the fused circular variants without 64-bit atomics; FreeHeap, whose batch
     * runs on one work-item, where loops end early (its sifts would be cut midway:
     * docs/design.md). The probe runs in the caller's context, before the rules read its
     * answer. */
    int atomics64 = clheap_device_has_atomics64(device);
    clheap_probed probed = clheap_probe_device(context, device);
    cfg.allocator = clheap_allocator_for_device(cfg.allocator, probed.loop_limit != 0, cfg.typed_classes != 0);
    if (clheap_allocator_name(cfg.allocator) && !clheap_device_runs(device, cfg.allocator))
        return CLHEAP_ERROR_UNSUPPORTED;
    if (!atomics64 && clheap_allocator_is_bump(cfg.allocator) && cfg.size_bytes > ((uint64_t)1 << 34))
        return CLHEAP_ERROR_SIZE_TOO_LARGE; /* the 32-bit counter's bound (cl/clheap_bump.h) */

    clheap_heap *heap = calloc(1, sizeof *heap);
    if (!heap)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutexattr_t recursive;
    int locked = pthread_mutexattr_init(&recursive) == 0;
    if (locked) {
        locked = pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE) == 0 &&
                 pthread_mutex_init(&heap->lock, &recursive) == 0;
        pthread_mutexattr_destroy(&recursive);
    }
    if (!locked) {
        free(heap);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    heap->config = cfg;
    heap->atomics64 = atomics64;
    heap->probed = probed;
    clheap_status status = clheap_layout_plan_atomics(&cfg, compute_units, atomics64 ? 64 : 32, &heap->layout);
    if (status != CLHEAP_SUCCESS) {
        pthread_mutex_destroy(&heap->lock);
        free(heap);
        return status;
    }
    clRetainContext(context);
    heap->context = context;
    clRetainCommandQueue(queue);
    heap->queue = queue;
    heap->device = device;
    heap->buffer = clCreateBuffer(context, CL_MEM_READ_WRITE,
                                  (size_t)heap->layout.total_units * CLHEAP_UNIT_BYTES, NULL, &err);
    if (err != CL_SUCCESS) {
        heap->buffer = NULL;
        release_parts(heap);
        return err;
    }
    int bitmaps = clheap_allocator_is_bitmap(cfg.allocator);
    heap->warp_coalescing = (clheap_allocator_has_blocks(cfg.allocator) || clheap_allocator_is_circular(cfg.allocator)) &&
                            !cfg.no_warp_coalescing ? probed.ptx_level : 0;
    if (clheap_allocator_is_circular(cfg.allocator) || bitmaps || cfg.allocator == CLHEAP_FREE_HEAP) {
        status = build_own_program(heap, OWN_SETUP);
        if (status == CLHEAP_SUCCESS) {
            heap->init_chunks = clCreateKernel(
                heap->program, bitmaps ? "clheap_init_bitmaps" : "clheap_init_chunks", &err);
            status = err;
        }
        if (status == CLHEAP_SUCCESS && clheap_allocator_has_blocks(cfg.allocator)) {
            heap->collect_blocks = clCreateKernel(heap->program, "clheap_collect_blocks", &err);
            if (err == CL_SUCCESS && cfg.allocator == CLHEAP_TIER_ALLOC)
                heap->close_runs = clCreateKernel(heap->program, "clheap_close_runs", &err);
            if (err == CL_SUCCESS && cfg.allocator == CLHEAP_TIER_ALLOC)
                heap->settle = clCreateKernel(heap->program, "clheap_settle", &err);
            size_t frames = heap->layout.header[CLHEAP_HDR_FRAME_COUNT];
            if (err == CL_SUCCESS)
                heap->block_list = clCreateBuffer(context, CL_MEM_READ_WRITE,
                                                  (frames ? frames : 1) * sizeof(cl_uint), NULL, &err);
            if (err == CL_SUCCESS)
                heap->block_count = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
            status = err;
        }
        if (status != CLHEAP_SUCCESS) {
            release_parts(heap);
            return status;
        }
    }
    status = enqueue_initialisation(heap);
    if (status == CLHEAP_SUCCESS)
        status = clheap_registry_add(heap, CLHEAP_HANDLE_HEAP);
    if (status != CLHEAP_SUCCESS) {
        release_parts(heap);
        return status;
    }
    *out = heap;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_destroy(clheap_heap *heap)
{
    if (!heap)
        return CLHEAP_SUCCESS;
    if (!clheap_registry_take(heap, CLHEAP_HANDLE_HEAP)) /* waits for calls inside */
        return CLHEAP_ERROR_INVALID_HANDLE;
    finish_queues(heap); /* kernels still using the buffer finish first */
    release_parts(heap);
    return CLHEAP_SUCCESS;
}

/* read_errors' precedence (heap.h), lower first; DEVICE_STATUSES for any status that is
 * no device error (CLHEAP_SUCCESS included). */
static const clheap_status device_statuses[] = {CLHEAP_ERROR_HEAP_CORRUPT, CLHEAP_ERROR_DEVICE_BAD_FREE,
                                                CLHEAP_ERROR_DEVICE_BAD_SIZE,
                                                CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY, CLHEAP_ERROR_DEVICE_CONTENDED};
enum { DEVICE_STATUSES = sizeof device_statuses / sizeof *device_statuses };
static int device_status_rank(clheap_status status)
{
    for (int i = 0; i < DEVICE_STATUSES; i++)
        if (device_statuses[i] == status)
            return i;
    return DEVICE_STATUSES;
}

static clheap_status heap_read_errors(clheap_heap *heap, clheap_heap_errors *errors)
{
    uint32_t words[32]; /* the fixed header: counters included */
    cl_int err = clEnqueueReadBuffer(heap->queue, heap->buffer, CL_TRUE, 0, sizeof words, words, 0,
                                     NULL, NULL);
    if (err != CL_SUCCESS)
        return err;
    clheap_heap_errors e;
    clheap_heap_errors_from_header(words, &e);
    if (errors)
        *errors = e;
    /* Each counter's status comes from the vocabulary; the precedence is heap.h's. */
    clheap_status answer = CLHEAP_SUCCESS;
#define CLHEAP_ERROR_STATUS(field, word, status)                                             \
    if (e.field && device_status_rank(status) < device_status_rank(answer))                  \
        answer = status;
    CLHEAP_DEVICE_ERROR_LIST(CLHEAP_ERROR_STATUS)
#undef CLHEAP_ERROR_STATUS
    return answer;
}

clheap_status clheap_heap_read_errors(clheap_heap *heap, clheap_heap_errors *errors)
{
    CLHEAP_INSIDE(heap, heap_read_errors(heap, errors));
}

/* host/heap_layout.h, clheap_growth, says what a growth does; this enqueues it. On any
 * failure the heap is as it was: the old buffer is released only after the new one is
 * complete. */
static cl_int enqueue_growth(clheap_heap *heap, const clheap_growth *g, cl_mem larger)
{
    cl_int err = clEnqueueCopyBuffer(heap->queue, heap->buffer, larger, 0, 0,
                                     (size_t)g->copy_units * CLHEAP_UNIT_BYTES, 0, NULL, NULL);
    if (clheap_allocator_is_bitmap(heap->config.allocator))
        for (int r = 0; r < CLHEAP_GROWTH_RANGES && err == CL_SUCCESS; r++) {
            const uint32_t *range = clheap_growth_ranges[r];
            /* Blocking: a growth that fails after this frees the layout the write reads. */
            err = clEnqueueWriteBuffer(heap->queue, larger, CL_TRUE, range[0] * sizeof(uint32_t),
                                       (range[1] - range[0]) * sizeof(uint32_t), g->layout.header + range[0], 0,
                                       NULL, NULL);
        }
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->grow, 0, sizeof larger, &larger);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->grow, 1, sizeof heap->buffer, &heap->buffer);
    for (cl_uint i = 0; i < g->arg_count && err == CL_SUCCESS; i++)
        err = clSetKernelArg(heap->grow, i + 2, sizeof(cl_uint), &g->args[i]);
    size_t local = g->items < 64 ? g->items : 64, global = (g->items + local - 1) / local * local;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(heap->queue, heap->grow, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(heap->queue); /* the old buffer is not used after this */
    return err;
}

static clheap_status heap_grow(clheap_heap *heap, uint64_t new_size_bytes)
{
    clheap_growth g;
    clheap_status status = clheap_layout_plan_growth(&heap->config, &heap->layout, new_size_bytes / CLHEAP_UNIT_BYTES, &g);
    if (status != CLHEAP_SUCCESS)
        return status;
    cl_int err = heap->program ? CL_SUCCESS : build_own_program(heap, OWN_SETUP);
    if (!heap->grow && err == CL_SUCCESS)
        heap->grow = clCreateKernel(heap->program, "clheap_grow", &err);
    if (err != CL_SUCCESS)
        heap->grow = NULL;
    cl_mem larger = NULL, block_list = NULL;
    if (err == CL_SUCCESS)
        larger = clCreateBuffer(heap->context, CL_MEM_READ_WRITE, (size_t)g.layout.total_units * CLHEAP_UNIT_BYTES,
                                NULL, &err);
    if (err == CL_SUCCESS && heap->block_list) /* parallel_do lists up to every frame */
        block_list = clCreateBuffer(heap->context, CL_MEM_READ_WRITE,
                                    (size_t)g.layout.header[CLHEAP_HDR_FRAME_COUNT] * sizeof(cl_uint), NULL, &err);
    if (err == CL_SUCCESS) /* batches on other queues allocate in the old buffer: done first */
        err = finish_queues(heap);
    if (err == CL_SUCCESS) /* TierAlloc: no hint holds a run while runs change length */
        err = clheap_heap_trim(heap);
    if (err == CL_SUCCESS)
        err = enqueue_growth(heap, &g, larger);
    if (err != CL_SUCCESS) {
        if (larger)
            clReleaseMemObject(larger);
        if (block_list)
            clReleaseMemObject(block_list);
        clheap_layout_free(&g.layout);
        return err;
    }
    clReleaseMemObject(heap->buffer);
    heap->buffer = larger;
    if (block_list) {
        clReleaseMemObject(heap->block_list);
        heap->block_list = block_list;
    }
    clheap_layout_free(&heap->layout);
    heap->layout = g.layout;
    heap->config.size_bytes = g.layout.total_units * CLHEAP_UNIT_BYTES;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_grow(clheap_heap *heap, uint64_t new_size_bytes)
{
    CLHEAP_INSIDE(heap, heap_grow(heap, new_size_bytes));
}

uint64_t clheap_heap_size(const clheap_heap *heap)
{
    uint64_t bytes = 0;
    if (enter(heap) == CLHEAP_SUCCESS) {
        bytes = (uint64_t)heap->layout.total_units * CLHEAP_UNIT_BYTES;
        leave(heap);
    }
    return bytes;
}

static clheap_status heap_grow_if_needed(clheap_heap *heap, int *grew)
{
    clheap_heap_errors e;
    clheap_status status = clheap_heap_read_errors(heap, &e);
    if (status != CLHEAP_SUCCESS && device_status_rank(status) == DEVICE_STATUSES)
        return status; /* no heap, or OpenCL failed */
    if (!e.out_of_memory)
        return CLHEAP_SUCCESS; /* bad frees are read_errors' to report */
    uint64_t max = heap->config.grow.max_bytes;
    if (!max)
        clGetDeviceInfo(heap->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL);
    /* No more than the allocator addresses (create and growth use one unit less). */
    uint64_t largest = clheap_layout_max_bytes(heap->config.allocator) - CLHEAP_UNIT_BYTES;
    max = max < largest ? max : largest;
    double wanted = (double)heap->config.size_bytes * heap->config.grow.factor;
    uint64_t target = wanted >= (double)max ? max : (uint64_t)wanted;
    if (heap->config.grow.factor <= 1.0 || target <= heap->config.size_bytes)
        return CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY;
    status = clheap_heap_grow(heap, target);
    if (status != CLHEAP_SUCCESS)
        return status;
    cl_uint zero = 0; /* the NULLs were answered: count those of the retried work afresh */
    cl_int err = clEnqueueWriteBuffer(heap->queue, heap->buffer, CL_TRUE, CLHEAP_HDR_ERR_OUT_OF_MEMORY * sizeof zero,
                                      sizeof zero, &zero, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (grew)
        *grew = 1;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_heap_grow_if_needed(clheap_heap *heap, int *grew)
{
    if (grew)
        *grew = 0;
    CLHEAP_INSIDE(heap, heap_grow_if_needed(heap, grew));
}

/* Reads the whole buffer back and walks it. */
static clheap_status read_and_walk(clheap_heap *heap, clheap_heap_stats *stats, char *what,
                                   size_t what_len)
{
    uint32_t *image = NULL;
    clheap_status status = read_image(heap, (size_t)heap->layout.total_units * CLHEAP_UNIT_BYTES, &image);
    if (status == CLHEAP_SUCCESS)
        status = clheap_image_header_matches(&heap->layout, image, what, what_len);
    if (status == CLHEAP_SUCCESS)
        status = clheap_heap_walk(image, heap->layout.total_units, stats, what, what_len);
    free(image);
    return status;
}

static clheap_status heap_calculate_stats(clheap_heap *heap, clheap_heap_stats *stats)
{
    if (!stats)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    return read_and_walk(heap, stats, NULL, 0);
}

clheap_status clheap_heap_calculate_stats(clheap_heap *heap, clheap_heap_stats *stats)
{
    CLHEAP_INSIDE(heap, heap_calculate_stats(heap, stats));
}

static clheap_status heap_check(clheap_heap *heap, char *what, size_t what_len)
{
    return read_and_walk(heap, NULL, what, what_len);
}

clheap_status clheap_heap_check(clheap_heap *heap, char *what, size_t what_len)
{
    CLHEAP_INSIDE(heap, heap_check(heap, what, what_len));
}

static clheap_status heap_repair(clheap_heap *heap, uint64_t *repaired)
{
    if (repaired)
        *repaired = 0;
    if (!clheap_allocator_is_bitmap(heap->config.allocator))
        return CLHEAP_SUCCESS;
    /* Only the bitmaps change. */
    uint32_t *image = NULL;
    uint64_t moved = 0;
    clheap_status status = read_metadata(heap, &image, &moved); /* a heap whose header does not match is not repaired */
    if (status == CLHEAP_SUCCESS) {
        uint64_t units = heap->layout.total_units - moved;
        uint64_t fixed = 0;
        status = clheap_heap_repair_image(image, units, moved, &fixed);
        if (repaired)
            *repaired = fixed;
        size_t begin = (size_t)image[CLHEAP_HDR_BITMAP_FIRST] * CLHEAP_UNIT_BYTES;
        if (status == CLHEAP_SUCCESS && fixed)
            status = clEnqueueWriteBuffer(heap->queue, heap->buffer, CL_TRUE, begin + (size_t)moved * CLHEAP_UNIT_BYTES,
                                          (size_t)(units * CLHEAP_UNIT_BYTES - begin), (char *)image + begin, 0, NULL,
                                          NULL);
    }
    free(image);
    return status;
}

clheap_status clheap_heap_repair(clheap_heap *heap, uint64_t *repaired)
{
    CLHEAP_INSIDE(heap, heap_repair(heap, repaired));
}

static clheap_status heap_indices(clheap_heap *heap, uint32_t class_index, uint32_t *out, size_t cap,
                                  size_t *count)
{
    if (!count || (cap && !out))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    clheap_allocator a = heap->config.allocator;
    if (!clheap_allocator_is_bitmap(a))
        return CLHEAP_ERROR_UNSUPPORTED;
    if (a == CLHEAP_BITMAP_ALLOC ? class_index != 0 : class_index >= heap->layout.header[CLHEAP_HDR_CLASS_COUNT])
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    uint32_t *image = NULL;
    uint64_t moved;
    clheap_status status = read_metadata(heap, &image, &moved);
    if (status == CLHEAP_SUCCESS) {
        uint32_t desc = a == CLHEAP_BITMAP_ALLOC ? CLHEAP_BM_FREE : CLHEAP_BM_ALLOCATED(class_index);
        uint64_t found = 0;
        status = clheap_bitmap_indices(image, heap->layout.total_units - moved, moved, desc, out, cap, &found, NULL);
        *count = (size_t)found;
    }
    free(image);
    return status;
}

clheap_status clheap_heap_indices(clheap_heap *heap, uint32_t class_index, uint32_t *out, size_t cap, size_t *count)
{
    CLHEAP_INSIDE(heap, heap_indices(heap, class_index, out, cap, count));
}

/* The library's enqueue programs (built on first use) and their kernels. */
static clheap_status make_enqueue_kernels(clheap_heap *heap)
{
    if (heap->enqueue_malloc && heap->enqueue_free)
        return CLHEAP_SUCCESS;
    clheap_status status = heap->enqueue_program ? CLHEAP_SUCCESS : build_own_program(heap, OWN_ENQUEUE);
    if (status == CLHEAP_SUCCESS && !heap->enqueue_free_program)
        status = build_own_program(heap, OWN_ENQUEUE_FREE);
    if (status != CLHEAP_SUCCESS)
        return status;
    cl_int err = CL_SUCCESS;
    if (!heap->enqueue_malloc)
        heap->enqueue_malloc = clCreateKernel(heap->enqueue_program, "clheap_enqueue_malloc", &err);
    if (err == CL_SUCCESS && !heap->enqueue_free)
        heap->enqueue_free = clCreateKernel(heap->enqueue_free_program, "clheap_enqueue_free", &err);
    return err;
}

/* The checks both enqueue calls share: a live heap, a handle table of uint32 entries
 * that holds [first_index, first_index + count), and the kernels. */
static clheap_status check_batch(clheap_heap *heap, size_t count, cl_mem handles, size_t first_index)
{
    if (!handles)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (count == 0)
        return CLHEAP_ERROR_ZERO_COUNT;
    size_t table_bytes = 0;
    cl_int err = clGetMemObjectInfo(handles, CL_MEM_SIZE, sizeof table_bytes, &table_bytes, NULL);
    if (err != CL_SUCCESS)
        return err;
    size_t entries = table_bytes / sizeof(uint32_t);
    if (first_index >= entries || count > entries - first_index || entries > UINT32_MAX)
        return CLHEAP_ERROR_HANDLE_OUT_OF_RANGE;
    return make_enqueue_kernels(heap);
}

/* A batch on a queue other than the heap's runs between the heap's queue's commands, as
 * if enqueued there: after a marker of everything enqueued there before it (earlier
 * batches on other queues included, through the barriers below), and a barrier there
 * makes everything enqueued later wait for it. So the library's commands on one heap
 * never run at once. Why: OpenCL 1.2 (appendix A.1) leaves a buffer that commands of
 * two queues change at the same time undefined, and Mesa's rusticl breaks it: four
 * threads batching on their own queues left a frame without its block in 6 of 12 runs
 * of test_threads there, none with one queue. Both queues are flushed, as waiting on
 * another queue's event requires. */
static cl_int enqueue_beside(clheap_heap *heap, cl_command_queue queue, cl_kernel kernel, size_t global,
                             size_t local, cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    cl_event before = NULL, done = NULL, *waits = malloc((num_events + 1) * sizeof *waits);
    cl_int err = waits ? clEnqueueMarkerWithWaitList(heap->queue, 0, NULL, &before) : CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = clFlush(heap->queue);
    if (err == CL_SUCCESS) {
        if (num_events)
            memcpy(waits, wait_list, num_events * sizeof *waits);
        waits[num_events] = before;
        err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, num_events + 1, waits, &done);
    }
    if (err == CL_SUCCESS)
        err = clFlush(queue);
    if (err == CL_SUCCESS)
        err = clEnqueueBarrierWithWaitList(heap->queue, 1, &done, NULL);
    if (err == CL_SUCCESS && event) {
        *event = done;
        done = NULL;
    }
    if (done)
        clReleaseEvent(done);
    if (before)
        clReleaseEvent(before);
    free(waits);
    return err;
}

/* Sets the arguments both kernels start with (heap, table, first entry, count) and
 * enqueues one work-item per request. */
static cl_int enqueue_batch(clheap_heap *heap, cl_command_queue queue, cl_kernel kernel, cl_mem handles,
                            size_t first_index, size_t count, cl_uint num_events, const cl_event *wait_list,
                            cl_event *event)
{
    cl_uint first = (cl_uint)first_index, n = (cl_uint)count;
    cl_int err = clSetKernelArg(kernel, 0, sizeof heap->buffer, &heap->buffer);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, 1, sizeof handles, &handles);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, 2, sizeof first, &first);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, 3, sizeof n, &n);
    size_t local = 0;
    if (err == CL_SUCCESS)
        err = clGetKernelWorkGroupInfo(kernel, heap->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof local, &local, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (queue && queue != heap->queue)
        err = remember_queue(heap, queue);
    if (err != CL_SUCCESS)
        return err;
    local = local < 256 ? local : 256;
    size_t global = (count + local - 1) / local * local;
    if (heap->config.allocator == CLHEAP_FREE_HEAP) /* serial: one work-item runs the batch */
        local = global = 1;
    if (queue && queue != heap->queue)
        return enqueue_beside(heap, queue, kernel, global, local, num_events, wait_list, event);
    return clEnqueueNDRangeKernel(heap->queue, kernel, 1, NULL, &global, &local, num_events, wait_list, event);
}

static clheap_status heap_enqueue_malloc(clheap_heap *heap, cl_command_queue queue, size_t count, uint32_t size,
                                         cl_mem sizes, size_t alignment, unsigned flags, cl_mem handles,
                                         size_t first_index, cl_uint num_events, const cl_event *wait_list,
                                         cl_event *event)
{
    clheap_status status = check_batch(heap, count, handles, first_index);
    if (status != CLHEAP_SUCCESS)
        return status;
    if ((alignment & (alignment - 1)) || alignment > CLHEAP_MAX_ALIGNMENT || (flags & ~CLHEAP_ENQUEUE_ZERO))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (sizes) {
        size_t sizes_bytes = 0;
        cl_int err = clGetMemObjectInfo(sizes, CL_MEM_SIZE, sizeof sizes_bytes, &sizes_bytes, NULL);
        if (err != CL_SUCCESS)
            return err;
        if (sizes_bytes / sizeof(uint32_t) < count)
            return CLHEAP_ERROR_INVALID_ARGUMENT;
    } else if (size == 0) {
        return CLHEAP_ERROR_ZERO_SIZE;
    }
    cl_uint per_request = sizes != NULL;
    cl_mem sizes_arg = sizes ? sizes : handles; /* not read without per_request */
    cl_kernel k = heap->enqueue_malloc;
    cl_int err = clSetKernelArg(k, 4, sizeof size, &size);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, 5, sizeof sizes_arg, &sizes_arg);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, 6, sizeof per_request, &per_request);
    cl_ulong align_arg = alignment;
    cl_uint zero = (flags & CLHEAP_ENQUEUE_ZERO) != 0;
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, 7, sizeof align_arg, &align_arg);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, 8, sizeof zero, &zero);
    if (err == CL_SUCCESS)
        err = enqueue_batch(heap, queue, k, handles, first_index, count, num_events, wait_list, event);
    return err;
}

clheap_status clheap_heap_enqueue_malloc(clheap_heap *heap, cl_command_queue queue, size_t count, uint32_t size, cl_mem sizes, cl_mem handles, size_t first_index, cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    CLHEAP_INSIDE(heap, heap_enqueue_malloc(heap, queue, count, size, sizes, 0, 0, handles, first_index, num_events, wait_list, event));
}

clheap_status clheap_heap_enqueue_malloc_ex(clheap_heap *heap, cl_command_queue queue, size_t count, uint32_t size, cl_mem sizes, size_t alignment, unsigned flags, cl_mem handles, size_t first_index, cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    CLHEAP_INSIDE(heap, heap_enqueue_malloc(heap, queue, count, size, sizes, alignment, flags, handles, first_index, num_events, wait_list, event));
}

static clheap_status heap_enqueue_free(clheap_heap *heap, cl_command_queue queue, size_t count, cl_mem handles,
                                       size_t first_index, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event)
{
    clheap_status status = check_batch(heap, count, handles, first_index);
    if (status != CLHEAP_SUCCESS)
        return status;
    if (clheap_allocator_is_bump(heap->config.allocator))
        return CLHEAP_ERROR_UNSUPPORTED;
    return enqueue_batch(heap, queue, heap->enqueue_free, handles, first_index, count, num_events, wait_list,
                         event);
}

clheap_status clheap_heap_enqueue_free(clheap_heap *heap, cl_command_queue queue, size_t count, cl_mem handles, size_t first_index, cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    CLHEAP_INSIDE(heap, heap_enqueue_free(heap, queue, count, handles, first_index, num_events, wait_list, event));
}

static clheap_status heap_trim(clheap_heap *heap)
{
    if (!heap->close_runs)
        return CLHEAP_SUCCESS;
    size_t hints = (size_t)heap->layout.header[CLHEAP_HDR_CLASS_COUNT] * heap->layout.header[CLHEAP_HDR_HINT_SLOTS];
    cl_int err = clSetKernelArg(heap->close_runs, 0, sizeof heap->buffer, &heap->buffer);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(heap->queue, heap->close_runs, 1, NULL, &hints, NULL, 0, NULL, NULL);
    size_t containers = ((size_t)heap->layout.header[CLHEAP_HDR_FRAME_COUNT] + 63) / 64;
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->settle, 0, sizeof heap->buffer, &heap->buffer);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(heap->queue, heap->settle, 1, NULL, &containers, NULL, 0, NULL, NULL);
    return err;
}

clheap_status clheap_heap_trim(clheap_heap *heap)
{
    CLHEAP_INSIDE(heap, heap_trim(heap));
}

static clheap_status heap_parallel_do(clheap_heap *heap, uint32_t class_index, cl_kernel kernel,
                                      cl_uint blocks_arg, size_t local_size)
{
    if (!kernel)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (!clheap_allocator_has_blocks(heap->config.allocator))
        return CLHEAP_ERROR_UNSUPPORTED;
    if (class_index >= heap->layout.header[CLHEAP_HDR_CLASS_COUNT])
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    cl_uint frames = heap->layout.header[CLHEAP_HDR_FRAME_COUNT], zero = 0, c = class_index;
    cl_int err = clEnqueueFillBuffer(heap->queue, heap->block_count, &zero, sizeof zero, 0, sizeof zero,
                                     0, NULL, NULL);
    if (err == CL_SUCCESS) /* runs' unhanded slots are no objects */
        err = clheap_heap_trim(heap);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->collect_blocks, 0, sizeof heap->buffer, &heap->buffer);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->collect_blocks, 1, sizeof c, &c);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->collect_blocks, 2, sizeof heap->block_list, &heap->block_list);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(heap->collect_blocks, 3, sizeof heap->block_count, &heap->block_count);
    size_t local = 64, global = ((frames + 63) / 64 + local - 1) / local * local;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(heap->queue, heap->collect_blocks, 1, NULL, &global, &local, 0, NULL, NULL);
    cl_uint blocks = 0;
    if (err == CL_SUCCESS) /* the launch size depends on it: one small blocking read */
        err = clEnqueueReadBuffer(heap->queue, heap->block_count, CL_TRUE, 0, sizeof blocks, &blocks, 0,
                                  NULL, NULL);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, blocks_arg, sizeof heap->block_list, &heap->block_list);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, blocks_arg + 1, sizeof blocks, &blocks);
    if (err != CL_SUCCESS || blocks == 0)
        return err;
    local = local_size ? local_size : 64;
    global = ((size_t)blocks * 64 + local - 1) / local * local;
    return clEnqueueNDRangeKernel(heap->queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
}

clheap_status clheap_heap_parallel_do(clheap_heap *heap, uint32_t class_index, cl_kernel kernel, cl_uint blocks_arg, size_t local_size)
{
    CLHEAP_INSIDE(heap, heap_parallel_do(heap, class_index, kernel, blocks_arg, local_size));
}

clheap_status clheap_heap_stats_json(const clheap_heap_stats *s, char *buf, size_t len, size_t *needed)
{
    if (!s)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    const char *name = clheap_allocator_name(s->allocator);
    clheap_json j;
    clheap_json_open(&j, buf, len, "heap", s->used_bytes, s->free_bytes);
    clheap_json_str(&j, "allocator", name ? name : "unknown");
    clheap_json_u64(&j, "heap_bytes", s->heap_bytes);
    clheap_json_u64(&j, "pool_bytes", s->pool_bytes);
    clheap_json_u64(&j, "live_bytes", s->live_bytes);
    clheap_json_u64(&j, "held_bytes", s->held_bytes);
    clheap_json_u64(&j, "used_chunks", s->used_chunks);
    clheap_json_u64(&j, "free_chunks", s->free_chunks);
    clheap_json_u64(&j, "requested_bytes", s->requested_bytes);
    clheap_json_u64(&j, "largest_free_bytes", s->largest_free_bytes);
    clheap_json_f64(&j, "internal_fragmentation", s->internal_fragmentation);
    clheap_json_f64(&j, "external_fragmentation", s->external_fragmentation);
    if (s->class_count) { /* BlockAlloc, TierAlloc: the small tier, per class */
        clheap_json_u64(&j, "stale_hints", s->stale_hints);
        clheap_json_f64(&j, "slot_fragmentation", s->slot_fragmentation);
        clheap_json_begin(&j, "classes", '[');
        for (uint32_t c = 0; c < s->class_count && c < 32; c++) {
            clheap_json_begin(&j, NULL, '{');
            clheap_json_u64(&j, "bytes", s->class_bytes[c]);
            clheap_json_u64(&j, "capacity", s->class_capacity[c]);
            clheap_json_u64(&j, "blocks", s->class_blocks[c]);
            clheap_json_u64(&j, "objects", s->class_objects[c]);
            clheap_json_end(&j, '}');
        }
        clheap_json_end(&j, ']');
    }
    if (s->allocator == CLHEAP_TIER_ALLOC) { /* its page tier */
        clheap_json_begin(&j, "pages", '{');
        clheap_json_u64(&j, "segment_frames", s->segment_frames);
        clheap_json_u64(&j, "frame_bytes", s->frame_bytes);
        clheap_json_u64(&j, "block_bytes", s->block_bytes);
        clheap_json_u64(&j, "large_count", s->large_count);
        clheap_json_u64(&j, "large_bytes", s->large_bytes);
        clheap_json_u64(&j, "free_pieces", s->free_pieces);
        clheap_json_u64(&j, "free_segments", s->free_segments);
        clheap_json_u64(&j, "run_slots", s->run_slots);
        clheap_json_u64(&j, "unsettled_blocks", s->unsettled_blocks);
        clheap_json_end(&j, '}');
    }
    clheap_json_errors(&j);
#define CLHEAP_ERROR_JSON(field, word, status) clheap_json_u64(&j, #field, s->errors.field);
    CLHEAP_DEVICE_ERROR_LIST(CLHEAP_ERROR_JSON)
#undef CLHEAP_ERROR_JSON
    return clheap_json_close(&j, needed);
}
