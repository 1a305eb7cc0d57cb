// The runner of oneDNN convolution steps (onednn_conv.h).
//
// Threads: oneDNN runs on OpenMP, the rest of a program on the context's
// ThreadPool. Two sets of threads spinning for work in turn on the same
// cores starve each other (mobilenet_v2 at two threads ran slower than at
// one), so a step's primitives run with one OpenMP thread each and the pool
// runs them in parallel: a channels-last convolution is cut into parts, by
// ranges of images when the batch has at least as many images as the pool
// has threads, else by ranges of rows of each image (outer spatial dim 0,
// each part with its own padding at its ends). Each part is a primitive of
// its own (oneDNN's primitive cache shares equal ones) writing its share of
// the result, which is contiguous in channels-last memory. A blocked result
// (nChw8c: onednn_conv.h's PrefersBlockedResult) is cut by ranges of images
// too, and at smaller batches by ranges of output channel blocks of each
// image (with a constant weight: each part packs its channels' rows once and
// reads the whole input); what cannot be cut so runs whole, on an OpenMP
// team of the pool's size. The input's reorder into the parts' layout (a
// channels-last activation into nChw8c) is cut by ranges of outer rows too,
// run on the pool before the parts: on the calling thread alone it held the
// other thread idle for 8% of each of resnet18's 56x56 layers at two threads.
//
// Epilogues: oneDNN writes the result where the epilogue kernel stores it
// when the epilogue is only that store (ConvStep::OneDnn::result_param) or
// when it stores at the very element it reads (relu6, a residual add, ...:
// in_place_param): the epilogue then updates the output in place, instead
// of reading a scratch copy of the result and writing the output (a whole
// pass over memory less: mobilenet_v2's expansions write 4.8 MB each). At
// batch 1, with parts of rows of an image on the pool's threads, each
// thread runs the epilogue over its part's rows right after the part, while
// they are in its cache, with no second loop over the pool.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/host_memory.h"
#include "core/status_macros.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/onednn_conv.h"
#include "jit/steps/onednn_primitives.h"
#include "runtime/blas_panels.h"

namespace guardjit {
namespace {

using dnnl::memory;
constexpr auto kF32 = memory::data_type::f32;
constexpr int64_t kItem = sizeof(float);
constexpr size_t kAlign = 64;
// A convolution with fewer multiply-adds than this per thread runs whole on
// the calling thread.
constexpr int64_t kMinPartMacs = int64_t{1} << 18;
// An input reorder of fewer bytes than this runs on the calling thread.
constexpr size_t kMinSharedReorderBytes = size_t{64} << 10;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A tensor of the graph's constants, viewed as `ref` views its slot.
Tensor ConstantView(const Graph& graph, int node, const FixedRef& ref) {
  return graph.node(node).constant.AsStrided(ref.sizes, ref.strides,
                                             ref.offset);
}

int64_t Volume(const ConvStep::Dims3& d) { return d[0] * d[1] * d[2]; }

// One primitive of a call: the whole convolution, or a part of it.
struct Part {
  dnnl::convolution_forward conv;
  memory::desc src, weights, dst, scratchpad;
  // Elements from the first of the input's and the result's (first image's,
  // when parts are rows of each image).
  int64_t src_offset = 0, dst_offset = 0;
  // Parts of rows: the result rows [row_begin, row_end) it computes.
  int64_t row_begin = 0, row_end = 0;
  // The constant weight in `weights`' layout (a part of output channels':
  // its channels' rows of it).
  std::shared_ptr<const memory> packed_weights;
  // A part of output channels': its channels' bias.
  std::optional<memory> bias;
};

// What one batch size (and input layout) of a step runs, and where each
// buffer goes in the call's scratch.
struct Primitives {
  std::vector<Part> parts;
  // Parts are rows of each image: every image runs all of them.
  bool per_image = false;
  int64_t src_image = 0, dst_image = 0;  // elements per image
  // Parts are rows of the one image, each followed by the epilogue over
  // its rows on the same thread (the file's comment).
  bool epilogue_per_part = false;
  int openmp_threads = 1;      // a whole convolution's
  memory::desc user_src, src;  // src: the parts' input layout
  std::optional<dnnl::reorder> src_reorder;
  // The same reorder cut into ranges of outer rows (or images), one per
  // thread of the pool, when the input is large enough to share: each reads
  // its rows of `user_src` and writes them in `src`.
  struct RowReorder {
    dnnl::reorder reorder;
    memory::desc from, to;  // sub-memory descriptors of user_src and src
  };
  std::vector<RowReorder> src_row_reorders;
  memory::desc user_weights;
  std::optional<dnnl::reorder> weight_reorder;  // when not packed
  size_t src_offset = 0, weight_offset = 0, dst_offset = 0, pad_offset = 0;
  size_t pad_stride = 0, scratch_bytes = 0;
};

class OneDnnConvStep : public StepRunner {
 public:
  OneDnnConvStep(const PlanStep& step, HostKernelFn fn,
                 std::shared_ptr<ThreadPool> pool)
      : conv_(step.conv),
        pool_(std::move(pool)),
        epilogue_(step.kernel, fn, pool_),
        buffer_slots_(step.kernel.buffer_slots),
        epilogue_by_rows_(EpilogueLoopsRows(step.kernel.kernel)),
        pointwise_(conv_->onednn->pointwise.has_value()
                       ? &*conv_->onednn->pointwise
                       : nullptr) {}

