/* memhop.records._json: the payloads every turn writes (a content line, a topic row,
 * a scene) as Go's json.Marshal writes them, compiled.
 *
 * Responsibility: ``archive``, ``topic`` and ``scene`` return the bytes the record's
 * Python writers give (``_plain_json``, else the field writer ``_written_json``: the
 * references) for the values they take, and None for every other value, which the
 * caller then hands to the field writer (it converts or refuses them). Here a record's
 * fields are checked and written in one call, where Python makes a call or more a field.
 *
 * What they take: ints (exactly ``int``) in each field's Go range, a content line's byte
 * fields also members of the types given (its enums), texts exactly ``str`` and a topic's
 * keywords an exact tuple of them; ``topic``'s parent may be None (left out). Texts
 * are escaped as Go escapes them: the short forms of quote, backslash, \b, \f, \n, \r,
 * \t; other control characters, <, >, &, U+2028 and U+2029 as \u00XX / \u20XX; a lone
 * surrogate (a Python str's stand-in for a byte that was not UTF-8) as \ufffd, as Go
 * writes each invalid byte. Optional: without a compiler the Python code runs.
 */
#include "../_kernel.h"
#include <string.h>

/* ---- values ----------------------------------------------------------------------- */

/* An exact int in [0, hi]: 1 and the value, else 0 (nothing raised: the caller answers
 * None). */
static int plain_u64(PyObject *v, uint64_t hi, uint64_t *out) {
    return PyLong_CheckExact(v) && u64_upto(v, hi, out);
}

static int plain_i64(PyObject *v, int64_t *out) {
    return PyLong_CheckExact(v) && i64_of(v, out);
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

/* Where a payload is written: a bytes object made at a bound no payload passes (the
 * literals and numbers of any record fit in ``FIXED_BOUND``; a code point takes at most
 * ``CHAR_BOUND`` bytes, an escape's six), cut to its size once written. */
typedef struct {
    char *at;
    Py_ssize_t size;
} Out;

#define FIXED_BOUND 512
#define CHAR_BOUND 6

/* A string literal, its length counted by the compiler. */
#define PUT(out, literal) put((out), (literal), (Py_ssize_t)sizeof(literal) - 1)

static void put(Out *out, const char *text, Py_ssize_t n) {
    memcpy(out->at, text, (size_t)n);
    out->at += n;
    out->size += n;
}

/* A bytes object of ``bound`` bytes to write into, and ``out`` at its start (NULL: no
 * memory). */
static PyObject *start_payload(Py_ssize_t bound, Out *out) {
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, bound);
    if (bytes != NULL) {
        out->at = PyBytes_AS_STRING(bytes);
        out->size = 0;
    }
    return bytes;
}

/* The payload cut to what was written (NULL: no memory). */
static PyObject *end_payload(PyObject *bytes, const Out *out) {
    return _PyBytes_Resize(&bytes, out->size) < 0 ? NULL : bytes;
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
        PUT(out, "-");
        put_u64(out, (uint64_t)0 - (uint64_t)x); /* INT64_MIN included */
    } else {
        put_u64(out, (uint64_t)x);
    }
}

static const char HEX[] = "0123456789abcdef";

/* The ASCII bytes Go escapes in a string (``put_char`` says how). */
static const unsigned char ESCAPED[128] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1, ['<'] = 1, ['>'] = 1, ['&'] = 1,
};

