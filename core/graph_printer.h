#ifndef GUARDJIT_CORE_GRAPH_PRINTER_H_
#define GUARDJIT_CORE_GRAPH_PRINTER_H_

#include <string>

#include "core/graph.h"

namespace guardjit {

// The graph as torch.fx's GraphModule.graph.print_tabular() shows it:
//
//   opcode         name    target           args        kwargs
//   -------------  ------  ---------------  ----------  -----------
//   placeholder    x       x                ()          {}
//   call_function  add     aten.add.Tensor  (x, 1)      {'alpha': 2}
//   output         output  output           ((add,),)   {}
std::string FormatTabular(const Graph& graph);

// One argument as FX prints it: names for references, Python literals.
std::string FormatArg(const Graph& graph, const Arg& arg);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_PRINTER_H_
