#include "shim.h"

#include <time.h>

#include "_cgo_export.h"

static void bind(DLTensor* t, size_t n, void* p0, void* p1, void* p2, void* p3,
                 void* p4, void* p5, void* p6, void* p7) {
  void* p[GJGO_DIRECT] = {p0, p1, p2, p3, p4, p5, p6, p7};
  size_t i;
  /* NULL: not Go memory (a DevicePtr tensor, set by the caller, or an empty
   * one); only Go slices are bound here. */
  for (i = 0; i < n && i < GJGO_DIRECT; ++i) {
    if (p[i] != NULL) t[i].data = p[i];
  }
}

static void unbind(DLTensor* t, size_t n) {
  size_t i;
  for (i = 0; i < n && i < GJGO_DIRECT; ++i) t[i].data = NULL;
}

gj_error* gjgo_call(gj_function* fn, DLTensor* tensors, const DLTensor** ptrs,
                    size_t n_in, size_t n_out, const gj_call_options* options,
                    size_t n_direct, void* p0, void* p1, void* p2, void* p3,
                    void* p4, void* p5, void* p6, void* p7) {
  gj_error* err;
  bind(tensors, n_direct, p0, p1, p2, p3, p4, p5, p6, p7);
  err = gj_function_call(fn, ptrs, n_in, ptrs + n_in, n_out, options);
  unbind(tensors, n_direct);
  return err;
}

gj_error* gjgo_call_alloc(gj_function* fn, DLTensor* tensors,
                          const DLTensor** ptrs, size_t n_in,
                          const gj_call_options* options,
                          DLManagedTensor** out, size_t n_out, size_t n_direct,
                          void* p0, void* p1, void* p2, void* p3, void* p4,
                          void* p5, void* p6, void* p7) {
  gj_error* err;
  bind(tensors, n_direct, p0, p1, p2, p3, p4, p5, p6, p7);
  err = gj_function_call_alloc(fn, ptrs, n_in, options, out, n_out);
  unbind(tensors, n_direct);
  return err;
}

void gjgo_release_all(DLManagedTensor** out, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) gj_tensor_release(out[i]);
}

static void log_trampoline(void* user_data, const char* topic,
                           const char* message) {
  (void)user_data;
  gjgoLog((char*)topic, (char*)message);
}

void gjgo_set_log_handler(int enable) {
  gj_set_log_callback(enable ? log_trampoline : NULL, NULL);
}

double gjgo_bench_native(gj_function* fn, const DLTensor** ptrs, size_t n_in,
                         size_t n_out, long iters, gj_error** out_error) {
  struct timespec a, b;
  long i;
  *out_error = NULL;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (i = 0; i < iters; ++i) {
    gj_error* err = gj_function_call(fn, ptrs, n_in, ptrs + n_in, n_out, NULL);
    if (err != NULL) {
      *out_error = err;
      return -1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
         (double)iters;
}
