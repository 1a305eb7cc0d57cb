#ifndef GUARDJIT_BINDINGS_CLI_OUTPUT_PRINT_H_
#define GUARDJIT_BINDINGS_CLI_OUTPUT_PRINT_H_

#include <cstdio>
#include <string>

#include "guardjit/guardjit.h"

namespace guardjit_cli {

// "float32[2, 3]".
std::string Describe(const DLTensor& tensor);

// Prints `label`, dtype and shape, then every value (`all`) or the first few
// with min / max / mean. Reads any strides.
void PrintTensor(std::FILE* out, const std::string& label,
                 const DLTensor& tensor, bool all);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_OUTPUT_PRINT_H_
