/* The library's own program, built once (include/clheap/programs.h).
 *
 * Table: one entry per (context, device, options) with a live program and the number of
 * heaps holding it, under one mutex that no build holds. A get that finds its entry adds
 * a holder; one that misses loads or builds outside the lock, then inserts. Two that
 * miss at once both build, and the second to insert takes the first's program and
 * releases its own: no call waits for another's build. A put removes a holder, and the
 * last one releases the program, so the table never keeps a context alive.
 *
 * Cache file (little-endian host layout; the key names the machine anyway):
 *   8 B magic "CLHEAPPB", u32 format, u32 key length, u64 binary length,
 *   u64 checksum (FNV-1a 64 over key and binary), the key, the binary.
 * Invariants a loaded file meets: its length is the header's sum, its checksum matches,
 * and its key equals the key built for this device, driver, source and options. Any
 * other file is rejected and overwritten by the next build. */
#include "programs.h"

#include "clheap/programs.h"
#include "clheap/version.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MAGIC "CLHEAPPB"
#define FILE_FORMAT 1u
#define FILE_HEADER_BYTES 32u
#define FILE_MAX_BYTES (1ull << 30) /* a larger file is no cache file of ours */
#define DIR_MAX 4096u

typedef struct entry {
    cl_context context;
    cl_device_id device;
    char *options;
    cl_program program;
    unsigned holders;
    struct entry *next;
} entry;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table;
static clheap_program_cache_stats counters;

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

static void bump(uint64_t *counter)
{
    pthread_mutex_lock(&table_lock);
    (*counter)++;
    pthread_mutex_unlock(&table_lock);
}

/* ---- the table ------------------------------------------------------------------- */

static entry *find(cl_context context, cl_device_id device, const char *options)
{
    for (entry *e = table; e; e = e->next)
        if (e->context == context && e->device == device && strcmp(e->options, options) == 0)
            return e;
    return NULL;
}

/* A live program for the three, with one more holder; NULL if none. */
static cl_program take_shared(cl_context context, cl_device_id device, const char *options)
{
    pthread_mutex_lock(&table_lock);
    entry *e = find(context, device, options);
    if (e) {
        e->holders++;
        counters.shared++;
    }
    pthread_mutex_unlock(&table_lock);
    return e ? e->program : NULL;
}

/* Inserts `program` (ours, one reference) for the three; returns the program to use,
 * the one already there if another get inserted first (ours then released). */
static cl_program insert(cl_context context, cl_device_id device, const char *options, cl_program program)
{
    entry *fresh = calloc(1, sizeof *fresh);
    char *copy = fresh ? strdup(options) : NULL;
    pthread_mutex_lock(&table_lock);
    entry *e = find(context, device, options);
    if (e) {
        e->holders++;
    } else if (copy) {
        *fresh = (entry){context, device, copy, program, 1u, table};
        table = fresh;
        fresh = NULL;
        copy = NULL;
    }
    pthread_mutex_unlock(&table_lock);
    free(fresh);
    free(copy);
    if (e) {
        clReleaseProgram(program);
        return e->program;
    }
    return program; /* untracked if the entry could not be had: put releases it anyway */
}

void clheap_programs_put(cl_program program)
{
    if (!program)
        return;
    pthread_mutex_lock(&table_lock);
    entry **link = &table;
    while (*link && (*link)->program != program)
        link = &(*link)->next;
    entry *held = *link, *gone = NULL;
    if (held && --held->holders == 0) {
        gone = held;
        *link = gone->next;
    }
    pthread_mutex_unlock(&table_lock);
    if (gone) {
        free(gone->options);
        free(gone);
    }
    if (gone || !held) /* the last holder, or a program insert could not list */
        clReleaseProgram(program);
}

/* ---- the cache folder and key ----------------------------------------------------- */

/* The folder into buf; 0 if the disk cache is off or the name does not fit. */
static int cache_dir(char *buf, size_t len)
{
    const char *env = getenv("CLHEAP_PROGRAM_CACHE");
    int n;
    if (env) {
        if (!*env || strcmp(env, "off") == 0 || strcmp(env, "0") == 0) /* "0": off, as such switches go */
            return 0;
        n = snprintf(buf, len, "%s", env);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            n = snprintf(buf, len, "%s/clheap", xdg);
        else if (home && *home)
            n = snprintf(buf, len, "%s/.cache/clheap", home);
        else
            return 0;
    }
    return n > 0 && (size_t)n < len;
}

clheap_status clheap_program_cache_dir(char *buf, size_t len)
{
    if (!buf || !len)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    char dir[DIR_MAX];
    if (!cache_dir(dir, sizeof dir))
        dir[0] = '\0';
    if (strlen(dir) >= len)
        return CLHEAP_ERROR_BUFFER_TOO_SMALL;
    strcpy(buf, dir);
    return CLHEAP_SUCCESS;
}

