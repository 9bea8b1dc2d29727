/* The host library's thread-safety contract (include/clheap/heap.h, cache.h), from
 * several threads at once, run under ThreadSanitizer (test_threads_tsan) and, in the
 * sanitizer build, AddressSanitizer:
 *  - a cache destroy racing a call inside the driver waits for it, and later calls get
 *    INVALID_HANDLE (never a use after free);
 *  - a heap's enqueue_malloc / enqueue_free from threads on their own queues, with
 *    checks from another thread: every check sound, every allocation stamped in every
 *    word and verified, no two overlapping;
 *  - a grow while a batch on another queue is in flight keeps that batch's allocations;
 *  - a batch on another queue is ordered with the heap's queue both ways. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "fixture.h"
#include "registry.h"

/* ---- cache: destroy racing a call inside the driver ------------------------------- */

/* A driver whose create holds the calling thread until the test opens the gate. */
typedef struct gated_driver {
    counting_driver counting;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int inside, open;
} gated_driver;

static cl_mem gated_create(void *user, cl_context context, cl_mem_flags flags, size_t size, cl_int *error)
{
    gated_driver *d = user;
    pthread_mutex_lock(&d->lock);
    d->inside = 1;
    pthread_cond_broadcast(&d->changed);
    while (!d->open)
        pthread_cond_wait(&d->changed, &d->lock);
    pthread_mutex_unlock(&d->lock);
    return d->counting.table.create(&d->counting, context, flags, size, error);
}

static cl_int gated_probe(void *user, cl_command_queue queue, cl_mem buffer)
{
    gated_driver *d = user;
    return d->counting.table.probe(&d->counting, queue, buffer);
}

static cl_int gated_release(void *user, cl_mem buffer)
{
    gated_driver *d = user;
    return d->counting.table.release(&d->counting, buffer);
}

typedef struct cache_call {
    clheap_cache *cache;
    cl_mem buffer;
    clheap_status status;
    atomic_int done;
} cache_call;

static void *alloc_thread(void *arg)
{
    cache_call *c = arg;
    c->status = clheap_cache_alloc(c->cache, 4096, "gated", &c->buffer);
    atomic_store(&c->done, 1);
    return NULL;
}

static void *destroy_thread(void *arg)
{
    cache_call *c = arg;
    c->status = clheap_cache_destroy(c->cache);
    atomic_store(&c->done, 1);
    return NULL;
}

static void cache_destroy_waits_for_a_call_inside(void **state)
{
    (void)state;
    cl_fixture cl;
    assert_int_equal(cl_fixture_open(&cl), 0);
    gated_driver d;
    memset(&d, 0, sizeof d);
    counting_driver_init(&d.counting);
    pthread_mutex_init(&d.lock, NULL);
    pthread_cond_init(&d.changed, NULL);
    clheap_cache_driver table = {gated_create, gated_probe, gated_release, &d};
    clheap_cache_config config = clheap_cache_config_default();
    config.driver = &table;
    clheap_cache *cache;
    assert_int_equal(clheap_cache_create(cl.context, cl.device, &config, &cache), CLHEAP_SUCCESS);

    cache_call alloc = {cache, NULL, -1, 0}, destroy = {cache, NULL, -1, 0};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, alloc_thread, &alloc), 0);
    pthread_mutex_lock(&d.lock);
    while (!d.inside) /* the alloc is inside the driver, holding the cache */
        pthread_cond_wait(&d.changed, &d.lock);
    pthread_mutex_unlock(&d.lock);
    assert_int_equal(pthread_create(&b, NULL, destroy_thread, &destroy), 0);
    /* Once the destroy has begun the handle takes no new call; the destroy itself must
     * still be waiting, since the alloc has not left. */
    while (clheap_registry_enter(cache, CLHEAP_HANDLE_CACHE)) {
        clheap_registry_leave(cache);
        sched_yield();
    }
    assert_int_equal(atomic_load(&destroy.done), 0);
    cl_mem refused = (cl_mem)1;
    assert_int_equal(clheap_cache_alloc(cache, 4096, "late", &refused), CLHEAP_ERROR_INVALID_HANDLE);
    assert_null(refused);
    pthread_mutex_lock(&d.lock);
    d.open = 1;
    pthread_cond_broadcast(&d.changed);
    pthread_mutex_unlock(&d.lock);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(alloc.status, CLHEAP_SUCCESS); /* it came first */
    assert_non_null(alloc.buffer);
    assert_int_equal(destroy.status, CLHEAP_ERROR_BLOCKS_STILL_LIVE); /* its buffer, released */
    assert_int_equal(d.counting.outstanding, 0);
    assert_int_equal(clheap_cache_free(cache, alloc.buffer), CLHEAP_ERROR_INVALID_HANDLE);
    assert_int_equal(clheap_cache_destroy(cache), CLHEAP_ERROR_INVALID_HANDLE);
    pthread_cond_destroy(&d.changed);
    pthread_mutex_destroy(&d.lock);
    cl_fixture_close(&cl);
}

