#include "registry.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct entry {
    const void *handle;
    clheap_handle_kind kind;
} entry;
static entry *registry_handles;
static size_t registry_count, registry_capacity;

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
    registry_handles[registry_count++] = (entry){handle, kind};
out:
    pthread_mutex_unlock(&registry_lock);
    return status;
}

int clheap_registry_take(const void *handle, clheap_handle_kind kind)
{
    int taken = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count && !taken; i++) {
        if (registry_handles[i].handle == handle && registry_handles[i].kind == kind) {
            registry_handles[i] = registry_handles[--registry_count];
            taken = 1;
        }
    }
    if (registry_count == 0) {
        free(registry_handles);
        registry_handles = NULL;
        registry_capacity = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return taken;
}

int clheap_registry_contains(const void *handle, clheap_handle_kind kind)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count && !found; i++)
        found = registry_handles[i].handle == handle && registry_handles[i].kind == kind;
    pthread_mutex_unlock(&registry_lock);
    return found;
}
