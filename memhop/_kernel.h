/* What memhop's compiled parts share (included by them, not built alone). */
#ifndef MEMHOP_KERNEL_H
#define MEMHOP_KERNEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX < 0x030C0000
/* 3.11: Python.h gives an int's digits (``cpython/longintrepr.h``), read by ``digits_u64`` */

/* The magnitude of the int ``v`` when it fits 64 bits: 1 and it, else 0. Read from the
 * int's digits: on 3.11 ``PyLong_AsUnsignedLongLong`` converts any value past one
 * digit (an id, a timestamp) a byte at a time, about 190 instructions, and a turn
 * converted about 70. */
static inline int digits_u64(PyObject *v, uint64_t *out) {
    Py_ssize_t size = Py_ABS(Py_SIZE(v));
    const digit *d = ((PyLongObject *)v)->ob_digit;
    uint64_t x = 0;
    for (Py_ssize_t i = size - 1; i >= 0; i--) {
        if (x >> (64 - PyLong_SHIFT)) return 0; /* the next digit would push bits past 64 */
        x = x << PyLong_SHIFT | d[i];
    }
    *out = x;
    return 1;
}
#endif

/* The value of the int ``v`` when it lies in [0, hi]: 1 and the value, else 0 (nothing
 * raised: a caller that takes plain values only answers None for it). */
static inline int u64_upto(PyObject *v, uint64_t hi, uint64_t *out) {
    if (!PyLong_Check(v)) return 0;
    uint64_t x;
#if PY_VERSION_HEX < 0x030C0000
    if (Py_SIZE(v) < 0 || !digits_u64(v, &x)) return 0;
#else
    x = PyLong_AsUnsignedLongLong(v);
    if (x == (uint64_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
#endif
    if (x > hi) return 0;
    *out = x;
    return 1;
}

/* The value of the int ``v`` when it lies in [-2**63, 2**63): 1 and the value, else 0
 * (nothing raised); as ``u64_upto``. */
static inline int i64_of(PyObject *v, int64_t *out) {
    if (!PyLong_Check(v)) return 0;
#if PY_VERSION_HEX < 0x030C0000
    uint64_t x;
    if (!digits_u64(v, &x)) return 0;
    if (Py_SIZE(v) < 0) {
        if (x > (uint64_t)1 << 63) return 0;
        *out = (int64_t)((uint64_t)0 - x); /* -2**63 included */
        return 1;
    }
    if (x >> 63) return 0;
    *out = (int64_t)x;
#else
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = x;
#endif
    return 1;
}

#endif
