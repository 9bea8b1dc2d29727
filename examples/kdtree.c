/* clheap kdtree: the k-d tree build of paper 000 (section 6, "DS") on the device heap. A
 * node's primitives are an array of indices in the heap; splitting a node allocates its
 * two children's arrays (a primitive that straddles the plane goes into both) and frees
 * its own, so the build makes allocations from a few bytes (leaves) to megabytes (the
 * first levels), in an order nobody knows in advance. One work-group per node, as the
 * paper's builder uses one warp per node: its work-items count and place the
 * primitives, one work-item allocates and frees. Level by level, one launch a level.
 *
 * Split rule (deterministic, so that every allocator and the static version build the
 * same tree): the spatial median of the node's box on its longest axis (the lowest axis
 * on ties); a primitive goes left if its box starts below the plane or lies flat in it,
 * right if it ends above. A node stays a leaf with at most --leaf primitives, at depth
 * --max-depth (default 8 + 1.3 log2 N, Havran's rule), or when the surface area
 * heuristic says the split costs more than it saves.
 *
 * Beside it runs the version with static, precomputed allocation: per level one launch
 * counts each node's children, the host sums the counts into offsets of one buffer per
 * level, and a second launch places the indices there. Both are timed (clFinish after the
 * build; each build runs twice and the second is timed, the first compiling the kernels). Verified: the heap's tree equals the static one node by node (boxes, counts,
 * each leaf's primitives as a set); every primitive is in some leaf, every leaf's
 * primitives overlap its box, every leaf is small, deep or not worth splitting; after the host
 * frees the leaves' arrays the heap holds nothing and its check passes. A build whose
 * mallocs got NULL (a heap too small) is reported incomplete; the exit status is 0 when
 * every build verified, 3 when some were incomplete and none wrong, 1 otherwise.
 * Scenes (generated): uniform random triangles in the unit cube, or clustered ones on the
 * surfaces of a few spheres (a scanned model's shape, "bunny-like").
 * Usage: clheap-kdtree [--prims N (20000)] [--scene uniform|clustered] [--leaf L (8)]
 *                      [--max-depth D] [--heap-factor F (200: heap = F x the root's
 *                      array)] [--allocator NAME|all (TierAlloc)] [--csv FILE]
 *                      [--options "-DCLHEAP_..." (build options of its program)] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { GROUP = 64 };

/* Both sides' node: 64 bytes, the same layout in C and OpenCL C. */
typedef struct kd_node {
    float lo[4], hi[4];
    cl_uint items; /* heap unit (or the static version's offset) of its index array; 0 once freed */
    cl_uint count, left, right, depth, unused[3];
} kd_node;

