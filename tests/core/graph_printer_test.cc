#include "core/graph_printer.h"

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"

namespace guardjit {
namespace {

TEST(GraphPrinterTest, PrintsLikeFxPrintTabular) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("add", "aten.add.Tensor",
                        {Arg::Ref("x"), Arg::Float(1.0)},
                        {{"alpha", Arg::Int(2)}})
                  .ok());
  ASSERT_TRUE(b.AddNode("trio", "aten.trio.default", {Arg::Ref("add")}).ok());
  ASSERT_TRUE(
      b.AddNode("getitem", "getitem", {Arg::Ref("trio"), Arg::Int(1)}).ok());
  ASSERT_TRUE(b.AddNode("pool", "aten.pool.default",
                        {Arg::Ref("getitem"), Arg::Int(2)},
                        {{"dtype", Arg::OfDType(DType::kFloat16)},
                         {"mode", Arg::String("max")}})
                  .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("pool"), Arg::Ref("add")}).ok());
  auto g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(FormatTabular(**g),
            "opcode         name     target                       args         "
            "   kwargs\n"
            "-------------  -------  ---------------------------  "
            "--------------  ---------------------------------------\n"
            "placeholder    x        x                            ()           "
            "   {}\n"
            "call_function  add      aten.add.Tensor              (x, 1.0)     "
            "   {'alpha': 2}\n"
            "call_function  trio     aten.trio.default            (add,)       "
            "   {}\n"
            "call_function  getitem  <built-in function getitem>  (trio, 1)    "
            "   {}\n"
            "call_function  pool     aten.pool.default            (getitem, 2) "
            "   {'dtype': torch.float16, 'mode': 'max'}\n"
            "output         output   output                       ((pool, "
            "add),)  {}\n");
}

TEST(GraphPrinterTest, FormatsLiterals) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  auto g = b.Finish();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(FormatArg(**g, Arg::OfList({Arg::Int(1), Arg::Float(0.5),
                                        Arg::Bool(true), Arg::None()})),
            "[1, 0.5, True, None]");
  EXPECT_EQ(FormatArg(**g, Arg::OfDevice(Device{DeviceType::kCUDA, 1})),
            "device(type='cuda', index=1)");
  EXPECT_EQ(FormatArg(**g, Arg::Value(ValueRef{0, 0})), "x");
  EXPECT_EQ(FormatArg(**g, Arg::Float(-3.0)), "-3.0");
}

}  // namespace
}  // namespace guardjit
