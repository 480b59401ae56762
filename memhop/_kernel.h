/* What memhop's compiled parts share (included by them, not built alone). */
#ifndef MEMHOP_KERNEL_H
#define MEMHOP_KERNEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The value of the int ``v`` when it lies in [0, hi]: 1 and the value, else 0 (nothing
 * raised: a caller that takes plain values only answers None for it). */
static inline int u64_upto(PyObject *v, uint64_t hi, uint64_t *out) {
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (x > hi) return 0;
    *out = x;
    return 1;
}

#endif
