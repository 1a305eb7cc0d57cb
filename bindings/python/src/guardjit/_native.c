/*
 * guardjit._native: the hot path of the Python binding over the C ABI.
 *
 * Context, Graph and Function wrap their gj_* handles; a Function call takes
 * any objects with __dlpack__ (zero-copy: the producer's DLManagedTensor is
 * borrowed for the call, then its deleter runs as the DLPack protocol asks of
 * a consumer) and returns Tensor objects over the library's DLManagedTensor
 * outputs, which numpy.from_dlpack and torch.from_dlpack take without a copy.
 * Everything else (argument normalization, errors' classes, the exporter)
 * lives in Python. The GIL is released around every call that can compile
 * or run, so threads calling one function run in parallel.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <guardjit/guardjit.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Inputs and outputs of a call live on the stack up to this many. */
#define GJ_PY_STACK_TENSORS 16

static PyObject* error_factory; /* callable(code, message) -> exception */
static PyObject* str_dlpack;    /* "__dlpack__" */
static PyObject* kwnames_stream; /* ("stream",) */
/* torch.Tensor and torch._C._to_dlpack once torch is loaded: torch's
 * Python-level __dlpack__ costs ~2 us a tensor, its C exporter ~0.2 us. */
static PyObject* torch_tensor_type;
static PyObject* torch_to_dlpack;
static PyObject* str_requires_grad;
static PyObject* str_is_cpu;

/* Raises the Python exception for `error` and frees it. Returns NULL. */
static PyObject* raise_gj_error(gj_error* error) {
  int code = (int)gj_error_get_code(error);
  PyObject* message = PyUnicode_DecodeUTF8(
      gj_error_message(error), (Py_ssize_t)strlen(gj_error_message(error)),
      "replace");
  gj_error_destroy(error);
  if (message == NULL) return NULL;
  if (error_factory == NULL) {
    PyErr_Format(PyExc_RuntimeError, "guardjit error %d: %U", code, message);
    Py_DECREF(message);
    return NULL;
  }
  PyObject* exc = PyObject_CallFunction(error_factory, "iO", code, message);
  Py_DECREF(message);
  if (exc == NULL) return NULL;
  PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
  Py_DECREF(exc);
  return NULL;
}

/* Takes ownership of a library-allocated string. */
static PyObject* take_string(char* text) {
  PyObject* result =
      PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  gj_string_destroy(text);
  return result;
}

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

static PyTypeObject TensorType;

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

