#include "jit/steps/onednn_primitives.h"

#include <dlfcn.h>

#include <algorithm>
#include <string>

namespace guardjit {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;
constexpr auto kF32 = memory::data_type::f32;

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

// The last `spatial` of 3-D extents, less `minus`.
Dims Spatial(const ConvStep::Dims3& d, int spatial, int64_t minus = 0) {
  Dims out;
  for (int i = 3 - spatial; i < 3; ++i) out.push_back(d[i] - minus);
  return out;
}

Dims Concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Dims WeightDims(const ConvStep& s) {
  const Dims k = Spatial(s.kernel, s.spatial);
  return s.groups > 1 ? Concat({s.groups, s.out_channels, s.in_channels}, k)
                      : Concat({s.out_channels, s.in_channels}, k);
}

}  // namespace

ConvGeometry ConvGeometry::Of(const ConvStep& s, int64_t batch) {
  return ConvGeometry{batch, s.in, s.out, s.padding, s.padding};
}

ConvGeometry ConvGeometry::Rows(const ConvStep& s, int64_t r0, int64_t r1,
                                int64_t* first_input_row) const {
  const int d = 3 - s.spatial;
  const int64_t span = (s.kernel[d] - 1) * s.dilation[d] + 1;
  // Input rows [lo, hi) with the padding counted in.
  const int64_t lo = r0 * s.stride[d] - pad_begin[d];
  const int64_t hi = (r1 - 1) * s.stride[d] - pad_begin[d] + span;
  const int64_t first = std::max<int64_t>(lo, 0);
  const int64_t last = std::min<int64_t>(hi, in[d]);
  ConvGeometry part = *this;
  part.in[d] = last - first;
  part.out[d] = r1 - r0;
  part.pad_begin[d] = first - lo;
  part.pad_end[d] = hi - last;
  *first_input_row = first;
  return part;
}

const dnnl::engine& OneDnnEngine() {
  static const dnnl::engine* engine =
      new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& OneDnnStream() {
  thread_local dnnl::stream stream(OneDnnEngine());
  return stream;
}

Tag OneDnnTag(int spatial, int block) {
  switch (spatial) {
    case 1:
      return block == 16  ? Tag::nCw16c
             : block == 8 ? Tag::nCw8c
             : block == 0 ? Tag::nwc
                          : Tag::ncw;
    case 2:
      return block == 16  ? Tag::nChw16c
             : block == 8 ? Tag::nChw8c
             : block == 0 ? Tag::nhwc
                          : Tag::nchw;
    default:
      return block == 16  ? Tag::nCdhw16c
             : block == 8 ? Tag::nCdhw8c
             : block == 0 ? Tag::ndhwc
                          : Tag::ncdhw;
  }
}

Dims OneDnnSrcDims(const ConvStep& s, const ConvGeometry& g) {
  return Concat({g.batch, s.groups * s.in_channels}, Spatial(g.in, s.spatial));
}

Dims OneDnnDstDims(const ConvStep& s, const ConvGeometry& g) {
  return Concat({g.batch, s.groups * s.out_channels},
                Spatial(g.out, s.spatial));
}

memory::desc OneDnnUserWeightDesc(const ConvStep& s) {
  const FixedRef& w = s.weight;
  Dims strides;
  if (s.groups > 1) strides.push_back(s.out_channels * w.strides[0]);
  for (int64_t stride : w.strides) strides.push_back(stride);
  return memory::desc(WeightDims(s), kF32, strides);
}

memory::desc OneDnnUserSrcDesc(const ConvStep& s) {
  return memory::desc(OneDnnSrcDims(s, ConvGeometry::Of(s, s.batch)), kF32,
                      Dims(s.input.strides.begin(), s.input.strides.end()));
}

dnnl::convolution_forward::primitive_desc OneDnnConvPd(
    const ConvStep& s, const ConvGeometry& g, bool bias,
    const memory::desc& dst) {
  const Tag channels_last = OneDnnTag(s.spatial, 0);
  const memory::desc src(
      OneDnnSrcDims(s, g), kF32,
      dst == memory::desc(OneDnnDstDims(s, g), kF32, channels_last)
          ? channels_last
          : Tag::any);
  const memory::desc weights(WeightDims(s), kF32, Tag::any);
  const Dims strides = Spatial(s.stride, s.spatial);
  // oneDNN counts dilation from 0.
  const Dims dilates = Spatial(s.dilation, s.spatial, 1);
  const Dims pad_begin = Spatial(g.pad_begin, s.spatial);
  const Dims pad_end = Spatial(g.pad_end, s.spatial);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  if (bias) {
    const memory::desc b({s.groups * s.out_channels}, kF32, Tag::x);
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(prop, algo, src, weights, b, dst,
                                        strides, dilates, pad_begin, pad_end),
        attr, OneDnnEngine());
  }
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(prop, algo, src, weights, dst, strides,
                                      dilates, pad_begin, pad_end),
      attr, OneDnnEngine());
}

bool IsReferenceImpl(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).find("ref") != std::string::npos;
}

namespace {

// libgomp's, which libdnnl runs its parallel regions on (loaded with it):
// the calling thread's thread count for its next regions, a per-thread
// setting. Looked up rather than declared (clang has no <omp.h> for
// libgomp), in libdnnl's own libgomp.so.1: a Python host also has torch's
// copy loaded under another name, whose setting oneDNN never reads.
struct OpenMp {
  using Set = void (*)(int);
  using Get = int (*)();
  void* library = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  void* scope = library != nullptr ? library : RTLD_DEFAULT;
  Set set = reinterpret_cast<Set>(dlsym(scope, "omp_set_num_threads"));
  Get get = reinterpret_cast<Get>(dlsym(scope, "omp_get_max_threads"));
};

const OpenMp& Omp() {
  static const OpenMp omp;
  return omp;
}

}  // namespace

ScopedOpenMpThreads::ScopedOpenMpThreads(int threads) {
  const OpenMp& omp = Omp();
  if (omp.set == nullptr || omp.get == nullptr) return;
  const int want = kThreadSanitizer ? 1 : threads;
  const int have = omp.get();
  if (have == want) return;
  saved_ = have;
  omp.set(want);
}

ScopedOpenMpThreads::~ScopedOpenMpThreads() {
  if (saved_ > 0) Omp().set(saved_);
}

}  // namespace guardjit
