/* clheap._front: clheap.Cache's hot path in C. A PyOpenCL allocation through the Cache is
 * one call here: its front bin's buffer, else the scan for buffers the program let go,
 * else the C cache (clheap_cache_alloc), called straight through its function pointers.
 * python/clheap/cache.py holds the same algorithm in Python (used where this module was
 * not built) and the rest of the Cache.
 *
 * The algorithm, per request of n bytes (size: n rounded up to the granularity):
 *   1. a buffer from the front bin of `size` (buffers found free, kept by exact size);
 *   2. with many buffers out, a scan of the newest RECENT for free ones, then 1 again;
 *   3. a scan of every buffer out, then a binned buffer of size - 2 size bytes, the
 *      smallest (the C cache's rule);
 *   4. every binned buffer back to the C cache, which then serves the request (a cached
 *      buffer of size - 2 size bytes, else the driver: the Python side's create).
 * A handed-out buffer is free when its pyopencl.Buffer's reference count is 1: only the
 * Python side's `objects` dict holds it (no array, view or name does).
 *
 * Invariants, between calls (under the lock):
 *   F1 every mem handed out or binned is a key of `objects` (cl_mem -> Buffer), and the
 *      entry borrows that Buffer: the dict keeps it alive while the C cache owns the mem;
 *   F2 a mem is in at most one of `handed` and the bins, and is live in the C cache
 *      (allocated, not yet freed to it);
 *   F3 `binned` is the number of binned mems, at most BIN_CAP, in at most BIN_SLOTS sizes.
 *
 * Threads: one lock per front; a thread that must wait for it gives up the GIL, since the
 * holder may be running Python (the driver's create) and need the GIL back. The Python
 * side takes the same lock (`with front:`) around its own use of the C cache. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RECENT 8          /* newest handed-out buffers a busy scan looks at */
#define BUSY (4 * RECENT) /* handed-out buffers above which a miss scans the newest first */
#define BIN_CAP 256       /* binned buffers at most; the others go back to the C cache */
#define BIN_SLOTS 64      /* distinct sizes binned at most (a power of two) */

typedef int (*front_alloc_fn)(void *cache, size_t size, const char *tag, void **mem);
typedef int (*front_free_fn)(void *cache, void *mem);

typedef struct {
    void *mem;
    PyObject *buffer; /* borrowed from objects (F1) */
    size_t size;      /* rounded */
} front_entry;

typedef struct {
    size_t size; /* 0: an empty slot */
    int head;    /* its first entry in the pool, -1 if none */
} front_bin;

typedef struct {
    PyObject_HEAD
    PyObject *objects; /* dict: int(cl_mem) -> pyopencl.Buffer, the Python side's */
    PyThread_type_lock lock;
    void *cache; /* clheap_cache *, NULL before init and once closed */
    front_alloc_fn alloc;
    front_free_fn release;
    size_t granularity;
    front_entry *handed; /* oldest first */
    Py_ssize_t n_handed, cap_handed;
    front_bin bins[BIN_SLOTS];     /* open addressing on size */
    front_entry pool[BIN_CAP];     /* the binned entries */
    int next[BIN_CAP];             /* each pool entry's next in its bin, or in the free list */
    int free_head;                 /* the pool's unused entries, -1 if none */
    Py_ssize_t binned;
    unsigned long long front_hits;
} Front;

/* Empties every bin: the whole pool on the free list. */
static void front_clear_bins(Front *f)
{
    for (int k = 0; k < BIN_SLOTS; k++) {
        f->bins[k].size = 0;
        f->bins[k].head = -1;
    }
    for (int i = 0; i < BIN_CAP; i++)
        f->next[i] = i + 1 < BIN_CAP ? i + 1 : -1;
    f->free_head = 0;
    f->binned = 0;
}

/* ---- the lock ---------------------------------------------------------------------- */

