#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

TEST(CapiVersionTest, RuntimeVersionMatchesHeader) {
  EXPECT_EQ(gj_api_version(),
            (uint32_t{GJ_API_VERSION_MAJOR} << 16) | GJ_API_VERSION_MINOR);
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%d.%d.", GJ_API_VERSION_MAJOR,
                GJ_API_VERSION_MINOR);
  const std::string version = gj_version();
  EXPECT_EQ(version.rfind(prefix, 0), 0u) << version;
  EXPECT_EQ(version, "0.13.0");
}

}  // namespace
