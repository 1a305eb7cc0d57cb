#ifndef GUARDJIT_TESTS_CAPI_BAD_INPUT_CATALOGUE_H_
#define GUARDJIT_TESTS_CAPI_BAD_INPUT_CATALOGUE_H_

// The harness of the catalogue of bad inputs (bad_input_catalogue_test.cc
// runs it): a Case is a call that must fail, with the code and the message
// parts it must fail with; Env holds what the cases share, Probe what a case
// may write. The cases are kept one table per area, each in its own file:
// bad_input_catalogue_{loaders,builder,options,calls}.cc.

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace gjtest::catalogue {

inline constexpr unsigned char kSentinel = 0xa5;
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

// What a case may write: caller-owned buffers that must keep the sentinel,
// and out-parameters that must be NULL after an error. Owns the tensors a
// case makes, so they live until the checks.
class Probe {
 public:
  Probe() = default;
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  ~Probe() {
    for (DLManagedTensor* t : tensors_) gj_tensor_release(t);
  }

  // A tensor over `values`, kept alive for the case.
  template <typename T>
  HostTensor<T>& Tensor(std::vector<int64_t> shape, std::vector<T> values,
                        std::vector<int64_t> strides = {}) {
    auto t = std::make_shared<HostTensor<T>>(
        std::move(shape), std::move(values), std::move(strides));
    keep_.push_back(t);
    return *t;
  }
  HostTensor<float>& Floats(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) + 1;
    return Tensor<float>(std::move(shape), std::move(values));
  }

  // A caller-provided output over `elements` items (0: the shape's), filled
  // with the sentinel and checked afterwards.
  template <typename T>
  HostTensor<T>& Output(std::vector<int64_t> shape,
                        std::vector<int64_t> strides = {},
                        size_t elements = 0) {
    if (elements == 0) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      elements = n > 0 ? static_cast<size_t>(n) : 1;
    }
    HostTensor<T>& t = Tensor<T>(std::move(shape), std::vector<T>(elements),
                                 std::move(strides));
    Watch(t.buffer().data(), elements * sizeof(T));
    return t;
  }

  void Watch(void* data, size_t bytes) {
    std::memset(data, kSentinel, bytes);
    watched_.push_back({static_cast<unsigned char*>(data), bytes});
  }

  // Out-parameters, filled with a non-NULL value the library must clear.
  gj_graph** OutGraph() { return Slot(&graph_); }
  gj_function** OutFunction() { return Slot(&function_); }
  gj_context** OutContext() { return Slot(&context_); }
  gj_graph_builder** OutBuilder() { return Slot(&builder_); }
  DLManagedTensor** OutTensors(size_t n) {
    tensors_.assign(n, Garbage<DLManagedTensor>());
    watches_out_ = true;
    return tensors_.data();
  }

  bool watches_outputs() const { return watches_out_ || !watched_.empty(); }

  // What was written though the call failed; releases whatever a case that
  // should have failed made.
  std::vector<std::string> Violations();

 private:
  template <typename T>
  static T* Garbage() {
    return reinterpret_cast<T*>(uintptr_t{0x1});
  }
  template <typename T>
  T** Slot(std::pair<bool, T*>* slot) {
    *slot = {true, Garbage<T>()};
    return &slot->second;
  }
  template <typename T>
  static void CheckSlot(std::pair<bool, T*>* slot, const char* name,
                        void (*destroy)(T*), std::vector<std::string>& found) {
    if (!slot->first || slot->second == nullptr) return;
    if (slot->second == Garbage<T>()) {
      found.push_back(std::string(name) + " was not set to NULL");
    } else {
      found.push_back(std::string(name) + " was written");
      destroy(slot->second);
    }
    slot->second = nullptr;
  }

  std::vector<std::shared_ptr<void>> keep_;
  std::vector<std::pair<unsigned char*, size_t>> watched_;
  std::pair<bool, gj_graph*> graph_{false, nullptr};
  std::pair<bool, gj_function*> function_{false, nullptr};
  std::pair<bool, gj_context*> context_{false, nullptr};
  std::pair<bool, gj_graph_builder*> builder_{false, nullptr};
  std::vector<DLManagedTensor*> tensors_;
  bool watches_out_ = false;
};

FunctionPtr CreateFunction(gj_context* context, const gj_graph* graph,
                           const gj_function_options* options = nullptr);

// One graph node of a single op over the named inputs.
template <typename Build>
GraphPtr OpGraph(gj_context* context, const char* name,
                 std::initializer_list<const char*> inputs, const char* node,
                 Build build) {
  return gjtest::BuildGraph(context, name, inputs, build, {node});
}

