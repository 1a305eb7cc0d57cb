#include "core/onnx/onnx_op_table.h"

#include <algorithm>
#include <string>

#include "core/onnx/onnx_import.h"

namespace guardjit {

const OnnxOpTable& OnnxOpTable::Default() {
  static const OnnxOpTable* table = [] {
    auto* t = new OnnxOpTable();
    AddElementwiseOnnxOps(*t);
    AddActivationOnnxOps(*t);
    AddNnOnnxOps(*t);
    AddPoolOnnxOps(*t);
    AddLossOnnxOps(*t);
    AddResizeOnnxOps(*t);
    AddStructureOnnxOps(*t);
    AddShapeOnnxOps(*t);
    AddReduceOnnxOps(*t);
    AddTensorOnnxOps(*t);
    AddEinsumOnnxOps(*t);
    AddSignalOnnxOps(*t);
    AddRnnOnnxOps(*t);
    return t;
  }();
  return *table;
}

void OnnxOpTable::Add(absl::string_view op_type, OnnxOpMapper mapper) {
  mappers_[op_type] = mapper;
}

OnnxOpMapper OnnxOpTable::Find(absl::string_view op_type) const {
  auto it = mappers_.find(op_type);
  return it == mappers_.end() ? nullptr : it->second;
}

int OnnxOpTable::OldestOpset(absl::string_view op_type) {
  // Each: the version in force at that opset, and the next version after
  // it (all past 7 and mapped by opset where they change a semantic).
  static const auto* oldest = new absl::flat_hash_map<std::string, int>{
      // Version 1 only, up to opset 20 (22 adds types).
      {"GlobalAveragePool", 1},
      {"GlobalMaxPool", 1},
      {"Not", 1},
      {"Softplus", 1},
      {"Softsign", 1},
      // Version 1, then 11 (negative axes allowed), 13 (bfloat16), 18
      // (axes as an input): the mapping reads opset 1's axes attribute.
      {"ReduceLogSum", 1},
      // Version 6 drops opset 1's consumed_inputs; the next (13, 16 or 22)
      // adds types only.
      {"Abs", 6},
      {"Ceil", 6},
      {"Elu", 6},
      {"Exp", 6},
      {"Floor", 6},
      {"HardSigmoid", 6},
      {"InstanceNormalization", 6},
      {"LeakyRelu", 6},
      {"Log", 6},
      {"Neg", 6},
      {"Reciprocal", 6},
      {"Relu", 6},
      {"Selu", 6},
      {"Sigmoid", 6},
      {"Sqrt", 6},
      {"Tanh", 6},
  };
  auto it = oldest->find(op_type);
  return it == oldest->end() ? kMinOnnxOpset : it->second;
}

std::vector<std::string> OnnxOpTable::OpTypes() const {
  std::vector<std::string> out;
  for (const auto& [name, mapper] : mappers_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace guardjit
