/* Fixed and dynamic header words (cl/clheap_layout.h). Rule: a word is dynamic only if
 * some kernel in cl/ stores to it; the host's copy of the layout (clheap_layout_plan,
 * clheap_layout_plan_growth) is the truth for every other word, padding included, so a
 * kernel that wrote over the header is caught before any host loop trusts it. */
#include "heap_image.h"

#include "../cl/clheap_layout.h"
#include "report.h"

static int in(uint32_t word, uint32_t first, uint32_t end)
{
    return word >= first && word < end;
}

int clheap_header_word_is_dynamic(const clheap_layout *layout, uint32_t word)
{
    const uint32_t *h = layout->header;
    clheap_allocator a = (clheap_allocator)h[CLHEAP_HDR_KIND];
    if (in(word, CLHEAP_HDR_ERR_FIRST, CLHEAP_HDR_ERR_FIRST + CLHEAP_HDR_ERR_COUNT))
        return 1;
    if (clheap_allocator_is_bump(a))
        return in(word, CLHEAP_HDR_BUMP, CLHEAP_HDR_BUMP + 2);
    if (clheap_allocator_is_circular(a))
        return in(word, CLHEAP_HDR_OFFSETS, CLHEAP_HDR_OFFSETS + h[CLHEAP_HDR_OFFSET_COUNT]);
    if (a == CLHEAP_FREE_HEAP)
        return word == CLHEAP_HDR_FH_LOCK || word == CLHEAP_HDR_FH_COUNT;
    if (a == CLHEAP_TIER_ALLOC)
        return word == CLHEAP_HDR_SETTLE_CURSOR || word == CLHEAP_HDR_PAGES_SPLITTING ||
               in(word, CLHEAP_HDR_PAGES_LOW_FRONTIER, CLHEAP_HDR_PAGES_LAST_BREAK + 1) ||
               in(word, CLHEAP_HDR_PAGES_USED, layout->header_words);
    return 0; /* BitmapAlloc and BlockAlloc keep all their state in bitmaps and blocks */
}

clheap_status clheap_image_header_matches(const clheap_layout *layout, const uint32_t *image, char *what,
                                          size_t what_len)
{
    const uint32_t *mine = layout->header;
    for (uint32_t w = 0; w < layout->header_words; w++)
        if (image[w] != mine[w] && !clheap_header_word_is_dynamic(layout, w))
            return clheap_report_violation(what, what_len, "header word %u is %#x; the heap was laid out with %#x", w,
                                           image[w], mine[w]);
    return CLHEAP_SUCCESS;
}
