// ONNX's own backend node tests (Debian's libonnx-testdata) as the ONNX
// importer's conformance suite: every case's model.onnx loaded through
// LoadGraphFromFile (detected by content), run on the eager interpreter and
// compiled by the CPU JIT, each output compared with the case's expected
// TensorProtos at ONNX's tolerances (rtol 1e-3, atol 1e-7). A case passes,
// is refused with a reason (at load: the importer's error; or a backend's
// error), or is wrong. The test fails on any wrong case, on a JIT program
// that is an eager plan standing in for the compiled one, and when fewer
// cases pass than tests/conformance/onnx_node_baseline.txt says. It writes
// the per-op table (ONNX.md at the repository root is this table) to
// $GJ_ONNX_REPORT.
//
// Compiled again as onnx_node_simt_tests (GJ_CONFORMANCE_ON_SIMT): the JIT
// generates CUDA C for every fused kernel, NVRTC compiles it, and it runs on
// the SIMT emulator (about 2 minutes of one core, cold). Its baseline is the
// file's "simt_passing N" line.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/function.h"
#include "core/graph_loader.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/onnx_tensor.h"
#include "core/specializer.h"
#include "core/value_inputs.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "onnx/onnx_pb.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
#ifdef GJ_CONFORMANCE_ON_SIMT
constexpr char kBaselineKey[] = "simt_passing ";
#else
constexpr char kBaselineKey[] = "passing ";
#endif

enum class Outcome { kPass, kRefused, kWrong };

struct CaseResult {
  std::string name;
  std::string op;
  bool eligible = true;  // default domain, tensor types the library has
  // Graph inputs the importer needs at load and cannot value-specialize
  // were bound to the test data's values, as initializers.
  bool bound = false;
  Outcome outcome = Outcome::kPass;
  std::string reason;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Snake(const std::string& camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0 && (std::islower(static_cast<unsigned char>(camel[i - 1])) ||
                    (i + 1 < camel.size() &&
                     std::islower(static_cast<unsigned char>(camel[i + 1]))))) {
        out += '_';
      }
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

// The op a case tests: the model's one op type, else the op type whose
// snake_case name starts the case name, else the case's function-expanded
// or composite form named after its first word.
std::string CaseOp(const std::string& name, const onnx::ModelProto& model) {
  std::vector<std::string> ops;
  for (const auto& node : model.graph().node()) {
    if (std::find(ops.begin(), ops.end(), node.op_type()) == ops.end()) {
      ops.push_back(node.op_type());
    }
  }
  if (ops.size() == 1) return ops[0];
  std::string bare = name.substr(5);  // "test_"
  std::string best;
  for (const std::string& op : ops) {
    const std::string snake = Snake(op);
    if (bare.rfind(snake, 0) == 0 && snake.size() > best.size()) best = op;
  }
  if (!best.empty()) return best;
  return absl::StrCat("(composite) ", bare.substr(0, bare.find('_')));
}

bool Eligible(const onnx::ModelProto& model) {
  for (const auto& node : model.graph().node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  }
  for (const auto* list : {&model.graph().input(), &model.graph().output()}) {
    for (const auto& v : *list) {
      if (!v.type().has_tensor_type() ||
          !DTypeFromOnnx(v.type().tensor_type().elem_type()).ok()) {
        return false;
      }
    }
  }
  return true;
}

// Why `actual` differs from `expected`, or "".
std::string Compare(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype()) {
    return absl::StrCat("dtype ", DTypeName(actual.dtype()), ", expected ",
                        DTypeName(expected.dtype()));
  }
  if (!std::equal(actual.sizes().begin(), actual.sizes().end(),
                  expected.sizes().begin(), expected.sizes().end())) {
    return absl::StrCat("sizes ", actual.DebugString(), ", expected ",
                        expected.DebugString());
  }
  const std::vector<double> a = testing::ToDoubles(actual);
  const std::vector<double> e = testing::ToDoubles(expected);
  const bool exact = !IsFloating(expected.dtype());
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(a[i])) continue;
    if (a[i] == e[i]) continue;
    if (!exact && std::abs(a[i] - e[i]) <= kAtol + kRtol * std::abs(e[i])) {
      continue;
    }
    return absl::StrCat("element ", i, " is ", a[i], ", expected ", e[i]);
  }
  return "";
}

