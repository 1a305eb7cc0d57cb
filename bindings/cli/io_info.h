#ifndef GUARDJIT_BINDINGS_CLI_IO_INFO_H_
#define GUARDJIT_BINDINGS_CLI_IO_INFO_H_

// What a graph declares of its inputs and outputs, as `guardjit check`
// prints it. A host program: only guardjit.h.

#include <string>

#include "guardjit/guardjit.h"

namespace guardjit_cli {

// One line per input and output: "input x: float32[batch, 3, ?]" ("?" for
// an unknown dtype or an unnamed dynamic dim, "[*]" for an unknown rank).
std::string FormatIoInfo(const gj_graph* graph);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_IO_INFO_H_
