/* DLPack for guardjit._native: Tensor, the library's outputs exported to
 * any consumer (numpy.from_dlpack, torch.from_dlpack) without a copy, and
 * the import of a call's arguments through their __dlpack__. */
#include "_native.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Tensor: a library output, shared by every DLPack export of it            */

/* The library's DLManagedTensor, released when the Tensor object and every
 * capsule handed out by __dlpack__ are gone; no GIL needed to release it. */
typedef struct {
  atomic_long refs;
  DLManagedTensor* managed;
} SharedOutput;

static void shared_output_unref(SharedOutput* shared) {
  if (atomic_fetch_sub_explicit(&shared->refs, 1, memory_order_acq_rel) == 1) {
    gj_tensor_release(shared->managed);
    free(shared);
  }
}

static void exported_deleter(DLManagedTensor* exported) {
  shared_output_unref((SharedOutput*)exported->manager_ctx);
  free(exported);
}

/* A capsule nobody consumed still owns its tensor. */
static void dltensor_capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return; /* consumed */
  DLManagedTensor* managed = PyCapsule_GetPointer(capsule, "dltensor");
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

typedef struct {
  PyObject_HEAD
  SharedOutput* shared;
} TensorObject;

static void tensor_dealloc(TensorObject* self) {
  if (self->shared != NULL) shared_output_unref(self->shared);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static const DLTensor* tensor_dl(TensorObject* self) {
  return &self->shared->managed->dl_tensor;
}

static PyObject* tensor_dlpack(TensorObject* self, PyObject* args,
                               PyObject* kwargs) {
  static char* keywords[] = {"stream", "max_version", "dl_device", "copy",
                             NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None,
           *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO", keywords, &stream,
                                   &max_version, &dl_device, &copy)) {
    return NULL;
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError,
                    "guardjit.Tensor.__dlpack__: copy=True is not supported");
    return NULL;
  }
  const DLTensor* dl = tensor_dl(self);
  if (dl_device != Py_None) {
    int type = 0, id = 0;
    if (!PyArg_ParseTuple(dl_device, "ii", &type, &id)) return NULL;
    if (type != (int)dl->device.device_type || id != dl->device.device_id) {
      PyErr_SetString(PyExc_BufferError,
                      "guardjit.Tensor.__dlpack__: dl_device differs from the "
                      "tensor's device and copies are not supported");
      return NULL;
    }
  }
  /* CUDA outputs are ready on the call's stream; a consumer on another
   * stream synchronizes with the call's stream itself (see Function). */
  DLManagedTensor* exported = malloc(sizeof(DLManagedTensor));
  if (exported == NULL) return PyErr_NoMemory();
  exported->dl_tensor = *dl;
  exported->manager_ctx = self->shared;
  exported->deleter = exported_deleter;
  atomic_fetch_add_explicit(&self->shared->refs, 1, memory_order_relaxed);
  PyObject* capsule =
      PyCapsule_New(exported, "dltensor", dltensor_capsule_destructor);
  if (capsule == NULL) exported_deleter(exported);
  return capsule;
}

static PyObject* tensor_dlpack_device(TensorObject* self,
                                      PyObject* Py_UNUSED(ignored)) {
  const DLTensor* dl = tensor_dl(self);
  return Py_BuildValue("(ii)", (int)dl->device.device_type,
                       (int)dl->device.device_id);
}

static PyObject* tensor_get_shape(TensorObject* self, void* Py_UNUSED(c)) {
  const DLTensor* dl = tensor_dl(self);
  PyObject* shape = PyTuple_New(dl->ndim);
  if (shape == NULL) return NULL;
  for (int i = 0; i < dl->ndim; ++i) {
    PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(dl->shape[i]));
  }
  return shape;
}

static PyObject* tensor_get_strides(TensorObject* self, void* Py_UNUSED(c)) {
  const DLTensor* dl = tensor_dl(self);
  PyObject* strides = PyTuple_New(dl->ndim);
  if (strides == NULL) return NULL;
  int64_t running = 1;
  for (int i = dl->ndim - 1; i >= 0; --i) {
    int64_t stride = dl->strides != NULL ? dl->strides[i] : running;
    running *= dl->shape[i];
    PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(stride));
  }
  return strides;
}

