// Checks gj_list_ops (capi/ops.cc): the JSON's framing and one line per op,
// targets sorted and unique, the flags of a few well-known ops, and the
// INVALID_ARGUMENT for a NULL out_json.

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace gjtest {
namespace {

struct OpRow {
  std::string target;
  std::string schema;
  bool reference_kernel;
  bool cpu_lowering;
  bool extern_step;
  bool cuda_lowering;
};

std::string ListOps() {
  char* json = nullptr;
  EXPECT_TRUE(Ok(gj_list_ops(&json)));
  if (json == nullptr) return "";
  std::string text(json);
  gj_string_destroy(json);
  return text;
}

// The rows of `json`, each checked against the one-line format; fails the
// test on a line that does not match.
std::vector<OpRow> ParseRows(const std::string& json) {
  const std::string head = "{\"ops\": [\n";
  const std::string tail = "\n]}\n";
  std::vector<OpRow> rows;
  EXPECT_EQ(json.substr(0, head.size()), head);
  EXPECT_GE(json.size(), head.size() + tail.size());
  if (json.size() < head.size() + tail.size()) return rows;
  EXPECT_EQ(json.substr(json.size() - tail.size()), tail);
  const std::string body =
      json.substr(head.size(), json.size() - head.size() - tail.size());
  static const std::regex kRow(
      R"re(  \{"target": "([^"\\]*)", "schema": "((?:[^"\\]|\\.)*)", )re"
      R"re("reference_kernel": (true|false), "cpu_lowering": (true|false), )re"
      R"re("extern_step": (true|false), "cuda_lowering": (true|false)\})re");
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    std::string line = body.substr(start, end - start);
    // Every row but the last ends with a comma.
    const bool last = end == body.size();
    if (!last) {
      EXPECT_EQ(line.back(), ',') << line;
      line.pop_back();
    }
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, kRow)) << line;
    if (m.empty()) break;
    rows.push_back({m[1], m[2], m[3] == "true", m[4] == "true", m[5] == "true",
                    m[6] == "true"});
    start = end + 1;
  }
  return rows;
}

const OpRow* Find(const std::vector<OpRow>& rows, const std::string& target) {
  for (const OpRow& row : rows) {
    if (row.target == target) return &row;
  }
  return nullptr;
}

TEST(OpsTest, NullOutJsonIsInvalidArgument) {
  EXPECT_TRUE(IsError(gj_list_ops(nullptr), GJ_INVALID_ARGUMENT,
                      {"gj_list_ops: out_json is NULL"}));
}

TEST(OpsTest, OneRowPerOpSortedByTarget) {
  const std::vector<OpRow> rows = ParseRows(ListOps());
  ASSERT_GT(rows.size(), 50u);
  std::set<std::string> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(seen.insert(rows[i].target).second) << rows[i].target;
    if (i > 0) {
      EXPECT_LT(rows[i - 1].target, rows[i].target);
    }
    // "aten.add.Tensor", "operator.mul", ...: a namespace and a name.
    EXPECT_NE(rows[i].target.find('.'), std::string::npos) << rows[i].target;
    EXPECT_FALSE(rows[i].schema.empty()) << rows[i].target;
  }
}

TEST(OpsTest, WellKnownOpsHaveTheirFlags) {
  const std::vector<OpRow> rows = ParseRows(ListOps());
  const OpRow* add = Find(rows, "aten.add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->schema.substr(0, 11), "add.Tensor(");
  EXPECT_TRUE(add->reference_kernel);
  EXPECT_TRUE(add->cpu_lowering);
  EXPECT_FALSE(add->extern_step);
  const OpRow* mm = Find(rows, "aten.mm.default");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->reference_kernel);
  EXPECT_TRUE(mm->extern_step);
  const OpRow* conv = Find(rows, "aten.convolution.default");
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->extern_step);
  EXPECT_EQ(Find(rows, "aten.no_such_op.default"), nullptr);
}

TEST(OpsTest, CudaLoweringMirrorsCpuLowering) {
  const std::vector<OpRow> rows = ParseRows(ListOps());
  ASSERT_FALSE(rows.empty());
  int lowered = 0;
  for (const OpRow& row : rows) {
    EXPECT_EQ(row.cuda_lowering, row.cpu_lowering) << row.target;
    lowered += row.cpu_lowering;
  }
  // Some ops are lowered and some are not.
  EXPECT_GT(lowered, 0);
  EXPECT_LT(lowered, static_cast<int>(rows.size()));
}

TEST(OpsTest, RepeatedCallsGiveEqualSeparateStrings) {
  char* first = nullptr;
  char* second = nullptr;
  ASSERT_TRUE(Ok(gj_list_ops(&first)));
  ASSERT_TRUE(Ok(gj_list_ops(&second)));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_STREQ(first, second);
  gj_string_destroy(first);
  gj_string_destroy(second);
}

}  // namespace
}  // namespace gjtest
