/* memhop._slots: a frozen record's fields stored in one call.
 *
 * Responsibility: ``Filler(cls, names)`` checks once that each name is a writable
 * object slot of ``cls`` (a member descriptor on the class, as ``__slots__`` makes),
 * and then ``filler(obj, *values)`` stores each value in its slot of ``obj``, an
 * instance of ``cls``: what ``object.__setattr__(obj, name, value)`` does for a slot,
 * one name after the other, without a call for each. It refuses (TypeError) an object
 * of another type, a count of values other than the names', and keyword arguments.
 * ``memhop.frozen`` builds a frozen record's ``__init__`` on it; the record's own
 * ``__setattr__`` still refuses every later change.
 */
#include "_kernel.h"
#include <structmember.h>

typedef struct {
    PyObject_VAR_HEAD
    PyTypeObject *cls;
    vectorcallfunc vectorcall;
    Py_ssize_t offsets[1]; /* one per name: where its slot sits in an instance */
} Filler;

static PyTypeObject FillerType;

/* The offset of slot ``name`` in an instance of ``cls``; -1 with TypeError set when
 * ``name`` names no writable object slot of it. */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "Filler takes the slot names as str");
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

static PyObject *filler_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
    Filler *self = (Filler *)callable;
    Py_ssize_t count = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "a filler takes no keyword arguments");
        return NULL;
    }
    if (count != Py_SIZE(self) + 1) {
        PyErr_Format(PyExc_TypeError, "a filler of %s takes the instance and %zd values, not %zd",
                     self->cls->tp_name, Py_SIZE(self), count - 1);
        return NULL;
    }
    PyObject *obj = args[0];
    if (!PyObject_TypeCheck(obj, self->cls)) {
        PyErr_Format(PyExc_TypeError, "a filler of %s got a %s", self->cls->tp_name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < Py_SIZE(self); i++) {
        PyObject **at = (PyObject **)((char *)obj + self->offsets[i]);
        PyObject *old = *at;
        *at = Py_NewRef(args[i + 1]);
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

static PyObject *filler_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *cls, *names;
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Filler takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!:Filler", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    Filler *self = (Filler *)type->tp_alloc(type, count);
    if (self == NULL) return NULL;
    self->cls = (PyTypeObject *)Py_NewRef(cls);
    self->vectorcall = filler_call;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t offset = slot_offset(self->cls, PyTuple_GET_ITEM(names, i));
        if (offset < 0) {
            Py_DECREF(self);
            return NULL;
        }
        self->offsets[i] = offset;
    }
    return (PyObject *)self;
}

static int filler_traverse(Filler *self, visitproc visit, void *arg) {
    Py_VISIT(self->cls);
    return 0;
}

static int filler_clear(Filler *self) {
    Py_CLEAR(self->cls);
    return 0;
}

static void filler_dealloc(Filler *self) {
    PyObject_GC_UnTrack(self);
    filler_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject FillerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memhop._slots.Filler",
    .tp_basicsize = offsetof(Filler, offsets),
    .tp_itemsize = sizeof(Py_ssize_t),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Filler(cls, names): filler(obj, *values) stores each value in its slot.",
    .tp_new = filler_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Filler, vectorcall),
    .tp_traverse = (traverseproc)filler_traverse,
    .tp_clear = (inquiry)filler_clear,
    .tp_dealloc = (destructor)filler_dealloc,
};

static struct PyModuleDef slots_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "memhop._slots",
    .m_doc = "A frozen record's fields stored in one call.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__slots(void) {
    if (PyType_Ready(&FillerType) < 0) return NULL;
    PyObject *module = PyModule_Create(&slots_module);
    if (module == NULL) return NULL;
    if (PyModule_AddObjectRef(module, "Filler", (PyObject *)&FillerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
