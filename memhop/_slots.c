/* memhop._slots: a frozen record (or a named tuple) built when its class is called.
 *
 * Responsibility: ``install(cls, names, positional, defaults, guard)`` makes a call of
 * ``cls`` itself build the instance (``tp_vectorcall``, which CPython calls in place of
 * ``type.__call__`` when a class sets it): the arguments matched to the names (the first
 * ``positional`` by place, any by name), a missing one taken from ``defaults``
 * (``REQUIRED`` where there is none), a fresh instance allocated and filled, with no
 * argument tuple, keyword dict or Python frame between. Either ``cls`` is a slotted
 * class whose ``__init__`` is ``guard`` (each name a writable object slot, checked once
 * here; the values go in the slots, as ``object.__setattr__`` would put them), or a
 * tuple subclass whose ``__new__`` is ``guard`` (a named tuple: the values are its
 * items). A call it does not answer alike (an argument too many, unknown, given twice or
 * missing, a class whose ``__init__`` or ``__new__`` is no longer the one installed) goes
 * the usual way, ``type.__call__``, so its refusal is the guard's own. Subclasses do not
 * inherit it (CPython never inherits ``tp_vectorcall``).
 */
#include "_kernel.h"
#include <structmember.h>

#define MAX_FIELDS 64
static PyObject *REQUIRED;  /* the defaults' mark for a field with none */
static PyObject *BUILD_KEY; /* where a class keeps its build: cls.__dict__[BUILD_KEY] */
static PyObject *INIT_KEY;  /* "__init__", interned */
static PyObject *NEW_KEY;   /* "__new__", interned */

typedef struct {
    PyObject_VAR_HEAD
    PyTypeObject *cls;
    PyObject *names;    /* tuple of str, in the instance's order */
    PyObject *defaults; /* tuple: a value, or REQUIRED */
    PyObject *guard;    /* the __init__ (__new__ for a tuple) installed: another one means
                         * "go the usual way" */
    Py_ssize_t positional;
    int tuple;             /* the values are a tuple's items, not slots */
    Py_ssize_t offsets[1]; /* a slotted class's: where each name's slot sits in an instance */
} Build;

static PyTypeObject BuildType;

/* The offset of slot ``name`` in an instance of ``cls``; -1 with TypeError set when
 * ``name`` names no writable object slot of it. */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "install takes the names as str");
        return -1;
    }
    PyObject *found = PyObject_GetAttr((PyObject *)cls, name);
    if (found == NULL) return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(found, &PyMemberDescr_Type) &&
        PyType_IsSubtype(cls, PyDescr_TYPE(found))) {
        PyMemberDef *member = ((PyMemberDescrObject *)found)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY)) offset = member->offset;
    }
    Py_DECREF(found);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "%R is not a writable slot of %s", name, cls->tp_name);
    return offset;
}

/* ``type.__call__``'s own way (argument tuple and dict, ``__new__`` then ``__init__``). */
static PyObject *usual_call(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL) return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    PyObject *kwargs = NULL;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nkw) {
        kwargs = PyDict_New();
        for (Py_ssize_t k = 0; kwargs != NULL && k < nkw; k++) {
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0)
                Py_CLEAR(kwargs);
        }
        if (kwargs == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    PyObject *out = PyType_Type.tp_call(cls, tuple, kwargs);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return out;
}

/* The field ``key`` names, or -1 (no error set) when it names none; the search starts at
 * ``from``, where the field after the last one found usually is (keywords come in the
 * fields' order). */
static Py_ssize_t field_of(Build *build, PyObject *key, Py_ssize_t from) {
    Py_ssize_t n = PyTuple_GET_SIZE(build->names);
    for (Py_ssize_t k = 0; k < n; k++) { /* keywords in code are interned, as the names are */
        Py_ssize_t j = (from + k) % n;
        if (PyTuple_GET_ITEM(build->names, j) == key) return j;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        int same = PyUnicode_Check(key) &&
                   PyUnicode_Compare(PyTuple_GET_ITEM(build->names, j), key) == 0;
        if (PyErr_Occurred()) PyErr_Clear();
        if (same) return j;
    }
    return -1;
}

/* Whether ``cls`` still makes its instances as when its build was installed (the name
 * found first along its MRO: its own, where the guard was installed). */
static int as_installed(PyTypeObject *cls, int tuple, PyObject *guard) {
    PyObject *now = _PyType_Lookup(cls, tuple ? NEW_KEY : INIT_KEY);
    return now == guard && (tuple ? cls->tp_init == PyBaseObject_Type.tp_init
                                  : cls->tp_new == PyBaseObject_Type.tp_new);
}

/* The build installed on ``cls`` and still in force, or NULL (no error: neither lookup
 * raises). Both names are looked up through CPython's own type attribute cache, which
 * answers while the class keeps its version tag (a change to its dict or slots gives it a
 * new one), where a lookup in the class's dict each call cost two probes of a dict seldom
 * in the cache: a turn builds a couple of dozen records. */
static Build *build_of(PyTypeObject *cls) {
    PyObject *found = _PyType_Lookup(cls, BUILD_KEY); /* borrowed; NULL sets no error */
    if (found == NULL || !Py_IS_TYPE(found, &BuildType)) return NULL;
    Build *build = (Build *)found;
    if (build->cls != cls || !as_installed(cls, build->tuple, build->guard)) return NULL;
    return build;
}

