// The persistent compile cache through the C API (issue #31):
// gj_context_options.cache_dir / max_cache_bytes / cache_key,
// gj_context_get_compile_cache_stats, gj_function_stats.entries_loaded,
// explain()'s "loaded from the disk cache", gj_cache_dir_inspect/clear.
// tests/cli/compile_cache_test.sh covers separate processes.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/function.h"
#include "guardjit/guardjit.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR

namespace {

using gjtest::ContextPtr;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

namespace fs = std::filesystem;

class CompileCacheCapiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("gj_capi_cache_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ContextPtr Context(const char* dir, const char* key = nullptr,
                     int64_t max_bytes = -1) {
    gj_context_options options;
    gj_context_options_init(&options);
    options.cache_dir = dir;
    options.cache_key = key;
    if (max_bytes >= 0) options.max_cache_bytes = max_bytes;
    gj_context* context = nullptr;
    EXPECT_TRUE(Ok(gj_context_create(&options, &context)));
    return ContextPtr(context);
  }

  // The attention example on a fixed input, in `context`: its output, and
  // the function's stats and explain() text.
  struct Result {
    std::vector<float> out;
    gj_function_stats stats;
    std::string explain;
  };
  Result RunAttention(gj_context* context) {
    Result r;
    gj_graph* raw = nullptr;
    EXPECT_TRUE(Ok(gj_graph_from_file(
        context, GJ_EXAMPLES_DIR "/attention.pbtxt", nullptr, &raw)));
    GraphPtr graph(raw);
    FunctionPtr f = gjtest::MakeFunction(context, graph.get());
    std::vector<float> x(2 * 4 * 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * (i % 17) - 0.05f;
    HostTensor<float> in({2, 4, 8}, x);
    HostTensor<float> out({2, 4, 8}, std::vector<float>(64));
    DLTensor* ins[] = {in.dl()};
    DLTensor* outs[] = {out.dl()};
    EXPECT_TRUE(Ok(gj_function_call(f.get(), ins, 1, outs, 1, nullptr)));
    r.out = out.buffer();
    gj_function_stats_init(&r.stats);
    EXPECT_TRUE(Ok(gj_function_get_stats(f.get(), &r.stats)));
    char* text = nullptr;
    EXPECT_TRUE(Ok(gj_function_explain(f.get(), &text)));
    r.explain = text != nullptr ? text : "";
    gj_string_destroy(text);
    return r;
  }

  static gj_compile_cache_stats CacheStats(gj_context* context) {
    gj_compile_cache_stats s;
    gj_compile_cache_stats_init(&s);
    EXPECT_TRUE(Ok(gj_context_get_compile_cache_stats(context, &s)));
    return s;
  }

  std::string dir_;
};

TEST_F(CompileCacheCapiTest, ASecondContextLoadsWhatTheFirstCompiled) {
  Result first, second;
  {
    ContextPtr a = Context(dir_.c_str());
    first = RunAttention(a.get());
    const gj_compile_cache_stats s = CacheStats(a.get());
    EXPECT_GT(s.kernels_compiled, 0);
    EXPECT_EQ(s.kernels_loaded, 0);
    EXPECT_EQ(s.disk_stores, s.kernels_compiled);
    EXPECT_EQ(s.disk_misses, s.kernels_compiled);
    EXPECT_EQ(first.stats.entries_loaded, 0);
  }
  ContextPtr b = Context(dir_.c_str());
  second = RunAttention(b.get());
  const gj_compile_cache_stats s = CacheStats(b.get());
  EXPECT_EQ(s.kernels_compiled, 0) << second.explain;
  EXPECT_GT(s.kernels_loaded, 0);
  EXPECT_EQ(s.disk_hits, s.kernels_loaded);
  EXPECT_EQ(s.rejected, 0);
  EXPECT_EQ(s.errors, 0);
  EXPECT_EQ(second.stats.compiles, 1);
  EXPECT_EQ(second.stats.entries_loaded, 1);
  EXPECT_NE(second.explain.find("loaded from the disk cache in"),
            std::string::npos)
      << second.explain;
  EXPECT_NE(second.explain.find("by pid " + std::to_string(::getpid())),
            std::string::npos)
      << second.explain;
  EXPECT_EQ(second.out, first.out) << "loaded code computes what compiled did";
}

TEST_F(CompileCacheCapiTest, EnvironmentAndEmptyStrings) {
  ::setenv("GJ_CACHE_DIR", dir_.c_str(), 1);
  {
    ContextPtr env = Context(nullptr);  // NULL: GJ_CACHE_DIR
    RunAttention(env.get());
    EXPECT_GT(CacheStats(env.get()).disk_stores, 0);
    ContextPtr off = Context("");  // "": no cache, whatever the environment
    RunAttention(off.get());
    const gj_compile_cache_stats s = CacheStats(off.get());
    EXPECT_EQ(s.disk_hits + s.disk_misses + s.disk_stores, 0);
    EXPECT_GT(s.kernels_compiled, 0);
  }
  ::unsetenv("GJ_CACHE_DIR");
  ContextPtr none = gjtest::MakeContext();
  RunAttention(none.get());
  EXPECT_EQ(CacheStats(none.get()).disk_misses, 0);
}

TEST_F(CompileCacheCapiTest, SignedRecordsNeedTheirKey) {
  { RunAttention(Context(dir_.c_str(), "alpha").get()); }
  ContextPtr beta = Context(dir_.c_str(), "beta");
  const Result r = RunAttention(beta.get());
  const gj_compile_cache_stats s = CacheStats(beta.get());
  EXPECT_GT(s.rejected, 0);
  EXPECT_EQ(s.kernels_loaded, 0);
  EXPECT_EQ(r.stats.entries_loaded, 0);
  ContextPtr alpha = Context(dir_.c_str(), "alpha");
  RunAttention(alpha.get());
  EXPECT_GT(CacheStats(alpha.get()).rejected, 0)
      << "beta replaced the records: alpha refuses them now";
}

TEST_F(CompileCacheCapiTest, BadOptionsAndArguments) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.max_cache_bytes = -1;
  gj_context* context = nullptr;
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT, {"max_cache_bytes is -1"}));
  fs::create_directories(dir_);
  { std::ofstream(dir_ + "/file") << "x"; }
  const std::string bad = dir_ + "/file/cache";
  gj_context_options_init(&options);
  options.cache_dir = bad.c_str();
  EXPECT_TRUE(IsError(gj_context_create(&options, &context), GJ_UNAVAILABLE,
                      {"options->cache_dir", bad}));
  EXPECT_EQ(context, nullptr);
  EXPECT_TRUE(IsError(gj_context_get_compile_cache_stats(nullptr, nullptr),
                      GJ_INVALID_ARGUMENT, {"stats"}));
  gj_compile_cache_stats s;
  s.struct_size = 0;
  ContextPtr ok = gjtest::MakeContext();
  EXPECT_TRUE(IsError(gj_context_get_compile_cache_stats(ok.get(), &s),
                      GJ_INVALID_ARGUMENT, {"gj_compile_cache_stats_init"}));
  EXPECT_TRUE(
      IsError(gj_cache_dir_inspect(nullptr, nullptr, 0, 0, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"dir"}));
  EXPECT_TRUE(IsError(gj_cache_dir_clear((dir_ + "/none").c_str(), nullptr),
                      GJ_NOT_FOUND, {"none"}));
}

