/* memhop.index._bm25: BM25 over a query's postings, in C, and the per-item work of
 * dropping removed documents from the index (``kept``, ``postings_kept``: a repack at
 * 10^5 documents, 1.7 s in Python's C-level maps).
 *
 * Responsibility: the documents at or above the k-th best score for a query's lists,
 * summed term by term in the order given. Given each term's bound (the most it gives
 * any document), a term-at-a-time MaxScore: once the terms left cannot lift a document
 * not yet reached to the k-th best partial score, only the documents that can still
 * reach it are scored further, each found in a term's ascending slots by bisection.
 * The pure-Python ranking (memhop/index/recall_rank.py) gives the same documents with
 * the same scores, bit for bit: each term's share is (w * tf) / ((tf + base) +
 * per_length * length) in doubles, added in the same order (built with
 * -ffp-contract=off so that no step is fused); the pruning's comparisons carry a
 * relative margin of 1e-9, so rounding never drops a document that reaches the top.
 *
 * Optional: a build without a C compiler leaves it out and recall ranks in Python.
 * The columns are read through the buffer protocol and held for the call. The
 * interpreter is kept throughout (0.3 ms a query at 10^5 documents): released,
 * a busy Dream thread would take it, and the host's call would wait up to a switch
 * interval (5 ms) to get it back.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    int held;
} Column;

/* A contiguous buffer of 1, 2, 4 or 8-byte items, taken (released again on refusal). */
static int raw_take(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    Py_ssize_t size = view->itemsize;
    if (!(size == 1 || size == 2 || size == 4 || size == 8)) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "%s must be an array of 1, 2, 4 or 8-byte items", what);
        return -1;
    }
    return 0;
}

/* ``raw_take`` of a column of unsigned integers, held until ``column_drop``. */
static int column_take(PyObject *obj, Column *col, const char *what) {
    if (raw_take(obj, &col->view, what) < 0) return -1;
    col->held = 1;
    const char *f = col->view.format;
    int unsigned_code = f != NULL && f[0] != '\0' && f[1] == '\0' && strchr("BHILQ", f[0]) != NULL;
    if (!unsigned_code) {
        PyErr_Format(PyExc_TypeError, "%s must be an array of unsigned integers", what);
        return -1;
    }
    return 0;
}

static void column_drop(Column *col) {
    if (col->held) {
        PyBuffer_Release(&col->view);
        col->held = 0;
    }
}

static Py_ssize_t column_len(const Column *col) { return col->view.len / col->view.itemsize; }

/* Item ``i`` of an array of ``T`` at any address: a column read in place from a mapped
 * recall file is packed, not aligned, and a cast pointer's load would need it aligned. A
 * copy of the item's bytes is one load on the machines that allow it. */
#define DEFINE_LOAD(T)                                                                      \
    static inline T load_##T(const void *base, Py_ssize_t i) {                              \
        T v;                                                                                \
        memcpy(&v, (const char *)base + i * (Py_ssize_t)sizeof(T), sizeof(T));              \
        return v;                                                                           \
    }
DEFINE_LOAD(uint16_t)
DEFINE_LOAD(uint32_t)
DEFINE_LOAD(uint64_t)
DEFINE_LOAD(int64_t)

static inline uint64_t column_at(const Column *col, Py_ssize_t i) {
    const void *p = col->view.buf;
    switch (col->view.itemsize) {
    case 1:
        return ((const uint8_t *)p)[i];
    case 2:
        return load_uint16_t(p, i);
    case 4:
        return load_uint32_t(p, i);
    default:
        return load_uint64_t(p, i);
    }
}

static void sift_down(double *heap, Py_ssize_t n, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t left = 2 * i + 1, right = left + 1, least = i;
        if (left < n && heap[left] < heap[least]) least = left;
        if (right < n && heap[right] < heap[least]) least = right;
        if (least == i) return;
        double t = heap[i];
        heap[i] = heap[least];
        heap[least] = t;
        i = least;
    }
}

/* The k-th best of the touched documents' scores (want <= touched). */
static double kth_best(const double *acc, const uint32_t *touched, Py_ssize_t n_touched,
                       double *heap, Py_ssize_t want) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < n_touched; i++) {
        double s = acc[touched[i]];
        if (n < want) {
            heap[n++] = s;
            if (n == want) {
                for (Py_ssize_t k = want / 2; k >= 0; k--) sift_down(heap, n, k);
            }
        } else if (s > heap[0]) {
            heap[0] = s;
            sift_down(heap, n, 0);
        }
    }
    return heap[0];
}