/* Takes the lock; waits without the GIL when another thread holds it. */
static void front_lock(Front *f)
{
    if (PyThread_acquire_lock(f->lock, NOWAIT_LOCK))
        return;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(f->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

/* ---- status to exception ------------------------------------------------------------ */

/* Raises through the Python side's `check(status, where)` (clheap.Error or pyopencl's
 * own); NULL. */
static PyObject *front_raise(int status, const char *where)
{
    PyObject *errors = PyImport_ImportModule("clheap._errors");
    PyObject *result = errors ? PyObject_CallMethod(errors, "check", "is", status, where) : NULL;
    Py_XDECREF(errors);
    Py_XDECREF(result);
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "%s: status %d", where, status);
    return NULL;
}

/* ---- the bins (F3) ------------------------------------------------------------------ */

/* The bin of `size`, or the empty slot where it would go (NULL: every slot holds
 * another size). */
static front_bin *front_bin_of(Front *f, size_t size)
{
    size_t start = (size / f->granularity) & (BIN_SLOTS - 1);
    for (size_t k = 0; k < BIN_SLOTS; k++) {
        front_bin *b = &f->bins[(start + k) & (BIN_SLOTS - 1)];
        if (b->size == size || b->size == 0)
            return b;
    }
    return NULL;
}

/* Every binned buffer back to the C cache; the first failure's status, or 0. Bins are
 * cleared as a whole (open addressing keeps no tombstones). */
static int front_flush_bins(Front *f)
{
    int first = 0;
    for (int k = 0; k < BIN_SLOTS && f->binned; k++)
        for (int i = f->bins[k].head; i >= 0; i = f->next[i]) {
            int status = f->release(f->cache, f->pool[i].mem);
            if (status && !first)
                first = status;
        }
    front_clear_bins(f);
    return first;
}

/* A handed-out buffer found free: into its bin, else back to the C cache. */
static int front_found(Front *f, front_entry e)
{
    front_bin *b = f->free_head >= 0 ? front_bin_of(f, e.size) : NULL;
    if (!b)
        return f->release(f->cache, e.mem);
    int i = f->free_head;
    f->free_head = f->next[i];
    f->pool[i] = e;
    f->next[i] = b->head;
    b->size = e.size;
    b->head = i;
    f->binned++;
    return 0;
}

/* ---- the scan ------------------------------------------------------------------------ */

/* Moves the free buffers among handed[from..] to the bins, keeping the others in order;
 * the first failure's status, or 0. */
static int front_scan(Front *f, Py_ssize_t from)
{
    int first = 0;
    Py_ssize_t kept = from;
    for (Py_ssize_t i = from; i < f->n_handed; i++) {
        front_entry e = f->handed[i];
        if (Py_REFCNT(e.buffer) == 1) {
            int status = front_found(f, e);
            if (status && !first)
                first = status;
        } else {
            f->handed[kept++] = e;
        }
    }
    f->n_handed = kept;
    return first;
}

/* Room for one more handed-out entry; 0, or -1 with MemoryError. */
static int front_room(Front *f)
{
    if (f->n_handed < f->cap_handed)
        return 0;
    Py_ssize_t cap = f->cap_handed ? 2 * f->cap_handed : 64;
    front_entry *grown = PyMem_Realloc(f->handed, (size_t)cap * sizeof *grown);
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    f->handed = grown;
    f->cap_handed = cap;
    return 0;
}

/* Hands out e (room made): a new reference to its Buffer. */
static PyObject *front_hand(Front *f, front_entry e)
{
    f->handed[f->n_handed++] = e;
    Py_INCREF(e.buffer);
    return e.buffer;
}

/* A binned buffer of `size` handed out (a new reference), or NULL. */
static PyObject *front_take(Front *f, size_t size)
{
    front_bin *b = front_bin_of(f, size);
    if (!b || b->size != size || b->head < 0)
        return NULL;
    int i = b->head;
    b->head = f->next[i];
    f->next[i] = f->free_head;
    f->free_head = i;
    f->binned--;
    f->front_hits++;
    return front_hand(f, f->pool[i]);
}

/* A binned buffer for `size` handed out: its own size's, else the smallest binned size up
 * to twice it (the C cache's own rule, include/clheap/cache.h), else NULL. */
static PyObject *front_take_fit(Front *f, size_t size)
{
    size_t best = 0;
    for (int k = 0; k < BIN_SLOTS && f->binned; k++) {
        const front_bin *b = &f->bins[k];
        if (b->head >= 0 && b->size >= size && b->size / 2u <= size && (!best || b->size < best))
            best = b->size;
    }
    return best ? front_take(f, best) : NULL;
}

/* ---- a request ------------------------------------------------------------------------ */

/* Steps 2 - 4 of the header's algorithm, under the lock, room made. */
static PyObject *front_miss(Front *f, size_t size, const char *tag)
{
    int status = f->n_handed > BUSY ? front_scan(f, f->n_handed - RECENT) : 0;
    PyObject *got = status ? NULL : front_take(f, size);
    if (!got && !status)
        status = front_scan(f, 0);
    got = got || status ? got : front_take_fit(f, size);
    if (!got && !status)
        status = front_flush_bins(f);
    if (got || status)
        return status ? front_raise(status, "clheap_cache_free") : got;
    void *mem = NULL;
    status = f->alloc(f->cache, size, tag, &mem); /* may run the driver's create (Python) */
    if (status)
        return PyErr_Occurred() ? NULL : front_raise(status, "clheap_cache_alloc");
    PyObject *key = PyLong_FromVoidPtr(mem);
    PyObject *buffer = key ? PyDict_GetItemWithError(f->objects, key) : NULL;
    Py_XDECREF(key);
    if (!buffer) { /* F1 broken: the driver made no Buffer for it */
        f->release(f->cache, mem);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "clheap.Cache: a cl_mem without its Buffer");
        return NULL;
    }
    front_entry e = {mem, buffer, size};
    return front_hand(f, e);
}