/* ---- heap: batches from threads on their own queues -------------------------------- */

enum { WORKERS = 4, BATCH = 2048, ROUNDS = 6, MAX_CHECKS = 8 };

/* Writes allocation i's index (base + i) into each of its words. */
static const char *stamp_source =
    "__kernel void stamp(__global uint *heap, __global const uint *units, uint words, uint base) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (units[i] == 0) return;\n"
    "    for (uint k = 0; k < words; k++) heap[units[i] * 4u + k] = base + i;\n"
    "}\n";

typedef struct heap_test {
    cl_fixture cl;
    clheap_heap *heap;
    cl_program program;
} heap_test;

typedef struct worker {
    heap_test *t;
    int index;
    cl_command_queue queue;
    cl_mem handles;
    uint32_t units[BATCH]; /* the last round's allocations, left live */
    uint32_t bytes;
    int failures;
    atomic_int *running;
} worker;

static uint32_t round_bytes(int worker_index, int round)
{
    return 16u << ((worker_index + round) % 7); /* 16 B - 1 KiB */
}

static void *worker_body(void *arg)
{
    worker *w = arg;
    for (int round = 0; round < ROUNDS; round++) {
        w->bytes = round_bytes(w->index, round);
        w->failures += clheap_heap_enqueue_malloc(w->t->heap, w->queue, BATCH, w->bytes, NULL, w->handles, 0, 0, NULL,
                                                  NULL) != CLHEAP_SUCCESS;
        w->failures += clEnqueueReadBuffer(w->queue, w->handles, CL_TRUE, 0, sizeof w->units, w->units, 0, NULL,
                                           NULL) != CL_SUCCESS;
        for (int i = 0; i < BATCH; i++)
            w->failures += w->units[i] == 0; /* the heap is large enough for every request */
        if (round + 1 < ROUNDS)
            w->failures += clheap_heap_enqueue_free(w->t->heap, w->queue, BATCH, w->handles, 0, 0, NULL, NULL) !=
                           CLHEAP_SUCCESS;
    }
    w->failures += clFinish(w->queue) != CL_SUCCESS;
    atomic_fetch_sub(w->running, 1);
    return NULL;
}

typedef struct checker {
    clheap_heap *heap;
    atomic_int *running;
    int checks, failures;
    char what[256];
} checker;

static void *checker_body(void *arg)
{
    checker *c = arg;
    do {
        clheap_status status = clheap_heap_check(c->heap, c->what, sizeof c->what);
        c->failures += status != CLHEAP_SUCCESS;
        c->checks++;
    } while (atomic_load(c->running) > 0 && c->checks < MAX_CHECKS);
    return NULL;
}