static PyTypeObject TensorType = {
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

static PyObject* wrap_output(DLManagedTensor* managed) {
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
/* Context                                                                   */

typedef struct {
  PyObject_HEAD
  gj_context* context;
} ContextObject;

static PyTypeObject ContextType;

static PyObject* context_new(PyTypeObject* type, PyObject* args,
                             PyObject* kwargs) {
  static char* keywords[] = {"num_threads", "backend", "max_cached_kernels",
                             "max_cached_bytes", NULL};
  int num_threads = 0, backend = 0, max_cached_kernels = -1;
  long long max_cached_bytes = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$iiiL", keywords,
                                   &num_threads, &backend, &max_cached_kernels,
                                   &max_cached_bytes)) {
    return NULL;
  }
  gj_context_options options;
  gj_context_options_init_v(&options, sizeof options);
  options.num_threads = num_threads;
  options.backend = (gj_backend)backend;
  if (max_cached_kernels >= 0) options.max_cached_kernels = max_cached_kernels;
  if (max_cached_bytes >= 0) options.max_cached_bytes = max_cached_bytes;
  ContextObject* self = (ContextObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  gj_error* error = gj_context_create(&options, &self->context);
  if (error != NULL) {
    Py_DECREF(self);
    return raise_gj_error(error);
  }
  return (PyObject*)self;
}

static void context_dealloc(ContextObject* self) {
  gj_context_destroy(self->context);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* context_memory_stats(ContextObject* self,
                                      PyObject* Py_UNUSED(ignored)) {
  gj_memory_stats stats;
  gj_memory_stats_init_v(&stats, sizeof stats);
  gj_error* error = gj_context_get_memory_stats(self->context, &stats);
  if (error != NULL) return raise_gj_error(error);
  return Py_BuildValue(
      "{sLsLsLsLsLsLsL}", "bytes_in_use", (long long)stats.bytes_in_use,
      "bytes_cached", (long long)stats.bytes_cached, "peak_bytes_in_use",
      (long long)stats.peak_bytes_in_use, "system_allocations",
      (long long)stats.system_allocations, "cache_hits",
      (long long)stats.cache_hits, "compiled_modules",
      (long long)stats.compiled_modules, "cached_kernels",
      (long long)stats.cached_kernels);
}

static PyObject* context_release_cached_memory(ContextObject* self,
                                               PyObject* Py_UNUSED(ignored)) {
  gj_error* error;
  Py_BEGIN_ALLOW_THREADS
  error = gj_context_release_cached_memory(self->context);
  Py_END_ALLOW_THREADS
  if (error != NULL) return raise_gj_error(error);
  Py_RETURN_NONE;
}

static PyMethodDef context_methods[] = {
    {"memory_stats", (PyCFunction)context_memory_stats, METH_NOARGS,
     "The context's memory counters as a dict (gj_memory_stats)."},
    {"release_cached_memory", (PyCFunction)context_release_cached_memory,
     METH_NOARGS, "Returns every cached host block to the system."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "guardjit._native.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_dealloc = (destructor)context_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "gj_context: the thread pool, compiler and caches.",
    .tp_methods = context_methods,
    .tp_new = context_new,
};

/* ------------------------------------------------------------------------ */
/* Graph                                                                     */

typedef struct {
  PyObject_HEAD
  gj_graph* graph;
  PyObject* context; /* the graph must die before its context */
} GraphObject;

static PyTypeObject GraphType;

static void graph_dealloc(GraphObject* self) {
  gj_graph_destroy(self->graph);
  Py_XDECREF(self->context);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

enum { LOAD_TEXT, LOAD_PROTO, LOAD_FILE };

/* load(kind, context, data: bytes | path: str, external_data_dir: str|None) */
static PyObject* graph_load(PyTypeObject* type, PyObject* args) {
  int kind;
  PyObject *context, *data, *dir_object;
  if (!PyArg_ParseTuple(args, "iO!OO", &kind, &ContextType, &context, &data,
                        &dir_object)) {
    return NULL;
  }
  const char* dir = NULL;
  if (dir_object != Py_None) {
    dir = PyUnicode_AsUTF8(dir_object);
    if (dir == NULL) return NULL;
  }
  Py_buffer buffer;
  const char* path = NULL;
  if (kind == LOAD_FILE) {
    path = PyUnicode_AsUTF8(data);
    if (path == NULL) return NULL;
  } else if (PyObject_GetBuffer(data, &buffer, PyBUF_SIMPLE) != 0) {
    return NULL;
  }
  gj_graph_load_options options;
  gj_graph_load_options_init_v(&options, sizeof options);
  options.external_data_dir = dir;
  gj_context* ctx = ((ContextObject*)context)->context;
  gj_graph* graph = NULL;
  gj_error* error;
  Py_BEGIN_ALLOW_THREADS
  switch (kind) {
    case LOAD_TEXT:
      error = gj_graph_from_text(ctx, buffer.buf, (size_t)buffer.len,
                                 &options, &graph);
      break;
    case LOAD_PROTO:
      error = gj_graph_from_proto(ctx, buffer.buf, (size_t)buffer.len,
                                  &options, &graph);
      break;
    default:
      error = gj_graph_from_file(ctx, path, &options, &graph);
      break;
  }
  Py_END_ALLOW_THREADS
  if (kind != LOAD_FILE) PyBuffer_Release(&buffer);
  if (error != NULL) return raise_gj_error(error);
  GraphObject* self = (GraphObject*)type->tp_alloc(type, 0);
  if (self == NULL) {
    gj_graph_destroy(graph);
    return NULL;
  }
  self->graph = graph;
  Py_INCREF(context);
  self->context = context;
  return (PyObject*)self;
}

static PyObject* graph_names(GraphObject* self, int inputs) {
  size_t count = inputs ? gj_graph_num_inputs(self->graph)
                        : gj_graph_num_outputs(self->graph);
  PyObject* names = PyTuple_New((Py_ssize_t)count);
  if (names == NULL) return NULL;
  for (size_t i = 0; i < count; ++i) {
    const char* name = inputs ? gj_graph_input_name(self->graph, i)
                              : gj_graph_output_name(self->graph, i);
    PyObject* item = PyUnicode_FromString(name != NULL ? name : "");
    if (item == NULL) {
      Py_DECREF(names);
      return NULL;
    }
    PyTuple_SET_ITEM(names, (Py_ssize_t)i, item);
  }
  return names;
}

static PyObject* graph_input_names(GraphObject* self, void* Py_UNUSED(c)) {
  return graph_names(self, 1);
}

static PyObject* graph_output_names(GraphObject* self, void* Py_UNUSED(c)) {
  return graph_names(self, 0);
}

static PyObject* graph_tabular(GraphObject* self, PyObject* Py_UNUSED(i)) {
  char* text = NULL;
  gj_error* error = gj_graph_to_tabular(self->graph, &text);
  if (error != NULL) return raise_gj_error(error);
  return take_string(text);
}

static PyMethodDef graph_methods[] = {
    {"_load", (PyCFunction)graph_load, METH_VARARGS | METH_CLASS,
     "_load(kind, context, data_or_path, external_data_dir)"},
    {"tabular", (PyCFunction)graph_tabular, METH_NOARGS,
     "The graph as torch.fx's print_tabular shows it."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"input_names", (getter)graph_input_names, NULL, "placeholder names",
     NULL},
    {"output_names", (getter)graph_output_names, NULL,
     "names of the values the outputs return", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GraphType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "guardjit._native.Graph",
    .tp_basicsize = sizeof(GraphObject),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "gj_graph: a loaded, validated graph.",
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

/* ------------------------------------------------------------------------ */
/* DLPack inputs                                                             */

/* The DLPack tensors of one call's arguments: capsules taken from the
 * producers, consumed (renamed and deleted) when the call is done. */
typedef struct {
  Py_ssize_t count;
  PyObject* capsules_stack[GJ_PY_STACK_TENSORS];
  const DLTensor* tensors_stack[GJ_PY_STACK_TENSORS];
  PyObject** capsules;
  const DLTensor** tensors;
} Imports;

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

/* As a DLPack consumer: mark each capsule used, then release the producer's
 * tensor with its deleter. */
static void imports_release(Imports* imports) {
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

static int imports_add_all(Imports* imports, PyObject* const* objects,
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

/* ------------------------------------------------------------------------ */
/* Function                                                                  */

typedef struct {
  PyObject_HEAD
  gj_function* function;
  PyObject* context; /* the function must die before its context */
  size_t num_inputs;
  size_t num_outputs;
} FunctionObject;

static PyTypeObject FunctionType;

static void function_dealloc(FunctionObject* self) {
  gj_function_destroy(self->function);
  Py_XDECREF(self->context);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

/* Function(context, graph, name, recompile_limit, dynamic, mark_dynamic,
 * fullgraph, mode, max_graphs_per_entry, compile) where mark_dynamic is a
 * sequence of (input, dim, min, max). The Python subclass normalizes
 * friendlier arguments into these; mode and compile go to the library
 * unchecked, which names an unknown one. */
static PyObject* function_new(PyTypeObject* type, PyObject* args,
                              PyObject* kwargs) {
  static char* keywords[] = {
      "context",         "graph",   "name",
      "recompile_limit", "dynamic", "mark_dynamic",
      "fullgraph",       "mode",    "max_graphs_per_entry",
      "compile",         NULL};
  PyObject *context, *graph, *name = Py_None, *marks = Py_None;
  int recompile_limit = -1, dynamic = 0, fullgraph = 0, mode = 0;
  int max_graphs_per_entry = 0, compile = 0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "O!O!|OiiOpiii", keywords, &ContextType, &context,
          &GraphType, &graph, &name, &recompile_limit, &dynamic, &marks,
          &fullgraph, &mode, &max_graphs_per_entry, &compile)) {
    return NULL;
  }
  gj_function_options options;
  gj_function_options_init_v(&options, sizeof options);
  if (name != Py_None) {
    options.name = PyUnicode_AsUTF8(name);
    if (options.name == NULL) return NULL;
  }
  if (recompile_limit >= 0) options.recompile_limit = recompile_limit;
  options.dynamic = (gj_dynamic_mode)dynamic;
  options.fullgraph = fullgraph;
  options.mode = (gj_function_mode)mode;
  options.max_graphs_per_entry = max_graphs_per_entry;
  options.compile = (gj_compile_mode)compile;
  gj_dynamic_dim* dims = NULL;
  Py_ssize_t num_dims = 0;
  if (marks != Py_None) {
    PyObject* seq = PySequence_Fast(marks, "mark_dynamic must be a sequence");
    if (seq == NULL) return NULL;
    num_dims = PySequence_Fast_GET_SIZE(seq);
    dims = PyMem_Calloc((size_t)num_dims + 1, sizeof(gj_dynamic_dim));
    if (dims == NULL) {
      Py_DECREF(seq);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < num_dims; ++i) {
      long long min = 0, max = 0;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iiLL",
                            &dims[i].input, &dims[i].dim, &min, &max)) {
        Py_DECREF(seq);
        PyMem_Free(dims);
        return NULL;
      }
      dims[i].min = min;
      dims[i].max = max;
    }
    Py_DECREF(seq);
    options.mark_dynamic = dims;
    options.num_mark_dynamic = (size_t)num_dims;
  }
  FunctionObject* self = (FunctionObject*)type->tp_alloc(type, 0);
  if (self == NULL) {
    PyMem_Free(dims);
    return NULL;
  }
  gj_error* error = gj_function_create(((ContextObject*)context)->context,
                                       ((GraphObject*)graph)->graph, &options,
                                       &self->function);
  PyMem_Free(dims);
  if (error != NULL) {
    Py_DECREF(self);
    return raise_gj_error(error);
  }
  Py_INCREF(context);
  self->context = context;
  self->num_inputs = gj_function_num_inputs(self->function);
  self->num_outputs = gj_function_num_outputs(self->function);
  return (PyObject*)self;
}

/* Reads the call keywords: stream (int CUstream or None), out (a sequence
 * of destination tensors or None), timeout_us. */
typedef struct {
  PyObject* stream;
  PyObject* out;
  long long timeout_us;
} CallKeywords;

static int parse_call_keywords(PyObject* kwargs, CallKeywords* keywords) {
  keywords->stream = Py_None;
  keywords->out = Py_None;
  keywords->timeout_us = 0;
  if (kwargs == NULL) return 0;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    const char* name = PyUnicode_AsUTF8(key);
    if (name == NULL) return -1;
    if (strcmp(name, "stream") == 0) {
      keywords->stream = value;
    } else if (strcmp(name, "out") == 0) {
      keywords->out = value;
    } else if (strcmp(name, "timeout_us") == 0) {
      keywords->timeout_us = PyLong_AsLongLong(value);
      if (keywords->timeout_us == -1 && PyErr_Occurred()) return -1;
    } else {
      PyErr_Format(PyExc_TypeError,
                   "guardjit.Function call got an unexpected keyword '%s' "
                   "(stream, out, timeout_us)",
                   name);
      return -1;
    }
  }
  return 0;
}

static int fill_call_options(const CallKeywords* keywords,
                             gj_call_options* options) {
  gj_call_options_init_v(options, sizeof *options);
  options->timeout_us = keywords->timeout_us;
  if (keywords->stream != Py_None) {
    options->stream = PyLong_AsVoidPtr(keywords->stream);
    if (options->stream == NULL && PyErr_Occurred()) return -1;
  }
  return 0;
}

static PyObject* function_call(FunctionObject* self, PyObject* args,
                               PyObject* kwargs) {
  CallKeywords keywords;
  if (parse_call_keywords(kwargs, &keywords) != 0) return NULL;
  gj_call_options options;
  if (fill_call_options(&keywords, &options) != 0) return NULL;
  Py_ssize_t num_args = PyTuple_GET_SIZE(args);
  if ((size_t)num_args != self->num_inputs) {
    PyErr_Format(PyExc_TypeError,
                 "guardjit.Function takes %zu inputs, %zd given",
                 self->num_inputs, num_args);
    return NULL;
  }
  Imports inputs;
  if (imports_add_all(&inputs, &PyTuple_GET_ITEM(args, 0), num_args,
                      keywords.stream, "input") != 0) {
    return NULL;
  }
  gj_error* error;
  if (keywords.out != Py_None) {
    PyObject* out = PySequence_Fast(keywords.out, "out must be a sequence");
    if (out == NULL) {
      imports_release(&inputs);
      return NULL;
    }
    Imports outputs;
    if (imports_add_all(&outputs, PySequence_Fast_ITEMS(out),
                        PySequence_Fast_GET_SIZE(out), keywords.stream,
                        "output") != 0) {
      imports_release(&inputs);
      Py_DECREF(out);
      return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
  error = gj_function_call(
        self->function, inputs.tensors, (size_t)inputs.count, outputs.tensors,
        (size_t)outputs.count, &options);
    Py_END_ALLOW_THREADS
  imports_release(&outputs);
    imports_release(&inputs);
    if (error != NULL) {
      Py_DECREF(out);
      return raise_gj_error(error);
    }
    PyObject* result = PySequence_Tuple(out);
    Py_DECREF(out);
    return result;
  }
  DLManagedTensor* results_stack[GJ_PY_STACK_TENSORS];
  DLManagedTensor** results = results_stack;
  size_t num_outputs = self->num_outputs;
  if (num_outputs > GJ_PY_STACK_TENSORS) {
    results = PyMem_Malloc(sizeof(DLManagedTensor*) * num_outputs);
    if (results == NULL) {
      imports_release(&inputs);
      return PyErr_NoMemory();
    }
  }
  Py_BEGIN_ALLOW_THREADS
  error = gj_function_call_alloc(
      self->function, inputs.tensors, (size_t)inputs.count, &options, results,
      num_outputs);
  Py_END_ALLOW_THREADS
  imports_release(&inputs);
  PyObject* tuple = NULL;
  if (error != NULL) {
    raise_gj_error(error);
  } else {
    tuple = PyTuple_New((Py_ssize_t)num_outputs);
    size_t wrapped = 0;
    for (; tuple != NULL && wrapped < num_outputs; ++wrapped) {
      PyObject* item = wrap_output(results[wrapped]); /* releases on failure */
      if (item == NULL) {
        Py_CLEAR(tuple);
      } else {
        PyTuple_SET_ITEM(tuple, (Py_ssize_t)wrapped, item);
      }
    }
    for (; wrapped < num_outputs; ++wrapped) gj_tensor_release(results[wrapped]);
  }
  if (results != results_stack) PyMem_Free(results);
  return tuple;
}

static PyObject* function_precompile(FunctionObject* self, PyObject* args,
                                     PyObject* kwargs) {
  CallKeywords keywords;
  if (parse_call_keywords(kwargs, &keywords) != 0) return NULL;
  gj_call_options options;
  if (fill_call_options(&keywords, &options) != 0) return NULL;
  Imports inputs;
  if (imports_add_all(&inputs, &PyTuple_GET_ITEM(args, 0),
                      PyTuple_GET_SIZE(args), keywords.stream, "input") != 0) {
    return NULL;
  }
  gj_error* error;
  Py_BEGIN_ALLOW_THREADS
  error = gj_function_precompile(
      self->function, inputs.tensors, (size_t)inputs.count, &options);
  Py_END_ALLOW_THREADS
  imports_release(&inputs);
  if (error != NULL) return raise_gj_error(error);
  Py_RETURN_NONE;
}

static PyObject* function_stats(FunctionObject* self,
                                PyObject* Py_UNUSED(ignored)) {
  gj_function_stats stats;
  gj_function_stats_init_v(&stats, sizeof stats);
  gj_error* error = gj_function_get_stats(self->function, &stats);
  if (error != NULL) return raise_gj_error(error);
  return Py_BuildValue(
      "{sLsLsLsLsLsLsLsdsdsLsLsLsLsLsLsLsLsL}", "calls", (long long)stats.calls,
      "hits", (long long)stats.hits, "misses", (long long)stats.misses,
      "compiles", (long long)stats.compiles, "recompiles",
      (long long)stats.recompiles, "fallback_calls",
      (long long)stats.fallback_calls, "cache_entries",
      (long long)stats.cache_entries, "compile_ms_total",
      stats.compile_ms_total, "guard_ns_mean", stats.guard_ns_mean,
      "graph_count", (long long)stats.graph_count, "graph_break_count",
      (long long)stats.graph_break_count, "cuda_graphs_recorded",
      (long long)stats.cuda_graphs_recorded, "cuda_graph_replays",
      (long long)stats.cuda_graph_replays, "cuda_graph_pointer_updates",
      (long long)stats.cuda_graph_pointer_updates, "cuda_graph_recaptures",
      (long long)stats.cuda_graph_recaptures, "cuda_graph_evictions",
      (long long)stats.cuda_graph_evictions, "cuda_graph_pool_bytes",
      (long long)stats.cuda_graph_pool_bytes, "eager_while_compiling",
      (long long)stats.eager_while_compiling);
}

static PyObject* function_explain(FunctionObject* self,
                                  PyObject* Py_UNUSED(ignored)) {
  char* text = NULL;
  gj_error* error = gj_function_explain(self->function, &text);
  if (error != NULL) return raise_gj_error(error);
  return take_string(text);
}

static PyObject* function_dump_guards(FunctionObject* self,
                                      PyObject* Py_UNUSED(ignored)) {
  char* text = NULL;
  gj_error* error = gj_function_dump_guards(self->function, &text);
  if (error != NULL) return raise_gj_error(error);
  return take_string(text);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* _time_c_calls(inputs, n): seconds per gj_function_call_alloc +
 * gj_tensor_release of every output, timed in C over n calls on the given
 * inputs (imported once): the baseline the binding's overhead is measured
 * against (perf/overhead.py). */
static PyObject* function_time_c_calls(FunctionObject* self, PyObject* args) {
  PyObject* sequence;
  long long n;
  if (!PyArg_ParseTuple(args, "OL", &sequence, &n)) return NULL;
  PyObject* seq = PySequence_Fast(sequence, "inputs must be a sequence");
  if (seq == NULL) return NULL;
  Imports inputs;
  if (imports_add_all(&inputs, PySequence_Fast_ITEMS(seq),
                      PySequence_Fast_GET_SIZE(seq), Py_None, "input") != 0) {
    Py_DECREF(seq);
    return NULL;
  }
  size_t num_outputs = self->num_outputs;
  DLManagedTensor** results = PyMem_Malloc(sizeof(DLManagedTensor*) *
                                           (num_outputs ? num_outputs : 1));
  gj_error* error = NULL;
  double elapsed = 0;
  if (results == NULL) {
    PyErr_NoMemory();
  } else {
    gj_call_options options;
    gj_call_options_init_v(&options, sizeof options);
    Py_BEGIN_ALLOW_THREADS
  double start = now_seconds();
    for (long long i = 0; i < n && error == NULL; ++i) {
      error = gj_function_call_alloc(self->function, inputs.tensors,
                                     (size_t)inputs.count, &options, results,
                                     num_outputs);
      if (error == NULL) {
        for (size_t j = 0; j < num_outputs; ++j) gj_tensor_release(results[j]);
      }
    }
    elapsed = now_seconds() - start;
    Py_END_ALLOW_THREADS
  PyMem_Free(results);
  }
  imports_release(&inputs);
  Py_DECREF(seq);
  if (error != NULL) return raise_gj_error(error);
  if (PyErr_Occurred()) return NULL;
  return PyFloat_FromDouble(n > 0 ? elapsed / (double)n : 0.0);
}

static PyObject* function_get_num_inputs(FunctionObject* self,
                                         void* Py_UNUSED(c)) {
  return PyLong_FromSize_t(self->num_inputs);
}

static PyObject* function_get_num_outputs(FunctionObject* self,
                                          void* Py_UNUSED(c)) {
  return PyLong_FromSize_t(self->num_outputs);
}

static PyMethodDef function_methods[] = {
    {"precompile", (PyCFunction)(void (*)(void))function_precompile,
     METH_VARARGS | METH_KEYWORDS,
     "Compiles the entry a call with these inputs would use, without "
     "running it."},
    {"_stats", (PyCFunction)function_stats, METH_NOARGS,
     "gj_function_stats as a dict."},
    {"explain", (PyCFunction)function_explain, METH_NOARGS,
     "torch._dynamo.explain()-style text: ops, guards, entries, counters."},
    {"dump_guards", (PyCFunction)function_dump_guards, METH_NOARGS,
     "The guards of every cache entry in TREE_GUARD_MANAGER form."},
    {"_time_c_calls", (PyCFunction)function_time_c_calls, METH_VARARGS,
     "_time_c_calls(inputs, n): seconds per call timed in C."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef function_getset[] = {
    {"num_inputs", (getter)function_get_num_inputs, NULL, "inputs per call",
     NULL},
    {"num_outputs", (getter)function_get_num_outputs, NULL,
     "outputs per call", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "guardjit._native.Function",
    .tp_basicsize = sizeof(FunctionObject),
    .tp_dealloc = (destructor)function_dealloc,
    .tp_call = (ternaryfunc)function_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "gj_function: a graph and its guard-cached compiled entries.",
    .tp_methods = function_methods,
    .tp_getset = function_getset,
    .tp_new = function_new,
};

/* ------------------------------------------------------------------------ */
/* Module                                                                    */

static PyObject* set_error_factory(PyObject* Py_UNUSED(module),
                                   PyObject* factory) {
  Py_INCREF(factory);
  Py_XSETREF(error_factory, factory);
  Py_RETURN_NONE;
}

static PyObject* set_torch(PyObject* Py_UNUSED(module), PyObject* args) {
  PyObject *tensor_type, *to_dlpack;
  if (!PyArg_ParseTuple(args, "OO", &tensor_type, &to_dlpack)) return NULL;
  Py_INCREF(tensor_type);
  Py_INCREF(to_dlpack);
  Py_XSETREF(torch_tensor_type, tensor_type);
  Py_XSETREF(torch_to_dlpack, to_dlpack);
  Py_RETURN_NONE;
}

static PyObject* module_version(PyObject* Py_UNUSED(module),
                                PyObject* Py_UNUSED(ignored)) {
  return PyUnicode_FromString(gj_version());
}

static PyObject* module_api_version(PyObject* Py_UNUSED(module),
                                    PyObject* Py_UNUSED(ignored)) {
  uint32_t v = gj_api_version();
  return Py_BuildValue("(II)", v >> 16, v & 0xffffu);
}

static PyObject* module_set_log_topics(PyObject* Py_UNUSED(module),
                                       PyObject* spec) {
  const char* text = PyUnicode_AsUTF8(spec);
  if (text == NULL) return NULL;
  gj_set_log_topics(text);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_set_error_factory", set_error_factory, METH_O,
     "Sets callable(code, message) -> exception for library errors."},
    {"_set_torch", set_torch, METH_VARARGS,
     "_set_torch(torch.Tensor, torch._C._to_dlpack): the fast path for "
     "CPU torch tensors."},
    {"version", module_version, METH_NOARGS,
     "gj_version(): the loaded library's version."},
    {"api_version", module_api_version, METH_NOARGS,
     "(major, minor) of the loaded library's C API."},
    {"set_log_topics", module_set_log_topics, METH_O,
     "gj_set_log_topics: 'guards,recompiles', 'all' or ''."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "guardjit._native",
    "guardjit's C ABI for Python: the hot path of the binding.", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
  if (PyType_Ready(&TensorType) < 0 || PyType_Ready(&ContextType) < 0 ||
      PyType_Ready(&GraphType) < 0 || PyType_Ready(&FunctionType) < 0) {
    return NULL;
  }
  str_dlpack = PyUnicode_InternFromString("__dlpack__");
  kwnames_stream = Py_BuildValue("(s)", "stream");
  str_requires_grad = PyUnicode_InternFromString("requires_grad");
  str_is_cpu = PyUnicode_InternFromString("is_cpu");
  if (str_dlpack == NULL || kwnames_stream == NULL ||
      str_requires_grad == NULL || str_is_cpu == NULL) {
    return NULL;
  }
  PyObject* module = PyModule_Create(&native_module);
  if (module == NULL) return NULL;
  if (PyModule_AddObjectRef(module, "Tensor", (PyObject*)&TensorType) < 0 ||
      PyModule_AddObjectRef(module, "Context", (PyObject*)&ContextType) < 0 ||
      PyModule_AddObjectRef(module, "Graph", (PyObject*)&GraphType) < 0 ||
      PyModule_AddObjectRef(module, "Function", (PyObject*)&FunctionType) <
          0 ||
      PyModule_AddIntConstant(module, "API_VERSION_MAJOR",
                              GJ_API_VERSION_MAJOR) < 0 ||
      PyModule_AddIntConstant(module, "API_VERSION_MINOR",
                              GJ_API_VERSION_MINOR) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