absl::StatusOr<std::vector<Tensor>> ReadTensors(const fs::path& dir,
                                                const std::string& prefix) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const fs::path file = dir / absl::StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(file)) break;
    onnx::TensorProto proto;
    if (!proto.ParseFromString(ReadFile(file))) {
      return absl::InvalidArgumentError(
          absl::StrCat(file.filename().string(), " is not a TensorProto"));
    }
    auto t = TensorFromOnnx(proto, dir.string(), file.filename().string());
    if (!t.ok()) return t.status();
    out.push_back(*std::move(t));
  }
  return out;
}

// Refusal reasons are grouped in the table: the message after the node
// label, without the case's value names where they vary.
std::string ShortReason(const std::string& stage, absl::string_view message) {
  std::string m(message);
  // Without the model's path and the node's label (index and value names).
  const size_t node = m.find("ONNX node ");
  if (node != std::string::npos) {
    const size_t label = m.find("): ", node);
    if (label != std::string::npos) m = m.substr(label + 3);
  } else if (const size_t path = m.find(".onnx: "); path != std::string::npos) {
    m = m.substr(path + 7);
  }
  // Value names (" ('X')") differ per case; the reason does not.
  for (size_t open = m.find(" ('"); open != std::string::npos;
       open = m.find(" ('", open)) {
    const size_t close = m.find("')", open + 3);
    if (close == std::string::npos) break;
    m.erase(open, close + 2 - open);
  }
  for (size_t open = m.find(", '"); open != std::string::npos;
       open = m.find(", '", open)) {
    const size_t close = m.find("')", open + 3);
    if (close == std::string::npos) break;
    m.erase(open, close + 1 - open);
  }
  if (m.size() > 140) m = m.substr(0, 137) + "...";
  return absl::StrCat(stage, ": ",
                      absl::StrReplaceAll(m, {{"|", "/"}, {"\n", " "}}));
}

