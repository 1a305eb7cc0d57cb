// The graph builder driven by a byte stream: a sequence of
// gj_graph_builder_add_input / add_constant / add_node / set_outputs calls
// with names from a small pool (so references resolve, and sometimes clash),
// targets from a list of real ATen overloads (and a few that are not), and
// arguments of every gj_arg kind (and kinds no header names), positional
// or keyword; then gj_graph_builder_finish. A graph that results is
// inspected, made into a function and called once or twice on small inputs
// through gj_function_call_alloc. Every step must return an error or succeed,
// never crash; errors leave outputs untouched.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

constexpr const char* kNames[] = {"x",  "y",  "z",  "c0",  "c1",
                                  "n0", "n1", "n2", "n3",  "n4",
                                  "n5", "n6", "n7", "out", ""};

constexpr const char* kTargets[] = {"aten.add.Tensor",
                                    "aten.sub.Tensor",
                                    "aten.mul.Tensor",
                                    "aten.div.Tensor",
                                    "aten.div.Tensor_mode",
                                    "aten.add.Scalar",
                                    "aten.mul.Scalar",
                                    "aten.pow.Tensor_Scalar",
                                    "aten.pow.Tensor_Tensor",
                                    "aten.pow.Scalar",
                                    "aten.where.self",
                                    "aten.clamp.default",
                                    "aten.clamp.Tensor",
                                    "aten.maximum.default",
                                    "aten.eq.Tensor",
                                    "aten.lt.Scalar",
                                    "aten.neg.default",
                                    "aten.abs.default",
                                    "aten.exp.default",
                                    "aten.log.default",
                                    "aten.relu.default",
                                    "aten.gelu.default",
                                    "aten.round.decimals",
                                    "aten.bitwise_not.default",
                                    "aten.logical_not.default",
                                    "aten.sigmoid.default",
                                    "aten.sum.default",
                                    "aten.sum.dim_IntList",
                                    "aten.mean.dim",
                                    "aten.var.correction",
                                    "aten.amax.default",
                                    "aten.argmax.default",
                                    "aten.prod.dim_int",
                                    "aten.any.dims",
                                    "aten.all.dim",
                                    "aten._softmax.default",
                                    "aten._log_softmax.default",
                                    "aten.native_layer_norm.default",
                                    "aten.view.default",
                                    "aten._unsafe_view.default",
                                    "aten.expand.default",
                                    "aten.permute.default",
                                    "aten.unsqueeze.default",
                                    "aten.squeeze.dims",
                                    "aten.squeeze.default",
                                    "aten.select.int",
                                    "aten.slice.Tensor",
                                    "aten.cat.default",
                                    "aten.split_with_sizes.default",
                                    "aten.constant_pad_nd.default",
                                    "aten.clone.default",
                                    "aten._to_copy.default",
                                    "aten.embedding.default",
                                    "aten.index_select.default",
                                    "aten.gather.default",
                                    "aten.mm.default",
                                    "aten.bmm.default",
                                    "aten.addmm.default",
                                    "aten.convolution.default",
                                    "aten.full.default",
                                    "aten.arange.start_step",
                                    "aten.arange.default",
                                    "aten.scalar_tensor.default",
                                    "aten.sym_size.int",
                                    "aten.sym_numel.default",
                                    "getitem",
                                    "operator.add",
                                    "operator.mul",
                                    "operator.floordiv",
                                    "operator.ge",
                                    "cond",
                                    "aten.no_such_op.default",
                                    "aten.add",
                                    "",
                                    "aten..Tensor"};

constexpr const char* kKwargs[] = {
    "alpha",         "dim",      "keepdim",       "dtype",  "rounding_mode",
    "approximate",   "decimals", "correction",    "min",    "max",
    "memory_format", "implicit", "device",        "layout", "pin_memory",
    "padding_idx",   "value",    "half_to_float", "start",  "end",
    "step",          "index",    "eps",           "size",   "other",
    "self",          "",         "no_such_kwarg"};

constexpr const char* kStrings[] = {"none",
                                    "tanh",
                                    "floor",
                                    "trunc",
                                    "",
                                    "cpu",
                                    "x",
                                    "cuda:0",
                                    "cuda",
                                    "cpu:1",
                                    "cuda:-1",
                                    "meta",
                                    "cuda:99999999999999999999",
                                    "true_fn",
                                    "n0"};

