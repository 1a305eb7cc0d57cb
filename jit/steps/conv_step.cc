#include "jit/steps/conv_step.h"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/blas_panels.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

using Dims3 = ConvStep::Dims3;

int64_t Volume(const Dims3& d) { return d[0] * d[1] * d[2]; }

// Smallest q with q * b >= a, for b > 0.
int64_t CeilDiv(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -(-a / b);
}

// A strided image as im2col reads it: the first channel of the group and
// its strides (in elements), spatial dims as 3-D ones.
template <typename T>
struct Image {
  const T* data;
  int64_t channel_stride;
  Dims3 strides;
};

// cols[(c, k0, k1, k2), (o0, o1, o2)] = image[c, o * stride - padding + k *
// dilation], zero in the padding; cols is row-major [rows, cols]. Writes the
// rows of channels [c_begin, c_end) (all by default).
template <typename T>
void Im2Col(const ConvStep& s, const Image<T>& image, T* cols,
            int64_t c_begin = 0, int64_t c_end = -1) {
  const Dims3& st = image.strides;
  const int64_t out2 = s.out[2];
  if (c_end < 0) c_end = s.in_channels;
  cols += c_begin * Volume(s.kernel) * s.cols();
  for (int64_t c = c_begin; c < c_end; ++c) {
    const T* plane = image.data + c * image.channel_stride;
    for (int64_t k0 = 0; k0 < s.kernel[0]; ++k0) {
      for (int64_t k1 = 0; k1 < s.kernel[1]; ++k1) {
        for (int64_t k2 = 0; k2 < s.kernel[2]; ++k2) {
          // Output positions o2 in [lo, hi) read inside the image.
          const int64_t shift = k2 * s.dilation[2] - s.padding[2];
          const int64_t lo =
              std::clamp<int64_t>(CeilDiv(-shift, s.stride[2]), 0, out2);
          const int64_t hi = std::clamp<int64_t>(
              CeilDiv(s.in[2] - shift, s.stride[2]), lo, out2);
          for (int64_t o0 = 0; o0 < s.out[0]; ++o0) {
            const int64_t i0 =
                o0 * s.stride[0] - s.padding[0] + k0 * s.dilation[0];
            for (int64_t o1 = 0; o1 < s.out[1]; ++o1, cols += out2) {
              const int64_t i1 =
                  o1 * s.stride[1] - s.padding[1] + k1 * s.dilation[1];
              if (i0 < 0 || i0 >= s.in[0] || i1 < 0 || i1 >= s.in[1]) {
                std::fill(cols, cols + out2, T(0));
                continue;
              }
              std::fill(cols, cols + lo, T(0));
              const T* src = plane + i0 * st[0] + i1 * st[1];
              if (s.stride[2] == 1 && st[2] == 1) {
                std::memcpy(cols + lo, src + lo + shift, (hi - lo) * sizeof(T));
              } else {
                const int64_t step = s.stride[2] * st[2];
                const T* p = src + (lo * s.stride[2] + shift) * st[2];
                for (int64_t o2 = lo; o2 < hi; ++o2, p += step) cols[o2] = *p;
              }
              std::fill(cols + hi, cols + out2, T(0));
            }
          }
        }
      }
    }
  }
}

// A [rows, cols] matrix BLAS reads in place: its first element and layout.
struct Matrix {
  const void* data;
  BlasMatrix layout;
};

// c[m, n] (row-major, ldc = n) = a[m, k] @ b[k, n].
void Gemm(DType dtype, const Matrix& a, const Matrix& b, int64_t m, int64_t n,
          int64_t k, void* c) {
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n),
             bk = static_cast<blasint>(k);
  if (dtype == DType::kFloat32) {
    cblas_sgemm(CblasRowMajor, a.layout.trans, b.layout.trans, bm, bn, bk, 1.0f,
                static_cast<const float*>(a.data), a.layout.ld,
                static_cast<const float*>(b.data), b.layout.ld, 0.0f,
                static_cast<float*>(c), bn);
  } else {
    cblas_dgemm(CblasRowMajor, a.layout.trans, b.layout.trans, bm, bn, bk, 1.0,
                static_cast<const double*>(a.data), a.layout.ld,
                static_cast<const double*>(b.data), b.layout.ld, 0.0,
                static_cast<double*>(c), bn);
  }
}

constexpr size_t kAlign = 64;
// An image with at least this many multiply-adds has its work split across
// the pool when the batch has fewer images than the pool has threads.
constexpr int64_t kMinSplitImageMacs = int64_t{1} << 22;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// What every image of a run shares.
struct Operands {
  Tensor weight;  // [groups * out_channels, rows], kept alive
  BlasMatrix weight_layout;
  int64_t weight_row_stride;
  const char* input;  // element [0, 0, 0...] of the input
  Dims3 input_strides;
  int64_t batch_stride, channel_stride;
  // The input as each group's column matrix, when pointwise() and BLAS can
  // read it in place.
  std::optional<BlasMatrix> direct;
};

