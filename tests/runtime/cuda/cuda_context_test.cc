// CudaContextScope and CudaPrimaryContext (runtime/cuda/cuda_context.h):
// the scope against a driver table of stubs that keep a per-thread context
// stack and count the calls (so each push is seen popped exactly once, and
// nothing is pushed for a context already current), and the primary
// context's retain/release pairing on the emulated device, counted in front
// of it, in a process of its own (emulated_process_test_util.h).

#include "runtime/cuda/cuda_context.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_driver.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

// The stub driver's state: this thread's context stack, the calls made and
// the errors to return.
thread_local std::vector<CUcontext> t_stack;
thread_local int t_gets = 0, t_pushes = 0, t_pops = 0;
thread_local CUresult t_get_result = CUDA_SUCCESS;
thread_local CUresult t_push_result = CUDA_SUCCESS;

CudaDriver StubDriver() {
  t_stack.clear();
  t_gets = t_pushes = t_pops = 0;
  t_get_result = t_push_result = CUDA_SUCCESS;
  CudaDriver d;
  d.cuCtxGetCurrent = [](CUcontext* c) -> CUresult {
    ++t_gets;
    if (t_get_result != CUDA_SUCCESS) return t_get_result;
    *c = t_stack.empty() ? nullptr : t_stack.back();
    return CUDA_SUCCESS;
  };
  d.cuCtxPushCurrent = [](CUcontext c) -> CUresult {
    ++t_pushes;
    if (t_push_result != CUDA_SUCCESS) return t_push_result;
    t_stack.push_back(c);
    return CUDA_SUCCESS;
  };
  d.cuCtxPopCurrent = [](CUcontext* c) -> CUresult {
    ++t_pops;
    if (t_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (c != nullptr) *c = t_stack.back();
    t_stack.pop_back();
    return CUDA_SUCCESS;
  };
  return d;
}

CUcontext Fake(uintptr_t n) { return reinterpret_cast<CUcontext>(n); }
CUcontext Current() { return t_stack.empty() ? nullptr : t_stack.back(); }

TEST(CudaContextScopeTest, PushesAContextNotCurrentAndRestoresThePrevious) {
  const CudaDriver driver = StubDriver();
  t_stack.push_back(Fake(0x100));  // the host's context
  {
    absl::StatusOr<CudaContextScope> scope =
        CudaContextScope::Enter(driver, Fake(0x200));
    ASSERT_TRUE(scope.ok()) << scope.status();
    EXPECT_TRUE(scope->pushed());
    EXPECT_EQ(Current(), Fake(0x200));
    EXPECT_EQ(t_pushes, 1);
    EXPECT_EQ(t_pops, 0);
  }
  EXPECT_EQ(t_pops, 1);
  EXPECT_EQ(Current(), Fake(0x100)) << "the host's context is current again";
}

TEST(CudaContextScopeTest, AlreadyCurrentCostsOneQueryAndNoPushOrPop) {
  const CudaDriver driver = StubDriver();
  t_stack.push_back(Fake(0x300));
  {
    absl::StatusOr<CudaContextScope> scope =
        CudaContextScope::Enter(driver, Fake(0x300));
    ASSERT_TRUE(scope.ok()) << scope.status();
    EXPECT_FALSE(scope->pushed());
  }
  EXPECT_EQ(t_gets, 1);
  EXPECT_EQ(t_pushes, 0);
  EXPECT_EQ(t_pops, 0);
  EXPECT_EQ(Current(), Fake(0x300));
}

TEST(CudaContextScopeTest, MovedScopePopsOnceFromItsNewOwner) {
  const CudaDriver driver = StubDriver();
  {
    absl::StatusOr<CudaContextScope> scope =
        CudaContextScope::Enter(driver, Fake(0x400));
    ASSERT_TRUE(scope.ok()) << scope.status();
    {
      CudaContextScope moved = std::move(*scope);
      EXPECT_TRUE(moved.pushed());
      EXPECT_FALSE(scope->pushed()) << "the moved-from scope owns nothing";
      EXPECT_EQ(Current(), Fake(0x400));
    }
    // The new owner ended: popped once; the old one pops nothing.
    EXPECT_EQ(t_pops, 1);
    EXPECT_EQ(Current(), nullptr);
  }
  EXPECT_EQ(t_pops, 1);
  EXPECT_EQ(t_pushes, 1);
}

TEST(CudaContextScopeTest, DriverErrorsAreReturnedWithNothingLeftPushed) {
  CudaDriver driver = StubDriver();
  t_get_result = CUDA_ERROR_DEINITIALIZED;
  absl::StatusOr<CudaContextScope> failed_query =
      CudaContextScope::Enter(driver, Fake(0x500));
  ASSERT_FALSE(failed_query.ok());
  EXPECT_EQ(failed_query.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(failed_query.status().message(), HasSubstr("cuCtxGetCurrent"));
  EXPECT_EQ(t_pushes, 0);

  t_get_result = CUDA_SUCCESS;
  t_push_result = CUDA_ERROR_INVALID_CONTEXT;
  {
    absl::StatusOr<CudaContextScope> failed_push =
        CudaContextScope::Enter(driver, Fake(0x600));
    ASSERT_FALSE(failed_push.ok());
    EXPECT_EQ(failed_push.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(failed_push.status().message(), HasSubstr("cuCtxPushCurrent"));
  }
  EXPECT_EQ(t_pops, 0) << "a failed push is not popped";
  EXPECT_TRUE(t_stack.empty());
}

TEST(CudaContextScopeTest, NestedScopesUnwindInOrder) {
  const CudaDriver driver = StubDriver();
  {
    absl::StatusOr<CudaContextScope> outer =
        CudaContextScope::Enter(driver, Fake(0x700));
    ASSERT_TRUE(outer.ok());
    {
      absl::StatusOr<CudaContextScope> inner =
          CudaContextScope::Enter(driver, Fake(0x800));
      ASSERT_TRUE(inner.ok());
      EXPECT_TRUE(inner->pushed());
      EXPECT_EQ(Current(), Fake(0x800));
    }
    EXPECT_EQ(Current(), Fake(0x700));
  }
  EXPECT_EQ(Current(), nullptr);
  EXPECT_EQ(t_pushes, 2);
  EXPECT_EQ(t_pops, 2);
}

// The emulated driver with cuDevicePrimaryCtxRetain/Release counted.
int g_retains = 0, g_releases = 0;
const CudaDriver* g_emulated = nullptr;

void InstallCountingPrimaryContexts() {
  g_emulated = EmulatedCudaDriver::Get();
  auto* counting = new CudaDriver(*g_emulated);
  counting->cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice d) {
    ++g_retains;
    return g_emulated->cuDevicePrimaryCtxRetain(c, d);
  };
  counting->cuDevicePrimaryCtxRelease = [](CUdevice d) {
    ++g_releases;
    return g_emulated->cuDevicePrimaryCtxRelease(d);
  };
  CudaDriver::InstallForTesting(counting);
}

void PrimaryContextRetainsAndReleasesOnce() {
  InstallCountingPrimaryContexts();
  {
    absl::StatusOr<CudaPrimaryContext> context = CudaPrimaryContext::Retain(0);
    ASSERT_TRUE(context.ok()) << context.status();
    EXPECT_EQ(context->ordinal(), 0);
    EXPECT_NE(context->get(), nullptr);
    EXPECT_EQ(g_retains, 1);
    const CUcontext handle = context->get();

    // Moving hands over the reference: the moved-from one releases nothing.
    CudaPrimaryContext moved = std::move(*context);
    EXPECT_EQ(context->get(), nullptr);
    EXPECT_EQ(moved.get(), handle);
    EXPECT_EQ(g_releases, 0);

    // MakeCurrent pushes it on this thread for the scope.
    {
      absl::StatusOr<CudaContextScope> scope = moved.MakeCurrent();
      ASSERT_TRUE(scope.ok()) << scope.status();
      EXPECT_TRUE(scope->pushed());
      CUcontext current = nullptr;
      ASSERT_EQ(g_emulated->cuCtxGetCurrent(&current), CUDA_SUCCESS);
      EXPECT_EQ(current, handle);
    }
    CUcontext after = nullptr;
    ASSERT_EQ(g_emulated->cuCtxGetCurrent(&after), CUDA_SUCCESS);
    EXPECT_EQ(after, nullptr);

    // Move-assigning over a held reference releases the held one first.
    absl::StatusOr<CudaPrimaryContext> second = CudaPrimaryContext::Retain(0);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(g_retains, 2);
    moved = std::move(*second);
    EXPECT_EQ(g_releases, 1);
    EXPECT_EQ(moved.get(), handle) << "one primary context per device";
  }
  EXPECT_EQ(g_releases, 2) << "every retain released once";

  // A device the driver does not have: the driver's error, nothing retained.
  absl::StatusOr<CudaPrimaryContext> absent = CudaPrimaryContext::Retain(3);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(absent.status().message(), HasSubstr("cuDeviceGet"));
  EXPECT_EQ(g_retains, 2);
}

TEST(CudaPrimaryContextTest, RetainsAndReleasesOnceOnTheEmulatedDevice) {
  GJ_EXPECT_ON_EMULATED_DEVICE(PrimaryContextRetainsAndReleasesOnce);
}

}  // namespace
}  // namespace guardjit
