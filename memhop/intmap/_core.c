/* memhop.intmap._core: an IntMap's reads and puts, compiled.
 *
 * Responsibility: the calls every record's write and read makes of an id map (``get``,
 * ``in``, ``len``, ``[]``, ``put``, ``_settle``), answered from the same state and with
 * the same results as ``core.PyCore``, the Python reference (the tests run every IntMap
 * test on both). The state stays Python objects that ``pages.PagedMap`` also works on:
 * a list of each page's lowest bound, lists of each page's ids and values
 * (``array('Q')``) and tags (``array('H')`` or None), a dict of recent ids
 * (``id -> value << 9 | tag``), the count and two bounds. Here a search reads the
 * bounds and a page's ids in place through the buffer protocol, where Python makes an
 * int object at each step of a bisection, and starts from a guess in proportion (the
 * ids are hashes): a few cache lines a search, where a bisection touches about twenty,
 * which is what a search costs once the map outgrows the cache.
 *
 * Safety: every object is checked for its type where it is taken (a setter refuses a
 * wrong one, a page must be an array of the item size it holds), so a misuse raises
 * rather than reads out of bounds. Buffers are held only within a call and released
 * before an array is resized. Optional: an install without a C compiler uses PyCore.
 */
#include "../_kernel.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>

#define TAG_BITS 9
#define TAG_MASK 0x1FF
#define NEW_TAG (-1)
#define UNTYPED_TAG (-2)

typedef struct {
    PyObject_HEAD
    PyObject *firsts; /* array('Q'): page p holds the ids in [firsts[p], firsts[p + 1]) */
    PyObject *ids;    /* list of array('Q') */
    PyObject *offs;   /* list of array('Q') */
    PyObject *types;  /* list of array('H') or None */
    PyObject *recent; /* dict: id -> value << TAG_BITS | tag */
    Py_ssize_t count;
    Py_ssize_t recent_max;
    Py_ssize_t page_max;
} Core;

static PyObject *str_frombytes; /* interned method names */
static PyObject *str_split;

/* ---- conversions ------------------------------------------------------------------ */

/* An int as a u64: 1, or 0 when it is an int out of range (negative or past 64 bits),
 * or -1 with TypeError when it is not an int. */
static int as_u64(PyObject *obj, uint64_t *out) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "an IntMap id must be an int, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    return u64_upto(obj, UINT64_MAX, out);
}

/* ``key`` as an id, refused with OverflowError out of range; 0 on error. */
static int id_of(PyObject *key, uint64_t *id) {
    int ok = as_u64(key, id);
    if (ok == 0) PyErr_SetString(PyExc_OverflowError, "an IntMap id must be a u64");
    return ok > 0;
}

/* ``value >> TAG_BITS`` of a recent entry (an int of any size, as Python's would be). */
static PyObject *unpack_value(PyObject *packed) {
    uint64_t v;
    if (!u64_upto(packed, UINT64_MAX, &v)) {
        PyObject *bits = PyLong_FromLong(TAG_BITS);
        if (bits == NULL) return NULL;
        PyObject *out = PyNumber_Rshift(packed, bits);
        Py_DECREF(bits);
        return out;
    }
    return PyLong_FromUnsignedLongLong(v >> TAG_BITS);
}

/* ``value & TAG_MASK`` of a recent entry, as a C long (-1 with an error set). */
static long unpack_tag(PyObject *packed) {
    uint64_t v;
    if (u64_upto(packed, UINT64_MAX, &v)) return (long)(v & TAG_MASK);
    PyObject *mask = PyLong_FromLong(TAG_MASK);
    if (mask == NULL) return -1;
    PyObject *tag = PyNumber_And(packed, mask);
    Py_DECREF(mask);
    if (tag == NULL) return -1;
    long out = PyLong_AsLong(tag);
    Py_DECREF(tag);
    return out;
}

/* ``offset << TAG_BITS | tag``, as Python computes it for any ints. */
static PyObject *pack(PyObject *offset, PyObject *tag) {
    uint64_t off, t;
    if (u64_upto(offset, UINT64_MAX >> TAG_BITS, &off) && u64_upto(tag, UINT64_MAX, &t)) {
        return PyLong_FromUnsignedLongLong(off << TAG_BITS | t);
    }
    PyObject *bits = PyLong_FromLong(TAG_BITS);
    if (bits == NULL) return NULL;
    PyObject *shifted = PyNumber_Lshift(offset, bits);
    Py_DECREF(bits);
    if (shifted == NULL) return NULL;
    PyObject *out = PyNumber_Or(shifted, tag);
    Py_DECREF(shifted);
    return out;
}