absl::StatusOr<Operands> Prepare(const ConvStep& s,
                                 absl::Span<const Tensor> slots) {
  Operands ops;
  const int64_t item = ItemSize(s.dtype);
  const FixedRef& w = s.weight;
  Tensor weight = slots[w.slot].AsStrided(w.sizes, w.strides, w.offset);
  std::optional<int64_t> flat = FlatStride(w.sizes, w.strides, 1);
  std::optional<BlasMatrix> layout;
  if (flat.has_value()) {
    layout = BlasLayout(w.sizes[0], s.rows(), w.strides[0], *flat);
  }
  if (!layout.has_value()) {
    ASSIGN_OR_RETURN(weight, Contiguous(weight));
    layout = BlasLayout(w.sizes[0], s.rows(), s.rows(), 1);
    if (!layout.has_value()) {
      return absl::InternalError("a contiguous weight has no BLAS layout");
    }
    ops.weight_row_stride = s.rows();
  } else {
    ops.weight_row_stride = w.strides[0];
  }
  ops.weight = std::move(weight);
  ops.weight_layout = *layout;

  const FixedRef& x = s.input;
  ops.input = static_cast<const char*>(slots[x.slot].data()) + x.offset * item;
  ops.batch_stride = x.strides[0];
  ops.channel_stride = x.strides[1];
  ops.input_strides = {0, 0, 0};
  for (int i = 0; i < s.spatial; ++i) {
    ops.input_strides[3 - s.spatial + i] = x.strides[2 + i];
  }
  if (s.pointwise()) {
    if (std::optional<int64_t> unit = FlatStride(x.sizes, x.strides, 2)) {
      ops.direct =
          BlasLayout(s.in_channels, s.cols(), ops.channel_stride, *unit);
    }
  }
  return ops;
}

// The products of one image `n`: per group, its column matrix and the GEMM
// of (a range of) its output channels into `out` ([groups * out_channels,
// cols]).
template <typename T>
class ImageProducts {
 public:
  ImageProducts(const ConvStep& s, const Operands& ops, int64_t n, T* out)
      : s_(s),
        ops_(ops),
        image_(reinterpret_cast<const T*>(ops.input) + n * ops.batch_stride),
        out_(out) {}

  // Group g's column matrix: the input itself where BLAS reads it in place,
  // else im2col into `cols` (only the rows of channels [c0, c1) when given).
  Matrix Columns(int64_t g, T* cols, int64_t c0 = 0, int64_t c1 = -1) const {
    const T* group = image_ + g * s_.in_channels * ops_.channel_stride;
    if (ops_.direct.has_value()) return {group, *ops_.direct};
    Im2Col<T>(s_, {group, ops_.channel_stride, ops_.input_strides}, cols, c0,
              c1);
    return {cols, {CblasNoTrans, static_cast<blasint>(s_.cols())}};
  }

  // Output channels [m0, m1) of group g from its columns `b`.
  void Product(int64_t g, const Matrix& b, int64_t m0, int64_t m1) const {
    const T* a =
        ops_.weight.data_as<T>() + g * s_.out_channels * ops_.weight_row_stride;
    a += ops_.weight_layout.trans == CblasNoTrans ? m0 * ops_.weight_layout.ld
                                                  : m0;
    Gemm(s_.dtype, {a, ops_.weight_layout}, b, m1 - m0, s_.cols(), s_.rows(),
         out_ + (g * s_.out_channels + m0) * s_.cols());
  }

 private:
  const ConvStep& s_;
  const Operands& ops_;
  const T* image_;
  T* out_;
};

// One image on the calling thread, through `cols` unless the input is its
// own column matrix.
template <typename T>
void ConvolveImage(const ConvStep& s, const Operands& ops, int64_t n, T* cols,
                   T* out) {
  const ImageProducts<T> image(s, ops, n, out);
  for (int64_t g = 0; g < s.groups; ++g) {
    image.Product(g, image.Columns(g, cols), 0, s.out_channels);
  }
}

// Groups per chunk of a split image with at least as many groups as
// threads: a few chunks per thread.
int64_t SplitGroupsGrain(const ConvStep& s, int threads) {
  return std::max<int64_t>(1, s.groups / (int64_t{threads} * 4));
}