/* A term's share of a document's score: the one formula every path adds, in this order
 * (the Python ranking's, bit for bit). */
static inline double share_of(uint64_t count, uint64_t length, double w, double base,
                              double per_length) {
    double tf = (double)count;
    return (w * tf) / ((tf + base) + per_length * (double)length);
}

/* Add a term's share to the document at ``slot`` (none to a removed one, of length 0),
 * noting it in ``touched`` the first time; the count of noted documents. */
static inline Py_ssize_t add_share(double *acc, uint32_t *touched, Py_ssize_t n_touched,
                                   uint32_t slot, uint64_t length, uint64_t count, double w,
                                   double base, double per_length) {
    if (length == 0) return n_touched;
    double share = share_of(count, length, w, base, per_length);
    /* Noted once, without a branch (a new document is hard to predict): shares are > 0,
     * so a slot still at 0 was not touched before. */
    touched[n_touched] = slot;
    n_touched += acc[slot] == 0.0;
    acc[slot] += share;
    return n_touched;
}

/* One term's postings in the index's own layout (SLOT_T slots, one-byte counts, four-byte
 * lengths): the item sizes fixed, the loop is several times tighter than item by item.
 * Sets *past_end and stops at a slot past the lengths; returns the documents noted. */
#define SUM_TERM(NAME, SLOT_T)                                                              \
    static Py_ssize_t NAME(const void *slots, const void *counts, const void *lengths,      \
                           Py_ssize_t m, Py_ssize_t n_docs, double w, double base,          \
                           double per_length, double *acc, uint32_t *touched,               \
                           Py_ssize_t n_touched, int *past_end) {                           \
        const uint8_t *count_of = (const uint8_t *)counts;                                  \
        for (Py_ssize_t j = 0; j < m; j++) {                                                \
            uint32_t at = load_##SLOT_T(slots, j);                                          \
            if ((Py_ssize_t)at >= n_docs) {                                                 \
                *past_end = 1;                                                              \
                break;                                                                      \
            }                                                                               \
            n_touched = add_share(acc, touched, n_touched, at, load_uint32_t(lengths, at),  \
                                  count_of[j], w, base, per_length);                        \
        }                                                                                   \
        return n_touched;                                                                   \
    }

SUM_TERM(sum_term_u16, uint16_t)
SUM_TERM(sum_term_u32, uint32_t)

/* One term's share added to the candidates (the documents whose score is not 0: every
 * other was never reached or was dropped, its score zeroed), over its postings in the
 * index's own layout (as SUM_TERM); 1 at a slot past the lengths, else 0. */
