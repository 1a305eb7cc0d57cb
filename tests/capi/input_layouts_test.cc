// Issue #13, layout-aware compiles: an entry's program is planned for the
// layout of the call that made it, once, at compile time. Inputs of the same
// sizes in another layout (transposed, padded rows, a storage offset,
// broadcast by a zero stride) miss and get an entry of their own, counted in
// stats; no call runs a program planned for another layout, and nothing
// compiles inside a call that hits.

#include <cstdint>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::Ok;

// x: an [n, 4] view of `buffer` with `strides` (element strides) starting at
// element `offset`.
struct Layout {
  const char* name;
  int64_t row_stride, col_stride;  // col_stride 0: n (transposed memory)
  int64_t offset;
  bool new_entry;  // a layout class of its own (a storage offset is not)
};

// r = sum(x * 2 + y, dim 1), y of size [4] broadcast over the rows.
GraphPtr AffineRowSums(gj_context* context) {
  return gjtest::BuildGraph(
      context, "affine_row_sums", {"x", "y"},
      [](gj_graph_builder* b) {
        gj_arg mul[] = {gj_arg_ref("x"), gj_arg_int(2)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "m", "aten.mul.Tensor", mul, 2)));
        gj_arg add[] = {gj_arg_ref("m"), gj_arg_ref("y")};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "a", "aten.add.Tensor", add, 2)));
        const int64_t dims[] = {1};
        gj_arg sum[] = {gj_arg_ref("a"), gj_arg_ints(dims, 1)};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(b, "r", "aten.sum.dim_IntList", sum, 2)));
      },
      {"r"});
}

std::string Explain(gj_function* fn) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(gj_function_explain(fn, &text)));
  std::string out = text == nullptr ? "" : text;
  gj_string_destroy(text);
  return out;
}

gj_function_stats Stats(gj_function* fn) {
  gj_function_stats s;
  gj_function_stats_init(&s);
  EXPECT_TRUE(Ok(gj_function_get_stats(fn, &s)));
  return s;
}

// Calls `fn` with x of `n` rows in `layout` (twice: the second is a hit)
// and checks the row sums.
void CallAndCheck(gj_function* fn, int64_t n, const Layout& layout) {
  SCOPED_TRACE(std::string(layout.name) + " n=" + std::to_string(n));
  const int64_t rs = layout.row_stride, cs = layout.col_stride;
  int64_t span = layout.offset + 1;
  span += (n - 1) * rs + 3 * cs;
  std::vector<float> buffer(span, 1000.0f);  // unread padding stays large
  std::vector<float> x(n * 4);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      const float v = rs == 0 ? static_cast<float>(j) - 1.5f
                              : static_cast<float>(i * 4 + j) * 0.25f - 2.0f;
      buffer[layout.offset + i * rs + j * cs] = v;
      x[i * 4 + j] = v;
    }
  }
  HostTensor<float> xt({n, 4}, buffer, {rs, cs});
  xt.dl()->byte_offset = layout.offset * sizeof(float);
  HostTensor<float> y({4}, {0.5f, -1.0f, 2.0f, 0.25f});
  HostTensor<float> r({n}, std::vector<float>(n, -7.0f));
  const DLTensor* in[] = {xt.dl(), y.dl()};
  const DLTensor* out[] = {r.dl()};
  for (int call = 0; call < 2; ++call) {
    ASSERT_TRUE(Ok(gj_function_call(fn, in, 2, out, 1, nullptr)));
    for (int64_t i = 0; i < n; ++i) {
      float want = 0;
      for (int64_t j = 0; j < 4; ++j) {
        want += x[i * 4 + j] * 2 + y.buffer()[j];
      }
      ASSERT_NEAR(r.buffer()[i], want, 1e-4) << "row " << i;
    }
  }
}

const Layout kLayouts[] = {
    {"contiguous", 4, 1, 0, true},     {"transposed", 1, 0, 0, true},
    {"padded rows", 7, 1, 0, true},    {"storage offset", 4, 1, 3, false},
    {"broadcast rows", 0, 1, 0, true},
};

Layout ForRows(Layout layout, int64_t n) {
  if (layout.col_stride == 0) layout.col_stride = n;  // transposed memory
  return layout;
}

class InputLayoutsTest : public ::testing::TestWithParam<gj_backend> {
 protected:
  // AffineRowSums on the parameter's backend, in `dynamic` mode.
  FunctionPtr Make(gj_dynamic_mode dynamic) {
    context_ = gjtest::MakeContext(GetParam());
    graph_ = AffineRowSums(context_.get());
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    options.recompile_limit = 16;
    gj_function* raw = nullptr;
    EXPECT_TRUE(
        Ok(gj_function_create(context_.get(), graph_.get(), &options, &raw)));
    return FunctionPtr(raw);
  }
  gjtest::ContextPtr context_;
  GraphPtr graph_;
};

TEST_P(InputLayoutsTest, EachStaticLayoutGetsAnEntryPlannedForIt) {
  FunctionPtr fn = Make(GJ_DYNAMIC_STATIC);
  ASSERT_NE(fn, nullptr);
  int64_t compiles = 0;
  for (const Layout& layout : kLayouts) {
    CallAndCheck(fn.get(), 5, ForRows(layout, 5));
    compiles += layout.new_entry;
    EXPECT_EQ(Stats(fn.get()).compiles, compiles) << layout.name;
  }
  // Every layout again: all hits, nothing compiled.
  for (const Layout& layout : kLayouts) {
    CallAndCheck(fn.get(), 5, ForRows(layout, 5));
  }
  const gj_function_stats s = Stats(fn.get());
  EXPECT_EQ(s.compiles, compiles);
  EXPECT_EQ(s.cache_entries, compiles);
  const std::string explain = Explain(fn.get());
  EXPECT_EQ(explain.find("not planned for"), std::string::npos) << explain;
}

TEST_P(InputLayoutsTest, DynamicEntriesServeEverySizeInTheirLayout) {
  FunctionPtr fn = Make(GJ_DYNAMIC_DYNAMIC);
  ASSERT_NE(fn, nullptr);
  for (const Layout& layout : kLayouts) {
    const int64_t before = Stats(fn.get()).compiles;
    for (int64_t n : {3, 5, 7, 9, 11}) {
      CallAndCheck(fn.get(), n, ForRows(layout, n));
    }
    // One entry per layout class serves the five sizes.
    EXPECT_EQ(Stats(fn.get()).compiles, before + layout.new_entry)
        << layout.name;
  }
  const std::string explain = Explain(fn.get());
  EXPECT_EQ(explain.find("not planned for"), std::string::npos) << explain;
}

INSTANTIATE_TEST_SUITE_P(Backends, InputLayoutsTest,
                         ::testing::Values(GJ_BACKEND_DEFAULT,
                                           GJ_BACKEND_EAGER),
                         [](const auto& info) {
                           return info.param == GJ_BACKEND_EAGER
                                      ? std::string("Eager")
                                      : std::string("Jit");
                         });

}  // namespace
