/** \file
 * Device heap: one large cl_mem managed inside kernels by clheap_malloc / clheap_free
 * (cl/clheap.cl). The allocator is chosen when the heap is created and compiled into
 * every program that uses the heap (one code path per program, no run-time switch).
 *
 *   clheap_heap_config config = clheap_heap_config_default();   // the device's best allocator
 *   config.size_bytes = 256 << 20;
 *   clheap_heap *heap;  clheap_heap_create(context, device, queue, &config, &heap);
 *   clheap_heap_build_program(heap, 1, &my_source, "", &program, log, sizeof log);
 *   clheap_heap_set_kernel_arg(heap, kernel, 0);   // the kernel's __global clheap_heap *
 *   ... enqueue kernels on `queue` ...
 *   clheap_heap_read_errors(heap, &errors);          // bad frees, NULL returns
 *   clheap_heap_destroy(heap);
 *
 * Sizes are in bytes; offsets kept in the heap are in 16-byte units (CLHEAP_UNIT_BYTES).
 * Every host call that touches the buffer is enqueued on the heap's queue, so it is
 * ordered with your kernels when you use that same in-order queue.
 *
 * Threads: every call may be made from any thread. Calls on one heap run one at a time
 * (a lock per heap; clheap_heap_build_program runs beside the others, as it reads only
 * what never changes). enqueue_malloc / enqueue_free may use any queue of the heap's
 * context: such a batch runs after everything enqueued on the heap's queue before it,
 * and what is enqueued there later waits for it (OpenCL 1.2 leaves a buffer that two
 * queues' commands change at once undefined, and drivers break it); check,
 * calculate_stats, repair, indices, grow and destroy first finish every queue a batch
 * was enqueued on and the heap's queue, so they see (and grow keeps) every batch
 * enqueued before them. Your own kernels that use the heap are yours to order (one
 * queue, or events) and to finish first: a heap read while a kernel changes it is torn, and grow replaces the
 * buffer (set the kernel argument again after it). A destroy racing other calls waits for
 * those already inside; later calls, and a second destroy, get
 * CLHEAP_ERROR_INVALID_HANDLE. */
#ifndef CLHEAP_HEAP_H
#define CLHEAP_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/device.h"
#include "clheap/status.h"
#include "clheap/vocabulary.h" /* clheap_allocator, clheap_heap_errors */

