#include "report.h"

#include <stdarg.h>
#include <stdio.h>

clheap_status clheap_report_violation(char *what, size_t what_len, const char *fmt, ...)
{
    if (what && what_len) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(what, what_len, fmt, args);
        va_end(args);
    }
    return CLHEAP_ERROR_HEAP_CORRUPT;
}
