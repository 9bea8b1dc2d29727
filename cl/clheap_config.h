/* clheap's tuning macros, every one in this file: each is a default a build may change
 * with -DCLHEAP_NAME=value (device macros: in the options of every program that uses the
 * heap; host/heap_layout.c's: when the library is built). docs/tuning.md lists them with
 * their meaning, safe range and what they trade. None of them can make two allocations
 * overlap: the bounds only decide how long a request looks before it answers NULL, the
 * policies how the work is shared out. The comments say why each default is what it is. */
#ifndef CLHEAP_CONFIG_H
#define CLHEAP_CONFIG_H

/* ---- cl/clheap.cl ---- */

#ifndef CLHEAP_WARP_COALESCE_UNITS
#define CLHEAP_WARP_COALESCE_UNITS 5u /* requests up to 64 B (+ the header unit) */
#endif

/* ---- cl/clheap_bitmap.h ---- */

#ifndef CLHEAP_BM_FIND_TRIES
#define CLHEAP_BM_FIND_TRIES 8
#endif

/* ---- cl/clheap_blocks.h ---- */

#ifndef CLHEAP_BLOCK_FAST_TRIES
#define CLHEAP_BLOCK_FAST_TRIES 4
#endif

#ifndef CLHEAP_BLOCK_SWEEP
#define CLHEAP_BLOCK_SWEEP 64 /* active-bitmap containers the last look sweeps */
#endif

#ifndef CLHEAP_BITMAP_SWEEP
#define CLHEAP_BITMAP_SWEEP 64 /* free-bitmap containers BitmapAlloc's last look sweeps */
#endif

#ifndef CLHEAP_BLOCK_SLOW_TRIES
#define CLHEAP_BLOCK_SLOW_TRIES 4
#endif

/* TierAlloc's free leaves the work after its AND to later (see cl/clheap_tier.h,
 * settling) only in launches of at most CLHEAP_TIER_DEFER_ITEMS work-items, and only
 * while the page tier has handed out less than CLHEAP_TIER_DEFER_USED_PERCENT of the
 * pool's frames. */
#ifndef CLHEAP_TIER_DEFER_ITEMS
#define CLHEAP_TIER_DEFER_ITEMS 32768
#endif

#ifndef CLHEAP_TIER_DEFER_USED_PERCENT
#define CLHEAP_TIER_DEFER_USED_PERCENT 25
#endif

/* ---- cl/clheap_bump.h ---- */

#ifndef CLHEAP_WRAP_MAX_TRIES
#define CLHEAP_WRAP_MAX_TRIES 64
#endif

/* ---- cl/clheap_circular.h ---- */

/* Merges a malloc's walk may make: a free chunk too small for it swallows its free
 * successors (as free does) until it fits. Why: free merges only forward, so a chunk
 * freed before its successor stays apart from it, and under steady churn the list became
 * ever more, ever smaller free chunks and walks grew without bound (H100, 2^20
 * work-items each mallocing and freeing 16 - 64 B on a 1 GiB CMMalloc heap: 2.3 s for
 * one launch, 35 s for 12, over 150 s for 20). One merge a step (4 a walk) was not
 * enough for a warp's claim of 32 parts; with the warp free of cl/clheap.cl and up to 64
 * merges a walk, the 100th launch takes 7.2 ms where the 16th took 33 s (H100 run 22). */
#ifndef CLHEAP_WALK_MERGES
#define CLHEAP_WALK_MERGES 64
#endif

/* What a walk meets, counted by tests/core_churn.c (the C11 core under clheap-bench
 * churn's launches) to compare with H100 traces; nothing anywhere else. */
#ifndef CLHEAP_CIRCULAR_EVENT
#define CLHEAP_CIRCULAR_EVENT(what) ((void)0)
#endif

