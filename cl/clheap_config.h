/* clheap's tuning macros, every one in this file: each is a default a build may change
 * with -DCLHEAP_NAME=value (device macros: in the options of every program that uses the
 * heap; host/heap_layout.c's: when the library is built). docs/tuning.md lists them with
 * their meaning, safe range and what they trade. None of them can make two allocations
 * overlap: the bounds only decide how long a request looks before it answers NULL, the
 * policies how the work is shared out. The comments say why each default is what it is. */
#ifndef CLHEAP_CONFIG_H
#define CLHEAP_CONFIG_H

/* ---- read by every allocator's slow paths and cl/clheap.cl ---- */

/* 1: a build for development. The slow paths that clheap_malloc and clheap_free inline
 * (the bitmaps' upward updates, a block's release, reclaim and settle, the page tier's
 * claim) are compiled once each as functions, so that NVIDIA builds a kernel that
 * allocates about three times faster; the allocator is slower where those paths run often
 * (docs/performance.md, "A build for development"). 0: for speed. */
#ifndef CLHEAP_FAST_BUILD
#define CLHEAP_FAST_BUILD 0
#endif
#if CLHEAP_FAST_BUILD
#define CLHEAP_SLOW_CALL CLHEAP_OUTLINE
#else
#define CLHEAP_SLOW_CALL
#endif

/* ---- read by cl/clheap.cl ---- */

/* How clheap_malloc and clheap_free are compiled. Out of line (CLHEAP_OUTLINE): a kernel's
 * sites share one copy, so one with many sites builds about as fast as one with one site.
 * Inline in warp-coalesced builds (CLHEAP_HAVE_PTX, NVIDIA): their bodies are the warp
 * paths, and called out of line they handed lanes that reached the call apart wrong slots
 * (objects leaked, stray writes), as the game of life's spawn kernel does; inline at each
 * site they do not (docs/design.md, "Warp coalescing"). Also inline where a program turns
 * the warp paths off (CLHEAP_WARP_PATHS below): the build that was measured. Not a tuning
 * knob. */
#if defined(CLHEAP_HAVE_PTX)
#define CLHEAP_ENTRY
#else
#define CLHEAP_ENTRY CLHEAP_OUTLINE
#endif

#ifndef CLHEAP_WARP_COALESCE_UNITS
#define CLHEAP_WARP_COALESCE_UNITS 5u /* requests up to 64 B (+ the header unit) */
#endif

/* 1: on a heap with warp coalescing (NVIDIA: CLHEAP_HAVE_PTX), this program's clheap_malloc
 * and clheap_free serve the lanes of a warp together (cl/clheap.cl). 0: each lane's request
 * goes alone, as on a heap without warp coalescing (config.no_warp_coalescing), while the
 * heap's other programs keep theirs: the two meet on the same words through the same
 * atomics (a warp path's unserved lanes go alone too). Per program. Why a switch: where a
 * kernel's lanes reach malloc apart, in a loop (the game of life's spawn: a neighbour
 * already taken skips the call, a lost claim frees at once), requests alone were faster
 * than the warp paths, whose groups there are small and wait at the warp's syncs for their
 * leader; where warps arrive whole (one malloc per work-item, churn) the warp paths are
 * much faster, and no rule on the lanes present told the two apart (docs/performance.md,
 * "Life and the warp paths"). */
#ifndef CLHEAP_WARP_PATHS
#define CLHEAP_WARP_PATHS 1
#endif
#if defined(CLHEAP_HAVE_PTX) && CLHEAP_WARP_PATHS
#define CLHEAP_WARP_COALESCED 1
#else
#define CLHEAP_WARP_COALESCED 0
#endif

/* ---- read by cl/clheap_resize.h ---- */

/* The largest alignment clheap_aligned_alloc takes, in bytes (a power of two). TierAlloc
 * and the bump allocators serve any alignment up to it; a larger one is refused (NULL,
 * counted as a bad size). Why 64 KiB: TierAlloc takes frames for the request plus the
 * alignment and gives back those it does not need, so a larger alignment costs only a
 * longer take; 64 KiB covers pages of every device we know. */
#ifndef CLHEAP_MAX_ALIGNMENT
#define CLHEAP_MAX_ALIGNMENT 65536u
#endif

/* ---- read by cl/clheap_bitmap.h ---- */

#ifndef CLHEAP_BM_FIND_TRIES
#define CLHEAP_BM_FIND_TRIES 8
#endif

