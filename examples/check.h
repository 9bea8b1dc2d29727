/* The examples' error handling: any clheap or OpenCL failure ends the program with the
 * call and its explanation. (A library never exits; a demo may.) */
#ifndef CLHEAP_EXAMPLES_CHECK_H
#define CLHEAP_EXAMPLES_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "clheap/clheap.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        clheap_status check_status_ = (call);                                              \
        if (check_status_ != CLHEAP_SUCCESS) {                                             \
            fprintf(stderr, "%s:%d: %s\n  -> %s\n", __FILE__, __LINE__, #call,             \
                    clheap_status_string(check_status_));                                  \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

/* Builds source with the heap's allocator; on failure prints the build log and exits. */
static inline cl_program build_or_exit(clheap_heap *heap, const char *source)
{
    static char log[16384];
    cl_program program = NULL;
    clheap_status built = clheap_heap_build_program(heap, 1, &source, "", &program, log, sizeof log);
    if (built != CLHEAP_SUCCESS)
        fprintf(stderr, "%s\n", log);
    CHECK(built);
    return program;
}

#endif
