/*
 * guardjit hello world: build relu(a + b) with the graph builder, call it on
 * two small tensors and print the result. Every call is checked.
 */
#include <guardjit/guardjit.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints and frees `error`; returns 1 if there was one. */
static int failed(gj_error* error, const char* what) {
  if (error == NULL) return 0;
  fprintf(stderr, "hello_world: %s failed (code %d): %s\n", what,
          (int)gj_error_get_code(error), gj_error_message(error));
  gj_error_destroy(error);
  return 1;
}

/* A contiguous float32 DLTensor over `data`. */
static DLTensor float_tensor(float* data, int64_t* shape, int ndim) {
  DLTensor t;
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL; /* contiguous */
  t.byte_offset = 0;
  return t;
}

int main(void) {
  int status = EXIT_FAILURE;
  gj_context* context = NULL;
  gj_graph_builder* builder = NULL;
  gj_graph* graph = NULL;
  gj_function* function = NULL;
  DLManagedTensor* result = NULL;

  printf("guardjit %s\n", gj_version());
  if (failed(gj_context_create(NULL, &context), "gj_context_create")) goto done;

  /* relu(a + b): inputs a and b, nodes add and relu, output relu. */
  if (failed(gj_graph_builder_create(context, "hello", &builder),
             "builder_create") ||
      failed(gj_graph_builder_add_input(builder, "a"), "add_input a") ||
      failed(gj_graph_builder_add_input(builder, "b"), "add_input b")) {
    goto done;
  }
  {
    gj_arg add_args[2];
    gj_arg relu_args[1];
    const char* outputs[1] = {"relu"};
    add_args[0] = gj_arg_ref("a");
    add_args[1] = gj_arg_ref("b");
    relu_args[0] = gj_arg_ref("add");
    if (failed(gj_graph_builder_add_node(builder, "add", "aten.add.Tensor",
                                         add_args, 2),
               "add_node add") ||
        failed(gj_graph_builder_add_node(builder, "relu", "aten.relu.default",
                                         relu_args, 1),
               "add_node relu") ||
        failed(gj_graph_builder_set_outputs(builder, outputs, 1),
               "set_outputs") ||
        failed(gj_graph_builder_finish(builder, &graph), "finish")) {
      goto done;
    }
  }
  if (failed(gj_function_create(context, graph, NULL, &function),
             "gj_function_create")) {
    goto done;
  }

  {
    float a_data[6] = {1, -2, 3, -4, 5, -6};
    float b_data[3] = {0.5f, 0.5f, 10};
    int64_t a_shape[2] = {2, 3};
    int64_t b_shape[1] = {3}; /* broadcasts over the rows of a */
    DLTensor a = float_tensor(a_data, a_shape, 2);
    DLTensor b = float_tensor(b_data, b_shape, 1);
    const DLTensor* inputs[2];
    const DLTensor* out;
    int64_t i, n = 1;
    int d;
    inputs[0] = &a;
    inputs[1] = &b;
    if (failed(gj_function_call_alloc(function, inputs, 2, NULL, &result, 1),
               "gj_function_call_alloc")) {
      goto done;
    }
    out = &result->dl_tensor;
    if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
      fprintf(stderr, "hello_world: unexpected result dtype\n");
      goto done;
    }
    printf("relu(a + b) = float32[");
    for (d = 0; d < out->ndim; ++d) {
      printf(d == 0 ? "%lld" : ", %lld", (long long)out->shape[d]);
      n *= out->shape[d];
    }
    printf("]:");
    for (i = 0; i < n; ++i) printf(" %g", ((const float*)out->data)[i]);
    printf("\n");
  }
  status = EXIT_SUCCESS;

done:
  gj_tensor_release(result);
  gj_function_destroy(function);
  gj_graph_destroy(graph);
  gj_graph_builder_destroy(builder);
  gj_context_destroy(context);
  return status;
}