/* A free of a single-offset variant, after it released its chunk, looks once more at its
 * neighbours (clheap_circular_remerge). Why: two neighbours freed at once each see the
 * other in use and neither merges; the single-offset walkers, all starting from one
 * offset, then pass one more free chunk each. H100 run 45 H (clheap-bench churn, 100
 * launches, three rounds, against 0f5d3f8 alternating): all 100 launches CMalloc 1,259 -
 * 1,327 -> 1,040 - 1,083 ms, CFMalloc 455 - 463 -> 355 - 359, median CFMalloc 4.5 - 4.6 ->
 * 3.5 - 3.6 ms, free chunks left 596,000 - 629,000 -> 305,000 (CMalloc; the fresh heap has
 * 262,144); the papers' tests 0.98x - 1.08x; test_stress 0 contended NULLs. The multi
 * variants' churn is 1.1x its first without it, and it made their papers 1.09x - 1.29x
 * slower (run 44 E). */
#ifndef CLHEAP_FREE_REMERGE
#define CLHEAP_FREE_REMERGE 1
#endif

/* Where a claim that ends at `next` leaves the roving offset: there, or, with
 * CLHEAP_ROVER_HOME_PAST_FLOOR (off by default), at home if next lies past the pre-split
 * level at 3/4 of the levels, where chunks hold one or two warp claims of 16 - 64 B
 * (single offset, binary pre-split only). Why it exists: clheap_circular_moves_rover
 * keeps the offset from moving on claims of small chunks, but claims of the floor
 * level's chunks still carry it to the floor's end, and on the scheduled C11 core
 * (tests/core_churn.c: paced lanes, 40 launches of 8,192 warps on 256 MiB, two seeds;
 * bench/results/core-churn/) the offset crept there launch by launch and every fifth or
 * sixth launch walked the small levels. With the rule: CMalloc's slowest launch 2.00x,
 * 1.67x -> 1.24x, 1.38x its first, all launches' shared accesses 3% - 7% fewer, the
 * median launch the same; CFMalloc's slowest 1.45x, 1.74x -> 1.33x, 1.38x. Why it is
 * off: not yet measured on a GPU, and H100 run 44 D found that sending the offset home
 * before every launch left CMalloc's median launch as it was there. */
#ifndef CLHEAP_ROVER_HOME_PAST_FLOOR
#define CLHEAP_ROVER_HOME_PAST_FLOOR 0
#endif

/* ---- cl/clheap_common.h ---- */

/* Bounds on every search, so that a full heap answers NULL in bounded time. The
 * CircularMalloc family's walk that meets a header merged away under it steps back to
 * the header it came from (whose next now skips the dead one: no ground is lost), or,
 * if that one went too, restarts a lap. Restarts: with 8, 0.02% - 1.5% of the mallocs
 * of `clheap-bench churn` gave up contended in a heap 94% free, with 32 up to 0.008%,
 * with 128 none, at the same median launch time within 1.4x (H100 run 22, log-S10.txt).
 * Steps back have a budget of their own: they used to count as restarts, and since
 * frees merge back into their predecessors, a long walk of a large request through a
 * churning pool can meet more than 128 of them. test_stress on the H100 (65,536
 * work-items, 1 GiB, 5 x 10^6 operations, 40% - 45% of the pool live), contended NULLs
 * with steps back counted as restarts / apart: CMalloc 277 / 0, CFMalloc 1,028 / 0,
 * CMMalloc 3 / 0, CFMMalloc 18 / 0, churn times unchanged (run 45 A). On the scheduled
 * C11 core, 64 - 128 lanes of that test's sizes met 4 - 14 steps back per restart. */
#ifndef CLHEAP_MAX_RESTARTS
#define CLHEAP_MAX_RESTARTS 128
#endif

#ifndef CLHEAP_MAX_STEPS_BACK
#define CLHEAP_MAX_STEPS_BACK 4096
#endif

/* ---- cl/clheap_pages.h ---- */

#ifndef CLHEAP_PAGES_PASSES
#define CLHEAP_PAGES_PASSES 6 /* rounds of looks: frames that breakers give back are found */
#endif

#ifndef CLHEAP_PAGES_NEAR
#define CLHEAP_PAGES_NEAR 16 /* containers a take looks at from its end, per round */
#endif

#ifndef CLHEAP_PAGES_NEAR_BREAK
#define CLHEAP_PAGES_NEAR_BREAK 16 /* containers a take looks at from the last break down, per round (0: none) */
#endif

