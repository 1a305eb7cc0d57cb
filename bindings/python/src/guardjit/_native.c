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
 *
 * This file: the module, its state and library errors; _native.h says
 * where the rest lives.
 */
#include "_native.h"

#include <stdint.h>
#include <string.h>

PyObject* error_factory; /* callable(code, message) -> exception */
PyObject* str_dlpack;    /* "__dlpack__" */
PyObject* kwnames_stream; /* ("stream",) */
/* torch.Tensor and torch._C._to_dlpack once torch is loaded: torch's
 * Python-level __dlpack__ costs ~2 us a tensor, its C exporter ~0.2 us. */
PyObject* torch_tensor_type;
PyObject* torch_to_dlpack;
PyObject* str_requires_grad;
PyObject* str_is_cpu;

PyObject* raise_gj_error(gj_error* error) {
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

PyObject* take_string(char* text) {
  PyObject* result =
      PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  gj_string_destroy(text);
  return result;
}

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