CaseResult RunCase(const fs::path& dir) {
  CaseResult r;
  r.name = dir.filename().string();
  const std::string bytes = ReadFile(dir / "model.onnx");
  onnx::ModelProto model;
  if (model.ParseFromString(bytes)) {
    r.op = CaseOp(r.name, model);
    r.eligible = Eligible(model);
  } else {
    r.op = "(unreadable)";
  }
  auto refuse = [&](const std::string& stage, absl::string_view why) {
    r.outcome = Outcome::kRefused;
    r.reason = ShortReason(stage, why);
    return r;
  };
  auto wrong = [&](std::string why) {
    r.outcome = Outcome::kWrong;
    r.reason = std::move(why);
    return r;
  };
  auto loaded = LoadGraphFromFile((dir / "model.onnx").string());
  // Inputs needed at load (named by the refusal) become initializers with
  // the first data set's values; only data sets with those values then run.
  std::vector<int> bound_inputs;
  const std::string refusal =
      loaded.ok() ? "" : ShortReason("load", loaded.status().message());
  for (int attempt = 0; attempt < 4 && !loaded.ok(); ++attempt) {
    const std::string message(loaded.status().message());
    const size_t at = message.find("') is computed at run time");
    const size_t open = message.rfind(", '", at);
    if (at == std::string::npos || open == std::string::npos) break;
    const std::string name = message.substr(open + 3, at - open - 3);
    int index = -1;
    for (int k = 0; k < model.graph().input_size(); ++k) {
      if (model.graph().input(k).name() == name) index = k;
    }
    if (index < 0) break;
    // Input positions of the original model, for the data files.
    int original = index;
    for (int b : bound_inputs) {
      if (b <= original) ++original;
    }
    onnx::TensorProto value;
    const fs::path file =
        dir / "test_data_set_0" / absl::StrCat("input_", original, ".pb");
    if (!value.ParseFromString(ReadFile(file))) break;
    value.set_name(name);
    *model.mutable_graph()->add_initializer() = value;
    model.mutable_graph()->mutable_input()->DeleteSubrange(index, 1);
    bound_inputs.push_back(original);
    std::sort(bound_inputs.begin(), bound_inputs.end());
    GraphLoadOptions options;
    options.external_data_dir = dir.string();
    loaded = LoadOnnxModel(model, options);
    r.bound = true;
  }
  if (!loaded.ok()) {
    r.bound = false;
    return refuse("load", loaded.status().message());
  }
  std::shared_ptr<const Graph> graph = *std::move(loaded);
  // A graph with value-specialized inputs (a Reshape's shape as an input)
  // runs per data set as the graph a function compiles for its values,
  // and through a function on the JIT, whose guards see every data set.
  const bool by_value = !graph->value_inputs().empty();
  std::unique_ptr<Function> function;
  if (by_value) {
    auto created =
        Function::Create(graph,
                         std::shared_ptr<Compiler>(std::shared_ptr<void>(),
                                                   &testing::SharedJit()),
                         FunctionOptions());
    if (!created.ok()) return refuse("function", created.status().message());
    function = *std::move(created);
  }
  int distinct_values = 0;
  std::vector<std::vector<int64_t>> seen_values;
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    auto inputs = ReadTensors(set.path(), "input");
    auto expected = ReadTensors(set.path(), "output");
    if (!inputs.ok()) return refuse("test data", inputs.status().message());
    if (!expected.ok()) return refuse("test data", expected.status().message());
    bool same_bound_values = true;
    for (auto it = bound_inputs.rbegin(); it != bound_inputs.rend(); ++it) {
      const std::string file = absl::StrCat("input_", *it, ".pb");
      same_bound_values =
          same_bound_values && ReadFile(set.path() / file) ==
                                   ReadFile(dir / "test_data_set_0" / file);
      inputs->erase(inputs->begin() + *it);
    }
    if (!same_bound_values) continue;
    if (inputs->size() != graph->inputs().size()) {
      return refuse("test data",
                    absl::StrCat(inputs->size(), " inputs for a graph of ",
                                 graph->inputs().size()));
    }
    std::shared_ptr<const Graph> run_graph = graph;
    if (by_value) {
      std::vector<InputValues> values;
      std::vector<int64_t> all_values;
      for (int i : graph->value_inputs()) {
        const InputView view = InputView::Of((*inputs)[i]);
        if (absl::Status ok = CheckValueInput(view, "input"); !ok.ok()) {
          return refuse("call", ok.message());
        }
        values.push_back(ReadInputValues(i, view));
        all_values.insert(all_values.end(), values.back().values.begin(),
                          values.back().values.end());
        all_values.push_back(-1234567);  // separates the inputs
      }
      if (std::find(seen_values.begin(), seen_values.end(), all_values) ==
          seen_values.end()) {
        seen_values.push_back(all_values);
        ++distinct_values;
      }
      auto rebuilt = graph->rebuilder() != nullptr
                         ? graph->rebuilder()->Rebuild(*graph, values)
                         : absl::StatusOr<std::shared_ptr<const Graph>>(graph);
      if (!rebuilt.ok()) return refuse("load", rebuilt.status().message());
      std::vector<TensorMeta> metas;
      for (const Tensor& t : *inputs) metas.push_back(TensorMeta::Of(t));
      auto specialized = SpecializeGraph(*rebuilt, metas, values);
      if (!specialized.ok()) {
        return refuse("load", specialized.status().message());
      }
      run_graph = specialized->graph;
    }
    auto eager = EagerInterpreter::Create(run_graph);
    if (!eager.ok()) return refuse("eager", eager.status().message());
    auto check = [&](const std::string& backend,
                     const std::vector<Tensor>& actual) -> std::string {
      if (actual.size() != expected->size()) {
        return absl::StrCat(backend, ": ", actual.size(), " outputs, expected ",
                            expected->size());
      }
      for (size_t k = 0; k < actual.size(); ++k) {
        const std::string diff = Compare(actual[k], (*expected)[k]);
        if (!diff.empty()) {
          return absl::StrCat(backend, ": output ", k, " ", diff);
        }
      }
      return "";
    };
    auto eager_out = (*eager)->Run(*inputs);
    if (!eager_out.ok()) return refuse("eager", eager_out.status().message());
    if (std::string diff = check("eager", *eager_out); !diff.empty()) {
      return wrong(diff);
    }
    Specialization spec;
    for (const Tensor& t : *inputs) spec.inputs.push_back(TensorMeta::Of(t));
    auto executable = testing::SharedJit().Compile(run_graph, spec);
    if (!executable.ok()) return refuse("jit", executable.status().message());
    if (!JitCompiler::EagerOnlyReason(*run_graph)) {
      if (auto reason = testing::NotCompiledByJitReason(**executable)) {
        return wrong(absl::StrCat("jit: ", *reason));
      }
    }
    auto jit_out = testing::RunOnSharedJit(**executable, *inputs);
    if (!jit_out.ok()) return refuse("jit", jit_out.status().message());
    if (std::string diff = check("jit", *jit_out); !diff.empty()) {
      return wrong(diff);
    }
    if (function != nullptr) {
      std::vector<InputView> views;
      for (const Tensor& t : *inputs) views.push_back(InputView::Of(t));
      auto out = function->Call(*inputs, CallSignature{views, {}});
      if (!out.ok()) return refuse("function", out.status().message());
      if (std::string diff = check("function", *out); !diff.empty()) {
        return wrong(diff);
      }
    }
  }
  // One entry per distinct values: the value guards told them apart.
  if (function != nullptr &&
      function->stats().compiles != std::min(distinct_values, 8)) {
    return wrong(absl::StrCat("function: ", function->stats().compiles,
                              " compiles for ", distinct_values,
                              " distinct values"));
  }
  if (r.bound) r.reason = refusal;
  return r;
}

