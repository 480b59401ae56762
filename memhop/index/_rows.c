/* memhop.index._rows: one content slot's row written into the L4 mirror's columns.
 *
 * Responsibility: ``store(columns, at, *values)`` writes a content slot's nine values (its
 * id_hash, topic_id, seq, kind, content_type, role, node_seq and created_at, then its
 * chain link) into row ``at`` of ``columns``, ``SlotRows``'s nine arrays in that order
 * and of its type codes (Q Q Q B B B I q I), which already hold a row there
 * (``SlotRows`` grows them ahead of its rows). The values come as arguments: the
 * caller's attribute reads are cached at its call site, where one here would look each
 * name up in the type.
 * It answers True; or False, having written nothing, when a value does not fit its
 * column or a column is not what it should be: the Python store (``SlotRows._put_row``)
 * then writes the row, or refuses it as an array refuses a value that does not fit.
 *
 * Why: on 3.11 an array's ``append`` converts a 64-bit id through a path built for ints
 * of any size, and a byte or a signed value through argument parsing, at a few hundred
 * instructions a value; a row is nine values and a turn stores four rows. Here each
 * value is read from the int's digits and copied into the column's buffer in place.
 *
 * Safety: each column is taken through the buffer protocol, writable, and checked for
 * its format and length before anything is written; the buffers are released before the
 * call returns, so the arrays stay free to grow. Optional: an install without a C
 * compiler stores rows in Python.
 */
#include "../_kernel.h"
#include <string.h>

#define COLUMNS 9

static const char codes[COLUMNS] = {'Q', 'Q', 'Q', 'B', 'B', 'B', 'I', 'q', 'I'};
static const Py_ssize_t widths[COLUMNS] = {8, 8, 8, 1, 1, 1, 4, 8, 4};
static const uint64_t highest[COLUMNS] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, 0xFF, 0xFF, 0xFF,
                                          0xFFFFFFFF, 0, 0xFFFFFFFF};

/* ``v`` as column ``c`` holds it (two's complement for the signed one): 1, or 0 when it
 * does not fit there (nothing raised). */
static int fits(PyObject *v, int c, uint64_t *out) {
    if (codes[c] != 'q') return u64_upto(v, highest[c], out);
    int64_t x;
    if (!i64_of(v, &x)) return 0;
    *out = (uint64_t)x;
    return 1;
}

/* Whether ``view`` is a writable array of column ``c``'s type with a row at ``at``. */
static int column_ok(const Py_buffer *view, int c, Py_ssize_t at) {
    const char *format = view->format;
    if (format != NULL && (format[0] == '<' || format[0] == '@' || format[0] == '=')) format++;
    return format != NULL && format[0] == codes[c] && format[1] == '\0' &&
           view->itemsize == widths[c] && !view->readonly && at < view->len / widths[c];
}

static PyObject *store(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 + COLUMNS || !PyTuple_Check(args[0]) ||
        PyTuple_GET_SIZE(args[0]) != COLUMNS || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "store takes (columns: tuple of 9 arrays, at, 9 values)");
        return NULL;
    }
    Py_ssize_t at = PyLong_AsSsize_t(args[1]);
    if (at == -1 && PyErr_Occurred()) return NULL;
    uint64_t values[COLUMNS];
    for (int c = 0; c < COLUMNS; c++)
        if (!fits(args[2 + c], c, &values[c])) Py_RETURN_FALSE;
    if (at < 0) Py_RETURN_FALSE;
    Py_buffer views[COLUMNS];
    int taken = 0, ok = 1;
    for (; ok && taken < COLUMNS; taken++) {
        PyObject *column = PyTuple_GET_ITEM(args[0], taken);
        if (PyObject_GetBuffer(column, &views[taken], PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            PyErr_Clear();
            break;
        }
        ok = column_ok(&views[taken], taken, at);
    }
    ok = ok && taken == COLUMNS;
    for (int c = 0; c < taken; c++) {
        if (ok) {
            /* The value's low bytes, as the column's width holds them (little-endian or
             * not, a narrowing copy of the native u64 would take the wrong end). */
            char *slot = (char *)views[c].buf + at * widths[c];
            uint64_t v = values[c];
            switch (widths[c]) {
            case 1: *(uint8_t *)slot = (uint8_t)v; break;
            case 4: *(uint32_t *)slot = (uint32_t)v; break;
            default: memcpy(slot, &v, 8); break;
            }
        }
        PyBuffer_Release(&views[c]);
    }
    return PyBool_FromLong(ok);
}

static PyMethodDef rows_methods[] = {
    {"store", (PyCFunction)(void (*)(void))store, METH_FASTCALL,
     "store(columns, at, *values): write a content slot's row; False when it is left to "
     "Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef rows_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "memhop.index._rows",
    .m_doc = "One content slot's row written into the L4 mirror's columns.",
    .m_size = -1,
    .m_methods = rows_methods,
};

PyMODINIT_FUNC PyInit__rows(void) { return PyModule_Create(&rows_module); }
