/* The library's own program, shared and cached (include/clheap/programs.h says what a
 * user sees; host/programs.c how it works). */
#ifndef CLHEAP_HOST_PROGRAMS_H
#define CLHEAP_HOST_PROGRAMS_H

#include "clheap/device.h"
#include "clheap/status.h"

/* The program of sources[0 .. count) built for device with options: a live one shared,
 * one loaded from the cache folder, or one built (and written there). The caller holds
 * it until clheap_programs_put. */
clheap_status clheap_programs_get(cl_context context, cl_device_id device, const char **sources, cl_uint count,
                                  const char *options, cl_program *out);
/* Builds sources[0 .. count) for device with options, uncached: on a build error,
 * CLHEAP_ERROR_BUILD_FAILED and the start of the build log in log (may be NULL), named
 * by the sources' #line directives even where the compiler ignored them. */
clheap_status clheap_programs_build(cl_context context, cl_device_id device, const char **sources, cl_uint count,
                                    const char *options, cl_program *out, char *log, size_t log_len);
/* The program's build log for device into log (cut to log_len; may be NULL), its lines
 * named as clheap_programs_name_lines names them for sources[0 .. count) (none: as is). */
void clheap_programs_copy_log(cl_program program, cl_device_id device, char *log, size_t log_len, const char **sources,
                              cl_uint count);
/* Gives back a program from clheap_programs_get; the last holder releases it. */
void clheap_programs_put(cl_program program);
/* Where a compiler ignores #line (NVIDIA's log names each line "<kernel>:N" of the joined
 * text), renames the log's lines as the #line directives of sources[0 .. count) number
 * them ("source 2:7"), as compilers that honour them print; lines before the first named
 * directive, or past the text, are left. The log stays within log_len bytes. */
void clheap_programs_name_lines(char *log, size_t log_len, const char **sources, size_t count);

#endif
