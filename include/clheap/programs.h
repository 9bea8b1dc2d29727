/** \file
 * The library's own device program, built once: shared between the heaps of one
 * context and device, and kept on disk between processes.
 *
 * Every heap that needs the library's kernels (initialisation, parallel_do's helpers,
 * the host-enqueued malloc and free) uses one program per context, device and build
 * options. While a heap holds it, another heap with the same three gets the same
 * program without a build. Its binary is also written to a cache folder, so that the
 * next process loads it instead of building it, even where the driver keeps no cache
 * of its own:
 *   - the folder is `$CLHEAP_PROGRAM_CACHE` if set, else `$XDG_CACHE_HOME/clheap`, else
 *     `$HOME/.cache/clheap`; `CLHEAP_PROGRAM_CACHE=off` (or `0`, or empty) turns it off;
 *   - a file is keyed by the device's name and version, the platform's, the driver
 *     version, a hash of the library's source and the build options; a file whose key
 *     or checksum does not match (stale, truncated or corrupt) is never loaded: the
 *     program is built from source and the file written again;
 *   - a folder that cannot be made or written turns the disk cache off for that build;
 *     nothing fails because of it;
 *   - files are written whole under a temporary name and renamed, so processes that
 *     share the folder never read half a file. Nothing is ever deleted: remove the
 *     folder to reclaim its space (a driver update leaves the old files unused).
 * Users' own programs (clheap_heap_build_program) are not cached: their sources may
 * include files that no key could see. */
#ifndef CLHEAP_PROGRAMS_H
#define CLHEAP_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counts, since the process began, of how the library's program was obtained. */
typedef struct clheap_program_cache_stats {
    uint64_t shared;      /**< taken from another live heap: no build, no file read */
    uint64_t loaded;      /**< loaded from a cache file */
    uint64_t built;       /**< built from source */
    uint64_t written;     /**< cache files written */
    uint64_t rejected;    /**< cache files found but not used: key, checksum or load failed */
} clheap_program_cache_stats;

/** Copies the counters (cheap: no device work). */
clheap_status clheap_program_cache_get_stats(clheap_program_cache_stats *stats);

/** The cache folder the next build would use, as a string into buf (len bytes with
 * its NUL); "" when the disk cache is off. CLHEAP_ERROR_BUFFER_TOO_SMALL if it does not
 * fit. */
clheap_status clheap_program_cache_dir(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