clheap_status clheap_program_cache_get_stats(clheap_program_cache_stats *stats)
{
    if (!stats)
        return CLHEAP_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&table_lock);
    *stats = counters;
    pthread_mutex_unlock(&table_lock);
    return CLHEAP_SUCCESS;
}

/* Makes every folder of path (mkdir -p); 1 if it is a folder now. */
static int make_dirs(const char *path)
{
    char part[DIR_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof part)
        return 0;
    memcpy(part, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (part[i] != '/' && part[i] != '\0')
            continue;
        char c = part[i];
        part[i] = '\0';
        if (mkdir(part, 0777) != 0 && errno != EEXIST)
            return 0;
        part[i] = c;
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int append_info(char *key, size_t len, size_t *used, const char *label, cl_int err, const char *value)
{
    int n = snprintf(key + *used, len - *used, "%s %s\n", label, err == CL_SUCCESS ? value : "?");
    if (n < 0 || (size_t)n >= len - *used)
        return 0;
    *used += (size_t)n;
    return 1;
}

/* What the binary depends on, as text: device, platform, driver, source, options. */
static char *make_key(cl_device_id device, const char **sources, cl_uint count, const char *options)
{
    size_t len = 4096 + strlen(options);
    char *key = malloc(len), value[1024];
    if (!key)
        return NULL;
    size_t used = 0;
    cl_platform_id platform = NULL;
    cl_int perr = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    static const cl_device_info device_infos[] = {CL_DEVICE_NAME, CL_DEVICE_VERSION, CL_DRIVER_VERSION};
    static const char *device_labels[] = {"device", "device-version", "driver"};
    static const cl_platform_info platform_infos[] = {CL_PLATFORM_NAME, CL_PLATFORM_VERSION};
    static const char *platform_labels[] = {"platform", "platform-version"};
    int ok = append_info(key, len, &used, "clheap", CL_SUCCESS, CLHEAP_VERSION_STRING);
    for (size_t i = 0; ok && i < 3; i++)
        ok = append_info(key, len, &used, device_labels[i],
                         clGetDeviceInfo(device, device_infos[i], sizeof value, value, NULL), value);
    for (size_t i = 0; ok && i < 2; i++)
        ok = append_info(key, len, &used, platform_labels[i],
                         perr != CL_SUCCESS ? perr
                                            : clGetPlatformInfo(platform, platform_infos[i], sizeof value, value, NULL),
                         value);
    uint64_t h = FNV_START;
    for (cl_uint i = 0; i < count; i++)
        h = fnv1a(h, sources[i], strlen(sources[i]) + 1);
    snprintf(value, sizeof value, "%016llx", (unsigned long long)h);
    ok = ok && append_info(key, len, &used, "source", CL_SUCCESS, value);
    ok = ok && append_info(key, len, &used, "options", CL_SUCCESS, options);
    if (!ok) {
        free(key);
        return NULL;
    }
    return key;
}

/* <dir>/<hash of key>.clbin into path. */
static int file_name(char *path, size_t len, const char *dir, const char *key)
{
    int n = snprintf(path, len, "%s/%016llx.clbin", dir, (unsigned long long)fnv1a(FNV_START, key, strlen(key)));
    return n > 0 && (size_t)n < len;
}

/* ---- reading and writing cache files --------------------------------------------- */

static uint64_t checksum(const char *key, uint32_t key_len, const unsigned char *binary, uint64_t binary_len)
{
    return fnv1a(fnv1a(FNV_START, key, key_len), binary, (size_t)binary_len);
}

/* The whole file, or NULL (absent, unreadable or too large). */
static unsigned char *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *data = NULL;
    long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (end > 0 && (unsigned long long)end <= FILE_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0) {
        data = malloc((size_t)end);
        if (data && fread(data, 1, (size_t)end, f) != (size_t)end) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    *size = (size_t)end;
    return data;
}

/* The binary inside a file's bytes if the file meets the invariants above, else NULL. */
static const unsigned char *binary_in(const unsigned char *data, size_t size, const char *key, size_t *binary_len)
{
    uint32_t format, key_len;
    uint64_t len, sum;
    if (size < FILE_HEADER_BYTES || memcmp(data, FILE_MAGIC, 8) != 0)
        return NULL;
    memcpy(&format, data + 8, 4);
    memcpy(&key_len, data + 12, 4);
    memcpy(&len, data + 16, 8);
    memcpy(&sum, data + 24, 8);
    if (format != FILE_FORMAT || key_len != strlen(key) || len == 0 ||
        len != size - FILE_HEADER_BYTES - (uint64_t)key_len || size - FILE_HEADER_BYTES < key_len)
        return NULL;
    const char *stored_key = (const char *)data + FILE_HEADER_BYTES;
    const unsigned char *binary = data + FILE_HEADER_BYTES + key_len;
    if (memcmp(stored_key, key, key_len) != 0 || checksum(stored_key, key_len, binary, len) != sum)
        return NULL;
    *binary_len = (size_t)len;
    return binary;
}

/* A program from the cache file at path, built (linked) for device; NULL if there is no
 * file, and NULL with *rejected set if there is one that cannot be used. */
static cl_program load(cl_context context, cl_device_id device, const char *options, const char *path,
                       const char *key, int *rejected)
{
    size_t size = 0, len = 0;
    unsigned char *data = read_whole(path, &size);
    if (!data)
        return NULL;
    const unsigned char *binary = binary_in(data, size, key, &len);
    cl_program program = NULL;
    if (binary) {
        cl_int err, status = CL_SUCCESS;
        program = clCreateProgramWithBinary(context, 1, &device, &len, &binary, &status, &err);
        if (err != CL_SUCCESS || status != CL_SUCCESS)
            program = NULL;
        else if (clBuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS) {
            clReleaseProgram(program);
            program = NULL;
        }
    }
    free(data);
    *rejected = program == NULL;
    return program;
}

/* The built program's binary for device (malloc'd), or NULL. */
static unsigned char *binary_of(cl_program program, cl_device_id device, size_t *len)
{
    cl_uint n = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS || n == 0)
        return NULL;
    cl_device_id *devices = calloc(n, sizeof *devices);
    size_t *sizes = calloc(n, sizeof *sizes);
    unsigned char **binaries = calloc(n, sizeof *binaries);
    unsigned char *mine = NULL;
    if (devices && sizes && binaries &&
        clGetProgramInfo(program, CL_PROGRAM_DEVICES, n * sizeof *devices, devices, NULL) == CL_SUCCESS &&
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL) == CL_SUCCESS) {
        for (cl_uint i = 0; i < n; i++)
            if (devices[i] == device && sizes[i] > 0 && (mine = malloc(sizes[i])) != NULL) {
                binaries[i] = mine;
                *len = sizes[i];
                break;
            }
        if (mine && clGetProgramInfo(program, CL_PROGRAM_BINARIES, n * sizeof *binaries, binaries, NULL) != CL_SUCCESS) {
            free(mine);
            mine = NULL;
        }
    }
    free(devices);
    free(sizes);
    free(binaries);
    return mine;
}

