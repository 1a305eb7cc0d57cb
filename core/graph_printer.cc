#include "core/graph_printer.h"

#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {
namespace {

std::string FormatFloat(double v) {
  if (std::abs(v) < 1e16 && v == static_cast<double>(static_cast<int64_t>(v))) {
    return absl::StrCat(static_cast<int64_t>(v), ".0");
  }
  return absl::StrCat(v);
}

std::string FormatTuple(const Graph& graph, const std::vector<Arg>& args) {
  std::vector<std::string> parts;
  for (const Arg& a : args) parts.push_back(FormatArg(graph, a));
  if (parts.size() == 1) return absl::StrCat("(", parts[0], ",)");
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

}  // namespace

std::string FormatArg(const Graph& graph, const Arg& a) {
  if (a.is_none()) return "None";
  if (a.is_int()) return absl::StrCat(a.as_int());
  if (a.is_float()) return FormatFloat(a.as_float());
  if (a.is_bool()) return a.as_bool() ? "True" : "False";
  if (a.is_string()) return absl::StrCat("'", a.as_string(), "'");
  if (a.is_dtype()) return absl::StrCat("torch.", DTypeName(a.as_dtype()));
  if (a.is_device()) {
    const Device& d = a.as_device();
    return d.is_cpu()
               ? "device(type='cpu')"
               : absl::StrCat("device(type='cuda', index=", d.index, ")");
  }
  if (a.is_name_ref()) return a.as_name_ref();
  if (a.is_value()) return graph.node(a.as_value().node).name;
  if (a.is_subgraph()) return a.as_subgraph();
  std::vector<std::string> parts;
  for (const Arg& item : a.as_list()) parts.push_back(FormatArg(graph, item));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string FormatTabular(const Graph& graph) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows = {{"opcode", "name", "target", "args", "kwargs"}};
  for (const Node& node : graph.nodes()) {
    Row row;
    row[0] = NodeKindName(node.kind);
    row[1] = node.name;
    row[2] = node.kind == NodeKind::kGetItem ? "<built-in function getitem>"
                                             : node.target;
    switch (node.kind) {
      case NodeKind::kPlaceholder:
      case NodeKind::kConstant:
        row[3] = "()";
        break;
      case NodeKind::kOutput:
        // FX's output node holds one value: the returned tensor or tuple.
        row[3] = node.args.size() == 1
                     ? FormatTuple(graph, node.args)
                     : absl::StrCat("(", FormatTuple(graph, node.args), ",)");
        break;
      default:
        row[3] = node.written_args.empty()
                     ? "()"
                     : FormatTuple(graph, node.written_args);
    }
    std::vector<std::string> kwargs;
    for (const auto& [name, value] : node.written_kwargs) {
      kwargs.push_back(absl::StrCat("'", name, "': ", FormatArg(graph, value)));
    }
    row[4] = absl::StrCat("{", absl::StrJoin(kwargs, ", "), "}");
    rows.push_back(std::move(row));
  }
  std::array<size_t, 5> width{};
  for (const Row& r : rows) {
    for (size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  auto append_row = [&](const Row& r) {
    std::string line;
    for (size_t c = 0; c < 5; ++c) {
      absl::StrAppend(&line, r[c]);
      if (c + 1 < 5) line.append(width[c] - r[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  };
  append_row(rows[0]);
  Row dashes;
  for (size_t c = 0; c < 5; ++c) dashes[c] = std::string(width[c], '-');
  append_row(dashes);
  for (size_t i = 1; i < rows.size(); ++i) append_row(rows[i]);
  return out;
}

}  // namespace guardjit
