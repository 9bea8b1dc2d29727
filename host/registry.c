#include "registry.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const void **registry_handles;
static size_t registry_count, registry_capacity;

clheap_status clheap_registry_add(const void *handle)
{
    clheap_status status = CLHEAP_SUCCESS;
    pthread_mutex_lock(&registry_lock);
    if (registry_count == registry_capacity) {
        size_t capacity = registry_capacity ? 2 * registry_capacity : 16;
        const void **grown = realloc(registry_handles, capacity * sizeof *grown);
        if (!grown) {
            status = CLHEAP_ERROR_OUT_OF_HOST_MEMORY;
            goto out;
        }
        registry_handles = grown;
        registry_capacity = capacity;
    }
    registry_handles[registry_count++] = handle;
out:
    pthread_mutex_unlock(&registry_lock);
    return status;
}

void clheap_registry_remove(const void *handle)
{
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count; i++) {
        if (registry_handles[i] == handle) {
            registry_handles[i] = registry_handles[--registry_count];
            break;
        }
    }
    if (registry_count == 0) {
        free(registry_handles);
        registry_handles = NULL;
        registry_capacity = 0;
    }
    pthread_mutex_unlock(&registry_lock);
}

int clheap_registry_contains(const void *handle)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count && !found; i++)
        found = registry_handles[i] == handle;
    pthread_mutex_unlock(&registry_lock);
    return found;
}
