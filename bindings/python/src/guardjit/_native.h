/*
 * Internal header of guardjit._native (not installed): what its files share.
 * _native.c: the module, its state and library errors; _dlpack.c: DLPack
 * export (Tensor, the library's outputs) and import (call arguments);
 * _handles.c: the Context, Graph and Function types. Symbols other than
 * PyInit__native are hidden (-fvisibility=hidden in setup.py).
 */
#ifndef GUARDJIT_PY_NATIVE_H_
#define GUARDJIT_PY_NATIVE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <guardjit/guardjit.h>

/* Inputs and outputs of a call live on the stack up to this many. */
#define GJ_PY_STACK_TENSORS 16

/* Module state (_native.c), set up by PyInit__native and _set_* calls. */
extern PyObject* error_factory; /* callable(code, message) -> exception */
extern PyObject* str_dlpack;    /* "__dlpack__" */
extern PyObject* kwnames_stream; /* ("stream",) */
/* torch.Tensor and torch._C._to_dlpack once torch is loaded: torch's
 * Python-level __dlpack__ costs ~2 us a tensor, its C exporter ~0.2 us. */
extern PyObject* torch_tensor_type;
extern PyObject* torch_to_dlpack;
extern PyObject* str_requires_grad;
extern PyObject* str_is_cpu;

/* Raises the Python exception for `error` and frees it. Returns NULL. */
PyObject* raise_gj_error(gj_error* error);
/* Takes ownership of a library-allocated string. */
PyObject* take_string(char* text);

/* ------------------------------------------------------------------------ */
/* DLPack (_dlpack.c)                                                        */

extern PyTypeObject TensorType;
/* A Tensor owning `managed` (released on failure). */
PyObject* wrap_output(DLManagedTensor* managed);


/* The DLPack tensors of one call's arguments: capsules taken from the
 * producers, consumed (renamed and deleted) when the call is done. */
typedef struct {
  Py_ssize_t count;
  PyObject* capsules_stack[GJ_PY_STACK_TENSORS];
  const DLTensor* tensors_stack[GJ_PY_STACK_TENSORS];
  PyObject** capsules;
  const DLTensor** tensors;
} Imports;

/* Imports `count` objects through __dlpack__ (with stream= when `stream` is
 * not None); `what` names them in errors. -1 with an exception set, nothing
 * left to release. */
int imports_add_all(Imports* imports, PyObject* const* objects,
                    Py_ssize_t count, PyObject* stream, const char* what);
/* As a DLPack consumer: mark each capsule used, then release the producer's
 * tensor with its deleter. */
void imports_release(Imports* imports);

/* ------------------------------------------------------------------------ */
/* Handle types (_handles.c)                                                */

extern PyTypeObject ContextType;
extern PyTypeObject GraphType;
extern PyTypeObject FunctionType;

#endif /* GUARDJIT_PY_NATIVE_H_ */
