/*
 * A program outside the guardjit tree, built against an installed guardjit:
 * once with CMake's find_package (static library) and once with pkg-config
 * (shared library). It checks the version, loads a graph from protobuf text
 * (so protobuf is linked), builds relu(a + b) (so op kernels are linked) and
 * checks the values.
 */
#include <guardjit/guardjit.h>
#include <stdio.h>
#include <string.h>

static const char kGraph[] =
    "name: \"pass\"\n"
    "placeholders { name: \"x\" }\n"
    "outputs { ref: \"x\" }\n";

static int check(gj_error* error, const char* what) {
  if (error == NULL) return 1;
  fprintf(stderr, "consumer: %s: code %d: %s\n", what,
          (int)gj_error_get_code(error), gj_error_message(error));
  gj_error_destroy(error);
  return 0;
}

static DLTensor floats(float* data, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

int main(void) {
  gj_context* context = NULL;
  gj_graph* loaded = NULL;
  gj_graph_builder* builder = NULL;
  gj_graph* graph = NULL;
  gj_function* function = NULL;
  DLManagedTensor* out = NULL;
  float a_data[3] = {1, -2, 3};
  float b_data[3] = {1, 1, -5};
  int64_t shape[1] = {3};
  DLTensor a = floats(a_data, shape);
  DLTensor b = floats(b_data, shape);
  const DLTensor* inputs[2] = {&a, &b};
  gj_arg add_args[2];
  gj_arg relu_args[1];
  const char* outputs[1] = {"relu"};
  int ok = 0;

  add_args[0] = gj_arg_ref("a");
  add_args[1] = gj_arg_ref("b");
  relu_args[0] = gj_arg_ref("add");
  if (gj_api_version() !=
      ((GJ_API_VERSION_MAJOR << 16) | GJ_API_VERSION_MINOR)) {
    fprintf(stderr, "consumer: header and library versions differ\n");
    return 1;
  }
  if (check(gj_context_create(NULL, &context), "context") &&
      check(gj_graph_from_text(context, kGraph, strlen(kGraph), NULL, &loaded),
            "text") &&
      check(gj_graph_builder_create(context, "relu_add", &builder),
            "builder") &&
      check(gj_graph_builder_add_input(builder, "a"), "input a") &&
      check(gj_graph_builder_add_input(builder, "b"), "input b") &&
      check(gj_graph_builder_add_node(builder, "add", "aten.add.Tensor",
                                      add_args, 2),
            "add") &&
      check(gj_graph_builder_add_node(builder, "relu", "aten.relu.default",
                                      relu_args, 1),
            "relu") &&
      check(gj_graph_builder_set_outputs(builder, outputs, 1), "outputs") &&
      check(gj_graph_builder_finish(builder, &graph), "finish") &&
      check(gj_function_create(context, graph, NULL, &function), "function") &&
      check(gj_function_call_alloc(function, inputs, 2, NULL, &out, 1),
            "call")) {
    const float* r = (const float*)out->dl_tensor.data;
    ok =
        gj_graph_num_inputs(loaded) == 1 && r[0] == 2 && r[1] == 0 && r[2] == 0;
    printf("guardjit %s: relu(a + b) = [%g, %g, %g] %s\n", gj_version(), r[0],
           r[1], r[2], ok ? "ok" : "WRONG");
  }
  gj_tensor_release(out);
  gj_function_destroy(function);
  gj_graph_destroy(graph);
  gj_graph_builder_destroy(builder);
  gj_graph_destroy(loaded);
  gj_context_destroy(context);
  return ok ? 0 : 1;
}
