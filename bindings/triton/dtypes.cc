#include "bindings/triton/dtypes.h"

namespace guardjit_triton {
namespace {

constexpr DTypeInfo kDTypes[] = {
    {GJ_DTYPE_FLOAT32,
     "TYPE_FP32",
     TRITONSERVER_TYPE_FP32,
     {kDLFloat, 32, 1},
     4},
    {GJ_DTYPE_FLOAT64,
     "TYPE_FP64",
     TRITONSERVER_TYPE_FP64,
     {kDLFloat, 64, 1},
     8},
    {GJ_DTYPE_FLOAT16,
     "TYPE_FP16",
     TRITONSERVER_TYPE_FP16,
     {kDLFloat, 16, 1},
     2},
    {GJ_DTYPE_BFLOAT16,
     "TYPE_BF16",
     TRITONSERVER_TYPE_BF16,
     {kDLBfloat, 16, 1},
     2},
    {GJ_DTYPE_INT8, "TYPE_INT8", TRITONSERVER_TYPE_INT8, {kDLInt, 8, 1}, 1},
    {GJ_DTYPE_UINT8, "TYPE_UINT8", TRITONSERVER_TYPE_UINT8, {kDLUInt, 8, 1}, 1},
    {GJ_DTYPE_INT16, "TYPE_INT16", TRITONSERVER_TYPE_INT16, {kDLInt, 16, 1}, 2},
    {GJ_DTYPE_INT32, "TYPE_INT32", TRITONSERVER_TYPE_INT32, {kDLInt, 32, 1}, 4},
    {GJ_DTYPE_INT64, "TYPE_INT64", TRITONSERVER_TYPE_INT64, {kDLInt, 64, 1}, 8},
    {GJ_DTYPE_BOOL, "TYPE_BOOL", TRITONSERVER_TYPE_BOOL, {GJ_DL_BOOL, 8, 1}, 1},
};

}  // namespace

const DTypeInfo* FromGj(gj_dtype dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.gj == dtype) return &d;
  }
  return nullptr;
}

const DTypeInfo* FromConfigName(const std::string& name) {
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.config_name) return &d;
  }
  return nullptr;
}

const DTypeInfo* FromTriton(TRITONSERVER_DataType dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.triton == dtype) return &d;
  }
  return nullptr;
}

std::string TritonTypeName(TRITONSERVER_DataType dtype) {
  if (const DTypeInfo* d = FromTriton(dtype)) return d->config_name;
  static const char* const kOthers[] = {
      "TYPE_INVALID", "TYPE_BOOL", "TYPE_UINT8", "TYPE_UINT16", "TYPE_UINT32",
      "TYPE_UINT64",  "TYPE_INT8", "TYPE_INT16", "TYPE_INT32",  "TYPE_INT64",
      "TYPE_FP16",    "TYPE_FP32", "TYPE_FP64",  "TYPE_STRING", "TYPE_BF16"};
  const int i = static_cast<int>(dtype);
  if (i >= 0 && i < static_cast<int>(sizeof kOthers / sizeof kOthers[0])) {
    return kOthers[i];
  }
  return "TYPE_" + std::to_string(i);
}

}  // namespace guardjit_triton
