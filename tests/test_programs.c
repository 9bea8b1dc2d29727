/* The library's own program, built once (include/clheap/programs.h): shared between
 * live heaps, loaded from the cache folder by a later heap, rebuilt when the options
 * change, never loaded from a corrupt, truncated or stale file, and no failure when the
 * folder cannot be written. Each case reads the counters' change and the folder's files,
 * and checks that every heap it made works (a batch of host-enqueued mallocs, then the
 * heap check). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "heap_layout.h"
#include "programs.h"
#include "../cl/clheap_config.h" /* CLHEAP_NV_MAX_REGISTERS */

static cl_fixture fx;
static char root[256];

static clheap_program_cache_stats now(void)
{
    clheap_program_cache_stats s;
    assert_int_equal(clheap_program_cache_get_stats(&s), CLHEAP_SUCCESS);
    return s;
}

/* A fresh cache folder for one case, named by the case, set as CLHEAP_PROGRAM_CACHE. */
static void use_folder(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "%s/%s", root, name);
    setenv("CLHEAP_PROGRAM_CACHE", dir, 1);
}

/* Cache files in dir, and the path of the one there when there is exactly one. */
static int files_in(const char *dir, char *one, size_t len)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".clbin") == 0) {
            n++;
            if (one)
                snprintf(one, len, "%s/%s", dir, e->d_name);
        } else if (e->d_name[0] != '.') {
            fail_msg("unexpected file %s in the cache folder", e->d_name); /* a temporary left behind */
        }
    }
    closedir(d);
    return n;
}

static clheap_heap *make(clheap_allocator allocator)
{
    return fixture_heap(&fx, allocator, 4u << 20);
}

/* The heap's program works: 64 host-enqueued mallocs succeed, and the heap checks sound. */
static void expect_working(clheap_heap *heap)
{
    cl_int err;
    cl_mem handles = clCreateBuffer(fx.context, CL_MEM_READ_WRITE, 64 * sizeof(cl_uint), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clheap_heap_enqueue_malloc(heap, fx.queue, 64, 16, NULL, handles, 0, 0, NULL, NULL),
                     CLHEAP_SUCCESS);
    cl_uint got[64];
    assert_int_equal(clEnqueueReadBuffer(fx.queue, handles, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < 64; i++)
        assert_int_not_equal(got[i], 0);
    clReleaseMemObject(handles);
    assert_heap_sound(heap, "program cache");
}

#define DELTA(field, a, b) ((b).field - (a).field)

/* First heap: built and written. While it lives a second is shared. After both are gone
 * a third loads the files. Each heap's set-up program is counted before the heap is used:
 * expect_working's enqueued mallocs then build (or load) the enqueue programs. */
static void hit_after_miss(void **state)
{
    (void)state;
    char dir[512];
    use_folder(dir, sizeof dir, "hit");
    clheap_program_cache_stats s0 = now();
    clheap_heap *a = make(CLHEAP_TIER_ALLOC);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(written, s0, s1), 1);
    assert_int_equal(DELTA(loaded, s0, s1), 0);
    assert_int_equal(files_in(dir, NULL, 0), 1);
    clheap_heap *b = make(CLHEAP_TIER_ALLOC);
    clheap_program_cache_stats s2 = now();
    assert_int_equal(DELTA(shared, s1, s2), 1);
    assert_int_equal(DELTA(built, s1, s2) + DELTA(loaded, s1, s2), 0);
    expect_working(a); /* builds the enqueue programs (malloc, free): two more files */
    expect_working(b);
    clheap_program_cache_stats s3 = now();
    assert_int_equal(DELTA(built, s2, s3), 2);
    assert_int_equal(DELTA(shared, s2, s3), 2);
    assert_int_equal(files_in(dir, NULL, 0), 3);
    assert_int_equal(clheap_heap_destroy(a), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_destroy(b), CLHEAP_SUCCESS);
    clheap_heap *c = make(CLHEAP_TIER_ALLOC);
    expect_working(c);
    clheap_program_cache_stats s4 = now();
    assert_int_equal(DELTA(loaded, s3, s4), 3);
    assert_int_equal(DELTA(built, s3, s4) + DELTA(shared, s3, s4) + DELTA(rejected, s3, s4), 0);
    assert_int_equal(clheap_heap_destroy(c), CLHEAP_SUCCESS);
}

