#include "jit/steps/attention_step.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/steps/onednn_conv.h"
#include "jit/steps/onednn_primitives.h"
#include "runtime/blas_panels.h"
#include "runtime/kernel_registry.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/step_runner.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

constexpr char kTarget[] = "aten.scaled_dot_product_attention.default";
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// 8 lanes of GCC's (and clang's) vector extensions.
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));

// e^(x[j] - shift) for j < n in place, and their sum. x[j] - shift <= 0 (or
// NaN); below -87 (and for -inf) the result is 0. e^r on
// [-ln2/2, ln2/2] by the degree-5 polynomial of XNNPACK's expf (about 1 ulp),
// scaled by 2^n through the exponent bits. Written for the vectorizer (GCC
// vector extensions, 8 lanes); RowKernels below compiles it for AVX2 too.
inline __attribute__((always_inline)) float ExpShiftedSumBody(float* x,
                                                              int64_t n,
                                                              float shift) {
  const F8 log2e = F8{} + 1.44269504088896341f;
  const F8 ln2_hi = F8{} + 0.693359375f, ln2_lo = F8{} + -2.12194440e-4f;
  const F8 lo = F8{} - 87.0f, zero = F8{};
  F8 sum8 = F8{};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 v;
    std::memcpy(&v, x + j, sizeof v);
    v = v - shift;
    const I8 tiny = v < lo;
    const F8 c = tiny ? lo : v;  // NaN stays NaN (the compare is false)
    // n = round(c * log2e), by the 1.5 * 2^23 shifter.
    const F8 shifter = F8{} + 12582912.0f;
    const F8 t = c * log2e + shifter;
    const F8 nf = t - shifter;
    const F8 r = (c - nf * ln2_hi) - nf * ln2_lo;
    F8 p = F8{} + 0x1.0F9F9Cp-7f;
    p = p * r + 0x1.573A1Ap-5f;
    p = p * r + 0x1.555A80p-3f;
    p = p * r + 0x1.FFFDC6p-2f;
    p = p * r + 0x1.FFFFF6p-1f;
    p = p * r + 1.0f;
    I8 bits;
    std::memcpy(&bits, &t, sizeof bits);
    const I8 scale_bits = (bits - 0x4b400000 + 127) << 23;
    F8 scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    F8 e = p * scale;
    e = tiny ? zero : e;
    std::memcpy(x + j, &e, sizeof e);
    sum8 += e;
  }
  float sum = 0;
  for (int i = 0; i < 8; ++i) sum += sum8[i];
  for (; j < n; ++j) {
    const float d = x[j] - shift;
    x[j] = d < -87.0f ? 0.0f : std::exp(d);
    sum += x[j];
  }
  return sum;
}

// x[j] += bias[j] for j < n.
inline __attribute__((always_inline)) void AddRowBody(float* x,
                                                      const float* bias,
                                                      int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 a, b;
    std::memcpy(&a, x + j, sizeof a);
    std::memcpy(&b, bias + j, sizeof b);
    a += b;
    std::memcpy(x + j, &a, sizeof a);
  }
  for (; j < n; ++j) x[j] += bias[j];
}

// Softmax of x[0, n) in place, made safe: zeros when every x is -inf. A NaN
// anywhere (or +inf, whose e^(inf - inf) is NaN) makes the row NaN.
inline __attribute__((always_inline)) void SafeSoftmaxRowBody(float* x,
                                                              int64_t n) {
  F8 max8 = F8{} + kNegInf;
  I8 nan8 = I8{};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 v;
    std::memcpy(&v, x + j, sizeof v);
    nan8 |= v != v;
    max8 = v > max8 ? v : max8;
  }
  float max = kNegInf;
  bool nan = false;
  for (int i = 0; i < 8; ++i) {
    max = std::max(max, max8[i]);
    nan = nan || nan8[i] != 0;
  }
  for (; j < n; ++j) {
    nan = nan || std::isnan(x[j]);
    max = std::max(max, x[j]);
  }
  if (nan) {
    std::fill(x, x + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  if (max == kNegInf) {
    std::fill(x, x + n, 0.0f);
    return;
  }
  const float inv = 1.0f / ExpShiftedSumBody(x, n, max);
  j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 v;
    std::memcpy(&v, x + j, sizeof v);
    v *= inv;
    std::memcpy(x + j, &v, sizeof v);
  }
  for (; j < n; ++j) x[j] *= inv;
}

