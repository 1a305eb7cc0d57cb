// The SIMT emulator's launcher contract (runtime/simt/simt_emulation_header.h)
// without the launcher: CUDA C compiled here by the host compiler against
// SimtEmulationHeader() with SimtEntryPoints appended, loaded with dlopen,
// and its entry point called on this thread with a SimtThreadState and
// SimtOps of the test's own, so each builtin variable, argument and
// barrier/warp call is seen crossing the contract exactly as declared.

#include "runtime/simt/simt_emulation_header.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_paths.h"  // GJ_HOST_CXX

namespace guardjit {
namespace {

using ::testing::HasSubstr;

struct Compiled {
  bool ok = false;
  std::string log;
  void* handle = nullptr;
};

// Compiles `cuda_source` as the SIMT emulator does (the header in a file
// beside it, the entry points appended) and dlopens it.
Compiled CompileModule(const std::string& cuda_source,
                       const std::string& entry_points) {
  std::string dir =
      (std::filesystem::temp_directory_path() / "gj_simt_header_test_XXXXXX")
          .string();
  Compiled out;
  if (mkdtemp(dir.data()) == nullptr) {
    out.log = "mkdtemp failed";
    return out;
  }
  std::ofstream(dir + "/gj_simt_emulation.h")
      << std::string(SimtEmulationHeader());
  // The header twice: it is include-guarded.
  std::ofstream(dir + "/module.cc")
      << "#include \"gj_simt_emulation.h\"\n#include \"gj_simt_emulation.h\"\n"
      << cuda_source << "\n"
      << entry_points;
  const std::string command = absl::StrCat(
      "'", GJ_HOST_CXX,
      "' -std=c++17 -shared -fPIC -O1 -fno-math-errno -w -x c++ '", dir,
      "/module.cc' -o '", dir, "/module.so' > '", dir, "/log' 2>&1");
  const int status = std::system(command.c_str());
  std::stringstream log;
  log << std::ifstream(dir + "/log").rdbuf();
  out.log = log.str();
  if (status == 0) {
    out.handle = dlopen((dir + "/module.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    out.ok = out.handle != nullptr;
    if (!out.ok) out.log += dlerror();
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return out;
}

constexpr char kProbe[] = R"(
extern "C" __global__ void probe(long long* out, long long scale, int n) {
  out[0] = threadIdx.x;
  out[1] = threadIdx.y;
  out[2] = threadIdx.z;
  out[3] = blockIdx.x;
  out[4] = blockIdx.y;
  out[5] = blockDim.x;
  out[6] = gridDim.z;
  out[7] = warpSize;
  out[8] = scale * n;
  out[9] = __syncthreads_count(7);
  out[10] = __syncthreads_or(0);
  out[11] = __shfl_sync(0xffffffffu, 41, 3);
  out[12] = __shfl_xor_sync(0xffffffffu, 5LL, 1);
  out[13] = __ballot_sync(0x0000ffffu, 1);
  out[14] = (long long)(sqrtf(16.0f) + fmaxf(2.0f, 3.0f));
}
extern "C" __global__ void nothing() {}
)";

// What the kernel called through the ops, and the state they were given.
struct Call {
  const SimtThreadState* state;
  int op;
  long long arg;  // predicate, or value
  int src;
  unsigned mask;
};
std::vector<Call> g_calls;

int SyncThreads(SimtThreadState* state, int op, int predicate) {
  g_calls.push_back({state, op, predicate, -1, 0});
  return 100 * op + predicate;
}
unsigned long long Warp(SimtThreadState* state, int op, uint32_t mask,
                        unsigned long long value, int src_lane) {
  g_calls.push_back(
      {state, 10 + op, static_cast<long long>(value), src_lane, mask});
  if (op == kSimtWarpShuffle) return value * 10 + src_lane;
  if (op == kSimtWarpBallot) return mask & 0xabcd;
  return 0;
}

TEST(SimtEmulationHeaderTest, EntryPointRunsTheKernelOnTheGivenState) {
  const Compiled module =
      CompileModule(kProbe, SimtEntryPoints({"probe", "nothing"}));
  ASSERT_TRUE(module.ok) << module.log;
  using Entry = void (*)(SimtThreadState*, void* const*);
  auto entry = reinterpret_cast<Entry>(
      dlsym(module.handle, SimtEntrySymbol("probe").c_str()));
  auto arity = reinterpret_cast<int (*)()>(
      dlsym(module.handle, SimtAritySymbol("probe").c_str()));
  auto nothing_arity = reinterpret_cast<int (*)()>(
      dlsym(module.handle, SimtAritySymbol("nothing").c_str()));
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(arity, nullptr);
  ASSERT_NE(nothing_arity, nullptr);
  EXPECT_EQ(arity(), 3);
  EXPECT_EQ(nothing_arity(), 0);

  const SimtOps ops{&SyncThreads, &Warp};
  SimtThreadState state;
  state.thread_idx = {5, 2, 1};
  state.block_idx = {7, 3, 0};
  state.block_dim = {8, 4, 2};
  state.grid_dim = {9, 6, 4};
  state.lane = 5;
  state.ops = &ops;
  std::vector<long long> out(15, -1);
  long long* out_ptr = out.data();
  long long scale = 6;
  int n = 7;
  void* params[] = {&out_ptr, &scale, &n};
  g_calls.clear();
  entry(&state, params);

  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], 1);
  EXPECT_EQ(out[3], 7);
  EXPECT_EQ(out[4], 3);
  EXPECT_EQ(out[5], 8);
  EXPECT_EQ(out[6], 4);
  EXPECT_EQ(out[7], 32);
  EXPECT_EQ(out[8], 42) << "arguments passed from *params[i]";
  EXPECT_EQ(out[9], 7) << "__syncthreads_count: kSimtSyncCount, predicate";
  EXPECT_EQ(out[10], 100 * kSimtSyncOr);
  // __shfl_sync(.., 41, 3) from lane 5: source lane 3; the value's bits.
  EXPECT_EQ(out[11], 413);
  // __shfl_xor_sync(.., 5, 1) from lane 5: source lane 4.
  EXPECT_EQ(out[12], 54);
  EXPECT_EQ(out[13], 0xabcd & 0xffff);
  EXPECT_EQ(out[14], 7) << "libm through the header's declarations";

  ASSERT_EQ(g_calls.size(), 5u);
  for (const Call& c : g_calls) {
    EXPECT_EQ(c.state, &state) << "the ops get the thread's own state";
  }
  EXPECT_EQ(g_calls[0].op, kSimtSyncCount);
  EXPECT_EQ(g_calls[0].arg, 7);
  EXPECT_EQ(g_calls[1].op, kSimtSyncOr);
  EXPECT_EQ(g_calls[2].op, 10 + kSimtWarpShuffle);
  EXPECT_EQ(g_calls[2].src, 3);
  EXPECT_EQ(g_calls[2].mask, 0xffffffffu);
  EXPECT_EQ(g_calls[3].src, 4);
  EXPECT_EQ(g_calls[4].op, 10 + kSimtWarpBallot);
  EXPECT_EQ(g_calls[4].arg, 1) << "the ballot's predicate as 0 or 1";
  EXPECT_EQ(g_calls[4].mask, 0x0000ffffu);
  dlclose(module.handle);
}

TEST(SimtEmulationHeaderTest, SymbolNamesAndEntryPointText) {
  EXPECT_EQ(SimtEntrySymbol("gj_kernel_0"), "gj_simt_entry_gj_kernel_0");
  EXPECT_EQ(SimtAritySymbol("gj_kernel_0"), "gj_simt_arity_gj_kernel_0");
  const std::string text = SimtEntryPoints({"a", "b"});
  for (const char* symbol : {"gj_simt_entry_a", "gj_simt_arity_a",
                             "gj_simt_entry_b", "gj_simt_arity_b"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(symbol, "(")));
  }
  // C linkage: dlsym finds them by these names.
  EXPECT_THAT(text, HasSubstr("extern \"C\" void gj_simt_entry_a("));
  EXPECT_THAT(text, HasSubstr("extern \"C\" int gj_simt_arity_b("));
  // The layout check names this build's sizes and offsets.
  EXPECT_THAT(text, HasSubstr(absl::StrCat("sizeof(::gj_simt::State) == ",
                                           sizeof(SimtThreadState))));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("__builtin_offsetof(::gj_simt::State, "
                                     "ops) == ",
                                     offsetof(SimtThreadState, ops))));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("sizeof(::gj_simt::Ops) == ",
                                           sizeof(SimtOps))));
  // No kernels: the layout check alone.
  EXPECT_EQ(SimtEntryPoints({}).find("extern"), std::string::npos);

  const absl::string_view header = SimtEmulationHeader();
  EXPECT_THAT(std::string(header), HasSubstr("#define GJ_SIMT_EMULATION"));
  EXPECT_THAT(std::string(header), HasSubstr("__syncthreads"));
}

// The appended layout check fails the compile when the launcher's struct
// and the header's disagree (here: the entry points claiming another size).
TEST(SimtEmulationHeaderTest, LayoutMismatchFailsTheCompile) {
  const std::string good = SimtEntryPoints({"nothing"});
  const std::string size_check =
      absl::StrCat("sizeof(::gj_simt::State) == ", sizeof(SimtThreadState));
  ASSERT_NE(good.find(size_check), std::string::npos);
  const std::string bad = absl::StrReplaceAll(
      good, {{size_check, absl::StrCat("sizeof(::gj_simt::State) == ",
                                       sizeof(SimtThreadState) + 8)}});
  const Compiled module =
      CompileModule("extern \"C\" __global__ void nothing() {}", bad);
  EXPECT_FALSE(module.ok);
  EXPECT_THAT(module.log,
              HasSubstr("the emulation header does not match the launcher"));
  if (module.handle != nullptr) dlclose(module.handle);
}

}  // namespace
}  // namespace guardjit