static const char *kernel_source =
    "typedef struct { float lo[4], hi[4]; uint items, count, left, right, depth, unused[3]; } kd_node;\n"
    "enum { NODES, NEXT, NULLS, OVERFLOW, COUNTERS };\n"
    "uint longest_axis(__global const kd_node *n) {\n"
    "    float dx = n->hi[0] - n->lo[0], dy = n->hi[1] - n->lo[1], dz = n->hi[2] - n->lo[2];\n"
    "    return dx >= dy && dx >= dz ? 0u : dy >= dz ? 1u : 2u;\n"
    "}\n"
    "float plane_of(__global const kd_node *n, uint axis) { return (n->lo[axis] + n->hi[axis]) * 0.5f; }\n"
    "int goes_left(float lo, float hi, float plane) { return lo < plane || hi <= plane; }\n"
    "int goes_right(float hi, float plane) { return hi > plane; }\n"
    "int stays_leaf(__global const kd_node *n, uint leaf, uint max_depth) {\n"
    "    return n->count <= leaf || n->depth >= max_depth;\n"
    "}\n"
    "/* The surface area heuristic's verdict on splitting n into l and r primitives (a\n"
    " * traversal step costs one intersection test): without it, triangles larger than the\n"
    " * cells go into both children level after level and the tree doubles each time. */\n"
    "int worth_splitting(__global const kd_node *n, uint l, uint r) {\n"
    "    uint axis = longest_axis(n);\n"
    "    float d[3] = {n->hi[0] - n->lo[0], n->hi[1] - n->lo[1], n->hi[2] - n->lo[2]};\n"
    "    float whole = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];\n"
    "    d[axis] *= 0.5f;\n"
    "    float halved = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];\n"
    "    if (!(whole > 0.0f)) return l + r < n->count;\n"
    "    return 1.0f + halved / whole * (float)(l + r) < (float)n->count;\n"
    "}\n"
    "/* Counts a node's children in l and r (local), its work-items in step. */\n"
    "void count_sides(__global const kd_node *n, __global const uint *items, __global const float *lo,\n"
    "                 __global const float *hi, __local uint *l, __local uint *r) {\n"
    "    uint axis = longest_axis(n); float plane = plane_of(n, axis);\n"
    "    for (uint i = get_local_id(0); i < n->count; i += get_local_size(0)) {\n"
    "        uint p = items[i];\n"
    "        if (goes_left(lo[p * 3u + axis], hi[p * 3u + axis], plane)) atomic_inc(l);\n"
    "        if (goes_right(hi[p * 3u + axis], plane)) atomic_inc(r);\n"
    "    }\n"
    "}\n"
    "/* Places a node's indices into its children's arrays. */\n"
    "void place_sides(__global const kd_node *n, __global const uint *items, __global const float *lo,\n"
    "                 __global const float *hi, __global uint *left, __global uint *right,\n"
    "                 __local uint *l, __local uint *r) {\n"
    "    uint axis = longest_axis(n); float plane = plane_of(n, axis);\n"
    "    for (uint i = get_local_id(0); i < n->count; i += get_local_size(0)) {\n"
    "        uint p = items[i];\n"
    "        if (goes_left(lo[p * 3u + axis], hi[p * 3u + axis], plane)) left[atomic_inc(l)] = p;\n"
    "        if (goes_right(hi[p * 3u + axis], plane)) right[atomic_inc(r)] = p;\n"
    "    }\n"
    "}\n"
    "/* Children c, c + 1 of n: the halves of its box, with their arrays. */\n"
    "void make_children(__global kd_node *nodes, __global kd_node *n, uint c, uint l_items, uint l_count,\n"
    "                   uint r_items, uint r_count) {\n"
    "    uint axis = longest_axis(n); float plane = plane_of(n, axis);\n"
    "    for (uint k = 0; k < 2u; k++) {\n"
    "        __global kd_node *child = &nodes[c + k];\n"
    "        for (uint a = 0; a < 4u; a++) { child->lo[a] = n->lo[a]; child->hi[a] = n->hi[a]; }\n"
    "        if (k) child->lo[axis] = plane; else child->hi[axis] = plane;\n"
    "        child->items = k ? r_items : l_items; child->count = k ? r_count : l_count;\n"
    "        child->left = child->right = 0u; child->depth = n->depth + 1u;\n"
    "    }\n"
    "    n->left = c; n->right = c + 1u;\n"
    "}\n"
    "/* The root's array: every primitive, from the heap. One work-item allocates. */\n"
    "__kernel void make_root(__global clheap_heap *heap, __global kd_node *nodes, uint prims,\n"
    "                        __global uint *counters) {\n"
    "    __global uint *items = clheap_malloc(heap, (clheap_size)prims * 4u);\n"
    "    if (!items) { counters[NULLS]++; return; }\n"
    "    nodes[0].items = clheap_unit_of(heap, items);\n"
    "}\n"
    "__kernel void fill_root(__global clheap_heap *heap, __global const kd_node *nodes, uint prims) {\n"
    "    uint i = get_global_id(0);\n"
    "    __global uint *items = clheap_pointer(heap, nodes[0].items);\n"
    "    if (i < prims && items) items[i] = i; /* none if make_root got NULL */\n"
    "}\n"
    "/* One level of the heap version: one work-group per node of `level`. Every work-item\n"
    " * reaches every barrier (no return before one: PoCL's work-group loops need it). */\n"
    "__kernel void split_heap(__global clheap_heap *heap, __global kd_node *nodes, __global const uint *level,\n"
    "                         __global uint *next, __global const float *lo, __global const float *hi,\n"
    "                         uint leaf, uint max_depth, uint capacity, __global uint *counters) {\n"
    "    __local uint l, r, split, l_items, r_items;\n"
    "    __global kd_node *n = &nodes[level[get_group_id(0)]];\n"
    "    /* A node with primitives but no array: the root, if make_root got NULL (counted). */\n"
    "    int active = !stays_leaf(n, leaf, max_depth) && n->items;\n"
    "    __global const uint *items = active ? clheap_pointer(heap, n->items) : 0;\n"
    "    if (get_local_id(0) == 0) { l = 0u; r = 0u; split = 0u; }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (active) count_sides(n, items, lo, hi, &l, &r);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (get_local_id(0) == 0 && active && worth_splitting(n, l, r)) {\n"
    "        __global void *left = l ? clheap_malloc(heap, (clheap_size)l * 4u) : 0;\n"
    "        __global void *right = r ? clheap_malloc(heap, (clheap_size)r * 4u) : 0;\n"
    "        split = 1u;\n"
    "        if ((l && !left) || (r && !right)) { /* stays a leaf; counted */\n"
    "            atomic_inc(&counters[NULLS]);\n"
    "            clheap_free(heap, left); clheap_free(heap, right);\n"
    "            split = 0u;\n"
    "        }\n"
    "        l_items = clheap_unit_of(heap, left); r_items = clheap_unit_of(heap, right);\n"
    "        l = 0u; r = 0u;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    "    if (split)\n"
    "        place_sides(n, items, lo, hi, clheap_pointer(heap, l_items), clheap_pointer(heap, r_items), &l, &r);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    "    if (get_local_id(0) != 0 || !split) return; /* after the last barrier */\n"
    "    uint c = atomic_add(&counters[NODES], 2u);\n"
    "    if (c + 2u > capacity) { /* no room for the children: a leaf, counted */\n"
    "        atomic_inc(&counters[OVERFLOW]);\n"
    "        clheap_free_unit(heap, l_items); clheap_free_unit(heap, r_items);\n"
    "        return;\n"
    "    }\n"
    "    make_children(nodes, n, c, l_items, l, r_items, r);\n"
    "    clheap_free_unit(heap, n->items);\n"
    "    n->items = 0u;\n"
    "    uint at = atomic_add(&counters[NEXT], 2u);\n"
    "    next[at] = c; next[at + 1u] = c + 1u;\n"
    "}\n"
    "/* The leaves' arrays, copied out of the heap to `out` at the host's offsets (one group per leaf). */\n"
    "__kernel void gather_leaves(__global clheap_heap *heap, __global const kd_node *nodes, __global const uint *leaves,\n"
    "                            __global const uint *offsets, __global uint *out) {\n"
    "    __global const kd_node *n = &nodes[leaves[get_group_id(0)]];\n"
    "    __global const uint *items = clheap_pointer(heap, n->items);\n"
    "    for (uint i = get_local_id(0); i < n->count; i += get_local_size(0)) out[offsets[get_group_id(0)] + i] = items[i];\n"
    "}\n"
    "__kernel void free_leaves(__global clheap_heap *heap, __global const kd_node *nodes, uint count) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < count && !nodes[i].left) clheap_free_unit(heap, nodes[i].items);\n"
    "}\n"
    "/* The static version, first launch of a level: children's counts (0, 0: a leaf). */\n"
    "__kernel void count_static(__global const kd_node *nodes, __global const uint *level, __global const uint *store,\n"
    "                           __global const float *lo, __global const float *hi, uint leaf, uint max_depth,\n"
    "                           __global uint *sides) {\n"
    "    __local uint l, r;\n"
    "    uint g = get_group_id(0);\n"
    "    __global const kd_node *n = &nodes[level[g]];\n"
    "    int active = !stays_leaf(n, leaf, max_depth);\n"
    "    if (get_local_id(0) == 0) { l = 0u; r = 0u; }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (active) count_sides(n, store + n->items, lo, hi, &l, &r);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (get_local_id(0) == 0) {\n"
    "        int split = active && worth_splitting(n, l, r);\n"
    "        sides[2u * g] = split ? l : 0u; sides[2u * g + 1u] = split ? r : 0u;\n"
    "    }\n"
    "}\n"
    "/* Second launch: the indices into the next level's buffer at the host's offsets (first\n"
    " * child id, left offset, right offset per node; ~0u: stays a leaf). */\n"
    "__kernel void place_static(__global kd_node *nodes, __global const uint *level, __global const uint *store,\n"
    "                           __global uint *next_store, __global const float *lo, __global const float *hi,\n"
    "                           __global const uint *plan, __global const uint *sides) {\n"
    "    __local uint l, r;\n"
    "    uint g = get_group_id(0);\n"
    "    int active = plan[3u * g] != ~0u;\n"
    "    __global kd_node *n = &nodes[level[g]];\n"
    "    if (get_local_id(0) == 0) { l = 0u; r = 0u; }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (active)\n"
    "        place_sides(n, store + n->items, lo, hi, next_store + plan[3u * g + 1u], next_store + plan[3u * g + 2u], &l, &r);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (get_local_id(0) == 0 && active)\n"
    "        make_children(nodes, n, plan[3u * g], plan[3u * g + 1u], sides[2u * g], plan[3u * g + 2u], sides[2u * g + 1u]);\n"
    "}\n";