/* numpy's names for DLPack types ("float32", "bool"). */
static const char* dtype_name(DLDataType t) {
  if (t.lanes != 1) return "unknown";
  switch (t.code) {
    case kDLFloat:
      return t.bits == 32 ? "float32"
             : t.bits == 64 ? "float64"
             : t.bits == 16 ? "float16"
                            : "unknown";
    case kDLBfloat:
      return t.bits == 16 ? "bfloat16" : "unknown";
    case kDLInt:
      return t.bits == 8    ? "int8"
             : t.bits == 16 ? "int16"
             : t.bits == 32 ? "int32"
             : t.bits == 64 ? "int64"
                            : "unknown";
    case kDLUInt:
      return t.bits == 8 ? "uint8" : "unknown";
    case GJ_DL_BOOL:
      return "bool";
    default:
      return "unknown";
  }
}

static PyObject* tensor_get_dtype(TensorObject* self, void* Py_UNUSED(c)) {
  return PyUnicode_FromString(dtype_name(tensor_dl(self)->dtype));
}

static PyObject* tensor_get_data_ptr(TensorObject* self, void* Py_UNUSED(c)) {
  const DLTensor* dl = tensor_dl(self);
  return PyLong_FromVoidPtr((char*)dl->data + dl->byte_offset);
}

static PyObject* tensor_get_ndim(TensorObject* self, void* Py_UNUSED(c)) {
  return PyLong_FromLong(tensor_dl(self)->ndim);
}

static PyObject* tensor_get_device(TensorObject* self, void* Py_UNUSED(c)) {
  const DLTensor* dl = tensor_dl(self);
  switch (dl->device.device_type) {
    case kDLCPU:
      return PyUnicode_FromString("cpu");
    case kDLCUDA:
      return PyUnicode_FromFormat("cuda:%d", (int)dl->device.device_id);
    default:
      return PyUnicode_FromFormat("dlpack:%d:%d", (int)dl->device.device_type,
                                  (int)dl->device.device_id);
  }
}

static PyObject* tensor_repr(TensorObject* self) {
  const DLTensor* dl = tensor_dl(self);
  PyObject* shape = tensor_get_shape(self, NULL);
  PyObject* device = tensor_get_device(self, NULL);
  PyObject* repr = NULL;
  if (shape != NULL && device != NULL) {
    repr = PyUnicode_FromFormat("guardjit.Tensor(dtype=%s, shape=%R, device=%R)",
                                dtype_name(dl->dtype), shape, device);
  }
  Py_XDECREF(shape);
  Py_XDECREF(device);
  return repr;
}

static PyMethodDef tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "A 'dltensor' capsule over this output (no copy); each call makes a new "
     "one, and the memory lives until the last consumer releases it."},
    {"__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) as DLPack numbers them."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)tensor_get_shape, NULL, "sizes, a tuple of ints", NULL},
    {"strides", (getter)tensor_get_strides, NULL, "strides in elements", NULL},
    {"dtype", (getter)tensor_get_dtype, NULL, "element type, numpy's name",
     NULL},
    {"data_ptr", (getter)tensor_get_data_ptr, NULL,
     "address of the first element", NULL},
    {"ndim", (getter)tensor_get_ndim, NULL, "rank", NULL},
    {"device", (getter)tensor_get_device, NULL, "'cpu' or 'cuda:N'", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "guardjit.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An output of a guardjit call: library memory exposed through "
              "DLPack (numpy.from_dlpack, torch.from_dlpack) without a copy.",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
};

PyObject* wrap_output(DLManagedTensor* managed) {
  SharedOutput* shared = malloc(sizeof(SharedOutput));
  if (shared == NULL) {
    gj_tensor_release(managed);
    return PyErr_NoMemory();
  }
  atomic_init(&shared->refs, 1);
  shared->managed = managed;
  TensorObject* tensor = PyObject_New(TensorObject, &TensorType);
  if (tensor == NULL) {
    shared_output_unref(shared);
    return NULL;
  }
  tensor->shared = shared;
  return (PyObject*)tensor;
}