/* ---- read by cl/clheap_blocks.h ---- */

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

/* In launches of more work-items than that, up to CLHEAP_TIER_KEEP_ITEMS, a TierAlloc
 * free that empties a block keeps it findable in its class, marked unsettled, instead of
 * giving its frames back at once, until the pool runs short of frames (cl/clheap_tier.h,
 * "Keeping"). Off by default (0): a program whose kernels malloc and free in a loop in
 * such launches may pass -DCLHEAP_TIER_KEEP_ITEMS=262144 in its build options; one whose
 * kernels only free should not (nothing in its launch takes the blocks again, and they
 * hold frames the next launches look past; docs/tuning.md). */
#ifndef CLHEAP_TIER_KEEP_ITEMS
#define CLHEAP_TIER_KEEP_ITEMS 0
#endif

/* 1 (the default): a TierAlloc program recycles its hints' runs (cl/clheap_tier.h,
 * "Recycling"): an emptied block of a tracked run is held for it, and the run, once
 * every block emptied, stays parked in its track until its hint installs it again,
 * without the page tier or headers. 0: the program claims no tracks (every emptied block
 * of its runs goes back to the page tier), but still holds the blocks of runs that other
 * programs of the heap track, and steals from tracks when it closes hints, so programs
 * of one heap may differ in it. Why on: with it in-kernel churn was faster than Gallatin
 * in every shape measured, without it slower in the small launches, and the sweep's
 * means moved in its favour; what it costs is some small launches that take slots of
 * small classes after runs were parked (docs/performance.md, "Recycling runs"). */
#ifndef CLHEAP_TIER_RECYCLE
#define CLHEAP_TIER_RECYCLE 1
#endif

/* How many of a hint's CLHEAP_TIER_TRACK_SLOTS track words (cl/clheap_layout.h) a
 * recycling program claims for the runs it opens, 1 to 8: a run opened while all of them
 * follow earlier runs (live or parked) goes untracked, and its blocks back to the page
 * tier one by one. Why 8: in launches that malloc and free in a loop, a hint opens runs
 * faster than their blocks empty (several runs a hint are partly live at once), and with
 * two tracks churn at 2^16 work-items kept most of its fallbacks (docs/performance.md,
 * "Recycling runs"). What each costs: one more load, issued with the others, when a
 * hint's crossing looks for a parked run. */
#ifndef CLHEAP_TIER_TRACKS
#define CLHEAP_TIER_TRACKS 8
#endif

/* TierAlloc on split words (no 64-bit atomics, cl/clheap_port.h): the frames a block
 * opening takes at once. It opens as many blocks of the class as fit (at most the class's
 * run, host/heap_layout.c), reserves its slots in the first, and lists the others active
 * and marked unsettled, so later requests find them without a page-tier take and settlers
 * give back those none took (cl/clheap_blocks.h, clheap_block_batch). Why: without run
 * hints every block was a page-tier take of its own, most of a small malloc's time on a
 * GPU; 64 frames (one segment, one atomic) cut it without the takes of several segments
 * that larger batches of the larger classes made (docs/performance.md, "Blocks opened in
 * batches on split words"). 0: one block an opening. No effect with 64-bit atomics. */
#ifndef CLHEAP_TIER_BATCH_FRAMES
#define CLHEAP_TIER_BATCH_FRAMES 64
#endif

/* The same for a request that wants a whole block or more (a warp's worth of one class, on
 * NVIDIA): a launch with such warps has many of them, which the larger batch serves with
 * fewer takes. Why not for every request: mixed sizes, whose warps want a few slots of
 * each class, were slower with every larger batch (docs/performance.md, "Whole-block
 * requests on split words"). */
#ifndef CLHEAP_TIER_BATCH_WHOLE_FRAMES
#define CLHEAP_TIER_BATCH_WHOLE_FRAMES 1024
#endif

/* 1: a TierAlloc request alone reaches the page tier's take through one call site, its
 * class's fallback and a large request's frames alike (cl/clheap_tier.h, "One take");
 * 0: the large path has a take of its own. Why 1 wherever the warp paths are not
 * compiled (no CLHEAP_HAVE_PTX): compilers that inline every call (Mesa's rusticl, PoCL)
 * copy the whole take once per site, and on llvmpipe, whose build time grows much faster
 * than the code, the second copy was most of a TierAlloc kernel's build. Why 0 on NVIDIA:
 * its driver calls the take out of line (CLHEAP_OUTLINE), and the large path's own loop
 * is the measured one. Not a tuning knob: both give the same answers. */