/* Other options (another allocator's -D): not the first file, a build and a second file. */
static void miss_when_options_change(void **state)
{
    (void)state;
    char dir[512];
    use_folder(dir, sizeof dir, "options");
    clheap_heap *a = make(CLHEAP_BITMAP_ALLOC);
    assert_int_equal(clheap_heap_destroy(a), CLHEAP_SUCCESS);
    clheap_program_cache_stats s0 = now();
    clheap_heap *b = make(CLHEAP_CFMMALLOC);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(loaded, s0, s1) + DELTA(rejected, s0, s1), 0);
    assert_int_equal(files_in(dir, NULL, 0), 2);
    expect_working(b);
    assert_int_equal(clheap_heap_destroy(b), CLHEAP_SUCCESS);
}

/* Rewrites the file at path: `keep` bytes of it (truncation), with byte `flip` inverted
 * (corruption) if flip < keep. */
static void damage(const char *path, long keep, long flip)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *data = malloc((size_t)keep);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)keep, f), (size_t)keep);
    fclose(f);
    if (flip < keep)
        data[flip] ^= 0xFFu;
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, (size_t)keep, f), (size_t)keep);
    fclose(f);
    free(data);
}

static long size_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

/* A damaged file is rejected, the program built and the file written again whole: the
 * next heap loads it. */
static void damaged_file_is_rebuilt(long (*how)(long size, long *flip), const char *name)
{
    char dir[512], path[1024];
    use_folder(dir, sizeof dir, name);
    assert_int_equal(clheap_heap_destroy(make(CLHEAP_BITMAP_ALLOC)), CLHEAP_SUCCESS);
    assert_int_equal(files_in(dir, path, sizeof path), 1);
    long size = size_of(path), flip;
    long keep = how(size, &flip);
    damage(path, keep, flip);
    clheap_program_cache_stats s0 = now();
    clheap_heap *h = make(CLHEAP_BITMAP_ALLOC);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(rejected, s0, s1), 1);
    assert_int_equal(DELTA(loaded, s0, s1), 0);
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(written, s0, s1), 1);
    assert_int_equal(size_of(path), size);
    expect_working(h);
    assert_int_equal(clheap_heap_destroy(h), CLHEAP_SUCCESS);
    assert_int_equal(clheap_heap_destroy(make(CLHEAP_BITMAP_ALLOC)), CLHEAP_SUCCESS);
    assert_int_equal(DELTA(loaded, s1, now()), 1);
}

static long flip_in_binary(long size, long *flip)
{
    *flip = size - size / 3; /* inside the binary, past the header and key */
    return size;
}

static long cut_in_half(long size, long *flip)
{
    *flip = size;
    return size / 2;
}

static void corrupt_file_is_rebuilt(void **state)
{
    (void)state;
    damaged_file_is_rebuilt(flip_in_binary, "corrupt");
}

/* A file whose checksum holds but whose key is another's (another device, driver,
 * source or options: here another allocator's file under this one's name): rejected. */
static void stale_file_is_rebuilt(void **state)
{
    (void)state;
    char dir[512], bitmap[1024], other[1024], command[2200];
    use_folder(dir, sizeof dir, "stale");
    assert_int_equal(clheap_heap_destroy(make(CLHEAP_BITMAP_ALLOC)), CLHEAP_SUCCESS);
    assert_int_equal(files_in(dir, bitmap, sizeof bitmap), 1);
    assert_int_equal(clheap_heap_destroy(make(CLHEAP_CFMMALLOC)), CLHEAP_SUCCESS);
    assert_int_equal(files_in(dir, NULL, 0), 2);
    DIR *d = opendir(dir);
    assert_non_null(d);
    other[0] = '\0';
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.' && !strstr(bitmap, e->d_name))
            snprintf(other, sizeof other, "%s/%s", dir, e->d_name);
    closedir(d);
    snprintf(command, sizeof command, "cp '%s' '%s'", bitmap, other);
    assert_int_equal(system(command), 0);
    clheap_program_cache_stats s0 = now();
    clheap_heap *h = make(CLHEAP_CFMMALLOC);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(rejected, s0, s1), 1);
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(loaded, s0, s1), 0);
    expect_working(h);
    assert_int_equal(clheap_heap_destroy(h), CLHEAP_SUCCESS);
}

