// Checks capi/options.h, the helpers behind the C API's growable structs:
// CheckStructSize's error for an uninitialized struct, InitSized writing only
// the host's bytes, ReadGrownElement's stride and unknown-byte checks, and
// GJ_READ_OPTION copying only fields inside the host's struct_size.

#include "capi/options.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit::capi {
namespace {

using ::testing::HasSubstr;

enum TestMode { kModeA = 0, kModeB = 1 };

// A 32-byte options struct as the C API lays them out.
struct TestOptions {
  size_t struct_size;  // 0
  int32_t a;           // 8
  int32_t b;           // 12
  int64_t c;           // 16
  TestMode mode;       // 24
};
static_assert(sizeof(TestOptions) == 32);

void InitTestOptions(TestOptions* o) {
  o->struct_size = sizeof(TestOptions);
  o->a = 1;
  o->b = 2;
  o->c = 3;
  o->mode = kModeB;
}

TEST(CapiOptionsTest, CheckStructSizeRejectsSizesBelowTheSizeField) {
  for (size_t size : {size_t{0}, size_t{7}}) {
    const absl::Status status =
        CheckStructSize(size, "gj_thing_create", "options", "gj_thing_init");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(),
              absl::StrCat("gj_thing_create: options->struct_size is ", size,
                           "; fill the struct with gj_thing_init()"));
  }
  EXPECT_TRUE(CheckStructSize(8, "f", "o", "i").ok());
  EXPECT_TRUE(CheckStructSize(4096, "f", "o", "i").ok());
}

TEST(CapiOptionsTest, InitSizedWritesOnlyTheHostsBytes) {
  // An older host's struct: up to `b` (16 bytes).
  std::vector<unsigned char> buffer(64, 0xab);
  auto* o = reinterpret_cast<TestOptions*>(buffer.data());
  InitSized(o, 16, &InitTestOptions);
  EXPECT_EQ(o->struct_size, 16u);
  EXPECT_EQ(o->a, 1);
  EXPECT_EQ(o->b, 2);
  for (size_t i = 16; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xab) << "byte " << i;
  }
  // Cut mid-field: the field's first bytes only.
  std::vector<unsigned char> cut(64, 0xab);
  InitSized(reinterpret_cast<TestOptions*>(cut.data()), 10, &InitTestOptions);
  EXPECT_EQ(cut[8], 1);
  EXPECT_EQ(cut[9], 0);
  EXPECT_EQ(cut[10], 0xab);
}

TEST(CapiOptionsTest, InitSizedCapsANewerHostsSizeAtThisLibrarys) {
  std::vector<unsigned char> buffer(64, 0xab);
  auto* o = reinterpret_cast<TestOptions*>(buffer.data());
  InitSized(o, 48, &InitTestOptions);
  EXPECT_EQ(o->struct_size, sizeof(TestOptions));
  EXPECT_EQ(o->c, 3);
  EXPECT_EQ(o->mode, kModeB);
  for (size_t i = sizeof(TestOptions); i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xab) << "byte " << i;
  }
}

TEST(CapiOptionsTest, InitSizedIgnoresNullAndSizesBelowTheSizeField) {
  InitSized<TestOptions>(nullptr, sizeof(TestOptions), &InitTestOptions);
  std::vector<unsigned char> buffer(64, 0xab);
  InitSized(reinterpret_cast<TestOptions*>(buffer.data()), 7, &InitTestOptions);
  for (size_t i = 0; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xab) << "byte " << i;
  }
}

TEST(CapiOptionsTest, ReadGrownElementReadsAtTheHostsStride) {
  // Three 40-byte elements of a newer host whose extra 8 bytes are zero.
  std::vector<unsigned char> array(3 * 40, 0);
  for (int i = 0; i < 3; ++i) {
    TestOptions e;
    InitTestOptions(&e);
    e.a = 10 + i;
    std::memcpy(array.data() + 40 * i, &e, sizeof(e));
  }
  TestOptions out{};
  ASSERT_TRUE(ReadGrownElement(array.data(), 2, 40, "opts", &out).ok());
  EXPECT_EQ(out.a, 12);
  EXPECT_EQ(out.c, 3);
  // Stride 0 is this library's sizeof: the second element starts at 32.
  std::vector<TestOptions> plain(2);
  InitTestOptions(&plain[0]);
  InitTestOptions(&plain[1]);
  plain[1].a = 77;
  ASSERT_TRUE(ReadGrownElement(plain.data(), 1, 0, "opts", &out).ok());
  EXPECT_EQ(out.a, 77);
}

TEST(CapiOptionsTest, ReadGrownElementRejectsShortStridesAndUnknownBytes) {
  std::vector<unsigned char> array(3 * 40, 0);
  TestOptions out{};
  const absl::Status short_stride =
      ReadGrownElement(array.data(), 0, 24, "gj_f: args", &out);
  EXPECT_EQ(short_stride.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(short_stride.message(),
            "gj_f: args: element size 24 is below 32, this library's");
  // Byte 33 of element 1 is a field this library does not know.
  array[40 + 33] = 1;
  EXPECT_TRUE(ReadGrownElement(array.data(), 0, 40, "gj_f: args", &out).ok());
  const absl::Status unknown =
      ReadGrownElement(array.data(), 1, 40, "gj_f: args", &out);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("gj_f: args: byte 33 of a 40-byte element is set, "
                        "past the 32 bytes this library knows"));
}

TEST(CapiOptionsTest, ReadOptionCopiesOnlyFieldsInsideStructSize) {
  // The host's struct ends inside `c` (20 bytes).
  TestOptions host;
  InitTestOptions(&host);
  host.struct_size = 20;
  host.a = 100;
  host.b = 200;
  host.c = 300;
  host.mode = kModeA;
  TestOptions dst;
  InitTestOptions(&dst);
  GJ_READ_OPTION(dst, &host, a);
  GJ_READ_OPTION(dst, &host, b);
  GJ_READ_OPTION(dst, &host, c);
  GJ_READ_OPTION(dst, &host, mode);
  EXPECT_EQ(dst.a, 100);
  EXPECT_EQ(dst.b, 200);
  EXPECT_EQ(dst.c, 3);  // partly past struct_size: the default
  EXPECT_EQ(dst.mode, kModeB);
  // A full struct copies everything, an enum's bytes as they are.
  host.struct_size = sizeof(TestOptions);
  const int32_t bad_mode = 12345;
  std::memcpy(&host.mode, &bad_mode, sizeof(bad_mode));
  GJ_READ_OPTION(dst, &host, c);
  GJ_READ_OPTION(dst, &host, mode);
  EXPECT_EQ(dst.c, 300);
  int32_t copied = 0;
  std::memcpy(&copied, &dst.mode, sizeof(copied));
  EXPECT_EQ(copied, 12345);
}

}  // namespace
}  // namespace guardjit::capi
