/* Process-wide set of live clheap handles, each with its kind and the calls inside it,
 * so that a call on a destroyed cache or heap, or on a handle of the other kind, returns
 * CLHEAP_ERROR_INVALID_HANDLE instead of touching freed or foreign memory, and a destroy
 * never frees a handle another thread's call is still using. A handle address reused by
 * a later create is, by design, that new handle.
 *
 * Protocol (every step under one mutex): enter finds the handle registered as its kind
 * and not being destroyed, and counts one more call in it; leave counts it out. take
 * marks the handle as being destroyed, so enters fail from then on, waits until no call
 * is inside, and removes it. So a destroy racing a call either comes first (the call
 * gets INVALID_HANDLE) or waits for the call to leave; of two racing destroys exactly
 * one takes the handle. A call must not destroy the handle it is inside (it would wait
 * for itself): a cache driver's callbacks must not destroy their cache. */
#ifndef CLHEAP_HOST_REGISTRY_H
#define CLHEAP_HOST_REGISTRY_H

#include "clheap/status.h"

typedef enum clheap_handle_kind { CLHEAP_HANDLE_CACHE = 1, CLHEAP_HANDLE_HEAP = 2 } clheap_handle_kind;

clheap_status clheap_registry_add(const void *handle, clheap_handle_kind kind);
/* 1 if the handle is live as `kind`: the caller is then inside it until its leave. */
int clheap_registry_enter(const void *handle, clheap_handle_kind kind);
void clheap_registry_leave(const void *handle);
/* 1 if this call took the handle, after every call inside it left; 0 if it is not live
 * as `kind` (never created, destroyed, or another destroy took it). */
int clheap_registry_take(const void *handle, clheap_handle_kind kind);

#endif
