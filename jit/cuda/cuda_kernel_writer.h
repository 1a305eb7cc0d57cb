#ifndef GUARDJIT_JIT_CUDA_CUDA_KERNEL_WRITER_H_
#define GUARDJIT_JIT_CUDA_CUDA_KERNEL_WRITER_H_

// The CUDA C generator's per-kernel writer (cuda_codegen.h describes the
// mapping and the rules): cuda_kernel_writer.cc writes the kernel, its row
// loop, stages, values, loads and stores (scalar and vector);
// cuda_kernel_reduce.cc its reductions (blocked sums, arg reductions, the
// online max and sum, the group combine).

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "jit/cuda/cuda_c_expr.h"
#include "jit/cuda/cuda_codegen.h"
#include "jit/cuda/cuda_vectorize.h"
#include "jit/lowering/loop_ir.h"

namespace guardjit::cuda_c {

class KernelWriter {
 public:
  KernelWriter(const Kernel& k, const CudaCodegenOptions& options,
               CudaKernelInfo* info)
      : k_(k), options_(options), info_(info) {}

  absl::Status Write(std::string* out);

 private:
  using Mapping = CudaKernelInfo::Mapping;

  void Line(const std::string& s) {
    absl::StrAppend(&body_, std::string(indent_ * 2, ' '), s, "\n");
  }
  std::string Temp() { return absl::StrCat("v", next_temp_++); }
  // An index expression in the kernel's index type (int when narrow_).
  std::string Idx(const IndexExpr& e) const { return Index(e, narrow_); }

  absl::StatusOr<std::string> Value(const ValueExpr& e);
  absl::StatusOr<std::string> Load(int buffer, DType d, const std::string& at);
  absl::Status Store(int buffer, const std::string& at, const std::string& v);
  // Opens a loop of this thread's share of `loops` (flattened row-major,
  // the flat position in gj_f), declaring their variables.
  void OpenStageLoop(const std::vector<LoopRange>& loops);
  void CloseBlock() {
    --indent_;
    Line("}");
  }
  // Declares the variables of `loops` from the flat position `flat` (the
  // last one named `last_name` when given).
  void Decompose(const std::vector<LoopRange>& loops, const std::string& flat,
                 const std::string& last_name = "");
  // The grid-strided loop over the points of `outer` (the row loop),
  // running `body` at each.
  absl::Status WriteRowLoop(const std::vector<LoopRange>& outer,
                            const std::string& last_name,
                            const std::function<absl::Status()>& body);
  // The stages at one row.
  absl::Status WriteStages();
  // The stages of a pointwise kernel at `vec.width` consecutive points of
  // its last loop, moving data as vectors (cuda_vectorize.h).
  absl::Status WriteVectorStages(const CudaVectorPlan& vec);
  absl::Status WriteStore(const Stage& stage);
  absl::Status WriteReduce(const Stage& stage, int index);
  absl::Status WriteArgReduce(const Stage& stage, int index);
  // Stages `max` and `sum` (PlanOnlineSoftmax's pair) as one online pass.
  absl::Status WriteOnlineMaxSum(const Stage& max, const Stage& sum, int index);
  // Combines the group's partial values `vars` (of C types `types`) with the
  // pairwise combination `combine` (statements over a<k> (ours) and b<k>
  // (theirs), updating a<k>), leaving every thread with the result.
  void GroupReduce(int stage, const std::vector<std::string>& vars,
                   const std::vector<std::string>& types,
                   const std::string& combine);
  void Sync() {
    if (mapping_ == Mapping::kRowPerBlock) Line("__syncthreads();");
    if (mapping_ == Mapping::kRowPerWarp) Line("__syncwarp();");
  }
  int group_threads() const {
    switch (mapping_) {
      case Mapping::kRowPerThread:
        return 1;
      case Mapping::kRowPerWarp:
        return 32;
      case Mapping::kRowPerBlock:
        return options_.block_threads;
    }
    return 1;
  }

  const Kernel& k_;
  const CudaCodegenOptions& options_;
  CudaKernelInfo* info_;
  Mapping mapping_ = Mapping::kRowPerThread;
  // Index math in int (IndexMathFits32Bits), else long long: idx_t_.
  bool narrow_ = false;
  std::string idx_t_ = "long long";
  std::string body_;
  std::string shared_;  // __shared__ declarations at the kernel's top
  int indent_ = 1;
  int next_temp_ = 0;
  absl::flat_hash_map<const void*, std::string> memo_;
  std::vector<bool> local_ready_;  // per local: its reduction was written
  // On the vector path: element references ("b0[...]") that read or write
  // a lane of a vector variable instead ("gj_x0.v[gj_j]").
  absl::flat_hash_map<std::string, std::string> vector_refs_;
};

}  // namespace guardjit::cuda_c

#endif  // GUARDJIT_JIT_CUDA_CUDA_KERNEL_WRITER_H_
