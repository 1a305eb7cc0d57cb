// reduce-overhead mode's refusals and checks on the emulated device: what a
// CUDA graph cannot record (a channels-last weight cuBLASLt cannot read in
// place, a CPU scalar input), default mode and CPU calls recording nothing,
// device-side index checks inside replays (each size key's graph with fault
// words of its own), the options, and CudaGraphSet's pool cap. Shares its
// fixture with cuda_graph_test.cc (cuda_graph_test_util.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_graph.h"
#include "tests/cuda/cuda_graph_test_util.h"
#include "tests/cuda/recording_driver.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;

constexpr char kConv[] = R"pb(
  name: "conv"
  placeholders {
    name: "x"
    meta { dtype: FLOAT32 sizes: 1 sizes: 2 sizes: 5 sizes: 5 }
  }
  placeholders {
    name: "w"
    meta { dtype: FLOAT32 sizes: 3 sizes: 2 sizes: 3 sizes: 3 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 3 }
  }
  nodes {
    name: "conv"
    target: "aten.convolution.default"
    args { ref: "x" }
    args { ref: "w" }
    args { ref: "b" }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args { b: false }
    args {
      list {
        items { i: 0 }
        items { i: 0 }
      }
    }
    args { i: 1 }
  }
  outputs { ref: "conv" }
)pb";

// Entries with cuBLASLt GEMM and conv steps are recorded
// (cuda_graph_extern_test.cc); a convolution whose weight cuBLASLt cannot
// read in place (channels-last: the plain path copies it contiguous from the
// call's allocator, which a capture cannot do) is refused, naming node and
// operand, once.
TEST_F(ReduceOverheadTest,
       ConvWithAChannelsLastWeightIsRefusedNamingTheOperand) {
  gj_function* fn = Load(kConv, GJ_MODE_REDUCE_OVERHEAD);
  static std::vector<std::string>* logged = new std::vector<std::string>;
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "cudagraphs") logged->push_back(message);
      },
      nullptr);
  gj_set_log_topics("cudagraphs");
  FloatDeviceTensor x({1, 2, 5, 5}), w({3, 2, 3, 3}), b({3}), y({1, 3, 5, 5});
  // w as [out, in, kh, kw] over memory laid out [out, kh, kw, in].
  int64_t channels_last[] = {18, 1, 6, 2};
  w.dl.strides = channels_last;
  x.Fill(7);
  w.Fill(8);
  b.Fill(9);
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(fn, {&x, &w, &b}, {&y})) {
      EXPECT_NE(c.name, "cuGraphLaunch") << "call " << i;
    }
  }
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 0);
  EXPECT_EQ(s.cuda_graph_replays, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs refused: node 'conv' "
                         "(aten.convolution.default): cuBLASLt reads its "
                         "operand A (the weight) through a contiguous copy"),
            std::string::npos)
      << explain;
  ASSERT_EQ(logged->size(), 1u);  // once per reason
  EXPECT_NE((*logged)[0].find("skipping cudagraphs due to node 'conv'"),
            std::string::npos)
      << (*logged)[0];
}

TEST_F(ReduceOverheadTest, CpuScalarInputIsRefused) {
  // b is a 0-dim CPU tensor beside CUDA a: uploaded on every call.
  constexpr char kScaled[] = R"pb(
    name: "scaled"
    placeholders {
      name: "a"
      meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
    }
    placeholders {
      name: "b"
      meta { dtype: FLOAT32 }
    }
    nodes {
      name: "mul"
      target: "aten.mul.Tensor"
      args { ref: "a" }
      args { ref: "b" }
    }
    outputs { ref: "mul" }
  )pb";
  gj_function* fn = Load(kScaled, GJ_MODE_REDUCE_OVERHEAD);
  FloatDeviceTensor a({4, 33}), b({}, kDLCPU), out({4, 33});
  a.Fill(1);
  b.values[0] = 2.5f;
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(fn, {&a, &b}, {&out})) {
      EXPECT_EQ(c.name, "cuLaunchKernel");
    }
  }
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs refused: input 1 ('b') is a CPU tensor"),
            std::string::npos)
      << explain;
}

