// Host memory blocks (core/host_memory.h): alignment by size, blocks that
// hold what is written to them, the huge-page advice on a large block's
// whole 2 MiB pages (VmFlags "hg" in /proc/self/smaps, where the kernel has
// transparent huge pages), and tensors' storage drawing on it.

#include "core/host_memory.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/sanitizers.h"

namespace guardjit {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(HostMemoryTest, SmallBlocksAre64ByteAligned) {
  for (size_t bytes :
       {size_t{0}, size_t{1}, size_t{63}, size_t{4096}, kHugePageBytes - 1}) {
    HostMemoryPtr block(AllocateHostMemory(bytes));
    ASSERT_NE(block, nullptr) << bytes;
    EXPECT_EQ(Address(block.get()) % kHostAlign, 0u) << bytes;
  }
}

TEST(HostMemoryTest, LargeBlocksAreHugePageAlignedAndHoldTheirBytes) {
  for (size_t bytes :
       {kHugePageBytes, kHugePageBytes + 1, 3 * kHugePageBytes + 4096}) {
    HostMemoryPtr block(AllocateHostMemory(bytes));
    ASSERT_NE(block, nullptr) << bytes;
    EXPECT_EQ(Address(block.get()) % kHugePageBytes, 0u) << bytes;
    auto* p = static_cast<unsigned char*>(block.get());
    for (size_t i = 0; i < bytes; i += 4093)
      p[i] = static_cast<unsigned char>(i);
    p[bytes - 1] = 0xab;
    for (size_t i = 0; i < bytes; i += 4093) {
      ASSERT_EQ(p[i], static_cast<unsigned char>(i)) << i;
    }
    EXPECT_EQ(p[bytes - 1], 0xab);
  }
}

TEST(HostMemoryTest, SizesPastTheAddressSpaceAreRefused) {
  EXPECT_EQ(AllocateHostMemory(SIZE_MAX), nullptr);
  EXPECT_EQ(AllocateHostMemory(SIZE_MAX - kHugePageBytes + 1), nullptr);
}

// The VmFlags of the mapping holding `address` in /proc/self/smaps ("" when
// none does).
std::string VmFlagsAt(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HostMemoryTest, WholeHugePagesOfALargeBlockAreAdvised) {
  if (GJ_UNDER_SANITIZER)
    GTEST_SKIP() << "the sanitizers' allocators map memory their way";
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(thp, mode) || mode.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "no transparent huge pages on this kernel";
  }
  HostMemoryPtr block(AllocateHostMemory(2 * kHugePageBytes + 4096));
  ASSERT_NE(block, nullptr);
  const uintptr_t start = Address(block.get());
  EXPECT_NE(VmFlagsAt(start).find(" hg"), std::string::npos)
      << VmFlagsAt(start);
  EXPECT_NE(VmFlagsAt(start + 2 * kHugePageBytes - 1).find(" hg"),
            std::string::npos);
  // The tail past the last whole huge page keeps small pages.
  EXPECT_EQ(VmFlagsAt(start + 2 * kHugePageBytes).find(" hg"),
            std::string::npos)
      << VmFlagsAt(start + 2 * kHugePageBytes);
  HostMemoryPtr small(AllocateHostMemory(kHugePageBytes / 2));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(VmFlagsAt(Address(small.get())).find(" hg"), std::string::npos);
}

TEST(HostMemoryTest, TensorsOfHugePagesOrMoreStartOnOne) {
  auto big = Tensor::Empty(DType::kFloat32, {3, int64_t{kHugePageBytes} / 4});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(Address(big->data()) % kHugePageBytes, 0u);
  auto small = Tensor::Empty(DType::kFloat32, {17});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(Address(small->data()) % kHostAlign, 0u);
}

}  // namespace
}  // namespace guardjit