#ifndef CLHEAP_TIER_ONE_TAKE
#if defined(CLHEAP_HAVE_PTX)
#define CLHEAP_TIER_ONE_TAKE 0
#else
#define CLHEAP_TIER_ONE_TAKE 1
#endif
#endif

/* ---- read by cl/clheap_bump.h ---- */

#ifndef CLHEAP_WRAP_MAX_TRIES
#define CLHEAP_WRAP_MAX_TRIES 64
#endif

/* Without 64-bit atomics (cl/clheap_bump.h): tries a bump request makes on its 32-bit
 * counter before it gives up (counted contended); each retry is another request served.
 * And the largest request, in 16-byte units, that adds to the counter (larger ones swap
 * it): with the pool's 2^30 units at most, it bounds how far adds in flight carry the
 * counter past the end, so that it never wraps. */
#ifndef CLHEAP_BUMP_CAS_TRIES
#define CLHEAP_BUMP_CAS_TRIES 1024
#endif

#ifndef CLHEAP_BUMP32_ADD_UNITS
#define CLHEAP_BUMP32_ADD_UNITS 4096
#endif

/* ---- read by cl/clheap_circular.h ---- */

/* Merges a malloc's walk may make: a free chunk too small for it swallows its free
 * successors (as free does) until it fits. Why: free merges only forward, so a chunk
 * freed before its successor stays apart from it, and under steady churn the list became
 * ever more, ever smaller free chunks and walks grew without bound. One merge a step was
 * not enough for a warp's claim of 32 parts. */
#ifndef CLHEAP_WALK_MERGES
#define CLHEAP_WALK_MERGES 64
#endif

/* What a walk meets, counted by tests/core_churn.c (the C11 core under clheap-bench
 * churn's launches) to compare with GPU traces; nothing anywhere else. */
#ifndef CLHEAP_CIRCULAR_EVENT
#define CLHEAP_CIRCULAR_EVENT(what) ((void)0)
#endif

/* A free of a single-offset variant, after it released its chunk, looks once more at its
 * neighbours (clheap_circular_remerge). Why: two neighbours freed at once each see the
 * other in use and neither merges; the single-offset walkers, all starting from one
 * offset, then pass one more free chunk each. The multi-offset variants gain nothing from
 * it under churn and lose in the papers' tests, so only the single-offset ones look. */
#ifndef CLHEAP_FREE_REMERGE
#define CLHEAP_FREE_REMERGE 1
#endif

/* Where a claim that ends at `next` leaves the roving offset: there, or, with
 * CLHEAP_ROVER_HOME_PAST_FLOOR (off by default), at home if next lies past the pre-split
 * level at 3/4 of the levels, where chunks hold one or two warp claims of 16 - 64 B
 * (single offset, binary pre-split only). Why it exists: clheap_circular_moves_rover
 * keeps the offset from moving on claims of small chunks, but claims of the floor
 * level's chunks still carry it to the floor's end; on the scheduled C11 core
 * (tests/core_churn.c, bench/results/core-churn/) the offset crept there launch by launch
 * and every few launches one walked the small levels, which the rule avoids. Why it is
 * off: no GPU has measured it yet. */
#ifndef CLHEAP_ROVER_HOME_PAST_FLOOR
#define CLHEAP_ROVER_HOME_PAST_FLOOR 0
#endif

/* ---- read by cl/clheap_common.h ---- */

/* Bounds on every search, so that a full heap answers NULL in bounded time. The
 * CircularMalloc family's walk that meets a header merged away under it steps back to
 * the header it came from (whose next now skips the dead one: no ground is lost), or,
 * if that one went too, restarts a lap. Fewer restarts let some mallocs of a churning,
 * mostly free heap give up contended. Steps back have a budget of their own: frees merge
 * back into their predecessors, so a long walk of a large request through a churning
 * pool meets many of them, and counted as restarts they ended walks in contended NULLs. */
#ifndef CLHEAP_MAX_RESTARTS
#define CLHEAP_MAX_RESTARTS 128
#endif

#ifndef CLHEAP_MAX_STEPS_BACK
#define CLHEAP_MAX_STEPS_BACK 4096
#endif