TEST_F(ReduceOverheadTest, DefaultModeAndCpuCallsRecordNothing) {
  gj_function* plain = Load(kTwo, GJ_MODE_DEFAULT);
  FloatDeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(plain, {&a, &b}, {&sa, &mb})) {
      EXPECT_EQ(c.name, "cuLaunchKernel");
    }
  }
  EXPECT_EQ(Explain(plain).find("cuda graphs"), std::string::npos);
  gj_function* graphs = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  for (int i = 0; i < 3; ++i) CpuResultsOf(graphs, {&a, &b});
  EXPECT_TRUE(RecordingCudaDriver::Take().empty());
  const gj_function_stats s = Stats(graphs);
  EXPECT_EQ(s.cuda_graphs_recorded + s.cuda_graph_replays, 0);
}

// A replayed kernel with an index check (embedding's gather) writes the
// entry's graph fault words, whose address the captured node holds: a
// synchronizing replay reports its own failure, an asynchronous one is
// reported by the function's next call, and the graph is never re-captured
// or patched for it. Another function of the same graph (sharing the loaded
// module) never sees those failures.
TEST_F(ReduceOverheadTest, ReplayedIndexCheckIsReportedByItsFunction) {
  constexpr char kLookup[] = R"pb(
    name: "lookup"
    placeholders {
      name: "w"
      meta { dtype: FLOAT32 sizes: 10 sizes: 4 }
    }
    placeholders {
      name: "idx"
      meta { dtype: INT64 sizes: 5 }
    }
    nodes {
      name: "emb"
      target: "aten.embedding.default"
      args { ref: "w" }
      args { ref: "idx" }
    }
    outputs { ref: "emb" }
  )pb";
  gj_function* fn = Load(kLookup, GJ_MODE_REDUCE_OVERHEAD);
  gj_function* other = Load(kLookup, GJ_MODE_DEFAULT);
  FloatDeviceTensor w({10, 4}), out({5, 4});
  w.Fill(3);
  std::vector<int64_t> idx_values = {0, 2, 4, 6, 8};
  std::vector<int64_t> idx_shape = {5};
  DLTensor idx{};
  idx.data = idx_values.data();
  idx.device = {kDLCUDA, 0};
  idx.ndim = 1;
  idx.dtype = {kDLInt, 64, 1};
  idx.shape = idx_shape.data();
  auto call = [&](gj_function* f, bool sync) {
    const DLTensor* in[] = {&w.dl, &idx};
    const DLTensor* outs[] = {&out.dl};
    gj_call_options options;
    gj_call_options_init(&options);
    options.synchronize = sync ? 1 : 0;
    RecordingCudaDriver::Take();
    Err e{gj_function_call(f, in, 2, outs, 1, &options)};
    return e.message();
  };
  // 1: warm-up (plain launches, the call's own words); 2: capture, replay.
  ASSERT_EQ(call(fn, true), "");
  ASSERT_EQ(call(fn, true), "");
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(out.values[i * 4 + 1], w.values[idx_values[i] * 4 + 1]) << i;
  }
  // 3: a failing replay that synchronizes reports itself.
  idx_values[3] = 10;
  std::string e = call(fn, true);
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  EXPECT_NE(e.find("device-side check failed during this call"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("emb"), std::string::npos) << e;
  // 4: one that does not returns once launched...
  EXPECT_EQ(call(fn, false), "");
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  idx_values[3] = 1;
  // ...the other function of the same graph stays clean...
  EXPECT_EQ(call(other, true), "");
  // ...and this function's next call reports it, launching nothing.
  e = call(fn, false);
  EXPECT_NE(e.find("device-side check failed in an earlier call"),
            std::string::npos)
      << e;
  EXPECT_TRUE(RecordingCudaDriver::Take().empty());
  EXPECT_EQ(call(fn, true), "");
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 1);
  EXPECT_EQ(s.cuda_graph_replays, 4);
  EXPECT_EQ(s.cuda_graph_recaptures, 0) << Explain(fn);
}

