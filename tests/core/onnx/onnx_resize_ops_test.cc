// ONNX's Resize and Upsample (core/onnx/onnx_resize_ops.cc): which
// coordinate and rounding modes map exactly onto ATen's nearest and bilinear
// upsampling (and with which sizes), and the combinations refused rather
// than approximated.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// Resize (opset 13) of x [1, 2, 3, 4] by `scales` or to `sizes`.
ModelProto ResizeModel(const std::string& mode, const std::string& coordinates,
                       const std::vector<float>& scales,
                       const std::vector<int64_t>& sizes = {}) {
  ModelProto m = Model(13);
  AddInput(m, "x", {1, 2, 3, 4});
  std::vector<std::string> inputs = {"x", "", ""};
  if (!scales.empty()) {
    AddInitializer(m, "scales", {static_cast<int64_t>(scales.size())}, scales);
    inputs[2] = "scales";
  } else {
    AddInt64Initializer(m, "sizes", sizes);
    inputs.push_back("sizes");
  }
  NodeProto* n = AddNode(m, "Resize", inputs, {"y"});
  SetString(n, "mode", mode);
  SetString(n, "coordinate_transformation_mode", coordinates);
  AddOutput(m, "y");
  return m;
}

TEST(OnnxResizeOpsTest, ExactMappingsOntoAtenUpsampling) {
  auto g = Load(ResizeModel("nearest", "half_pixel", {1, 1, 2, 3}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g),
            std::vector<std::string>{"aten.upsample_nearest2d.vec"});
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 2, 6, 12}}));

  g = Load(ResizeModel("linear", "align_corners", {}, {1, 2, 5, 7}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g),
            std::vector<std::string>{"aten.upsample_bilinear2d.vec"});
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 2, 5, 7}}));
  const Graph& graph = **g;
  const Node& up = graph.node(graph.output_node().args[0].as_value().node);
  EXPECT_TRUE(up.args[2].as_bool()) << "align_corners";

  // Upsample (opset 9): scales are input 1, asymmetric floor.
  ModelProto m = Model(9);
  AddInput(m, "x", {1, 1, 2, 2});
  AddInitializer(m, "scales", {4}, {1, 1, 2, 2});
  AddNode(m, "Upsample", {"x", "scales"}, {"y"});
  AddOutput(m, "y");
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 4, 4}}));
}

TEST(OnnxResizeOpsTest, InexactCombinationsAreRefused) {
  // half_pixel nearest at a non-integer scale picks other pixels than ATen.
  ExpectError(Load(ResizeModel("nearest", "half_pixel", {1, 1, 1.5f, 2})),
              absl::StatusCode::kUnimplemented,
              "nearest with coordinate_transformation_mode 'half_pixel' and "
              "nearest_mode 'round_prefer_floor' at these scales");
  ExpectError(Load(ResizeModel("linear", "align_corners", {1, 1, 1.5f, 2})),
              absl::StatusCode::kUnimplemented,
              "align_corners at scales that do not give whole sizes");
  ExpectError(Load(ResizeModel("cubic", "half_pixel", {1, 1, 2, 2})),
              absl::StatusCode::kUnimplemented, "mode 'cubic'");
  ExpectError(Load(ResizeModel("nearest", "half_pixel", {2, 1, 2, 2})),
              absl::StatusCode::kUnimplemented,
              "resizing other dims than the last two");
  ExpectError(Load(ResizeModel("linear", "half_pixel", {1, 1, -2, 2})),
              absl::StatusCode::kInvalidArgument, "scales must be positive");
  ExpectError(Load(ResizeModel("nearest", "asymmetric", {}, {})),
              absl::StatusCode::kInvalidArgument,
              "ONNX node 0 'y' (Resize, domain 'ai.onnx', opset 13): neither "
              "scales nor sizes given");
}

}  // namespace
}  // namespace guardjit::testing