static void truncated_file_is_rebuilt(void **state)
{
    (void)state;
    damaged_file_is_rebuilt(cut_in_half, "truncated");
}

/* A heap made with the cache in dir, which cannot be written: built, nothing written. */
static void build_without_writing(const char *dir)
{
    setenv("CLHEAP_PROGRAM_CACHE", dir, 1);
    clheap_program_cache_stats s0 = now();
    clheap_heap *h = make(CLHEAP_BITMAP_ALLOC);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(written, s0, s1) + DELTA(loaded, s0, s1), 0);
    expect_working(h);
    assert_int_equal(clheap_heap_destroy(h), CLHEAP_SUCCESS);
}

/* A folder that cannot be made (its parent is a file) or written (mode 0555, unless this
 * process may write there anyway, as root may): the heap is made, nothing written. */
static void unwritable_folder_only_turns_it_off(void **state)
{
    (void)state;
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/plain-file", root);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/cache", file);
    build_without_writing(dir);
    snprintf(dir, sizeof dir, "%s/read-only", root);
    assert_int_equal(mkdir(dir, 0555), 0);
    if (access(dir, W_OK) != 0) /* root may write there anyway */
        build_without_writing(dir);
    assert_int_equal(files_in(dir, NULL, 0), 0);
}

/* CLHEAP_PROGRAM_CACHE=off: no folder, no file; the dir query says "", and says it for
 * "0" too (not a folder named 0 in the working directory). */
static void off_writes_nothing(void **state)
{
    (void)state;
    char dir[512], shown[16] = "x";
    use_folder(dir, sizeof dir, "never-made");
    setenv("CLHEAP_PROGRAM_CACHE", "off", 1);
    assert_int_equal(clheap_program_cache_dir(shown, sizeof shown), CLHEAP_SUCCESS);
    assert_string_equal(shown, "");
    clheap_program_cache_stats s0 = now();
    assert_int_equal(clheap_heap_destroy(make(CLHEAP_BITMAP_ALLOC)), CLHEAP_SUCCESS);
    clheap_program_cache_stats s1 = now();
    assert_int_equal(DELTA(built, s0, s1), 1);
    assert_int_equal(DELTA(written, s0, s1), 0);
    struct stat st;
    assert_int_not_equal(stat(dir, &st), 0);
    setenv("CLHEAP_PROGRAM_CACHE", "0", 1);
    strcpy(shown, "x");
    assert_int_equal(clheap_program_cache_dir(shown, sizeof shown), CLHEAP_SUCCESS);
    assert_string_equal(shown, "");
    setenv("CLHEAP_PROGRAM_CACHE", root, 1);
    assert_int_equal(clheap_program_cache_dir(shown, 4), CLHEAP_ERROR_BUFFER_TOO_SMALL);
}

/* A compiler that ignores #line (NVIDIA) numbers the joined text: the lines after each
 * directive are renamed as the directive numbers them, those before the first and past the
 * text are left, and the log stays inside its buffer. The pieces are laid out as
 * clheap_heap_build_program joins them: joined lines 1 - 2 the allocator, 3 empty, 4 the
 * directive, 5 - 6 source 1, 7 empty, 8 the directive, 9 - 11 source 2. */