// The row functions for this CPU: an AVX2 build of the bodies above where
// the CPU has AVX2, else the baseline one. Chosen once at run time, not by
// ifunc (target_clones): an ifunc resolver runs while the dynamic loader
// relocates the library, before a sanitizer's runtime is up.
struct RowKernels {
  void (*add)(float*, const float*, int64_t);
  void (*softmax)(float*, int64_t);
};

void AddRowBaseline(float* x, const float* bias, int64_t n) {
  AddRowBody(x, bias, n);
}
void SafeSoftmaxRowBaseline(float* x, int64_t n) { SafeSoftmaxRowBody(x, n); }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void AddRowAvx2(float* x, const float* bias,
                                                int64_t n) {
  AddRowBody(x, bias, n);
}
__attribute__((target("avx2"))) void SafeSoftmaxRowAvx2(float* x, int64_t n) {
  SafeSoftmaxRowBody(x, n);
}
#endif

const RowKernels& Rows() {
  static const RowKernels rows = [] {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
      return RowKernels{AddRowAvx2, SafeSoftmaxRowAvx2};
    }
#endif
    return RowKernels{AddRowBaseline, SafeSoftmaxRowBaseline};
  }();
  return rows;
}

// Where a strided operand's matrices lie: the batch dims' sizes and strides
// (elements), then the last two dims'.
struct Operand {
  std::vector<int64_t> batch_sizes, batch_strides;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;

  Operand(const Tensor& t, int batch_dims) {
    for (int d = 0; d < batch_dims; ++d) {
      batch_sizes.push_back(t.size(d));
      batch_strides.push_back(t.stride(d));
    }
    rows = t.size(batch_dims);
    cols = t.size(batch_dims + 1);
    row_stride = t.stride(batch_dims);
    col_stride = t.stride(batch_dims + 1);
  }
  // Element offset of batch entry `b` (row-major over the batch dims).
  int64_t BatchOffset(int64_t b) const {
    int64_t offset = 0;
    for (int d = static_cast<int>(batch_sizes.size()) - 1; d >= 0; --d) {
      offset += (b % batch_sizes[d]) * batch_strides[d];
      b /= batch_sizes[d];
    }
    return offset;
  }
};

absl::StatusOr<Tensor> BlasReadable(const Tensor& t) {
  const int r = t.dim();
  if (BlasLayout(t.size(r - 2), t.size(r - 1), t.stride(r - 2), t.stride(r - 1))
          .has_value()) {
    return t;
  }
  return Contiguous(t);
}

// `rows` rows of `cols` floats at `from` (strides in elements) copied dense
// to `to`.
void CopyRows(const float* from, int64_t rows, int64_t cols, int64_t row_stride,
              int64_t col_stride, float* to) {
  for (int64_t i = 0; i < rows; ++i, to += cols) {
    const float* row = from + i * row_stride;
    if (col_stride == 1) {
      std::memcpy(to, row, sizeof(float) * cols);
    } else {
      for (int64_t j = 0; j < cols; ++j) to[j] = row[j * col_stride];
    }
  }
}

// A block's two products on oneDNN's brgemm matmul: scores = scale * q @ k^T
// into the block's scratch, and out = p @ v into the result, on dense copies
// of q's block, k and v where they are strided (views of one projection).
// At the sizes attention has here (64 query rows, 64 keys, 32 dims per head)
// one cblas_sgemm call took 19 us at one thread and oneDNN's brgemm 2.7 us
// (measured on AVX-512 as [8, 64, 32] @ [8, 32, 64], 2026-11-30). Only
// brgemm: on strided operands oneDNN picks gemm:jit, whose first use in a
// process generates its kernels (26 ms); where there is no brgemm (oneDNN
// 2.6 has it on AVX-512 only) BLAS runs the products.
struct BlockMatmuls {
  bool usable = false;  // false: oneDNN has no brgemm for it, BLAS runs it
  dnnl::matmul scores, output;
  dnnl::memory::desc q, kt, p, v, o, scores_pad, output_pad;
  size_t pad_bytes = 0;
};

