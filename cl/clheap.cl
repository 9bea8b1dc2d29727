/* clheap device API: include this from your kernels, built with the options that
 * clheap_heap_build_options() returns (they choose the allocator), or let
 * clheap_heap_build_program() prepend it for you.
 *
 *   __kernel void k(__global clheap_heap *heap, ...) {
 *       __global int *p = clheap_malloc(heap, 64 * sizeof(int));
 *       if (p) { ...; clheap_free(heap, p); }
 *   }
 *
 * clheap_malloc returns NULL when the heap is full (in bounded time, never waiting for
 * another work-item) or the size is 0 or larger than the pool; every allocation is
 * 16-byte aligned. Pointers are valid only within one kernel launch: to keep an
 * allocation between launches store clheap_unit_of(heap, p), a 32-bit offset in 16-byte
 * units (0 = NULL), and turn it back with clheap_pointer(heap, unit). Errors (bad
 * frees, NULL returns) are counted in the heap header; the host reads them with
 * clheap_heap_read_errors(). */
#ifndef CLHEAP_CL
#define CLHEAP_CL

#include "clheap_port.h"
#include "clheap_layout.h"
#include "clheap_common.h"
#include "clheap_bump.h"
#include "clheap_circular.h"

#ifndef CLHEAP_ALLOCATOR
#error "clheap.cl: build with clheap_heap_build_options() (it defines CLHEAP_ALLOCATOR)"
#endif

#if CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMALLOC || CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMMALLOC
#define CLHEAP_FUSED 1
#else
#define CLHEAP_FUSED 0
#endif
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_CMMALLOC || CLHEAP_ALLOCATOR == CLHEAP_KIND_CFMMALLOC
#define CLHEAP_MULTI 1
#else
#define CLHEAP_MULTI 0
#endif
#define CLHEAP_IS_CIRCULAR (CLHEAP_ALLOCATOR >= CLHEAP_KIND_CMALLOC && CLHEAP_ALLOCATOR <= CLHEAP_KIND_CFMMALLOC)

/* Opaque: kernels take `__global clheap_heap *heap`; the host passes the heap buffer. */
typedef struct clheap_heap clheap_heap;

static CLHEAP_INLINE CLHEAP_GLOBAL clheap_u32 *clheap_words(CLHEAP_GLOBAL clheap_heap *heap)
{
    return (CLHEAP_GLOBAL clheap_u32 *)heap;
}

/* malloc returning the 16-byte-unit offset of the allocation (0 = NULL). */
static CLHEAP_INLINE clheap_u32 clheap_malloc_unit(CLHEAP_GLOBAL clheap_heap *heap, clheap_size size)
{
#if CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC
    return clheap_atomic_malloc_unit(clheap_words(heap), size);
#elif CLHEAP_ALLOCATOR == CLHEAP_KIND_ATOMIC_WRAP
    return clheap_atomic_wrap_malloc_unit(clheap_words(heap), size);
#elif CLHEAP_IS_CIRCULAR
    return clheap_circular_malloc_unit(clheap_words(heap), size, CLHEAP_FUSED, CLHEAP_MULTI);
#else
#error "clheap.cl: unknown CLHEAP_ALLOCATOR"
#endif
}

static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_pointer(CLHEAP_GLOBAL clheap_heap *heap,
                                                        clheap_u32 unit)
{
    return clheap_unit_pointer(clheap_words(heap), unit);
}

/* The offset of a pointer clheap_malloc returned (0 for NULL). */
static CLHEAP_INLINE clheap_u32 clheap_unit_of(CLHEAP_GLOBAL clheap_heap *heap,
                                               CLHEAP_GLOBAL void *ptr)
{
    if (!ptr)
        return 0u;
    return (clheap_u32)(((CLHEAP_GLOBAL unsigned char *)ptr - (CLHEAP_GLOBAL unsigned char *)heap) /
                        CLHEAP_UNIT);
}

static CLHEAP_INLINE CLHEAP_GLOBAL void *clheap_malloc(CLHEAP_GLOBAL clheap_heap *heap,
                                                       clheap_size size)
{
    return clheap_pointer(heap, clheap_malloc_unit(heap, size));
}

static CLHEAP_INLINE void clheap_free(CLHEAP_GLOBAL clheap_heap *heap, CLHEAP_GLOBAL void *ptr)
{
#if CLHEAP_IS_CIRCULAR
    clheap_circular_free(clheap_words(heap), ptr, CLHEAP_FUSED, CLHEAP_MULTI);
#else
    clheap_bump_free(clheap_words(heap), ptr);
#endif
}

static CLHEAP_INLINE void clheap_free_unit(CLHEAP_GLOBAL clheap_heap *heap, clheap_u32 unit)
{
    clheap_free(heap, clheap_pointer(heap, unit));
}

#endif