enum { NODES, NEXT, NULLS, OVERFLOW, COUNTERS };

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static float uniform01(uint64_t *s)
{
    return (float)(next_random(s) >> 40) / (float)(1u << 24);
}

/* Primitive i's box as lo[3 i ..], hi[3 i ..]: a triangle's three corners, each within
 * `edge` of its centre. Clustered: centres on the surfaces of 8 spheres. */
static void make_scene(uint32_t prims, int clustered, float *lo, float *hi)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    float edge = 2.0f / cbrtf((float)prims);
    float centres[8][4];
    for (int k = 0; k < 8; k++) {
        for (int a = 0; a < 3; a++)
            centres[k][a] = 0.2f + 0.6f * uniform01(&s);
        centres[k][3] = 0.05f + 0.15f * uniform01(&s);
    }
    for (uint32_t i = 0; i < prims; i++) {
        float c[3];
        if (clustered) {
            const float *sphere = centres[next_random(&s) % 8];
            float d[3], len = 0;
            for (int a = 0; a < 3; a++) {
                d[a] = uniform01(&s) - 0.5f;
                len += d[a] * d[a];
            }
            len = sqrtf(len) + 1e-6f;
            for (int a = 0; a < 3; a++)
                c[a] = sphere[a] + sphere[3] * d[a] / len;
        } else {
            for (int a = 0; a < 3; a++)
                c[a] = uniform01(&s);
        }
        for (int a = 0; a < 3; a++) {
            lo[3 * i + a] = hi[3 * i + a] = c[a];
            for (int v = 0; v < 3; v++) {
                float x = c[a] + edge * (uniform01(&s) - 0.5f);
                lo[3 * i + a] = x < lo[3 * i + a] ? x : lo[3 * i + a];
                hi[3 * i + a] = x > hi[3 * i + a] ? x : hi[3 * i + a];
            }
        }
    }
}

typedef struct scene {
    cl_context context;
    cl_command_queue queue;
    cl_device_id device;
    uint32_t prims, leaf, max_depth, capacity, heap_factor;
    float *lo, *hi;
    cl_mem lo_buf, hi_buf;
    float root_lo[3], root_hi[3];
} scene;

/* A built tree, read back: its nodes, the launches it took and what went wrong. */
typedef struct tree {
    kd_node *nodes;
    cl_mem buffer; /* the heap version's nodes, still on the device */
    uint32_t count, levels, nulls, overflow;
    double ms;
} tree;

static void run_groups(cl_command_queue queue, cl_kernel kernel, size_t groups)
{
    size_t local = GROUP, global = groups * GROUP;
    if (groups)
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
}

static void set_arg(cl_kernel k, cl_uint i, size_t size, const void *value)
{
    CHECK(clSetKernelArg(k, i, size, value));
}

static cl_mem nodes_buffer(const scene *sc)
{
    kd_node root;
    memset(&root, 0, sizeof root);
    for (int a = 0; a < 3; a++) {
        root.lo[a] = sc->root_lo[a];
        root.hi[a] = sc->root_hi[a];
    }
    root.count = sc->prims;
    cl_mem nodes = buffer_or_exit(sc->context, CL_MEM_READ_WRITE, (size_t)sc->capacity * sizeof(kd_node), NULL);
    CHECK(clEnqueueWriteBuffer(sc->queue, nodes, CL_TRUE, 0, sizeof root, &root, 0, NULL, NULL));
    return nodes;
}

static void read_nodes(const scene *sc, cl_mem nodes, tree *t)
{
    t->nodes = malloc((size_t)t->count * sizeof(kd_node));
    if (!t->nodes)
        exit(2);
    CHECK(clEnqueueReadBuffer(sc->queue, nodes, CL_TRUE, 0, (size_t)t->count * sizeof(kd_node), t->nodes, 0, NULL,
                              NULL));
}