#ifdef __cplusplus
extern "C" {
#endif

#define CLHEAP_UNIT_BYTES 16

/** Name such as "CMalloc"; NULL for a value that names no allocator. */
const char *clheap_allocator_name(clheap_allocator allocator);

/** 1 for an allocator that swaps 64-bit words whole (CFMalloc, CFMMalloc): a device
 * without 64-bit atomics (clheap_device_has_atomics64) refuses it. The others run there,
 * the bitmap kinds on words split into 32-bit halves (docs/design.md). */
int clheap_allocator_needs_atomics64(clheap_allocator allocator);

typedef enum clheap_presplit {
    CLHEAP_PRESPLIT_BINARY_HEAP = 0, /* eq. 1: for each k = 2^x, k chunks of R/k */
    CLHEAP_PRESPLIT_UNIFORM = 1      /* equal chunks of uniform_chunk_bytes */
} clheap_presplit;

/** Opt-in growth (clheap_heap_grow_if_needed): after a malloc on the device returned NULL,
 * the heap becomes `factor` times larger, up to max_bytes. factor 0 (the default): never. */
typedef struct clheap_grow_policy {
    double factor;      /**< 0, or finite and > 1 (create refuses others) */
    uint64_t max_bytes; /**< 0: CL_DEVICE_MAX_MEM_ALLOC_SIZE */
} clheap_grow_policy;

typedef struct clheap_heap_config {
    clheap_allocator allocator;   /**< CLHEAP_AUTO_ALLOCATOR (0, the default): the device's best */
    uint64_t size_bytes;          /**< 1 MiB .. CL_DEVICE_MAX_MEM_ALLOC_SIZE (and 64 GiB, fused 32 GiB) */
    clheap_presplit presplit;     /**< circular family only */
    uint32_t min_chunk_bytes;     /**< binary pre-split: smallest level's chunk (default 256) */
    uint32_t uniform_chunk_bytes; /**< uniform pre-split: chunk size (default 4096) */
    uint32_t offset_count;        /**< multi variants: roving offsets; TierAlloc: block hints per
                                     size class (work-groups share them modulo this count);
                                     0 = CL_DEVICE_MAX_COMPUTE_UNITS */
    uint32_t slot_bytes;          /**< BitmapAlloc: the one slot size (multiple of 16; default 16) */
    uint32_t frame_bytes;         /**< BlockAlloc, TierAlloc: frame size (multiple of 16; default
                                     1024); a block of class s takes min(64, ceil(64 s / frame))
                                     frames; TierAlloc's large requests take whole frames */
    uint32_t class_count;         /**< BlockAlloc, TierAlloc: size classes in class_bytes (0: the
                                     default list, 16 B - 16 KiB; TierAlloc serves larger
                                     requests from its page tier) */
    uint32_t class_bytes[32];     /**< ascending multiples of 16, each <= 32 * frame_bytes (two slots a block or more);
                                     a class index is also a typed-object type id */
    uint32_t typed_classes;       /**< 1: a typed heap, whose classes are types for parallel_do.
                                     With CLHEAP_AUTO_ALLOCATOR it gets CLHEAP_TYPED_ALLOCATOR
                                     (BlockAlloc, whose classes are always typed: requests
                                     above the largest class are refused). TierAlloc named:
                                     keeps every object in a block of its own class even when
                                     the heap is nearly full; 0 (default): a small request its
                                     class cannot serve (no free slot, no frames) takes a
                                     free slot of a larger class before malloc returns NULL */
    uint32_t no_warp_coalescing;  /**< BlockAlloc, TierAlloc, the CircularMalloc family on NVIDIA: 1 turns
                                     off the inline-PTX warp coalescing that is otherwise used
                                     after a probe compile */
    clheap_grow_policy grow;      /**< see clheap_heap_grow_if_needed */
} clheap_heap_config;

/** Allocator CLHEAP_AUTO_ALLOCATOR (TierAlloc; BlockAlloc on a device without 64-bit
 * atomics, clheap_device_has_atomics64, or for a typed heap), 64 MiB, and the defaults each
 * field names. */
clheap_heap_config clheap_heap_config_default(void);

typedef struct clheap_heap clheap_heap;

typedef struct clheap_heap_stats {
    clheap_allocator allocator;
    uint64_t heap_bytes;         /**< the buffer */
    uint64_t pool_begin_bytes;   /**< where the pool starts in the buffer (after the header) */
    uint64_t pool_bytes;         /**< what allocations come from */
    uint64_t used_bytes, used_chunks;   /**< allocated regions, headers included */
    uint64_t free_bytes, free_chunks;   /**< free regions, headers included */
    uint64_t live_bytes; /**< of used_bytes, what live allocations take: their chunks or slots
                              (headers included), and large allocations' frames */
    uint64_t held_bytes; /**< of used_bytes, what the allocator holds beside them: the free
                              slots of its blocks, runs, blocks left to settle (TierAlloc and
                              BlockAlloc; clheap_heap_trim gives back what it can) */
    uint64_t requested_bytes;    /**< sum of the sizes malloc was asked for (circular family) */
    uint64_t largest_free_bytes;
    double internal_fragmentation; /**< eq. 2: mean over allocated regions of (size - request) / size */
    double external_fragmentation; /**< eq. 3: 1 - largest free region / all free bytes */
    clheap_heap_errors errors;
    /* Bitmap allocators */
    uint64_t stale_hints;        /**< upper-level bitmap bits over empty containers, and full
                                    blocks still marked active: allowed, see clheap_heap_repair */
    uint32_t class_count;        /**< BlockAlloc: size classes */
    uint32_t class_bytes[32];
    uint32_t class_capacity[32]; /**< slots per block */
    uint64_t class_blocks[32];   /**< allocated blocks per class */
    uint64_t class_objects[32];  /**< live objects per class */
    double slot_fragmentation;   /**< DynaSOAr's metric: unused slots / slots of allocated blocks */
    /* TierAlloc's page tier */
    uint32_t segment_frames;     /**< frames per segment (64) */
    uint64_t frame_bytes;
    uint64_t block_bytes;        /**< frames held by blocks (the small tier) */
    uint64_t large_count, large_bytes; /**< large allocations and the frames they hold */
    uint64_t free_pieces;        /**< whole free segments, and runs of free frames in broken ones */
    uint64_t free_segments;      /**< whole free segments */
    uint64_t run_slots;          /**< slots held by the small tier's run hints and their spare runs,
                                    not yet handed out (counted in no class_objects) */
    uint64_t unsettled_blocks;   /**< blocks that frees in small launches left to settle later (made
                                    findable, or given back empty, by later mallocs or
                                    clheap_heap_trim), empty blocks kept where
                                    CLHEAP_TIER_KEEP_ITEMS is set, and on split words blocks
                                    of an opening's batch no request took yet
                                    (CLHEAP_TIER_BATCH_FRAMES): their frames count as used */
} clheap_heap_stats;

/** Makes the heap buffer and initialises it on the device (time proportional to the
 * number of pre-split chunks, not to the heap size). queue must belong to context and
 * device; the heap retains it and enqueues all its work there. config NULL: the
 * defaults (clheap_heap_config_default). CLHEAP_AUTO_ALLOCATOR becomes the device's
 * best (clheap_heap_allocator says which); an allocator that needs 64-bit atomics on a
 * device without them, or FreeHeap on a device that ends loops early
 * (clheap_device_loop_limit): CLHEAP_ERROR_UNSUPPORTED. */
clheap_status clheap_heap_create(cl_context context, cl_device_id device, cl_command_queue queue,
                                 const clheap_heap_config *config, clheap_heap **out);

/** Releases the buffer and everything the heap made. destroy(NULL) does nothing. */
clheap_status clheap_heap_destroy(clheap_heap *heap);

/** Everything allocated is forgotten and the heap is as new; counters are cleared. */
clheap_status clheap_heap_reset(clheap_heap *heap);

/** The heap's buffer; NULL for NULL or a handle that is no live heap (destroyed, or a
 * cache). */
cl_mem clheap_heap_buffer(const clheap_heap *heap);

/** Where allocations can lie in the buffer, in bytes: cheap (no device access).
 * CLHEAP_ERROR_INVALID_HANDLE for a handle that is no live heap. */
clheap_status clheap_heap_pool_range(const clheap_heap *heap, uint64_t *begin, uint64_t *bytes);
/** The heap's allocator; 0 for NULL or a handle that is no live heap. */
clheap_allocator clheap_heap_allocator(const clheap_heap *heap);

/** The allocator's OpenCL C source (cl/clheap.cl and what it includes, as one string):
 * prepend it to a kernel source, or `#include "clheap.cl"` with `-I<prefix>/share/clheap/cl`. */
const char *clheap_heap_program_source(void);

/** The build options a program using this heap needs (e.g. "-DCLHEAP_ALLOCATOR=3"); on
 * NVIDIA a TierAlloc heap's end with its register cap, -cl-nv-maxrregcount=128
 * (CLHEAP_NV_MAX_REGISTERS, docs/tuning.md). Writes at most len bytes, always terminated;
 * BUFFER_TOO_SMALL if it did not fit. */
clheap_status clheap_heap_build_options(const clheap_heap *heap, char *buf, size_t len);

/** Builds sources (count of them) with the allocator source prepended and the heap's
 * options followed by options (may be NULL; a -cl-nv-maxrregcount there replaces the heap's
 * register cap, and -DCLHEAP_NV_MAX_REGISTERS=N sets it for this program, 0 for none: the
 * better choice for a program whose kernels only free). On CLHEAP_ERROR_BUILD_FAILED the build log
 * is in log (if not NULL, cut to log_len) and no program is returned; it names source i
 * (from 1) "source i", with that source's own line numbers ("source 2:7:5: error: ..."),
 * also where the compiler ignores #line (NVIDIA's "<kernel>:N" lines are renamed). */
clheap_status clheap_heap_build_program(clheap_heap *heap, size_t count, const char **sources,
                                        const char *options, cl_program *program, char *log,
                                        size_t log_len);

/** Builds a SPIR-V module compiled ahead of time for this heap's allocator
 * (clheap_add_spirv in cmake/clheapSpirv.cmake: the allocator source and the program's,
 * OpenCL C 2.0, with CLHEAP_IL), with options (may be NULL; the heap's -D options have no
 * effect on IL). CLHEAP_ERROR_UNSUPPORTED where the device takes no IL (its
 * CL_DEVICE_IL_VERSION names no SPIR-V: PoCL 3.1 and Mesa's rusticl 22.3 name none);
 * CLHEAP_ERROR_BUILD_FAILED with the reason in log (if not NULL, cut to log_len) on a build
 * error or a module compiled for another allocator; no program is returned then. */
clheap_status clheap_heap_build_program_il(clheap_heap *heap, const void *il, size_t il_bytes, const char *options,
                                           cl_program *program, char *log, size_t log_len);

/** clSetKernelArg(kernel, index, the heap buffer). */
clheap_status clheap_heap_set_kernel_arg(const clheap_heap *heap, cl_kernel kernel, cl_uint index);

/** Reads the header's counters (blocking). Each counter has its status
 * (CLHEAP_DEVICE_ERROR_LIST in clheap/vocabulary.h); the answer is that of the first
 * non-zero one in this order, the program's mistakes before the heap's limits:
 *   CLHEAP_ERROR_HEAP_CORRUPT         a malloc or free met a header without the magic
 *                                     (the buffer was overwritten; kernels that include
 *                                     cl/clheap.cl count this in word 23 of any buffer
 *                                     they are given that clheap_heap_create did not
 *                                     format);
 *   CLHEAP_ERROR_DEVICE_BAD_FREE      a free was refused (outside, unaligned, not an
 *                                     allocation, already free);
 *   CLHEAP_ERROR_DEVICE_BAD_SIZE      malloc was asked for 0 bytes or more than the pool;
 *   CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY malloc returned NULL: nothing fitted;
 *   CLHEAP_ERROR_DEVICE_CONTENDED     malloc returned NULL after its bounded retries,
 *                                     with memory possibly free (try again; growing may
 *                                     not help);
 * else CLHEAP_SUCCESS. errors (may be NULL) gets every counter. */
clheap_status clheap_heap_read_errors(clheap_heap *heap, clheap_heap_errors *errors);

/** Makes the heap new_size_bytes large: a larger buffer, the contents copied on the device
 * and the new space given to the allocator's free structures. Every offset kept stays
 * valid; pointers do not, nor kernel arguments set before: set them again with
 * clheap_heap_set_kernel_arg. A size not larger than the current one:
 * CLHEAP_ERROR_GROW_NOT_LARGER, and nothing changes (also when the size adds no whole
 * item: a TierAlloc pool grows by segments of 64 frames). Every allocator that can free;
 * the bump allocators answer CLHEAP_ERROR_UNSUPPORTED. The new space is free blocks or
 * chunks at the pool's end (FreeHeap, the CircularMalloc family), free frames, slots or
 * whole segments (the bitmap kinds, whose bitmaps and block headers follow the pool and
 * move after the new end; TierAlloc closes its runs first, as clheap_heap_trim). Enqueued
 * on the heap's queue; returns when the new buffer is complete. */
clheap_status clheap_heap_grow(clheap_heap *heap, uint64_t new_size_bytes);

/** The size of the heap's buffer in bytes (the size asked for at creation or by the last
 * growth, rounded down to what its layout uses); 0 for a handle that is no live heap. */
uint64_t clheap_heap_size(const clheap_heap *heap);

/** The grow policy's step, after a kernel: if a device malloc returned NULL since the last
 * call, grows the heap by config.grow (and sets *grew), then clears the NULL counter, so
 * that retrying the failed work and calling this again tells whether it fitted. If
 * mallocs failed and the policy allows no growth: CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY. The
 * way to write "retry the failed work after growing":
 *   do { run(work); clheap_heap_grow_if_needed(heap, &grew); work = what failed; } while (grew); */
clheap_status clheap_heap_grow_if_needed(clheap_heap *heap, int *grew);

/** Reads the heap back and walks it: exact, and as slow as reading the buffer. */
clheap_status clheap_heap_calculate_stats(clheap_heap *heap, clheap_heap_stats *stats);

/** Reads the heap back and verifies the invariants documented in cl/clheap_layout.h and
 * cl/clheap_circular.h. Call it between kernels (never while one runs). Returns
 * CLHEAP_ERROR_HEAP_CORRUPT with the first violation in what. */
clheap_status clheap_heap_check(clheap_heap *heap, char *what, size_t what_len);

/** Bitmap allocators: clears upper-level bitmap bits that stand over empty containers and
 * active marks of full blocks (both allowed while kernels run; see cl/clheap_bitmap.h),
 * so that every level agrees exactly with the one below. Reads back and writes the
 * bitmaps (blocking). Other allocators: nothing to do. *repaired (may be NULL) counts. */
clheap_status clheap_heap_repair(clheap_heap *heap, uint64_t *repaired);

/** TierAlloc: enqueues kernels that end every run the small tier's fast path holds and
 * free the slots they had not handed out, then settle the blocks that frees in small
 * launches left for later (clheap_heap_stats.unsettled_blocks), so that blocks holding no
 * object go back to the page tier (malloc does this itself before it would report the
 * heap full; parallel_do does it first). Other allocators: nothing to do. Non-blocking. */
clheap_status clheap_heap_trim(clheap_heap *heap);

/** BlockAlloc, TierAlloc: runs `kernel` once for every object of size class `class_index`
 * live when the call is made (objects created meanwhile are not visited). Typed heaps
 * (BlockAlloc, TierAlloc with config.typed_classes) keep every object of a class in that
 * class's blocks, so every one is visited. Untyped TierAlloc visits the slots of the
 * class's blocks: smaller objects that took a slot of this class when their own was full
 * are among them, and objects its small pools gave frames of their own (pieces) are not. The kernel's argument
 * blocks_arg gets the block list (__global const uint *) and blocks_arg + 1 the block
 * count (uint); work-item i serves slot i % 64 of block i / 64: in the kernel,
 * clheap_parallel_do_object(heap, blocks, count, class, get_global_id(0)) returns the
 * object or NULL. Set the kernel's other arguments first. local_size 0: 64. */
clheap_status clheap_heap_parallel_do(clheap_heap *heap, uint32_t class_index, cl_kernel kernel,
                                      cl_uint blocks_arg, size_t local_size);

/** BlockAlloc: the first frames of every allocated block of class class_index, listed on
 * the host by walking the class's hierarchical bitmap and skipping empty containers
 * (reads the heap back). Writes at most cap; *count gets how many there are.
 * BitmapAlloc: class_index must be 0 and the list is of the free slots. */
clheap_status clheap_heap_indices(clheap_heap *heap, uint32_t class_index, uint32_t *out, size_t cap,
                                  size_t *count);

/** Host-enqueued allocations (the address buffering of paper 003): `count` mallocs run
 * on the device in `queue` (NULL: the heap's queue) after the wait list, and the host
 * does not wait. Request i asks for `size` bytes, or for sizes[i] if `sizes` (a buffer
 * of at least count uint32 sizes) is not NULL; its offset in 16-byte units lands in
 * entry first_index + i of `handles`, a buffer of uint32 entries, where later kernels
 * read it (clheap_pointer(heap, unit)). A request that gets no memory gets offset 0 and
 * is counted in the heap header (clheap_heap_read_errors); no other entry is touched.
 * Every allocator. Errors, with nothing enqueued: CLHEAP_ERROR_ZERO_COUNT (count 0),
 * CLHEAP_ERROR_HANDLE_OUT_OF_RANGE (the entries would pass the table's end),
 * CLHEAP_ERROR_ZERO_SIZE (size 0 without sizes), CLHEAP_ERROR_INVALID_ARGUMENT (no
 * table, or sizes shorter than count); OpenCL errors unchanged. `event` as in OpenCL. */
clheap_status clheap_heap_enqueue_malloc(clheap_heap *heap, cl_command_queue queue, size_t count, uint32_t size,
                                         cl_mem sizes, cl_mem handles, size_t first_index, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *event);

/** clheap_heap_enqueue_malloc with the rest of C's API: each request is the device's
 * clheap_aligned_alloc(alignment, its size) (alignment 0 - 16: a plain malloc) and, with
 * CLHEAP_ENQUEUE_ZERO in flags, zeroed as clheap_calloc zeroes (cl/clheap.cl). An
 * alignment the allocator refuses gives offset 0, counted as a device bad size (which
 * allocator serves which: docs/design.md, "The C allocation API in kernels"). Errors as
 * for clheap_heap_enqueue_malloc, and CLHEAP_ERROR_INVALID_ARGUMENT, with nothing
 * enqueued, for an alignment that is not 0 or a power of two or is above
 * CLHEAP_MAX_ALIGNMENT (cl/clheap_config.h, 64 KiB), or an unknown flag. */
#define CLHEAP_ENQUEUE_ZERO 1u
clheap_status clheap_heap_enqueue_malloc_ex(clheap_heap *heap, cl_command_queue queue, size_t count, uint32_t size,
                                            cl_mem sizes, size_t alignment, unsigned flags, cl_mem handles,
                                            size_t first_index, cl_uint num_events, const cl_event *wait_list,
                                            cl_event *event);

/** Frees the allocations whose offsets are entries [first_index, first_index + count) of
 * `handles` (entries of 0 are skipped) and sets those entries to 0, on the device, in
 * queue order, like clheap_heap_enqueue_malloc; allocations a kernel made can be freed
 * this way, and the reverse. Bad offsets are counted as device bad frees. Errors as for
 * clheap_heap_enqueue_malloc, and CLHEAP_ERROR_UNSUPPORTED for the bump allocators,
 * which cannot free. */
clheap_status clheap_heap_enqueue_free(clheap_heap *heap, cl_command_queue queue, size_t count, cl_mem handles,
                                       size_t first_index, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event);

/** The stats as one JSON object in the shape of clheap_cache_stats_json's (buffer rules
 * there): {"kind": "heap", "version": 2, "used_bytes", "free_bytes", the allocator,
 * "live_bytes" and "held_bytes" and
 * the other stats; BlockAlloc and TierAlloc: "stale_hints", "slot_fragmentation" and
 * "classes": [{"bytes", "capacity", "blocks", "objects"} per class]; TierAlloc: "pages":
 * {its page tier's stats, named as in clheap_heap_stats}; last "errors": {the device's
 * counters (clheap/vocabulary.h)}}. A buffer of 8 KiB holds any of them. */
clheap_status clheap_heap_stats_json(const clheap_heap_stats *stats, char *buf, size_t len,
                                     size_t *needed);

#ifdef __cplusplus
}
#endif
#endif
