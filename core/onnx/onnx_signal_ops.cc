// ONNX's window functions (opset 17): HannWindow, HammingWindow and
// BlackmanWindow, the generalized cosine windows
//   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),  n = 0 .. size - 1,
// N = size when periodic (the default), size - 1 when symmetric. The
// output is a function of `size` alone, so it is a constant made at load
// (a graph input is value-specialized: each size its entry), computed in
// double and rounded to output_datatype.

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_tensor.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// The largest window made at load.
constexpr int64_t kMaxWindowElements = int64_t{1} << 24;

absl::Status MapWindow(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  double a0 = 0.5, a1 = 0.5, a2 = 0.0;  // Hann
  if (op == "HammingWindow") {
    a0 = 25.0 / 46.0;
    a1 = 21.0 / 46.0;
  } else if (op == "BlackmanWindow") {
    a0 = 0.42;
    a1 = 0.5;
    a2 = 0.08;
  }
  ASSIGN_OR_RETURN(int64_t periodic, ctx.attrs().Int("periodic", 1));
  ASSIGN_OR_RETURN(int64_t onnx_type,
                   ctx.attrs().Int("output_datatype", 1));  // FLOAT
  ASSIGN_OR_RETURN(DType dtype, DTypeFromOnnx(static_cast<int32_t>(onnx_type)));
  ASSIGN_OR_RETURN(std::vector<int64_t> size_value, ctx.ConstInts(0, "size"));
  if (size_value.size() != 1) {
    return absl::InvalidArgumentError("size is not a scalar");
  }
  const int64_t size = size_value[0];
  if (size < 0 || size > kMaxWindowElements) {
    return absl::InvalidArgumentError(absl::StrCat("size ", size));
  }
  if (!periodic && size == 1) {
    // N = 0: ONNX's definition divides by zero.
    return absl::UnimplementedError("a symmetric window of size 1");
  }
  const double n_total =
      periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
  ASSIGN_OR_RETURN(Tensor w, Tensor::Empty(DType::kFloat64, {size}));
  constexpr double kPi = 3.14159265358979323846;
  for (int64_t n = 0; n < size; ++n) {
    const double x = 2 * kPi * static_cast<double>(n) / n_total;
    w.data_as<double>()[n] = a0 - a1 * std::cos(x) + a2 * std::cos(2 * x);
  }
  const std::string name = ctx.InternalName("window");
  RETURN_IF_ERROR(ctx.state().AddKnownValue(name, w));
  ASSIGN_OR_RETURN(Arg out, ctx.state().GraphValue(name));
  ASSIGN_OR_RETURN(out, CastTo(ctx, out, dtype));
  if (dtype == DType::kFloat64) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.clone.default", {out}));
  }
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddSignalOnnxOps(OnnxOpTable& table) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    table.Add(op, MapWindow);
  }
}

}  // namespace guardjit
