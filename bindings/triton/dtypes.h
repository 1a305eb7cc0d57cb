#ifndef GUARDJIT_BINDINGS_TRITON_DTYPES_H_
#define GUARDJIT_BINDINGS_TRITON_DTYPES_H_

// Element types as Triton's config ("TYPE_FP32"), Triton's requests
// (TRITONSERVER_DataType), guardjit (gj_dtype) and DLPack spell them.

#include <cstddef>
#include <string>

#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

struct DTypeInfo {
  gj_dtype gj;
  const char* config_name;  // "TYPE_FP32"
  TRITONSERVER_DataType triton;
  DLDataType dl;
  size_t item_size;
};

// NULL where there is no entry (TYPE_BYTES, unsigned ints past 8 bits, ...).
const DTypeInfo* FromGj(gj_dtype dtype);
const DTypeInfo* FromConfigName(const std::string& name);
const DTypeInfo* FromTriton(TRITONSERVER_DataType dtype);
// "TYPE_FP32" for messages; "TYPE_<n>" for one without an entry.
std::string TritonTypeName(TRITONSERVER_DataType dtype);

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_DTYPES_H_