static PyObject *build_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames) {
    PyTypeObject *cls = (PyTypeObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Build *build = build_of(cls);
    if (build == NULL || nargs > build->positional)
        return usual_call(callable, args, nargs, kwnames);
    Py_ssize_t n = PyTuple_GET_SIZE(build->names);
    PyObject *values[MAX_FIELDS];
    for (Py_ssize_t j = 0; j < n; j++) values[j] = NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) values[i] = args[i];
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0, next = nargs; k < nkw; k++) {
        Py_ssize_t j = field_of(build, PyTuple_GET_ITEM(kwnames, k), next < n ? next : 0);
        if (j < 0 || values[j] != NULL) return usual_call(callable, args, nargs, kwnames);
        values[j] = args[nargs + k];
        next = j + 1;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (values[j] != NULL) continue;
        values[j] = PyTuple_GET_ITEM(build->defaults, j);
        if (values[j] == REQUIRED) return usual_call(callable, args, nargs, kwnames);
    }
    PyObject *obj = cls->tp_alloc(cls, build->tuple ? n : 0);
    if (obj == NULL) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (build->tuple)
            PyTuple_SET_ITEM(obj, j, Py_NewRef(values[j]));
        else
            *(PyObject **)((char *)obj + build->offsets[j]) = Py_NewRef(values[j]);
    }
    return obj;
}

static PyObject *install(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *cls, *names, *defaults, *guard;
    Py_ssize_t positional;
    if (!PyArg_ParseTuple(args, "O!O!nO!O:install", &PyType_Type, &cls, &PyTuple_Type, &names,
                          &positional, &PyTuple_Type, &defaults, &guard))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    int tuple = PyType_IsSubtype(type, &PyTuple_Type);
    if (PyTuple_GET_SIZE(defaults) != n || n > MAX_FIELDS || positional < 0 || positional > n) {
        PyErr_SetString(PyExc_TypeError,
                        "install takes the class's names (at most 64), how many go by place, "
                        "and a default for each");
        return NULL;
    }
    /* Once a class: the class's own dict names its build (a subclass's does not). */
    PyObject *built = PyDict_GetItemWithError(type->tp_dict, BUILD_KEY);
    if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || built != NULL ||
        !as_installed(type, tuple, guard)) {
        if (PyErr_Occurred()) return NULL;
        PyErr_Format(PyExc_TypeError, "%s makes its instances its own way", type->tp_name);
        return NULL;
    }
    Build *build = PyObject_GC_NewVar(Build, &BuildType, tuple ? 0 : n);
    if (build == NULL) return NULL;
    build->cls = (PyTypeObject *)Py_NewRef(cls);
    build->names = Py_NewRef(names);
    build->defaults = Py_NewRef(defaults);
    build->guard = Py_NewRef(guard);
    build->positional = positional;
    build->tuple = tuple;
    PyObject_GC_Track(build);
    for (Py_ssize_t j = 0; !tuple && j < n; j++) {
        build->offsets[j] = slot_offset(type, PyTuple_GET_ITEM(names, j));
        if (build->offsets[j] < 0) {
            Py_DECREF(build);
            return NULL;
        }
    }
    int set = PyObject_SetAttr(cls, BUILD_KEY, (PyObject *)build);
    Py_DECREF(build);
    if (set < 0) return NULL;
    type->tp_vectorcall = build_call;
    Py_RETURN_NONE;
}

static int build_traverse(Build *self, visitproc visit, void *arg) {
    Py_VISIT(self->cls);
    Py_VISIT(self->names);
    Py_VISIT(self->defaults);
    Py_VISIT(self->guard);
    return 0;
}

static int build_clear(Build *self) {
    Py_CLEAR(self->cls);
    Py_CLEAR(self->names);
    Py_CLEAR(self->defaults);
    Py_CLEAR(self->guard);
    return 0;
}

static void build_dealloc(Build *self) {
    PyObject_GC_UnTrack(self);
    build_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject BuildType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memhop._slots.Build",
    .tp_basicsize = offsetof(Build, offsets),
    .tp_itemsize = sizeof(Py_ssize_t),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "How a class installed by install() builds its instances.",
    .tp_traverse = (traverseproc)build_traverse,
    .tp_clear = (inquiry)build_clear,
    .tp_dealloc = (destructor)build_dealloc,
};

static PyMethodDef slots_methods[] = {
    {"install", install, METH_VARARGS,
     "install(cls, names, positional, defaults, guard): calls of cls build instances "
     "directly."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef slots_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "memhop._slots",
    .m_doc = "A frozen record (or a named tuple) built when its class is called.",
    .m_size = -1,
    .m_methods = slots_methods,
};

PyMODINIT_FUNC PyInit__slots(void) {
    if (PyType_Ready(&BuildType) < 0) return NULL;
    REQUIRED = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    BUILD_KEY = PyUnicode_InternFromString("__memhop_build__");
    INIT_KEY = PyUnicode_InternFromString("__init__");
    NEW_KEY = PyUnicode_InternFromString("__new__");
    if (REQUIRED == NULL || BUILD_KEY == NULL || INIT_KEY == NULL || NEW_KEY == NULL) return NULL;
    PyObject *module = PyModule_Create(&slots_module);
    if (module == NULL) return NULL;
    if (PyModule_AddObjectRef(module, "REQUIRED", REQUIRED) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
