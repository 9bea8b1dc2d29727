/** \file
 * Host buffer cache: a free list of cl_mem buffers keyed by allocation-site tag and size,
 * so that repeated alloc/free cycles stop calling the OpenCL driver (the Futhark runtime's
 * idea, made thread-safe, bounded and out-of-memory aware).
 *
 * Reuse policy for a request of n bytes (n rounded up to the granularity):
 *   1. the smallest cached buffer with the same tag whose size is in [n, 2n];
 *   2. else the smallest cached buffer of any tag whose size is in [n, 2n]
 *      (never a much larger one: a 4 GiB buffer must not serve a 32-byte request);
 *   3. else a new driver buffer, made resident at once by a probe so that an
 *      out-of-memory condition shows here and not at the first kernel that uses it.
 * On CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES or CL_OUT_OF_HOST_MEMORY the
 * failed buffer is released, cached buffers are released largest first and the driver
 * is asked again after each; only when nothing is cached any more does alloc return
 * CLHEAP_ERROR_OUT_OF_DEVICE_MEMORY (the stats then say how much was live and cached).
 *
 * Tags are compared by content and copied, so a tag need not outlive the call.
 * Every function is thread-safe: one mutex per cache, held during driver calls too. A
 * destroy racing other calls on the cache waits for the calls already inside it; calls
 * that come after it began get CLHEAP_ERROR_INVALID_HANDLE, as does a second destroy. A
 * driver's callbacks must not destroy their own cache.
 * Buffers handed out are owned by the cache: release them with clheap_cache_free,
 * never with clReleaseMemObject. */
#ifndef CLHEAP_CACHE_H
#define CLHEAP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/device.h"
#include "clheap/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clheap_cache clheap_cache;

/** The driver calls the cache makes. Replace them to count calls or inject failures
 * (the tests do both); NULL in the config means the real OpenCL calls. */
typedef struct clheap_cache_driver {
    /* clCreateBuffer: returns NULL and sets *error on failure. */
    cl_mem (*create)(void *user, cl_context context, cl_mem_flags flags, size_t size,
                     cl_int *error);
    /* Makes the buffer resident on the device and returns the error that shows
     * whether that succeeded (CL_SUCCESS, or e.g. CL_MEM_OBJECT_ALLOCATION_FAILURE). */
    cl_int (*probe)(void *user, cl_command_queue queue, cl_mem buffer);
    /* clReleaseMemObject. */
    cl_int (*release)(void *user, cl_mem buffer);
    void *user;
} clheap_cache_driver;

typedef struct clheap_cache_config {
    /* Requests are rounded up to a multiple of this (a power of two; 0 means 256). */
    size_t granularity;
    /* Cached (free) bytes kept at most; the oldest cached buffers are released first
     * when a free would exceed it. 0 means no cap. */
    uint64_t max_cached_bytes;
    /* Hard cap on live + cached bytes; 0 means none. Cached buffers are released
     * (largest first) to make room before CLHEAP_ERROR_LIMIT_REACHED is returned. */
    uint64_t max_total_bytes;
    /* Flags for every buffer (0 means CL_MEM_READ_WRITE). Buffers made with different
     * flags need different caches. */
    cl_mem_flags mem_flags;
    /* Queue used for residency probes; NULL: the cache makes its own on the device. */
    cl_command_queue probe_queue;
    /* NULL: the real OpenCL calls. Copied at create time. */
    const clheap_cache_driver *driver;
} clheap_cache_config;

/** Defaults for every field; change the ones you need. */
clheap_cache_config clheap_cache_config_default(void);

/** The real OpenCL calls (what a NULL driver means), for a driver that wraps them: to
 * count the calls, or to fail some (the Python package's Cache counts through it). */
const clheap_cache_driver *clheap_cache_opencl_driver(void);