  // Keeps the constants (the bias contiguous) and builds the primitives of
  // a static step, packing its weight.
  absl::Status Init(const Graph& graph) {
    const ConvStep& s = *conv_;
    const ConvStep::OneDnn& dnn = *s.onednn;
    if (dnn.weight_node >= 0) {
      weight_constant_ = ConstantView(graph, dnn.weight_node, s.weight);
    }
    try {
      if (dnn.bias_node >= 0 && dnn.bias.has_value()) {
        const Tensor b = ConstantView(graph, dnn.bias_node, *dnn.bias);
        const int64_t n = s.groups * s.out_channels;
        bias_ = std::make_shared<memory>(
            memory::desc({n}, kF32, memory::format_tag::x), OneDnnEngine());
        float* to = static_cast<float*>(bias_->get_data_handle());
        const float* from = b.data_as<float>();
        for (int64_t i = 0; i < n; ++i) to[i] = from[i * dnn.bias->strides[0]];
      }
    } catch (const dnnl::error& e) {
      return absl::InternalError(
          absl::StrCat(s.ToString(), ": oneDNN failed: ", e.what()));
    }
    if (s.symbolic.has_value()) return absl::OkStatus();
    ASSIGN_OR_RETURN(static_, Build(s));
    return absl::OkStatus();
  }

  // Every layout and part of the constant weight reordered so far: a
  // dynamic entry's batch sizes may add layouts as calls first run them.
  int64_t packed_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t bytes = 0;
    for (const auto& [offset, m] : packed_) {
      bytes += static_cast<int64_t>(m->get_desc().get_size());
    }
    return bytes;
  }

