#ifndef GUARDJIT_JIT_STEPS_ONEDNN_PRIMITIVES_H_
#define GUARDJIT_JIT_STEPS_ONEDNN_PRIMITIVES_H_

// oneDNN's side of the convolution steps (onednn_conv.h), shared by their
// planning and their runner: a ConvStep as oneDNN memory descriptors and
// convolution primitives. Included by jit/steps/*.cc only (the oneDNN
// headers are private to the jit library). Functions that build oneDNN
// objects throw dnnl::error, which their callers turn into a Status.

#include <cstdint>
#include <dnnl.hpp>

#include "jit/steps/conv_step.h"

namespace guardjit {

// The problem one primitive solves: a whole step at some batch, or a part
// of it (a range of images, or of the rows of outer spatial dim 0, whose
// padding at each end then differs). Extents as ConvStep's 3-D ones.
struct ConvGeometry {
  int64_t batch = 1;
  ConvStep::Dims3 in, out, pad_begin, pad_end;

  // The whole of `s` at `batch` (torch pads the end as much as the begin:
  // the output size both derive rounds down the same way).
  static ConvGeometry Of(const ConvStep& s, int64_t batch);
  // Output rows [r0, r1) of outer spatial dim 0 (dim 3 - s.spatial) of this
  // geometry: the input rows they read and the padding at each end. Sets
  // *first_input_row to the first input row read. Rows whose input window
  // lies in the padding alone give an input extent below 1 there, which no
  // primitive takes.
  ConvGeometry Rows(const ConvStep& s, int64_t r0, int64_t r1,
                    int64_t* first_input_row) const;
};

const dnnl::engine& OneDnnEngine();
// The calling thread's stream on OneDnnEngine().
dnnl::stream& OneDnnStream();

// The layouts a result may be kept in, by ConvStep::OneDnn::block.
dnnl::memory::format_tag OneDnnTag(int spatial, int block);

dnnl::memory::dims OneDnnSrcDims(const ConvStep& s, const ConvGeometry& g);
dnnl::memory::dims OneDnnDstDims(const ConvStep& s, const ConvGeometry& g);

// The weight and the input as the program stores them (their FixedRefs'
// strides); the weight with a group dim when grouped.
dnnl::memory::desc OneDnnUserWeightDesc(const ConvStep& s);
dnnl::memory::desc OneDnnUserSrcDesc(const ConvStep& s);

// The float32 convolution of `g` writing `dst`, its bias added when `bias`,
// its input in `dst`'s layout when that is channels last (else as oneDNN
// likes it), its weights as oneDNN likes them, its scratchpad the caller's.
dnnl::convolution_forward::primitive_desc OneDnnConvPd(
    const ConvStep& s, const ConvGeometry& g, bool bias,
    const dnnl::memory::desc& dst);

// Whether `pd` is one of oneDNN's reference implementations (slower than
// im2col + BLAS).
bool IsReferenceImpl(const dnnl::convolution_forward::primitive_desc& pd);

// The OpenMP thread count of the calling thread's oneDNN calls while it
// lives (1 under TSan: libgomp is not instrumented, so its threads' writes,
// ordered by its barriers, would read as races), then the thread's own
// setting again: the host's OpenMP state is the host's (torch runs on the
// same libgomp, and torch.compile guards on torch.get_num_threads()).
class ScopedOpenMpThreads {
 public:
  explicit ScopedOpenMpThreads(int threads);
  ~ScopedOpenMpThreads();
  ScopedOpenMpThreads(const ScopedOpenMpThreads&) = delete;
  ScopedOpenMpThreads& operator=(const ScopedOpenMpThreads&) = delete;

 private:
  int saved_ = 0;  // 0: nothing to restore
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_ONEDNN_PRIMITIVES_H_
