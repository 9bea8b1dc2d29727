/* The --fit search of clheap-life and clheap-wator (examples/fit.h) against made-up
 * heaps that hold every size up to some limit: it never plays a size above `last` or
 * below 8, never plays a size twice, always ends, and answers within its stated
 * precision, whatever `first` and `last` a resumed search is given. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "fit.h"

enum { MAX_GAMES = 64 };

typedef struct made_up_heap {
    uint32_t holds;     /* the largest size that fits */
    uint32_t broken_at; /* a game of this size fails for another reason (0: none) */
    uint32_t played[MAX_GAMES];
    int games;
} made_up_heap;

static int play(void *ctx, uint32_t n)
{
    made_up_heap *heap = ctx;
    if (heap->games < MAX_GAMES)
        heap->played[heap->games] = n;
    heap->games++;
    if (heap->games > MAX_GAMES)
        return -1; /* a search that does not end: stopped here, and failed by the caller */
    if (heap->broken_at && n == heap->broken_at)
        return -1;
    return n <= heap->holds;
}

/* One search, its verdict lines (one per game) sent to /dev/null. */
static int search(made_up_heap *heap, fit_range range, uint32_t *fits)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), sink = open("/dev/null", O_WRONLY);
    assert_true(saved >= 0 && sink >= 0);
    dup2(sink, STDOUT_FILENO);
    close(sink);
    int sound = largest_fit(play, heap, "made-up", range, fits);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    return sound;
}

static void answers_within_its_precision(void **state)
{
    (void)state;
    const uint32_t firsts[] = {8, 9, 10, 15, 16, 17, 64, 100, 1536, 1600, 2880};
    uint32_t searches = 0;
    for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++) {
        uint32_t first = firsts[f];
        const uint32_t lasts[] = {first, first + 1, first + 7, first + 8, first + 9, 2 * first - 1, 2 * first,
                                  3 * first + 5, 16384, 32768};
        for (size_t l = 0; l < sizeof lasts / sizeof *lasts; l++) {
            uint32_t last = lasts[l];
            const uint32_t limits[] = {0, 7, 8, 9, 15, 16, first - 1, first, first + 1, first + 8, 2 * first - 1,
                                       2 * first, 2 * first + 3, last - 1, last, last + 1, 999, 4095, 40000};
            for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
                /* What an earlier search may have found to fit: nothing, or a size below
                 * `first` that this heap holds. */
                const uint32_t knowns[] = {0, first / 2, first - 1};
                for (size_t j = 0; j < sizeof knowns / sizeof *knowns; j++) {
                    uint32_t known = knowns[j];
                    if (j && (known == 0 || known > limits[k]))
                        continue;
                    made_up_heap heap = {.holds = limits[k]};
                    uint32_t fits = 12345;
                    assert_int_equal(search(&heap, (fit_range){known, first, last}, &fits), 1);
                    assert_true(heap.games <= 40);
                    for (int g = 0; g < heap.games; g++) {
                        assert_true(heap.played[g] >= 8 && heap.played[g] <= last);
                        assert_true(heap.played[g] > known); /* a known size is not played again */
                        for (int h = 0; h < g; h++)
                            assert_int_not_equal(heap.played[g], heap.played[h]);
                    }
                    uint32_t truth = heap.holds < last ? heap.holds : last;
                    assert_true(fits >= known && fits <= truth);
                    /* The loop stops at a gap of 8 or 1/16 of what fits, and the truth lies
                     * in it (also when `first` is too large and the search comes down). */
                    uint32_t precision = fits / 16 > 8 ? fits / 16 : 8;
                    assert_true(truth - fits < precision);
                    searches++;
                }
            }
        }
    }
    assert_true(searches > 3000);
}

static void a_failed_game_ends_the_search(void **state)
{
    (void)state;
    made_up_heap heap = {.holds = 5000, .broken_at = 256};
    uint32_t fits;
    assert_int_equal(search(&heap, (fit_range){0, 64, 16384}, &fits), 0);
    assert_int_equal(heap.played[heap.games - 1], 256u); /* nothing played after it */
    assert_int_equal(fits, 128u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_within_its_precision),
        cmocka_unit_test(a_failed_game_ends_the_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
