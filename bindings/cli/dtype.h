#ifndef GUARDJIT_BINDINGS_CLI_DTYPE_H_
#define GUARDJIT_BINDINGS_CLI_DTYPE_H_

// Element types as the command line spells them, and element access for
// buffers the CLI fills and prints. A host program: only guardjit.h.

#include <cstdint>
#include <string>

#include "guardjit/guardjit.h"

namespace guardjit_cli {

struct DTypeInfo {
  const char* name;  // PyTorch spelling: "float32"
  DLDataType dl;
  bool is_float;
  bool is_bool;
};

// "float32", "int64", "bool", ... and PyTorch's aliases ("float", "long").
// NULL if unknown.
const DTypeInfo* FindDType(const std::string& name);
// The entry for a DLPack type; NULL if the CLI does not know it.
const DTypeInfo* DTypeOf(DLDataType type);
// "float32, float64, ..." for messages.
std::string DTypeNames();

int ItemBytes(DLDataType type);
double LoadElement(const void* data, int64_t index, DLDataType type);
void StoreElement(void* data, int64_t index, DLDataType type, double value);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_DTYPE_H_
