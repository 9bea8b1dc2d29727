/* Generated from cmake/vocabulary.cmake by cmake/generate_vocabulary.cmake: do not edit;
 * edit the list and run `cmake --build <build dir> --target vocabulary`. */
/* The device's names of clheap's vocabulary (macros, for `#if`); include/clheap/vocabulary.h
 * has the C API's names for the same values. OpenCL C and C. */
#ifndef CLHEAP_VOCABULARY_CL_H
#define CLHEAP_VOCABULARY_CL_H

/* Allocator kinds (clheap_allocator). */
#define CLHEAP_KIND_ATOMIC 1 /* AtomicMalloc */
#define CLHEAP_KIND_ATOMIC_WRAP 2 /* AtomicWrapMalloc */
#define CLHEAP_KIND_CMALLOC 3 /* CMalloc */
#define CLHEAP_KIND_CFMALLOC 4 /* CFMalloc */
#define CLHEAP_KIND_CMMALLOC 5 /* CMMalloc */
#define CLHEAP_KIND_CFMMALLOC 6 /* CFMMalloc */
#define CLHEAP_KIND_BITMAP 7 /* BitmapAlloc */
#define CLHEAP_KIND_BLOCKS 8 /* BlockAlloc */
#define CLHEAP_KIND_TIER 9 /* TierAlloc */
#define CLHEAP_KIND_FREEHEAP 10 /* FreeHeap */

/* Header words of the counters device code keeps (clheap_heap_errors). */
#define CLHEAP_HDR_ERR_FIRST 16
#define CLHEAP_HDR_ERR_OUT_OF_MEMORY 16 /* malloc returned NULL: nothing fitted */
#define CLHEAP_HDR_ERR_BAD_SIZE 17 /* malloc of 0 bytes or more than the pool, a calloc whose product overflows, an alignment aligned_alloc refuses, realloc on a bump allocator (one counter: the kernel knows which it asked) */
#define CLHEAP_HDR_ERR_FREE_OUTSIDE 18 /* free of a pointer outside the pool */
#define CLHEAP_HDR_ERR_FREE_UNALIGNED 19 /* free of a pointer off a 16-byte unit */
#define CLHEAP_HDR_ERR_FREE_NOT_CHUNK 20 /* free of a pointer that starts no allocation */
#define CLHEAP_HDR_ERR_DOUBLE_FREE 21 /* free of an allocation already free */
#define CLHEAP_HDR_ERR_CONTENDED 22 /* malloc gave up after its bounded retries */
#define CLHEAP_HDR_ERR_UNFORMATTED 23 /* malloc or free on a buffer the host never formatted as a heap (its first word is not the magic) */
#define CLHEAP_HDR_ERR_COUNT 8

#endif
