// The importer's table of ONNX operators (core/onnx/onnx_op_table.h): the
// default table's families, lookups, the sorted listing and the oldest opset
// each mapping reads.

#include "core/onnx/onnx_op_table.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

absl::Status MapNothing(OnnxNodeContext&) { return absl::OkStatus(); }
absl::Status MapNothingElse(OnnxNodeContext&) {
  return absl::UnimplementedError("else");
}

TEST(OnnxOpTableTest, DefaultHasEveryFamily) {
  const OnnxOpTable& table = OnnxOpTable::Default();
  EXPECT_EQ(&table, &OnnxOpTable::Default());
  // One operator of each family's file.
  for (const char* op :
       {"Add", "Relu", "Conv", "MaxPool", "SoftmaxCrossEntropyLoss", "Resize",
        "Trilu", "Reshape", "ReduceSum", "Gather", "Einsum", "HannWindow",
        "LSTM"}) {
    EXPECT_NE(table.Find(op), nullptr) << op;
  }
  EXPECT_EQ(table.Find("NoSuchOp"), nullptr);
  // Op types are case-sensitive, as ONNX's are.
  EXPECT_EQ(table.Find("relu"), nullptr);
}

TEST(OnnxOpTableTest, OpTypesAreSortedAndFindable) {
  const OnnxOpTable& table = OnnxOpTable::Default();
  const std::vector<std::string> types = table.OpTypes();
  ASSERT_GT(types.size(), 100u);
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_EQ(std::adjacent_find(types.begin(), types.end()), types.end());
  for (const std::string& t : types) EXPECT_NE(table.Find(t), nullptr) << t;
}

TEST(OnnxOpTableTest, AddReplacesAMapper) {
  OnnxOpTable table;
  EXPECT_TRUE(table.OpTypes().empty());
  table.Add("Custom", MapNothing);
  EXPECT_EQ(table.Find("Custom"), &MapNothing);
  table.Add("Custom", MapNothingElse);
  EXPECT_EQ(table.Find("Custom"), &MapNothingElse);
  table.Add("Another", MapNothing);
  EXPECT_EQ(table.OpTypes(), std::vector<std::string>({"Another", "Custom"}));
}

TEST(OnnxOpTableTest, OldestOpsetIsSevenUnlessUnchangedBefore) {
  EXPECT_EQ(OnnxOpTable::OldestOpset("Conv"), kMinOnnxOpset);
  EXPECT_EQ(kMinOnnxOpset, 7);
  EXPECT_EQ(OnnxOpTable::OldestOpset("Relu"), 6);
  EXPECT_EQ(OnnxOpTable::OldestOpset("Sigmoid"), 6);
  EXPECT_EQ(OnnxOpTable::OldestOpset("GlobalAveragePool"), 1);
  EXPECT_EQ(OnnxOpTable::OldestOpset("ReduceLogSum"), 1);
  EXPECT_EQ(OnnxOpTable::OldestOpset("NoSuchOp"), kMinOnnxOpset);
  // Every operator listed with an older opset is one the table maps.
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "Not",
                         "Softplus", "Softsign", "ReduceLogSum", "Abs", "Tanh",
                         "InstanceNormalization", "HardSigmoid"}) {
    EXPECT_NE(OnnxOpTable::Default().Find(op), nullptr) << op;
    EXPECT_LT(OnnxOpTable::OldestOpset(op), kMinOnnxOpset) << op;
  }
}

}  // namespace
}  // namespace guardjit