static void logs_name_user_lines(void **state)
{
    (void)state;
    const char *pieces[] = {"a\nb\n", "\n#line 1 \"source 1\"\n", "x\ny\n", "\n#line 1 \"source 2\"\n", "p\nq\nr\n"};
    char log[256] = "<kernel>:10:5: error: use of 'this'\n<kernel>:2:1: note: here\n"
                    "<kernel>:5:2: warning\n<kernel>:99:1: after\n<kernel>:x\n";
    clheap_programs_name_lines(log, sizeof log, pieces, 5);
    assert_string_equal(log, "source 2:2:5: error: use of 'this'\n<kernel>:2:1: note: here\n"
                             "source 1:1:2: warning\n<kernel>:99:1: after\n<kernel>:x\n");
    char small[32] = "<kernel>:10:5: error";
    clheap_programs_name_lines(small, 12, pieces, 5);
    assert_string_equal(small, "source 2:2:");
    char honoured[64] = "source 2:2:5: error: use of 'this'";
    clheap_programs_name_lines(honoured, sizeof honoured, pieces, 5);
    assert_string_equal(honoured, "source 2:2:5: error: use of 'this'");
    /* A user's own directive is honoured too, and one without a name keeps the last. */
    const char *own[] = {"a\n", "\n#line 1 \"source 1\"\n", "x\n#line 40\ny\n"};
    char renamed[64] = "<kernel>:6:1: error";
    clheap_programs_name_lines(renamed, sizeof renamed, own, 3);
    assert_string_equal(renamed, "source 1:40:1: error");
}

/* NVIDIA's register cap (clheap_register_cap): TierAlloc's warp-coalesced programs get
 * CLHEAP_NV_MAX_REGISTERS unless their options name a cap (-cl-nv-maxrregcount: the
 * user's own, the heap adds none) or set the macro (the last -D of it wins; 0: none); no
 * other allocator, and no build without warp coalescing (other compilers refuse the
 * option), gets one. Runs without NVIDIA: the options are what is tested. */
static void register_cap_follows_the_options(void **state)
{
    (void)state;
    const clheap_allocator tier = CLHEAP_TIER_ALLOC;
    assert_int_equal(clheap_register_cap(tier, 1, NULL), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(tier, 2, "-cl-std=CL1.2"), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(tier, 0, NULL), 0);
    assert_int_equal(clheap_register_cap(CLHEAP_BLOCK_ALLOC, 1, NULL), 0);
    assert_int_equal(clheap_register_cap(tier, 1, "-cl-nv-maxrregcount=200"), 0);
    assert_int_equal(clheap_register_cap(tier, 1, "-DCLHEAP_NV_MAX_REGISTERS=0"), 0);
    assert_int_equal(clheap_register_cap(tier, 1, "-O2 -D  CLHEAP_NV_MAX_REGISTERS=96 -DX=1"), 96);
    assert_int_equal(clheap_register_cap(tier, 1, "-DCLHEAP_NV_MAX_REGISTERS=64 -DCLHEAP_NV_MAX_REGISTERS=0"), 0);
    assert_int_equal(clheap_register_cap(tier, 1, "-DCLHEAP_NV_MAX_REGISTERS=0 -cl-nv-maxrregcount=64"), 0);
    /* Not the macro: another name that contains it, a -U, a bare -D (defined as 1) */
    assert_int_equal(clheap_register_cap(tier, 1, "-DCLHEAP_NV_MAX_REGISTERS_X=5"), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(tier, 1, "-DXCLHEAP_NV_MAX_REGISTERS=5"), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(tier, 1, "-UCLHEAP_NV_MAX_REGISTERS=5"), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(tier, 1, "-DCLHEAP_NV_MAX_REGISTERS"), CLHEAP_NV_MAX_REGISTERS);
    assert_int_equal(clheap_register_cap(CLHEAP_BLOCK_ALLOC, 1, "-DCLHEAP_NV_MAX_REGISTERS=96"), 0);
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/clheap-programs-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(root))
        return -1;
    return cl_fixture_open(&fx);
}

static int teardown(void **state)
{
    (void)state;
    cl_fixture_close(&fx);
    char command[1024];
    snprintf(command, sizeof command, "chmod -R u+w '%s' && rm -rf '%s'", root, root);
    return system(command) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_after_miss),
        cmocka_unit_test(miss_when_options_change),
        cmocka_unit_test(corrupt_file_is_rebuilt),
        cmocka_unit_test(stale_file_is_rebuilt),
        cmocka_unit_test(truncated_file_is_rebuilt),
        cmocka_unit_test(unwritable_folder_only_turns_it_off),
        cmocka_unit_test(off_writes_nothing),
        cmocka_unit_test(logs_name_user_lines),
        cmocka_unit_test(register_cap_follows_the_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