/* The heap version. The leaves' arrays stay in the heap for the checks. */
static tree build_heap(const scene *sc, clheap_heap *heap, cl_program program)
{
    tree t = {0};
    cl_kernel make_root = kernel_or_exit(program, "make_root"), fill_root = kernel_or_exit(program, "fill_root");
    cl_kernel split = kernel_or_exit(program, "split_heap");
    cl_mem nodes = nodes_buffer(sc);
    size_t list_bytes = (size_t)sc->capacity * sizeof(cl_uint);
    cl_mem levels[2] = {buffer_or_exit(sc->context, CL_MEM_READ_WRITE, list_bytes, NULL),
                        buffer_or_exit(sc->context, CL_MEM_READ_WRITE, list_bytes, NULL)};
    cl_uint counters[COUNTERS] = {1, 0, 0, 0}, zero = 0;
    cl_mem counter_buf = buffer_or_exit(sc->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof counters,
                                        counters);
    CHECK(clEnqueueWriteBuffer(sc->queue, levels[0], CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL));
    CHECK(clFinish(sc->queue));
    double t0 = now();
    CHECK(clheap_heap_set_kernel_arg(heap, make_root, 0));
    set_arg(make_root, 1, sizeof nodes, &nodes);
    set_arg(make_root, 2, sizeof sc->prims, &sc->prims);
    set_arg(make_root, 3, sizeof counter_buf, &counter_buf);
    size_t one = 1, all = (sc->prims + 255u) / 256u * 256u, local = 256;
    CHECK(clEnqueueNDRangeKernel(sc->queue, make_root, 1, NULL, &one, &one, 0, NULL, NULL));
    CHECK(clheap_heap_set_kernel_arg(heap, fill_root, 0));
    set_arg(fill_root, 1, sizeof nodes, &nodes);
    set_arg(fill_root, 2, sizeof sc->prims, &sc->prims);
    CHECK(clEnqueueNDRangeKernel(sc->queue, fill_root, 1, NULL, &all, &local, 0, NULL, NULL));
    uint32_t width = 1;
    int cur = 0;
    CHECK(clheap_heap_set_kernel_arg(heap, split, 0));
    set_arg(split, 1, sizeof nodes, &nodes);
    set_arg(split, 4, sizeof sc->lo_buf, &sc->lo_buf);
    set_arg(split, 5, sizeof sc->hi_buf, &sc->hi_buf);
    set_arg(split, 6, sizeof sc->leaf, &sc->leaf);
    set_arg(split, 7, sizeof sc->max_depth, &sc->max_depth);
    set_arg(split, 8, sizeof sc->capacity, &sc->capacity);
    set_arg(split, 9, sizeof counter_buf, &counter_buf);
    while (width) {
        set_arg(split, 2, sizeof levels[cur], &levels[cur]);
        set_arg(split, 3, sizeof levels[1 - cur], &levels[1 - cur]);
        CHECK(clEnqueueWriteBuffer(sc->queue, counter_buf, CL_FALSE, NEXT * sizeof(cl_uint), sizeof zero, &zero, 0,
                                   NULL, NULL));
        run_groups(sc->queue, split, width);
        CHECK(clEnqueueReadBuffer(sc->queue, counter_buf, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL));
        width = counters[NEXT];
        cur = 1 - cur;
        t.levels++;
    }
    t.ms = 1e3 * (now() - t0);
    t.count = counters[NODES] < sc->capacity ? counters[NODES] : sc->capacity;
    t.nulls = counters[NULLS];
    t.overflow = counters[OVERFLOW];
    read_nodes(sc, nodes, &t);
    t.buffer = nodes;
    cl_mem buffers[] = {levels[0], levels[1], counter_buf};
    for (size_t i = 0; i < sizeof buffers / sizeof *buffers; i++)
        clReleaseMemObject(buffers[i]);
    cl_kernel kernels[] = {make_root, fill_root, split};
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        clReleaseKernel(kernels[i]);
    return t;
}

/* The static version: per level the children's counts, offsets summed on the host, one
 * buffer for the level's arrays. A node's `items` is an offset into its level's buffer
 * (depth = level); *stores gets the buffers' contents. */
