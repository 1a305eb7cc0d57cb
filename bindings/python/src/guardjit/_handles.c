/* The handle types of guardjit._native: Context, Graph and Function, each
 * owning its gj_* handle. A Function's call imports its arguments and wraps
 * its outputs through _dlpack.c. */
#include "_native.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

typedef struct {
  PyObject_HEAD
  gj_context* context;
} ContextObject;

static PyObject* context_new(PyTypeObject* type, PyObject* args,
                             PyObject* kwargs) {
  static char* keywords[] = {"num_threads",     "backend",
                             "max_cached_kernels", "max_cached_bytes",
                             "cache_dir",       "cache_key",
                             "max_cache_bytes", "remote_cache", NULL};
  int num_threads = 0, backend = 0, max_cached_kernels = -1;
  long long max_cached_bytes = -1;
  long long max_cache_bytes = LLONG_MIN; /* unset: the library's default */
  /* None: the environment's (GJ_CACHE_DIR, GJ_CACHE_KEY,
   * GJ_REMOTE_CACHE); "": none. */
  const char* cache_dir = NULL;
  const char* cache_key = NULL;
  const char* remote_cache = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$iiiLzzLz", keywords,
                                   &num_threads, &backend, &max_cached_kernels,
                                   &max_cached_bytes, &cache_dir, &cache_key,
                                   &max_cache_bytes, &remote_cache)) {
    return NULL;
  }
  gj_context_options options;
  gj_context_options_init_v(&options, sizeof options);
  options.num_threads = num_threads;
  options.backend = (gj_backend)backend;
  if (max_cached_kernels >= 0) options.max_cached_kernels = max_cached_kernels;
  if (max_cached_bytes >= 0) options.max_cached_bytes = max_cached_bytes;
  options.cache_dir = cache_dir;
  options.cache_key = cache_key;
  options.remote_cache = remote_cache;
  if (max_cache_bytes != LLONG_MIN) options.max_cache_bytes = max_cache_bytes;
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
      "{sLsLsLsLsLsLsLsL}", "bytes_in_use", (long long)stats.bytes_in_use,
      "bytes_cached", (long long)stats.bytes_cached, "peak_bytes_in_use",
      (long long)stats.peak_bytes_in_use, "system_allocations",
      (long long)stats.system_allocations, "cache_hits",
      (long long)stats.cache_hits, "compiled_modules",
      (long long)stats.compiled_modules, "cached_kernels",
      (long long)stats.cached_kernels, "packed_weight_bytes",
      (long long)stats.packed_weight_bytes);
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

/* device_memory_stats(device_type, device_id) and
 * release_cached_device_memory(device_type, device_id): C API 0.10. */
static PyObject* context_device_memory_stats(ContextObject* self,
                                             PyObject* args) {
  int type, id;
  if (!PyArg_ParseTuple(args, "ii", &type, &id)) return NULL;
  DLDevice device;
  device.device_type = (DLDeviceType)type;
  device.device_id = id;
  gj_memory_stats stats;
  gj_memory_stats_init_v(&stats, sizeof stats);
  gj_error* error =
      gj_context_get_device_memory_stats(self->context, device, &stats);
  if (error != NULL) return raise_gj_error(error);
  return Py_BuildValue(
      "{sLsLsLsLsLsLsLsL}", "bytes_in_use", (long long)stats.bytes_in_use,
      "bytes_cached", (long long)stats.bytes_cached, "peak_bytes_in_use",
      (long long)stats.peak_bytes_in_use, "system_allocations",
      (long long)stats.system_allocations, "cache_hits",
      (long long)stats.cache_hits, "compiled_modules",
      (long long)stats.compiled_modules, "cached_kernels",
      (long long)stats.cached_kernels, "packed_weight_bytes",
      (long long)stats.packed_weight_bytes);
}

