/* The check functions' one way to report the first invariant that fails. */
#ifndef CLHEAP_HOST_REPORT_H
#define CLHEAP_HOST_REPORT_H

#include <stddef.h>

#include "clheap/status.h"

/* Formats the violation into what (what_len bytes, may be NULL); returns HEAP_CORRUPT. */
clheap_status clheap_report_violation(char *what, size_t what_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
