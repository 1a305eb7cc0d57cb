// reduce-overhead mode (runtime/cuda/cuda_graph.h) through the C API on the
// emulated device, with every launch and graph call recorded
// (recording_driver.h): the exact driver call sequence of each call (warm-up,
// capture, replay, node patches), size keys, eviction and refusals, and the
// results against the same function on CPU tensors. The emulated graph
// replays kernel nodes with the parameters they hold, so a pointer that was
// not patched really reads the old buffer (StalePointerReadsTheOldBuffer).

#include "runtime/cuda/cuda_graph.h"

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
#include "tests/cuda/cuda_graph_test_util.h"
#include "tests/cuda/recording_driver.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;

TEST_F(ReduceOverheadTest,
       WarmsUpThenRecordsThenReplaysThenPatchesOnlyMovedPointers) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  FloatDeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);

  // 1: warm-up, plain launches only.
  const std::vector<RecordedCall> warm = CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  const size_t kernels = warm.size();
  ASSERT_GE(kernels, 2u);
  EXPECT_EQ(RecordingCudaDriver::Names(warm),
            Repeat("cuLaunchKernel", kernels));
  size_t reading_a = 0;
  size_t reading_b = 0;
  size_t writing_mb = 0;
  for (const RecordedCall& c : warm) {
    reading_a += Holds(c, a.address());
    reading_b += Holds(c, b.address());
    writing_mb += Holds(c, mb.address());
  }
  ASSERT_GE(reading_a, 1u);
  ASSERT_GE(reading_b, 1u);
  ASSERT_LT(reading_b, kernels) << "a kernel that does not read b";
  ASSERT_GE(writing_mb, 1u);

  // 2: capture on the set's own stream, instantiate, launch on the call's.
  a.Fill(3);
  const std::vector<RecordedCall> record =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  EXPECT_EQ(
      RecordingCudaDriver::Names(record),
      Concat({{"cuStreamBeginCapture"},
              Repeat("cuLaunchKernel", kernels),
              {"cuStreamEndCapture", "cuGraphInstantiate", "cuGraphLaunch"}}));
  ASSERT_EQ(record.size(), kernels + 4);
  EXPECT_NE(record.front().stream, nullptr);  // not the legacy stream
  EXPECT_EQ(record.back().stream, nullptr);   // the call's

  // 3: same addresses, new values: one cuGraphLaunch.
  a.Fill(4);
  b.Fill(5);
  EXPECT_THAT(
      RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb})),
      ElementsAre("cuGraphLaunch"));

  // 4: b moved: only the nodes reading b are patched, with its new address.
  FloatDeviceTensor b2({4, 33});
  b2.Fill(6);
  const std::vector<RecordedCall> moved_b =
      CallAndCheck(fn, {&a, &b2}, {&sa, &mb});
  EXPECT_EQ(RecordingCudaDriver::Names(moved_b),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", reading_b),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < moved_b.size(); ++i) {
    EXPECT_TRUE(Holds(moved_b[i], b2.address())) << i;
    EXPECT_FALSE(Holds(moved_b[i], b.address())) << i;
  }

  // 5: a moved: the nodes reading a.
  FloatDeviceTensor a2({4, 33});
  a2.Fill(7);
  const std::vector<RecordedCall> moved =
      CallAndCheck(fn, {&a2, &b2}, {&sa, &mb});
  EXPECT_EQ(RecordingCudaDriver::Names(moved),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", reading_a),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < moved.size(); ++i) {
    EXPECT_TRUE(Holds(moved[i], a2.address())) << i;
    EXPECT_FALSE(Holds(moved[i], a.address())) << i;
  }

  // 6: a new destination for output 1: the nodes writing it.
  FloatDeviceTensor mb2({4, 33});
  const std::vector<RecordedCall> dest =
      CallAndCheck(fn, {&a2, &b2}, {&sa, &mb2});
  EXPECT_EQ(RecordingCudaDriver::Names(dest),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", writing_mb),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < dest.size(); ++i) {
    EXPECT_TRUE(Holds(dest[i], mb2.address())) << i;
  }

  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 1);
  EXPECT_EQ(s.cuda_graph_replays, 5);
  EXPECT_EQ(s.cuda_graph_pointer_updates,
            static_cast<int64_t>(reading_a + reading_b + writing_mb));
  EXPECT_EQ(s.cuda_graph_recaptures, 0);
  EXPECT_EQ(s.cuda_graph_evictions, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs: 1 recorded"), std::string::npos)
      << explain;
  EXPECT_NE(explain.find("5 replays"), std::string::npos) << explain;
}

