/* memhop.engine._frames: a write batch's frames, encoded in one call.
 *
 * Responsibility: ``encode_batch(entries)`` returns what ``writes.encode_batch`` (the
 * Python reference) returns for a batch of plain entries: the frames back to back
 * (each the 22 header bytes, type, flags 0, payload length, agent id and id hash,
 * little-endian; the CRC32 of those bytes and then the payload; the payload) and where
 * each frame sits, ``(agent_id, id_hash, rec_type, offset)``, the entry's own objects.
 * For any entry it does not take (not a 4-tuple of ints in their ranges and exact bytes
 * within the frame limit) it returns None, and the Python encoder encodes the batch, refusing what it
 * must. The CRC is zlib's (the reflected polynomial 0xEDB88320), from a table this
 * module fills once at import and never changes.
 */
#include "../_kernel.h"
#include <string.h>

#define HEAD_SIZE 22
#define FRAME_HEAD 26
#define MAX_PAYLOAD ((1 << 24) - 1)

/* crc_table[0] is the byte-at-a-time table; crc_table[k][b] is byte b's CRC followed by
 * k zero bytes, so eight bytes are folded in with eight lookups ("slicing by 8"). */
static uint32_t crc_table[8][256];

static void fill_crc_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            crc_table[k][n] = crc_table[0][crc_table[k - 1][n] & 0xFF] ^ (crc_table[k - 1][n] >> 8);
}

static uint32_t crc_more(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    crc = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
              crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
              crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    }
    for (; n > 0; p++, n--) crc = crc_table[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static void put_le(unsigned char *at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; i++) at[i] = (unsigned char)(value >> (8 * i));
}

/* An int in [0, hi] (an enum member's value as ``struct.pack`` reads it: the int's own,
 * not a conversion's): 1 and its value, else 0 (nothing raised). */
static int plain_u64(PyObject *v, uint64_t hi, uint64_t *out) {
    return PyLong_Check(v) && u64_upto(v, hi, out);
}

/* Entry ``e``'s fields if it is one this module takes (see the header). */
static int plain_entry(PyObject *e, uint64_t *agent, uint64_t *type, uint64_t *id,
                       PyObject **payload) {
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 4) return 0;
    *payload = PyTuple_GET_ITEM(e, 3);
    return plain_u64(PyTuple_GET_ITEM(e, 0), UINT64_MAX, agent) &&
           plain_u64(PyTuple_GET_ITEM(e, 1), 0xFF, type) &&
           plain_u64(PyTuple_GET_ITEM(e, 2), UINT64_MAX, id) && PyBytes_CheckExact(*payload) &&
           PyBytes_GET_SIZE(*payload) <= MAX_PAYLOAD;
}

static PyObject *encode_batch(PyObject *module, PyObject *entries) {
    PyObject *seq = PySequence_Fast(entries, "encode_batch takes a sequence of entries");
    if (seq == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t agent, type, id;
        PyObject *payload;
        if (!plain_entry(items[i], &agent, &type, &id, &payload)) {
            Py_DECREF(seq);
            Py_RETURN_NONE;
        }
        total += FRAME_HEAD + PyBytes_GET_SIZE(payload);
    }
    PyObject *blob = PyBytes_FromStringAndSize(NULL, total);
    PyObject *placements = PyList_New(count);
    if (blob == NULL || placements == NULL) goto fail;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(blob);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t agent, type, id;
        PyObject *payload;
        plain_entry(items[i], &agent, &type, &id, &payload); /* taken above */
        Py_ssize_t size = PyBytes_GET_SIZE(payload);
        unsigned char *frame = out + at;
        frame[0] = (unsigned char)type;
        frame[1] = 0;
        put_le(frame + 2, (uint64_t)size, 4);
        put_le(frame + 6, agent, 8);
        put_le(frame + 14, id, 8);
        const unsigned char *body = (const unsigned char *)PyBytes_AS_STRING(payload);
        put_le(frame + HEAD_SIZE, crc_more(crc_more(0, frame, HEAD_SIZE), body, size), 4);
        memcpy(frame + FRAME_HEAD, body, (size_t)size);
        PyObject *offset = PyLong_FromSsize_t(at);
        if (offset == NULL) goto fail;
        PyObject *e = items[i];
        PyObject *placed = PyTuple_Pack(4, PyTuple_GET_ITEM(e, 0), PyTuple_GET_ITEM(e, 2),
                                        PyTuple_GET_ITEM(e, 1), offset);
        Py_DECREF(offset);
        if (placed == NULL) goto fail;
        PyList_SET_ITEM(placements, i, placed);
        at += FRAME_HEAD + size;
    }
    Py_DECREF(seq);
    PyObject *done = PyTuple_Pack(2, blob, placements);
    Py_DECREF(blob);
    Py_DECREF(placements);
    return done;
fail:
    Py_DECREF(seq);
    Py_XDECREF(blob);
    Py_XDECREF(placements);
    return NULL;
}

static PyMethodDef frames_methods[] = {
    {"encode_batch", (PyCFunction)encode_batch, METH_O,
     "The batch's frames back to back and where each sits, or None for an entry the "
     "Python encoder must take."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef frames_module = {
    PyModuleDef_HEAD_INIT, "memhop.engine._frames",
    "A write batch's frames, encoded in one call (writes.encode_batch is the reference).", -1,
    frames_methods,
};

PyMODINIT_FUNC PyInit__frames(void) {
    fill_crc_table();
    return PyModule_Create(&frames_module);
}
