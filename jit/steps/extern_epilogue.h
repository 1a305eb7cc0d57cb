#ifndef GUARDJIT_JIT_STEPS_EXTERN_EPILOGUE_H_
#define GUARDJIT_JIT_STEPS_EXTERN_EPILOGUE_H_

// What the fusers of extern steps (gemm_epilogue.h, conv_epilogue.h) share:
// operands (at fixed sizes, or a dynamic entry's symbolic ones bound per
// call), and the epilogue kernel that finishes an extern
// product. An extern step computes its product panel by panel into scratch
// and hands each panel to the epilogue, a compiled pointwise kernel over the
// product's sizes that reads the product at the point it computes (bias,
// activation, residual add, ...) and stores the step's real outputs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "jit/lowering/loop_ir.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

// A tensor in the program's memory at fixed sizes and strides: a static
// entry's operand, or a dynamic entry's bound for one call (BindRef).
struct FixedRef {
  int slot = -1;
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
};
// `ref` when its sizes, strides and offset are all constants.
std::optional<FixedRef> FixedRefOf(const TensorRef& ref);
// A size of a dynamic step as its ToString shows it: "s0", "(s0*16)", "64".
std::string SizeText(const IndexExpr& size);
// `ref` evaluated for a call's symbol values.
FixedRef BindRef(const TensorRef& ref, absl::Span<const int64_t> symbols);

// Where eager step `step` keeps the graph value that its node's argument
// `arg` refers to, when that is a tensor of `dtype` (its sizes, strides and
// offset expressions over the entry's symbols in a dynamic entry).
std::optional<TensorRef> ArgRef(const Graph& graph, const Plan& plan,
                                const PlanStep& step, int arg, DType dtype);
// ArgRef at fixed sizes, strides and offset.
std::optional<FixedRef> FixedArg(const Graph& graph, const Plan& plan,
                                 const PlanStep& step, int arg, DType dtype);

// Whether `index` addresses, at every point of loops over `sizes` (loop
// variable d over dim d), that point's element of a contiguous tensor of
// `sizes`.
bool IsPointIndex(const IndexExpr& index, const std::vector<IndexExpr>& sizes);
// Likewise for a tensor laid out with `strides` (constant where the size is
// not 1).
bool IsPointIndexAt(const IndexExpr& index, const std::vector<IndexExpr>& sizes,
                    const std::vector<IndexExpr>& strides);

// The slot of eager step `step`'s output 0, or -1.
int ExternOutputSlot(const Plan& plan, const PlanStep& step);

// The product of an extern step: its output slot, contiguous at `sizes`
// (in a dynamic entry, expressions over its symbols).
struct ExternProduct {
  int slot = -1;
  DType dtype = DType::kFloat32;
  std::vector<IndexExpr> sizes;
  std::string label;  // the node's name, for a kernel that only stores it
  // Where the result is stored and read by later kernels (the slot's
  // strides; empty: contiguous). The epilogue always reads the product
  // itself as contiguous: a fused kernel's loads are reindexed so.
  std::vector<IndexExpr> strides;
};

// An extern step's epilogue: a kernel step, and its buffer parameter that
// reads the product (indexed as the contiguous product; outer loop d runs
// over the product's dim d).
struct Epilogue {
  PlanStep step;
  int product_param = -1;
  // The kernel only stores the product (StoreProductKernel): its output
  // parameter, else -1.
  int bare_store_param = -1;
};

// Takes the epilogue of eager step `*i` of `plan`, which computes `product`:
// step *i + 1's kernel when it is the product's only reader and reads it
// pointwise (then *i advances past it), else, with `store_bare`, a new kernel
// that stores the product into its slot. Returns nullopt (and leaves the
// plan alone) when there is neither. The steps taken are left moved-from.
std::optional<Epilogue> TakeEpilogue(Plan& plan, size_t* i,
                                     const ExternProduct& product,
                                     bool store_bare);

// The buffer parameter of `k` reading (or, with `output`, a new one writing)
// slot `slot`, added when there is none.
int AddParam(KernelStep& k, int slot, DType dtype, bool output);

// Names the kernel's buffer parameters in0, in1, ..., out0, ... in order.
void NameParams(Kernel& k);

// Replaces every load of the product in `epilogue` by load + term (a bias
// folded into the epilogue), keeping shared subexpressions shared.
void AddToProduct(Epilogue& epilogue, const ValueExpr& term);

// Replaces the index of every load of buffer parameter `param` in `kernel`
// by `index` (a tensor kept in another layout than the contiguous one, read
// at the point the kernel computes).
void ReindexLoads(Kernel& kernel, int param, const IndexExpr& index);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_EXTERN_EPILOGUE_H_
