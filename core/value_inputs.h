#ifndef GUARDJIT_CORE_VALUE_INPUTS_H_
#define GUARDJIT_CORE_VALUE_INPUTS_H_

// Value-specialized graph inputs: an input whose values an entry is compiled
// with as constants and guarded on, the way TorchDynamo specializes a Python
// int (a Reshape's shape, a Slice's starts, a Resize's sizes: operands an
// importer must know to map a node). A placeholder is marked with
// Node::specialize_value (proto Placeholder.specialize_value). At call time
// the function reads the input's values (a small integer, bool or float
// tensor on the host), compiles an entry with them as constants (or, where the
// graph has a GraphRebuilder, on the graph rebuilt for them) and guards them
// (VALUE_MATCH in guard dumps; a miss names the input and both values).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/call_signature.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace guardjit {

class Graph;

// A node standing for the part of a graph its value-specialized inputs
// decide: `higher_order.value_specialized(Tensor[] operands) -> Tensor[]`.
// An importer that needs the values to map its nodes (ONNX's Reshape of a
// shape input) builds its graph as this node over the inputs, with a
// GraphRebuilder that makes the real graph once the values are known. It
// has no shape rule and no kernel: such a graph runs only through a
// function, which rebuilds it for each entry.
inline constexpr char kValueSpecializedTarget[] =
    "higher_order.value_specialized";

// The most elements a value-specialized input may have.
inline constexpr int64_t kMaxSpecializedValues = 64;

// The values of input `input` (its position among the graph's inputs) that
// one entry is specialized to, as int64: integers as themselves, bools as
// 0/1, floats (float32, float64) as their bit patterns (ValueAsDouble reads
// one back), so a guard compares floats bit for bit (-0.0 is not 0.0; a NaN
// matches the same NaN).
struct InputValues {
  int input = 0;
  DType dtype = DType::kInt64;  // the input's
  std::vector<int64_t> sizes;   // the input's
  std::vector<int64_t> values;
};

// The values of `view` (which passed CheckValueInput) as input `input`.
InputValues ReadInputValues(int input, const InputView& view);

// `v` as a host tensor of its dtype and sizes: the constant an entry
// compiles in its input's place.
absl::StatusOr<Tensor> ValuesTensor(const InputValues& v);

// Makes the graph an entry compiles for given values of the graph's
// value-specialized inputs: an importer that must know them to map its
// nodes (the ONNX importer re-imports the model with them known). The
// rebuilt graph takes the same inputs in the same order.
class GraphRebuilder {
 public:
  virtual ~GraphRebuilder() = default;
  virtual absl::StatusOr<std::shared_ptr<const Graph>> Rebuild(
      const Graph& graph, absl::Span<const InputValues> values) const = 0;
};

// Whether `dtype` may be value-specialized: an integer, bool, float32 or
// float64.
bool IsValueInputDType(DType dtype);

// Element `value` of an InputValues of `dtype` as a double (a float's bits
// decoded).
double ValueAsDouble(DType dtype, int64_t value);

// Whether `view` may be value-specialized: on the host, of a dtype
// IsValueInputDType takes, with at most kMaxSpecializedValues elements and
// data. INVALID_ARGUMENT naming `label` ("input 1 ('shape')") otherwise.
absl::Status CheckValueInput(const InputView& view, const std::string& label);

// Element `k` (row-major) of `view` as int64 (a float's bits). `view` passed
// CheckValueInput.
int64_t ValueAt(const InputView& view, int64_t k);

// Number of elements of `view`.
int64_t NumValues(const InputView& view);

// Whether `view` holds exactly `values`, element by element; allocates
// nothing (the guard's hot path).
bool ValuesMatch(const InputView& view, absl::Span<const int64_t> values);

// `values` of `view` into a vector.
std::vector<int64_t> ReadValues(const InputView& view);

// "[3, 4]"; values of a float `dtype` as the floats they are ("[1.5, 2]").
std::string FormatValues(absl::Span<const int64_t> values);
std::string FormatValues(DType dtype, absl::Span<const int64_t> values);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_VALUE_INPUTS_H_