  absl::Status Run(StepCall& call) const override {
    std::optional<ConvStep> bound;
    if (conv_->symbolic.has_value()) {
      ASSIGN_OR_RETURN(bound, conv_->Bind(call.symbols));
    }
    const ConvStep& s = bound.has_value() ? *bound : *conv_;
    std::shared_ptr<const Primitives> p = static_;
    if (p == nullptr) {
      ASSIGN_OR_RETURN(p, ForBatch(s));
    }
    PanelScratch scratch;
    char* const base = static_cast<char*>(scratch.Get(p->scratch_bytes));
    char* src = static_cast<char*>(call.slots[s.input.slot].data()) +
                s.input.offset * kItem;
    char* weights = static_cast<char*>(call.slots[s.weight.slot].data()) +
                    s.weight.offset * kItem;
    // oneDNN writes the result where the epilogue stores it (a bare store's
    // output, or the output the epilogue then updates in place), or else
    // into scratch.
    const int result_param = s.onednn->result_param;
    const int direct_param =
        result_param >= 0 ? result_param : s.onednn->in_place_param;
    char* const dst =
        direct_param >= 0
            ? static_cast<char*>(call.slots[buffer_slots_[direct_param]].data())
            : base + p->dst_offset;
    // The residual the library's pointwise epilogue adds, laid out as the
    // result.
    const int residual_param = s.onednn->pointwise.has_value()
                                   ? s.onednn->pointwise->residual_param
                                   : -1;
    char* const residual =
        residual_param >= 0
            ? static_cast<char*>(
                  call.slots[buffer_slots_[residual_param]].data())
            : nullptr;
    const dnnl::engine& engine = OneDnnEngine();
    absl::Status status;
    if (!p->src_row_reorders.empty()) {
      RETURN_IF_ERROR(ReorderRows(s, *p, src, base + p->src_offset));
      src = base + p->src_offset;
    }
    try {
      const ScopedOpenMpThreads one_thread(1);
      dnnl::stream& stream = OneDnnStream();
      if (p->src_reorder.has_value() && p->src_row_reorders.empty()) {
        memory from(p->user_src, engine, src);
        memory to(p->src, engine, base + p->src_offset);
        p->src_reorder->execute(stream, from, to);
        src = base + p->src_offset;
      }
      if (p->weight_reorder.has_value()) {
        memory from(p->user_weights, engine, weights);
        memory to(p->parts[0].weights, engine, base + p->weight_offset);
        p->weight_reorder->execute(stream, from, to);
        weights = base + p->weight_offset;
      }
      stream.wait();
      if (p->parts.size() == 1) {
        const ScopedOpenMpThreads threads(p->openmp_threads);
        RunPart(*p, 0, 0, src, weights, dst, residual, base);
      }
    } catch (const dnnl::error& e) {
      status = Failed(s, e);
    }
    RETURN_IF_ERROR(status);
    if (p->epilogue_per_part) {
      return RunPartsWithEpilogue(call, s, *p, src, weights, dst, base);
    }
    if (p->parts.size() > 1) {
      absl::Mutex mu;
      const int64_t rounds = p->per_image ? s.batch : 1;
      for (int64_t n = 0; n < rounds && status.ok(); ++n) {
        pool_->ParallelFor(static_cast<int64_t>(p->parts.size()), 1,
                           [&](int64_t first, int64_t last) {
                             const ScopedOpenMpThreads one_thread(1);
                             for (int64_t i = first; i < last; ++i) {
                               try {
                                 RunPart(*p, i, n, src, weights, dst, residual,
                                         base);
                               } catch (const dnnl::error& e) {
                                 absl::MutexLock lock(&mu);
                                 status.Update(Failed(s, e));
                               }
                             }
                           });
      }
      RETURN_IF_ERROR(status);
    }
    if (result_param >= 0) return absl::OkStatus();
    absl::InlinedVector<void*, 16> pointers = KernelParams(call, buffer_slots_);
    pointers[s.product_param] = dst;
    return epilogue_.RunWith(call, pointers);
  }

 private:
  static absl::Status Failed(const ConvStep& s, const dnnl::error& e) {
    return absl::InternalError(
        absl::StrCat(s.ToString(), ": oneDNN failed: ", e.what()));
  }

  // The input at `from` reordered into `to` in the parts' layout, its row
  // ranges on the pool's threads.
  absl::Status ReorderRows(const ConvStep& s, const Primitives& p, char* from,
                           char* to) const {
    absl::Mutex mu;
    absl::Status status;
    pool_->ParallelFor(static_cast<int64_t>(p.src_row_reorders.size()), 1,
                       [&](int64_t first, int64_t last) {
                         const ScopedOpenMpThreads one_thread(1);
                         for (int64_t i = first; i < last; ++i) {
                           const Primitives::RowReorder& r =
                               p.src_row_reorders[i];
                           try {
                             const dnnl::engine& engine = OneDnnEngine();
                             dnnl::stream& stream = OneDnnStream();
                             memory source(r.from, engine, from);
                             memory target(r.to, engine, to);
                             r.reorder.execute(stream, source, target);
                             stream.wait();
                           } catch (const dnnl::error& e) {
                             absl::MutexLock lock(&mu);
                             status.Update(Failed(s, e));
                           }
                         }
                       });
    return status;
  }