// Sizes, dims and scalars: mostly small; at the edges only values whose
// products overflow or whose tensors no allocator grants (the sanitizer
// build refuses single allocations over 256 MiB), never mid-sized ones that
// would merely be slow.
int64_t PickInt(FuzzedDataProvider& p) {
  static const int64_t kEdges[] = {16,
                                   100,
                                   -1,
                                   -2,
                                   -3,
                                   std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::max() - 1,
                                   int64_t{1} << 62,
                                   -(int64_t{1} << 62),
                                   (int64_t{1} << 32) + 1};
  if (p.ConsumeIntegralInRange<int>(0, 5) == 0)
    return p.PickValueInArray(kEdges);
  return p.ConsumeIntegralInRange<int64_t>(0, 8);
}

double PickFloat(FuzzedDataProvider& p) {
  static const double kValues[] = {0.0,
                                   1.0,
                                   -1.0,
                                   0.5,
                                   2.5,
                                   -0.0,
                                   1e308,
                                   4.9e-324,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN(),
                                   9.3e18,
                                   -9.3e18};
  return p.PickValueInArray(kValues);
}

const char* PickName(FuzzedDataProvider& p) {
  if (p.ConsumeIntegralInRange<int>(0, 63) == 0) return nullptr;
  return p.PickValueInArray(kNames);
}

// Storage for one gj_arg's pointers, alive until add_node returns.
struct ArgStorage {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<const char*> refs;
};

gj_arg MakeArg(FuzzedDataProvider& p, ArgStorage& storage) {
  gj_arg a = gj_arg_none();
  int32_t kind = p.ConsumeIntegralInRange<int32_t>(0, 11);
  if (p.ConsumeIntegralInRange<int>(0, 63) == 0)
    kind = p.ConsumeIntegral<int32_t>();
  std::memcpy(&a.kind, &kind, sizeof(kind));  // any int a C host may store
  a.name = p.ConsumeIntegralInRange<int>(0, 3) == 0
               ? p.PickValueInArray(kKwargs)
               : nullptr;
  const size_t len = p.ConsumeIntegralInRange<size_t>(0, 4);
  switch (kind) {
    case GJ_ARG_REF:
    case GJ_ARG_SUBGRAPH:
      a.str = PickName(p);
      break;
    case GJ_ARG_INT:
      a.i = PickInt(p);
      break;
    case GJ_ARG_FLOAT:
      a.f = PickFloat(p);
      break;
    case GJ_ARG_BOOL:
      a.i = p.ConsumeIntegralInRange<int>(0, 15) == 0
                ? p.ConsumeIntegral<int64_t>()
                : p.ConsumeBool();
      break;
    case GJ_ARG_STRING:
    case GJ_ARG_DEVICE:
      a.str = p.ConsumeIntegralInRange<int>(0, 31) == 0
                  ? nullptr
                  : p.PickValueInArray(kStrings);
      break;
    case GJ_ARG_DTYPE: {
      const int32_t dtype = p.ConsumeIntegralInRange<int32_t>(-1, 12);
      std::memcpy(&a.dtype, &dtype, sizeof(dtype));
      break;
    }
    case GJ_ARG_INT_LIST:
      for (size_t k = 0; k < len; ++k) storage.ints.push_back(PickInt(p));
      a.ints = storage.ints.data();
      if (len > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0)
        a.ints = nullptr;
      a.len = len;
      break;
    case GJ_ARG_FLOAT_LIST:
      for (size_t k = 0; k < len; ++k) storage.floats.push_back(PickFloat(p));
      a.floats = storage.floats.data();
      if (len > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0)
        a.floats = nullptr;
      a.len = len;
      break;
    case GJ_ARG_REF_LIST:
      for (size_t k = 0; k < len; ++k) storage.refs.push_back(PickName(p));
      a.refs = storage.refs.data();
      if (len > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0)
        a.refs = nullptr;
      a.len = len;
      break;
    default:
      break;
  }
  return a;
}

