/* memhop.records._json: a content line's payload (ArchiveSlot) as Go's json.Marshal
 * writes it, compiled.
 *
 * Responsibility: ``archive(...)`` returns the same bytes as
 * ``ArchiveSlot._plain_json`` (the Python reference) for the values that path takes,
 * and None for every other value, which the caller then hands to the field writer
 * (``_written_json``: it converts or refuses them). Every turn writes several lines;
 * here their fields are checked and written in one call, where Python makes a call or
 * more a field.
 *
 * What it takes: ints (exactly ``int``) in each field's Go range, a byte field also a
 * member of one of the types given (its enums), and both texts exactly ``str``. Texts
 * are escaped as Go escapes them: the short forms of quote, backslash, \b, \f, \n, \r,
 * \t; other control characters, <, >, &, U+2028 and U+2029 as \u00XX / \u20XX; a lone
 * surrogate (a Python str's stand-in for a byte that was not UTF-8) as \ufffd, as Go
 * writes each invalid byte. Optional: without a compiler the Python code runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---- values ----------------------------------------------------------------------- */

/* An exact int in [0, hi]: 1 and the value, else 0 (nothing raised: the caller answers
 * None). */
static int plain_u64(PyObject *v, uint64_t hi, uint64_t *out) {
    if (!PyLong_CheckExact(v)) return 0;
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (x > hi) return 0;
    *out = x;
    return 1;
}

static int plain_i64(PyObject *v, int64_t *out) {
    if (!PyLong_CheckExact(v)) return 0;
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = x;
    return 1;
}

/* A byte field: an exact int, or a member of one of ``types`` (an enum whose members
 * are ints), in [0, 255]. */
static int plain_byte(PyObject *v, PyObject *types, uint64_t *out) {
    if (!PyLong_CheckExact(v)) {
        int member = 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++) {
            if ((PyObject *)Py_TYPE(v) == PyTuple_GET_ITEM(types, i)) member = 1;
        }
        if (!member || !PyLong_Check(v)) return 0;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (x < 0 || x > 0xFF) return 0;
    *out = (uint64_t)x;
    return 1;
}

/* ---- writing ---------------------------------------------------------------------- */

typedef struct {
    char *at; /* NULL while sizing: only ``size`` counts */
    Py_ssize_t size;
} Out;

static void put(Out *out, const char *text, Py_ssize_t n) {
    if (out->at != NULL) {
        memcpy(out->at, text, (size_t)n);
        out->at += n;
    }
    out->size += n;
}