/* A Buffer of at least n bytes (0 counts as 1), `tag` the allocation site. */
static PyObject *front_request(Front *f, Py_ssize_t n, const char *tag)
{
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "clheap.Cache: a negative size");
        return NULL;
    }
    size_t g = f->granularity ? f->granularity : 1u, size = n ? ((size_t)n + g - 1) / g * g : g;
    front_lock(f);
    PyObject *got = NULL;
    if (!f->cache) /* closed: the Python side's _live raises clheap.Error */
        Py_XDECREF(PyObject_CallMethod((PyObject *)f, "_live", NULL));
    else if (front_room(f) == 0 && !(got = front_take(f, size)))
        got = front_miss(f, size, tag);
    PyThread_release_lock(f->lock);
    if (!got && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "clheap.Cache: used after close");
    return got;
}

/* ---- the type ----------------------------------------------------------------------- */

static PyObject *Front_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n;
    static char *names[] = {"nbytes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n", names, &n))
        return NULL;
    return front_request((Front *)self, n, "pyopencl");
}

/* alloc(nbytes, tag: bytes) */
static PyObject *Front_alloc(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    const char *tag;
    if (!PyArg_ParseTuple(args, "ny", &n, &tag))
        return NULL;
    return front_request((Front *)self, n, tag);
}

/* flush(): every free buffer found and every binned one back to the C cache (before the
 * Python side reads stats, trims, checks or closes), under the lock it already holds. */
static PyObject *Front_flush(PyObject *self, PyObject *unused)
{
    Front *f = (Front *)self;
    (void)unused;
    if (!f->cache)
        Py_RETURN_NONE;
    int status = front_scan(f, 0);
    int flushed = front_flush_bins(f);
    if (status || flushed)
        return front_raise(status ? status : flushed, "clheap_cache_free");
    Py_RETURN_NONE;
}

/* close(): forgets every mem (the C cache is about to be destroyed); later requests
 * raise. Under the lock the Python side holds. */
static PyObject *Front_close(PyObject *self, PyObject *unused)
{
    Front *f = (Front *)self;
    (void)unused;
    f->cache = NULL;
    f->n_handed = 0;
    front_clear_bins(f);
    Py_RETURN_NONE;
}

/* counts() -> (front_hits, handed out, binned) */
static PyObject *Front_counts(PyObject *self, PyObject *unused)
{
    Front *f = (Front *)self;
    (void)unused;
    return Py_BuildValue("(Knn)", f->front_hits, f->n_handed, f->binned);
}

