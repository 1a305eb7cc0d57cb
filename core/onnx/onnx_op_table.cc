#include "core/onnx/onnx_op_table.h"

#include <algorithm>

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

std::vector<std::string> OnnxOpTable::OpTypes() const {
  std::vector<std::string> out;
  for (const auto& [name, mapper] : mappers_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace guardjit