TEST_F(ReduceOverheadTest, StalePointerReadsTheOldBuffer) {
  // What makes the other tests able to fail: without its patch, a replayed
  // node reads the buffer it was captured with.
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  FloatDeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  const std::vector<float> old_sums = sa.values;
  FloatDeviceTensor a2({4, 33});
  a2.Fill(9);
  RecordingCudaDriver::DropNodePatches(true);
  const DLTensor* in[] = {&a2.dl, &b.dl};
  const DLTensor* out[] = {&sa.dl, &mb.dl};
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, nullptr));
  EXPECT_EQ(sa.values, old_sums);
}

TEST_F(ReduceOverheadTest, ReplaysOnTheCallersStream) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  const CudaDriver* driver = RecordingCudaDriver::Get();
  CUstream s1 = nullptr;
  CUstream s2 = nullptr;
  ASSERT_EQ(driver->cuStreamCreate(&s1, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver->cuStreamCreate(&s2, 0), CUDA_SUCCESS);
  FloatDeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s1);
  const std::vector<RecordedCall> record =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s1);
  ASSERT_FALSE(record.empty());
  EXPECT_EQ(record.back().name, "cuGraphLaunch");
  EXPECT_EQ(record.back().stream, s1);
  a.Fill(3);
  const std::vector<RecordedCall> replay =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s2);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].name, "cuGraphLaunch");
  EXPECT_EQ(replay[0].stream, s2);
  driver->cuStreamDestroy(s1);
  driver->cuStreamDestroy(s2);
}

TEST_F(ReduceOverheadTest, DynamicEntryRecordsOneGraphPerSizeKey) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC);
  auto call = [&](int64_t cols) {
    FloatDeviceTensor a({4, cols}), b({4, cols}), sa({4}), mb({4, cols});
    a.Fill(static_cast<uint32_t>(cols));
    b.Fill(static_cast<uint32_t>(cols + 1));
    return RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb}));
  };
  auto is_plain = [](const std::vector<std::string>& names) {
    return !names.empty() &&
           std::all_of(names.begin(), names.end(), [](const std::string& n) {
             return n == "cuLaunchKernel";
           });
  };
  auto is_record = [](const std::vector<std::string>& names) {
    return names.size() > 4 && names.front() == "cuStreamBeginCapture" &&
           names.back() == "cuGraphLaunch";
  };
  EXPECT_TRUE(is_plain(call(5)));
  EXPECT_TRUE(is_record(call(5)));
  EXPECT_TRUE(is_plain(call(17)));  // a new key warms up
  EXPECT_TRUE(is_record(call(17)));
  // The old key replays; new tensors every call, so inputs and outputs are
  // patched first.
  const std::vector<std::string> again = call(5);
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again.back(), "cuGraphLaunch");
  EXPECT_EQ(std::count(again.begin(), again.end(), "cuStreamBeginCapture"), 0);
  EXPECT_EQ(std::count(again.begin(), again.end(), "cuLaunchKernel"), 0);
  const gj_function_stats s = Stats(fn);
  // One entry for the CUDA calls (CpuResults made the other).
  EXPECT_EQ(s.cache_entries, 2) << Explain(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 2);
  EXPECT_EQ(s.cuda_graph_replays, 3);
  EXPECT_GT(s.cuda_graph_pool_bytes, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("size keys"), std::string::npos) << explain;
}

TEST_F(ReduceOverheadTest, EvictsTheLeastRecentlyUsedKeyPastTheLimit) {
  gj_function* fn =
      Load(kTwo, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC, /*max_graphs=*/2);
  auto call = [&](int64_t cols) {
    FloatDeviceTensor a({4, cols}), b({4, cols}), sa({4}), mb({4, cols});
    a.Fill(static_cast<uint32_t>(cols));
    b.Fill(static_cast<uint32_t>(cols + 1));
    return RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb}));
  };
  for (int64_t cols : {5, 17}) {
    call(cols);
    call(cols);
  }
  EXPECT_EQ(Stats(fn).cuda_graph_evictions, 0);
  // A third key: the first call of it evicts key 5's graph.
  const std::vector<std::string> third = call(33);
  EXPECT_EQ(std::count(third.begin(), third.end(), "cuGraphExecDestroy"), 1);
  EXPECT_EQ(std::count(third.begin(), third.end(), "cuGraphDestroy"), 1);
  call(33);
  gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graph_evictions, 1);
  EXPECT_EQ(s.cuda_graphs_recorded, 3);
  // Key 5 comes back: warm-up again, then a re-capture.
  call(5);
  const std::vector<std::string> back = call(5);
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(back.front(), "cuStreamBeginCapture");
  s = Stats(fn);
  EXPECT_EQ(s.cuda_graph_recaptures, 1);
  EXPECT_EQ(s.cuda_graph_evictions, 2);
  EXPECT_EQ(s.cuda_graphs_recorded, 4);
}

// The MLP's products run on cuBLASLt, which the recording does not capture.
// conv2d(x, w, b, padding 1): im2col + cuBLASLt with buffers from the
// call's allocator, which a capture cannot allocate from.
}  // namespace
}  // namespace guardjit
