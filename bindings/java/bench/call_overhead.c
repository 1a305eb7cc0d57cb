/*
 * The C side of the Java binding's call-overhead comparison (bench/run.sh):
 * times cached gj_function_call (caller outputs) and gj_function_call_alloc
 * + gj_tensor_release on examples/seed_mul.pbtxt with float32[N] inputs.
 * Usage: call_overhead_c GRAPH N ITERATIONS
 */
#include <guardjit/guardjit.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void check(gj_error* e) {
  if (e != NULL) {
    fprintf(stderr, "error %d: %s\n", (int)gj_error_get_code(e),
            gj_error_message(e));
    exit(1);
  }
}

int main(int argc, char** argv) {
  int64_t n = argc > 2 ? atoll(argv[2]) : 10;
  long iters = argc > 3 ? atol(argv[3]) : 1000000;
  gj_context* ctx;
  gj_graph* graph;
  gj_function* fn;
  float* x = calloc((size_t)n, sizeof(float));
  float* b = calloc((size_t)n, sizeof(float));
  float* y = calloc((size_t)n, sizeof(float));
  int64_t shape[1];
  DLTensor tx = {0}, tb, ty;
  const DLTensor* inputs[2];
  const DLTensor* outputs[1];
  DLManagedTensor* out;
  long i, round;
  double t0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s GRAPH [N] [ITERATIONS]\n", argv[0]);
    return 2;
  }
  shape[0] = n;
  tx.device.device_type = kDLCPU;
  tx.ndim = 1;
  tx.dtype.code = kDLFloat;
  tx.dtype.bits = 32;
  tx.dtype.lanes = 1;
  tx.shape = shape;
  tb = tx;
  ty = tx;
  tx.data = x;
  tb.data = b;
  ty.data = y;
  inputs[0] = &tx;
  inputs[1] = &tb;
  outputs[0] = &ty;
  check(gj_context_create(NULL, &ctx));
  check(gj_graph_from_file(ctx, argv[1], NULL, &graph));
  check(gj_function_create(ctx, graph, NULL, &fn));
  for (round = 0; round < 3; ++round) {
    for (i = 0; i < iters / 10; ++i) {
      check(gj_function_call(fn, inputs, 2, outputs, 1, NULL));
    }
    t0 = now_ns();
    for (i = 0; i < iters; ++i) {
      check(gj_function_call(fn, inputs, 2, outputs, 1, NULL));
    }
    printf("C    call        float32[%lld]: %.0f ns/call\n", (long long)n,
           (now_ns() - t0) / iters);
    t0 = now_ns();
    for (i = 0; i < iters; ++i) {
      check(gj_function_call_alloc(fn, inputs, 2, NULL, &out, 1));
      gj_tensor_release(out);
    }
    printf("C    call_alloc  float32[%lld]: %.0f ns/call\n", (long long)n,
           (now_ns() - t0) / iters);
  }
  gj_function_destroy(fn);
  gj_graph_destroy(graph);
  gj_context_destroy(ctx);
  free(x);
  free(b);
  free(y);
  return 0;
}
