/* memhop._ids: the id of a namespaced pair, hashed in one call.
 *
 * Responsibility: ``pair_id(prefix, a, b)`` returns what ``ids._pair_id`` (the Python
 * reference) returns: xxHash64, seed 0, of the UTF-8 bytes of ``f"{prefix}{a}:{b}"``.
 * Two ints in [0, 2**64) are written in decimal here; any other value is formatted as
 * the f-string formats it (``format(value, "")``), so the answer is the reference's
 * for every argument. XXH64 is written from its published algorithm (the five 64-bit
 * primes, four lanes over 32-byte stripes, then the tail and the final avalanche).
 */
#include "_kernel.h"
#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t read64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint32_t read32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t lane(uint64_t acc, uint64_t input) {
    acc += input * P2;
    return rotl(acc, 31) * P1;
}

static inline uint64_t merge(uint64_t acc, uint64_t v) {
    acc ^= lane(0, v);
    return acc * P1 + P4;
}

static uint64_t xxh64(const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
        for (; p + 32 <= end; p += 32) {
            v1 = lane(v1, read64(p));
            v2 = lane(v2, read64(p + 8));
            v3 = lane(v3, read64(p + 16));
            v4 = lane(v4, read64(p + 24));
        }
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = merge(merge(merge(merge(h, v1), v2), v3), v4);
    } else {
        h = P5;
    }
    h += (uint64_t)n;
    for (; p + 8 <= end; p += 8) h = rotl(h ^ lane(0, read64(p)), 27) * P1 + P4;
    if (p + 4 <= end) {
        h = rotl(h ^ (uint64_t)read32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++) h = rotl(h ^ (uint64_t)*p * P5, 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ``v`` in decimal at ``out`` (room for 20 digits); the digits' count. */
static int decimal(uint64_t v, char *out) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

/* An exact int in [0, 2**64): 1 and its value, else 0 (nothing raised). */
static int plain(PyObject *v, uint64_t *out) {
    return PyLong_CheckExact(v) && u64_upto(v, UINT64_MAX, out);
}

/* Any other pair: the string the f-string makes, hashed (a new reference or NULL). */
static PyObject *formatted_pair_id(PyObject *prefix, PyObject *a, PyObject *b) {
    PyObject *left = PyObject_Format(a, NULL);
    if (left == NULL) return NULL;
    PyObject *right = PyObject_Format(b, NULL);
    if (right == NULL) {
        Py_DECREF(left);
        return NULL;
    }
    PyObject *joined = PyUnicode_FromFormat("%U%U:%U", prefix, left, right);
    Py_DECREF(left);
    Py_DECREF(right);
    if (joined == NULL) return NULL;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(joined, &size);
    PyObject *out = NULL;
    if (utf8 != NULL) {
        uint64_t h = xxh64((const unsigned char *)utf8, (size_t)size);
        out = PyLong_FromUnsignedLongLong(h);
    }
    Py_DECREF(joined);
    return out;
}

static PyObject *pair_id(PyObject *Py_UNUSED(module), PyObject *const *args,
                         Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "pair_id expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *prefix = args[0];
    if (!PyUnicode_Check(prefix)) {
        PyErr_SetString(PyExc_TypeError, "pair_id's prefix must be a str");
        return NULL;
    }
    uint64_t a, b;
    Py_ssize_t size;
    const char *head = PyUnicode_AsUTF8AndSize(prefix, &size);
    if (head == NULL) return NULL;
    if (size > 64 || !plain(args[1], &a) || !plain(args[2], &b))
        return formatted_pair_id(prefix, args[1], args[2]);
    char text[64 + 20 + 1 + 20];
    memcpy(text, head, (size_t)size);
    size_t n = (size_t)size;
    n += (size_t)decimal(a, text + n);
    text[n++] = ':';
    n += (size_t)decimal(b, text + n);
    return PyLong_FromUnsignedLongLong(xxh64((const unsigned char *)text, n));
}

static PyMethodDef methods[] = {
    {"pair_id", (PyCFunction)(void (*)(void))pair_id, METH_FASTCALL,
     "xxHash64 (seed 0) of the UTF-8 bytes of f\"{prefix}{a}:{b}\"."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "memhop._ids", "Ids of namespaced pairs, hashed in one call.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__ids(void) { return PyModule_Create(&module); }
