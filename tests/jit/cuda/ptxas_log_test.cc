#include "jit/cuda/ptxas_log.h"

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// NVRTC 13.0's log for two kernels compiled with -Xptxas=-v, with a noinline
// device function whose stack frame must not be charged to a kernel.
constexpr char kLog[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Function properties for helper\n"
    "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 4 bytes "
    "spill loads\n"
    "ptxas info    : Compiling entry function 'red' for 'sm_80'\n"
    "ptxas info    : Function properties for red\n"
    "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 20 "
    "bytes spill loads\n"
    "ptxas info    : Used 22 registers, used 1 barriers, 128 bytes smem, 368 "
    "bytes cmem[0]\n"
    "ptxas info    : Compile time = 5.564 ms\n"
    "ptxas info    : Compiling entry function '_Z3addPKfPfi' for 'sm_80'\n"
    "ptxas info    : Function properties for helper\n"
    "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 4 bytes "
    "spill loads\n"
    "ptxas info    : Function properties for _Z3addPKfPfi\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers, 372 bytes cmem[0]\n";

TEST(PtxasLogTest, ParsesEachEntryFunction) {
  const std::vector<CudaKernelResources> kernels = ParsePtxasLog(kLog);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "red");
  EXPECT_EQ(kernels[0].registers, 22);
  EXPECT_EQ(kernels[0].shared_memory_bytes, 128);
  EXPECT_EQ(kernels[0].stack_frame_bytes, 16);
  EXPECT_EQ(kernels[0].spill_store_bytes, 12);
  EXPECT_EQ(kernels[0].spill_load_bytes, 20);
  EXPECT_EQ(kernels[1].name, "_Z3addPKfPfi");
  EXPECT_EQ(kernels[1].registers, 10);
  EXPECT_EQ(kernels[1].shared_memory_bytes, 0);
  EXPECT_EQ(kernels[1].stack_frame_bytes, 0);
  EXPECT_EQ(kernels[1].spill_store_bytes, 0);
}

TEST(PtxasLogTest, NoEntriesInOtherText) {
  EXPECT_TRUE(ParsePtxasLog("").empty());
  EXPECT_TRUE(
      ParsePtxasLog("guardjit.cu(3): error: expected a \";\"\n").empty());
  EXPECT_TRUE(ParsePtxasLog("ptxas info    : Used 3 registers\n").empty());
}

}  // namespace
}  // namespace guardjit
