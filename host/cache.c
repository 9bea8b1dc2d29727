/* Host buffer cache: see include/clheap/cache.h for the policy.
 *
 * Data structures and their invariants (clheap_cache_check verifies each):
 *
 *   index     open-addressing hash map (linear probing, backward-shift deletion, so no
 *             tombstones) from cl_mem to {size, tag, state}. It holds every buffer the
 *             cache owns, live or cached; nothing else. Its load stays <= 1/2.
 *   cached    array of every buffer in state CACHED, sorted by (size, freed_seq)
 *             ascending, so "smallest buffer of size >= n" is a binary search and the
 *             largest buffer is the last element. freed_seq values are unique.
 *   tags      interned copies of every tag seen; a buffer names its tag by index.
 *   stats     live_bytes/live_blocks and cached_bytes/cached_blocks equal the sums over
 *             the index's entries in each state; cached_bytes <= max_cached_bytes and
 *             live + cached <= max_total_bytes whenever those caps are set.
 *
 * Everything is guarded by one mutex. Driver calls are made with it held: simpler
 * than dropping it, and allocations that reach the driver are the slow path anyway. */
#include "clheap/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report.h"

enum { BUFFER_LIVE = 1, BUFFER_CACHED = 2 };

typedef struct index_entry {
    cl_mem buffer; /* NULL: empty slot */
    uint64_t size;
    uint32_t tag;
    uint32_t state;
} index_entry;

typedef struct cached_buffer {
    uint64_t size;
    uint64_t freed_seq;
    cl_mem buffer;
    uint32_t tag;
} cached_buffer;

struct clheap_cache {
    pthread_mutex_t lock;
    cl_context context;
    cl_command_queue probe_queue;
    clheap_cache_config config;
    clheap_cache_driver driver;
    uint64_t max_buffer_size;

    index_entry *index;
    size_t index_capacity; /* power of two */
    size_t index_count;

    cached_buffer *cached;
    size_t cached_capacity;
    size_t cached_count;
    uint64_t next_freed_seq;

    char **tags;
    size_t tag_count, tag_capacity;
    uint32_t *tag_slots; /* hash of tag strings: tag index + 1, 0 empty */
    size_t tag_slot_capacity;

    clheap_cache_stats stats;
};

/* ---- the real driver ---------------------------------------------------------- */

static cl_mem opencl_create(void *user, cl_context context, cl_mem_flags flags, size_t size,
                            cl_int *error)
{
    (void)user;
    return clCreateBuffer(context, flags, size, NULL, error);
}

/* OpenCL may allocate lazily, at first use. A one-byte fill forces the driver to back
 * the buffer with device memory now, and waiting on its event surfaces the failure. */
static cl_int opencl_probe(void *user, cl_command_queue queue, cl_mem buffer)
{
    (void)user;
    const cl_uchar zero = 0;
    cl_event done = NULL;
    cl_int err = clEnqueueFillBuffer(queue, buffer, &zero, 1, 0, 1, 0, NULL, &done);
    if (err != CL_SUCCESS)
        return err;
    err = clWaitForEvents(1, &done);
    cl_int exec_status = CL_COMPLETE;
    if (clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec_status,
                       &exec_status, NULL) == CL_SUCCESS &&
        exec_status < 0)
        err = exec_status;
    clReleaseEvent(done);
    return err;
}

static cl_int opencl_release(void *user, cl_mem buffer)
{
    (void)user;
    return clReleaseMemObject(buffer);
}

static const clheap_cache_driver opencl_driver = {opencl_create, opencl_probe, opencl_release,
                                                  NULL};

const clheap_cache_driver *clheap_cache_opencl_driver(void)
{
    return &opencl_driver;
}

static int is_out_of_memory(cl_int err)
{
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
           err == CL_OUT_OF_HOST_MEMORY;
}

/* ---- the index: cl_mem -> entry ------------------------------------------------- */

static size_t hash_pointer(const void *p, size_t capacity)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (capacity - 1);
}