#ifndef CLHEAP_PAGES_SWEEP
#define CLHEAP_PAGES_SWEEP 256 /* containers the last round looks at */
#endif

#ifndef CLHEAP_PAGES_BREAKERS
/* Whole segments broken at once before the next breaks are deferred: 2, or 1/512 of
 * the segments (CLHEAP_PAGES_BREAK_SHARE) if more. Why so few: each break leaves 64 - m
 * free frames that only later takes' looks find, and a burst's takes that found no fit
 * broke segments faster than the looks refilled them. Scheduled C11 core
 * (tests/test_core_burst.c: a warp's small requests of one class together, test_stress's
 * sizes, a fresh pool's first burst), bursts with a NULL among those asking for at most
 * 75% of the pool, 4 or 1/32 at once against these: 64 MiB and 8,192 lanes, 3 and 0 of 40
 * with sizes to 1 MiB, 13 and 0 of 40 to 2 MiB; 256 MiB and 32,768 lanes, 1 and 0, 7 and
 * 1 of 16. The small tier broke 140 - 170 segments instead of 230 - 265 in a 64 MiB
 * burst; the takes that find no segment to break look in F again (bounded passes, the
 * last one breaks regardless). H100 (run 47, test_stress's first round, 2^20 work-items
 * on 8 GiB, 64% of it asked for): 3, 6, 8 and 11 NULL for 1 - 2 MiB requests with 4 or
 * 1/32 and no look at the last break; 0 and 0 with these and the look; 17 and 19 with
 * 1/512 alone. 8 GiB throughput, 15 alternating rounds: malloc 0.997x the time in the
 * geometric mean, free 0.996x; 2^20 x 64 B and 256 B mallocs 1.15x and 1.09x slower. */
#define CLHEAP_PAGES_BREAKERS 2
#endif

#ifndef CLHEAP_PAGES_BREAK_SHARE
#define CLHEAP_PAGES_BREAK_SHARE 512
#endif

#ifndef CLHEAP_PAGES_BY_ENDS
/* 1: pieces of up to a segment from the pool's low end, larger ones from its high end;
 * 0: anywhere, at random. Under churn, small blocks landing in every region leave large
 * requests no whole piece (H100, test_stress, 2^20 work-items, 16 GiB heap: 84,059 NULL
 * for 256 KiB - 2 MiB requests with at most 48% of the pool live). */
#define CLHEAP_PAGES_BY_ENDS 1
#endif

#ifndef CLHEAP_PAGES_WIDTH_SEGMENTS
/* A take starts in one of the containers nearest its end, 1 per this many segments of
 * the pool (at least 1, at most 64), and where there are several it picks a fit in the
 * container at random: concurrent takers then clear bits of different words instead of
 * queueing on one. Small pools keep exact first fit from the end, which packs best
 * (32 MiB pool, test_tier's mixed burst at 74%: random fits there left no 16 whole
 * segments in a row for a 1 MiB request). */
#define CLHEAP_PAGES_WIDTH_SEGMENTS 4096
#endif

#ifndef CLHEAP_PAGES_BEST_FIT_SEGMENTS
/* Pools of at most this many segments (4096: 256 MiB of 1 KiB frames) place large
 * requests (more than a segment) by best fit over frames (clheap_pages_take_region: a
 * scan of at most 64 words), larger pools first nearest the high end, where concurrent
 * takes spread over several containers (CLHEAP_PAGES_WIDTH_SEGMENTS), and by best fit
 * only when that finds nothing. Why the difference: in a small pool a large request is
 * a sizable share of it, and placement decides whether the next one fits; in a large
 * pool, a scan of every segment by each of thousands of concurrent requests that all
 * pick the same best fit would cost more than it saves. */
#define CLHEAP_PAGES_BEST_FIT_SEGMENTS 4096
#endif

#ifndef CLHEAP_PAGES_RUN_TRIES
#define CLHEAP_PAGES_RUN_TRIES 8 /* scans for a run of segments (concurrent claims collide) */
#endif

