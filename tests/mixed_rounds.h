/* The request sizes and the frees of test_tier's mixed rounds at 75% of the pool, shared
 * by the OpenCL test (tests/test_tier.c) and its replay on the scheduled C11 core
 * (tests/test_core_schedule.c): the replay reproduces the H100's failures only while
 * both ask for the same sizes and free the same half. */
#ifndef CLHEAP_TESTS_MIXED_ROUNDS_H
#define CLHEAP_TESTS_MIXED_ROUNDS_H

#include <stdint.h>

enum { MIXED_ROUNDS = 6, MIXED_FIRST_SEED = 12345 };

/* The next request: 16 B - 1 MiB, log-uniform (an octave of 16 B .. 512 KiB, then up to
 * twice it); *seed is a linear congruential generator's state. */
static inline uint32_t mixed_round_size(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    uint32_t octave = 16u << ((*seed >> 8) % 16u);
    return octave + (*seed >> 4) % octave;
}

/* The seed whose clheap_hash32(id ^ seed) & 1 keeps request id through round's frees. */
static inline uint32_t mixed_round_free_seed(int round)
{
    return 0x9E3779B9u + (uint32_t)round;
}

#endif