static index_entry *index_find(clheap_cache *c, cl_mem buffer)
{
    for (size_t i = hash_pointer(buffer, c->index_capacity);; i = (i + 1) & (c->index_capacity - 1)) {
        if (c->index[i].buffer == buffer)
            return &c->index[i];
        if (c->index[i].buffer == NULL)
            return NULL;
    }
}

static void index_place(index_entry *slots, size_t capacity, index_entry entry)
{
    size_t i = hash_pointer(entry.buffer, capacity);
    while (slots[i].buffer)
        i = (i + 1) & (capacity - 1);
    slots[i] = entry;
}

static clheap_status index_insert(clheap_cache *c, index_entry entry)
{
    if (2 * (c->index_count + 1) > c->index_capacity) {
        size_t capacity = c->index_capacity * 2;
        index_entry *grown = calloc(capacity, sizeof *grown);
        if (!grown)
            return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
        for (size_t i = 0; i < c->index_capacity; i++)
            if (c->index[i].buffer)
                index_place(grown, capacity, c->index[i]);
        free(c->index);
        c->index = grown;
        c->index_capacity = capacity;
    }
    index_place(c->index, c->index_capacity, entry);
    c->index_count++;
    return CLHEAP_SUCCESS;
}

static void index_remove(clheap_cache *c, index_entry *slot)
{
    size_t mask = c->index_capacity - 1;
    size_t hole = (size_t)(slot - c->index);
    c->index[hole].buffer = NULL;
    c->index_count--;
    /* Backward shift: move later entries of the probe run into the hole when their
     * home slot does not lie cyclically in (hole, i]. */
    for (size_t i = (hole + 1) & mask; c->index[i].buffer; i = (i + 1) & mask) {
        size_t home = hash_pointer(c->index[i].buffer, c->index_capacity);
        int home_in_range = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
        if (!home_in_range) {
            c->index[hole] = c->index[i];
            c->index[i].buffer = NULL;
            hole = i;
        }
    }
}

/* ---- tags ----------------------------------------------------------------------- */

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static clheap_status grow_tag_slots(clheap_cache *c)
{
    size_t capacity = c->tag_slot_capacity * 2;
    uint32_t *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t t = 0; t < c->tag_count; t++) {
        size_t j = (size_t)hash_string(c->tags[t]) & (capacity - 1);
        while (slots[j])
            j = (j + 1) & (capacity - 1);
        slots[j] = (uint32_t)t + 1;
    }
    free(c->tag_slots);
    c->tag_slots = slots;
    c->tag_slot_capacity = capacity;
    return CLHEAP_SUCCESS;
}

static clheap_status intern_tag(clheap_cache *c, const char *tag, uint32_t *id)
{
    size_t mask = c->tag_slot_capacity - 1;
    size_t i = (size_t)hash_string(tag) & mask;
    for (; c->tag_slots[i]; i = (i + 1) & mask) {
        if (strcmp(c->tags[c->tag_slots[i] - 1], tag) == 0) {
            *id = c->tag_slots[i] - 1;
            return CLHEAP_SUCCESS;
        }
    }
    if (c->tag_count == c->tag_capacity) {
        size_t capacity = c->tag_capacity ? 2 * c->tag_capacity : 32;
        char **grown = realloc(c->tags, capacity * sizeof *grown);
        if (!grown)
            return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
        c->tags = grown;
        c->tag_capacity = capacity;
    }
    if (2 * (c->tag_count + 1) > c->tag_slot_capacity) {
        clheap_status status = grow_tag_slots(c);
        if (status != CLHEAP_SUCCESS)
            return status;
        mask = c->tag_slot_capacity - 1;
        for (i = (size_t)hash_string(tag) & mask; c->tag_slots[i]; i = (i + 1) & mask)
            continue;
    }
    size_t len = strlen(tag) + 1;
    char *copy = malloc(len);
    if (!copy)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(copy, tag, len);
    c->tags[c->tag_count] = copy;
    c->tag_slots[i] = (uint32_t)c->tag_count + 1;
    *id = (uint32_t)c->tag_count++;
    return CLHEAP_SUCCESS;
}

