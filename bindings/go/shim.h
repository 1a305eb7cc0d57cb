/* C side of the Go binding: the few helpers cgo needs. See doc.go for why the
 * data pointers of Go slices are passed as direct arguments. */
#ifndef GUARDJIT_GO_SHIM_H_
#define GUARDJIT_GO_SHIM_H_

#include <guardjit/guardjit.h>

/* How many Go data pointers one call passes as direct arguments. */
#define GJGO_DIRECT 8

/* gj_function_call over tensors[0 .. n_in + n_out) (inputs, then outputs) and
 * the pointer array ptrs (same order), all in C memory. The first n_direct
 * tensors get their data pointers from p0..p7 (Go memory, pinned by cgo for
 * the duration of this call); those fields are cleared again before
 * returning, so no Go pointer stays in C memory. */
gj_error* gjgo_call(gj_function* fn, DLTensor* tensors, const DLTensor** ptrs,
                    size_t n_in, size_t n_out, const gj_call_options* options,
                    size_t n_direct, void* p0, void* p1, void* p2, void* p3,
                    void* p4, void* p5, void* p6, void* p7);

/* gj_function_call_alloc with the same input convention. */
gj_error* gjgo_call_alloc(gj_function* fn, DLTensor* tensors,
                          const DLTensor** ptrs, size_t n_in,
                          const gj_call_options* options,
                          DLManagedTensor** out, size_t n_out, size_t n_direct,
                          void* p0, void* p1, void* p2, void* p3, void* p4,
                          void* p5, void* p6, void* p7);

/* Releases out[0 .. n) (NULL entries skipped) in one crossing. */
void gjgo_release_all(DLManagedTensor** out, size_t n);

/* Installs (enable != 0) or removes the Go log handler. */
void gjgo_set_log_handler(int enable);

/* A cached-call loop entirely in C, for measuring the binding's overhead:
 * returns the mean nanoseconds of `iters` gj_function_call calls, or -1 on
 * an error (which is then left in *out_error). */
double gjgo_bench_native(gj_function* fn, const DLTensor** ptrs, size_t n_in,
                         size_t n_out, long iters, gj_error** out_error);

#endif /* GUARDJIT_GO_SHIM_H_ */