static PyObject *Front_lock(PyObject *self, PyObject *unused)
{
    (void)unused;
    front_lock((Front *)self);
    Py_RETURN_NONE;
}

static PyObject *Front_unlock(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyThread_release_lock(((Front *)self)->lock);
    Py_RETURN_NONE;
}

/* Front.__init__(objects: dict, cache: int, alloc: int, free: int, granularity: int): the
 * C cache and the addresses of clheap_cache_alloc and clheap_cache_free. clheap.Cache
 * derives from Front, so that calling the Cache runs Front_call with no Python between. */
static int Front_init(PyObject *self, PyObject *args, PyObject *kwargs)
{
    Front *f = (Front *)self;
    PyObject *objects;
    unsigned long long cache, alloc, release;
    Py_ssize_t granularity;
    (void)kwargs;
    if (!PyArg_ParseTuple(args, "O!KKKn", &PyDict_Type, &objects, &cache, &alloc, &release, &granularity))
        return -1;
    if (!cache || !alloc || !release || granularity <= 0 || f->objects) {
        PyErr_SetString(PyExc_ValueError, "clheap._front.Front: bad arguments");
        return -1;
    }
    Py_INCREF(objects);
    f->objects = objects;
    f->cache = (void *)(uintptr_t)cache;
    f->alloc = (front_alloc_fn)(uintptr_t)alloc;
    f->release = (front_free_fn)(uintptr_t)release;
    f->granularity = (size_t)granularity;
    return 0;
}

/* A front with its lock and empty bins, not yet serving (no cache until __init__). */
static PyObject *Front_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Front *f = (Front *)PyType_GenericNew(type, args, kwargs);
    if (!f)
        return NULL;
    f->lock = PyThread_allocate_lock();
    if (!f->lock) {
        Py_DECREF(f);
        return PyErr_NoMemory();
    }
    front_clear_bins(f);
    return (PyObject *)f;
}

static void Front_dealloc(PyObject *self)
{
    Front *f = (Front *)self;
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(f->objects);
    if (f->lock)
        PyThread_free_lock(f->lock);
    PyMem_Free(f->handed);
    freefunc free_self = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_self(self);
    Py_DECREF(type);
}

static PyMethodDef Front_methods[] = {
    {"_front_alloc", Front_alloc, METH_VARARGS, "_front_alloc(nbytes, tag: bytes) -> pyopencl.Buffer"},
    {"_front_flush", Front_flush, METH_NOARGS, "Free buffers found and binned ones back to the C cache (locked)."},
    {"_front_forget", Front_close, METH_NOARGS, "Forgets every buffer before the C cache goes (locked)."},
    {"_front_counts", Front_counts, METH_NOARGS, "(front_hits, handed out, binned)"},
    {"_front_lock", Front_lock, METH_NOARGS, "Takes the front's lock."},
    {"_front_unlock", Front_unlock, METH_NOARGS, "Releases the front's lock."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Front_slots[] = {
    {Py_tp_doc, "clheap.Cache's hot path: the front bins and the C cache's calls (see _front.c)."},
    {Py_tp_init, Front_init},
    {Py_tp_dealloc, Front_dealloc},
    {Py_tp_call, Front_call},
    {Py_tp_methods, Front_methods},
    {Py_tp_new, Front_new},
    {0, NULL},
};

static PyType_Spec Front_spec = {"clheap._front.Front", sizeof(Front), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, Front_slots};

static int front_exec(PyObject *module)
{
    PyObject *type = PyType_FromSpec(&Front_spec);
    if (!type)
        return -1;
    if (PyModule_AddObject(module, "Front", type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot front_module_slots[] = {{Py_mod_exec, front_exec}, {0, NULL}};

static struct PyModuleDef front_module = {PyModuleDef_HEAD_INIT, "_front", "clheap.Cache's hot path in C.", 0,
                                          NULL, front_module_slots, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__front(void)
{
    return PyModuleDef_Init(&front_module);
}