static PyObject* context_release_cached_device_memory(ContextObject* self,
                                                      PyObject* args) {
  int type, id;
  if (!PyArg_ParseTuple(args, "ii", &type, &id)) return NULL;
  DLDevice device;
  device.device_type = (DLDeviceType)type;
  device.device_id = id;
  gj_error* error;
  Py_BEGIN_ALLOW_THREADS
  error = gj_context_release_cached_device_memory(self->context, device);
  Py_END_ALLOW_THREADS
  if (error != NULL) return raise_gj_error(error);
  Py_RETURN_NONE;
}

/* compile_cache_stats(): C API 0.11. */
static PyObject* context_compile_cache_stats(ContextObject* self,
                                             PyObject* Py_UNUSED(ignored)) {
  gj_compile_cache_stats stats;
  gj_compile_cache_stats_init(&stats);
  gj_error* error = gj_context_get_compile_cache_stats(self->context, &stats);
  if (error != NULL) return raise_gj_error(error);
  return Py_BuildValue(
      "{sLsLsLsLsLsLsLsLsLsLsLsLsL}", "kernels_compiled",
      (long long)stats.kernels_compiled, "kernels_loaded",
      (long long)stats.kernels_loaded, "disk_hits", (long long)stats.disk_hits,
      "disk_misses", (long long)stats.disk_misses, "disk_stores",
      (long long)stats.disk_stores, "remote_hits",
      (long long)stats.remote_hits, "remote_misses",
      (long long)stats.remote_misses, "remote_stores",
      (long long)stats.remote_stores, "lock_waits",
      (long long)stats.lock_waits, "lock_timeouts",
      (long long)stats.lock_timeouts, "rejected", (long long)stats.rejected,
      "errors", (long long)stats.errors, "evictions",
      (long long)stats.evictions);
}