void AddNode(FuzzedDataProvider& p, gj_graph_builder* builder) {
  const char* name = PickName(p);
  const char* target = p.ConsumeIntegralInRange<int>(0, 31) == 0
                           ? nullptr
                           : p.PickValueInArray(kTargets);
  const size_t num_args = p.ConsumeIntegralInRange<size_t>(0, 6);
  std::vector<ArgStorage> storage(num_args);
  std::vector<gj_arg> args;
  for (size_t k = 0; k < num_args; ++k) args.push_back(MakeArg(p, storage[k]));
  const gj_arg* args_ptr = args.data();
  if (num_args == 0 && p.ConsumeBool()) args_ptr = nullptr;
  if (num_args > 0 && p.ConsumeIntegralInRange<int>(0, 63) == 0)
    args_ptr = nullptr;
  gjfuzz::Consume(
      gj_graph_builder_add_node(builder, name, target, args_ptr, num_args));
}

void AddConstant(FuzzedDataProvider& p, gj_graph_builder* builder) {
  const char* name = PickName(p);
  const size_t size = p.ConsumeIntegralInRange<size_t>(0, 256);
  gjfuzz::Arena arena(size);
  std::memset(arena.begin(), 0, size);
  const std::vector<uint8_t> fill = p.ConsumeBytes<uint8_t>(size);
  if (!fill.empty()) std::memcpy(arena.begin(), fill.data(), fill.size());
  gjfuzz::FuzzTensor value;
  gjfuzz::MakeTensor(p, {&arena}, value, 4);
  if (value.verdict == gjfuzz::Verdict::kUnsafe) return;
  gjfuzz::NormalizeBools(value);
  const std::vector<uint8_t> before(arena.begin(), arena.begin() + size);
  const bool null_value = p.ConsumeIntegralInRange<int>(0, 63) == 0;
  const bool failed = gjfuzz::Consume(gj_graph_builder_add_constant(
      builder, name, null_value ? nullptr : &value.t));
  if (size > 0 && std::memcmp(arena.begin(), before.data(), size) != 0) {
    gjfuzz::Fail("gj_graph_builder_add_constant wrote into its value");
  }
  if (!failed && (null_value || value.verdict == gjfuzz::Verdict::kMustFail)) {
    gjfuzz::Fail(
        "gj_graph_builder_add_constant accepted a tensor the header refuses");
  }
}

void SetOutputs(FuzzedDataProvider& p, gj_graph_builder* builder) {
  const size_t count = p.ConsumeIntegralInRange<size_t>(0, 3);
  std::vector<const char*> names;
  for (size_t k = 0; k < count; ++k) names.push_back(PickName(p));
  const char* const* names_ptr = names.data();
  if (p.ConsumeIntegralInRange<int>(0, 31) == 0) names_ptr = nullptr;
  gjfuzz::Consume(gj_graph_builder_set_outputs(builder, names_ptr, count));
}

