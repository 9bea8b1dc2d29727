/* clheap_select_device: the one device-selection rule used by demo, tests and benchmarks. */
#include "clheap/device.h"
#include "clheap/heap.h" /* clheap_allocator_name, clheap_allocator_needs_atomics64 */
#include "heap_layout.h" /* clheap_allocator_for_device */
#include "probes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PLATFORMS = 16, MAX_DEVICES = 64 };

static int contains_ignoring_case(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int device_matches(cl_device_id device, const char *want, cl_uint index)
{
    if (!want || !*want)
        return 1;
    char *end = NULL;
    unsigned long wanted_index = strtoul(want, &end, 10);
    if (end && *end == '\0')
        return wanted_index == index;
    char name[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    return contains_ignoring_case(name, want);
}

clheap_status clheap_select_device(cl_platform_id *platform_out, cl_device_id *device_out)
{
    if (!platform_out || !device_out)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    const char *want_platform = getenv("CLHEAP_PLATFORM");
    const char *want_device = getenv("CLHEAP_DEVICE");

    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint nplatforms = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, platforms, &nplatforms);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || nplatforms == 0)
        return CLHEAP_ERROR_NO_DEVICE;
    if (err != CL_SUCCESS)
        return err;
    if (nplatforms > MAX_PLATFORMS)
        nplatforms = MAX_PLATFORMS;

    /* Two passes: GPUs first, then any device type. */
    const cl_device_type passes[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
    for (int pass = 0; pass < 2; pass++) {
        for (cl_uint p = 0; p < nplatforms; p++) {
            char pname[256] = "";
            clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
            if (want_platform && *want_platform && !contains_ignoring_case(pname, want_platform))
                continue;
            cl_device_id all[MAX_DEVICES];
            cl_uint nall = 0;
            if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, all, &nall) !=
                CL_SUCCESS)
                continue;
            if (nall > MAX_DEVICES)
                nall = MAX_DEVICES;
            for (cl_uint d = 0; d < nall; d++) {
                cl_device_type type = 0;
                clGetDeviceInfo(all[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
                if (!(type & passes[pass]) || !device_matches(all[d], want_device, d))
                    continue;
                *platform_out = platforms[p];
                *device_out = all[d];
                return CLHEAP_SUCCESS;
            }
        }
    }
    return CLHEAP_ERROR_NO_DEVICE;
}

/* Whether the space-separated list names `extension` as a whole word. */
static int lists_extension(const char *list, const char *extension)
{
    size_t n = strlen(extension);
    for (const char *at = strstr(list, extension); at; at = strstr(at + 1, extension))
        if ((at == list || at[-1] == ' ') && (at[n] == ' ' || at[n] == '\0'))
            return 1;
    return 0;
}

int clheap_device_has_atomics64(cl_device_id device)
{
    const char *forced = getenv("CLHEAP_ATOMICS64");
    if (forced && strcmp(forced, "0") == 0)
        return 0;
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes) != CL_SUCCESS || bytes == 0)
        return 0;
    char *list = calloc(1, bytes + 1);
    if (!list)
        return 0;
    int has = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, bytes, list, NULL) == CL_SUCCESS &&
              lists_extension(list, "cl_khr_int64_base_atomics") &&
              lists_extension(list, "cl_khr_int64_extended_atomics");
    free(list);
    return has;
}

void clheap_describe_device(cl_device_id device, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    char pname[256] = "", dname[256] = "";
    cl_platform_id platform = NULL;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (platform)
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
    int atomics64 = clheap_device_has_atomics64(device);
    unsigned limit = clheap_device_loop_limit(device);
    char runs[256] = "every allocator, ";
    if (!atomics64 || limit) { /* the allocators the device runs, as clheap_heap_create decides */
        size_t at = 0;
        runs[0] = '\0';
        for (int a = CLHEAP_ATOMIC_MALLOC; a <= CLHEAP_ALLOCATOR_LAST; a++)
            if (clheap_device_runs(device, (clheap_allocator)a) && at < sizeof runs)
                at += (size_t)snprintf(runs + at, sizeof runs - at, "%s, ", clheap_allocator_name((clheap_allocator)a));
    }
    char loops[64] = "";
    if (limit)
        snprintf(loops, sizeof loops, "; loops cut past %u iterations a work-item", limit);
    snprintf(buf, len, "%s / %s (%s atomics: %sdefault %s%s)", pname, dname, atomics64 ? "64-bit" : "32-bit", runs,
             clheap_allocator_name(clheap_device_allocator(device, 0)), loops);
}

clheap_allocator clheap_device_allocator(cl_device_id device, int typed)
{
    return clheap_allocator_for_device(CLHEAP_AUTO_ALLOCATOR, clheap_device_loop_limit(device) != 0, typed);
}

int clheap_device_runs(cl_device_id device, clheap_allocator allocator)
{
    if (allocator == CLHEAP_AUTO_ALLOCATOR)
        return 1;
    if (!clheap_device_has_atomics64(device) && clheap_allocator_needs_atomics64(allocator))
        return 0; /* a claim swaps a fused 64-bit header whole */
    return allocator != CLHEAP_FREE_HEAP || !clheap_device_loop_limit(device); /* a batch on one work-item */
}

unsigned clheap_device_loop_limit(cl_device_id device)
{
    return clheap_probe_device(NULL, device).loop_limit;
}