// The products of a block of `rows` query rows over `s` keys, head size `e`,
// value size `ev`, the scores scaled by `scale`, on dense operands.
BlockMatmuls MakeBlockMatmuls(int64_t rows, int64_t e, int64_t s, int64_t ev,
                              float scale) {
  BlockMatmuls m;
  if (!OneDnnEnabled() || rows <= 0 || e <= 0 || s <= 0 || ev <= 0) return m;
  using dnnl::memory;
  constexpr auto f32 = memory::data_type::f32;
  try {
    m.q = memory::desc({rows, e}, f32, {e, 1});
    m.kt = memory::desc({e, s}, f32, {1, e});  // k's dense rows, as columns
    m.p = memory::desc({rows, s}, f32, {s, 1});
    m.v = memory::desc({s, ev}, f32, {ev, 1});
    m.o = memory::desc({rows, ev}, f32, {ev, 1});
    dnnl::primitive_attr scaled, plain;
    for (dnnl::primitive_attr* a : {&scaled, &plain}) {
      a->set_scratchpad_mode(dnnl::scratchpad_mode::user);
    }
    if (scale != 1) scaled.set_output_scales(0, {scale});
    const dnnl::matmul::primitive_desc scores_pd(
        dnnl::matmul::desc(m.q, m.kt, m.p), scaled, OneDnnEngine());
    const dnnl::matmul::primitive_desc output_pd(
        dnnl::matmul::desc(m.p, m.v, m.o), plain, OneDnnEngine());
    if (absl::StartsWith(scores_pd.impl_info_str(), "brg") &&
        absl::StartsWith(output_pd.impl_info_str(), "brg")) {
      m.scores = dnnl::matmul(scores_pd);
      m.output = dnnl::matmul(output_pd);
      m.scores_pad = scores_pd.scratchpad_desc();
      m.output_pad = output_pd.scratchpad_desc();
      m.pad_bytes = std::max(m.scores_pad.get_size(), m.output_pad.get_size());
      m.usable = true;
    }
  } catch (const dnnl::error&) {
    m.usable = false;
  }
  return m;
}

// Query rows per block: whole rows of scores, at most kScoreBlockFloats.
int64_t BlockRows(int64_t l, int64_t s) {
  return std::clamp<int64_t>(kScoreBlockFloats / std::max<int64_t>(s, 1), 1,
                             std::max<int64_t>(l, 1));
}

class AttentionStep : public StepRunner {
 public:
  AttentionStep(const Program& program, int node,
                std::vector<std::pair<int64_t, TensorRef>> args, int produces,
                std::shared_ptr<ThreadPool> pool)
      : node_(node),
        args_(std::move(args)),
        produces_(produces),
        pool_(std::move(pool)) {
    static_args_.resize(args_.size());
    for (size_t a = 0; a < args_.size(); ++a) {
      EvaluateRef(args_[a].second, {}, static_args_[a]);
    }
    out_shape_ = program.metas[node][0].shape();
    // The block products, made here so that building the program (not the
    // first call) pays for them: the program is static, so are its sizes.
    const Node& n = program.graph->node(node);
    const auto shape_of = [&](const Arg& a) {
      const ValueRef v = a.as_value();
      return program.metas[v.node][v.index].shape();
    };
    const Shape q = shape_of(n.args[0]), k = shape_of(n.args[1]),
                v = shape_of(n.args[2]);
    const int r = static_cast<int>(q.size());
    l_ = q[r - 2];
    e_ = q[r - 1];
    s_ = k[r - 2];
    ev_ = v[r - 1];
    scale_ = static_cast<float>(n.args[6].is_number()
                                    ? n.args[6].as_scalar().to_double()
                                    : 1.0 / std::sqrt(static_cast<double>(e_)));
    const int64_t block = BlockRows(l_, s_);
    full_ = MakeBlockMatmuls(block, e_, s_, ev_, scale_);
    if (l_ % block != 0) {
      tail_ = MakeBlockMatmuls(l_ % block, e_, s_, ev_, scale_);
    }
  }

