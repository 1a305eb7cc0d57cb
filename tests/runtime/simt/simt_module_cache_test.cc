#include "runtime/simt/simt_module_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "gtest/gtest.h"
#include "runtime/simt/simt_emulator.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX

namespace guardjit {
namespace {

constexpr char kScale[] = R"(
extern "C" __global__ void scale(float* p, float f, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}
)";

// A temporary directory with a cache in it and a host compiler that counts
// its runs (a script around GJ_HOST_CXX), so a test sees what compiled.
class SimtModuleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gj_simt_cache_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    cache_dir_ = root_ + "/cache";
    count_file_ = root_ + "/runs";
    compiler_ = root_ + "/counting-c++";
    std::ofstream script(compiler_);
    script << "#!/bin/sh\necho run >> '" << count_file_ << "'\nexec '"
           << GJ_HOST_CXX << "' \"$@\"\n";
    script.close();
    ASSERT_EQ(chmod(compiler_.c_str(), 0755), 0);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  SimtOptions Options() const {
    SimtOptions options;
    options.host_compiler = compiler_;
    options.cache_dir = cache_dir_;
    return options;
  }

  int CompilerRuns() const {
    std::ifstream in(count_file_);
    int runs = 0;
    for (std::string line; std::getline(in, line);) ++runs;
    return runs;
  }

  std::vector<std::filesystem::path> Entries() const {
    std::vector<std::filesystem::path> entries;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cache_dir_, ec)) {
      entries.push_back(e.path());
    }
    return entries;
  }

  // Compiles kScale with `options`, runs it on {1, 2, 3} times `f`.
  void CompileAndRun(const SimtOptions& options, float f) {
    auto module = SimtModule::Compile(kScale, {"scale"}, options);
    ASSERT_TRUE(module.ok()) << module.status();
    float data[3] = {1, 2, 3};
    float* p = data;
    int n = 3;
    void* params[] = {&p, &f, &n};
    ASSERT_TRUE((*module)->Launch("scale", {1, 1, 1}, {32, 1, 1}, params).ok());
    EXPECT_EQ(data[0], 1 * f);
    EXPECT_EQ(data[1], 2 * f);
    EXPECT_EQ(data[2], 3 * f);
  }

  std::string root_, cache_dir_, count_file_, compiler_;
};

TEST_F(SimtModuleCacheTest, ASecondCompileOfTheSameSourceLoadsTheEntry) {
  CompileAndRun(Options(), 2.0f);
  EXPECT_EQ(CompilerRuns(), 1);
  ASSERT_EQ(Entries().size(), 1u);
  CompileAndRun(Options(), 3.0f);
  CompileAndRun(Options(), 4.0f);
  EXPECT_EQ(CompilerRuns(), 1) << "the later compiles should hit the cache";
}

TEST_F(SimtModuleCacheTest, ModulesLoadedFromOneEntryAreSeparateModules) {
  CompileAndRun(Options(), 2.0f);
  // Two live modules from the same entry: each its own copy of the shared
  // object (dlopen of one path would hand back the first), both launchable
  // at once from two threads.
  auto a = SimtModule::Compile(kScale, {"scale"}, Options());
  auto b = SimtModule::Compile(kScale, {"scale"}, Options());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(CompilerRuns(), 1);
  std::vector<float> da(1000, 1.0f), db(1000, 1.0f);
  auto run = [](SimtModule* m, std::vector<float>* d, float f) {
    float* p = d->data();
    int n = static_cast<int>(d->size());
    void* params[] = {&p, &f, &n};
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(m->Launch("scale", {8, 1, 1}, {128, 1, 1}, params).ok());
    }
  };
  std::thread ta(run, a->get(), &da, 2.0f);
  std::thread tb(run, b->get(), &db, 0.5f);
  ta.join();
  tb.join();
  EXPECT_EQ(da[999], 1048576.0f);
  EXPECT_EQ(db[999], 1.0f / 1048576.0f);
}