static PyMethodDef context_methods[] = {
    {"compile_cache_stats", (PyCFunction)context_compile_cache_stats,
     METH_NOARGS,
     "The context's compile cache counters as a dict "
     "(gj_compile_cache_stats)."},
    {"memory_stats", (PyCFunction)context_memory_stats, METH_NOARGS,
     "The context's memory counters as a dict (gj_memory_stats)."},
    {"release_cached_memory", (PyCFunction)context_release_cached_memory,
     METH_NOARGS, "Returns every cached host block to the system."},
    {"device_memory_stats", (PyCFunction)context_device_memory_stats,
     METH_VARARGS,
     "(device_type, device_id): one device's memory counters as a dict."},
    {"release_cached_device_memory",
     (PyCFunction)context_release_cached_device_memory, METH_VARARGS,
     "(device_type, device_id): returns the device's idle cached blocks."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ContextType = {
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

static void graph_dealloc(GraphObject* self) {
  gj_graph_destroy(self->graph);
  Py_XDECREF(self->context);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

enum { LOAD_TEXT, LOAD_PROTO, LOAD_FILE };

/* load(kind, context, data: bytes | path: str, external_data_dir: str|None,
 *      format: int = GJ_GRAPH_FORMAT_DETECT) */
static PyObject* graph_load(PyTypeObject* type, PyObject* args) {
  int kind;
  int format = GJ_GRAPH_FORMAT_DETECT;
  PyObject *context, *data, *dir_object;
  if (!PyArg_ParseTuple(args, "iO!OO|i", &kind, &ContextType, &context, &data,
                        &dir_object, &format)) {
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
  options.format = (gj_graph_format)format;
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

/* _io_info(inputs): per input (or output), (name, gj_dtype, rank, dims)
 * with dims a tuple of (size, symbol or None) when rank >= 0, else None.
 * C API 0.12. */
static PyObject* graph_io_info(GraphObject* self, PyObject* arg) {
  const int inputs = PyObject_IsTrue(arg);
  if (inputs < 0) return NULL;
  const gj_graph* g = self->graph;
  size_t count = inputs ? gj_graph_num_inputs(g) : gj_graph_num_outputs(g);
  PyObject* result = PyTuple_New((Py_ssize_t)count);
  if (result == NULL) return NULL;
  for (size_t i = 0; i < count; ++i) {
    const char* name =
        inputs ? gj_graph_input_name(g, i) : gj_graph_output_name(g, i);
    int dtype = (int)(inputs ? gj_graph_input_dtype(g, i)
                             : gj_graph_output_dtype(g, i));
    int64_t rank = inputs ? gj_graph_input_rank(g, i) : gj_graph_output_rank(g, i);
    PyObject* dims = Py_None;
    Py_INCREF(Py_None);
    if (rank >= 0) {
      Py_DECREF(Py_None);
      dims = PyTuple_New((Py_ssize_t)rank);
      if (dims == NULL) {
        Py_DECREF(result);
        return NULL;
      }
      for (int64_t k = 0; k < rank; ++k) {
        int64_t size = inputs ? gj_graph_input_dim(g, i, (size_t)k)
                              : gj_graph_output_dim(g, i, (size_t)k);
        const char* symbol = inputs ? gj_graph_input_dim_symbol(g, i, (size_t)k)
                                    : gj_graph_output_dim_symbol(g, i, (size_t)k);
        PyObject* dim = symbol != NULL ? Py_BuildValue("(Ls)", (long long)size, symbol)
                                       : Py_BuildValue("(LO)", (long long)size, Py_None);
        if (dim == NULL) {
          Py_DECREF(dims);
          Py_DECREF(result);
          return NULL;
        }
        PyTuple_SET_ITEM(dims, (Py_ssize_t)k, dim);
      }
    }
    PyObject* item = Py_BuildValue("(siLN)", name != NULL ? name : "", dtype,
                                   (long long)rank, dims);
    if (item == NULL) {
      Py_DECREF(result);
      return NULL;
    }
    PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
  }
  return result;
}

static PyObject* graph_tabular(GraphObject* self, PyObject* Py_UNUSED(i)) {
  char* text = NULL;
  gj_error* error = gj_graph_to_tabular(self->graph, &text);
  if (error != NULL) return raise_gj_error(error);
  return take_string(text);
}

static PyMethodDef graph_methods[] = {
    {"_load", (PyCFunction)graph_load, METH_VARARGS | METH_CLASS,
     "_load(kind, context, data_or_path, external_data_dir[, format])"},
    {"_io_info", (PyCFunction)graph_io_info, METH_O,
     "_io_info(inputs): declared (name, dtype, rank, dims) per input/output"},
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

PyTypeObject GraphType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "guardjit._native.Graph",
    .tp_basicsize = sizeof(GraphObject),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "gj_graph: a loaded, validated graph.",
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

/* ------------------------------------------------------------------------ */
/* Function                                                                  */

typedef struct {
  PyObject_HEAD
  gj_function* function;
  PyObject* context; /* the function must die before its context */
  size_t num_inputs;
  size_t num_outputs;
} FunctionObject;

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
    options.mark_dynamic_stride = sizeof(gj_dynamic_dim);
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
 * of destination tensors or None), timeout_us, synchronize (truthy). */
typedef struct {
  PyObject* stream;
  PyObject* out;
  long long timeout_us;
  int synchronize;
} CallKeywords;

static int parse_call_keywords(PyObject* kwargs, CallKeywords* keywords) {
  keywords->stream = Py_None;
  keywords->out = Py_None;
  keywords->timeout_us = 0;
  keywords->synchronize = 0;
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
    } else if (strcmp(name, "synchronize") == 0) {
      keywords->synchronize = PyObject_IsTrue(value);
      if (keywords->synchronize < 0) return -1;
    } else {
      PyErr_Format(PyExc_TypeError,
                   "guardjit.Function call got an unexpected keyword '%s' "
                   "(stream, out, timeout_us, synchronize)",
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
  options->synchronize = keywords->synchronize;
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
      "{sLsLsLsLsLsLsLsdsdsLsLsLsLsLsLsLsLsLsL}", "calls",
      (long long)stats.calls,
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
      (long long)stats.eager_while_compiling, "entries_loaded",
      (long long)stats.entries_loaded);
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

PyTypeObject FunctionType = {
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