/* ---- read by cl/clheap_pages.h ---- */

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
/* Whole segments broken at once before the next breaks are deferred: 2, or the pool's
 * segments / CLHEAP_PAGES_BREAK_SHARE if more. Why so few: each break leaves 64 - m
 * free frames that only later takes' looks find, and a burst's takes that found no fit
 * broke segments faster than the looks refilled them, so the burst's large requests
 * found no whole segment (NULLs on the scheduled C11 core, tests/test_core_burst.c, and
 * in test_stress's first round on the GPU). The takes that find no segment to break look
 * in F again (bounded passes, the last one breaks regardless). */
#define CLHEAP_PAGES_BREAKERS 2
#endif

#ifndef CLHEAP_PAGES_BREAK_SHARE
#define CLHEAP_PAGES_BREAK_SHARE 512
#endif

#ifndef CLHEAP_PAGES_BY_ENDS
/* 1: pieces of up to a segment from the pool's low end, larger ones from its high end;
 * 0: anywhere, at random. Under churn, small blocks landing in every region left large
 * requests no whole piece. */
#define CLHEAP_PAGES_BY_ENDS 1
#endif

#ifndef CLHEAP_PAGES_WIDTH_SEGMENTS
/* A take starts in one of the containers nearest its end, 1 per this many segments of
 * the pool (at least 1, at most 64), and where there are several it picks a fit in the
 * container at random: concurrent takers then clear bits of different words instead of
 * queueing on one. Small pools keep exact first fit from the end, which packs best
 * (random fits in a small pool left no run of whole segments for a 1 MiB request). */
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
 * test_tier's mixed rounds at 75% of the pool sometimes got a NULL, on the GPU and on the
 * scheduled C11 core; with 16 they did not. A scan is (segments / 64) loads: at most 64. */
#define CLHEAP_PAGES_REGION_TRIES 16
#endif

#ifndef CLHEAP_PAGES_FRONTIER_TRIES
/* Adds on a frontier before the other ways: a range whose segment another request is
 * moving from W to F (its rest not in F yet) fails, and the next range usually does not.
 * tests/test_core_schedule.c (each of 128 threads filling a 64 MiB pool until its first
 * NULL): with one add the pool was far from full at the first NULL; with four it was
 * nearly full. */
#define CLHEAP_PAGES_FRONTIER_TRIES 4
#endif

#ifndef CLHEAP_PAGES_STRETCH_TRIES
#define CLHEAP_PAGES_STRETCH_TRIES 2 /* scans for a stretch (a concurrent take may claim part of one) */
#endif

/* ---- read by cl/clheap_tier.h ---- */

/* Tries of a CAS that others' adds may beat: closing a run hint (clheap_tier_close_hint),
 * and a stealer's walking mark on a track (clheap_tier_walk_begin: one that fails leaves
 * the run's held blocks to its completer). */
#ifndef CLHEAP_TIER_CLOSE_TRIES
#define CLHEAP_TIER_CLOSE_TRIES 8
#endif

/* Hints a request adds on before it falls back: its own, then the next slot's while its
 * own is used up or being opened. Why: a request that meets its hint being reopened
 * searches the class's blocks and often opens one, a page-tier take of its own, and the
 * hints of a class run out at about the same time; a second look serves most of them. */
#ifndef CLHEAP_TIER_HINT_LOOKS
#define CLHEAP_TIER_HINT_LOOKS 2
#endif

/* Spares (cl/clheap_tier.h): the request whose add crosses 1/this of a hint's run opens
 * the hint's next run ahead; 0: no spares. Off by default: in small launches of in-kernel
 * churn spares made TierAlloc faster, but in launches that malloc once per work-item they
 * put an opening into launches that had none, and those were slower (docs/tuning.md,
 * docs/performance.md, "Spare runs"). A program that mallocs and frees in a loop may set
 * it in its build options (-DCLHEAP_TIER_SPARE_AT=4). */
#ifndef CLHEAP_TIER_SPARE_AT
#define CLHEAP_TIER_SPARE_AT 0u
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
 * before a NULL settles every container. Why in proportion to what is opened: when only
 * failing requests settled, one container each, after the page tier had run dry, every
 * launch that took half the pool spent most of its time there, and the late, scattered
 * returns cost test_tier a NULL. */
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