// One image with its work split across `pool` (a batch too small to give
// every thread images of its own): im2col by channel ranges, then each
// group's GEMM by ranges of output channels, or, with at least as many
// groups as threads (a depthwise convolution), whole groups per chunk, each
// chunk with column scratch of its own (`cols` holds one per chunk). BLAS
// runs one thread inside each chunk.
template <typename T>
void ConvolveImageSplit(const ConvStep& s, const Operands& ops, int64_t n,
                        T* cols, T* out, ThreadPool& pool) {
  const ImageProducts<T> image(s, ops, n, out);
  const int threads = pool.num_threads();
  if (s.groups >= threads) {
    const int64_t grain = SplitGroupsGrain(s, threads);
    pool.ParallelFor(s.groups, grain, [&](int64_t g0, int64_t g1) {
      T* own = cols + (g0 / grain) * s.rows() * s.cols();
      for (int64_t g = g0; g < g1; ++g) {
        image.Product(g, image.Columns(g, own), 0, s.out_channels);
      }
    });
    return;
  }
  for (int64_t g = 0; g < s.groups; ++g) {
    if (!ops.direct.has_value()) {
      pool.ParallelFor(
          s.in_channels,
          std::max<int64_t>(1, CeilDiv(s.in_channels, threads * 2)),
          [&](int64_t c0, int64_t c1) { image.Columns(g, cols, c0, c1); });
    }
    // The column matrix written above (no channels: nothing written now).
    const Matrix b = image.Columns(g, cols, 0, 0);
    // Output-channel ranges of whole cache-friendly multiples of 16 rows.
    const int64_t m_chunk = std::max<int64_t>(
        1, CeilDiv(CeilDiv(s.out_channels, threads), 16) * 16);
    pool.ParallelFor(s.out_channels, m_chunk, [&](int64_t m0, int64_t m1) {
      image.Product(g, b, m0, m1);
    });
  }
}

}  // namespace

std::optional<int64_t> FlatStride(const Shape& sizes, const Shape& strides,
                                  size_t first) {
  std::optional<int64_t> unit;
  int64_t later = 1;
  for (size_t d = sizes.size(); d-- > first;) {
    if (sizes[d] != 1) {
      if (!unit.has_value()) unit = strides[d];
      if (strides[d] != *unit * later) return std::nullopt;
    }
    later *= sizes[d];
  }
  return unit.value_or(1);
}

absl::StatusOr<ConvStep> ConvStep::Bind(
    absl::Span<const int64_t> symbols) const {
  if (!symbolic.has_value()) return *this;
  ConvStep bound = *this;
  bound.symbolic.reset();
  bound.batch = symbolic->batch.Evaluate(symbols);
  if (bound.batch < 1 || bound.batch > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToString(), ": batch ", bound.batch, " out of range"));
  }
  bound.input = BindRef(symbolic->input, symbols);
  return bound;
}

int64_t ConvStep::rows() const { return in_channels * Volume(kernel); }

int64_t ConvStep::cols() const { return Volume(out); }

bool ConvStep::pointwise() const {
  return Volume(kernel) == 1 && stride == Dims3{1, 1, 1} &&
         padding == Dims3{0, 0, 0};
}

std::string ConvStep::ToString() const {
  const auto dims = [&](const Dims3& d) {
    return absl::StrJoin(d.begin() + (3 - spatial), d.end(), "x");
  };
  std::vector<std::string> input_sizes;
  if (symbolic.has_value()) {
    for (const IndexExpr& v : symbolic->input.sizes) {
      input_sizes.push_back(SizeText(v));
    }
  } else {
    for (int64_t v : input.sizes) input_sizes.push_back(absl::StrCat(v));
  }
  std::string on_device;
  if (device.has_value()) {
    on_device = device->cols_slot < 0
                    ? " on cuBLASLt reading the input in place"
                    : absl::StrCat(" on cuBLASLt over im2col columns in slot ",
                                   device->cols_slot);
    if (device->out_slot >= 0) {
      absl::StrAppend(&on_device, " into slot ", device->out_slot);
    }
  }
  if (onednn.has_value()) {
    const std::string layout = onednn->block == 0 ? "nhwc"
                               : onednn->block == 1
                                   ? "nchw"
                                   : absl::StrCat("nC", onednn->block, "c");
    absl::StrAppend(&on_device, " on oneDNN ", onednn->impl, " into ", layout);
    if (onednn->pointwise.has_value()) {
      absl::StrAppend(&on_device, " (the epilogue's output, then ",
                      onednn->pointwise->ToString(),
                      " in place by the library)");
    } else if (onednn->result_param >= 0) {
      absl::StrAppend(&on_device, " (the result's own memory)");
    } else if (onednn->in_place_param >= 0) {
      absl::StrAppend(&on_device, " (the epilogue's output, updated in place)");
    }
  }
  return absl::StrCat("conv ", target, " ", DTypeName(dtype), " [",
                      absl::StrJoin(input_sizes, "x"), "] * [",
                      absl::StrJoin(weight.sizes, "x"), "] stride ",
                      dims(stride), " padding ", dims(padding), " dilation ",
                      dims(dilation), " groups ", groups, on_device);
}