struct OpRow {
  int pass = 0, bound = 0, refused = 0, wrong = 0;
  std::map<std::string, int> reasons;
};

std::string Report(const std::vector<CaseResult>& results) {
  std::map<std::string, OpRow> rows;
  int pass = 0, bound = 0, refused = 0, wrong = 0, eligible = 0,
      eligible_pass = 0;
  for (const CaseResult& r : results) {
    OpRow& row = rows[r.op];
    switch (r.outcome) {
      case Outcome::kPass:
        if (r.bound) {
          ++row.bound, ++bound;
          ++row.reasons[r.reason];
        } else {
          ++row.pass, ++pass;
        }
        break;
      case Outcome::kRefused:
        ++row.refused, ++refused;
        ++row.reasons[r.reason];
        break;
      case Outcome::kWrong:
        ++row.wrong, ++wrong;
        ++row.reasons[absl::StrCat("WRONG ", r.name, ": ", r.reason)];
        break;
    }
    if (r.eligible) {
      ++eligible;
      if (r.outcome == Outcome::kPass && !r.bound) ++eligible_pass;
    }
  }
  std::string out = absl::StrCat(
      "# ONNX node tests\n\n"
      "Generated by `onnx_node_tests` (tests/conformance/onnx_node_test.cc;\n"
      "`GJ_ONNX_REPORT=$PWD/ONNX.md build/tests/onnx_node_tests`) over "
      "Debian's\n"
      "libonnx-testdata (ONNX 1.12): each case's model.onnx loaded by the\n"
      "importer (core/onnx/), run on the eager interpreter and the CPU JIT, "
      "and\n"
      "compared with the expected outputs (rtol 1e-3, atol 1e-7). A case\n"
      "passes, is refused with a reason, or is wrong.\n\n",
      "Cases: ", results.size(), "; passing ", pass, ", refused ",
      refused + bound, ", wrong ", wrong, ".\n\n",
      "A graph input a node must know (a Reshape's shape, a Slice's starts,\n"
      "TopK's K, a Resize's float scales and roi: ONNX's node tests pass\n"
      "them as inputs; also through a Cast) is value-specialized\n"
      "(core/value_inputs.h): each call's values are compiled into its\n"
      "entry as constants and guarded. Such a case runs, per data set, the\n"
      "graph the importer rebuilds for those values on the eager interpreter\n"
      "and the CPU JIT, and all its data sets through one function on the\n"
      "JIT, which must compile one entry per distinct values.\n\n"
      "Inputs that cannot be value-specialized (float16, more than 64\n"
      "values) are refused; such a case runs again with those inputs bound\n"
      "to its test data as initializers, to check the mapping; it counts\n"
      "as refused, and its result shows in the column \"pass, inputs bound\" (",
      bound, " cases; a wrong result there fails the test too).\n\n",
      "Cases whose ops are all in the default domain and whose inputs and\n"
      "outputs are tensors of dtypes guardjit has: ",
      eligible, "; passing ", eligible_pass, " (",
      eligible ? 100 * eligible_pass / eligible : 0, "%).\n\n",
      "| op | pass | refused | wrong | pass, inputs bound | reasons (count) |\n"
      "|---|---|---|---|---|---|\n");
  for (const auto& [op, row] : rows) {
    std::vector<std::string> reasons;
    for (const auto& [reason, n] : row.reasons) {
      reasons.push_back(absl::StrCat(reason, " (", n, ")"));
    }
    absl::StrAppend(&out, "| ", op, " | ", row.pass, " | ",
                    row.refused + row.bound, " | ", row.wrong, " | ", row.bound,
                    " | ", absl::StrJoin(reasons, "; "), " |\n");
  }
  return out;
}

