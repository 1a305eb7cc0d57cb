// Device-side index checks on the emulated device belong to the function
// and the call that failed them (jit/device_faults.h): two functions built
// from the same graph share one loaded module but not its fault words, a
// synchronizing call reports exactly its own failure, and an earlier call's
// failure is reported with that call's sizes.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

// embedding(w, idx): the gather's index check runs on the device.
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

class DeviceFaultsTest : public EmulatedFunctionTest {
 protected:
  // One call of `fn` on w [rows, 4] and idx = {0, 1, bad_or_2, 3, 4}.
  std::string Call(gj_function* fn, int64_t rows, int64_t index, bool sync) {
    DeviceTensor<float> w({rows, 4}, F32(), kDLCUDA);
    DeviceTensor<int64_t> idx({5}, I64(), kDLCUDA);
    Fill(w.values(), w.count, 11);
    for (int i = 0; i < 5; ++i) idx.values()[i] = i;
    idx.values()[2] = index;
    DeviceTensor<float> out({5, 4}, F32(), kDLCUDA);
    const DLTensor* in[] = {&w.dl, &idx.dl};
    const DLTensor* outs[] = {&out.dl};
    gj_call_options options;
    gj_call_options_init(&options);
    options.synchronize = sync ? 1 : 0;
    Err e{gj_function_call(fn, in, 2, outs, 1, &options)};
    if (e.e != nullptr) return e.message();
    if (index >= 0 && index < rows) {
      for (int i = 0; i < 5; ++i) {
        const int64_t row = idx.values()[i];
        for (int j = 0; j < 4; ++j) {
          if (out.values()[i * 4 + j] != w.values()[row * 4 + j]) {
            return "wrong values";
          }
        }
      }
    }
    return "";
  }
};

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(DeviceFaultsTest, TwoFunctionsOfOneGraphDoNotShareFaults) {
  gj_function* first = Load(kLookup);
  ASSERT_EQ(Call(first, 10, 1, true), "");
  const int64_t loads = EmulatedCudaDriver::counters().module_loads;
  gj_function* second = Load(kLookup);
  ASSERT_EQ(Call(second, 10, 1, true), "");
  // The second function runs the first's loaded module (same source): the
  // fault words must not come with it.
  EXPECT_EQ(EmulatedCudaDriver::counters().module_loads, loads);

  // Without synchronize the failing call returns once enqueued...
  EXPECT_EQ(Call(first, 10, 12, false), "");
  // ...the other function's next calls are clean...
  EXPECT_EQ(Call(second, 10, 1, false), "");
  EXPECT_EQ(Call(second, 10, 1, true), "");
  // ...and the failing function's next call reports it, naming the node.
  const std::string earlier = Call(first, 10, 1, false);
  EXPECT_TRUE(Has(earlier, "device-side check failed in an earlier call"))
      << earlier;
  EXPECT_TRUE(Has(earlier, "emb")) << earlier;
  EXPECT_TRUE(Has(earlier, "out of range")) << earlier;
  EXPECT_EQ(Call(first, 10, 1, true), "");

  // A synchronizing call reports its own failure and leaves nothing behind.
  const std::string during = Call(second, 10, -11, true);
  EXPECT_TRUE(Has(during, "device-side check failed during this call"))
      << during;
  EXPECT_TRUE(Has(during, "emb")) << during;
  EXPECT_EQ(Call(first, 10, 1, true), "");
  EXPECT_EQ(Call(second, 10, 1, true), "");
}

// Every call launches with words of its own, so a clean call never takes
// another thread's failure, and each synchronizing call gets exactly its
// own outcome. (With the module's shared words a call's start could take a
// failure another thread had just written; the emulator's synchronous
// launches make that window small, so this guards rather than reproduces.)
TEST_F(DeviceFaultsTest, ConcurrentSynchronizingCallsReportTheirOwnFaults) {
  gj_function* fn = Load(kLookup);
  constexpr int kThreads = 4, kCalls = 12;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const bool bad = (t + c) % 2 == 0;
        const std::string got = Call(fn, 10, bad ? 10 : 9, true);
        const bool ok = bad ? Has(got, "failed during this call") : got.empty();
        if (!ok) {
          failures[t] = std::string(bad ? "missed: " : "stray: ") + got;
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << t;
}

// An earlier call's failure is reported with the sizes of that call, not of
// the call that reports it (one dynamic entry serves both).
TEST_F(DeviceFaultsTest, EarlierFaultNamesTheSizesOfItsCall) {
  gj_function* fn = Load(kLookup, GJ_DYNAMIC_DYNAMIC);
  EXPECT_EQ(Call(fn, 10, 10, false), "");
  const std::string earlier = Call(fn, 17, 3, false);
  EXPECT_TRUE(Has(earlier, "in an earlier call")) << earlier;
  EXPECT_TRUE(Has(earlier, "= 10")) << earlier;
  EXPECT_FALSE(Has(earlier, "= 17")) << earlier;
  EXPECT_EQ(Call(fn, 17, 16, true), "");
}

// Fault words cost an event per asynchronous call (the mark after its
// launches), none per synchronizing one; a program without checks takes no
// words and records no such event either way. (The caching allocator
// records an event per free too, alike in both kinds of call: the tests
// compare the two.)
TEST_F(DeviceFaultsTest, OnlyProgramsWithChecksMarkTheirCalls) {
  auto events = [] { return EmulatedCudaDriver::counters().event_records; };
  gj_function* lookup = Load(kLookup);
  ASSERT_EQ(Call(lookup, 10, 1, true), "");
  int64_t before = events();
  ASSERT_EQ(Call(lookup, 10, 1, false), "");
  const int64_t lookup_async = events() - before;
  before = events();
  ASSERT_EQ(Call(lookup, 10, 1, true), "");
  const int64_t lookup_sync = events() - before;
  EXPECT_EQ(lookup_async - lookup_sync, 1);

  gj_function* scale = Load(R"pb(
    name: "scale"
    placeholders {
      name: "a"
      meta { dtype: FLOAT32 sizes: 8 }
    }
    nodes {
      name: "mul"
      target: "aten.mul.Tensor"
      args { ref: "a" }
      args { f: 3 }
    }
    outputs { ref: "mul" }
  )pb");
  DeviceTensor<float> a({8}, F32(), kDLCUDA), out({8}, F32(), kDLCUDA);
  Fill(a.values(), a.count, 5);
  const DLTensor* in[] = {&a.dl};
  const DLTensor* outs[] = {&out.dl};
  gj_call_options sync;
  gj_call_options_init(&sync);
  sync.synchronize = 1;
  ASSERT_GJ_OK(gj_function_call(scale, in, 1, outs, 1, &sync));
  const int64_t launches = EmulatedCudaDriver::counters().launches;
  before = events();
  ASSERT_GJ_OK(gj_function_call(scale, in, 1, outs, 1, nullptr));
  const int64_t scale_async = events() - before;
  before = events();
  ASSERT_GJ_OK(gj_function_call(scale, in, 1, outs, 1, &sync));
  const int64_t scale_sync = events() - before;
  EXPECT_EQ(scale_async, scale_sync);
  EXPECT_EQ(EmulatedCudaDriver::counters().launches - launches, 2);
  for (int i = 0; i < 8; ++i) {
    EXPECT_FLOAT_EQ(out.values()[i], a.values()[i] * 3) << i;
  }
}

}  // namespace
}  // namespace guardjit
