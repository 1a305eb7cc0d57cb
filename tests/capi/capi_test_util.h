#ifndef GUARDJIT_TESTS_CAPI_CAPI_TEST_UTIL_H_
#define GUARDJIT_TESTS_CAPI_CAPI_TEST_UTIL_H_

// Helpers for tests that drive guardjit only through its C header: owning
// handles, error matchers, and DLTensors over memory the test owns.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace gjtest {

struct ContextDeleter {
  void operator()(gj_context* c) const { gj_context_destroy(c); }
};
struct GraphDeleter {
  void operator()(gj_graph* g) const { gj_graph_destroy(g); }
};
struct BuilderDeleter {
  void operator()(gj_graph_builder* b) const { gj_graph_builder_destroy(b); }
};
struct FunctionDeleter {
  void operator()(gj_function* f) const { gj_function_destroy(f); }
};
struct TensorDeleter {
  void operator()(DLManagedTensor* t) const { gj_tensor_release(t); }
};
using ContextPtr = std::unique_ptr<gj_context, ContextDeleter>;
using GraphPtr = std::unique_ptr<gj_graph, GraphDeleter>;
using BuilderPtr = std::unique_ptr<gj_graph_builder, BuilderDeleter>;
using FunctionPtr = std::unique_ptr<gj_function, FunctionDeleter>;
using ManagedPtr = std::unique_ptr<DLManagedTensor, TensorDeleter>;

inline const char* CodeName(gj_error_code code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  int c = static_cast<int>(code);
  return c >= 0 && c <= 16 ? kNames[c] : "?";
}

// Success, or a failure carrying the error's code and message. Takes
// ownership of `error`.
inline ::testing::AssertionResult Ok(gj_error* error) {
  if (error == nullptr) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure()
                 << CodeName(gj_error_get_code(error)) << ": "
                 << gj_error_message(error);
  gj_error_destroy(error);
  return failure;
}

// `error` has `code` and a message containing every one of `parts`. Takes
// ownership of `error`.
inline ::testing::AssertionResult IsError(
    gj_error* error, gj_error_code code,
    std::initializer_list<std::string> parts) {
  if (error == nullptr) {
    return ::testing::AssertionFailure()
           << "succeeded; expected " << CodeName(code);
  }
  const gj_error_code got = gj_error_get_code(error);
  const std::string message = gj_error_message(error);
  gj_error_destroy(error);
  if (got != code) {
    return ::testing::AssertionFailure()
           << "got " << CodeName(got) << " (" << message << "), expected "
           << CodeName(code);
  }
  for (const std::string& part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message \"" << message << "\" lacks \"" << part << "\"";
    }
  }
  return ::testing::AssertionSuccess() << message;
}

inline ContextPtr MakeContext(gj_backend backend = GJ_BACKEND_DEFAULT,
                              int32_t num_threads = 0) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.backend = backend;
  options.num_threads = num_threads;
  gj_context* context = nullptr;
  gj_error* error = gj_context_create(&options, &context);
  EXPECT_TRUE(Ok(error));
  return ContextPtr(context);
}

template <typename T>
DLDataType DLTypeOf();
template <>
inline DLDataType DLTypeOf<float>() {
  return {kDLFloat, 32, 1};
}
template <>
inline DLDataType DLTypeOf<double>() {
  return {kDLFloat, 64, 1};
}
template <>
inline DLDataType DLTypeOf<int8_t>() {
  return {kDLInt, 8, 1};
}
template <>
inline DLDataType DLTypeOf<int16_t>() {
  return {kDLInt, 16, 1};
}
template <>
inline DLDataType DLTypeOf<int32_t>() {
  return {kDLInt, 32, 1};
}
template <>
inline DLDataType DLTypeOf<int64_t>() {
  return {kDLInt, 64, 1};
}
template <>
inline DLDataType DLTypeOf<uint8_t>() {
  return {kDLUInt, 8, 1};
}

// A DLTensor over a buffer the test owns. `strides` empty = NULL strides
// (contiguous); otherwise the buffer is what the caller passes, any layout.
template <typename T>
class HostTensor {
 public:
  HostTensor(std::vector<int64_t> shape, std::vector<T> buffer,
             std::vector<int64_t> strides = {})
      : shape_(std::move(shape)),
        strides_(std::move(strides)),
        buffer_(std::move(buffer)) {
    dl_.data = buffer_.data();
    dl_.device = {kDLCPU, 0};
    dl_.ndim = static_cast<int>(shape_.size());
    dl_.dtype = DLTypeOf<T>();
    dl_.shape = shape_.data();
    dl_.strides = strides_.empty() ? nullptr : strides_.data();
    dl_.byte_offset = 0;
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  DLTensor* dl() { return &dl_; }
  std::vector<T>& buffer() { return buffer_; }

 private:
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  std::vector<T> buffer_;
  DLTensor dl_;
};

// The values of a contiguous float32 DLTensor.
inline std::vector<float> Floats(const DLTensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  const float* p = reinterpret_cast<const float*>(
      static_cast<const char*>(t.data) + t.byte_offset);
  return std::vector<float>(p, p + n);
}

inline std::vector<int64_t> Shape(const DLTensor& t) {
  return std::vector<int64_t>(t.shape, t.shape + t.ndim);
}

// A graph from the builder: `inputs`, then `build` adds nodes, then `outputs`.
template <typename Build>
GraphPtr BuildGraph(gj_context* context, const char* name,
                    std::initializer_list<const char*> inputs, Build build,
                    std::vector<const char*> outputs) {
  gj_graph_builder* raw = nullptr;
  EXPECT_TRUE(Ok(gj_graph_builder_create(context, name, &raw)));
  BuilderPtr builder(raw);
  if (builder == nullptr) return nullptr;
  for (const char* input : inputs) {
    EXPECT_TRUE(Ok(gj_graph_builder_add_input(builder.get(), input)));
  }
  build(builder.get());
  EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(builder.get(), outputs.data(),
                                              outputs.size())));
  gj_graph* graph = nullptr;
  EXPECT_TRUE(Ok(gj_graph_builder_finish(builder.get(), &graph)));
  return GraphPtr(graph);
}

// A graph returning its inputs unchanged: runs without any op kernel.
inline GraphPtr IdentityGraph(gj_context* context,
                              std::initializer_list<const char*> inputs) {
  return BuildGraph(
      context, "identity", inputs, [](gj_graph_builder*) {},
      std::vector<const char*>(inputs));
}

inline FunctionPtr MakeFunction(gj_context* context, const gj_graph* graph) {
  gj_function* function = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(context, graph, nullptr, &function)));
  return FunctionPtr(function);
}

}  // namespace gjtest

#endif  // GUARDJIT_TESTS_CAPI_CAPI_TEST_UTIL_H_