// The eager backend compiles nothing: the cache counts nothing.
TEST_F(CompileCacheCapiTest, EagerContextCountsNothing) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.backend = GJ_BACKEND_EAGER;
  options.cache_dir = dir_.c_str();
  gj_context* raw = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options, &raw)));
  ContextPtr context(raw);
  RunAttention(context.get());
  const gj_compile_cache_stats s = CacheStats(context.get());
  EXPECT_EQ(s.kernels_compiled + s.kernels_loaded + s.disk_stores, 0);
}

TEST_F(CompileCacheCapiTest, InspectAndClearADirectory) {
  { RunAttention(Context(dir_.c_str()).get()); }
  gj_cache_dir_stats stats;
  gj_cache_dir_stats_init(&stats);
  char* report = nullptr;
  ASSERT_TRUE(
      Ok(gj_cache_dir_inspect(dir_.c_str(), nullptr, 1, 0, &stats, &report)));
  ASSERT_NE(report, nullptr);
  EXPECT_NE(std::string(report).find("llvm-object"), std::string::npos);
  gj_string_destroy(report);
  EXPECT_GT(stats.records, 0);
  EXPECT_EQ(stats.verified, stats.records);
  EXPECT_EQ(stats.bad, 0);
  EXPECT_GT(stats.bytes, 0);
  EXPECT_LE(stats.oldest_use_ms, stats.newest_use_ms);
  // Under a key these unsigned records fail verification.
  ASSERT_TRUE(
      Ok(gj_cache_dir_inspect(dir_.c_str(), "k", 1, 0, &stats, nullptr)));
  EXPECT_EQ(stats.bad, stats.records);
  int64_t removed = 0;
  ASSERT_TRUE(Ok(gj_cache_dir_clear(dir_.c_str(), &removed)));
  EXPECT_EQ(removed, stats.records);
  ASSERT_TRUE(
      Ok(gj_cache_dir_inspect(dir_.c_str(), nullptr, 0, 0, &stats, nullptr)));
  EXPECT_EQ(stats.records, 0);
}

// The size limit holds across contexts: past it, the least recently used
// records go.
TEST_F(CompileCacheCapiTest, MaxCacheBytesBoundsTheDirectory) {
  { RunAttention(Context(dir_.c_str()).get()); }
  gj_cache_dir_stats full;
  gj_cache_dir_stats_init(&full);
  ASSERT_TRUE(
      Ok(gj_cache_dir_inspect(dir_.c_str(), nullptr, 0, 0, &full, nullptr)));
  ASSERT_TRUE(Ok(gj_cache_dir_clear(dir_.c_str(), nullptr)));
  const int64_t limit = full.bytes / 2;
  { RunAttention(Context(dir_.c_str(), nullptr, limit).get()); }
  gj_cache_dir_stats bounded;
  gj_cache_dir_stats_init(&bounded);
  ASSERT_TRUE(
      Ok(gj_cache_dir_inspect(dir_.c_str(), nullptr, 0, 0, &bounded, nullptr)));
  EXPECT_LE(bounded.bytes, limit);
  EXPECT_GT(bounded.records, 0);
}

}  // namespace
