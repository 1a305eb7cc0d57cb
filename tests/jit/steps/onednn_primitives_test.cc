// oneDNN's side of the convolution steps (jit/steps/onednn_primitives.h):
// the geometry of a part of a convolution (a range of output rows, each
// part its own primitive), the layouts and dims handed to oneDNN, and the
// OpenMP thread count scoped to the calling thread. The results of whole
// convolutions are checked against eager in onednn_conv_test.cc.

#include "jit/steps/onednn_primitives.h"

#include <dlfcn.h>

#include <cstdint>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jit/steps/conv_step.h"

namespace guardjit {
namespace {

// A 2-D convolution step over an `in_rows` x 7 input, outer spatial dim
// (d = 1) as given; the output size as torch computes it.
ConvStep Conv2d(int64_t in_rows, int64_t kernel, int64_t stride,
                int64_t padding, int64_t dilation) {
  ConvStep s;
  s.spatial = 2;
  s.in = {1, in_rows, 7};
  s.kernel = {1, kernel, 3};
  s.stride = {1, stride, 1};
  s.padding = {0, padding, 1};
  s.dilation = {1, dilation, 1};
  const int64_t span = (kernel - 1) * dilation + 1;
  s.out = {1, (in_rows + 2 * padding - span) / stride + 1, 7};
  return s;
}

// Every output row of every part reads, for each kernel tap, either the
// input row the whole convolution reads there (at the same offset inside
// the part's input window) or padding, exactly where the whole reads
// padding; and the part's own extents give its output rows by oneDNN's
// size rule. Random geometries, cut into random ranges of rows; parts
// whose window lies in the padding alone (padding wider than the kernel's
// reach) say so with an input extent below 1.
TEST(OneDnnPrimitivesTest, RowPartsReadWhatTheWholeReads) {
  std::mt19937 rng(7);
  int checked = 0, padding_only = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t kernel = 1 + rng() % 5, stride = 1 + rng() % 3,
                  dilation = 1 + rng() % 2, padding = rng() % 3;
    const int64_t span = (kernel - 1) * dilation + 1;
    const int64_t in_rows = span + rng() % 12;
    if (2 * padding >= span + in_rows) continue;
    const ConvStep s = Conv2d(in_rows, kernel, stride, padding, dilation);
    const int d = 3 - s.spatial;
    const ConvGeometry whole = ConvGeometry::Of(s, /*batch=*/2);
    ASSERT_EQ(whole.out[d], s.out[d]);
    for (int64_t r0 = 0; r0 < s.out[d];) {
      const int64_t r1 = std::min<int64_t>(s.out[d], r0 + 1 + rng() % 4);
      SCOPED_TRACE(absl::StrCat("in ", in_rows, " kernel ", kernel, " stride ",
                                stride, " dilation ", dilation, " padding ",
                                padding, " rows [", r0, ", ", r1, ")"));
      int64_t first = -1;
      const ConvGeometry part = whole.Rows(s, r0, r1, &first);
      EXPECT_EQ(part.batch, 2);
      EXPECT_EQ(part.out[d], r1 - r0);
      // Rows whose window lies in the padding alone have no input rows:
      // an extent below 1, which the caller checks (onednn_conv_step.cc
      // then runs the whole). None of their taps reads the input.
      if (part.in[d] < 1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t t = 0; t < kernel; ++t) {
            const int64_t row = r * stride - padding + t * dilation;
            EXPECT_TRUE(row < 0 || row >= in_rows) << "row " << r;
          }
        }
        ++padding_only;
        r0 = r1;
        continue;
      }
      EXPECT_GE(first, 0);
      EXPECT_GE(part.in[d], 1);
      EXPECT_LE(first + part.in[d], in_rows);
      EXPECT_GE(part.pad_begin[d], 0);
      EXPECT_GE(part.pad_end[d], 0);
      // The other spatial dims are the whole's.
      EXPECT_EQ(part.in[2], whole.in[2]);
      EXPECT_EQ(part.pad_begin[2], whole.pad_begin[2]);
      // oneDNN's output size of the part's own problem.
      EXPECT_EQ(
          (part.in[d] + part.pad_begin[d] + part.pad_end[d] - span) / stride +
              1,
          r1 - r0);
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t t = 0; t < kernel; ++t) {
          const int64_t row = r * stride - padding + t * dilation;
          const int64_t local =
              (r - r0) * stride - part.pad_begin[d] + t * dilation;
          const bool whole_pads = row < 0 || row >= in_rows;
          const bool part_pads = local < 0 || local >= part.in[d];
          ASSERT_EQ(whole_pads, part_pads) << "row " << r << " tap " << t;
          if (!whole_pads) {
            ASSERT_EQ(first + local, row) << "row " << r << " tap " << t;
          }
        }
      }
      ++checked;
      r0 = r1;
    }
  }
  EXPECT_GT(checked, 500);
  EXPECT_GT(padding_only, 10);
}