TEST_F(SimtModuleCacheTest, OtherSourceFlagsOrCompilerMiss) {
  CompileAndRun(Options(), 2.0f);
  // Another kernel body.
  auto other = SimtModule::Compile(
      R"(extern "C" __global__ void scale(float* p, float f, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * f + 0.0f;
})",
      {"scale"}, Options());
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(CompilerRuns(), 2);
  // Other flags.
  SimtOptions o2 = Options();
  o2.extra_flags = {"-O2"};
  CompileAndRun(o2, 2.0f);
  EXPECT_EQ(CompilerRuns(), 3);
  // The compiler changed (its mtime): the old entries miss.
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, compiler_.c_str(), times, 0), 0);
  CompileAndRun(Options(), 2.0f);
  EXPECT_EQ(CompilerRuns(), 4);
  EXPECT_EQ(Entries().size(), 4u);
}

TEST_F(SimtModuleCacheTest, CorruptOrTruncatedEntriesAreMissesAndReplaced) {
  CompileAndRun(Options(), 2.0f);
  ASSERT_EQ(Entries().size(), 1u);
  const std::filesystem::path entry = Entries()[0];
  const auto size = std::filesystem::file_size(entry);
  int expected_runs = 1;
  // Truncated inside the key, inside the shared object, to nothing; then
  // garbage of the same size.
  for (uintmax_t keep : {uintmax_t{20}, size - 100, uintmax_t{0}}) {
    std::filesystem::resize_file(entry, keep);
    CompileAndRun(Options(), 3.0f);
    EXPECT_EQ(CompilerRuns(), ++expected_runs) << "kept " << keep;
    EXPECT_EQ(std::filesystem::file_size(entry), size) << "not replaced";
  }
  {
    std::ofstream garbage(entry, std::ios::binary | std::ios::trunc);
    garbage << std::string(size, 'x');
  }
  CompileAndRun(Options(), 5.0f);
  EXPECT_EQ(CompilerRuns(), ++expected_runs);
  CompileAndRun(Options(), 6.0f);
  EXPECT_EQ(CompilerRuns(), expected_runs) << "the replaced entry hits";
}

TEST_F(SimtModuleCacheTest, AKeyThatHashesAlikeButDiffersIsAMiss) {
  auto cache = SimtModuleCache::Open(cache_dir_);
  ASSERT_TRUE(cache.has_value());
  const std::string library = root_ + "/lib.so";
  {
    std::ofstream out(library, std::ios::binary);
    out << "shared object bytes";
  }
  cache->Store("key one", library);
  // Another key stored under the first one's file name (as a collision of
  // the 64-bit name would): its lookup compares the whole key and misses.
  std::filesystem::rename(cache->EntryPath("key one"),
                          cache->EntryPath("key two"));
  EXPECT_FALSE(cache->Fetch("key two", root_ + "/out.so"));
  cache->Store("key two", library);
  ASSERT_TRUE(cache->Fetch("key two", root_ + "/out.so"));
  std::ifstream in(root_ + "/out.so", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}),
            "shared object bytes");
}

TEST_F(SimtModuleCacheTest, ManyThreadsStoringTheSameKeyNeverTearAnEntry) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) {
        auto module = SimtModule::Compile(kScale, {"scale"}, Options());
        if (!module.ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Entries().size(), 1u) << "temporary files left behind";
  CompileAndRun(Options(), 2.0f);
}

TEST_F(SimtModuleCacheTest, NoDirectoryNoCache) {
  const char* env = std::getenv("GJ_SIMT_CACHE_DIR");
  const std::string saved = env == nullptr ? "" : env;
  unsetenv("GJ_SIMT_CACHE_DIR");
  absl::Cleanup restore = [&saved] {
    if (!saved.empty()) setenv("GJ_SIMT_CACHE_DIR", saved.c_str(), 1);
  };
  EXPECT_FALSE(SimtModuleCache::Open("").has_value());
  SimtOptions options = Options();
  options.cache_dir.clear();
  CompileAndRun(options, 2.0f);
  CompileAndRun(options, 2.0f);
  EXPECT_EQ(CompilerRuns(), 2);
  EXPECT_TRUE(Entries().empty());
}

TEST_F(SimtModuleCacheTest, AnUnknownCompilerHasNoIdentity) {
  EXPECT_EQ(SimtModuleCache::CompilerIdentity("no-such-compiler-gj"), "");
  EXPECT_NE(SimtModuleCache::CompilerIdentity(compiler_), "");
  EXPECT_NE(SimtModuleCache::CompilerIdentity("sh"), "");
}

}  // namespace
}  // namespace guardjit