/* ---- pages ------------------------------------------------------------------------ */

static int state_ready(Core *self) {
    if (self->firsts == NULL || self->ids == NULL || self->offs == NULL ||
        self->types == NULL || self->recent == NULL) {
        PyErr_SetString(PyExc_AttributeError, "IntMap state is not set (no __init__?)");
        return 0;
    }
    return 1;
}

/* The first position in ascending ``a`` holding at least ``key``. The ids are hashes,
 * spread evenly over 64 bits, so a guess in proportion lands within a few entries of
 * it; steps that double from there bracket it, and a bisection ends the search. Any
 * order of ids gets the right answer (the steps bound a bad guess to a bisection's
 * cost twice over); even ones get it touching a few cache lines, where a bisection
 * of the whole page touches about ten. */
static Py_ssize_t first_at_least(const uint64_t *a, Py_ssize_t n, uint64_t key) {
    if (n == 0 || a[0] >= key) return 0;
    if (a[n - 1] < key) return n;
    Py_ssize_t lo = 0, hi = n - 1; /* a[lo] < key <= a[hi] */
    if (hi - lo > 16) {
        double part = (double)(key - a[lo]) / (double)(a[hi] - a[lo]);
        Py_ssize_t guess = lo + (Py_ssize_t)(part * (double)(hi - lo));
        if (guess < lo) guess = lo;
        if (guess > hi) guess = hi;
        Py_ssize_t step = 1;
        if (a[guess] < key) {
            lo = guess;
            while (lo + step < hi && a[lo + step] < key) {
                lo += step;
                step <<= 1;
            }
            if (lo + step < hi) hi = lo + step;
        } else {
            hi = guess;
            while (hi - step > lo && a[hi - step] >= key) {
                hi -= step;
                step <<= 1;
            }
            if (hi - step > lo) lo = hi - step;
        }
    }
    while (hi - lo > 1) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

/* A buffer of ``itemsize``-byte items (released by the caller); 0 with an error set
 * when ``obj`` is not one. */
static int items_view(PyObject *obj, Py_ssize_t itemsize, int writable, Py_buffer *view) {
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return 0;
    if (view->itemsize != itemsize || view->len % itemsize != 0) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "an IntMap array must hold %zd-byte items", itemsize);
        return 0;
    }
    return 1;
}

/* The page that holds ``id``: the last whose lowest bound is at most ``id`` (-1 on
 * error). The bounds ascend from 0 and there is a page for each. */
static Py_ssize_t page_of(Core *self, uint64_t id) {
    Py_buffer view;
    if (!items_view(self->firsts, 8, 0, &view)) return -1;
    const uint64_t *firsts = (const uint64_t *)view.buf;
    Py_ssize_t n = view.len / 8;
    Py_ssize_t after = id == UINT64_MAX ? n : first_at_least(firsts, n, id + 1);
    PyBuffer_Release(&view);
    if (after == 0 || after > PyList_GET_SIZE(self->ids) || after > PyList_GET_SIZE(self->offs) ||
        after > PyList_GET_SIZE(self->types)) {
        PyErr_SetString(PyExc_ValueError, "IntMap pages do not match their bounds");
        return -1;
    }
    return after - 1;
}

/* Page ``page`` of ``pages`` as a buffer of ``itemsize``-byte items (as items_view). */
static int page_view(PyObject *pages, Py_ssize_t page, Py_ssize_t itemsize, int writable,
                     Py_buffer *view) {
    return items_view(PyList_GET_ITEM(pages, page), itemsize, writable, view);
}

/* Where ``id`` is or would go: its page, its position there, and whether it is there
 * (-1 on error). */
static int locate(Core *self, uint64_t id, Py_ssize_t *page, Py_ssize_t *at) {
    *page = page_of(self, id);
    if (*page < 0) return -1;
    Py_buffer view;
    if (!page_view(self->ids, *page, 8, 0, &view)) return -1;
    const uint64_t *ids = (const uint64_t *)view.buf;
    Py_ssize_t n = view.len / 8;
    Py_ssize_t i = first_at_least(ids, n, id);
    int found = i < n && ids[i] == id;
    PyBuffer_Release(&view);
    *at = i;
    return found;
}