static int write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            return 0;
        p += n;
        len -= (size_t)n;
    }
    return 1;
}

/* Writes the program's binary to path: whole under a temporary name, then renamed. */
static int store(cl_program program, cl_device_id device, const char *dir, const char *path, const char *key)
{
    size_t len = 0;
    unsigned char *binary = binary_of(program, device, &len);
    if (!binary || !make_dirs(dir)) {
        free(binary);
        return 0;
    }
    char tmp[DIR_MAX + 64];
    static unsigned sequence;
    snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), __atomic_fetch_add(&sequence, 1u, __ATOMIC_RELAXED));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    unsigned char header[FILE_HEADER_BYTES];
    uint32_t format = FILE_FORMAT, key_len = (uint32_t)strlen(key);
    uint64_t len64 = len, sum = checksum(key, key_len, binary, len);
    memcpy(header, FILE_MAGIC, 8);
    memcpy(header + 8, &format, 4);
    memcpy(header + 12, &key_len, 4);
    memcpy(header + 16, &len64, 8);
    memcpy(header + 24, &sum, 8);
    int ok = fd >= 0 && write_all(fd, header, sizeof header) && write_all(fd, key, key_len) &&
             write_all(fd, binary, len);
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok && fd >= 0)
        unlink(tmp);
    free(binary);
    return ok;
}

/* ---- get -------------------------------------------------------------------------- */

/* A #line directive of the joined sources: joined line `at` on is line `number` of `name`. */
typedef struct {
    unsigned long at, number;
    char name[64];
} line_mark;

/* The #line directives (`#line N "name"` at a line's start) of sources[0 .. count), as a
 * compiler that honours them reads them, into *marks (malloc'd, NULL if none); returns
 * their count, and the joined text's lines in *lines. A directive without a name keeps
 * the name before it. */