TEST(OneDnnPrimitivesTest, DimsAndLayoutsOfEachRank) {
  ConvStep s = Conv2d(9, 3, 2, 1, 1);
  s.groups = 4;
  s.in_channels = 3;
  s.out_channels = 5;
  const ConvGeometry g = ConvGeometry::Of(s, 6);
  EXPECT_EQ(OneDnnSrcDims(s, g), (dnnl::memory::dims{6, 12, 9, 7}));
  EXPECT_EQ(OneDnnDstDims(s, g), (dnnl::memory::dims{6, 20, 5, 7}));
  s.spatial = 1;
  EXPECT_EQ(OneDnnSrcDims(s, g), (dnnl::memory::dims{6, 12, 7}));
  s.spatial = 3;
  EXPECT_EQ(OneDnnDstDims(s, g), (dnnl::memory::dims{6, 20, 1, 5, 7}));

  using Tag = dnnl::memory::format_tag;
  EXPECT_EQ(OneDnnTag(1, 16), Tag::nCw16c);
  EXPECT_EQ(OneDnnTag(1, 0), Tag::nwc);
  EXPECT_EQ(OneDnnTag(2, 8), Tag::nChw8c);
  EXPECT_EQ(OneDnnTag(2, 0), Tag::nhwc);
  EXPECT_EQ(OneDnnTag(2, 1), Tag::nchw);
  EXPECT_EQ(OneDnnTag(3, 16), Tag::nCdhw16c);
  EXPECT_EQ(OneDnnTag(3, 0), Tag::ndhwc);
  EXPECT_EQ(OneDnnTag(3, 1), Tag::ncdhw);
}

// The count applies to the calling thread's next OpenMP regions while the
// scope lives, and the thread's own count comes back after it (the host's
// OpenMP state is the host's).
TEST(OneDnnPrimitivesTest, OpenMpCountIsScopedAndRestored) {
  (void)OneDnnEngine();  // libdnnl and its libgomp loaded
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (gomp == nullptr) GTEST_SKIP() << "libdnnl runs without libgomp here";
  using Set = void (*)(int);
  using Get = int (*)();
  auto set = reinterpret_cast<Set>(dlsym(gomp, "omp_set_num_threads"));
  auto get = reinterpret_cast<Get>(dlsym(gomp, "omp_get_max_threads"));
  ASSERT_NE(set, nullptr);
  ASSERT_NE(get, nullptr);
  const int before = get();
  set(3);
  {
    const ScopedOpenMpThreads one(1);
    EXPECT_EQ(get(), 1);
    {
      const ScopedOpenMpThreads same(1);  // nothing to change or restore
      EXPECT_EQ(get(), 1);
    }
    EXPECT_EQ(get(), 1);
  }
  EXPECT_EQ(get(), 3);
  set(before);
  dlclose(gomp);
}

}  // namespace
}  // namespace guardjit
