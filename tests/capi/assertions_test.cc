// torch.export's runtime assertions through the C API (#16): an
// _assert_scalar over a size comparison becomes a shape guard of the entry
// it is compiled into, so one dynamic entry serves every size that keeps it
// true, and a call that breaks it fails with torch's message, naming the
// node, with nothing written.

#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

constexpr char kAsserted[] = R"pb(
  name: "asserted"
  placeholders { name: "x" }
  nodes {
    name: "n"
    target: "aten.sym_size.int"
    args { ref: "x" }
    args { i: 0 }
  }
  nodes {
    name: "ge"
    target: "operator.ge"
    args { ref: "n" }
    args { i: 3 }
  }
  nodes {
    name: "check"
    target: "aten._assert_scalar.default"
    args { ref: "ge" }
    args { s: "Runtime assertion failed for expression u0 >= 3 on node 'ge'" }
  }
  nodes {
    name: "y"
    target: "aten.neg.default"
    args { ref: "x" }
  }
  outputs { ref: "y" }
)pb";

class AssertionsTest : public ::testing::TestWithParam<gj_backend> {};

TEST_P(AssertionsTest, AssertScalarIsAGuardAndFailsCallsThatBreakIt) {
  gjtest::ContextPtr context = gjtest::MakeContext(GetParam());
  gj_graph* raw_graph = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_text(
      context.get(), kAsserted, sizeof(kAsserted) - 1, nullptr, &raw_graph)));
  GraphPtr graph(raw_graph);
  gj_function_options options;
  gj_function_options_init(&options);
  options.dynamic = GJ_DYNAMIC_DYNAMIC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_create(context.get(), graph.get(), &options, &raw)));
  FunctionPtr fn(raw);
  for (int64_t n : {4, 7, 12}) {
    std::vector<float> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
    HostTensor<float> x({n}, values);
    HostTensor<float> y({n}, std::vector<float>(n, 1));
    const DLTensor* in[] = {x.dl()};
    const DLTensor* out[] = {y.dl()};
    ASSERT_TRUE(Ok(gj_function_call(fn.get(), in, 1, out, 1, nullptr)));
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y.buffer()[i], -values[i]);
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_TRUE(Ok(gj_function_get_stats(fn.get(), &stats)));
  EXPECT_EQ(stats.compiles, 1);  // one entry serves 4, 7 and 12
  char* guards = nullptr;
  ASSERT_TRUE(Ok(gj_function_dump_guards(fn.get(), &guards)));
  const std::string dump = guards;
  gj_string_destroy(guards);
  EXPECT_NE(dump.find("3 <= x.size()[0]"), std::string::npos) << dump;
  // Size 2 breaks the assertion: torch's message, the node, nothing written.
  HostTensor<float> x({2}, {1, 2});
  HostTensor<float> y({2}, {5, 5});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  EXPECT_TRUE(IsError(
      gj_function_call(fn.get(), in, 1, out, 1, nullptr), GJ_INVALID_ARGUMENT,
      {"node 'check' (aten._assert_scalar.default)",
       "Runtime assertion failed for expression u0 >= 3 on node 'ge'"}));
  EXPECT_EQ(y.buffer(), (std::vector<float>{5, 5}));
}

INSTANTIATE_TEST_SUITE_P(Backends, AssertionsTest,
                         ::testing::Values(GJ_BACKEND_DEFAULT,
                                           GJ_BACKEND_EAGER),
                         [](const auto& info) {
                           return info.param == GJ_BACKEND_EAGER
                                      ? std::string("Eager")
                                      : std::string("Jit");
                         });

}  // namespace