static void put_u64(Out *out, uint64_t x) {
    char digits[20];
    int n = 0;
    do {
        digits[19 - n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    put(out, digits + 20 - n, n);
}

static void put_i64(Out *out, int64_t x) {
    if (x < 0) {
        put(out, "-", 1);
        put_u64(out, (uint64_t)0 - (uint64_t)x); /* INT64_MIN included */
    } else {
        put_u64(out, (uint64_t)x);
    }
}

static const char HEX[] = "0123456789abcdef";

/* One code point, escaped as Go escapes it, in UTF-8. */
static void put_char(Out *out, Py_UCS4 c) {
    char buf[6];
    switch (c) {
    case '"':
        put(out, "\\\"", 2);
        return;
    case '\\':
        put(out, "\\\\", 2);
        return;
    case '\b':
        put(out, "\\b", 2);
        return;
    case '\f':
        put(out, "\\f", 2);
        return;
    case '\n':
        put(out, "\\n", 2);
        return;
    case '\r':
        put(out, "\\r", 2);
        return;
    case '\t':
        put(out, "\\t", 2);
        return;
    default:
        break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
        buf[0] = '\\';
        buf[1] = 'u';
        buf[2] = HEX[(c >> 12) & 0xF];
        buf[3] = HEX[(c >> 8) & 0xF];
        buf[4] = HEX[(c >> 4) & 0xF];
        buf[5] = HEX[c & 0xF];
        put(out, buf, 6);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
        put(out, "\\ufffd", 6);
    } else if (c < 0x80) {
        buf[0] = (char)c;
        put(out, buf, 1);
    } else if (c < 0x800) {
        buf[0] = (char)(0xC0 | (c >> 6));
        buf[1] = (char)(0x80 | (c & 0x3F));
        put(out, buf, 2);
    } else if (c < 0x10000) {
        buf[0] = (char)(0xE0 | (c >> 12));
        buf[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (c & 0x3F));
        put(out, buf, 3);
    } else {
        buf[0] = (char)(0xF0 | (c >> 18));
        buf[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        buf[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        buf[3] = (char)(0x80 | (c & 0x3F));
        put(out, buf, 4);
    }
}

/* A str between quotes, escaped; an ASCII run that needs no escape is copied whole. */
static void put_text(Out *out, PyObject *s) {
    put(out, "\"", 1);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (PyUnicode_IS_ASCII(s)) {
        const char *p = (const char *)PyUnicode_1BYTE_DATA(s);
        Py_ssize_t start = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&') {
                put(out, p + start, i - start);
                put_char(out, c);
                start = i + 1;
            }
        }
        put(out, p + start, n - start);
    } else {
        int kind = PyUnicode_KIND(s);
        const void *data = PyUnicode_DATA(s);
        for (Py_ssize_t i = 0; i < n; i++) put_char(out, PyUnicode_READ(kind, data, i));
    }
    put(out, "\"", 1);
}

typedef struct {
    uint64_t id_hash, kind, seq, ctype, role, topic_id, node_seq;
    int64_t created_at;
    PyObject *event_type, *content;
} Line;

static void put_line(Out *out, const Line *l) {
    put(out, "{\"id_hash\":", 11);
    put_u64(out, l->id_hash);
    put(out, ",\"kind\":", 8);
    put_u64(out, l->kind);
    put(out, ",\"seq\":", 7);
    put_u64(out, l->seq);
    put(out, ",\"content_type\":", 16);
    put_u64(out, l->ctype);
    put(out, ",\"role\":", 8);
    put_u64(out, l->role);
    put(out, ",\"topic_id\":", 12);
    put_u64(out, l->topic_id);
    if (PyUnicode_GET_LENGTH(l->event_type)) {
        put(out, ",\"event_type\":", 14);
        put_text(out, l->event_type);
    }
    if (l->node_seq) {
        put(out, ",\"node_seq\":", 12);
        put_u64(out, l->node_seq);
    }
    put(out, ",\"created_at\":", 14);
    put_i64(out, l->created_at);
    put(out, ",\"content\":", 11);
    put_text(out, l->content);
    put(out, "}", 1);
}

/* archive(id_hash, kind, seq, content_type, role, topic_id, event_type, node_seq,
 *         created_at, content, byte_types) -> bytes | None */
static PyObject *archive(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_Format(PyExc_TypeError, "archive expected 11 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *types = args[10];
    if (!PyTuple_Check(types)) {
        PyErr_SetString(PyExc_TypeError, "archive's byte_types must be a tuple");
        return NULL;
    }
    Line l;
    l.event_type = args[6];
    l.content = args[9];
    int plain = plain_u64(args[0], UINT64_MAX, &l.id_hash) &&
                plain_byte(args[1], types, &l.kind) && plain_u64(args[2], UINT64_MAX, &l.seq) &&
                plain_byte(args[3], types, &l.ctype) && plain_byte(args[4], types, &l.role) &&
                plain_u64(args[5], UINT64_MAX, &l.topic_id) && PyUnicode_CheckExact(l.event_type) &&
                plain_u64(args[7], 0xFFFFFFFFu, &l.node_seq) &&
                plain_i64(args[8], &l.created_at) && PyUnicode_CheckExact(l.content);
    if (!plain) Py_RETURN_NONE;
    Out sizing = {NULL, 0};
    put_line(&sizing, &l);
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, sizing.size);
    if (bytes == NULL) return NULL;
    Out writing = {PyBytes_AS_STRING(bytes), 0};
    put_line(&writing, &l);
    return bytes;
}

static PyMethodDef json_methods[] = {
    {"archive", (PyCFunction)(void (*)(void))archive, METH_FASTCALL,
     "A content line's payload as Go writes it, or None for values the writer must take."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef json_module = {
    PyModuleDef_HEAD_INIT, "memhop.records._json",
    "A content line's payload as Go writes it, compiled (ArchiveSlot._plain_json is the "
    "reference).",
    -1, json_methods,
};

PyMODINIT_FUNC PyInit__json(void) { return PyModule_Create(&json_module); }
