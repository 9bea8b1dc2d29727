/* Generated from cmake/vocabulary.cmake by cmake/generate_vocabulary.cmake: do not edit;
 * edit the list and run `cmake --build <build dir> --target vocabulary`. */
/* The C names of clheap's vocabulary; cl/clheap_vocabulary.h has the device's names
 * for the same values. */
#ifndef CLHEAP_VOCABULARY_H
#define CLHEAP_VOCABULARY_H

#include <stdint.h>

/* The allocator a heap compiles into its programs (clheap_heap_config.allocator). */
typedef enum clheap_allocator {
    CLHEAP_AUTO_ALLOCATOR = 0, /* the device's best: CLHEAP_DEFAULT_ALLOCATOR, CLHEAP_FALLBACK_ALLOCATOR where loops end early, CLHEAP_TYPED_ALLOCATOR for a typed heap */
    CLHEAP_ATOMIC_MALLOC = 1, /* bump pointer, cannot free (Vinkler & Havran Alg. 1) */
    CLHEAP_ATOMIC_WRAP_MALLOC = 2, /* wrapping bump pointer, may overwrite live data (Alg. 2) */
    CLHEAP_CMALLOC = 3, /* circular list, flag and next words (Alg. 3) */
    CLHEAP_CFMALLOC = 4, /* ... the flag fused into the next word */
    CLHEAP_CMMALLOC = 5, /* ... one roving offset per compute unit */
    CLHEAP_CFMMALLOC = 6, /* ... fused and multi */
    CLHEAP_BITMAP_ALLOC = 7, /* one slot size, a hierarchical bitmap of free slots */
    CLHEAP_BLOCK_ALLOC = 8, /* DynaSOAr blocks of up to 64 slots, one size class each */
    CLHEAP_TIER_ALLOC = 9, /* the default: blocks for small sizes, page runs up to the whole pool (cl/clheap_tier.h) */
    CLHEAP_FREE_HEAP = 10, /* paper 003: boundary tags, a max-heap of free blocks, strided requests, serial (cl/clheap_freeheap.h) */
    CLHEAP_ALLOCATOR_LAST = CLHEAP_FREE_HEAP
} clheap_allocator;

/* What CLHEAP_AUTO_ALLOCATOR (clheap_heap_config_default()'s choice) becomes: the
 * default on every device, with or without 64-bit atomics; the fallback on a device that
 * ends loops early (clheap_device_loop_limit: Mesa's llvmpipe); for a typed heap
 * (clheap_heap_config.typed_classes), the typed one on every device. */
#define CLHEAP_DEFAULT_ALLOCATOR CLHEAP_TIER_ALLOC
#define CLHEAP_FALLBACK_ALLOCATOR CLHEAP_BLOCK_ALLOC
#define CLHEAP_TYPED_ALLOCATOR CLHEAP_BLOCK_ALLOC

/* X(allocator, name) for every allocator, in value order. */
#define CLHEAP_ALLOCATOR_LIST(X) \
    X(CLHEAP_ATOMIC_MALLOC, "AtomicMalloc") \
    X(CLHEAP_ATOMIC_WRAP_MALLOC, "AtomicWrapMalloc") \
    X(CLHEAP_CMALLOC, "CMalloc") \
    X(CLHEAP_CFMALLOC, "CFMalloc") \
    X(CLHEAP_CMMALLOC, "CMMalloc") \
    X(CLHEAP_CFMMALLOC, "CFMMalloc") \
    X(CLHEAP_BITMAP_ALLOC, "BitmapAlloc") \
    X(CLHEAP_BLOCK_ALLOC, "BlockAlloc") \
    X(CLHEAP_TIER_ALLOC, "TierAlloc") \
    X(CLHEAP_FREE_HEAP, "FreeHeap") \

/* Counters device code keeps in the heap header (clheap_heap_read_errors). */
typedef struct clheap_heap_errors {
    uint32_t out_of_memory; /* malloc returned NULL: nothing fitted */
    uint32_t bad_size; /* malloc of 0 bytes or more than the pool, a calloc whose product overflows, an alignment aligned_alloc refuses, realloc on a bump allocator (one counter: the kernel knows which it asked) */
    uint32_t free_outside; /* free of a pointer outside the pool */
    uint32_t free_unaligned; /* free of a pointer off a 16-byte unit */
    uint32_t free_not_chunk; /* free of a pointer that starts no allocation */
    uint32_t double_free; /* free of an allocation already free */
    uint32_t contended; /* malloc gave up after its bounded retries */
    uint32_t unformatted; /* malloc or free on a buffer the host never formatted as a heap (its first word is not the magic) */
} clheap_heap_errors;

/* X(field, header word, status clheap_heap_read_errors answers) for every counter. */
#define CLHEAP_DEVICE_ERROR_LIST(X) \
    X(out_of_memory, 16, CLHEAP_ERROR_DEVICE_OUT_OF_MEMORY) \
    X(bad_size, 17, CLHEAP_ERROR_DEVICE_BAD_SIZE) \
    X(free_outside, 18, CLHEAP_ERROR_DEVICE_BAD_FREE) \
    X(free_unaligned, 19, CLHEAP_ERROR_DEVICE_BAD_FREE) \
    X(free_not_chunk, 20, CLHEAP_ERROR_DEVICE_BAD_FREE) \
    X(double_free, 21, CLHEAP_ERROR_DEVICE_BAD_FREE) \
    X(contended, 22, CLHEAP_ERROR_DEVICE_CONTENDED) \
    X(unformatted, 23, CLHEAP_ERROR_HEAP_CORRUPT) \

#endif