/* The value at (page, at) as an int. */
static PyObject *value_at(Core *self, Py_ssize_t page, Py_ssize_t at) {
    Py_buffer view;
    if (!page_view(self->offs, page, 8, 0, &view)) return NULL;
    PyObject *out = NULL;
    if (at < view.len / 8) {
        out = PyLong_FromUnsignedLongLong(((const uint64_t *)view.buf)[at]);
    } else {
        PyErr_SetString(PyExc_ValueError, "an IntMap page's values are fewer than its ids");
    }
    PyBuffer_Release(&view);
    return out;
}

/* The value of ``key``, a new reference; NULL without an error when it is not live. */
static PyObject *lookup(Core *self, PyObject *key) {
    if (!state_ready(self)) return NULL;
    PyObject *packed = PyDict_GetItemWithError(self->recent, key);
    if (packed != NULL) return unpack_value(packed);
    if (PyErr_Occurred()) return NULL;
    uint64_t id;
    int ok = as_u64(key, &id);
    if (ok <= 0) return NULL; /* not an int: TypeError; out of range: not live */
    Py_ssize_t page, at;
    int found = locate(self, id, &page, &at);
    if (found <= 0) return NULL;
    return value_at(self, page, at);
}

/* ---- calls ------------------------------------------------------------------------ */

static int arity(const char *name, Py_ssize_t nargs, Py_ssize_t least, Py_ssize_t most) {
    if (nargs >= least && nargs <= most) return 1;
    PyErr_Format(PyExc_TypeError, "%s expected %zd to %zd arguments, got %zd", name, least,
                 most, nargs);
    return 0;
}

static PyObject *Core_get(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!arity("get", nargs, 1, 2)) return NULL;
    PyObject *found = lookup(self, args[0]);
    if (found != NULL || PyErr_Occurred()) return found;
    PyObject *fallback = nargs > 1 ? args[1] : Py_None;
    return Py_NewRef(fallback);
}