// Each size key's graph writes fault words of its own (device_faults.h):
// replays of different keys in flight at once on different streams cannot
// report each other's failures. The words' address is the captured kernel's
// last launch value.
TEST_F(ReduceOverheadTest, EachSizeKeysGraphHasItsOwnFaultWords) {
  const std::string lookup = R"pb(
    name: "lookup"
    placeholders {
      name: "w"
      meta { dtype: FLOAT32 sizes: 10 sizes: 4 }
    }
    placeholders {
      name: "idx"
      meta { dtype: INT64 sizes: 5 }
    }
    nodes {
      name: "emb"
      target: "aten.embedding.default"
      args { ref: "w" }
      args { ref: "idx" }
    }
    outputs { ref: "emb" }
  )pb";
  gj_function* fn = Load(lookup, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC);
  FloatDeviceTensor w({10, 4}), out({6, 4});
  w.Fill(3);
  std::vector<int64_t> idx_values = {0, 2, 4, 6, 8, 1};
  std::vector<int64_t> idx_shape = {5};
  DLTensor idx{};
  idx.data = idx_values.data();
  idx.device = {kDLCUDA, 0};
  idx.ndim = 1;
  idx.dtype = {kDLInt, 64, 1};
  idx.shape = idx_shape.data();
  auto captured_words = [&](int64_t n) {
    idx_shape[0] = n;
    out.shape[0] = n;
    std::vector<uint64_t> words;
    for (int call = 0; call < 2; ++call) {  // warm-up, then the capture
      const DLTensor* in[] = {&w.dl, &idx};
      const DLTensor* outs[] = {&out.dl};
      RecordingCudaDriver::Take();
      Err e{gj_function_call(fn, in, 2, outs, 1, nullptr)};
      EXPECT_EQ(e.e, nullptr) << e.message();
    }
    // A kernel with index checks takes its fault word's address last
    // (CudaBackend's DescribeLaunch).
    for (const RecordedCall& c : RecordingCudaDriver::Take()) {
      if (c.name == "cuLaunchKernel" && !c.params.empty()) {
        words.push_back(c.params.back());
      }
    }
    return words;
  };
  const std::vector<uint64_t> five = captured_words(5);
  const std::vector<uint64_t> six = captured_words(6);
  ASSERT_FALSE(five.empty());
  ASSERT_FALSE(six.empty());
  for (uint64_t v : five) {
    EXPECT_EQ(std::count(six.begin(), six.end(), v), 0) << v;
  }
  EXPECT_EQ(Stats(fn).cuda_graphs_recorded, 2);
}

TEST_F(ReduceOverheadTest, OptionsAreChecked) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(
      gj_graph_from_text(ctx_, kTwo, sizeof(kTwo) - 1, nullptr, &graph));
  graphs_.push_back(graph);
  gj_function_options options;
  gj_function_options_init(&options);
  EXPECT_EQ(options.mode, GJ_MODE_DEFAULT);
  EXPECT_EQ(options.max_graphs_per_entry, 0);
  gj_function* fn = nullptr;
  std::memset(&options.mode, 0x7f, sizeof(options.mode));
  Err bad_mode{gj_function_create(ctx_, graph, &options, &fn)};
  EXPECT_EQ(bad_mode.code(), GJ_INVALID_ARGUMENT);
  EXPECT_NE(bad_mode.message().find("options->mode"), std::string::npos);
  gj_function_options_init(&options);
  options.max_graphs_per_entry = -1;
  Err bad_limit{gj_function_create(ctx_, graph, &options, &fn)};
  EXPECT_EQ(bad_limit.code(), GJ_INVALID_ARGUMENT);
  EXPECT_NE(bad_limit.message().find("max_graphs_per_entry"),
            std::string::npos);
  EXPECT_EQ(fn, nullptr);
}

// CudaGraphSet's own bookkeeping, below the C API: the pool cap, one call
// holding the set at a time, and the counters.
TEST(CudaGraphSetTest, PoolOverTheCapAndABusySet) {
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<CudaContextScope> scope = (*device)->MakeCurrent();
  ASSERT_TRUE(scope.ok()) << scope.status();
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.max_pool_bytes = 1024;
  policy.counters = &counters;
  {
    CudaGraphSet set(*device);
    const int64_t key[] = {7};
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    EXPECT_TRUE(lease->FirstCall());
    EXPECT_FALSE(lease->FirstCall());
    EXPECT_FALSE(set.TryAcquire(key, policy).has_value()) << "busy";
    absl::StatusOr<CUdeviceptr> pool = lease->Pool(512);
    ASSERT_TRUE(pool.ok()) << pool.status();
    EXPECT_EQ(*lease->Pool(512), *pool);  // the same memory every call
    EXPECT_EQ(counters.pool_bytes.load(), 512);
    absl::StatusOr<CUdeviceptr> over = lease->Pool(4096);
    EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(over.status().message().find("over the cap of 1.0 KiB"),
              std::string::npos)
        << over.status();
    set.Refuse(std::string(over.status().message()));
    lease.reset();
    EXPECT_NE(set.Describe().find("cuda graphs refused: its private pool "
                                  "would hold 4.0 KiB"),
              std::string::npos)
        << set.Describe();
  }
  EXPECT_EQ(counters.pool_bytes.load(), 0);  // freed with the set
}

}  // namespace
}  // namespace guardjit