// Everything the cases share: a context per backend, functions over small
// graphs, a directory for files.
struct Env {
  Env();
  ~Env();

  static void ReluNode(gj_graph_builder* b);

  // A fresh activation(r) function (its first call is a miss) with options.
  FunctionPtr FreshRelu(const gj_function_options* options = nullptr);

  // identity(a, b) with a float32[2] and b float32[3], the outputs watched.
  gj_error* CallId(Probe& p, const DLTensor* a, const DLTensor* b);
  gj_error* CallIdWithA(Probe& p, const DLTensor* a);
  gj_error* CallIdWithB(Probe& p, const DLTensor* b);
  // identity(a = float32[2], b = float32[3]) into these outputs; a watched
  // sentinel buffer stands for any output the case passes as NULL.
  gj_error* CallIdInto(Probe& p, const DLTensor* o0, const DLTensor* o1);
  gj_error* AllocId(Probe& p, const DLTensor* a, const DLTensor* b);
  // A one-output function called into `output` (a watched Probe::Output).
  gj_error* Call1(Probe& p, gj_function* f,
                  std::initializer_list<const DLTensor*> inputs,
                  const DLTensor* output,
                  const gj_call_options* options = nullptr);
  gj_error* Alloc1(Probe& p, gj_function* f,
                   std::initializer_list<const DLTensor*> inputs,
                   const gj_call_options* options = nullptr);

  gj_error* Text(Probe& p, const std::string& text,
                 const gj_graph_load_options* options = nullptr);
  gj_error* Proto(Probe& p, const std::string& bytes,
                  const gj_graph_load_options* options = nullptr);
  gj_error* File(Probe& p, const std::string& name, const std::string& content,
                 const gj_graph_load_options* options = nullptr);

  // A builder named "g" with inputs x and y.
  BuilderPtr Builder();
  // add_node on a fresh builder (inputs x, y).
  gj_error* Node(const char* name, const char* target,
                 std::vector<gj_arg> args);
  gj_error* Constant(const char* name, const DLTensor* value);
  gj_error* CreateWith(Probe& p, const gj_function_options& options);
  gj_error* ContextWith(Probe& p, const gj_context_options& options);

  ContextPtr ctx, eager;
  std::vector<GraphPtr> graphs;
  FunctionPtr id, mm, embed, embed_eager, add, cat, view, sum, relu;
  std::string dir;
};

enum class Kind { kLoad, kBuild, kOptions, kCall, kPrecompile };

struct Case {
  const char* label;
  Kind kind;
  std::function<gj_error*(Env&, Probe&)> run;
  gj_error_code code;
  std::vector<std::string> parts;
};

inline gj_context_options ContextOptions() {
  gj_context_options o;
  gj_context_options_init(&o);
  return o;
}
inline gj_function_options FunctionOptions() {
  gj_function_options o;
  gj_function_options_init(&o);
  return o;
}
inline gj_call_options CallOptions() {
  gj_call_options o;
  gj_call_options_init(&o);
  return o;
}
inline gj_graph_load_options LoadOptions() {
  gj_graph_load_options o;
  gj_graph_load_options_init(&o);
  return o;
}

// A CPU DLTensor of `shape` and `type` with no data (for precompile, and for
// shapes too large to allocate).
struct Meta {
  explicit Meta(std::vector<int64_t> s, DLDataType type = {kDLFloat, 32, 1})
      : shape(std::move(s)) {
    dl.data = nullptr;
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = type;
    dl.shape = shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  std::vector<int64_t> shape;
  DLTensor dl;
};

inline gj_arg WithKind(gj_arg a, gj_arg_kind kind) {
  a.kind = kind;
  return a;
}

// x split into parts of 1 and 2 elements; cases append nodes and outputs.
inline constexpr char kSplitText[] = R"pb(
  placeholders { name: "x" }
  nodes {
    name: "parts"
    target: "aten.split_with_sizes.default"
    args { ref: "x" }
    args {
      list {
        items { i: 1 }
        items { i: 2 }
      }
    }
  }
)pb";

// The cases, one table per area.
std::vector<Case> LoaderCases();   // graph loaders: text, binary, file
std::vector<Case> BuilderCases();  // the graph builder
std::vector<Case> OptionCases();   // options structs
std::vector<Case> CallCases();     // call, call_alloc, precompile

}  // namespace gjtest::catalogue

#endif  // GUARDJIT_TESTS_CAPI_BAD_INPUT_CATALOGUE_H_