static tree build_static(const scene *sc, cl_program program, uint32_t ***stores)
{
    tree t = {0};
    cl_kernel count = kernel_or_exit(program, "count_static"), place = kernel_or_exit(program, "place_static");
    cl_mem nodes = nodes_buffer(sc);
    size_t list_bytes = (size_t)sc->capacity * sizeof(cl_uint);
    uint32_t *level = malloc(list_bytes), *sides = malloc(2 * list_bytes), *plan = malloc(3 * list_bytes);
    uint32_t *root = malloc((size_t)sc->prims * sizeof(uint32_t));
    cl_mem store_bufs[64];
    size_t store_counts[64];
    if (!level || !sides || !plan || !root)
        exit(2);
    for (uint32_t i = 0; i < sc->prims; i++)
        root[i] = i;
    cl_mem level_buf = buffer_or_exit(sc->context, CL_MEM_READ_WRITE, list_bytes, NULL);
    cl_mem sides_buf = buffer_or_exit(sc->context, CL_MEM_READ_WRITE, 2 * list_bytes, NULL);
    cl_mem plan_buf = buffer_or_exit(sc->context, CL_MEM_READ_WRITE, 3 * list_bytes, NULL);
    CHECK(clFinish(sc->queue));
    double t0 = now();
    store_bufs[0] = buffer_or_exit(sc->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   (size_t)sc->prims * sizeof(cl_uint), root);
    store_counts[0] = sc->prims;
    uint32_t width = 1, nodes_made = 1, stored = 1;
    level[0] = 0;
    for (uint32_t depth = 0; width && depth < 63; depth++) {
        CHECK(clEnqueueWriteBuffer(sc->queue, level_buf, CL_FALSE, 0, width * sizeof(cl_uint), level, 0, NULL, NULL));
        cl_mem args[] = {nodes, level_buf, store_bufs[depth], sc->lo_buf, sc->hi_buf};
        for (cl_uint a = 0; a < 5; a++)
            set_arg(count, a, sizeof(cl_mem), &args[a]);
        set_arg(count, 5, sizeof sc->leaf, &sc->leaf);
        set_arg(count, 6, sizeof sc->max_depth, &sc->max_depth);
        set_arg(count, 7, sizeof sides_buf, &sides_buf);
        run_groups(sc->queue, count, width);
        CHECK(clEnqueueReadBuffer(sc->queue, sides_buf, CL_TRUE, 0, 2 * width * sizeof(cl_uint), sides, 0, NULL,
                                  NULL));
        size_t total = 0;
        uint32_t next_width = 0;
        for (uint32_t g = 0; g < width; g++) {
            if (!sides[2 * g] && !sides[2 * g + 1]) {
                plan[3 * g] = ~0u;
                continue;
            }
            if (nodes_made + 2 > sc->capacity) {
                t.overflow++;
                plan[3 * g] = ~0u;
                continue;
            }
            plan[3 * g] = nodes_made;
            plan[3 * g + 1] = (uint32_t)total;
            plan[3 * g + 2] = (uint32_t)(total + sides[2 * g]);
            total += sides[2 * g] + sides[2 * g + 1];
            level[next_width++] = nodes_made;
            level[next_width++] = nodes_made + 1;
            nodes_made += 2;
        }
        if (!next_width)
            break;
        /* The level's buffer, sized by the counts: the precomputed allocation. */
        store_bufs[depth + 1] = buffer_or_exit(sc->context, CL_MEM_READ_WRITE, (total ? total : 1) * sizeof(cl_uint),
                                               NULL);
        store_counts[depth + 1] = total;
        stored = depth + 2;
        CHECK(clEnqueueWriteBuffer(sc->queue, plan_buf, CL_FALSE, 0, 3 * width * sizeof(cl_uint), plan, 0, NULL,
                                   NULL));
        /* The level list that `place` reads is still this level's: it goes on the queue after. */
        cl_mem pargs[] = {nodes, level_buf, store_bufs[depth], store_bufs[depth + 1], sc->lo_buf, sc->hi_buf,
                          plan_buf, sides_buf};
        for (cl_uint a = 0; a < 8; a++)
            set_arg(place, a, sizeof(cl_mem), &pargs[a]);
        run_groups(sc->queue, place, width);
        CHECK(clFinish(sc->queue)); /* level_buf is rewritten next */
        width = next_width;
    }
    t.levels = stored;
    CHECK(clFinish(sc->queue));
    t.ms = 1e3 * (now() - t0);
    t.count = nodes_made;
    read_nodes(sc, nodes, &t);
    *stores = calloc(65, sizeof **stores);
    for (uint32_t d = 0; d < t.levels; d++) {
        (*stores)[d] = malloc((store_counts[d] ? store_counts[d] : 1) * sizeof(uint32_t));
        CHECK(clEnqueueReadBuffer(sc->queue, store_bufs[d], CL_TRUE, 0, store_counts[d] * sizeof(uint32_t),
                                  (*stores)[d], 0, NULL, NULL));
        clReleaseMemObject(store_bufs[d]);
    }
    free(level), free(sides), free(plan), free(root);
    cl_mem buffers[] = {nodes, level_buf, sides_buf, plan_buf};
    for (size_t i = 0; i < sizeof buffers / sizeof *buffers; i++)
        clReleaseMemObject(buffers[i]);
    clReleaseKernel(count);
    clReleaseKernel(place);
    return t;
}

/* The host's copy of the split rule (the same float operations as the kernels'). */
static uint32_t longest_axis(const kd_node *n)
{
    float dx = n->hi[0] - n->lo[0], dy = n->hi[1] - n->lo[1], dz = n->hi[2] - n->lo[2];
    return dx >= dy && dx >= dz ? 0u : dy >= dz ? 1u : 2u;
}

/* Whether the split rule leaves n a leaf by the surface area heuristic, recomputed in
 * double: a verdict within 0.01% of the threshold passes either way (the device may
 * round the same float expression differently). */
