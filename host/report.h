/* The check functions' one way to report the first invariant that fails, and the one
 * writer of the stats JSON documents (the cache's and the heap's share a shape). */
#ifndef CLHEAP_HOST_REPORT_H
#define CLHEAP_HOST_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "clheap/status.h"

/* Formats the violation into what (what_len bytes, may be NULL); returns HEAP_CORRUPT. */
clheap_status clheap_report_violation(char *what, size_t what_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The stats JSON shape both documents share: {"kind": kind, "version": 2, "used_bytes":
 * .., "free_bytes": .., <the kind's own fields>, "errors": {<counters>}}. A writer calls
 * open, appends its fields and its errors, and close; buffer rules as
 * clheap_cache_stats_json's. */
typedef struct clheap_json {
    char *buf;
    size_t len, used;
    int ok, first; /* first: the next field opens an object (no comma before it) */
} clheap_json;
void clheap_json_open(clheap_json *j, char *buf, size_t len, const char *kind, uint64_t used_bytes,
                      uint64_t free_bytes);
void clheap_json_u64(clheap_json *j, const char *key, uint64_t value);
void clheap_json_f64(clheap_json *j, const char *key, double value);
void clheap_json_str(clheap_json *j, const char *key, const char *value);
/* A nested object ('{') or array ('[') starts: under `key`, or, for an array's element,
 * with key NULL; its fields go in it until clheap_json_end with the closing character. */
void clheap_json_begin(clheap_json *j, const char *key, char open);
void clheap_json_end(clheap_json *j, char close);
void clheap_json_errors(clheap_json *j); /* the errors object starts, last: u64 fields go in it */
clheap_status clheap_json_close(clheap_json *j, size_t *needed);

#endif