  absl::Status Run(StepCall& call) const override {
    const Node& node = call.program.graph->node(node_);
    KernelArgs args(
        node,
        [&](ValueRef v) {
          const int64_t key = (int64_t{v.node} << 16) + v.index;
          for (size_t a = 0; a < args_.size(); ++a) {
            if (args_[a].first == key) {
              return ViewOf(call.slots, static_args_[a]);
            }
          }
          return Tensor();
        },
        [](const Scalar& s) { return Tensor::WrappedNumber(s); });
    // A destination is contiguous (OutputPlacement).
    Tensor out;
    if (const Tensor* dest = call.destination(produces_)) {
      out = *dest;
    } else {
      ASSIGN_OR_RETURN(out, Tensor::Empty(DType::kFloat32, out_shape_));
    }
    absl::Status status = Attend(args, out);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("node '", node.name, "' (", node.target,
                                       "): ", status.message()));
    }
    call.slots[produces_] = std::move(out);
    return absl::OkStatus();
  }

 private:
  absl::Status Attend(const KernelArgs& args, Tensor& out) const {
    // Operands BLAS cannot read in place (no unit stride in their last two
    // dims) are copied contiguous first.
    ASSIGN_OR_RETURN(const Tensor query, BlasReadable(args.tensor(0)));
    ASSIGN_OR_RETURN(const Tensor key, BlasReadable(args.tensor(1)));
    ASSIGN_OR_RETURN(const Tensor value, BlasReadable(args.tensor(2)));
    const int batch_dims = query.dim() - 2;
    const Operand q(query, batch_dims), k(key, batch_dims),
        v(value, batch_dims);
    const float* qd = query.data_as<float>();
    const float* kd = key.data_as<float>();
    const float* vd = value.data_as<float>();
    const int64_t l = q.rows, e = q.cols, s = k.rows, ev = v.cols;
    int64_t batch = 1;
    for (int64_t size : q.batch_sizes) batch *= size;
    float* o = out.data_as<float>();
    if (batch == 0 || l == 0 || ev == 0) return absl::OkStatus();
    const bool causal = args.bool_arg(5);
    const float scale = static_cast<float>(args.optional_float(6).value_or(
        1.0 / std::sqrt(static_cast<double>(e))));
    // The mask as a view broadcast to [N..., L, S]: float32 added, or bool
    // (one byte per element) keeping the keys it marks true.
    const std::optional<Tensor> mask = args.optional_tensor(3);
    std::optional<Operand> m;
    const float* mask_floats = nullptr;
    const uint8_t* mask_bytes = nullptr;
    if (mask.has_value()) {
      Shape sizes(query.sizes().begin(), query.sizes().end() - 1);
      sizes.push_back(s);
      Shape strides(sizes.size(), 0);
      const int shift = static_cast<int>(sizes.size()) - mask->dim();
      for (int d = 0; d < mask->dim(); ++d) {
        if (mask->size(d) != 1) strides[shift + d] = mask->stride(d);
      }
      m.emplace(mask->AsStrided(sizes, strides), batch_dims);
      if (mask->dtype() == DType::kBool) {
        mask_bytes = static_cast<const uint8_t*>(mask->data());
      } else {
        mask_floats = mask->data_as<float>();
      }
    }
    // No keys: every row is fully masked.
    if (s == 0) {
      std::fill(o, o + batch * l * ev, 0.0f);
      return absl::OkStatus();
    }
    const std::optional<BlasMatrix> qa =
        BlasLayout(l, e, q.row_stride, q.col_stride);
    // k^T as [E, S]: rows of k are its columns.
    const std::optional<BlasMatrix> kb =
        BlasLayout(e, s, k.col_stride, k.row_stride);
    const std::optional<BlasMatrix> vb =
        BlasLayout(s, ev, v.row_stride, v.col_stride);
    if (!qa || !kb || !vb) {
      return absl::InternalError("operand layout BLAS cannot read");
    }
    const int64_t block = BlockRows(l, s);
    const int64_t blocks = (l + block - 1) / block;
    const SingleThreadedBlas one_thread;
    const RowKernels& rows_fn = Rows();
    // oneDNN's products of a full block and of the last one, made for these
    // sizes and scale (BLAS for anything else).
    static const BlockMatmuls kNone;
    const bool made =
        l == l_ && e == e_ && s == s_ && ev == ev_ && scale == scale_;
    const BlockMatmuls* full = made ? &full_ : &kNone;
    const BlockMatmuls* tail = !made ? &kNone : l % block == 0 ? full : &tail_;
    const bool any_dnn = full->usable || tail->usable;
    const auto aligned = [](int64_t floats) {
      return (sizeof(float) * static_cast<size_t>(floats) + 63) / 64 * 64;
    };
    const size_t scores_bytes = aligned(block * s);
    const size_t pad_bytes = std::max(full->pad_bytes, tail->pad_bytes);
    // oneDNN's dense copies of q's block, k and v, where they are strided.
    const bool q_dense = q.col_stride == 1 && (l == 1 || q.row_stride == e);
    const bool k_dense = k.col_stride == 1 && (s == 1 || k.row_stride == e);
    const bool v_dense = v.col_stride == 1 && (s == 1 || v.row_stride == ev);
    const size_t q_bytes = any_dnn && !q_dense ? aligned(block * e) : 0;
    const size_t k_bytes = any_dnn && !k_dense ? aligned(s * e) : 0;
    const size_t v_bytes = any_dnn && !v_dense ? aligned(s * ev) : 0;
    pool_->ParallelFor(batch * blocks, 1, [&](int64_t begin, int64_t end) {
      PanelScratch scratch;
      char* const base = static_cast<char*>(
          scratch.Get(scores_bytes + pad_bytes + q_bytes + k_bytes + v_bytes));
      float* scores = reinterpret_cast<float*>(base);
      float* const q_copy =
          reinterpret_cast<float*>(base + scores_bytes + pad_bytes);
      float* const k_copy =
          reinterpret_cast<float*>(base + scores_bytes + pad_bytes + q_bytes);
      float* const v_copy = reinterpret_cast<float*>(
          base + scores_bytes + pad_bytes + q_bytes + k_bytes);
      const ScopedOpenMpThreads one_openmp_thread(1);
      int64_t copied_batch = -1;  // whose k and v the copies hold
      for (int64_t item = begin; item < end; ++item) {
        const int64_t b = item / blocks;
        const int64_t r0 = item % blocks * block;
        const int64_t rows = std::min(block, l - r0);
        const float* qb = qd + q.BatchOffset(b) + r0 * q.row_stride;
        const BlockMatmuls& mm = rows == block ? *full : *tail;
        const float* kb_data = kd + k.BatchOffset(b);
        const float* vb_data = vd + v.BatchOffset(b);
        if (mm.usable) {
          if (!q_dense) {
            CopyRows(qb, rows, e, q.row_stride, q.col_stride, q_copy);
            qb = q_copy;
          }
          if (copied_batch != b) {
            if (!k_dense) {
              CopyRows(kb_data, s, e, k.row_stride, k.col_stride, k_copy);
            }
            if (!v_dense) {
              CopyRows(vb_data, s, ev, v.row_stride, v.col_stride, v_copy);
            }
            copied_batch = b;
          }
          if (!k_dense) kb_data = k_copy;
          if (!v_dense) vb_data = v_copy;
          Execute(mm.scores, mm.q, qb, mm.kt, kb_data, mm.p, scores,
                  mm.scores_pad, base + scores_bytes);
        } else {
          cblas_sgemm(CblasRowMajor, qa->trans, kb->trans, rows, s, e, scale,
                      qb, qa->ld, kd + k.BatchOffset(b), kb->ld, 0.0f, scores,
                      s);
        }
        const int64_t mask_base = m ? m->BatchOffset(b) : 0;
        const int64_t mask_rs = m ? m->row_stride : 0;
        const int64_t mask_cs = m ? m->col_stride : 0;
        for (int64_t i = 0; i < rows; ++i) {
          float* x = scores + i * s;
          const int64_t qi = r0 + i;
          if (mask_floats != nullptr) {
            const float* bias = mask_floats + mask_base + qi * mask_rs;
            if (mask_cs == 1) {
              rows_fn.add(x, bias, s);
            } else {
              for (int64_t j = 0; j < s; ++j) x[j] += bias[j * mask_cs];
            }
          } else if (mask_bytes != nullptr) {
            const uint8_t* keep = mask_bytes + mask_base + qi * mask_rs;
            for (int64_t j = 0; j < s; ++j) {
              if (keep[j * mask_cs] == 0) x[j] = kNegInf;
            }
          }
          if (causal) {
            for (int64_t j = qi + 1; j < s; ++j) x[j] = kNegInf;
          }
          rows_fn.softmax(x, s);
        }
        float* const ob = o + (b * l + r0) * ev;
        if (mm.usable) {
          Execute(mm.output, mm.p, scores, mm.v, vb_data, mm.o, ob,
                  mm.output_pad, base + scores_bytes);
        } else {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, vb->trans, rows, ev, s, 1.0f,
                      scores, s, vd + v.BatchOffset(b), vb->ld, 0.0f, ob, ev);
        }
      }
    });
    return absl::OkStatus();
  }

  // dst = src @ weights on `matmul`, its scratchpad at `pad`.
  static void Execute(const dnnl::matmul& matmul, const dnnl::memory::desc& sd,
                      const float* src, const dnnl::memory::desc& wd,
                      const float* weights, const dnnl::memory::desc& dd,
                      float* dst, const dnnl::memory::desc& pd, char* pad) {
    const dnnl::engine& engine = OneDnnEngine();
    dnnl::stream& stream = OneDnnStream();
    matmul.execute(
        stream,
        {{DNNL_ARG_SRC, dnnl::memory(sd, engine, const_cast<float*>(src))},
         {DNNL_ARG_WEIGHTS,
          dnnl::memory(wd, engine, const_cast<float*>(weights))},
         {DNNL_ARG_DST, dnnl::memory(dd, engine, dst)},
         {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd, engine, pad)}});
    stream.wait();
  }

  const int node_;
  const std::vector<std::pair<int64_t, TensorRef>> args_;
  std::vector<ConcreteRef> static_args_;
  const int produces_;
  const std::shared_ptr<ThreadPool> pool_;
  Shape out_shape_;
  // The program's sizes and scale, and the block products made for them.
  int64_t l_ = 0, e_ = 0, s_ = 0, ev_ = 0;
  float scale_ = 1;
  BlockMatmuls full_, tail_;
};

