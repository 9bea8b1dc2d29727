/* Lanes as coroutines for the scheduled C11 core (CLHEAP_CORE_SCHEDULED): before each
 * shared access cl/clheap_port.h calls clheap_core_schedule_step, defined here, which
 * hands the turn to a running lane drawn at random (or, paced, to the lane due next).
 * One lane runs at a time, so a run is the same every time for a seed; each lane keeps
 * the core's per-thread state (work-group id, launch size, fence bookkeeping) as its own.
 * Why coroutines: a GPU launch's first burst is tens of thousands of work-items, and
 * tests/test_core_schedule.c's thread per lane with a semaphore handoff per access took
 * 12 minutes for 32,000 lanes (H100 run 41's replay); a ucontext switch takes seconds
 * for 32,768 lanes (run 46's). */
#ifndef CLHEAP_TESTS_COROUTINE_LANES_H
#define CLHEAP_TESTS_COROUTINE_LANES_H

#include <stdint.h>

typedef void (*coroutine_lane_work)(uint32_t lane, void *arg);

/* Runs work(lane, arg) for lanes 0 .. count - 1 interleaved at every shared access, the
 * order drawn from seed; returns when every lane has returned. Returns 0, or -1 if the
 * stacks could not be had. Lanes must not call it. */
int coroutine_lanes_run(uint32_t count, coroutine_lane_work work, void *arg, uint64_t seed);
/* Paced (1) or not (0, the default) for the runs that follow. Not paced, the next
 * access is a lane's drawn at random, so a lane may wait many times as long as the others
 * between two of its accesses: harsher than a GPU. Paced, every lane is due again after
 * as many steps as there are lanes, give or take jitter_percent of them (at random), as
 * on a GPU whose warps each wait one memory latency per access while the others go on;
 * with no jitter, lanes that began together take their steps in the same rounds. */
void coroutine_lanes_pace(int paced, uint32_t jitter_percent);
/* A scripted run for the runs that follow (a replay of a race, step by step), or none
 * (count 0): turn i runs lane turns[i].lane until it is about to touch turns[i].word
 * (cl/clheap_port.h, clheap_core_next_word) for the turns[i].times-th time in that turn,
 * or (word NULL) until it returns; then turn i + 1. After the last turn (or when a turn's
 * lane has returned), the lowest lane still running runs. No seed, no pacing. */
typedef struct coroutine_lane_turn {
    uint32_t lane;
    const void *word;
    uint32_t times;
} coroutine_lane_turn;
void coroutine_lanes_script(const coroutine_lane_turn *turns, uint32_t count);
/* Shared accesses made by lanes since the program began (one scheduling step each): the
 * core's work under a schedule, the same every time for a seed. */
uint64_t coroutine_lanes_steps(void);
/* Of those, the ones the running lane made (since its start in this run). */
uint64_t coroutine_lanes_own_steps(void);

#endif
