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

/* snprintf at j->used, counting what does not fit. */
static void json_append(clheap_json *j, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void json_append(clheap_json *j, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int fits = j->buf && j->used < j->len;
    int n = vsnprintf(fits ? j->buf + j->used : NULL, fits ? j->len - j->used : 0, format, args);
    va_end(args);
    if (n < 0)
        j->ok = 0;
    else
        j->used += (size_t)n;
}

void clheap_json_open(clheap_json *j, char *buf, size_t len, const char *kind, uint64_t used_bytes,
                      uint64_t free_bytes)
{
    j->buf = buf;
    j->len = buf ? len : 0;
    j->used = 0;
    j->ok = 1;
    j->first = 0;
    json_append(j, "{\"kind\": \"%s\", \"version\": 2, \"used_bytes\": %llu, \"free_bytes\": %llu", kind,
                (unsigned long long)used_bytes, (unsigned long long)free_bytes);
}

void clheap_json_u64(clheap_json *j, const char *key, uint64_t value)
{
    json_append(j, "%s\"%s\": %llu", j->first ? "" : ", ", key, (unsigned long long)value);
    j->first = 0;
}

void clheap_json_f64(clheap_json *j, const char *key, double value)
{
    json_append(j, "%s\"%s\": %.6f", j->first ? "" : ", ", key, value);
    j->first = 0;
}

void clheap_json_str(clheap_json *j, const char *key, const char *value)
{
    json_append(j, "%s\"%s\": \"%s\"", j->first ? "" : ", ", key, value);
    j->first = 0;
}

void clheap_json_begin(clheap_json *j, const char *key, char open)
{
    if (key)
        json_append(j, "%s\"%s\": %c", j->first ? "" : ", ", key, open);
    else
        json_append(j, "%s%c", j->first ? "" : ", ", open);
    j->first = 1;
}

void clheap_json_end(clheap_json *j, char close)
{
    json_append(j, "%c", close);
    j->first = 0;
}

void clheap_json_errors(clheap_json *j)
{
    clheap_json_begin(j, "errors", '{');
}

clheap_status clheap_json_close(clheap_json *j, size_t *needed)
{
    json_append(j, "}}");
    if (!j->ok)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    if (needed)
        *needed = j->used + 1;
    return j->used < j->len ? CLHEAP_SUCCESS : CLHEAP_ERROR_BUFFER_TOO_SMALL;
}
