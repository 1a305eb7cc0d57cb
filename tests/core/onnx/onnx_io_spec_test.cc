#include "core/onnx/onnx_io_spec.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

// A tensor value info; dims: a number is a dim_value, a string a dim_param,
// "" neither.
onnx::ValueInfoProto Info(int32_t elem_type,
                          const std::vector<std::string>& dims) {
  onnx::ValueInfoProto info;
  info.set_name("x");
  auto* type = info.mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  auto* shape = type->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d.empty()) continue;
    if (d[0] >= '0' && d[0] <= '9' || d[0] == '-') {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
  return info;
}

TEST(OnnxIoSpecTest, StaticSizesAndNamedDims) {
  auto spec = IoSpecFromOnnx(
      Info(onnx::TensorProto::FLOAT, {"batch", "3", "seq_len"}), "input 'x'");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->dtype, DType::kFloat32);
  EXPECT_EQ(spec->dims,
            (std::vector<IoDim>{IoDim::Dynamic("batch"), IoDim::Static(3),
                                IoDim::Dynamic("seq_len")}));
  EXPECT_EQ(spec->ToString(), "float32[batch, 3, seq_len]");
}

TEST(OnnxIoSpecTest, ExpressionsAndMissingDimsAreUnnamed) {
  auto spec = IoSpecFromOnnx(
      Info(onnx::TensorProto::INT64, {"batch + 1", "", "2"}), "output 'y'");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->dtype, DType::kInt64);
  EXPECT_EQ(spec->dims, (std::vector<IoDim>{IoDim::Dynamic(), IoDim::Dynamic(),
                                            IoDim::Static(2)}));
}

TEST(OnnxIoSpecTest, WhatIsNotDeclaredStaysUnknown) {
  onnx::ValueInfoProto bare;
  bare.set_name("y");
  auto spec = IoSpecFromOnnx(bare, "output 'y'");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(*spec, IoSpec());

  onnx::ValueInfoProto no_shape = Info(onnx::TensorProto::FLOAT, {});
  no_shape.mutable_type()->mutable_tensor_type()->clear_shape();
  spec = IoSpecFromOnnx(no_shape, "output 'y'");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->dtype, DType::kFloat32);
  EXPECT_EQ(spec->rank(), -1);

  // A scalar: a shape with no dims.
  spec = IoSpecFromOnnx(Info(onnx::TensorProto::FLOAT, {}), "output 'y'");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->rank(), 0);

  // An element type the library lacks: the dims still count.
  spec = IoSpecFromOnnx(Info(onnx::TensorProto::STRING, {"4"}), "output 'y'");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->dtype.has_value());
  EXPECT_EQ(spec->dims, std::vector<IoDim>{IoDim::Static(4)});
}

TEST(OnnxIoSpecTest, NegativeSizeAndHugeRankAreInvalid) {
  auto spec = IoSpecFromOnnx(Info(onnx::TensorProto::FLOAT, {"2", "-3"}),
                             "graph output 'y'");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(), "graph output 'y': dim 1 is -3");

  spec = IoSpecFromOnnx(
      Info(onnx::TensorProto::FLOAT, std::vector<std::string>(65, "1")),
      "graph input 'x'");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(spec.status().message(), "graph input 'x': rank 65"));
}

}  // namespace
}  // namespace guardjit