/* ------------------------------------------------------------------------ */
/* DLPack inputs                                                             */
static int imports_init(Imports* imports, Py_ssize_t count) {
  imports->count = 0;
  if (count <= GJ_PY_STACK_TENSORS) {
    imports->capsules = imports->capsules_stack;
    imports->tensors = imports->tensors_stack;
    return 0;
  }
  imports->capsules = PyMem_Malloc(sizeof(PyObject*) * (size_t)count);
  imports->tensors = PyMem_Malloc(sizeof(DLTensor*) * (size_t)count);
  if (imports->capsules == NULL || imports->tensors == NULL) {
    PyMem_Free(imports->capsules);
    PyMem_Free(imports->tensors);
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

void imports_release(Imports* imports) {
  for (Py_ssize_t i = 0; i < imports->count; ++i) {
    PyObject* capsule = imports->capsules[i];
    DLManagedTensor* managed = PyCapsule_GetPointer(capsule, "dltensor");
    if (managed != NULL && PyCapsule_SetName(capsule, "used_dltensor") == 0) {
      if (managed->deleter != NULL) managed->deleter(managed);
    }
    Py_DECREF(capsule);
  }
  imports->count = 0;
  if (imports->capsules != imports->capsules_stack) {
    PyMem_Free(imports->capsules);
    PyMem_Free(imports->tensors);
  }
}

/* What torch.Tensor.__dlpack__ checks before calling _C._to_dlpack for a
 * CPU tensor (conjugate bits need complex dtypes, which guardjit refuses
 * anyway); anything else takes the full __dlpack__ and its errors. */
static int is_plain_cpu_torch_tensor(PyObject* object) {
  PyObject* requires_grad = PyObject_GetAttr(object, str_requires_grad);
  PyObject* is_cpu = PyObject_GetAttr(object, str_is_cpu);
  int plain = requires_grad == Py_False && is_cpu == Py_True;
  Py_XDECREF(requires_grad);
  Py_XDECREF(is_cpu);
  if (PyErr_Occurred()) PyErr_Clear();
  return plain;
}

/* Imports `object` through __dlpack__ (with stream= when `stream` is not
 * None). `what` and `index` name it in errors. */
static int imports_add(Imports* imports, PyObject* object, PyObject* stream,
                       const char* what, Py_ssize_t index) {
  PyObject* capsule;
  if (stream == Py_None && torch_tensor_type != NULL &&
      (PyObject*)Py_TYPE(object) == torch_tensor_type &&
      is_plain_cpu_torch_tensor(object)) {
    capsule = PyObject_CallOneArg(torch_to_dlpack, object);
  } else if (stream == Py_None) {
    capsule = PyObject_CallMethodNoArgs(object, str_dlpack);
  } else {
    PyObject* call_args[] = {object, stream};
    capsule = PyObject_VectorcallMethod(
        str_dlpack, call_args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
        kwnames_stream);
  }
  if (capsule == NULL) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError) &&
        !PyObject_HasAttr(object, str_dlpack)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "guardjit: %s %zd is a %s, not a tensor with __dlpack__ "
                   "(numpy.ndarray, torch.Tensor, guardjit.Tensor, ...)",
                   what, index, Py_TYPE(object)->tp_name);
    }
    return -1;
  }
  DLManagedTensor* managed = PyCapsule_GetPointer(capsule, "dltensor");
  if (managed == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "guardjit: %s %zd: __dlpack__ returned a capsule that is not "
                 "an unused 'dltensor'",
                 what, index);
    Py_DECREF(capsule);
    return -1;
  }
  imports->capsules[imports->count] = capsule;
  imports->tensors[imports->count] = &managed->dl_tensor;
  imports->count++;
  return 0;
}

int imports_add_all(Imports* imports, PyObject* const* objects,
                    Py_ssize_t count, PyObject* stream,
                    const char* what) {
  if (imports_init(imports, count) != 0) return -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (imports_add(imports, objects[i], stream, what, i) != 0) {
      imports_release(imports);
      return -1;
    }
  }
  return 0;
}