static PyObject *Core_subscript(Core *self, PyObject *key) {
    PyObject *found = lookup(self, key);
    if (found == NULL && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
    return found;
}

static int Core_contains(Core *self, PyObject *key) {
    if (!PyLong_Check(key)) return 0;
    PyObject *found = lookup(self, key);
    if (found == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_DECREF(found);
    return 1;
}

static Py_ssize_t Core_length(Core *self) { return self->count; }

/* Call ``obj.name(*args)`` by vectorcall; a new reference or NULL. */
static PyObject *call_method(PyObject *name, PyObject *obj, PyObject *a, PyObject *b) {
    PyObject *stack[3] = {obj, a, b};
    size_t n = b != NULL ? 3 : 2;
    return PyObject_VectorcallMethod(name, stack, n | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

/* One recent entry, as a settle stores it. */
typedef struct {
    uint64_t id, value;
    uint16_t tag;
} Entry;

static int by_id(const void *a, const void *b) {
    uint64_t x = ((const Entry *)a)->id, y = ((const Entry *)b)->id;
    return (x > y) - (x < y);
}

/* A recent (id, packed) as an entry; 0 with OverflowError when its value is no u64. */
static int entry_of(PyObject *key, PyObject *packed, Entry *e) {
    if (!id_of(key, &e->id)) return 0;
    PyObject *value = unpack_value(packed);
    if (value == NULL) return 0;
    int fits = as_u64(value, &e->value);
    Py_DECREF(value);
    if (fits == 0) PyErr_SetString(PyExc_OverflowError, "an IntMap value must be a u64");
    if (fits <= 0) return 0;
    long tag = unpack_tag(packed);
    e->tag = (uint16_t)tag;
    return !(tag == -1 && PyErr_Occurred());
}

/* Grow array ``arr`` by ``bytes`` zero bytes (one call of its ``frombytes``). */
static int grow(PyObject *arr, Py_ssize_t bytes) {
    PyObject *zeros = PyBytes_FromStringAndSize(NULL, bytes);
    if (zeros == NULL) return 0;
    memset(PyBytes_AS_STRING(zeros), 0, (size_t)bytes);
    PyObject *done = call_method(str_frombytes, arr, zeros, NULL);
    Py_DECREF(zeros);
    Py_XDECREF(done);
    return done != NULL;
}

/* Merge ``count`` entries (ascending by id, none in the page) into page ``page``: its
 * ids, values and tags (if it keeps them) grow by ``count`` and are merged from the
 * top down in place, an entry going before an equal id as a bisection would put it. */
static int merge_page(Core *self, Py_ssize_t page, const Entry *add, Py_ssize_t count) {
    PyObject *ids = PyList_GET_ITEM(self->ids, page), *offs = PyList_GET_ITEM(self->offs, page);
    PyObject *types = PyList_GET_ITEM(self->types, page);
    int typed = types != Py_None;
    Py_ssize_t held = PyObject_Size(ids);
    if (held < 0 || !grow(ids, count * 8) || !grow(offs, count * 8) ||
        (typed && !grow(types, count * 2)))
        return 0;
    Py_buffer vi, vo, vt;
    if (!items_view(ids, 8, 1, &vi)) return 0;
    if (!items_view(offs, 8, 1, &vo)) {
        PyBuffer_Release(&vi);
        return 0;
    }
    if (typed && !items_view(types, 2, 1, &vt)) {
        PyBuffer_Release(&vi);
        PyBuffer_Release(&vo);
        return 0;
    }
    Py_ssize_t total = held + count;
    int matched = vi.len / 8 == total && vo.len / 8 == total && (!typed || vt.len / 2 == total);
    if (matched) {
        uint64_t *pi = (uint64_t *)vi.buf, *po = (uint64_t *)vo.buf;
        uint16_t *pt = typed ? (uint16_t *)vt.buf : NULL;
        Py_ssize_t i = held - 1, j = count - 1, w = total - 1;
        for (; j >= 0; w--) {
            if (i >= 0 && pi[i] >= add[j].id) {
                pi[w] = pi[i];
                po[w] = po[i];
                if (pt != NULL) pt[w] = pt[i];
                i--;
            } else {
                pi[w] = add[j].id;
                po[w] = add[j].value;
                if (pt != NULL) pt[w] = add[j].tag;
                j--;
            }
        }
    }
    PyBuffer_Release(&vi);
    PyBuffer_Release(&vo);
    if (typed) PyBuffer_Release(&vt);
    if (!matched)
        PyErr_SetString(PyExc_ValueError, "an IntMap page's values or tags are not one per id");
    return matched;
}

/* Split page ``page`` in halves (by the map's own ``_split``), and each half again,
 * until every part holds at most ``page_max`` entries (a single entry stays whole). */
static int fit(Core *self, Py_ssize_t page) {
    Py_ssize_t size = PyObject_Size(PyList_GET_ITEM(self->ids, page));
    if (size < 0) return 0;
    if (size <= self->page_max || size < 2) return 1;
    PyObject *index = PyLong_FromSsize_t(page);
    if (index == NULL) return 0;
    PyObject *split = call_method(str_split, (PyObject *)self, index, NULL);
    Py_DECREF(index);
    if (split == NULL) return 0;
    Py_DECREF(split);
    return fit(self, page + 1) && fit(self, page);
}

/* The lowest id page ``page`` holds (its bound); 0 with an error set. */
static int page_bound(Core *self, Py_ssize_t page, uint64_t *low) {
    Py_buffer view;
    if (!items_view(self->firsts, 8, 0, &view)) return 0;
    int inside = page < view.len / 8;
    if (inside) *low = ((const uint64_t *)view.buf)[page];
    PyBuffer_Release(&view);
    if (!inside) PyErr_SetString(PyExc_ValueError, "IntMap pages do not match their bounds");
    return inside;
}

/* Put every recent id into its page, a page at a time from the highest (``merge_page``),
 * then ``fit`` the page; as ``PyCore._settle``. OverflowError, with nothing changed, when
 * a recent value is not a u64. */
static PyObject *Core_settle(Core *self, PyObject *Py_UNUSED(ignored)) {
    if (!state_ready(self)) return NULL;
    Py_ssize_t count = PyDict_GET_SIZE(self->recent);
    if (count == 0) Py_RETURN_NONE;
    Entry *entries = PyMem_New(Entry, count);
    if (entries == NULL) return PyErr_NoMemory();
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *packed;
    while (k < count && PyDict_Next(self->recent, &pos, &key, &packed)) {
        if (!entry_of(key, packed, &entries[k++])) {
            PyMem_Free(entries);
            return NULL;
        }
    }
    qsort(entries, (size_t)count, sizeof(Entry), by_id);
    PyObject *fresh = PyDict_New();
    int ok = fresh != NULL;
    if (ok) Py_SETREF(self->recent, fresh);
    for (Py_ssize_t end = count; ok && end > 0;) {
        Py_ssize_t page = page_of(self, entries[end - 1].id), start = end - 1;
        uint64_t low;
        ok = page >= 0 && page_bound(self, page, &low);
        if (!ok) break;
        while (start > 0 && entries[start - 1].id >= low) start--;
        ok = merge_page(self, page, entries + start, end - start) && fit(self, page);
        end = start;
    }
    PyMem_Free(entries);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_put(Core *self, PyObject *const *args, Py_ssize_t nargs) {
    if (!arity("put", nargs, 2, 3)) return NULL;
    if (!state_ready(self)) return NULL;
    PyObject *key = args[0], *offset = args[1];
    PyObject *tag = nargs > 2 ? args[2] : NULL;
    PyObject *zero = NULL;
    if (tag == NULL) tag = zero = PyLong_FromLong(0);
    if (tag == NULL) return NULL;
    PyObject *out = NULL;
    PyObject *was = PyDict_GetItemWithError(self->recent, key);
    if (was != NULL) { /* never also in a page: no search there */
        long had = unpack_tag(was);
        if (had == -1 && PyErr_Occurred()) goto done;
        PyObject *packed = pack(offset, tag);
        if (packed == NULL) goto done;
        int set = PyDict_SetItem(self->recent, key, packed);
        Py_DECREF(packed);
        if (set == 0) out = PyLong_FromLong(had);
        goto done;
    }
    if (PyErr_Occurred()) goto done;
    uint64_t id;
    if (!id_of(key, &id)) goto done;
    Py_ssize_t page, at;
    int found = locate(self, id, &page, &at);
    if (found < 0) goto done;
    if (found) {
        uint64_t value;
        int fits = as_u64(offset, &value);
        if (fits <= 0) {
            if (fits == 0) PyErr_SetString(PyExc_OverflowError, "an IntMap value must be a u64");
            goto done;
        }
        Py_buffer view;
        if (!page_view(self->offs, page, 8, 1, &view)) goto done;
        int inside = at < view.len / 8;
        if (inside) ((uint64_t *)view.buf)[at] = value;
        PyBuffer_Release(&view);
        if (!inside) {
            PyErr_SetString(PyExc_ValueError, "an IntMap page's values are fewer than its ids");
            goto done;
        }
        if (PyList_GET_ITEM(self->types, page) == Py_None) {
            out = PyLong_FromLong(UNTYPED_TAG);
            goto done;
        }
        unsigned long type = PyLong_Check(tag) ? PyLong_AsUnsignedLong(tag) : (unsigned long)-1;
        if (type > 0xFFFF) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_OverflowError, "an IntMap tag must fit 16 bits");
            }
            goto done;
        }
        if (!page_view(self->types, page, 2, 1, &view)) goto done;
        inside = at < view.len / 2;
        if (inside) {
            uint16_t *tags = (uint16_t *)view.buf;
            out = PyLong_FromLong(tags[at]);
            tags[at] = (uint16_t)type;
        }
        PyBuffer_Release(&view);
        if (!inside) PyErr_SetString(PyExc_ValueError, "an IntMap page's tags are fewer than its ids");
        goto done;
    }
    PyObject *packed = pack(offset, tag);
    if (packed == NULL) goto done;
    int set = PyDict_SetItem(self->recent, key, packed);
    Py_DECREF(packed);
    if (set < 0) goto done;
    self->count += 1;
    if (PyDict_GET_SIZE(self->recent) > self->recent_max) {
        PyObject *settled = Core_settle(self, NULL);
        if (settled == NULL) goto done;
        Py_DECREF(settled);
    }
    out = PyLong_FromLong(NEW_TAG);
done:
    Py_XDECREF(zero);
    return out;
}

/* ---- the type --------------------------------------------------------------------- */

static int Core_traverse(Core *self, visitproc visit, void *arg) {
    Py_VISIT(self->firsts);
    Py_VISIT(self->ids);
    Py_VISIT(self->offs);
    Py_VISIT(self->types);
    Py_VISIT(self->recent);
    return 0; /* a subclass's own traverse visits its type (this type is static) */
}

static int Core_clear(Core *self) {
    Py_CLEAR(self->firsts);
    Py_CLEAR(self->ids);
    Py_CLEAR(self->offs);
    Py_CLEAR(self->types);
    Py_CLEAR(self->recent);
    return 0;
}

/* A subclass's own dealloc releases its (heap) type after this: not done here. */
static void Core_dealloc(Core *self) {
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A field holding a list (or a dict, for ``_new``), refused otherwise. */
#define FIELD(name, field, check, what)                                                   \
    static PyObject *get_##name(Core *self, void *Py_UNUSED(closure)) {                   \
        if (self->field == NULL) {                                                         \
            PyErr_SetString(PyExc_AttributeError, "_" #name);                              \
            return NULL;                                                                   \
        }                                                                                  \
        return Py_NewRef(self->field);                                                     \
    }                                                                                      \
    static int set_##name(Core *self, PyObject *value, void *Py_UNUSED(closure)) {        \
        if (value == NULL || !check(value)) {                                              \
            PyErr_SetString(PyExc_TypeError, "IntMap._" #name " must be " what);           \
            return -1;                                                                     \
        }                                                                                  \
        Py_XSETREF(self->field, Py_NewRef(value));                                         \
        return 0;                                                                          \
    }

FIELD(firsts, firsts, PyObject_CheckBuffer, "an array")
FIELD(ids, ids, PyList_CheckExact, "a list")
FIELD(offs, offs, PyList_CheckExact, "a list")
FIELD(types, types, PyList_CheckExact, "a list")
FIELD(new, recent, PyDict_CheckExact, "a dict")

static PyGetSetDef Core_getset[] = {
    {"_firsts", (getter)get_firsts, (setter)set_firsts, NULL, NULL},
    {"_ids", (getter)get_ids, (setter)set_ids, NULL, NULL},
    {"_offs", (getter)get_offs, (setter)set_offs, NULL, NULL},
    {"_types", (getter)get_types, (setter)set_types, NULL, NULL},
    {"_new", (getter)get_new, (setter)set_new, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef Core_members[] = {
    {"_count", T_PYSSIZET, offsetof(Core, count), 0, NULL},
    {"_recent_max", T_PYSSIZET, offsetof(Core, recent_max), 0, NULL},
    {"_page_max", T_PYSSIZET, offsetof(Core, page_max), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef Core_methods[] = {
    {"get", (PyCFunction)(void (*)(void))Core_get, METH_FASTCALL,
     "The value of an id, or the default."},
    {"put", (PyCFunction)(void (*)(void))Core_put, METH_FASTCALL,
     "Point an id at a value with a tag; the tag it had, NEW or UNTYPED."},
    {"_settle", (PyCFunction)Core_settle, METH_NOARGS, "Put the recent ids into their pages."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods Core_as_mapping = {
    .mp_length = (lenfunc)Core_length,
    .mp_subscript = (binaryfunc)Core_subscript,
};

static PySequenceMethods Core_as_sequence = {
    .sq_contains = (objobjproc)Core_contains,
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "memhop.intmap._core.Core",
    .tp_doc = "An IntMap's state and its reads and puts (see core.PyCore).",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_members = Core_members,
    .tp_getset = Core_getset,
    .tp_as_mapping = &Core_as_mapping,
    .tp_as_sequence = &Core_as_sequence,
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "memhop.intmap._core",
    "An IntMap's reads and puts, compiled (see core.PyCore for the reference).", -1, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    str_frombytes = PyUnicode_InternFromString("frombytes");
    str_split = PyUnicode_InternFromString("_split");
    if (str_frombytes == NULL || str_split == NULL || PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    if (PyModule_AddObjectRef(module, "Core", (PyObject *)&CoreType) < 0 ||
        PyModule_AddIntConstant(module, "NEW", NEW_TAG) < 0 ||
        PyModule_AddIntConstant(module, "UNTYPED", UNTYPED_TAG) < 0 ||
        PyModule_AddIntConstant(module, "TAG_BITS", TAG_BITS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
