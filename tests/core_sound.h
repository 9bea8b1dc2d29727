/* For the cmocka tests of the core (include after <cmocka.h> and "core_heap.h"): the
 * heap's stats, failing the test with the check's message (and `when`, if not NULL) where
 * clheap_heap_check's rules find a violation. */
#ifndef CLHEAP_TESTS_CORE_SOUND_H
#define CLHEAP_TESTS_CORE_SOUND_H

static inline clheap_heap_stats core_heap_sound(core_heap *heap, const char *when)
{
    clheap_heap_stats s;
    char what[256] = "";
    if (core_heap_walk(heap, &s, what, sizeof what) != CLHEAP_SUCCESS)
        fail_msg("heap check%s%s: %s", when ? " " : "", when ? when : "", what);
    return s;
}

#endif