#ifndef CLHEAP_PAGES_REGION_TRIES
/* Best-fit scans a large request makes in a pool of at most CLHEAP_PAGES_BEST_FIT_SEGMENTS
 * before it goes on to the frontier and the runs nearest the high end. A scan whose
 * claim failed lost to a concurrent request that took frames of the same region; the
 * next scan sees them taken and finds the best fit that is left (often the rest of that
 * region, beside the winner). The ways after it place without looking at fits: a range
 * below the high frontier lands in the middle of a free stretch, the runs nearest the
 * end cut up the stretch there, and a later 1 MiB request finds no piece. With 2 scans
 * a third of test_tier's large requests took those ways, and its mixed rounds at 75%
 * got a NULL in 5 of 48 H100 runs and in 8 of 600 replays on the scheduled C11 core (64
 * lanes; 300 size seeds, 300 schedules of the test's); with 16, in none of 48 (H100 run
 * 40) nor of the 600. A scan is (segments / 64) loads: at most 64 here. */
#define CLHEAP_PAGES_REGION_TRIES 16
#endif

#ifndef CLHEAP_PAGES_FRONTIER_TRIES
/* Adds on a frontier before the other ways: a range whose segment another request is
 * moving from W to F (its rest not in F yet) fails, and the next range usually does not.
 * tests/test_core_schedule.c (one shared access at a time by a random one of 128
 * threads, each filling a 64 MiB pool until its first NULL, as the oom benchmark's
 * launch does): one add filled 56% - 79% of the pool with 17 KiB - 200,000 B requests,
 * four fill 86% - 99%. */
#define CLHEAP_PAGES_FRONTIER_TRIES 4
#endif

#ifndef CLHEAP_PAGES_STRETCH_TRIES
#define CLHEAP_PAGES_STRETCH_TRIES 2 /* scans for a stretch (a concurrent take may claim part of one) */
#endif

/* ---- cl/clheap_tier.h ---- */

#ifndef CLHEAP_TIER_CLOSE_TRIES
#define CLHEAP_TIER_CLOSE_TRIES 8
#endif

/* Hints a request adds on before it falls back: its own, then the next slot's while its
 * own is used up or being opened. Why: a request that meets its hint being reopened
 * searches the class's blocks and often opens one, a page-tier take of its own, and the
 * hints of a class run out at about the same time. H100, 2^20 x mixed 16 B - 4 KiB,
 * warm: 15% of a launch's class groups met a busy hint and 2.2% of lanes then went
 * alone; with a second look 0.57 ms instead of 0.64 (with the two changes beside it,
 * see clheap_tier_take_finish and clheap_tier_take_begin, 0.42-0.45). */
#ifndef CLHEAP_TIER_HINT_LOOKS
#define CLHEAP_TIER_HINT_LOOKS 2
#endif

/* Segment containers a hint's next run is first looked for in, from where its last run
 * ended (see clheap_tier_take_begin). */
#ifndef CLHEAP_TIER_NEAR_LOOKS
#define CLHEAP_TIER_NEAR_LOOKS 4
#endif

/* 1: a run opened for one request gives its unwanted slots back as a user's free does
 * (clheap_tier_release_run); 0: at once. */
#ifndef CLHEAP_TIER_RELEASE_LATER
#define CLHEAP_TIER_RELEASE_LATER 1
#endif

/* How much settling who does (see the top of cl/clheap_tier.h, "Settling"): a request that opens frames
 * for blocks settles CLHEAP_TIER_SETTLE_PER_SEGMENT containers of the unsettled bitmap
 * per segment it opened, from a shared cursor, so the cursor passes the whole bitmap
 * each time half the pool's worth of blocks is opened; a request whose take found no
 * frames settles CLHEAP_TIER_SETTLE_LOOKS containers and tries again; the last resort
 * before a NULL settles every container. Why in proportion to what is opened: in run 37
 * (H100) only failing requests settled, one container each, after the page tier had run
 * dry; every launch that took half the pool then spent 40 - 80 ms on it (2^20 x 4 KiB:
 * 1.4 -> 79 ms), and the late, scattered returns cost test_tier a NULL. */
#ifndef CLHEAP_TIER_SETTLE_PER_SEGMENT
#define CLHEAP_TIER_SETTLE_PER_SEGMENT 2
#endif

