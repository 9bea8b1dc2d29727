/* --fit, the papers' space-efficiency test: the largest problem size up to `last` that
 * fits a fixed heap, searched with as few games as the answer's precision allows (each
 * game on a GPU can take minutes). No clheap or OpenCL in here: tests/test_fit.c checks
 * the search against made-up heaps. */
#ifndef CLHEAP_EXAMPLES_FIT_H
#define CLHEAP_EXAMPLES_FIT_H

#include <stdint.h>
#include <stdio.h>

static inline int largest_fit_attempt(int (*attempt)(void *ctx, uint32_t n), void *ctx, uint32_t n, const char *who)
{
    int r = attempt(ctx, n);
    printf("  %s %ux%u: %s\n", who, n, n, r == 1 ? "fits" : r == 0 ? "full" : "FAILED");
    fflush(stdout);
    return r;
}

/* Where a search looks: sizes up to `last`, the first one played `first`, and `known`
 * (below it; 0: none) a size an earlier search found to fit, not played again. */
typedef struct fit_range {
    uint32_t known, first, last;
} fit_range;

/* Sizes double from `first` while they are at most `last`; then the gap between the
 * largest size that fits (or `known`) and the smallest that does not (or last + 1) is
 * halved, at multiples of 8, until it is at most 8 or 1/16 of the size that fits.
 * attempt(ctx, n) plays size n and says 1 (it fits), 0 (the heap was full) or -1
 * (something else went wrong: the search ends). *fits gets the size (0: none); returns
 * 0 when the search ended on a -1. Each verdict is printed under `who` as it comes, so
 * that a search cut off by a time limit still tells how far it got (a new one goes on
 * from there with `known`, `first` and `last`). */
static inline int largest_fit(int (*attempt)(void *ctx, uint32_t n), void *ctx, const char *who, fit_range range,
                              uint32_t *fits)
{
    uint32_t n = range.first, last = range.last, fails;
    int r = 1;
    *fits = range.known;
    for (; n <= last; n *= 2) {
        if ((r = largest_fit_attempt(attempt, ctx, n, who)) != 1)
            break;
        *fits = n;
    }
    fails = n <= last ? n : last + 1u; /* never a size above `last` */
    while (r != -1 && fails - *fits > 8 && fails - *fits > *fits / 16) {
        /* Strictly between the two (a gap over 8 holds a multiple of 8): rounding the
         * middle down could land on or below a size already known to fit. */
        n = (*fits + fails) / 2 / 8 * 8;
        if (n <= *fits)
            n += 8;
        if ((r = largest_fit_attempt(attempt, ctx, n, who)) == 1)
            *fits = n;
        else
            fails = n;
    }
    return r != -1;
}

#endif
