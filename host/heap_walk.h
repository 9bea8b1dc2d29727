/* Walks a device heap image (read back, or the host-compiled core's memory): verifies
 * its invariants and computes exact statistics. */
#ifndef CLHEAP_HOST_HEAP_WALK_H
#define CLHEAP_HOST_HEAP_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/heap.h"

/* stats may be NULL; what (what_len bytes) gets the first violation. */
clheap_status clheap_heap_walk(const uint32_t *words, uint64_t unit_count, clheap_heap_stats *stats,
                               char *what, size_t what_len);

/* Bitmap kinds: makes every upper bitmap level and every active mark agree exactly with
 * what lies below; *repaired gets how many bits it changed. HEAP_CORRUPT, changing
 * nothing, if the bitmaps and block headers do not lie inside the image's unit_count
 * units. moved: 0 for a whole image; for one without the pool, how many units lower than
 * in the heap the rest lies, its header's bitmap and block-header units already moved
 * (as clheap_heap_repair reads it). Callers compare the fixed header words first
 * (host/heap_image.h). */
clheap_status clheap_heap_repair_image(uint32_t *words, uint64_t unit_count, uint64_t moved, uint64_t *repaired);

/* The set bits of bitmap `desc`, found by descending only into containers whose bit above
 * is set (DynaSOAr's indices()); a bit above past the level's end is skipped. Writes at
 * most cap of them; *count gets how many there are. *containers_read (may be NULL) counts
 * the level-0 containers it had to look at. HEAP_CORRUPT as clheap_heap_repair_image. */
clheap_status clheap_bitmap_indices(const uint32_t *words, uint64_t unit_count, uint64_t moved, uint32_t desc,
                                    uint32_t *out, uint64_t cap, uint64_t *count, uint64_t *containers_read);

/* The header's error counters. */
void clheap_heap_errors_from_header(const uint32_t *words, clheap_heap_errors *errors);

#endif