// Small contiguous inputs of fuzzer-chosen dtype, shape and bytes.
void CallOnce(FuzzedDataProvider& p, gj_function* function) {
  static const DLDataType kDTypes[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1},
                                       {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
                                       {kDLInt, 8, 1},    {kDLInt, 16, 1},
                                       {kDLInt, 32, 1},   {kDLInt, 64, 1},
                                       {kDLUInt, 8, 1},   {GJ_DL_BOOL, 8, 1}};
  const size_t num_inputs = gj_function_num_inputs(function);
  const size_t num_outputs = gj_function_num_outputs(function);
  struct Input {
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
    DLTensor t{};
  };
  std::vector<Input> inputs(num_inputs);
  std::vector<const DLTensor*> input_ptrs;
  for (Input& in : inputs) {
    in.t.dtype = p.PickValueInArray(kDTypes);
    in.t.ndim = p.ConsumeIntegralInRange<int32_t>(0, 3);
    size_t numel = 1;
    for (int d = 0; d < in.t.ndim; ++d) {
      in.shape.push_back(p.ConsumeIntegralInRange<int64_t>(0, 4));
      numel *= static_cast<size_t>(in.shape.back());
    }
    const size_t nbytes = numel * (in.t.dtype.bits / 8);
    in.bytes = p.ConsumeBytes<uint8_t>(nbytes);
    in.bytes.resize(nbytes + 8, 0);  // + 8: never empty, 8-aligned start
    if (in.t.dtype.code == GJ_DL_BOOL) {
      for (auto& b : in.bytes) b &= 1;  // bool holds 0 or 1
    }
    in.t.data = in.bytes.data();
    in.t.shape = in.shape.data();
    in.t.strides = nullptr;
    in.t.byte_offset = 0;
    in.t.device = {kDLCPU, 0};
    input_ptrs.push_back(&in.t);
    if (gjfuzz::Verbose()) {
      std::fprintf(stderr, "input: dtype (%d,%d) shape [", in.t.dtype.code,
                   in.t.dtype.bits);
      for (int64_t size : in.shape)
        std::fprintf(stderr, " %lld", (long long)size);
      std::fprintf(stderr, " ]\n");
    }
  }
  gj_call_options options;
  gj_call_options_init(&options);
  options.grad_mode = p.ConsumeBool();
  options.timeout_us = 2'000'000;  // a graph may ask for much work: stop it
  std::vector<DLManagedTensor*> outputs(num_outputs + 1,
                                        reinterpret_cast<DLManagedTensor*>(8));
  gj_error* error =
      gj_function_call_alloc(function, input_ptrs.data(), num_inputs, &options,
                             outputs.data(), num_outputs);
  if (gjfuzz::Consume(error)) {
    for (size_t i = 0; i < num_outputs; ++i) {
      if (outputs[i] != nullptr)
        gjfuzz::Fail("gj_function_call_alloc left an output on error");
    }
    return;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    gjfuzz::CheckAllocated(outputs[i]);
    gj_tensor_release(outputs[i]);
  }
}

void Run(FuzzedDataProvider& p) {
  const gj_backend backend =
      p.ConsumeBool() ? GJ_BACKEND_EAGER : GJ_BACKEND_DEFAULT;
  const bool caching = p.ConsumeBool();
  gj_graph_builder* builder = reinterpret_cast<gj_graph_builder*>(1);
  if (gjfuzz::Consume(gj_graph_builder_create(
          gjfuzz::Context(backend, caching),
          p.ConsumeBool() ? "fuzzed" : PickName(p), &builder))) {
    if (builder != nullptr)
      gjfuzz::Fail("gj_graph_builder_create wrote its output on error");
    return;
  }
  const int steps = p.ConsumeIntegralInRange<int>(0, 16);
  for (int s = 0; s < steps && p.remaining_bytes() > 0; ++s) {
    switch (p.ConsumeIntegralInRange<int>(0, 9)) {
      case 0:
      case 1:
        gjfuzz::Consume(gj_graph_builder_add_input(builder, PickName(p)));
        break;
      case 2:
        AddConstant(p, builder);
        break;
      case 3:
        SetOutputs(p, builder);
        break;
      default:
        AddNode(p, builder);
    }
  }
  gj_graph* graph = reinterpret_cast<gj_graph*>(1);
  const bool failed = gjfuzz::Consume(gj_graph_builder_finish(builder, &graph));
  gj_graph_builder_destroy(builder);
  if (failed) {
    if (graph != nullptr)
      gjfuzz::Fail("gj_graph_builder_finish wrote its output on error");
    return;
  }
  if (graph == nullptr)
    gjfuzz::Fail("gj_graph_builder_finish succeeded without a graph");
  gjfuzz::InspectGraph(graph);
  if (gjfuzz::Verbose()) {  // the graph as the library sees it
    char* text = nullptr;
    if (gj_graph_to_tabular(graph, &text) == nullptr) {
      std::fprintf(stderr, "graph:\n%s\n", text);
      gj_string_destroy(text);
    }
  }
  gj_function_options options;
  gj_function_options_init(&options);
  const int32_t dynamic = p.ConsumeIntegralInRange<int32_t>(0, 2);
  std::memcpy(&options.dynamic, &dynamic, sizeof(dynamic));
  gj_function* function = nullptr;
  if (!gjfuzz::Consume(gj_function_create(gjfuzz::Context(backend, caching),
                                          graph, &options, &function))) {
    // Once, and maybe again with other shapes (a cache hit or a recompile).
    CallOnce(p, function);
    if (p.ConsumeBool()) CallOnce(p, function);
    gj_function_destroy(function);
  }
  gj_graph_destroy(graph);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  Run(p);
  return 0;
}
