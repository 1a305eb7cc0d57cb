#include "runtime/kernel_registry.h"

#include "core/op_registry.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

// The op registry (core) and the kernel registry (runtime) must list the same
// targets: every op has a reference kernel and no kernel is orphaned.
TEST(KernelRegistryTest, EveryOpHasAReferenceKernelAndViceVersa) {
  const auto& kernels = KernelRegistry::Global();
  for (const OpDef* op : OpRegistry::Global().All()) {
    EXPECT_NE(kernels.Find(op->target), nullptr)
        << op->target << " has no kernel";
  }
  for (const std::string& target : kernels.Targets()) {
    EXPECT_NE(OpRegistry::Global().Find(target), nullptr)
        << target << " has no schema";
  }
}

TEST(KernelRegistryTest, DuplicateRegistrationFails) {
  KernelRegistry r;
  auto k = [](const KernelArgs&, absl::Span<const TensorMeta>)
      -> absl::StatusOr<std::vector<Tensor>> { return std::vector<Tensor>{}; };
  EXPECT_TRUE(r.Register("aten.x.default", k).ok());
  EXPECT_EQ(r.Register("aten.x.default", k).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace guardjit
