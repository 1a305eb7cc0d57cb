#include "core/graph_loader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/constant_arena.h"
#include "core/external_data.h"
#include "core/graph_builder.h"
#include "core/onnx/onnx_detect.h"
#include "core/onnx/onnx_import.h"
#include "core/proto_io_spec.h"
#include "core/protobuf_diagnostics.h"
#include "core/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace guardjit {
namespace {

absl::StatusOr<DType> FromProtoDType(proto::DType d, absl::string_view what) {
  switch (d) {
    case proto::FLOAT32:
      return DType::kFloat32;
    case proto::FLOAT64:
      return DType::kFloat64;
    case proto::FLOAT16:
      return DType::kFloat16;
    case proto::BFLOAT16:
      return DType::kBFloat16;
    case proto::INT8:
      return DType::kInt8;
    case proto::UINT8:
      return DType::kUInt8;
    case proto::INT16:
      return DType::kInt16;
    case proto::INT32:
      return DType::kInt32;
    case proto::INT64:
      return DType::kInt64;
    case proto::BOOL:
      return DType::kBool;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dtype is unspecified or unknown (",
                       static_cast<int>(d), ")"));
  }
}

absl::Status LoadOutputSpecs(const proto::Graph& graph, GraphBuilder& builder) {
  if (graph.output_meta_size() == 0) return absl::OkStatus();
  if (graph.output_meta_size() != graph.outputs_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph.name(), "': ", graph.output_meta_size(),
                     " output_meta for ", graph.outputs_size(), " outputs"));
  }
  for (int i = 0; i < graph.output_meta_size(); ++i) {
    ASSIGN_OR_RETURN(
        std::optional<IoSpec> spec,
        IoSpecFromProto(graph.output_meta(i), absl::StrCat("output_meta ", i)));
    if (spec) RETURN_IF_ERROR(builder.SetOutputSpec(i, *std::move(spec)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Arg> FromProtoArg(const proto::Argument& a,
                                 absl::string_view what) {
  switch (a.value_case()) {
    case proto::Argument::kRef:
      return Arg::Ref(a.ref());
    case proto::Argument::kI:
      return Arg::Int(a.i());
    case proto::Argument::kF:
      return Arg::Float(a.f());
    case proto::Argument::kB:
      return Arg::Bool(a.b());
    case proto::Argument::kS:
      return Arg::String(a.s());
    case proto::Argument::kNone:
      return Arg::None();
    case proto::Argument::kSubgraph:
      return Arg::Subgraph(a.subgraph());
    case proto::Argument::kDtype: {
      ASSIGN_OR_RETURN(DType d, FromProtoDType(a.dtype(), what));
      return Arg::OfDType(d);
    }
    case proto::Argument::kDevice: {
      auto d = Device::Parse(a.device());
      if (!d.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": unknown device '", a.device(), "'"));
      }
      return Arg::OfDevice(*d);
    }
    case proto::Argument::kList: {
      Arg::List items;
      for (int i = 0; i < a.list().items_size(); ++i) {
        ASSIGN_OR_RETURN(
            Arg item,
            FromProtoArg(a.list().items(i), absl::StrCat(what, "[", i, "]")));
        items.push_back(std::move(item));
      }
      return Arg::OfList(std::move(items));
    }
    case proto::Argument::VALUE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " has no value"));
}