static int not_worth_splitting(const scene *sc, const kd_node *n, const uint32_t *items)
{
    uint32_t axis = longest_axis(n), l = 0, r = 0;
    float plane = (n->lo[axis] + n->hi[axis]) * 0.5f;
    for (uint32_t i = 0; i < n->count; i++) {
        float lo = sc->lo[3 * items[i] + axis], hi = sc->hi[3 * items[i] + axis];
        l += lo < plane || hi <= plane;
        r += hi > plane;
    }
    double d[3] = {(double)n->hi[0] - n->lo[0], (double)n->hi[1] - n->lo[1], (double)n->hi[2] - n->lo[2]};
    double whole = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
    d[axis] *= 0.5;
    double half = d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
    if (!(whole > 0.0))
        return l + r >= n->count;
    return 1.0 + half / whole * (double)(l + r) >= (double)n->count * (1.0 - 1e-4);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

typedef struct checked {
    uint32_t leaves, depth, wrong;
    uint64_t refs;
} checked;

/* The heap tree's leaves' arrays, copied out in the order of `leaf_ids`; leaf i's starts
 * at offsets[i] (filled here: the device kernel reads the same offsets). */
static uint32_t *gather(const scene *sc, clheap_heap *heap, cl_program program, const tree *t, uint32_t *leaf_ids,
                        uint32_t leaves, uint32_t *offsets)
{
    size_t total = 0;
    for (uint32_t i = 0; i < leaves; i++) {
        offsets[i] = (uint32_t)total;
        total += t->nodes[leaf_ids[i]].count;
    }
    uint32_t *out = malloc((total ? total : 1) * sizeof *out);
    if (!out)
        exit(2);
    cl_kernel k = kernel_or_exit(program, "gather_leaves");
    cl_mem ids = buffer_or_exit(sc->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                (leaves ? leaves : 1) * sizeof(cl_uint), leaf_ids);
    cl_mem offs = buffer_or_exit(sc->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 (leaves ? leaves : 1) * sizeof(cl_uint), offsets);
    cl_mem out_buf = buffer_or_exit(sc->context, CL_MEM_WRITE_ONLY, (total ? total : 1) * sizeof(cl_uint), NULL);
    CHECK(clheap_heap_set_kernel_arg(heap, k, 0));
    set_arg(k, 1, sizeof t->buffer, &t->buffer);
    set_arg(k, 2, sizeof ids, &ids);
    set_arg(k, 3, sizeof offs, &offs);
    set_arg(k, 4, sizeof out_buf, &out_buf);
    run_groups(sc->queue, k, leaves);
    CHECK(clEnqueueReadBuffer(sc->queue, out_buf, CL_TRUE, 0, total * sizeof(cl_uint), out, 0, NULL, NULL));
    clReleaseMemObject(ids), clReleaseMemObject(offs), clReleaseMemObject(out_buf);
    clReleaseKernel(k);
    return out;
}

/* Walks the heap tree and the static one together from their roots: the same boxes,
 * counts and shape, each leaf the same primitives; every heap leaf's primitives overlap
 * its box and the leaf is small, deep or not worth splitting; every primitive is reached.
 * Sorts the static leaves' arrays in `stores` in place. */
static checked check_trees(const scene *sc, clheap_heap *heap, cl_program program, const tree *h, const tree *st,
                           uint32_t **stores)
{
    checked c = {0};
    uint32_t *leaf_ids = malloc((size_t)h->count * sizeof *leaf_ids), *leaf_of = malloc((size_t)h->count * sizeof *leaf_of);
    uint32_t *offsets = malloc((size_t)h->count * sizeof *offsets);
    uint8_t *reached = calloc(sc->prims, 1);
    uint32_t *stack = malloc(2 * (size_t)(h->count + st->count + 2) * sizeof *stack);
    if (!leaf_ids || !leaf_of || !offsets || !reached || !stack)
        exit(2);
    for (uint32_t i = 0; i < h->count; i++)
        if (!h->nodes[i].left) {
            leaf_of[i] = c.leaves;
            leaf_ids[c.leaves++] = i;
        }
    uint32_t *items = gather(sc, heap, program, h, leaf_ids, c.leaves, offsets);
    uint32_t top = 0;
    stack[top++] = 0;
    stack[top++] = 0;
    while (top && c.wrong < 10) {
        uint32_t si = stack[--top], hi = stack[--top];
        const kd_node *a = &h->nodes[hi], *b = &st->nodes[si];
        int same = a->count == b->count && !a->left == !b->left && a->depth == b->depth;
        for (int k = 0; k < 3; k++)
            same = same && a->lo[k] == b->lo[k] && a->hi[k] == b->hi[k];
        if (!same) {
            printf("  node %u (static %u): count %u / %u, depth %u / %u, %s / %s\n", hi, si, a->count, b->count, a->depth,
                   b->depth, a->left ? "split" : "leaf", b->left ? "split" : "leaf");
            c.wrong++;
            continue;
        }
        c.depth = a->depth > c.depth ? a->depth : c.depth;
        if (a->left) {
            if (a->items) { /* an interior node's array was freed */
                c.wrong++;
                continue;
            }
            stack[top++] = a->left, stack[top++] = b->left;
            stack[top++] = a->right, stack[top++] = b->right;
            continue;
        }
        /* Both are host copies (gathered here, read back by build_static): sorted in place. */
        uint32_t *sorted = items + offsets[leaf_of[hi]], *theirs = stores[b->depth] + b->items;
        qsort(sorted, a->count, sizeof *sorted, compare_u32);
        qsort(theirs, b->count, sizeof *theirs, compare_u32);
        int ok = memcmp(sorted, theirs, (size_t)a->count * sizeof *sorted) == 0;
        for (uint32_t i = 0; i < a->count && ok; i++) {
            uint32_t p = sorted[i];
            ok = p < sc->prims && (i == 0 || sorted[i - 1] != p);
            for (int k = 0; k < 3 && ok; k++)
                ok = sc->lo[3 * p + k] <= a->hi[k] && sc->hi[3 * p + k] >= a->lo[k];
            if (ok)
                reached[p] = 1;
        }
        ok = ok && (a->count <= sc->leaf || a->depth >= sc->max_depth || not_worth_splitting(sc, a, sorted));
        if (!ok) {
            printf("  leaf %u: %u primitives, depth %u: not the static leaf's, outside its box, or worth splitting\n", hi,
                   a->count, a->depth);
            c.wrong++;
        }
        c.refs += a->count;
    }
    for (uint32_t p = 0; p < sc->prims && c.wrong < 10; p++)
        if (!reached[p]) {
            printf("  primitive %u is in no leaf\n", p);
            c.wrong++;
        }
    free(leaf_ids), free(leaf_of), free(offsets), free(reached), free(stack), free(items);
    return c;
}

typedef struct outcome {
    int ok; /* nothing wrong (a build cut short by NULLs may still be ok) */
    double heap_ms, static_ms;
    uint32_t nodes, leaves, depth, nulls, levels;
    uint64_t refs, allocs, heap_bytes, pool_bytes;
    double mean_bytes, sd_bytes;
} outcome;

static const char *result_of(const outcome *r)
{
    return !r->ok ? "wrong" : r->nulls ? "incomplete" : "verified";
}

/* The most bytes the heap build can hold at once (each array rounded up to 16 B): while
 * level d splits, the leaves above it, level d's arrays and level d + 1's. Measured on
 * the static tree, which a complete heap build equals; tells whether a NULL came with
 * the pool truly full. */
static uint64_t peak_live_bytes(const tree *st)
{
    uint64_t level[66] = {0}, leaves[66] = {0}, peak = 0, above = 0;
    for (uint32_t i = 0; i < st->count; i++) {
        const kd_node *n = &st->nodes[i];
        uint64_t bytes = n->count ? ((uint64_t)n->count * 4u + 15u) / 16u * 16u : 0;
        uint32_t d = n->depth < 64 ? n->depth : 64;
        level[d] += bytes;
        leaves[d] += n->left ? 0 : bytes;
    }
    for (uint32_t d = 0; d < 65; d++) {
        uint64_t during = above + level[d] + level[d + 1];
        peak = during > peak ? during : peak;
        above += leaves[d];
    }
    return peak;
}

static outcome build(const scene *sc, clheap_allocator allocator, const tree *st, uint32_t **stores)
{
    outcome r = {0};
    clheap_heap_config config = clheap_heap_config_default();
    config.allocator = allocator;
    config.size_bytes = (uint64_t)sc->heap_factor * sc->prims * 4u;
    clheap_heap *heap = NULL;
    CHECK(clheap_heap_create(sc->context, sc->device, sc->queue, &config, &heap));
    r.heap_bytes = clheap_heap_size(heap);
    cl_program program = build_or_exit(heap, kernel_source);
    /* A first build warms up (the driver compiles kernels at their first launch); the
     * heap is reset and the second build is the one timed and checked. */
    tree warm = build_heap(sc, heap, program);
    clReleaseMemObject(warm.buffer);
    free(warm.nodes);
    CHECK(clheap_heap_reset(heap));
    tree h = build_heap(sc, heap, program);
    r.heap_ms = h.ms;
    r.static_ms = st->ms;
    r.nulls = h.nulls;
    r.levels = h.levels;
    r.nodes = h.count;
    /* Every node with primitives had an array from the heap (the root's too). */
    double sum = 0, sum2 = 0;
    for (uint32_t i = 0; i < h.count; i++)
        if (h.nodes[i].count) {
            double b = 4.0 * h.nodes[i].count;
            r.allocs++;
            sum += b;
            sum2 += b * b;
        }
    r.mean_bytes = r.allocs ? sum / (double)r.allocs : 0;
    r.sd_bytes = r.allocs ? sqrt(fmax(0.0, sum2 / (double)r.allocs - r.mean_bytes * r.mean_bytes)) : 0;
    /* A malloc that got NULL left its node a leaf: the tree is not the static one, and
     * only the heap's soundness is checked. */
    checked c = {0};
    if (!h.nulls) {
        c = check_trees(sc, heap, program, &h, st, stores);
        if (h.overflow || h.count != st->count)
            printf("  %u nodes (static %u), %u splits without room for children\n", h.count, st->count, h.overflow);
    }
    r.leaves = c.leaves;
    r.depth = c.depth;
    r.refs = c.refs;
    r.ok = !c.wrong && !h.overflow && (h.nulls || h.count == st->count);
    /* The leaves' arrays freed: the heap must hold nothing (AtomicMalloc cannot free). */
    cl_kernel k = kernel_or_exit(program, "free_leaves");
    CHECK(clheap_heap_set_kernel_arg(heap, k, 0));
    set_arg(k, 1, sizeof h.buffer, &h.buffer);
    set_arg(k, 2, sizeof h.count, &h.count);
    size_t local = 64, global = (h.count + 63u) / 64u * 64u;
    CHECK(clEnqueueNDRangeKernel(sc->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(sc->queue));
    char what[256] = "";
    clheap_status sound = clheap_heap_check(heap, what, sizeof what);
    clheap_heap_stats s;
    CHECK(clheap_heap_calculate_stats(heap, &s));
    r.pool_bytes = s.pool_bytes;
    clheap_heap_errors errors;
    clheap_status read = clheap_heap_read_errors(heap, &errors);
    if (read < 0)
        CHECK(read);
    uint64_t left = allocator == CLHEAP_ATOMIC_MALLOC ? 0 : live_objects(&s);
    if (sound != CLHEAP_SUCCESS || left || errors.double_free || errors.free_not_chunk || errors.free_outside) {
        printf("  after freeing the leaves: %llu objects left, bad frees %u%s%s\n", (unsigned long long)left,
               errors.double_free + errors.free_not_chunk + errors.free_outside,
               sound == CLHEAP_SUCCESS ? "" : ", heap check: ", what);
        r.ok = 0;
    }
    clReleaseKernel(k);
    clReleaseMemObject(h.buffer);
    free(h.nodes);
    clReleaseProgram(program);
    CHECK(clheap_heap_destroy(heap));
    return r;
}

int main(int argc, char **argv)
{
    scene sc;
    memset(&sc, 0, sizeof sc);
    sc.prims = (uint32_t)arg_int(argc, argv, "--prims", 20000);
    sc.leaf = (uint32_t)arg_int(argc, argv, "--leaf", 8);
    sc.heap_factor = (uint32_t)arg_int(argc, argv, "--heap-factor", 200);
    const char *scene_name = arg_str(argc, argv, "--scene", "uniform");
    const char *which = arg_str(argc, argv, "--allocator", clheap_allocator_name(CLHEAP_DEFAULT_ALLOCATOR));
    const char *csv_path = arg_str(argc, argv, "--csv", NULL);
    example_options = arg_str(argc, argv, "--options", "");
    int clustered = strcmp(scene_name, "clustered") == 0;
    sc.max_depth = (uint32_t)arg_int(argc, argv, "--max-depth", (int)(8.0 + 1.3 * log2((double)(sc.prims ? sc.prims : 1))));
    if (sc.prims < 1 || sc.prims > (1u << 26) || sc.leaf < 1 || sc.heap_factor < 2 || sc.max_depth > 60 ||
        (!clustered && strcmp(scene_name, "uniform") != 0)) {
        fprintf(stderr, "usage: %s [--prims N (1..2^26)] [--scene uniform|clustered] [--leaf L] [--max-depth D (<= 60)] "
                        "[--heap-factor F (>= 2)] [--allocator NAME|all] [--csv FILE] [--options \"BUILD OPTIONS\"]\n", argv[0]);
        return 2;
    }
    /* Nodes: the heuristic keeps duplication low, so twice the primitives is ample; a
     * build that runs out says so and fails. */
    sc.capacity = 2u * sc.prims + 4096u;
    sc.lo = malloc((size_t)sc.prims * 3 * sizeof(float));
    sc.hi = malloc((size_t)sc.prims * 3 * sizeof(float));
    if (!sc.lo || !sc.hi)
        exit(2);
    make_scene(sc.prims, clustered, sc.lo, sc.hi);
    for (int a = 0; a < 3; a++) {
        sc.root_lo[a] = sc.lo[a];
        sc.root_hi[a] = sc.hi[a];
    }
    for (uint32_t i = 0; i < sc.prims; i++)
        for (int a = 0; a < 3; a++) {
            sc.root_lo[a] = sc.lo[3 * i + a] < sc.root_lo[a] ? sc.lo[3 * i + a] : sc.root_lo[a];
            sc.root_hi[a] = sc.hi[3 * i + a] > sc.root_hi[a] ? sc.hi[3 * i + a] : sc.root_hi[a];
        }
    char name[256];
    open_device(&sc.device, &sc.context, &sc.queue, name, sizeof name);
    printf("device: %s\n", name);
    size_t box_bytes = (size_t)sc.prims * 3 * sizeof(float);
    sc.lo_buf = buffer_or_exit(sc.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, box_bytes, sc.lo);
    sc.hi_buf = buffer_or_exit(sc.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, box_bytes, sc.hi);

    /* The static version once (its program needs a heap only to be built). */
    clheap_heap_config config = clheap_heap_config_default();
    config.size_bytes = 1u << 20;
    clheap_heap *builder = NULL;
    CHECK(clheap_heap_create(sc.context, sc.device, sc.queue, &config, &builder));
    cl_program static_program = build_or_exit(builder, kernel_source);
    uint32_t **stores = NULL;
    tree st = build_static(&sc, static_program, &stores); /* the first warms up, as above */
    for (uint32_t d = 0; d < st.levels; d++)
        free(stores[d]);
    free(stores);
    free(st.nodes);
    st = build_static(&sc, static_program, &stores);
    if (st.overflow) {
        fprintf(stderr, "the static build ran out of its %u nodes\n", sc.capacity);
        return 1;
    }

    /* Allocators that serve every size the build asks for and free concurrently, the
     * default first; AtomicMalloc, which cannot free, as the lower bound (paper 000). */
    clheap_allocator order[] = {CLHEAP_DEFAULT_ALLOCATOR, CLHEAP_CMALLOC, CLHEAP_CFMALLOC, CLHEAP_CMMALLOC,
                                CLHEAP_CFMMALLOC, CLHEAP_ATOMIC_MALLOC};
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "allocator,scene,prims,heap_factor,heap_bytes,nodes,leaves,depth,refs,allocs,mean_bytes,sd_bytes,"
                     "build_ms,static_ms,nulls,peak_live_bytes,pool_bytes,result\n");
    int wrong = 0, incomplete = 0, ran = 0, played = 0;
    uint64_t peak = peak_live_bytes(&st);
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        const char *a = clheap_allocator_name(order[i]);
        if ((strcmp(which, "all") != 0 && strcmp(which, a) != 0) || (i && order[i] == CLHEAP_DEFAULT_ALLOCATOR))
            continue;
        ran++;
        if (!device_runs(sc.device, order[i]))
            continue;
        played++;
        outcome r = build(&sc, order[i], &st, stores);
        printf("%-12s %s %u primitives, heap %llu MiB (%ux the root's array): %u nodes, %u leaves, depth %u, %llu "
               "references; %llu allocations of %.0f B on average (sd %.0f); build %.3f ms, static %.3f ms (%.2fx); "
               "%u NULL with at most %.1f%% of the pool live: %s\n",
               a, scene_name, sc.prims, (unsigned long long)(r.heap_bytes >> 20), sc.heap_factor, r.nodes, r.leaves,
               r.depth, (unsigned long long)r.refs, (unsigned long long)r.allocs, r.mean_bytes, r.sd_bytes, r.heap_ms,
               r.static_ms, r.static_ms > 0 ? r.heap_ms / r.static_ms : 0.0, r.nulls,
               r.pool_bytes ? 100.0 * (double)peak / (double)r.pool_bytes : 0.0, result_of(&r));
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%s,%s,%u,%u,%llu,%u,%u,%u,%llu,%llu,%.1f,%.1f,%.6f,%.6f,%u,%llu,%llu,%s\n", a, scene_name,
                    sc.prims, sc.heap_factor, (unsigned long long)r.heap_bytes, r.nodes, r.leaves, r.depth,
                    (unsigned long long)r.refs, (unsigned long long)r.allocs, r.mean_bytes, r.sd_bytes, r.heap_ms,
                    r.static_ms, r.nulls, (unsigned long long)peak, (unsigned long long)r.pool_bytes, result_of(&r));
            fflush(csv);
        }
        wrong += !r.ok;
        incomplete += r.ok && r.nulls;
    }
    if (csv)
        fclose(csv);
    for (uint32_t d = 0; d < st.levels; d++)
        free(stores[d]);
    free(stores);
    free(st.nodes);
    clReleaseProgram(static_program);
    CHECK(clheap_heap_destroy(builder));
    clReleaseMemObject(sc.lo_buf);
    clReleaseMemObject(sc.hi_buf);
    clReleaseCommandQueue(sc.queue);
    clReleaseContext(sc.context);
    free(sc.lo), free(sc.hi);
    if (!ran) {
        fprintf(stderr, "unknown allocator %s\n", which);
        return 2;
    }
    if (!played) { /* every allocator asked for is refused here: nothing was verified */
        printf("kdtree FAILED: the device refuses %s\n", which);
        return 1;
    }
    /* 0: every build verified; 3: some ran out of heap (NULL), none wrong; 1: wrong. */
    printf(wrong ? "kdtree FAILED\n" : incomplete ? "kdtree OK, but %d builds ran out of heap\n" : "kdtree OK\n",
           incomplete);
    return wrong ? 1 : incomplete ? 3 : 0;
}
