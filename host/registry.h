/* Process-wide set of live clheap handles, each with its kind, so that a call on a
 * destroyed cache or heap, or on a handle of the other kind, returns
 * CLHEAP_ERROR_INVALID_HANDLE instead of touching freed or foreign memory. A handle
 * address reused by a later create is, by design, that new handle. */
#ifndef CLHEAP_HOST_REGISTRY_H
#define CLHEAP_HOST_REGISTRY_H

#include "clheap/status.h"

typedef enum clheap_handle_kind { CLHEAP_HANDLE_CACHE = 1, CLHEAP_HANDLE_HEAP = 2 } clheap_handle_kind;

clheap_status clheap_registry_add(const void *handle, clheap_handle_kind kind);
/* Removes the handle if it is registered as `kind`: 1 if this call removed it. Of two
 * concurrent destroys of one handle, exactly one gets 1. */
int clheap_registry_take(const void *handle, clheap_handle_kind kind);
int clheap_registry_contains(const void *handle, clheap_handle_kind kind);

#endif