int BaselinePassCount() {
  const char* path = std::getenv("GJ_ONNX_BASELINE");
  if (path == nullptr) return 0;
  std::ifstream in(path);
  std::string line;
  const std::string key = kBaselineKey;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      return std::atoi(line.c_str() + key.size());
    }
  }
  ADD_FAILURE() << "no '" << key << "N' line in " << path;
  return 0;
}

TEST(OnnxNodeTest, DebianNodeTestsPassOrAreRefused) {
  const char* env = std::getenv("GJ_ONNX_TESTDATA");
  const fs::path root =
      env ? fs::path(env) : fs::path("/usr/share/libonnx-testdata/data/node");
  if (!fs::is_directory(root)) {
    GTEST_SKIP() << "no ONNX test data at " << root
                 << " (Debian's libonnx-testdata)";
  }
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  std::vector<CaseResult> results;
  int pass = 0;
  for (const fs::path& dir : cases) {
    results.push_back(RunCase(dir));
    const CaseResult& r = results.back();
    if (r.outcome == Outcome::kPass) ++pass;
    EXPECT_NE(r.outcome, Outcome::kWrong) << r.name << ": " << r.reason;
  }
  const std::string report = Report(results);
  if (const char* out = std::getenv("GJ_ONNX_REPORT")) {
    std::ofstream file(out, std::ios::binary);
    file << report;
    EXPECT_TRUE(file.good()) << "cannot write " << out;
  }
  std::cout << report.substr(0, report.find("| op |"));
  const int baseline = BaselinePassCount();
  EXPECT_GE(pass, baseline)
      << "fewer ONNX node tests pass than the baseline (a regression); see "
         "the report for which";
}

}  // namespace
}  // namespace guardjit