static size_t read_line_marks(const char **sources, size_t count, line_mark **marks, unsigned long *lines)
{
    size_t n = 0, cap = 0;
    unsigned long line = 1;
    int at_start = 1;
    *marks = NULL;
    for (size_t i = 0; i < count; i++)
        for (const char *c = sources[i]; *c; c++) {
            char *end;
            unsigned long number;
            if (at_start && strncmp(c, "#line ", 6) == 0 && (number = strtoul(c + 6, &end, 10)) && end != c + 6) {
                line_mark *grown = n < cap ? *marks : realloc(*marks, (cap = 2 * cap + 4) * sizeof *grown);
                if (!grown) { /* no memory: no names, rather than wrong ones */
                    free(*marks);
                    *marks = NULL;
                    *lines = 0;
                    return 0;
                }
                *marks = grown;
                grown[n] = (line_mark){line + 1, number, ""};
                const char *quote = strchr(end, '"'), *eol = strchr(end, '\n');
                if (quote && (!eol || quote < eol) && sscanf(quote, "\"%63[^\"]\"", grown[n].name) != 1)
                    grown[n].name[0] = '\0';
                if (!grown[n].name[0] && n)
                    memcpy(grown[n].name, grown[n - 1].name, sizeof grown[n].name);
                n++;
            }
            at_start = *c == '\n';
            line += at_start;
        }
    *lines = line;
    return n;
}

void clheap_programs_name_lines(char *log, size_t log_len, const char **sources, size_t count)
{
    static const char mark[] = "<kernel>:";
    const size_t mark_len = sizeof mark - 1;
    if (!log || !log_len || !strstr(log, mark))
        return;
    line_mark *marks;
    unsigned long lines;
    size_t marked = read_line_marks(sources, count, &marks, &lines);
    size_t out_len = 2 * strlen(log) + 128, at = 0;
    char *out = malloc(out_len);
    for (const char *p = log; out && *p && at + 128 < out_len;) {
        char *end = NULL;
        unsigned long n = 0;
        const line_mark *m = NULL;
        if (strncmp(p, mark, mark_len) == 0) {
            n = strtoul(p + mark_len, &end, 10);
            if (end != p + mark_len && *end == ':' && n <= lines)
                for (size_t k = 0; k < marked; k++)
                    if (marks[k].at <= n && marks[k].name[0])
                        m = &marks[k];
        }
        if (m) {
            at += (size_t)snprintf(out + at, out_len - at, "%s:%lu", m->name, m->number + (n - m->at));
            p = end;
        } else {
            out[at++] = *p++;
        }
    }
    if (out) {
        out[at] = '\0';
        snprintf(log, log_len, "%s", out);
    }
    free(out);
    free(marks);
}

/* The program's build log into log (log_len bytes with its NUL), with the lines of a
 * compiler that ignored the sources' #line renamed (clheap_programs_name_lines) before it
 * is cut: its beginning when it is longer (OpenCL answers a short buffer with an error
 * and no text at all). */
void clheap_programs_copy_log(cl_program program, cl_device_id device, char *log, size_t log_len, const char **sources,
                              cl_uint count)
{
    if (!log || !log_len)
        return;
    log[0] = '\0';
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS || !size)
        return;
    size_t whole_len = 2 * size + 128; /* room for the renamed lines */
    char *whole = malloc(whole_len);
    if (whole && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, whole, NULL) == CL_SUCCESS) {
        whole[size - 1] = '\0';
        clheap_programs_name_lines(whole, whole_len, sources, count);
        snprintf(log, log_len, "%s", whole);
    }
    free(whole);
}

clheap_status clheap_programs_build(cl_context context, cl_device_id device, const char **sources, cl_uint count,
                                    const char *options, cl_program *out, char *log, size_t log_len)
{
    if (log && log_len)
        log[0] = '\0';
    cl_int err;
    cl_program program = clCreateProgramWithSource(context, count, sources, NULL, &err);
    if (err != CL_SUCCESS)
        return err;
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_COMPILE_PROGRAM_FAILURE) {
        clheap_programs_copy_log(program, device, log, log_len, sources, count);
        err = CLHEAP_ERROR_BUILD_FAILED;
    }
    if (err != CL_SUCCESS) {
        clReleaseProgram(program);
        return err;
    }
    *out = program;
    return CLHEAP_SUCCESS;
}

clheap_status clheap_programs_get(cl_context context, cl_device_id device, const char **sources, cl_uint count,
                                  const char *options, cl_program *out)
{
    *out = take_shared(context, device, options);
    if (*out)
        return CLHEAP_SUCCESS;
    char dir[DIR_MAX], path[DIR_MAX + 32];
    char *key = cache_dir(dir, sizeof dir) ? make_key(device, sources, count, options) : NULL;
    int cached = key && file_name(path, sizeof path, dir, key), rejected = 0;
    cl_program program = cached ? load(context, device, options, path, key, &rejected) : NULL;
    if (rejected)
        bump(&counters.rejected);
    if (program) {
        bump(&counters.loaded);
    } else {
        clheap_status status = clheap_programs_build(context, device, sources, count, options, &program, NULL, 0);
        if (status != CLHEAP_SUCCESS) {
            free(key);
            return status;
        }
        bump(&counters.built);
        if (cached && store(program, device, dir, path, key))
            bump(&counters.written);
    }
    free(key);
    *out = insert(context, device, options, program);
    return CLHEAP_SUCCESS;
}
