#include "core/external_data.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

class ExternalDataReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gj_external_data_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream bin(dir_ / "w.bin", std::ios::binary);
    for (int i = 0; i < 256; ++i) bin.put(static_cast<char>(i));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(ExternalDataReaderTest, ReadsRangesOfOneFileIntoTheirDestinations) {
  ExternalDataReader reader(dir_.string());
  // Ranges in any order, overlapping, at the start and the end.
  const std::pair<int64_t, int64_t> ranges[] = {{16, 32}, {0, 8},   {250, 6},
                                                {20, 4},  {0, 256}, {100, 0}};
  for (const auto& [offset, length] : ranges) {
    SCOPED_TRACE(offset);
    auto range = reader.Locate("w.bin", offset, length, "constant 'w'");
    ASSERT_TRUE(range.ok()) << range.status();
    std::vector<char> dst(static_cast<size_t>(length) + 1, '\x7f');
    ASSERT_TRUE(reader.Read(*range, dst.data(), "constant 'w'").ok());
    for (int64_t i = 0; i < length; ++i)
      EXPECT_EQ(static_cast<unsigned char>(dst[i]), offset + i);
    EXPECT_EQ(dst[length], '\x7f');  // nothing written past the range
  }
}

TEST_F(ExternalDataReaderTest, AbsolutePathsIgnoreTheDirectory) {
  ExternalDataReader reader("/nonexistent");
  auto range = reader.Locate((dir_ / "w.bin").string(), 3, 2, "constant 'w'");
  ASSERT_TRUE(range.ok()) << range.status();
  char dst[2];
  ASSERT_TRUE(reader.Read(*range, dst, "constant 'w'").ok());
  EXPECT_EQ(dst[0], 3);
  EXPECT_EQ(dst[1], 4);
}

TEST_F(ExternalDataReaderTest, BadRangesNameTheConstantAndTheFile) {
  ExternalDataReader reader(dir_.string());
  auto missing = reader.Locate("nope.bin", 0, 4, "constant 'a'");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("constant 'a': cannot open external data '"));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("nope.bin"));

  auto negative = reader.Locate("w.bin", -1, 4, "constant 'b'");
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(negative.status().message()),
              HasSubstr("constant 'b': negative external data offset"));

  // Past the end: checked before the caller allocates anything.
  auto huge = reader.Locate("w.bin", 200, int64_t{1} << 62, "constant 'c'");
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(
      std::string(huge.status().message()),
      HasSubstr("has 56 bytes at offset 200, expected 4611686018427387904"));
}

TEST_F(ExternalDataReaderTest, AFileThatShrankAfterLocateIsDataLoss) {
  ExternalDataReader reader(dir_.string());
  auto range = reader.Locate("w.bin", 128, 64, "constant 'w'");
  ASSERT_TRUE(range.ok()) << range.status();
  std::filesystem::resize_file(dir_ / "w.bin", 150);
  std::vector<char> dst(64);
  absl::Status read = reader.Read(*range, dst.data(), "constant 'w'");
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(read.message()),
              HasSubstr("has 22 bytes at offset 128, expected 64"));
}

// A pipe cannot be sized or read at an offset: each range opens it anew,
// skips the offset and reads in bounded chunks.
TEST_F(ExternalDataReaderTest, ReadsAPipeFromItsStartForEachRange) {
  const std::string fifo = (dir_ / "w.fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExternalDataReader reader(dir_.string());
  for (int64_t offset : {5, 2}) {
    SCOPED_TRACE(offset);
    std::thread writer([&] {
      std::ofstream out(fifo, std::ios::binary);
      for (int i = 0; i < 10; ++i) out.put(static_cast<char>(i));
    });
    auto range = reader.Locate("w.fifo", offset, 3, "constant 'p'");
    writer.join();
    ASSERT_TRUE(range.ok()) << range.status();
    char dst[3];
    ASSERT_TRUE(reader.Read(*range, dst, "constant 'p'").ok());
    EXPECT_EQ(dst[0], offset);
    EXPECT_EQ(dst[2], offset + 2);
  }
  // Shorter than declared.
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out.write("abc", 3);
  });
  auto range = reader.Locate("w.fifo", 1, 8, "constant 'q'");
  writer.join();
  EXPECT_EQ(range.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(range.status().message()),
              HasSubstr("has 2 bytes at offset 1, expected 8"));
}

}  // namespace
}  // namespace guardjit