#ifndef CLHEAP_TIER_SETTLE_LOOKS
#define CLHEAP_TIER_SETTLE_LOOKS 64
#endif

#ifndef CLHEAP_TIER_PIECES_POOL_FRAMES
/* Pools of at most this many frames take pieces for every class (cl/clheap_tier.h,
 * clheap_tier_wants_pieces). */
#define CLHEAP_TIER_PIECES_POOL_FRAMES (1u << 21)
#endif

/* ---- host/heap_layout.c ---- */

/* TierAlloc's runs (cl/clheap_tier.h): blocks opened together for one hint, up to
 * CLHEAP_TIER_RUN_FRAMES frames. Why 1024 (16 segments): with runs of one segment a
 * work-group's warps used up their hint's run several times per launch, and each
 * opening was on the launch's critical path while the group's other warps fell back
 * (H100, same run, TierAlloc+warp vs Gallatin malloc: 2^12 x 1 KiB 0.48x, mixed 16 B -
 * 4 KiB 0.31x; 2^20 x 16 B 0.87x; with 1024 frames 1.42x, 1.04x, 2.03x). What all of a
 * class's hints hold stays under 1/128 of the pool (it is given back when a malloc would
 * fail, but under a burst that is late): first fewer blocks per run, then fewer hint
 * slots, down to none (the class then uses blocks alone). */
#ifndef CLHEAP_TIER_RUN_FRAMES
#define CLHEAP_TIER_RUN_FRAMES 1024
#endif

/* The 1/128 of CLHEAP_TIER_RUN_FRAMES's comment. 1/64 (H100, warm, median of 8 launches): 2^20 x 64 B malloc 0.094 ms
 * instead of 0.16, mixed 16 B - 4 KiB 0.56 instead of 0.61, other shapes within noise;
 * 1/128 kept, for half the memory held in runs. */
#ifndef CLHEAP_TIER_RUN_SHARE
#define CLHEAP_TIER_RUN_SHARE 128
#endif

/* Large pools, of CLHEAP_TIER_LARGE_POOL_FRAMES frames or more (2 GiB of 1 KiB frames):
 * runs of up to CLHEAP_TIER_LARGE_RUN_FRAMES, each class's hints holding up to
 * 1/CLHEAP_TIER_LARGE_RUN_SHARE of the pool. Why: at 8 GiB the share of 1/128 cut every
 * class's runs to 512 frames (64 slots x 1024 frames is just over it), and the classes
 * of few slots a block reopened a run almost every launch: 128 slots of 4 KiB a run,
 * where the 4 KiB requests of four work-groups share a hint (H100 run 35, 2^16 x mixed
 * 16 B - 4 KiB malloc: 102 us with runs of 512 frames, 77 with 1024, 17 with 2048;
 * Gallatin 65; the other shapes' malloc 0.87x in the geometric mean, free unchanged).
 * Why not in every pool: with 1/32 and 2048 frames everywhere, test_tier's mixed 16 B -
 * 1 MiB at 75% of a 32 MiB pool got a NULL (the largest free piece 255 KiB). In a large
 * pool what hints hold is a small part of it, and it is given back before any malloc
 * reports the heap full. */
#ifndef CLHEAP_TIER_LARGE_POOL_FRAMES
#define CLHEAP_TIER_LARGE_POOL_FRAMES (1u << 21)
#endif

#ifndef CLHEAP_TIER_LARGE_RUN_FRAMES
#define CLHEAP_TIER_LARGE_RUN_FRAMES 2048
#endif

#ifndef CLHEAP_TIER_LARGE_RUN_SHARE
#define CLHEAP_TIER_LARGE_RUN_SHARE 32
#endif

/* Hint slots per class: one per compute unit, at most 64. Why the cap: 132 slots (the
 * H100's compute units) of runs of 16 segments per class opened and held 9 x 132 runs at
 * once for mixed sizes, and malloc at 2^18 and 2^20 work-items ran 4.5 and 1.8 times
 * slower than with 64 (or with runs of one segment). */
#ifndef CLHEAP_TIER_MAX_HINT_SLOTS
#define CLHEAP_TIER_MAX_HINT_SLOTS 64
#endif

#endif
