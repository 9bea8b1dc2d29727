/* What the host trusts of a heap image it read back: only the header words the host
 * itself laid out, and only after comparing them with its own copy of the layout. */
#ifndef CLHEAP_HOST_HEAP_IMAGE_H
#define CLHEAP_HOST_HEAP_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/status.h"
#include "heap_layout.h"

/* 1 if kernels may change header word `word` of a heap laid out as `layout` (error
 * counters, bump counter, roving offsets, the free-heap's count and lock, TierAlloc's
 * page-tier counters, hints and run hints); every other word is fixed by the layout. */
int clheap_header_word_is_dynamic(const clheap_layout *layout, uint32_t word);

/* Every fixed header word of `image` against `layout`: HEAP_CORRUPT naming the first
 * that differs (what, what_len as clheap_heap_check's). Call it before a walk, a repair
 * or a listing: those take the fixed words as loop bounds and indices. */
clheap_status clheap_image_header_matches(const clheap_layout *layout, const uint32_t *image, char *what,
                                          size_t what_len);

#endif