/* ---- the cached array, sorted by (size, freed_seq) ------------------------------ */

static int cached_less(const cached_buffer *a, uint64_t size, uint64_t seq)
{
    return a->size < size || (a->size == size && a->freed_seq < seq);
}

/* First position whose (size, seq) is not below the given key. */
static size_t cached_lower_bound(const clheap_cache *c, uint64_t size, uint64_t seq)
{
    size_t lo = 0, hi = c->cached_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cached_less(&c->cached[mid], size, seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static clheap_status cached_insert(clheap_cache *c, cached_buffer item)
{
    if (c->cached_count == c->cached_capacity) {
        size_t capacity = c->cached_capacity ? 2 * c->cached_capacity : 64;
        cached_buffer *grown = realloc(c->cached, capacity * sizeof *grown);
        if (!grown)
            return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
        c->cached = grown;
        c->cached_capacity = capacity;
    }
    size_t at = cached_lower_bound(c, item.size, item.freed_seq);
    memmove(&c->cached[at + 1], &c->cached[at], (c->cached_count - at) * sizeof *c->cached);
    c->cached[at] = item;
    c->cached_count++;
    return CLHEAP_SUCCESS;
}

static cached_buffer cached_take(clheap_cache *c, size_t at)
{
    cached_buffer item = c->cached[at];
    memmove(&c->cached[at], &c->cached[at + 1], (c->cached_count - at - 1) * sizeof *c->cached);
    c->cached_count--;
    return item;
}

/* Hands a cached buffer back to the driver and forgets it. */
static void release_cached_at(clheap_cache *c, size_t at)
{
    cached_buffer item = cached_take(c, at);
    index_remove(c, index_find(c, item.buffer));
    c->stats.cached_bytes -= item.size;
    c->stats.cached_blocks--;
    c->driver.release(c->driver.user, item.buffer);
    c->stats.driver_releases++;
}

static void release_oldest_cached(clheap_cache *c)
{
    size_t oldest = 0;
    for (size_t i = 1; i < c->cached_count; i++)
        if (c->cached[i].freed_seq < c->cached[oldest].freed_seq)
            oldest = i;
    release_cached_at(c, oldest);
    c->stats.evictions++;
}

static void release_largest_cached(clheap_cache *c)
{
    release_cached_at(c, c->cached_count - 1);
}

/* ---- create / destroy ----------------------------------------------------------- */

clheap_cache_config clheap_cache_config_default(void)
{
    clheap_cache_config config;
    memset(&config, 0, sizeof config);
    config.granularity = 256;
    config.mem_flags = CL_MEM_READ_WRITE;
    return config;
}

static void free_bookkeeping(clheap_cache *c)
{
    for (size_t t = 0; t < c->tag_count; t++)
        free(c->tags[t]);
    free(c->tags);
    free(c->tag_slots);
    free(c->index);
    free(c->cached);
    if (c->probe_queue) /* ours, or the caller's that we retained */
        clReleaseCommandQueue(c->probe_queue);
    if (c->context)
        clReleaseContext(c->context);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

clheap_status clheap_cache_create(cl_context context, cl_device_id device,
                                  const clheap_cache_config *config, clheap_cache **out)
{
    if (!context || !device || !out)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    clheap_cache_config cfg = config ? *config : clheap_cache_config_default();
    if (cfg.granularity == 0)
        cfg.granularity = 256;
    if (cfg.granularity & (cfg.granularity - 1))
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (cfg.mem_flags == 0)
        cfg.mem_flags = CL_MEM_READ_WRITE;
    if (cfg.driver && (!cfg.driver->create || !cfg.driver->probe || !cfg.driver->release))
        return CLHEAP_ERROR_INVALID_ARGUMENT;

    cl_ulong max_alloc = 0;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
                                 &max_alloc, NULL);
    if (err != CL_SUCCESS)
        return err;

    clheap_cache *c = calloc(1, sizeof *c);
    if (!c)
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    c->config = cfg;
    c->driver = cfg.driver ? *cfg.driver : opencl_driver;
    c->config.driver = NULL; /* copied above; the caller's table need not outlive us */
    c->max_buffer_size = max_alloc;
    c->index_capacity = 64;
    c->index = calloc(c->index_capacity, sizeof *c->index);
    c->tag_slot_capacity = 64;
    c->tag_slots = calloc(c->tag_slot_capacity, sizeof *c->tag_slots);
    if (!c->index || !c->tag_slots) {
        free_bookkeeping(c);
        return CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
    }
    clRetainContext(context);
    c->context = context;
    if (cfg.probe_queue) { /* retained as the heap retains its queue: the caller may release theirs */
        c->probe_queue = cfg.probe_queue;
        clRetainCommandQueue(c->probe_queue);
    } else {
        c->probe_queue = clCreateCommandQueue(context, device, 0, &err);
        if (err != CL_SUCCESS) {
            c->probe_queue = NULL;
            free_bookkeeping(c);
            return err;
        }
    }
    clheap_status status = clheap_registry_add(c, CLHEAP_HANDLE_CACHE);
    if (status != CLHEAP_SUCCESS) {
        free_bookkeeping(c);
        return status;
    }
    *out = c;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_cache_destroy(clheap_cache *c)
{
    if (!c)
        return CLHEAP_SUCCESS;
    if (!clheap_registry_take(c, CLHEAP_HANDLE_CACHE)) /* waits for calls inside; of two racing destroys, one */
        return CLHEAP_ERROR_INVALID_HANDLE;
    uint64_t live_blocks = c->stats.live_blocks;
    for (size_t i = 0; i < c->index_capacity; i++)
        if (c->index[i].buffer)
            c->driver.release(c->driver.user, c->index[i].buffer);
    free_bookkeeping(c);
    return live_blocks ? CLHEAP_ERROR_BLOCKS_STILL_LIVE : CLHEAP_SUCCESS;
}

/* If the handle is live: enters it (a destroy waits until leave) and locks the cache. */
static clheap_status enter(clheap_cache *c)
{
    if (!c)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (!clheap_registry_enter(c, CLHEAP_HANDLE_CACHE))
        return CLHEAP_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&c->lock);
    return CLHEAP_SUCCESS;
}

static void leave(clheap_cache *c)
{
    pthread_mutex_unlock(&c->lock);
    clheap_registry_leave(c);
}

/* ---- alloc / free --------------------------------------------------------------- */

static void note_failure(clheap_cache *c, uint64_t request)
{
    c->stats.oom_failures++;
    c->stats.last_oom_request = request;
    c->stats.last_oom_live_bytes = c->stats.live_bytes;
    c->stats.last_oom_cached_bytes = c->stats.cached_bytes;
}

/* Index of the cached buffer that serves n bytes for tag, or cached_count if none. */
static size_t find_reusable(const clheap_cache *c, uint64_t n, uint32_t tag)
{
    size_t best_any = c->cached_count;
    for (size_t i = cached_lower_bound(c, n, 0); i < c->cached_count && c->cached[i].size <= 2 * n;
         i++) {
        if (c->cached[i].tag == tag)
            return i;
        if (best_any == c->cached_count)
            best_any = i;
    }
    return best_any;
}

/* Asks the driver for a resident buffer, releasing cached buffers largest first while
 * it reports out-of-memory. */
static clheap_status allocate_from_driver(clheap_cache *c, uint64_t n, cl_mem *out)
{
    int released_any = 0;
    for (;;) {
        cl_int err = CL_SUCCESS;
        cl_mem buffer = c->driver.create(c->driver.user, c->context, c->config.mem_flags,
                                         (size_t)n, &err);
        if (buffer && err == CL_SUCCESS)
            err = c->driver.probe(c->driver.user, c->probe_queue, buffer);
        if (err == CL_SUCCESS && buffer) {
            c->stats.driver_allocs++;
            c->stats.oom_recoveries += released_any;
            *out = buffer;
            return CLHEAP_SUCCESS;
        }
        if (buffer)
            c->driver.release(c->driver.user, buffer); /* a failed probe must not leak */
        if (err == CL_SUCCESS)
            err = CL_MEM_OBJECT_ALLOCATION_FAILURE; /* NULL buffer without an error code */
        if (!is_out_of_memory(err))
            return err;
        if (c->cached_count == 0) {
            note_failure(c, n);
            return CLHEAP_ERROR_OUT_OF_DEVICE_MEMORY;
        }
        release_largest_cached(c);
        released_any = 1;
    }
}

clheap_status clheap_cache_alloc(clheap_cache *c, size_t size, const char *tag, cl_mem *out)
{
    if (!out)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    uint64_t n = ((uint64_t)size + c->config.granularity - 1) & ~(uint64_t)(c->config.granularity - 1);
    uint32_t tag_id = 0;
    if (size == 0)
        status = CLHEAP_ERROR_ZERO_SIZE;
    else if (!tag)
        status = CLHEAP_ERROR_NULL_TAG;
    else if (n < size || n > c->max_buffer_size)
        status = CLHEAP_ERROR_SIZE_TOO_LARGE;
    else
        status = intern_tag(c, tag, &tag_id);
    if (status != CLHEAP_SUCCESS)
        goto out;

    size_t at = find_reusable(c, n, tag_id);
    if (at < c->cached_count) {
        cached_buffer item = cached_take(c, at);
        index_entry *entry = index_find(c, item.buffer);
        entry->state = BUFFER_LIVE;
        entry->tag = tag_id;
        c->stats.cached_bytes -= item.size;
        c->stats.cached_blocks--;
        c->stats.live_bytes += item.size;
        c->stats.live_blocks++;
        c->stats.hits++;
        c->stats.hits_same_tag += item.tag == tag_id;
        *out = item.buffer;
        goto account;
    }

    c->stats.misses++;
    uint64_t cap = c->config.max_total_bytes;
    if (cap) {
        while (c->cached_count && c->stats.live_bytes + c->stats.cached_bytes + n > cap)
            release_largest_cached(c);
        if (c->stats.live_bytes + n > cap) {
            note_failure(c, n);
            status = CLHEAP_ERROR_LIMIT_REACHED;
            goto out;
        }
    }
    cl_mem buffer = NULL;
    status = allocate_from_driver(c, n, &buffer);
    if (status != CLHEAP_SUCCESS)
        goto out;
    index_entry entry = {buffer, n, tag_id, BUFFER_LIVE};
    status = index_insert(c, entry);
    if (status != CLHEAP_SUCCESS) {
        c->driver.release(c->driver.user, buffer);
        c->stats.driver_releases++;
        goto out;
    }
    c->stats.live_bytes += n;
    c->stats.live_blocks++;
    *out = buffer;
account:
    if (c->stats.live_bytes > c->stats.peak_live_bytes)
        c->stats.peak_live_bytes = c->stats.live_bytes;
out:
    leave(c);
    return status;
}

clheap_status clheap_cache_free(clheap_cache *c, cl_mem buffer)
{
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    index_entry *entry = buffer ? index_find(c, buffer) : NULL;
    if (!entry) {
        status = CLHEAP_ERROR_FOREIGN_BUFFER;
        goto out;
    }
    if (entry->state != BUFFER_LIVE) {
        status = CLHEAP_ERROR_DOUBLE_FREE;
        goto out;
    }
    uint64_t cap = c->config.max_cached_bytes;
    cached_buffer item = {entry->size, c->next_freed_seq++, buffer, entry->tag};
    int too_big_to_keep = cap && item.size > cap; /* keeping it would flush everything older */
    if (too_big_to_keep || cached_insert(c, item) != CLHEAP_SUCCESS) {
        /* Hand it straight back to the driver (also when there is no host memory
         * left to remember it). */
        c->stats.live_bytes -= item.size;
        c->stats.live_blocks--;
        index_remove(c, entry);
        c->driver.release(c->driver.user, buffer);
        c->stats.driver_releases++;
        c->stats.evictions += too_big_to_keep;
        goto out;
    }
    entry->state = BUFFER_CACHED;
    c->stats.live_bytes -= item.size;
    c->stats.live_blocks--;
    c->stats.cached_bytes += item.size;
    c->stats.cached_blocks++;
    if (cap)
        while (c->stats.cached_bytes > cap)
            release_oldest_cached(c);
out:
    leave(c);
    return status;
}

clheap_status clheap_cache_buffer_size(clheap_cache *c, cl_mem buffer, size_t *size)
{
    if (!size)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    index_entry *entry = buffer ? index_find(c, buffer) : NULL;
    if (!entry)
        status = CLHEAP_ERROR_FOREIGN_BUFFER;
    else if (entry->state != BUFFER_LIVE)
        status = CLHEAP_ERROR_DOUBLE_FREE;
    else
        *size = (size_t)entry->size;
    leave(c);
    return status;
}

clheap_status clheap_cache_trim(clheap_cache *c, uint64_t keep_bytes)
{
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    while (c->stats.cached_bytes > keep_bytes)
        release_oldest_cached(c);
    leave(c);
    return CLHEAP_SUCCESS;
}

clheap_status clheap_cache_release_all(clheap_cache *c)
{
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    while (c->cached_count)
        release_largest_cached(c);
    leave(c);
    return CLHEAP_SUCCESS;
}

/* ---- stats and checking ------------------------------------------------------------ */

clheap_status clheap_cache_get_stats(clheap_cache *c, clheap_cache_stats *stats)
{
    if (!stats)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    *stats = c->stats;
    leave(c);
    return CLHEAP_SUCCESS;
}

static clheap_status check_locked(const clheap_cache *c, char *what, size_t len)
{
    uint64_t live_bytes = 0, live_blocks = 0, cached_bytes = 0, cached_blocks = 0, entries = 0;
    for (size_t i = 0; i < c->index_capacity; i++) {
        const index_entry *e = &c->index[i];
        if (!e->buffer)
            continue;
        entries++;
        if (e->tag >= c->tag_count)
            return clheap_report_violation(what, len, "index entry %zu names tag %u of %zu", i, e->tag,
                             c->tag_count);
        if (e->size == 0 || e->size % c->config.granularity)
            return clheap_report_violation(what, len, "index entry %zu has size %llu, not a multiple of %zu", i,
                             (unsigned long long)e->size, c->config.granularity);
        if (e->state == BUFFER_LIVE) {
            live_bytes += e->size;
            live_blocks++;
        } else if (e->state == BUFFER_CACHED) {
            cached_bytes += e->size;
            cached_blocks++;
        } else {
            return clheap_report_violation(what, len, "index entry %zu has state %u", i, e->state);
        }
    }
    if (entries != c->index_count || 2 * entries > c->index_capacity)
        return clheap_report_violation(what, len, "index holds %llu entries, count says %zu, capacity %zu",
                         (unsigned long long)entries, c->index_count, c->index_capacity);
    if (cached_blocks != c->cached_count)
        return clheap_report_violation(what, len, "%llu cached entries in the index, %zu in the sorted array",
                         (unsigned long long)cached_blocks, c->cached_count);
    for (size_t i = 0; i < c->cached_count; i++) {
        const cached_buffer *b = &c->cached[i];
        if (i && !cached_less(&c->cached[i - 1], b->size, b->freed_seq))
            return clheap_report_violation(what, len, "cached array not sorted at %zu", i);
        const index_entry *e = index_find((clheap_cache *)c, b->buffer);
        if (!e || e->state != BUFFER_CACHED || e->size != b->size)
            return clheap_report_violation(what, len, "cached buffer %zu disagrees with the index", i);
        if (b->freed_seq >= c->next_freed_seq)
            return clheap_report_violation(what, len, "cached buffer %zu freed in the future", i);
    }
    const clheap_cache_stats *s = &c->stats;
    if (live_bytes != s->live_bytes || live_blocks != s->live_blocks ||
        cached_bytes != s->cached_bytes || cached_blocks != s->cached_blocks)
        return clheap_report_violation(what, len,
                         "counters say live %llu B/%llu, cached %llu B/%llu; index sums to "
                         "live %llu B/%llu, cached %llu B/%llu",
                         (unsigned long long)s->live_bytes, (unsigned long long)s->live_blocks,
                         (unsigned long long)s->cached_bytes, (unsigned long long)s->cached_blocks,
                         (unsigned long long)live_bytes, (unsigned long long)live_blocks,
                         (unsigned long long)cached_bytes, (unsigned long long)cached_blocks);
    if (c->config.max_cached_bytes && cached_bytes > c->config.max_cached_bytes)
        return clheap_report_violation(what, len, "cached bytes %llu over the cap %llu",
                         (unsigned long long)cached_bytes,
                         (unsigned long long)c->config.max_cached_bytes);
    if (c->config.max_total_bytes && live_bytes + cached_bytes > c->config.max_total_bytes)
        return clheap_report_violation(what, len, "live + cached bytes %llu over the cap %llu",
                         (unsigned long long)(live_bytes + cached_bytes),
                         (unsigned long long)c->config.max_total_bytes);
    if (s->peak_live_bytes < s->live_bytes)
        return clheap_report_violation(what, len, "peak live bytes below live bytes");
    if (s->driver_allocs - s->driver_releases != entries)
        return clheap_report_violation(what, len, "%llu driver allocations - %llu releases != %llu owned",
                         (unsigned long long)s->driver_allocs,
                         (unsigned long long)s->driver_releases, (unsigned long long)entries);
    return CLHEAP_SUCCESS;
}

clheap_status clheap_cache_check(clheap_cache *c, char *what, size_t what_len)
{
    clheap_status status = enter(c);
    if (status != CLHEAP_SUCCESS)
        return status;
    status = check_locked(c, what, what_len);
    leave(c);
    if (status == CLHEAP_SUCCESS && what && what_len)
        what[0] = '\0';
    return status;
}

clheap_status clheap_cache_stats_json(clheap_cache *c, char *buf, size_t len, size_t *needed)
{
    clheap_cache_stats s;
    clheap_status status = clheap_cache_get_stats(c, &s);
    if (status != CLHEAP_SUCCESS)
        return status;
    /* The shape the heap's stats share: used = live, free = cached (held for reuse). */
    clheap_json j;
    clheap_json_open(&j, buf, len, "cache", s.live_bytes, s.cached_bytes);
#define CLHEAP_CACHE_STAT_JSON(name) clheap_json_u64(&j, #name, s.name);
    CLHEAP_CACHE_STAT_JSON(live_blocks)
    CLHEAP_CACHE_STAT_JSON(cached_blocks)
    CLHEAP_CACHE_STAT_JSON(peak_live_bytes)
    CLHEAP_CACHE_STAT_JSON(hits)
    CLHEAP_CACHE_STAT_JSON(hits_same_tag)
    CLHEAP_CACHE_STAT_JSON(misses)
    CLHEAP_CACHE_STAT_JSON(driver_allocs)
    CLHEAP_CACHE_STAT_JSON(driver_releases)
    CLHEAP_CACHE_STAT_JSON(evictions)
    CLHEAP_CACHE_STAT_JSON(oom_recoveries)
    CLHEAP_CACHE_STAT_JSON(last_oom_request)
    CLHEAP_CACHE_STAT_JSON(last_oom_live_bytes)
    CLHEAP_CACHE_STAT_JSON(last_oom_cached_bytes)
#undef CLHEAP_CACHE_STAT_JSON
    clheap_json_errors(&j);
    clheap_json_u64(&j, "out_of_memory", s.oom_failures); /* as the heap's: refused for want of memory */
    return clheap_json_close(&j, needed);
}
