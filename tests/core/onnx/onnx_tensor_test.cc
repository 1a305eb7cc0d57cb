// TensorProto values (core/onnx/onnx_tensor.h): element types, the typed
// fields and raw_data each type reads, bools normalized to 0/1, external
// data by location/offset/length, and each refusal with the code and the
// tensor's name.

#include "core/onnx/onnx_tensor.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TensorProto Proto(int data_type, const std::vector<int64_t>& dims) {
  TensorProto t;
  t.set_data_type(data_type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

TEST(OnnxTensorTest, TypeNamesAndDTypes) {
  EXPECT_EQ(OnnxTypeName(TensorProto::FLOAT), "FLOAT");
  EXPECT_EQ(OnnxTypeName(TensorProto::UINT16), "UINT16");
  EXPECT_EQ(OnnxTypeName(999), "type 999");
  EXPECT_EQ(*DTypeFromOnnx(TensorProto::FLOAT16), DType::kFloat16);
  EXPECT_EQ(*DTypeFromOnnx(TensorProto::BFLOAT16), DType::kBFloat16);
  EXPECT_EQ(*DTypeFromOnnx(TensorProto::BOOL), DType::kBool);
  EXPECT_EQ(*DTypeFromOnnx(TensorProto::UINT8), DType::kUInt8);
  EXPECT_EQ(*DTypeFromOnnx(TensorProto::DOUBLE), DType::kFloat64);
  for (int type : {TensorProto::STRING, TensorProto::UINT16,
                   TensorProto::UINT64, TensorProto::COMPLEX64}) {
    ExpectError(
        DTypeFromOnnx(type), absl::StatusCode::kUnimplemented,
        "element type " + OnnxTypeName(type) + " has no guardjit dtype");
  }
}

TEST(OnnxTensorTest, TypedFieldsPerElementType) {
  TensorProto f = Proto(TensorProto::FLOAT, {2, 2});
  for (float v : {1.5f, -2.0f, 0.0f, 4.0f}) f.add_float_data(v);
  auto t = TensorFromOnnx(f, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kFloat32, {2, 2}, {1.5, -2, 0, 4});

  // Narrow integers and bools come in int32_data; bools become 0/1.
  TensorProto i8 = Proto(TensorProto::INT8, {2});
  i8.add_int32_data(-3);
  i8.add_int32_data(100);
  t = TensorFromOnnx(i8, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kInt8, {2}, {-3, 100});
  TensorProto b = Proto(TensorProto::BOOL, {3});
  for (int v : {0, 5, 1}) b.add_int32_data(v);
  t = TensorFromOnnx(b, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data_as<uint8_t>()[1], 1);
  ExpectTensor(*t, DType::kBool, {3}, {0, 1, 1});
  // float16: the bits, in the low half of each int32.
  TensorProto h = Proto(TensorProto::FLOAT16, {2});
  h.add_int32_data(0x3C00);  // 1.0
  h.add_int32_data(0xC000);  // -2.0
  t = TensorFromOnnx(h, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kFloat16, {2}, {1, -2});
  // A scalar (no dims) holds one value.
  TensorProto scalar = Proto(TensorProto::INT64, {});
  scalar.add_int64_data(-9);
  t = TensorFromOnnx(scalar, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kInt64, {}, {-9});
}

TEST(OnnxTensorTest, RawData) {
  TensorProto d = Proto(TensorProto::DOUBLE, {2});
  const double values[] = {0.5, -7.25};
  d.set_raw_data(std::string(reinterpret_cast<const char*>(values), 16));
  auto t = TensorFromOnnx(d, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kFloat64, {2}, {0.5, -7.25});
  TensorProto b = Proto(TensorProto::BOOL, {2});
  b.set_raw_data(std::string("\x00\x02", 2));
  t = TensorFromOnnx(b, "", "w");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data_as<uint8_t>()[1], 1) << "any nonzero byte is true";
}

TEST(OnnxTensorTest, PayloadsOfTheWrongSizeOrTypeAreRefused) {
  TensorProto raw = Proto(TensorProto::FLOAT, {2});
  raw.set_raw_data("abc");
  ExpectError(TensorFromOnnx(raw, "", "initializer 'w'"),
              absl::StatusCode::kInvalidArgument,
              "initializer 'w': 3 bytes of data, expected 8 for float32[2]");
  TensorProto typed = Proto(TensorProto::INT64, {2});
  typed.add_int64_data(1);
  ExpectError(TensorFromOnnx(typed, "", "initializer 'w'"),
              absl::StatusCode::kInvalidArgument,
              "initializer 'w': int64_data holds 1 values, expected 2");
  ExpectError(TensorFromOnnx(Proto(TensorProto::STRING, {1}), "", "value 'v'"),
              absl::StatusCode::kUnimplemented,
              "value 'v': element type STRING has no guardjit dtype");
  ExpectError(TensorFromOnnx(Proto(TensorProto::FLOAT, {-1}), "", "w"),
              absl::StatusCode::kInvalidArgument, "w: ");
  ExpectError(TensorFromOnnx(Proto(TensorProto::DOUBLE,
                                   {int64_t{1} << 31, int64_t{1} << 31}),
                             "", "w"),
              absl::StatusCode::kOutOfRange, "w: byte size overflows int64");
}

TEST(OnnxTensorTest, ExternalDataByLocationOffsetAndLength) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream file(dir + "/onnx_tensor_test.bin", std::ios::binary);
    const float values[] = {9.0f, 1.0f, 2.0f, 3.0f};
    file.write(reinterpret_cast<const char*>(values), sizeof values);
  }
  auto external =
      [](const std::vector<std::pair<std::string, std::string>>& entries) {
        TensorProto t = Proto(TensorProto::FLOAT, {2});
        t.set_data_location(TensorProto::EXTERNAL);
        for (const auto& [key, value] : entries) {
          auto* e = t.add_external_data();
          e->set_key(key);
          e->set_value(value);
        }
        return t;
      };
  auto t = TensorFromOnnx(external({{"location", "onnx_tensor_test.bin"},
                                    {"offset", "4"},
                                    {"length", "8"}}),
                          dir, "w");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectTensor(*t, DType::kFloat32, {2}, {1, 2});
  // Without a length: to the end of the file, which must then fit.
  ExpectError(TensorFromOnnx(external({{"location", "onnx_tensor_test.bin"}}),
                             dir, "w"),
              absl::StatusCode::kInvalidArgument,
              "w: 16 bytes of data, expected 8 for float32[2]");
  ExpectError(TensorFromOnnx(external({{"location", "onnx_tensor_test.bin"},
                                       {"offset", "12"},
                                       {"length", "8"}}),
                             dir, "w"),
              absl::StatusCode::kDataLoss,
              "has 4 bytes at offset 12, expected 8");
  ExpectError(
      TensorFromOnnx(external({{"location", "no_such_file.bin"}}), dir, "w"),
      absl::StatusCode::kNotFound, "w: cannot open external data '");
  ExpectError(TensorFromOnnx(external({{"location", "onnx_tensor_test.bin"},
                                       {"offset", "-4"}}),
                             dir, "w"),
              absl::StatusCode::kInvalidArgument,
              "w: external data offset '-4' is not a non-negative integer");
  ExpectError(TensorFromOnnx(external({{"offset", "0"}}), dir, "w"),
              absl::StatusCode::kInvalidArgument,
              "w: external data without a location");
}

}  // namespace
}  // namespace guardjit::testing
