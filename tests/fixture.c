#include "fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int cl_fixture_open(cl_fixture *f)
{
    memset(f, 0, sizeof *f);
    clheap_status status = clheap_select_device(&f->platform, &f->device);
    if (status != CLHEAP_SUCCESS) {
        fprintf(stderr, "no OpenCL device: %s\n", clheap_status_string(status));
        return -1;
    }
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    f->context = clCreateContext(props, 1, &f->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return -1;
    f->queue = clCreateCommandQueue(f->context, f->device, 0, &err);
    return err == CL_SUCCESS ? 0 : -1;
}

void cl_fixture_close(cl_fixture *f)
{
    if (f->queue)
        clReleaseCommandQueue(f->queue);
    if (f->context)
        clReleaseContext(f->context);
    memset(f, 0, sizeof *f);
}

clheap_heap *fixture_heap(const cl_fixture *f, clheap_allocator allocator, uint64_t bytes)
{
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = allocator;
    config.size_bytes = bytes;
    clheap_heap *heap = NULL;
    assert_int_equal(clheap_heap_create(f->context, f->device, f->queue, &config, &heap), CLHEAP_SUCCESS);
    return heap;
}

void assert_heap_sound(clheap_heap *heap, const char *label)
{
    char what[256];
    clheap_status status = clheap_heap_check(heap, what, sizeof what);
    if (status != CLHEAP_SUCCESS)
        fail_msg("%s%sheap check: %s (%s)", label ? label : "", label ? ": " : "", what,
                 clheap_status_string(status));
}

int reset_and_check_heap(clheap_heap *heap, cl_command_queue queue)
{
    if (clheap_heap_reset(heap) != CLHEAP_SUCCESS || clFinish(queue) != CL_SUCCESS)
        return -1;
    char what[256];
    return clheap_heap_check(heap, what, sizeof what) == CLHEAP_SUCCESS ? 0 : -1;
}

static size_t buffer_size(cl_mem buffer)
{
    size_t size = 0;
    clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, NULL);
    return size;
}

static cl_mem counting_create(void *user, cl_context context, cl_mem_flags flags, size_t size,
                              cl_int *error)
{
    counting_driver *d = user;
    d->creates++;
    if (d->forced_create_error != CL_SUCCESS) {
        *error = d->forced_create_error;
        return NULL;
    }
    cl_mem buffer = clCreateBuffer(context, flags, size, NULL, error);
    if (buffer)
        d->outstanding++;
    return buffer;
}

static cl_int counting_probe(void *user, cl_command_queue queue, cl_mem buffer)
{
    (void)queue;
    counting_driver *d = user;
    d->probes++;
    size_t size = buffer_size(buffer);
    if (d->device_budget && d->resident_bytes + size > d->device_budget) {
        d->failed_probes++;
        d->failed_probe_buffer = buffer;
        return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    }
    d->resident_bytes += size;
    return CL_SUCCESS;
}

static cl_int counting_release(void *user, cl_mem buffer)
{
    counting_driver *d = user;
    d->releases++;
    d->outstanding--;
    if (d->released_count < sizeof d->released / sizeof d->released[0])
        d->released[d->released_count++] = buffer;
    if (buffer == d->failed_probe_buffer)
        d->failed_probe_buffer = NULL; /* never counted as resident */
    else
        d->resident_bytes -= buffer_size(buffer);
    return clReleaseMemObject(buffer);
}

void counting_driver_init(counting_driver *d)
{
    memset(d, 0, sizeof *d);
    d->table.create = counting_create;
    d->table.probe = counting_probe;
    d->table.release = counting_release;
    d->table.user = d;
}

uint64_t live_block_objects(const clheap_heap_stats *s)
{
    uint64_t n = s->large_count;
    for (uint32_t c = 0; c < s->class_count && c < 32; c++)
        n += s->class_objects[c];
    return n;
}

uint64_t fixture_env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : fallback;
}
