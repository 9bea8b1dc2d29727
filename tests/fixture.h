/* Shared by the tests: one OpenCL context on the selected device, and a cache driver
 * that counts calls and simulates a device with a fixed amount of memory. */
#ifndef CLHEAP_TESTS_FIXTURE_H
#define CLHEAP_TESTS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/clheap.h"

typedef struct cl_fixture {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
} cl_fixture;

/* Returns 0 on success; fails the test otherwise. */
int cl_fixture_open(cl_fixture *f);
void cl_fixture_close(cl_fixture *f);

/* A heap of `allocator` and `bytes` on f's device and queue, the rest default; fails the
 * current test (cmocka) if it cannot be made. */
clheap_heap *fixture_heap(const cl_fixture *f, clheap_allocator allocator, uint64_t bytes);

/* Fails the current test (cmocka) if clheap_heap_check finds a violation; the message
 * starts with `label` when it is not NULL. */
void assert_heap_sound(clheap_heap *heap, const char *label);

/* Block allocators (BlockAlloc, TierAlloc): the live objects the walk found, slots of
 * every class and large allocations (a TierAlloc piece is one of those). */
uint64_t live_block_objects(const clheap_heap_stats *stats);

/* A cmocka setup step: resets the heap, waits for it and checks it. 0 if sound. */
int reset_and_check_heap(clheap_heap *heap, cl_command_queue queue);

/* The unsigned integer in environment variable `name` (a test's knob for larger runs on
 * a GPU), or `fallback` if it is unset or empty. */
uint64_t fixture_env_u64(const char *name, uint64_t fallback);

/* A driver around the real OpenCL calls. It counts calls, refuses a probe when the
 * bytes made resident would exceed device_budget (0: unlimited) — the way a lazily
 * allocating driver reports out-of-memory — and can fail every create with a forced
 * error. Buffers it hands out are tracked, so a test can prove none leaked. */
typedef struct counting_driver {
    clheap_cache_driver table;
    uint64_t device_budget;
    uint64_t resident_bytes;
    cl_int forced_create_error;
    uint64_t creates, probes, failed_probes, releases;
    uint64_t outstanding; /* created and not yet released */
    cl_mem failed_probe_buffer; /* the last buffer whose probe failed: never resident */
    cl_mem released[64];  /* the first 64 buffers released, in order */
    size_t released_count;
} counting_driver;

void counting_driver_init(counting_driver *d);

#endif
