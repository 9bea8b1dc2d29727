/* Process-wide set of live clheap handles, so that a call on a destroyed cache or heap
 * returns CLHEAP_ERROR_INVALID_HANDLE instead of touching freed memory. A handle
 * address reused by a later create is, by design, that new handle. */
#ifndef CLHEAP_HOST_REGISTRY_H
#define CLHEAP_HOST_REGISTRY_H

#include "clheap/status.h"

clheap_status clheap_registry_add(const void *handle);
void clheap_registry_remove(const void *handle);
int clheap_registry_contains(const void *handle);

#endif
