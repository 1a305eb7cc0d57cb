#ifndef GUARDJIT_TESTS_CORE_TOY_OPS_H_
#define GUARDJIT_TESTS_CORE_TOY_OPS_H_

#include "core/op_registry.h"
#include "gtest/gtest.h"

namespace guardjit {

// A registry of toy ops so the builder is tested apart from the real op set.
inline const OpRegistry& ToyOps() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    auto same =
        [](const MetaArgs& a) -> absl::StatusOr<std::vector<TensorMeta>> {
      return std::vector<TensorMeta>{a.tensor(0)};
    };
    EXPECT_TRUE(reg->Register("add.Tensor(Tensor self, Tensor other, *, Scalar "
                              "alpha=1) -> Tensor",
                              same)
                    .ok());
    EXPECT_TRUE(reg->Register("cat(Tensor[] tensors, int dim=0) -> Tensor",
                              [](const MetaArgs& a)
                                  -> absl::StatusOr<std::vector<TensorMeta>> {
                                return std::vector<TensorMeta>{
                                    a.tensor_list(0)[0]};
                              })
                    .ok());
    EXPECT_TRUE(
        reg->Register("pool(Tensor self, int[2] kernel, int[2] stride=1, "
                      "ScalarType? dtype=None, str? mode=None) -> Tensor",
                      same)
            .ok());
    EXPECT_TRUE(reg->Register("trio(Tensor self) -> (Tensor, Tensor, Tensor)",
                              [](const MetaArgs& a)
                                  -> absl::StatusOr<std::vector<TensorMeta>> {
                                return std::vector<TensorMeta>(3, a.tensor(0));
                              })
                    .ok());
    EXPECT_TRUE(reg->Register("picky(Tensor self) -> Tensor",
                              [](const MetaArgs& a)
                                  -> absl::StatusOr<std::vector<TensorMeta>> {
                                return absl::InvalidArgumentError(
                                    "argument 'self': too picky");
                              })
                    .ok());
    return reg;
  }();
  return *r;
}

}  // namespace guardjit

#endif  // GUARDJIT_TESTS_CORE_TOY_OPS_H_