// A constant's bytes as its dtype and sizes give them, when they are
// valid and do not overflow.
std::optional<int64_t> ExpectedBytes(const proto::Constant& c) {
  absl::StatusOr<DType> dtype = FromProtoDType(c.dtype(), "");
  if (!dtype.ok()) return std::nullopt;
  const Shape sizes(c.sizes().begin(), c.sizes().end());
  absl::StatusOr<int64_t> numel = CheckedNumel(sizes);
  int64_t bytes;
  if (!numel.ok() ||
      __builtin_mul_overflow(*numel, static_cast<int64_t>(ItemSize(*dtype)),
                             &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

// The leading constants of a graph whose bytes check out, and one block
// for them (core/constant_arena.h): an external range must match its dtype
// and sizes and lie inside its file, so that a graph declaring more bytes
// than its files hold allocates nothing for them. LoadConstant reports the
// first constant that does not check out. `arena` is null when no constant
// does, or when the block cannot be allocated (each constant then has a
// block of its own).
struct CheckedConstants {
  std::shared_ptr<Allocator> arena;
  // Constant i's range of external data (located once: a pipe is read as
  // it is located, and opened again would wait for a writer), for the
  // leading checked constants.
  std::vector<std::optional<ExternalDataReader::Range>> ranges;
  // Why the constant after them could not be located, when that is what
  // stopped the check.
  absl::Status locate_error;
};

CheckedConstants CheckConstants(const proto::Graph& graph,
                                ExternalDataReader& external) {
  CheckedConstants out;
  size_t capacity = 0;
  for (const proto::Constant& c : graph.constants()) {
    const std::optional<int64_t> bytes = ExpectedBytes(c);
    if (!bytes.has_value()) break;
    std::optional<ExternalDataReader::Range> range;
    if (c.payload_case() == proto::Constant::kExternal) {
      if (c.external().length() != *bytes) break;
      absl::StatusOr<ExternalDataReader::Range> located = external.Locate(
          c.external().path(), c.external().offset(), c.external().length(),
          absl::StrCat("constant '", c.name(), "'"));
      if (!located.ok()) {
        out.locate_error = located.status();
        break;
      }
      range = *std::move(located);
    } else if (static_cast<int64_t>(c.data().size()) != *bytes) {
      break;
    }
    const size_t rounded = ConstantArena::Rounded(static_cast<size_t>(*bytes));
    if (rounded < static_cast<size_t>(*bytes) ||
        __builtin_add_overflow(capacity, rounded, &capacity)) {
      break;
    }
    out.ranges.push_back(std::move(range));
  }
  if (capacity > 0) out.arena = ConstantArena::Create(capacity);
  return out;
}

// `located`: its range of external data when CheckConstants located it.
absl::StatusOr<Tensor> LoadConstant(
    const proto::Constant& c, ExternalDataReader& external,
    const std::optional<ExternalDataReader::Range>* located,
    const std::shared_ptr<Allocator>& arena) {
  std::string what = absl::StrCat("constant '", c.name(), "'");
  ASSIGN_OR_RETURN(DType dtype, FromProtoDType(c.dtype(), what));
  Shape sizes(c.sizes().begin(), c.sizes().end());
  auto numel = CheckedNumel(sizes);
  if (!numel.ok()) {
    return absl::Status(numel.status().code(),
                        absl::StrCat(what, ": ", numel.status().message()));
  }
  int64_t expected;
  if (__builtin_mul_overflow(*numel, static_cast<int64_t>(ItemSize(dtype)),
                             &expected)) {
    return absl::OutOfRangeError(
        absl::StrCat(what, ": byte size overflows int64"));
  }
  std::optional<ExternalDataReader::Range> range;
  if (c.payload_case() == proto::Constant::kExternal) {
    if (c.external().length() != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": external data length ", c.external().length(),
                       " does not match ", DTypeName(dtype),
                       absl::StrCat("[", absl::StrJoin(sizes, ", "), "]"), " (",
                       expected, " bytes)"));
    }
    // Checked against the file before the tensor is allocated, then read
    // straight into it.
    if (located != nullptr && located->has_value()) {
      range = **located;
    } else {
      ASSIGN_OR_RETURN(
          range, external.Locate(c.external().path(), c.external().offset(),
                                 c.external().length(), what));
    }
  } else if (static_cast<int64_t>(c.data().size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", c.data().size(), " bytes of data, expected ", expected,
        " for ", DTypeName(dtype), "[", absl::StrJoin(sizes, ", "), "]"));
  }
  auto tensor = Tensor::Empty(dtype, sizes, arena);
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat(what, ": ", tensor.status().message()));
  }
  char* dst = static_cast<char*>(tensor->data());
  if (range) {
    RETURN_IF_ERROR(external.Read(*range, dst, what));
  } else if (!c.data().empty()) {
    std::memcpy(dst, c.data().data(), c.data().size());
  }
  return tensor;
}

// Messages nest at most this deep in both formats (a list argument is two
// levels, Argument and ArgumentList; a subgraph two, the map entry and Graph).
// The loader and everything after it recurse per level, so the limit bounds
// their stack use too: well within a 256 KiB thread stack.
constexpr int kMaxMessageDepth = 64;

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    errors_.push_back(absl::StrCat("line ", line + 1, ", column ", column + 1,
                                   ": ", message));
  }
  void AddWarning(int, int, const std::string&) override {}
  std::string ToString() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