/* Pieces that their objects leave more than half unused are taken only while the page
 * tier has handed out less than this share of the pool, in percent (cl/clheap_tier.h,
 * clheap_tier_wants_pieces). Why a quarter: at half, k-d trees in pools kept mostly in
 * use still built several times slower; much lower, a fresh pool's first burst got NULLs
 * (test_core_burst). */
#ifndef CLHEAP_TIER_PIECES_USED_PERCENT
#define CLHEAP_TIER_PIECES_USED_PERCENT 25
#endif

/* ---- read by host/heap.c ---- */

/* NVIDIA's register cap for TierAlloc's programs: in warp-coalesced builds (NVIDIA), a
 * program that uses a TierAlloc heap is built with -cl-nv-maxrregcount=this, unless the
 * options given to clheap_heap_build_program name a cap of their own, or set this macro
 * (-DCLHEAP_NV_MAX_REGISTERS=N: that program's cap, 0 none); 0 here: no cap. Why:
 * inline at each site, TierAlloc's warp malloc (its rare paths included) needs most of
 * the 255 registers a work-item may have, so an SM holds one 256-item work-group of a
 * kernel that calls it, and a kernel that mallocs and frees in a loop spends its time
 * waiting on memory with few warps to hide it. At 128 an SM holds two such groups; below
 * 128 the spills cost more than the extra warps give (docs/performance.md, "TierAlloc's
 * registers"). Why a program of kernels that only free is better without: given any cap,
 * NVIDIA's assembler fills registers it leaves free without one (its free kernel: fewer
 * warps an SM, slower frees); the library's own enqueued free is built so
 * (host/heap.c). BlockAlloc's kernels need fewer than 128 and get no cap. */
#ifndef CLHEAP_NV_MAX_REGISTERS
#define CLHEAP_NV_MAX_REGISTERS 128
#endif

/* ---- read by host/heap_layout.c ---- */

/* TierAlloc's runs (cl/clheap_tier.h): blocks opened together for one hint, up to
 * CLHEAP_TIER_RUN_FRAMES frames. Why 1024 (16 segments): with runs of one segment a
 * work-group's warps used up their hint's run several times per launch, and each
 * opening was on the launch's critical path while the group's other warps fell back.
 * What all of a class's hints hold stays under 1/CLHEAP_TIER_RUN_SHARE of the pool (it
 * is given back when a malloc would fail, but under a burst that is late): first fewer
 * blocks per run, then fewer hint slots, down to none (the class then uses blocks alone). */
#ifndef CLHEAP_TIER_RUN_FRAMES
#define CLHEAP_TIER_RUN_FRAMES 1024
#endif

/* The share of the pool a class's hints may hold, 1/this. Twice the share was faster only
 * in a few small-object shapes, for twice the memory held in runs. */
#ifndef CLHEAP_TIER_RUN_SHARE
#define CLHEAP_TIER_RUN_SHARE 128
#endif

/* Large pools, of CLHEAP_TIER_LARGE_POOL_FRAMES frames or more (2 GiB of 1 KiB frames):
 * runs of up to CLHEAP_TIER_LARGE_RUN_FRAMES, each class's hints holding up to
 * 1/CLHEAP_TIER_LARGE_RUN_SHARE of the pool. Why: in a pool of several GiB the share of
 * 1/128 cut every class's runs to 512 frames, and the classes of few slots a block
 * reopened a run almost every launch. Why not in every pool: with these everywhere, a
 * small pool's mixed load at 75% of it got a NULL (no free piece large enough left). In a
 * large pool what hints hold is a small part of it, and it is given back before any
 * malloc reports the heap full. */
#ifndef CLHEAP_TIER_LARGE_POOL_FRAMES
#define CLHEAP_TIER_LARGE_POOL_FRAMES (1u << 21)
#endif

#ifndef CLHEAP_TIER_LARGE_RUN_FRAMES
#define CLHEAP_TIER_LARGE_RUN_FRAMES 2048
#endif

#ifndef CLHEAP_TIER_LARGE_RUN_SHARE
#define CLHEAP_TIER_LARGE_RUN_SHARE 32
#endif

/* Hint slots per class: one per compute unit, at most 64. Why the cap: a slot per compute
 * unit of a large GPU (over 100) opened and held that many runs of every class at once
 * for mixed sizes, and the largest launches' mallocs ran several times slower. */
#ifndef CLHEAP_TIER_MAX_HINT_SLOTS
#define CLHEAP_TIER_MAX_HINT_SLOTS 64
#endif

#endif