bool IsFloat32(const GraphMeta& metas, const Arg& arg) {
  if (!arg.is_value()) return false;
  const ValueRef v = arg.as_value();
  return metas[v.node][v.index].dtype == DType::kFloat32;
}

}  // namespace

bool TakesAttentionStep(const Graph& graph, const GraphMeta& metas, int node,
                        int num_symbols) {
  const Node& n = graph.node(node);
  if (n.target != kTarget || num_symbols > 0 || n.args.size() < 7) {
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (!IsFloat32(metas, n.args[i])) return false;
  }
  const Arg& mask = n.args[3];
  if (!mask.is_none()) {
    if (!mask.is_value()) return false;
    const ValueRef v = mask.as_value();
    const DType d = metas[v.node][v.index].dtype;
    if (d != DType::kBool && d != DType::kFloat32) return false;
  }
  return true;
}

absl::StatusOr<ProgramStep> MakeAttentionStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool) {
  int produces = -1;
  for (size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == node &&
        slot.output == 0) {
      produces = static_cast<int>(s);
    }
  }
  const Node& n = program.graph->node(node);
  if (produces < 0) {
    return absl::InternalError(
        absl::StrCat("node '", n.name, "': no slot for its result"));
  }
  ProgramStep step;
  step.kind = StepKind::kAttention;
  step.node = node;
  step.can_fail = true;
  step.writes_destinations = true;
  step.label = absl::StrCat("attention '", n.name, "'");
  step.runner = std::make_unique<AttentionStep>(program, node, std::move(args),
                                                produces, std::move(pool));
  return step;
}

}  // namespace guardjit