absl::StatusOr<std::unique_ptr<Graph>> LoadGraphWith(
    const proto::Graph& graph, const GraphLoadOptions& options,
    ExternalDataReader& external) {
  GraphBuilder builder(
      graph.name().empty() ? "graph" : graph.name(),
      options.registry ? *options.registry : OpRegistry::Global());
  // Subgraphs first, so control-flow nodes can name them. Sorted for
  // deterministic error messages.
  std::vector<std::string> names;
  for (const auto& [name, sub] : graph.subgraphs()) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    auto sub = LoadGraphWith(graph.subgraphs().at(name), options, external);
    if (!sub.ok()) {
      return absl::Status(
          sub.status().code(),
          absl::StrCat("subgraph '", name, "': ", sub.status().message()));
    }
    RETURN_IF_ERROR(builder.AddSubgraph(name, *std::move(sub)));
  }
  for (const proto::Placeholder& p : graph.placeholders()) {
    RETURN_IF_ERROR(builder.AddPlaceholder(p.name()).status());
    const std::string what = absl::StrCat("placeholder '", p.name(), "'");
    ASSIGN_OR_RETURN(std::optional<IoSpec> spec,
                     IoSpecFromProto(p.meta(), what));
    if (spec) RETURN_IF_ERROR(builder.SetInputSpec(p.name(), *std::move(spec)));
    if (p.specialize_value()) {
      RETURN_IF_ERROR(builder.MarkValueSpecialized(p.name()));
    }
  }
  const CheckedConstants checked = CheckConstants(graph, external);
  for (int i = 0; i < graph.constants_size(); ++i) {
    const proto::Constant& c = graph.constants(i);
    if (i == static_cast<int>(checked.ranges.size()) &&
        !checked.locate_error.ok()) {
      return checked.locate_error;
    }
    ASSIGN_OR_RETURN(Tensor value,
                     LoadConstant(c, external,
                                  i < static_cast<int>(checked.ranges.size())
                                      ? &checked.ranges[i]
                                      : nullptr,
                                  checked.arena));
    RETURN_IF_ERROR(builder.AddConstant(c.name(), std::move(value)).status());
  }
  for (const proto::Node& n : graph.nodes()) {
    std::vector<Arg> args;
    for (int i = 0; i < n.args_size(); ++i) {
      ASSIGN_OR_RETURN(
          Arg a, FromProtoArg(n.args(i), absl::StrCat("node '", n.name(),
                                                      "': argument ", i)));
      args.push_back(std::move(a));
    }
    // Protobuf maps are unordered; sort kwargs so printing is stable.
    Kwargs kwargs;
    for (const auto& [name, value] : n.kwargs()) {
      ASSIGN_OR_RETURN(
          Arg a, FromProtoArg(value, absl::StrCat("node '", n.name(),
                                                  "': argument '", name, "'")));
      kwargs.emplace_back(name, std::move(a));
    }
    std::sort(kwargs.begin(), kwargs.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    RETURN_IF_ERROR(
        builder
            .AddNode(n.name(), n.target(), std::move(args), std::move(kwargs))
            .status());
  }
  std::vector<Arg> outputs;
  for (int i = 0; i < graph.outputs_size(); ++i) {
    ASSIGN_OR_RETURN(
        Arg a, FromProtoArg(graph.outputs(i), absl::StrCat("output ", i)));
    outputs.push_back(std::move(a));
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
  RETURN_IF_ERROR(LoadOutputSpecs(graph, builder));
  return builder.Finish();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> LoadGraph(
    const proto::Graph& graph, const GraphLoadOptions& options) {
  ExternalDataReader external(options.external_data_dir);
  return LoadGraphWith(graph, options, external);
}

absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromBinary(
    absl::string_view bytes, const GraphLoadOptions& options) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(
        "graph protobuf larger than 2 GiB; use external data");
  }
  if (options.format == GraphFormat::kOnnx ||
      (options.format == GraphFormat::kDetect && IsOnnxModel(bytes))) {
    return LoadOnnxModelFromBinary(bytes, options);
  }
  proto::Graph graph;
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  input.SetRecursionLimit(kMaxMessageDepth);
  ProtobufDiagnostics diagnostics;
  if (!graph.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
    std::string detail = diagnostics.Take();
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed graph protobuf (", bytes.size(), " bytes)",
        detail.empty()
            ? absl::StrCat(": not a guardjit.proto.Graph, truncated, or "
                           "nested deeper than ",
                           kMaxMessageDepth, " levels")
            : absl::StrCat(": ", detail)));
  }
  return LoadGraph(graph, options);
}

absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromText(
    absl::string_view text, const GraphLoadOptions& options) {
  proto::Graph graph;
  google::protobuf::TextFormat::Parser parser;
  // Without a limit the parser recurses once per nested message, so a deeply
  // nested input (a few thousand levels) overflows the caller's stack.
  parser.SetRecursionLimit(kMaxMessageDepth);
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &graph)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed graph text: ", errors.ToString()));
  }
  return LoadGraph(graph, options);
}

absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromFile(
    const std::string& path, GraphLoadOptions options) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream content;
  content << file.rdbuf();
  if (options.external_data_dir.empty()) {
    options.external_data_dir =
        std::filesystem::path(path).parent_path().string();
  }
  const std::string ext = std::filesystem::path(path).extension().string();
  const bool text = options.format == GraphFormat::kGuardjit
                        ? (ext == ".pbtxt" || ext == ".txt")
                        : options.format == GraphFormat::kDetect &&
                              (ext == ".pbtxt" || ext == ".txt") &&
                              !IsOnnxModel(content.str());
  auto graph = text ? LoadGraphFromText(content.str(), options)
                    : LoadGraphFromBinary(content.str(), options);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

}  // namespace guardjit