/* Stamps each allocation of units (bytes each) with base + its index, on `queue`. */
static void stamp(heap_test *t, cl_command_queue queue, const uint32_t *units, size_t n, uint32_t bytes,
                  uint32_t base)
{
    cl_int err;
    cl_mem list = clCreateBuffer(t->cl.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *units,
                                 (void *)units, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_kernel k = clCreateKernel(t->program, "stamp", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem buffer = clheap_heap_buffer(t->heap);
    cl_uint words = bytes / 4u;
    clSetKernelArg(k, 0, sizeof buffer, &buffer);
    clSetKernelArg(k, 1, sizeof list, &list);
    clSetKernelArg(k, 2, sizeof words, &words);
    clSetKernelArg(k, 3, sizeof base, &base);
    size_t global = n;
    assert_int_equal(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clFinish(queue), CL_SUCCESS);
    clReleaseKernel(k);
    clReleaseMemObject(list);
}

/* Every word of every allocation holds its stamp: none overlaps another. */
static void verify_stamps(heap_test *t, const uint32_t *const *units, const uint32_t *bytes, int lists, size_t n)
{
    size_t heap_bytes = clheap_heap_size(t->heap);
    uint32_t *image = malloc(heap_bytes);
    assert_non_null(image);
    assert_int_equal(clEnqueueReadBuffer(t->cl.queue, clheap_heap_buffer(t->heap), CL_TRUE, 0, heap_bytes, image, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
    uint64_t wrong = 0;
    for (int l = 0; l < lists; l++)
        for (size_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < bytes[l] / 4u; k++)
                wrong += image[(size_t)units[l][i] * 4u + k] != (uint32_t)(l * n + i);
    free(image);
    assert_int_equal(wrong, 0);
}

static int heap_setup(void **state)
{
    heap_test *t = calloc(1, sizeof *t);
    if (!t || cl_fixture_open(&t->cl) != 0)
        return -1;
    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = 16u << 20;
    if (clheap_heap_create(t->cl.context, t->cl.device, t->cl.queue, &config, &t->heap) != CLHEAP_SUCCESS)
        return -1;
    cl_int err;
    t->program = clCreateProgramWithSource(t->cl.context, 1, &stamp_source, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(t->program, 1, &t->cl.device, "", NULL, NULL) != CL_SUCCESS)
        return -1;
    *state = t;
    return 0;
}

static int heap_teardown(void **state)
{
    heap_test *t = *state;
    clReleaseProgram(t->program);
    int failed = clheap_heap_destroy(t->heap) != CLHEAP_SUCCESS;
    cl_fixture_close(&t->cl);
    free(t);
    return failed ? -1 : 0;
}

static void heap_batches_from_threads(void **state)
{
    heap_test *t = *state;
    atomic_int running = WORKERS;
    worker w[WORKERS];
    pthread_t threads[WORKERS + 1];
    for (int i = 0; i < WORKERS; i++) {
        cl_int err;
        w[i] = (worker){.t = t, .index = i, .running = &running};
        w[i].queue = clCreateCommandQueue(t->cl.context, t->cl.device, 0, &err);
        assert_int_equal(err, CL_SUCCESS);
        w[i].handles = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, BATCH * sizeof(uint32_t), NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
    }
    checker c = {t->heap, &running, 0, 0, ""};
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, worker_body, &w[i]), 0);
    assert_int_equal(pthread_create(&threads[WORKERS], NULL, checker_body, &c), 0);
    for (int i = 0; i <= WORKERS; i++)
        pthread_join(threads[i], NULL);
    if (c.failures)
        fail_msg("%d of %d checks during the batches failed: %s", c.failures, c.checks, c.what);
    const uint32_t *lists[WORKERS];
    uint32_t bytes[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        assert_int_equal(w[i].failures, 0);
        stamp(t, t->cl.queue, w[i].units, BATCH, w[i].bytes, (uint32_t)(i * BATCH));
        lists[i] = w[i].units;
        bytes[i] = w[i].bytes;
    }
    verify_stamps(t, lists, bytes, WORKERS, BATCH);
    assert_heap_sound(t->heap, "after the threads");
    clheap_heap_stats stats;
    assert_int_equal(clheap_heap_calculate_stats(t->heap, &stats), CLHEAP_SUCCESS);
    uint64_t objects = live_block_objects(&stats); /* a request of a frame or more may be a piece */
    if (objects != (uint64_t)WORKERS * BATCH) { /* every free of every earlier round landed */
        char json[8192];
        size_t needed;
        clheap_heap_stats_json(&stats, json, sizeof json, &needed);
        fail_msg("%llu objects live, not %d: %s", (unsigned long long)objects, WORKERS * BATCH, json);
    }
    for (int i = 0; i < WORKERS; i++) {
        clReleaseMemObject(w[i].handles);
        clReleaseCommandQueue(w[i].queue);
    }
    print_message("%d threads x %d rounds of %d mallocs and frees, %d checks beside them\n", WORKERS, ROUNDS, BATCH,
                  c.checks);
}

/* clFinish, seen by the library linked into this test: a finish of the gated queue first
 * opens its gate (a user event its batch waits on). So a grow that finishes the other
 * queues lets the batch run then, and one that does not returns with the batch still
 * waiting, deterministically. */
static _Atomic(cl_command_queue) gated_queue;
static _Atomic(cl_event) gate;

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue queue)
{
    cl_int (*real)(cl_command_queue) = (cl_int (*)(cl_command_queue))dlsym(RTLD_NEXT, "clFinish");
    cl_event open = queue == atomic_load(&gated_queue) ? atomic_exchange(&gate, NULL) : NULL;
    if (open)
        clSetUserEventStatus(open, CL_COMPLETE);
    return real(queue);
}

/* A grow while a batch on another queue is still waiting to run: grow returns only after
 * the batch completed, and the batch landed in the heap before the copy, so its
 * allocations are live in the grown heap. */
static void grow_keeps_a_batch_on_another_queue(void **state)
{
    heap_test *t = *state;
    enum { MANY = 1 << 14 };
    cl_int err;
    cl_command_queue other = clCreateCommandQueue(t->cl.context, t->cl.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem handles = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, MANY * sizeof(uint32_t), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_event user = clCreateUserEvent(t->cl.context, &err), batch;
    assert_int_equal(err, CL_SUCCESS);
    atomic_store(&gate, user);
    atomic_store(&gated_queue, other);
    assert_int_equal(clheap_heap_enqueue_malloc(t->heap, other, MANY, 64, NULL, handles, 0, 1, &user, &batch),
                     CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_grow(t->heap, 32u << 20), CLHEAP_SUCCESS);
    cl_int batch_status = CL_QUEUED;
    clGetEventInfo(batch, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof batch_status, &batch_status, NULL);
    cl_event still_closed = atomic_exchange(&gate, NULL); /* so the test ends either way */
    atomic_store(&gated_queue, NULL);
    if (still_closed)
        clSetUserEventStatus(still_closed, CL_COMPLETE);
    assert_int_equal(clWaitForEvents(1, &batch), CL_SUCCESS);
    clReleaseEvent(batch);
    clReleaseEvent(user);
    assert_int_equal(batch_status, CL_COMPLETE);
    static uint32_t units[MANY];
    assert_int_equal(clEnqueueReadBuffer(other, handles, CL_TRUE, 0, sizeof units, units, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < MANY; i++)
        assert_int_not_equal(units[i], 0);
    stamp(t, t->cl.queue, units, MANY, 64, 0);
    const uint32_t *lists[1] = {units};
    uint32_t bytes[1] = {64};
    verify_stamps(t, lists, bytes, 1, MANY);
    clheap_heap_stats stats;
    assert_int_equal(clheap_heap_calculate_stats(t->heap, &stats), CLHEAP_SUCCESS);
    assert_int_equal(live_block_objects(&stats), MANY);
    clReleaseMemObject(handles);
    clReleaseCommandQueue(other);
}

/* The commands the library enqueues, seen as clFinish is above: the last marker's event
 * and queue, the last kernel's wait list (up to 4) and event, the last barrier's. */
static struct {
    cl_command_queue marker_queue, barrier_queue, kernel_queue;
    cl_event marker, kernel, barrier_waits_for;
    cl_event kernel_waits[4];
    cl_uint kernel_wait_count, barrier_wait_count;
} seen;

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint n, const cl_event *waits,
                                                            cl_event *event)
{
    cl_int (*real)(cl_command_queue, cl_uint, const cl_event *, cl_event *) =
        (cl_int (*)(cl_command_queue, cl_uint, const cl_event *, cl_event *))dlsym(RTLD_NEXT,
                                                                                  "clEnqueueMarkerWithWaitList");
    cl_int err = real(queue, n, waits, event);
    seen.marker_queue = queue;
    seen.marker = event ? *event : NULL;
    return err;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint n, const cl_event *waits,
                                                             cl_event *event)
{
    cl_int (*real)(cl_command_queue, cl_uint, const cl_event *, cl_event *) =
        (cl_int (*)(cl_command_queue, cl_uint, const cl_event *, cl_event *))dlsym(RTLD_NEXT,
                                                                                  "clEnqueueBarrierWithWaitList");
    seen.barrier_queue = queue;
    seen.barrier_wait_count = n;
    seen.barrier_waits_for = n ? waits[0] : NULL;
    return real(queue, n, waits, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t *offset, const size_t *global, const size_t *local,
                                                       cl_uint n, const cl_event *waits, cl_event *event)
{
    cl_int (*real)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
                   const cl_event *, cl_event *) =
        (cl_int (*)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,
                    const cl_event *, cl_event *))dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    cl_int err = real(queue, kernel, dims, offset, global, local, n, waits, event);
    seen.kernel_queue = queue;
    seen.kernel_wait_count = n;
    for (cl_uint i = 0; i < n && i < 4; i++)
        seen.kernel_waits[i] = waits[i];
    seen.kernel = event ? *event : NULL;
    return err;
}

/* A batch on another queue runs between the heap's queue's commands: it waits for a
 * marker of the heap's queue (and for the caller's events), and the heap's queue then
 * waits for it, so the two never change the heap at once (OpenCL 1.2 leaves that
 * undefined; rusticl corrupted heaps so: host/heap.c, enqueue_beside). A batch on the
 * heap's own queue needs neither. */
static void a_batch_on_another_queue_is_ordered_with_the_heaps(void **state)
{
    heap_test *t = *state;
    cl_int err;
    cl_command_queue other = clCreateCommandQueue(t->cl.context, t->cl.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem handles = clCreateBuffer(t->cl.context, CL_MEM_READ_WRITE, 64 * sizeof(uint32_t), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_event user = clCreateUserEvent(t->cl.context, &err), batch = NULL;
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_heap_enqueue_malloc(t->heap, other, 64, 64, NULL, handles, 0, 0, NULL, NULL), CLHEAP_SUCCESS);
    memset(&seen, 0, sizeof seen);
    clheap_status enqueued = clheap_heap_enqueue_malloc(t->heap, other, 64, 64, NULL, handles, 0, 1, &user, &batch);
    clSetUserEventStatus(user, CL_COMPLETE); /* before any assert: a failed one must not leave the batch waiting */
    assert_int_equal(enqueued, CLHEAP_SUCCESS);
    assert_ptr_equal(seen.marker_queue, t->cl.queue);
    assert_ptr_equal(seen.kernel_queue, other);
    assert_int_equal(seen.kernel_wait_count, 2);
    assert_ptr_equal(seen.kernel_waits[0], user);
    assert_ptr_equal(seen.kernel_waits[1], seen.marker);
    assert_ptr_equal(seen.kernel, batch);
    assert_ptr_equal(seen.barrier_queue, t->cl.queue);
    assert_int_equal(seen.barrier_wait_count, 1);
    assert_ptr_equal(seen.barrier_waits_for, batch);
    assert_int_equal(clFinish(t->cl.queue), CL_SUCCESS); /* the heap's queue waited for the batch */
    cl_int status = CL_QUEUED;
    assert_int_equal(clGetEventInfo(batch, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL),
                     CL_SUCCESS);
    assert_int_equal(status, CL_COMPLETE);
    memset(&seen, 0, sizeof seen);
    assert_int_equal(clheap_heap_enqueue_free(t->heap, t->cl.queue, 64, handles, 0, 0, NULL, NULL), CLHEAP_SUCCESS);
    assert_null(seen.marker_queue);
    assert_null(seen.barrier_queue);
    assert_int_equal(clheap_heap_enqueue_free(t->heap, other, 64, handles, 0, 0, NULL, NULL), CLHEAP_SUCCESS);
    assert_heap_sound(t->heap, "after the ordered batches");
    clReleaseEvent(batch);
    clReleaseEvent(user);
    clReleaseMemObject(handles);
    clReleaseCommandQueue(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_destroy_waits_for_a_call_inside),
        cmocka_unit_test_setup_teardown(heap_batches_from_threads, heap_setup, heap_teardown),
        cmocka_unit_test_setup_teardown(grow_keeps_a_batch_on_another_queue, heap_setup, heap_teardown),
        cmocka_unit_test_setup_teardown(a_batch_on_another_queue_is_ordered_with_the_heaps, heap_setup, heap_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