#define ADD_MARKED(NAME, SLOT_T)                                                            \
    static int NAME(const void *slots, const void *counts, const void *lengths,             \
                    Py_ssize_t m, Py_ssize_t n_docs, double w, double base,                 \
                    double per_length, double *acc) {                                       \
        const uint8_t *count_of = (const uint8_t *)counts;                                  \
        for (Py_ssize_t j = 0; j < m; j++) {                                                \
            uint32_t at = load_##SLOT_T(slots, j);                                          \
            if ((Py_ssize_t)at >= n_docs) return 1;                                         \
            if (acc[at] != 0.0) {                                                           \
                acc[at] += share_of(count_of[j], load_uint32_t(lengths, at), w, base,      \
                                    per_length);                                            \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }

ADD_MARKED(add_marked_u16, uint16_t)
ADD_MARKED(add_marked_u32, uint32_t)

/* Add one term's share to each candidate (each noted before): by bisection of the term's
 * ascending slots when the candidates are few against its postings, else by a pass over
 * them, a posting counted where its document's score is not 0. 1 when a slot is past the
 * lengths (the pass reads every one), else 0. */
static int add_to_candidates(const Column *s, const Column *c, const Column *lengths, double w,
                             double base, double per_length, double *acc,
                             const uint32_t *cands, Py_ssize_t n_cands, Py_ssize_t n_docs) {
    Py_ssize_t m = column_len(s);
    if (n_cands * 24 < m) {
        for (Py_ssize_t i = 0; i < n_cands; i++) {
            uint64_t slot = cands[i];
            Py_ssize_t lo = 0, hi = m;
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (column_at(s, mid) < slot) lo = mid + 1;
                else hi = mid;
            }
            if (lo < m && column_at(s, lo) == slot) {
                acc[slot] += share_of(column_at(c, lo), column_at(lengths, (Py_ssize_t)slot), w,
                                      base, per_length);
            }
        }
        return 0;
    }
    if (c->view.itemsize == 1 && lengths->view.itemsize == 4 && s->view.itemsize == 2) {
        return add_marked_u16(s->view.buf, c->view.buf, lengths->view.buf, m, n_docs, w, base,
                              per_length, acc);
    }
    if (c->view.itemsize == 1 && lengths->view.itemsize == 4 && s->view.itemsize == 4) {
        return add_marked_u32(s->view.buf, c->view.buf, lengths->view.buf, m, n_docs, w, base,
                              per_length, acc);
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        uint64_t slot = column_at(s, j);
        if (slot >= (uint64_t)n_docs) return 1;
        if (acc[slot] != 0.0) {
            acc[slot] += share_of(column_at(c, j), column_at(lengths, (Py_ssize_t)slot), w, base,
                                  per_length);
        }
    }
    return 0;
}

/* An 8-byte column held in two parts (the file's, then the session's), as ``SplitColumn``. */
typedef struct {
    Py_buffer base, tail;
    int held;
} Split;

static int split_take(PyObject *base, PyObject *tail, Split *split, const char *what) {
    if (raw_take(base, &split->base, what) < 0) return -1;
    if (raw_take(tail, &split->tail, what) < 0) {
        PyBuffer_Release(&split->base);
        return -1;
    }
    split->held = 1;
    if ((split->base.len && split->base.itemsize != 8) || split->tail.itemsize != 8) {
        PyErr_Format(PyExc_TypeError, "%s must be 8-byte items", what);
        return -1;
    }
    return 0;
}

static void split_drop(Split *split) {
    if (split->held) {
        PyBuffer_Release(&split->base);
        PyBuffer_Release(&split->tail);
        split->held = 0;
    }
}

/* The item at ``slot``; 0 past both parts (no document there passes a filter on it). */
static int64_t split_at(const Split *split, Py_ssize_t slot) {
    Py_ssize_t n_base = split->base.len / 8, n_tail = split->tail.len / 8;
    if (slot < n_base) return load_int64_t(split->base.buf, slot);
    slot -= n_base;
    return slot < n_tail ? load_int64_t(split->tail.buf, slot) : 0;
}

/* Which documents rank: of one scene (0: any), made from ``start`` to ``end`` (0: open). */
typedef struct {
    Split scenes, created;
    uint64_t scene;
    int64_t start, end;
    int on;
} Where;

static int where_take(PyObject *obj, Where *where) {
    if (obj == Py_None) return 0;
    PyObject *scenes_base, *scenes_tail, *created_base, *created_tail;
    unsigned long long scene;
    long long start, end;
    if (!PyArg_ParseTuple(obj, "OOKOOLL:where", &scenes_base, &scenes_tail, &scene,
                          &created_base, &created_tail, &start, &end)) {
        return -1;
    }
    where->on = 1;
    where->scene = scene;
    where->start = start;
    where->end = end;
    if (split_take(scenes_base, scenes_tail, &where->scenes, "scenes") < 0) return -1;
    return split_take(created_base, created_tail, &where->created, "created");
}

static void where_drop(Where *where) {
    split_drop(&where->scenes);
    split_drop(&where->created);
}

static int where_passes(const Where *where, Py_ssize_t slot) {
    if (where->scene && (uint64_t)split_at(&where->scenes, slot) != where->scene) return 0;
    int64_t at = split_at(&where->created, slot);
    return !(where->start && at < where->start) && !(where->end && at > where->end);
}

/* A tie at the want-th best score broken newest first: the least created time a tied
 * document may have and still place among the ``places`` newest of them (a min-heap
 * of the newest seen, ``places`` long), or INT64_MIN when all of them fit. -2 with an
 * error set when memory runs out. */
static int newest_cut(const double *acc, const uint32_t *touched, Py_ssize_t n_touched,
                      double kth, Py_ssize_t places, const Split *created, int64_t *cut) {
    *cut = INT64_MIN;
    if (places <= 0) return 0;
    int64_t *heap = PyMem_Malloc(places * sizeof(int64_t));
    if (heap == NULL) {
        PyErr_NoMemory();
        return -2;
    }
    Py_ssize_t size = 0, tied = 0;
    for (Py_ssize_t i = 0; i < n_touched; i++) {
        if (acc[touched[i]] != kth) continue;
        tied++;
        int64_t at = split_at(created, touched[i]);
        if (size < places) { /* sift up */
            Py_ssize_t j = size++;
            while (j > 0 && heap[(j - 1) / 2] > at) {
                heap[j] = heap[(j - 1) / 2];
                j = (j - 1) / 2;
            }
            heap[j] = at;
        } else if (at > heap[0]) { /* replace the least, sift down */
            Py_ssize_t j = 0;
            for (;;) {
                Py_ssize_t child = 2 * j + 1;
                if (child >= size) break;
                if (child + 1 < size && heap[child + 1] < heap[child]) child++;
                if (heap[child] >= at) break;
                heap[j] = heap[child];
                j = child;
            }
            heap[j] = at;
        }
    }
    if (tied > places) *cut = heap[0];
    PyMem_Free(heap);
    return 0;
}

PyDoc_STRVAR(top_doc,
"top(lists, lengths, base, per_length, want, where=None, scratch=None, created=None)\n"
"    -> list[tuple[float, int]]\n\n"
"``lists``: (slots, counts, weight[, bound]) per query term, in the order their shares\n"
"are added (with every bound given, the search prunes: see the module); ``lengths``:\n"
"each slot's document length (0: removed, skipped); ``where``: None, or (scenes base,\n"
"scenes tail, scene, created base, created tail, start, end) ranking only the documents\n"
"of that scene (0: any) made from start to end (0: open); ``scratch``: None, or a\n"
"writable buffer of zeros the scores are summed in when it holds 8 bytes a slot (left\n"
"zeroed again); ``created``: None, or (created base, created tail), each slot's time, or\n"
"a function returning them, called only when a tie at the k-th has more documents\n"
"than places.\n"
"Returns (score, slot) for every ranked document at or above the ``want``-th best,\n"
"in no order: every one tied at the k-th, or with ``created``, those of them that can\n"
"place when a tie is broken newest first (at least as new as the newest that fill\n"
"the places left).");

static PyObject *top(PyObject *self, PyObject *args) {
    PyObject *lists, *lengths_obj, *where_obj = Py_None, *scratch_obj = Py_None;
    PyObject *created_obj = Py_None, *created_base, *created_tail, *parts = NULL;
    double base, per_length;
    Py_ssize_t want;
    if (!PyArg_ParseTuple(args, "OOddn|OOO:top", &lists, &lengths_obj, &base, &per_length, &want,
                          &where_obj, &scratch_obj, &created_obj)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(lists, "lists must be a sequence of (slots, counts, weight)");
    if (seq == NULL) return NULL;
    Py_ssize_t n_terms = PySequence_Fast_GET_SIZE(seq);
    Py_ssize_t cells = n_terms > 0 ? n_terms : 1;
    Column lengths = {0};
    Where where = {0};
    Split created = {0};
    Column *slots = PyMem_Calloc(cells, sizeof(Column));
    Column *counts = PyMem_Calloc(cells, sizeof(Column));
    double *weights = PyMem_Calloc(cells, sizeof(double));
    double *reach = PyMem_Calloc(cells + 1, sizeof(double)); /* bounds, then what is left */
    double *acc = NULL, *heap = NULL;
    uint32_t *touched = NULL;
    Py_buffer scratch = {0};
    int scratch_held = 0;
    Py_ssize_t n_touched = 0;
    PyObject *out = NULL;
    if (slots == NULL || counts == NULL || weights == NULL || reach == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (column_take(lengths_obj, &lengths, "lengths") < 0) goto done;
    if (where_take(where_obj, &where) < 0) goto done;
    Py_ssize_t n_docs = column_len(&lengths);
    if ((uint64_t)n_docs > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more document slots than 32 bits count");
        goto done;
    }
    Py_ssize_t postings = 0;
    int prune = !where.on; /* a filtered search sums every posting, then filters */
    for (Py_ssize_t t = 0; t < n_terms; t++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, t);
        PyObject *slots_obj, *counts_obj;
        reach[t] = -1.0;
        if (!PyArg_ParseTuple(item, "OOd|d:top", &slots_obj, &counts_obj, &weights[t],
                              &reach[t])) {
            goto done;
        }
        prune = prune && reach[t] >= 0.0;
        if (column_take(slots_obj, &slots[t], "slots") < 0) goto done;
        if (column_take(counts_obj, &counts[t], "counts") < 0) goto done;
        if (column_len(&slots[t]) != column_len(&counts[t])) {
            PyErr_SetString(PyExc_ValueError, "a term's slots and counts differ in length");
            goto done;
        }
        postings += column_len(&slots[t]);
    }
    Py_ssize_t most = postings < n_docs ? postings : n_docs;
    /* The scores: the caller's zeroed scratch when it holds them all (zeroed again before
     * returning, at the slots noted), else a fresh array: zeroing one of n_docs doubles
     * each search costs what the domain holds (9 us at 10^5 documents, 81 at 10^6). */
    if (scratch_obj != Py_None) {
        if (PyObject_GetBuffer(scratch_obj, &scratch, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
            goto done;
        }
        scratch_held = 1;
        if (scratch.len >= (Py_ssize_t)(n_docs * sizeof(double))) acc = scratch.buf;
    }
    if (acc == NULL) acc = PyMem_Calloc(n_docs > 0 ? n_docs : 1, sizeof(double));
    touched = PyMem_Malloc((most + 1) * sizeof(uint32_t)); /* one more: written ahead */
    heap = PyMem_Malloc((want > 0 ? want : 1) * sizeof(double));
    if (acc == NULL || touched == NULL || heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* reach[t]: the most terms t.. give any document (the bounds summed, last first) */
    reach[n_terms] = 0.0;
    for (Py_ssize_t t = n_terms - 1; t >= 0 && prune; t--) reach[t] += reach[t + 1];
    int past_end = 0, closed = 0;
    double kth = 0.0, tried = INFINITY, tried_at = 0.0; /* the last floor, and reach then */
    for (Py_ssize_t t = 0; t < n_terms && !past_end; t++) {
        const Column *s = &slots[t], *c = &counts[t];
        Py_ssize_t m = column_len(s);
        double w = weights[t];
        /* Closed: the candidates only. Else every posting: the index's own layout (two- or
         * four-byte slots, one-byte counts, four-byte lengths) in loops of their own, the
         * item sizes fixed; any other, item by item. */
        if (closed) {
            past_end = add_to_candidates(s, c, &lengths, w, base, per_length, acc, touched,
                                         n_touched, n_docs);
        } else if (c->view.itemsize == 1 && lengths.view.itemsize == 4 && s->view.itemsize == 2) {
            n_touched = sum_term_u16(s->view.buf, c->view.buf, lengths.view.buf, m, n_docs, w,
                                     base, per_length, acc, touched, n_touched, &past_end);
        } else if (c->view.itemsize == 1 && lengths.view.itemsize == 4 && s->view.itemsize == 4) {
            n_touched = sum_term_u32(s->view.buf, c->view.buf, lengths.view.buf, m, n_docs, w,
                                     base, per_length, acc, touched, n_touched, &past_end);
        } else {
            for (Py_ssize_t j = 0; j < m && !past_end; j++) {
                uint64_t slot = column_at(s, j);
                past_end = slot >= (uint64_t)n_docs;
                if (!past_end) {
                    n_touched = add_share(acc, touched, n_touched, (uint32_t)slot,
                                          column_at(&lengths, (Py_ssize_t)slot),
                                          column_at(c, j), w, base, per_length);
                }
            }
        }
        postings -= m; /* what the terms left hold */
        if (!prune || past_end || t + 1 >= n_terms || want <= 0 || n_touched < want) continue;
        double left = reach[t + 1] * (1.0 + 1e-9);
        /* A pass over the scores for a floor is worth it only while it may close the top
         * and costs less than reading the lists left (a score read out of order costs
         * about four postings read in order). The floor cannot pass the bounds of the
         * terms read, nor the last floor plus the bounds of the terms read since. */
        if (!closed && (postings <= 4 * n_touched || left >= reach[0] - reach[t + 1] ||
                        left >= tried + (tried_at - reach[t + 1]))) {
            continue;
        }
        /* Partial scores only grow, so the k-th best of them is a floor for the k-th best
         * score; a document can reach it only with the terms left's bounds. */
        double floor = kth_best(acc, touched, n_touched, heap, want);
        tried = floor, tried_at = reach[t + 1];
        if (!closed && left < floor) closed = 1; /* no document not reached can reach the top */
        if (closed) { /* only those that can still reach it stay */
            Py_ssize_t kept_n = 0;
            for (Py_ssize_t i = 0; i < n_touched; i++) {
                uint32_t slot = touched[i];
                if ((acc[slot] + left) * (1.0 + 1e-9) >= floor) {
                    touched[kept_n++] = slot;
                } else {
                    acc[slot] = 0.0; /* dropped: every score outside ``touched`` is 0 */
                }
            }
            n_touched = kept_n;
        }
    }
    if (where.on && !past_end) { /* the documents the filter keeps, in the order noted */
        Py_ssize_t kept_n = 0;
        for (Py_ssize_t i = 0; i < n_touched; i++) {
            if (where_passes(&where, touched[i])) touched[kept_n++] = touched[i];
            else acc[touched[i]] = 0.0;
        }
        n_touched = kept_n;
    }
    if (want > n_touched) want = n_touched;
    if (!past_end && want > 0) kth = kth_best(acc, touched, n_touched, heap, want);
    if (past_end) {
        PyErr_SetString(PyExc_IndexError, "a posting's slot is past the lengths column");
        goto done;
    }
    int64_t cut = INT64_MIN; /* with ``created``: the oldest a tied document may be */
    if (created_obj != Py_None && want > 0) {
        Py_ssize_t above = 0, at_kth = 0;
        for (Py_ssize_t i = 0; i < n_touched; i++) {
            above += acc[touched[i]] > kth;
            at_kth += acc[touched[i]] == kth;
        }
        if (at_kth > want - above) { /* the times are asked for only now: ties are rare */
            parts = PyCallable_Check(created_obj) ? PyObject_CallNoArgs(created_obj)
                                                  : Py_NewRef(created_obj);
            if (parts == NULL ||
                !PyArg_ParseTuple(parts, "OO:created", &created_base, &created_tail) ||
                split_take(created_base, created_tail, &created, "created") < 0 ||
                newest_cut(acc, touched, n_touched, kth, want - above, &created, &cut) < 0) {
                goto done;
            }
        }
    }
    out = PyList_New(0);
    if (out == NULL || want <= 0) goto done;
    for (Py_ssize_t i = 0; i < n_touched; i++) {
        double score = acc[touched[i]];
        if (score < kth) continue;
        if (score == kth && cut != INT64_MIN && split_at(&created, touched[i]) < cut) continue;
        PyObject *pair = Py_BuildValue("(dI)", score, (unsigned int)touched[i]);
        if (pair == NULL || PyList_Append(out, pair) < 0) {
            Py_XDECREF(pair);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(pair);
    }
done:
    if (slots != NULL && counts != NULL) {
        for (Py_ssize_t t = 0; t < n_terms; t++) {
            column_drop(&slots[t]);
            column_drop(&counts[t]);
        }
    }
    column_drop(&lengths);
    where_drop(&where);
    split_drop(&created);
    Py_XDECREF(parts);
    PyMem_Free(slots);
    PyMem_Free(counts);
    PyMem_Free(weights);
    PyMem_Free(reach);
    if (acc != NULL && scratch_held && acc == scratch.buf) {
        for (Py_ssize_t i = 0; i < n_touched; i++) acc[touched[i]] = 0.0;
    } else {
        PyMem_Free(acc);
    }
    if (scratch_held) PyBuffer_Release(&scratch);
    PyMem_Free(touched);
    PyMem_Free(heap);
    Py_DECREF(seq);
    return out;
}

PyDoc_STRVAR(kept_doc,
"kept(column, keep) -> bytes\n\n"
"The items of ``column`` (any array) whose byte in ``keep`` is not 0, as raw bytes.");

static PyObject *kept(PyObject *self, PyObject *args) {
    PyObject *column_obj;
    Py_buffer column, keep;
    if (!PyArg_ParseTuple(args, "Oy*:kept", &column_obj, &keep)) return NULL;
    if (raw_take(column_obj, &column, "column") < 0) {
        PyBuffer_Release(&keep);
        return NULL;
    }
    PyObject *out = NULL;
    Py_ssize_t size = column.itemsize, n = column.len / size;
    const char *mask = (const char *)keep.buf, *from = (const char *)column.buf;
    if (keep.len != n) {
        PyErr_SetString(PyExc_ValueError, "keep must hold one byte for each item");
        goto done;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) count += mask[i] != 0;
    out = PyBytes_FromStringAndSize(NULL, count * size);
    if (out == NULL) goto done;
    char *to = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n;) {  /* runs of kept items, copied whole */
        if (!mask[i]) {
            i++;
            continue;
        }
        Py_ssize_t j = i;
        while (j < n && mask[j]) j++;
        memcpy(to, from + i * size, (size_t)((j - i) * size));
        to += (j - i) * size;
        i = j;
    }
done:
    PyBuffer_Release(&column);
    PyBuffer_Release(&keep);
    return out;
}

PyDoc_STRVAR(postings_kept_doc,
"postings_kept(slots, counts, lengths, renumber, width) -> (bytes, bytes, int, int)\n\n"
"A term's postings without those of removed documents (length 0), their slots\n"
"renumbered (``renumber[slot]``) as ``width``-byte items; with the highest count\n"
"and the shortest length kept (-1 when none is).");

static PyObject *postings_kept(PyObject *self, PyObject *args) {
    PyObject *slots_obj, *counts_obj, *lengths_obj, *renumber_obj;
    int width;
    if (!PyArg_ParseTuple(args, "OOOOi:postings_kept", &slots_obj, &counts_obj, &lengths_obj,
                          &renumber_obj, &width)) {
        return NULL;
    }
    if (!(width == 2 || width == 4 || width == 8)) {
        PyErr_SetString(PyExc_ValueError, "width must be 2, 4 or 8");
        return NULL;
    }
    Column slots = {0}, counts = {0}, lengths = {0}, renumber = {0};
    PyObject *new_slots = NULL, *new_counts = NULL, *out = NULL;
    if (column_take(slots_obj, &slots, "slots") < 0 || column_take(counts_obj, &counts, "counts") < 0
        || column_take(lengths_obj, &lengths, "lengths") < 0
        || column_take(renumber_obj, &renumber, "renumber") < 0) {
        goto done;
    }
    Py_ssize_t n = column_len(&slots), n_docs = column_len(&lengths);
    if (column_len(&counts) != n || column_len(&renumber) < n_docs) {
        PyErr_SetString(PyExc_ValueError, "columns of different lengths");
        goto done;
    }
    new_slots = PyBytes_FromStringAndSize(NULL, n * width);
    new_counts = PyBytes_FromStringAndSize(NULL, n);
    if (new_slots == NULL || new_counts == NULL) goto done;
    char *to_slots = PyBytes_AS_STRING(new_slots);
    uint8_t *to_counts = (uint8_t *)PyBytes_AS_STRING(new_counts);
    Py_ssize_t k = 0;
    uint64_t most = 0, least = UINT64_MAX;
    for (Py_ssize_t j = 0; j < n; j++) {
        uint64_t slot = column_at(&slots, j);
        if (slot >= (uint64_t)n_docs) {
            PyErr_SetString(PyExc_IndexError, "a posting's slot is past the lengths column");
            goto done;
        }
        uint64_t length = column_at(&lengths, (Py_ssize_t)slot);
        if (length == 0) continue;
        uint64_t to = column_at(&renumber, (Py_ssize_t)slot), tf = column_at(&counts, j);
        if (width == 2) ((uint16_t *)to_slots)[k] = (uint16_t)to;
        else if (width == 4) ((uint32_t *)to_slots)[k] = (uint32_t)to;
        else ((uint64_t *)to_slots)[k] = to;
        to_counts[k++] = (uint8_t)tf;
        if (tf > most) most = tf;
        if (length < least) least = length;
    }
    if (_PyBytes_Resize(&new_slots, k * width) < 0 || _PyBytes_Resize(&new_counts, k) < 0) goto done;
    out = Py_BuildValue("(OOKL)", new_slots, new_counts, (unsigned long long)most,
                        k ? (long long)least : -1LL);
done:
    Py_XDECREF(new_slots);
    Py_XDECREF(new_counts);
    column_drop(&slots);
    column_drop(&counts);
    column_drop(&lengths);
    column_drop(&renumber);
    return out;
}

static PyMethodDef methods[] = {
    {"top", top, METH_VARARGS, top_doc},
    {"kept", kept, METH_VARARGS, kept_doc},
    {"postings_kept", postings_kept, METH_VARARGS, postings_kept_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bm25", "Exhaustive BM25 over a query's postings.", -1, methods,
};

PyMODINIT_FUNC PyInit__bm25(void) { return PyModule_Create(&module); }