/* One code point, escaped as Go escapes it, in UTF-8. */
static void put_char(Out *out, Py_UCS4 c) {
    char buf[6];
    switch (c) {
    case '"':
        PUT(out, "\\\"");
        return;
    case '\\':
        PUT(out, "\\\\");
        return;
    case '\b':
        PUT(out, "\\b");
        return;
    case '\f':
        PUT(out, "\\f");
        return;
    case '\n':
        PUT(out, "\\n");
        return;
    case '\r':
        PUT(out, "\\r");
        return;
    case '\t':
        PUT(out, "\\t");
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
        PUT(out, "\\ufffd");
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
    PUT(out, "\"");
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (PyUnicode_IS_ASCII(s)) {
        const char *p = (const char *)PyUnicode_1BYTE_DATA(s);
        Py_ssize_t start = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if (ESCAPED[c]) {
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
    PUT(out, "\"");
}

typedef struct {
    uint64_t id_hash, kind, seq, ctype, role, topic_id, node_seq;
    int64_t created_at;
    PyObject *event_type, *content;
} Line;

static void put_line(Out *out, const Line *l) {
    PUT(out, "{\"id_hash\":");
    put_u64(out, l->id_hash);
    PUT(out, ",\"kind\":");
    put_u64(out, l->kind);
    PUT(out, ",\"seq\":");
    put_u64(out, l->seq);
    PUT(out, ",\"content_type\":");
    put_u64(out, l->ctype);
    PUT(out, ",\"role\":");
    put_u64(out, l->role);
    PUT(out, ",\"topic_id\":");
    put_u64(out, l->topic_id);
    if (PyUnicode_GET_LENGTH(l->event_type)) {
        PUT(out, ",\"event_type\":");
        put_text(out, l->event_type);
    }
    if (l->node_seq) {
        PUT(out, ",\"node_seq\":");
        put_u64(out, l->node_seq);
    }
    PUT(out, ",\"created_at\":");
    put_i64(out, l->created_at);
    PUT(out, ",\"content\":");
    put_text(out, l->content);
    PUT(out, "}");
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
    Out out;
    Py_ssize_t chars = PyUnicode_GET_LENGTH(l.event_type) + PyUnicode_GET_LENGTH(l.content);
    PyObject *bytes = start_payload(FIXED_BOUND + CHAR_BOUND * chars, &out);
    if (bytes == NULL) return NULL;
    put_line(&out, &l);
    return end_payload(bytes, &out);
}

/* topic(id, scene_id, parent_id, depth, name, fused_keywords, user_timestamp,
 *       agent_timestamp) -> bytes | None */
static void put_topic(Out *out, PyObject *const *args, const uint64_t *n, const int64_t *at) {
    PUT(out, "{\"id\":");
    put_u64(out, n[0]);
    PUT(out, ",\"scene_id\":");
    put_u64(out, n[1]);
    if (args[2] != Py_None) {
        PUT(out, ",\"parent_id\":");
        put_u64(out, n[2]);
    }
    PUT(out, ",\"depth\":");
    put_u64(out, n[3]);
    if (PyUnicode_GET_LENGTH(args[4])) {
        PUT(out, ",\"name\":");
        put_text(out, args[4]);
    }
    PUT(out, ",\"fused_keywords\":[");
    PyObject *words = args[5];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(words); i++) {
        if (i) PUT(out, ",");
        put_text(out, PyTuple_GET_ITEM(words, i));
    }
    PUT(out, "],\"user_timestamp\":");
    put_i64(out, at[0]);
    PUT(out, ",\"agent_timestamp\":");
    put_i64(out, at[1]);
    PUT(out, "}");
}

static PyObject *topic(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "topic expected 8 arguments, got %zd", nargs);
        return NULL;
    }
    uint64_t n[4] = {0, 0, 0, 0};
    int64_t at[2];
    PyObject *words = args[5];
    int plain = plain_u64(args[0], UINT64_MAX, &n[0]) && plain_u64(args[1], UINT64_MAX, &n[1]) &&
                (args[2] == Py_None || plain_u64(args[2], UINT64_MAX, &n[2])) &&
                plain_u64(args[3], 0xFF, &n[3]) && PyUnicode_CheckExact(args[4]) &&
                PyTuple_CheckExact(words) && plain_i64(args[6], &at[0]) &&
                plain_i64(args[7], &at[1]);
    for (Py_ssize_t i = 0; plain && i < PyTuple_GET_SIZE(words); i++) {
        plain = PyUnicode_CheckExact(PyTuple_GET_ITEM(words, i));
    }
    if (!plain) Py_RETURN_NONE;
    Py_ssize_t bound = FIXED_BOUND + CHAR_BOUND * PyUnicode_GET_LENGTH(args[4]);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(words); i++) /* a word, its quotes, a comma */
        bound += CHAR_BOUND * PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(words, i)) + 3;
    Out out;
    PyObject *bytes = start_payload(bound, &out);
    if (bytes == NULL) return NULL;
    put_topic(&out, args, n, at);
    return end_payload(bytes, &out);
}

/* scene(scene_id, scene_name, turn_seq, last_used_at, l3_id) -> bytes | None */
static void put_scene(Out *out, PyObject *name, const uint64_t *n, int64_t used) {
    PUT(out, "{\"scene_id\":");
    put_u64(out, n[0]);
    PUT(out, ",\"scene_name\":");
    put_text(out, name);
    if (n[1]) {
        PUT(out, ",\"turn_seq\":");
        put_u64(out, n[1]);
    }
    if (used) {
        PUT(out, ",\"last_used_at\":");
        put_i64(out, used);
    }
    PUT(out, ",\"l3_id\":");
    put_u64(out, n[2]);
    PUT(out, "}");
}

static PyObject *scene(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "scene expected 5 arguments, got %zd", nargs);
        return NULL;
    }
    uint64_t n[3];
    int64_t used;
    int plain = plain_u64(args[0], UINT64_MAX, &n[0]) && PyUnicode_CheckExact(args[1]) &&
                plain_u64(args[2], UINT64_MAX, &n[1]) && plain_i64(args[3], &used) &&
                plain_u64(args[4], UINT64_MAX, &n[2]);
    if (!plain) Py_RETURN_NONE;
    Out out;
    PyObject *bytes = start_payload(FIXED_BOUND + CHAR_BOUND * PyUnicode_GET_LENGTH(args[1]), &out);
    if (bytes == NULL) return NULL;
    put_scene(&out, args[1], n, used);
    return end_payload(bytes, &out);
}

static PyMethodDef json_methods[] = {
    {"archive", (PyCFunction)(void (*)(void))archive, METH_FASTCALL,
     "A content line's payload as Go writes it, or None for values the writer must take."},
    {"topic", (PyCFunction)(void (*)(void))topic, METH_FASTCALL,
     "A topic row's payload as Go writes it, or None for values the writer must take."},
    {"scene", (PyCFunction)(void (*)(void))scene, METH_FASTCALL,
     "A scene's payload as Go writes it, or None for values the writer must take."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef json_module = {
    PyModuleDef_HEAD_INIT, "memhop.records._json",
    "The payloads every turn writes, as Go writes them, compiled (the records' Python "
    "writers are the reference).",
    -1, json_methods,
};

PyMODINIT_FUNC PyInit__json(void) { return PyModule_Create(&json_module); }