typedef struct clheap_cache_stats {
    uint64_t live_bytes, live_blocks;     /**< handed out and not yet freed */
    uint64_t cached_bytes, cached_blocks; /**< freed by the user, kept for reuse */
    uint64_t peak_live_bytes;
    uint64_t hits;             /**< allocations served from the cache */
    uint64_t hits_same_tag;    /**< ... of which by a buffer freed under the same tag */
    uint64_t misses;           /**< allocations that asked the driver */
    uint64_t driver_allocs;    /**< successful driver allocations */
    uint64_t driver_releases;  /**< buffers handed back to the driver */
    uint64_t evictions;        /**< cached buffers released by the max_cached_bytes cap or trim */
    uint64_t oom_recoveries;   /**< allocations that succeeded only after releasing cached buffers */
    uint64_t oom_failures;     /**< allocations that failed with OUT_OF_DEVICE_MEMORY / LIMIT_REACHED */
    uint64_t last_oom_request; /**< bytes asked for by the last failed allocation */
    uint64_t last_oom_live_bytes;   /**< live bytes when it failed */
    uint64_t last_oom_cached_bytes; /**< cached bytes when it failed (0 after recovery tried all) */
} clheap_cache_stats;

/** Makes a cache for buffers of one context and device. config may be NULL (defaults). */
clheap_status clheap_cache_create(cl_context context, cl_device_id device,
                                  const clheap_cache_config *config, clheap_cache **out);

/** Releases every buffer the cache owns, cached and live. Returns
 * CLHEAP_ERROR_BLOCKS_STILL_LIVE if the user had not freed everything (the buffers are
 * released all the same). destroy(NULL) does nothing and returns CLHEAP_SUCCESS. */
clheap_status clheap_cache_destroy(clheap_cache *cache);

/** Hands out a buffer of at least size bytes. tag names the allocation site. */
clheap_status clheap_cache_alloc(clheap_cache *cache, size_t size, const char *tag,
                                 cl_mem *out);

/** Returns a buffer to the cache. Errors: FOREIGN_BUFFER (not handed out by this cache),
 * DOUBLE_FREE (already freed and still cached), INVALID_HANDLE (cache destroyed). */
clheap_status clheap_cache_free(clheap_cache *cache, cl_mem buffer);

/** Size in bytes of a live buffer (the rounded size the driver allocated). */
clheap_status clheap_cache_buffer_size(clheap_cache *cache, cl_mem buffer, size_t *size);

/** Releases cached buffers, oldest first, until at most keep_bytes stay cached. */
clheap_status clheap_cache_trim(clheap_cache *cache, uint64_t keep_bytes);

/** Releases every cached buffer; live ones are untouched. */
clheap_status clheap_cache_release_all(clheap_cache *cache);

/** Counters kept on every operation: cheap. */
clheap_status clheap_cache_get_stats(clheap_cache *cache, clheap_cache_stats *stats);

/** Verifies the cache's invariants (see host/cache.c): live and cached sets disjoint,
 * byte and block counters equal to the sums over the sets, the cached index sorted,
 * caps respected. Returns CLHEAP_ERROR_HEAP_CORRUPT and a reason in what (if not NULL,
 * what_len bytes) on the first violation. */
clheap_status clheap_cache_check(clheap_cache *cache, char *what, size_t what_len);

/** The stats as one JSON object, in the shape of clheap_heap_stats_json's: {"kind":
 * "cache", "version": 2, "used_bytes": live, "free_bytes": cached, the other counters,
 * "errors": {"out_of_memory": allocations refused for want of memory or by the limit}}.
 * Writes at most len bytes (terminated); if len is too
 * small returns CLHEAP_ERROR_BUFFER_TOO_SMALL. *needed (may be NULL) gets the length
 * needed including the terminator. */
clheap_status clheap_cache_stats_json(clheap_cache *cache, char *buf, size_t len,
                                      size_t *needed);

#ifdef __cplusplus
}
#endif
#endif