  // Ranges of the input's outer rows (images, when the batch has as many as
  // the pool has threads) for the input's reorder, one per thread, or none
  // when the input is too small to share.
  void PlanRowReorders(const ConvStep& s, Primitives& p) const {
    const int threads = pool_->num_threads();
    if (threads < 2 || p.src.get_size() < kMinSharedReorderBytes) return;
    const memory::dims dims = p.src.dims();
    const int dim = dims[0] >= threads ? 0 : 2;
    const int64_t rows = dims[dim];
    const int64_t count = std::min<int64_t>(threads, rows);
    if (count < 2) return;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t r0 = rows * i / count, r1 = rows * (i + 1) / count;
      memory::dims sub = dims;
      memory::dims offsets(dims.size(), 0);
      sub[dim] = r1 - r0;
      offsets[dim] = r0;
      Primitives::RowReorder r;
      r.from = p.user_src.submemory_desc(sub, offsets);
      r.to = p.src.submemory_desc(sub, offsets);
      r.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(
          OneDnnEngine(), r.from, OneDnnEngine(), r.to));
      p.src_row_reorders.push_back(std::move(r));
    }
  }

  // Runs part `i` of image `n` (with per_image parts) on the calling thread.
  // `residual` (null without one) is what the pointwise epilogue adds, laid
  // out as the result.
  void RunPart(const Primitives& p, int64_t i, int64_t n, char* src,
               char* weights, char* dst, char* residual, char* base) const {
    const Part& part = p.parts[i];
    const int64_t image = p.per_image ? n : 0;
    const int64_t dst_at = (image * p.dst_image + part.dst_offset) * kItem;
    Execute(part, src + (image * p.src_image + part.src_offset) * kItem,
            weights, dst + dst_at,
            residual != nullptr ? residual + dst_at : nullptr,
            base + p.pad_offset + i * p.pad_stride);
  }

  // Runs `part` on the calling thread: its input, weights, result, residual
  // (null: none) and scratchpad at those addresses.
  void Execute(const Part& part, char* src, char* weights, char* dst,
               char* residual, char* pad) const {
    dnnl::stream& stream = OneDnnStream();
    const dnnl::engine& engine = OneDnnEngine();
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(part.src, engine, src)},
        {DNNL_ARG_WEIGHTS, part.packed_weights != nullptr
                               ? *part.packed_weights
                               : memory(part.weights, engine, weights)},
        {DNNL_ARG_DST, memory(part.dst, engine, dst)},
        {DNNL_ARG_SCRATCHPAD, memory(part.scratchpad, engine, pad)}};
    if (part.bias.has_value()) {
      args.emplace(DNNL_ARG_BIAS, *part.bias);
    } else if (bias_ != nullptr) {
      args.emplace(DNNL_ARG_BIAS, *bias_);
    }
    part.conv.execute(stream, args);
    stream.wait();
    // The epilogue over the part's result while it is in cache.
    if (pointwise_ != nullptr) {
      float* const result = reinterpret_cast<float*>(dst);
      RunPointwiseEpilogue(
          *pointwise_, result, reinterpret_cast<const float*>(residual), result,
          static_cast<int64_t>(part.dst.get_size() / sizeof(float)));
    }
  }

  // The parts of a step with Primitives::epilogue_per_part, one per thread
  // of the pool: each writes its rows of the result at `dst` and then runs
  // the epilogue over them.
  absl::Status RunPartsWithEpilogue(StepCall& call, const ConvStep& s,
                                    const Primitives& p, char* src,
                                    char* weights, char* dst,
                                    char* base) const {
    absl::InlinedVector<void*, 16> pointers = KernelParams(call, buffer_slots_);
    pointers[s.product_param] = dst;
    absl::Mutex mu;
    absl::Status status;
    pool_->ParallelFor(static_cast<int64_t>(p.parts.size()), 1,
                       [&](int64_t first, int64_t last) {
                         const ScopedOpenMpThreads one_thread(1);
                         for (int64_t i = first; i < last; ++i) {
                           const Part& part = p.parts[i];
                           absl::Status part_status;
                           try {
                             RunPart(p, i, 0, src, weights, dst, nullptr, base);
                           } catch (const dnnl::error& e) {
                             part_status = Failed(s, e);
                           }
                           if (part_status.ok()) {
                             part_status = epilogue_.RunRange(
                                 call, pointers, part.row_begin, part.row_end);
                           }
                           if (!part_status.ok()) {
                             absl::MutexLock lock(&mu);
                             status.Update(part_status);
                           }
                         }
                       });
    return status;
  }

  // Whether `epilogue`'s first outer loop runs over the rows of the result
  // (outer spatial dim 0: channels_last.h's loop order), so that a range of
  // it is a range of rows.
  static bool EpilogueLoopsRows(const Kernel& epilogue) {
    return epilogue.outer.size() >= 3 && epilogue.outer[0].var == 2;
  }

  // The primitives of a dynamic step at the call's batch (and input
  // strides), made on first use.
  absl::StatusOr<std::shared_ptr<const Primitives>> ForBatch(
      const ConvStep& s) const {
    std::vector<int64_t> key = {s.batch};
    key.insert(key.end(), s.input.strides.begin(), s.input.strides.end());
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = by_batch_.find(key); it != by_batch_.end()) {
        return it->second;
      }
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const Primitives> p, Build(s));
    std::lock_guard<std::mutex> lock(mu_);
    return by_batch_.try_emplace(key, std::move(p)).first->second;
  }

  // The geometries of `s`'s parts and where each starts in the input and
  // the result: several when the pool has threads for them, else one.
  struct PartPlan {
    ConvGeometry geometry;
    int64_t src_offset = 0, dst_offset = 0;
    int64_t row_begin = 0, row_end = 0;  // parts of rows: the result rows
    // Parts of output channels: the channels [channel_begin, channel_end),
    // whole blocks of the layout but for the last part's end.
    int64_t channel_begin = 0, channel_end = 0;
    // Blocked parts of images: the first image (src_offset follows from
    // the input layout the primitives take).
    int64_t image_begin = 0;
  };
  std::vector<PartPlan> PlanParts(const ConvStep& s, Primitives& p) const {
    const ConvGeometry whole = ConvGeometry::Of(s, s.batch);
    const int threads = pool_->num_threads();
    const int64_t macs =
        s.batch * s.groups * s.out_channels * s.rows() * s.cols();
    const int64_t in_channels = s.groups * s.in_channels;
    const int64_t out_channels = s.groups * s.out_channels;
    p.src_image = in_channels * Volume(s.in);
    p.dst_image = out_channels * Volume(s.out);
    const bool shared = threads >= 2 && macs >= kMinPartMacs * threads;
    // Too small to share: one part on the calling thread. An OpenMP team
    // for it would cost more than it saves, and its threads spin after
    // each region on the cores the pool's workers run on.
    if (!shared) return {PartPlan{whole}};
    if (s.onednn->block != 0) return PlanBlockedParts(s, p, threads);
    std::vector<PartPlan> parts;
    if (s.batch >= threads) {
      const int64_t chunk = (s.batch + threads - 1) / threads;
      for (int64_t n0 = 0; n0 < s.batch; n0 += chunk) {
        PartPlan part{whole, n0 * p.src_image, n0 * p.dst_image};
        part.geometry.batch = std::min(chunk, s.batch - n0);
        parts.push_back(part);
      }
      return parts;
    }
    // Rows of outer spatial dim 0, per image. At batch 1, the epilogue over
    // a part's rows follows it when the epilogue's first loop is the rows.
    const int d = 3 - s.spatial;
    const int64_t src_row = in_channels * Volume(s.in) / s.in[d];
    const int64_t dst_row = out_channels * Volume(s.out) / s.out[d];
    ConvGeometry image = whole;
    image.batch = 1;
    const int64_t rows = s.out[d];
    const int64_t count = std::min<int64_t>(threads, rows);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t r0 = rows * i / count, r1 = rows * (i + 1) / count;
      int64_t first_input_row = 0;
      PartPlan part{image.Rows(s, r0, r1, &first_input_row)};
      part.src_offset = first_input_row * src_row;
      part.dst_offset = r0 * dst_row;
      part.row_begin = r0;
      part.row_end = r1;
      // A part whose input window lies in the padding alone (padding wider
      // than the kernel's reach, and few rows per part) has no input rows,
      // which no primitive takes: the whole convolution on an OpenMP team
      // instead.
      if (part.geometry.in[d] < 1) {
        p.openmp_threads = threads;
        return {PartPlan{whole}};
      }
      parts.push_back(part);
    }
    p.per_image = true;
    p.epilogue_per_part =
        s.batch == 1 && epilogue_by_rows_ && s.onednn->result_param < 0;
    return parts;
  }

  // The parts of a convolution whose result is blocked (channel blocks of
  // `block` outermost after the batch: a block's rows are not contiguous,
  // an image and a run of whole blocks are): ranges of images when the
  // batch has at least as many images as the pool has threads; else ranges
  // of output channel blocks of each image, when the weight is a constant
  // (each part packs its channels' rows of it once), the input in the
  // layout of the whole convolution's primitive; else the whole
  // convolution on an OpenMP team of the pool's size.
  std::vector<PartPlan> PlanBlockedParts(const ConvStep& s, Primitives& p,
                                         int threads) const {
    const ConvGeometry whole = ConvGeometry::Of(s, s.batch);
    const int64_t block = s.onednn->block;
    const int64_t channels = s.groups * s.out_channels;
    const int64_t blocks = (channels + block - 1) / block;
    p.dst_image = blocks * block * Volume(s.out);
    std::vector<PartPlan> parts;
    if (s.batch >= threads) {
      const int64_t chunk = (s.batch + threads - 1) / threads;
      for (int64_t n0 = 0; n0 < s.batch; n0 += chunk) {
        PartPlan part{whole, 0, n0 * p.dst_image};
        part.geometry.batch = std::min(chunk, s.batch - n0);
        part.image_begin = n0;
        parts.push_back(part);
      }
      return parts;
    }
    if (s.groups != 1 || !weight_constant_.has_value() || blocks < 2) {
      p.openmp_threads = threads;
      return {PartPlan{whole}};
    }
    ConvGeometry image = whole;
    image.batch = 1;
    const int64_t count = std::min<int64_t>(threads, blocks);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t b0 = blocks * i / count, b1 = blocks * (i + 1) / count;
      PartPlan part{image, 0, b0 * block * Volume(s.out)};
      part.channel_begin = b0 * block;
      part.channel_end = std::min(b1 * block, channels);
      parts.push_back(part);
    }
    p.per_image = true;
    return parts;
  }

  absl::StatusOr<std::shared_ptr<const Primitives>> Build(
      const ConvStep& s) const {
    const ConvStep::OneDnn& dnn = *s.onednn;
    try {
      auto p = std::make_shared<Primitives>();
      const auto tag = OneDnnTag(s.spatial, dnn.block);
      const ConvGeometry whole = ConvGeometry::Of(s, s.batch);
      std::vector<PartPlan> plans = PlanParts(s, *p);
      size_t pad_bytes = 0;
      // Each plan's primitive, of its output channels when a part of them.
      const auto make_parts = [&] {
        // oneDNN fixes a primitive's thread count when it creates it
        // (brgconv reads omp_get_max_threads() then), not when it runs:
        // create each at the count it runs with, whatever the host's
        // OpenMP setting.
        const ScopedOpenMpThreads threads(plans.size() == 1 ? p->openmp_threads
                                                            : 1);
        for (const PartPlan& plan : plans) {
          ConvStep channels = s;
          if (plan.channel_end > 0) {
            channels.out_channels = plan.channel_end - plan.channel_begin;
          }
          const dnnl::convolution_forward::primitive_desc pd = OneDnnConvPd(
              channels, plan.geometry, bias_ != nullptr,
              memory::desc(OneDnnDstDims(channels, plan.geometry), kF32, tag));
          Part part;
          part.conv = dnnl::convolution_forward(pd);
          part.src = pd.src_desc();
          part.weights = pd.weights_desc();
          part.dst = pd.dst_desc();
          part.scratchpad = pd.scratchpad_desc();
          part.src_offset = plan.src_offset;
          part.dst_offset = plan.dst_offset;
          part.row_begin = plan.row_begin;
          part.row_end = plan.row_end;
          if (plan.channel_end > 0 && bias_ != nullptr) {
            part.bias.emplace(memory::desc({channels.out_channels}, kF32,
                                           memory::format_tag::x),
                              OneDnnEngine(),
                              static_cast<float*>(bias_->get_data_handle()) +
                                  plan.channel_begin);
          }
          pad_bytes = std::max(pad_bytes, pd.scratchpad_desc().get_size());
          p->parts.push_back(std::move(part));
        }
      };
      make_parts();
      // The whole input in the parts' layout (channels last when there are
      // several of a channels-last result), reordered from the program's
      // where that differs.
      if (p->parts.size() == 1) {
        p->src = p->parts[0].src;
      } else if (dnn.block == 0) {
        p->src = memory::desc(OneDnnSrcDims(s, whole), kF32,
                              OneDnnTag(s.spatial, 0));
      } else if (std::optional<memory::desc> src = WholeSrc(s, *p)) {
        p->src = *src;
        p->src_image = static_cast<int64_t>(src->get_size()) / kItem / s.batch;
        for (size_t i = 0; i < plans.size(); ++i) {
          p->parts[i].src_offset = plans[i].image_begin * p->src_image;
        }
      } else {
        // Parts that take their input in different layouts: the whole
        // convolution on an OpenMP team.
        p->parts.clear();
        p->per_image = false;
        p->openmp_threads = pool_->num_threads();
        plans = {PartPlan{whole}};
        pad_bytes = 0;
        make_parts();
        p->src = p->parts[0].src;
      }
      p->user_src = OneDnnUserSrcDesc(s);
      // Reorders run on the calling thread too (Run): created at one
      // OpenMP thread, or each call's reorder starts a team of the host's
      // size, whose threads spin after it on the cores the pool runs on
      // (resnet18 at two threads: 38% of the process's samples in libgomp's
      // spin, every blocked convolution's reorder taking the other core).
      const ScopedOpenMpThreads one_thread(1);
      size_t bytes = 0;
      if (p->src != p->user_src) {
        p->src_reorder.emplace(memory(p->user_src, OneDnnEngine(), nullptr),
                               memory(p->src, OneDnnEngine(), nullptr));
        PlanRowReorders(s, *p);
        p->src_offset = bytes;
        bytes += AlignUp(p->src.get_size());
      }
      p->user_weights = OneDnnUserWeightDesc(s);
      if (weight_constant_.has_value()) {
        for (size_t i = 0; i < plans.size(); ++i) {
          Part& part = p->parts[i];
          if (plans[i].channel_end > 0) {
            ConvStep channels = s;
            channels.out_channels =
                plans[i].channel_end - plans[i].channel_begin;
            part.packed_weights =
                PackedWeights(OneDnnUserWeightDesc(channels), part.weights,
                              plans[i].channel_begin * s.weight.strides[0]);
          } else {
            part.packed_weights =
                PackedWeights(p->user_weights, part.weights, 0);
          }
        }
      } else {
        for (const Part& part : p->parts) {
          if (part.weights != p->parts[0].weights) {
            return absl::InternalError(
                absl::StrCat(s.ToString(),
                             ": oneDNN wants its parts' weights in "
                             "different layouts"));
          }
        }
        if (p->parts[0].weights != p->user_weights) {
          p->weight_reorder.emplace(
              memory(p->user_weights, OneDnnEngine(), nullptr),
              memory(p->parts[0].weights, OneDnnEngine(), nullptr));
          p->weight_offset = bytes;
          bytes += AlignUp(p->parts[0].weights.get_size());
        }
      }
      p->dst_offset = bytes;
      if (dnn.result_param < 0 && dnn.in_place_param < 0) {
        bytes += AlignUp(
            memory::desc(OneDnnDstDims(s, whole), kF32, tag).get_size());
      }
      p->pad_offset = bytes;
      p->pad_stride = AlignUp(pad_bytes);
      bytes += p->pad_stride * p->parts.size();
      p->scratch_bytes = bytes;
      return std::shared_ptr<const Primitives>(std::move(p));
    } catch (const dnnl::error& e) {
      return Failed(s, e);
    }
  }

  // The constant weight from element `offset` on, viewed as `user`, in
  // layout `packed`: reordered once per offset and layout.
  std::shared_ptr<const memory> PackedWeights(const memory::desc& user,
                                              const memory::desc& packed,
                                              int64_t offset) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [at, m] : packed_) {
      if (at == offset && m->get_desc() == packed) return m;
    }
    memory from(user, OneDnnEngine(),
                static_cast<float*>(weight_constant_->data()) + offset);
    // In host memory of guardjit's (core/host_memory.h: huge pages for a
    // large weight), which the memory object's owner keeps.
    struct Owned {
      HostMemoryPtr bytes;
      memory packed;
    };
    auto owned = std::make_shared<Owned>();
    owned->bytes.reset(AllocateHostMemory(packed.get_size()));
    if (owned->bytes == nullptr) {
      throw dnnl::error(dnnl_out_of_memory, "no memory for a packed weight");
    }
    owned->packed = memory(packed, OneDnnEngine(), owned->bytes.get());
    std::shared_ptr<const memory> to(owned, &owned->packed);
    dnnl::stream& stream = OneDnnStream();
    const ScopedOpenMpThreads one_thread(1);
    dnnl::reorder(from, owned->packed).execute(stream, from, owned->packed);
    stream.wait();
    packed_.emplace_back(offset, to);
    return to;
  }

  // The whole input in the layout every part of a blocked result takes it
  // in (their images in it: parts of output channels take whole images,
  // parts of images runs of them), or nullopt when they differ.
  static std::optional<memory::desc> WholeSrc(const ConvStep& s,
                                              const Primitives& p) {
    for (int block : {16, 8, 1, 0}) {
      const auto tag = OneDnnTag(s.spatial, block);
      bool all = true;
      for (const Part& part : p.parts) {
        all = all && part.src == memory::desc(part.src.dims(), kF32, tag);
      }
      if (all) {
        return memory::desc(OneDnnSrcDims(s, ConvGeometry::Of(s, s.batch)),
                            kF32, tag);
      }
    }
    return std::nullopt;
  }

  const std::shared_ptr<const ConvStep> conv_;
  const std::shared_ptr<ThreadPool> pool_;
  const HostKernelStep epilogue_;
  const std::vector<int> buffer_slots_;
  const bool epilogue_by_rows_;
  // The epilogue the library runs over each part in place, or null.
  const PointwiseEpilogue* const pointwise_;
  std::optional<Tensor> weight_constant_;  // a view of the graph's constant
  std::shared_ptr<memory> bias_;           // contiguous, when a constant
  std::shared_ptr<const Primitives> static_;
  // A std::mutex, which TSan sees (Debian's absl is not instrumented).
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<std::vector<int64_t>,
                              std::shared_ptr<const Primitives>>
      by_batch_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::pair<int64_t, std::shared_ptr<const memory>>> packed_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<const StepRunner>> MakeOneDnnConvStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool) {
  if (step.conv == nullptr || !step.conv->onednn.has_value()) {
    return absl::InternalError("a oneDNN step without a oneDNN plan");
  }
  auto runner = std::make_unique<OneDnnConvStep>(step, fn, std::move(pool));
  RETURN_IF_ERROR(runner->Init(graph));
  return std::unique_ptr<const StepRunner>(std::move(runner));
}

}  // namespace guardjit
