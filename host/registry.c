#include "registry.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_left = PTHREAD_COND_INITIALIZER; /* a call left a handle being destroyed */
typedef struct entry {
    const void *handle;
    clheap_handle_kind kind;
    unsigned calls; /* calls inside the handle now */
    int dying;      /* a take has begun: no new call enters */
} entry;
static entry *registry_handles;
static size_t registry_count, registry_capacity;

/* The handle's entry (any kind), or NULL; under registry_lock. */
static entry *find(const void *handle)
{
    for (size_t i = 0; i < registry_count; i++)
        if (registry_handles[i].handle == handle)
            return &registry_handles[i];
    return NULL;
}

clheap_status clheap_registry_add(const void *handle, clheap_handle_kind kind)
{
    clheap_status status = CLHEAP_SUCCESS;
    pthread_mutex_lock(&registry_lock);
    if (registry_count == registry_capacity) {
        size_t capacity = registry_capacity ? 2 * registry_capacity : 16;
        entry *grown = realloc(registry_handles, capacity * sizeof *grown);
        if (!grown) {
            status = CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
            goto out;
        }
        registry_handles = grown;
        registry_capacity = capacity;
    }
    registry_handles[registry_count++] = (entry){handle, kind, 0, 0};
out:
    pthread_mutex_unlock(&registry_lock);
    return status;
}

int clheap_registry_enter(const void *handle, clheap_handle_kind kind)
{
    pthread_mutex_lock(&registry_lock);
    entry *e = find(handle);
    int live = e && e->kind == kind && !e->dying;
    if (live)
        e->calls++;
    pthread_mutex_unlock(&registry_lock);
    return live;
}

void clheap_registry_leave(const void *handle)
{
    pthread_mutex_lock(&registry_lock);
    entry *e = find(handle);
    if (e && --e->calls == 0 && e->dying)
        pthread_cond_broadcast(&registry_left);
    pthread_mutex_unlock(&registry_lock);
}

int clheap_registry_take(const void *handle, clheap_handle_kind kind)
{
    pthread_mutex_lock(&registry_lock);
    entry *e = find(handle);
    int taken = e && e->kind == kind && !e->dying;
    if (taken) {
        e->dying = 1;
        while ((e = find(handle))->calls) /* entries move when others are removed */
            pthread_cond_wait(&registry_left, &registry_lock);
        *e = registry_handles[--registry_count];
    }
    if (registry_count == 0) {
        free(registry_handles);
        registry_handles = NULL;
        registry_capacity = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return taken;
}