int64_t ConvImagesPerChunk(const ConvStep& step) {
  constexpr int64_t kMinParallelMacs = int64_t{1} << 20;
  const int64_t image_macs = std::max<int64_t>(
      1, step.groups * step.out_channels * step.rows() * step.cols());
  return std::max<int64_t>(1, kMinParallelMacs / image_macs);
}

absl::Status RunConvStep(const ConvStep& dynamic_or_static,
                         CompiledKernelFn epilogue,
                         absl::Span<void* const> params,
                         absl::Span<const Tensor> slots,
                         absl::Span<const int64_t> symbols, ThreadPool& pool) {
  std::optional<ConvStep> bound;
  if (dynamic_or_static.symbolic.has_value()) {
    ASSIGN_OR_RETURN(bound, dynamic_or_static.Bind(symbols));
  }
  const ConvStep& step = bound.has_value() ? *bound : dynamic_or_static;
  ASSIGN_OR_RETURN(const Operands ops, Prepare(step, slots));
  const int64_t item = ItemSize(step.dtype);
  const int64_t image_elems = step.groups * step.out_channels * step.cols();
  const size_t out_bytes = AlignUp(static_cast<size_t>(image_elems * item));
  const size_t cols_bytes =
      ops.direct.has_value()
          ? 0
          : static_cast<size_t>(step.rows() * step.cols() * item);

  const auto run_images = [&](int64_t first, int64_t last) {
    PanelScratch scratch;
    char* const out = static_cast<char*>(scratch.Get(out_bytes + cols_bytes));
    absl::InlinedVector<void*, 16> args(params.begin(), params.end());
    for (int64_t n = first; n < last; ++n) {
      if (step.dtype == DType::kFloat32) {
        ConvolveImage<float>(step, ops, n,
                             reinterpret_cast<float*>(out + out_bytes),
                             reinterpret_cast<float*>(out));
      } else {
        ConvolveImage<double>(step, ops, n,
                              reinterpret_cast<double*>(out + out_bytes),
                              reinterpret_cast<double*>(out));
      }
      // The epilogue indexes the result as the whole output: point it `n`
      // images before the scratch. Integer arithmetic, since that address
      // lies outside the scratch allocation.
      args[step.product_param] = reinterpret_cast<void*>(
          reinterpret_cast<uintptr_t>(out) -
          static_cast<uintptr_t>(n * image_elems * item));
      epilogue(args.data(), symbols.data(), n, n + 1);
    }
  };
  const int64_t chunk = ConvImagesPerChunk(step);
  const int threads = pool.num_threads();
  if (threads > 1 && step.batch < threads &&
      step.groups * step.out_channels * step.rows() * step.cols() >=
          kMinSplitImageMacs) {
    // Too few images for every thread: each image's work is split instead.
    SingleThreadedBlas one_thread;
    PanelScratch scratch;
    const int64_t col_buffers =
        step.groups >= threads
            ? CeilDiv(step.groups, SplitGroupsGrain(step, threads))
            : 1;
    char* const out = static_cast<char*>(
        scratch.Get(out_bytes + cols_bytes * static_cast<size_t>(col_buffers)));
    absl::InlinedVector<void*, 16> args(params.begin(), params.end());
    for (int64_t n = 0; n < step.batch; ++n) {
      if (step.dtype == DType::kFloat32) {
        ConvolveImageSplit<float>(step, ops, n,
                                  reinterpret_cast<float*>(out + out_bytes),
                                  reinterpret_cast<float*>(out), pool);
      } else {
        ConvolveImageSplit<double>(step, ops, n,
                                   reinterpret_cast<double*>(out + out_bytes),
                                   reinterpret_cast<double*>(out), pool);
      }
      args[step.product_param] = reinterpret_cast<void*>(
          reinterpret_cast<uintptr_t>(out) -
          static_cast<uintptr_t>(n * image_elems * item));
      epilogue(args.data(), symbols.data(), n, n + 1);
    }
    return absl::OkStatus();
  }
  if (threads > 1 && step.batch > chunk) {
    SingleThreadedBlas one_thread;
    pool.ParallelFor(step.batch, chunk, run_images);
  } else if (pool.num_threads() == 1) {
    SingleThreadedBlas one_thread;
    run_images(0, step.batch);
  } else {
    run_images(0, step.batch);
  }
  return absl::OkStatus();
}

}  // namespace guardjit
