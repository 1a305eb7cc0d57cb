#include "runtime/cuda/cublaslt_gemm.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_device.h"

namespace guardjit {

bool CublasLtGemm::ReadsInPlace(int64_t rows, int64_t cols, int64_t row_stride,
                                int64_t col_stride) {
  return ((cols == 1 || col_stride == 1) &&
          (rows == 1 || row_stride >= cols)) ||
         ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows));
}

namespace {

// The most workspace a problem's algorithm may ask for: what NVIDIA
// recommends for Hopper (32 MiB; less is enough before it).
constexpr uint64_t kMaxWorkspaceBytes = uint64_t{32} << 20;
// Problems cached per device before the cache starts over (a dynamic entry
// sees a new problem per size).
constexpr size_t kMaxProblems = 1024;

// A row-major [rows, cols] matrix as cuBLASLt's column-major op(X^T): the
// stored matrix's extents and leading dimension, and whether cuBLASLt must
// transpose it. nullopt when neither stride is 1 (see ReadsInPlace).
struct ColumnMajor {
  bool transpose = false;
  int64_t rows = 0, cols = 0, ld = 0;
};
std::optional<ColumnMajor> AsColumnMajor(int64_t rows, int64_t cols,
                                         int64_t row_stride,
                                         int64_t col_stride) {
  // X^T stored as is: cols x rows, its columns X's rows.
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    return ColumnMajor{false, cols, rows,
                       rows == 1 ? std::max<int64_t>(cols, 1) : row_stride};
  }
  // X stored column-major (a transposed view): rows x cols, transposed.
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    return ColumnMajor{true, rows, cols,
                       cols == 1 ? std::max<int64_t>(rows, 1) : col_stride};
  }
  return std::nullopt;
}

cudaDataType DataType(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return CUDA_R_64F;
    case DType::kFloat16:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

cublasLtEpilogue_t Epilogue(GemmActivation activation, bool bias) {
  switch (activation) {
    case GemmActivation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case GemmActivation::kGeluTanh:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// The problem key (CublasLtGemm::Key): dtype, batch, m, n, k, then per
// cuBLASLt matrix (A, B, C, D: our B, A, C, D) these four fields, then the
// activation and whether there is a bias.
enum MatrixKeyField { kTranspose, kLeadingDim, kBatchStride, kAlignment };
constexpr int MatrixField(int matrix, MatrixKeyField field) {
  return 5 + 4 * matrix + field;
}

// The largest power of two up to 256 that divides `p` (cuBLASLt picks
// kernels by the alignment it is promised).
int64_t AlignmentOf(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int64_t alignment = 256;
  while (alignment > 1 && address % alignment != 0) alignment /= 2;
  return alignment;
}

}  // namespace

struct CublasLtGemm::Problem {
  const CublasLtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  std::array<cublasLtMatrixLayout_t, 4> layouts{};  // A, B, C, D (cuBLASLt's)
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
  bool bias = false;
  // Held while the bias pointer is set on `desc` and the matmul enqueued.
  std::mutex mu;

  ~Problem() {
    if (desc != nullptr) api->cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t layout : layouts) {
      if (layout != nullptr) api->cublasLtMatrixLayoutDestroy(layout);
    }
  }
};

absl::StatusOr<CublasLtGemm*> CublasLtGemm::ForDevice(
    const CudaDevice& device) {
  static std::mutex* const mu = new std::mutex;
  static auto* const runners =
      new absl::flat_hash_map<int, std::unique_ptr<CublasLtGemm>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto it = runners->find(device.ordinal());
  if (it != runners->end()) return it->second.get();
  ASSIGN_OR_RETURN(const CublasLtApi* api, CublasLtApi::Get());
  ASSIGN_OR_RETURN(CudaContextScope scope, device.MakeCurrent());
  cublasLtHandle_t handle = nullptr;
  RETURN_IF_CUBLASLT_ERROR(api->cublasLtCreate(&handle));
  auto* runner = new CublasLtGemm(api, &device, handle);
  (*runners)[device.ordinal()].reset(runner);
  return runner;
}

int64_t CublasLtGemm::cached_problems() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(problems_.size());
}

absl::StatusOr<std::shared_ptr<CublasLtGemm::Problem>> CublasLtGemm::Prepare(
    const Key& key, const CublasLtGemmArgs& args) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = problems_.find(key);
    if (it != problems_.end()) return it->second;
  }
  const bool ta = key[MatrixField(0, kTranspose)] != 0,
             tb = key[MatrixField(1, kTranspose)] != 0;
  const int64_t m_lt = args.n, n_lt = args.m, k = args.k;
  auto problem = std::make_shared<Problem>();
  problem->api = api_;
  problem->bias = args.bias != nullptr;
  const cudaDataType type = DataType(args.dtype);
  const bool doubles = args.dtype == DType::kFloat64;
  RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulDescCreate(
      &problem->desc, doubles ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
      doubles ? CUDA_R_64F : CUDA_R_32F));
  const int32_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulDescSetAttribute(
      problem->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulDescSetAttribute(
      problem->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const uint32_t epilogue = Epilogue(args.activation, problem->bias);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulDescSetAttribute(
        problem->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
        sizeof(epilogue)));
  }
  // cuBLASLt's A is our B (m_lt x k after op), its B our A (k x n_lt), its
  // C and D ours transposed (m_lt x n_lt).
  const int64_t stored[4][2] = {
      {ta ? k : m_lt, ta ? m_lt : k},
      {tb ? n_lt : k, tb ? k : n_lt},
      {m_lt, n_lt},
      {m_lt, n_lt},
  };
  const int32_t batch = static_cast<int32_t>(args.batch);
  for (int i = 0; i < 4; ++i) {
    RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatrixLayoutCreate(
        &problem->layouts[i], type, static_cast<uint64_t>(stored[i][0]),
        static_cast<uint64_t>(stored[i][1]), key[MatrixField(i, kLeadingDim)]));
    if (batch > 1) {
      RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatrixLayoutSetAttribute(
          problem->layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
          sizeof(batch)));
      RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatrixLayoutSetAttribute(
          problem->layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
          &key[MatrixField(i, kBatchStride)], sizeof(int64_t)));
    }
  }
  cublasLtMatmulPreference_t preference = nullptr;
  RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulPreferenceCreate(&preference));
  absl::Status searched = [&]() -> absl::Status {
    RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
        &kMaxWorkspaceBytes, sizeof(kMaxWorkspaceBytes)));
    // Pointer alignments (A, B, C, D as cuBLASLt names them) are in the key.
    const cublasLtMatmulPreferenceAttributes_t alignment_attributes[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i) {
      const uint32_t alignment =
          static_cast<uint32_t>(key[MatrixField(i, kAlignment)]);
      RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulPreferenceSetAttribute(
          preference, alignment_attributes[i], &alignment, sizeof(alignment)));
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulAlgoGetHeuristic(
        handle_, problem->desc, problem->layouts[0], problem->layouts[1],
        problem->layouts[2], problem->layouts[3], preference, 1, &result,
        &found));
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
      return absl::UnimplementedError(absl::StrCat(
          "cublasLtMatmulAlgoGetHeuristic found no algorithm for ", args.batch,
          " x [", args.m, "x", args.k, "] @ [", args.k, "x", args.n, "] (",
          DTypeName(args.dtype), ", epilogue ", epilogue, ")"));
    }
    problem->algo = result.algo;
    problem->workspace_bytes = result.workspaceSize;
    return absl::OkStatus();
  }();
  api_->cublasLtMatmulPreferenceDestroy(preference);
  RETURN_IF_ERROR(searched);
  std::lock_guard<std::mutex> lock(mu_);
  if (problems_.size() >= kMaxProblems) problems_.clear();
  return problems_.try_emplace(key, std::move(problem)).first->second;
}

absl::StatusOr<std::shared_ptr<CublasLtGemm::Problem>> CublasLtGemm::ProblemFor(
    const CublasLtGemmArgs& args) const {
  const std::optional<ColumnMajor> a =
      AsColumnMajor(args.m, args.k, args.a.row_stride, args.a.col_stride);
  const std::optional<ColumnMajor> b =
      AsColumnMajor(args.k, args.n, args.b.row_stride, args.b.col_stride);
  const std::optional<ColumnMajor> d =
      AsColumnMajor(args.m, args.n, args.d.row_stride, args.d.col_stride);
  const bool with_c = args.beta != 0;
  const std::optional<ColumnMajor> c =
      with_c
          ? AsColumnMajor(args.m, args.n, args.c.row_stride, args.c.col_stride)
          : d;
  if (!a || !b || !c || !d || d->transpose || c->transpose) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuBLASLt cannot read the operands' strides: a [",
                     args.a.row_stride, ", ", args.a.col_stride, "], b [",
                     args.b.row_stride, ", ", args.b.col_stride, "], d [",
                     args.d.row_stride, ", ", args.d.col_stride, "]"));
  }
  const void* c_data = with_c ? args.c.data : args.d.data;
  // cuBLASLt's A is our B, its B our A; C and D are ours.
  const ColumnMajor* stored[4] = {&*b, &*a, &*c, &*d};
  const GemmMatrix* matrices[4] = {&args.b, &args.a, with_c ? &args.c : &args.d,
                                   &args.d};
  const void* pointers[4] = {args.b.data, args.a.data, c_data, args.d.data};
  Key key;
  key[0] = static_cast<int64_t>(args.dtype);
  key[1] = args.batch;
  key[2] = args.m;
  key[3] = args.n;
  key[4] = args.k;
  for (int i = 0; i < 4; ++i) {
    key[MatrixField(i, kTranspose)] = stored[i]->transpose;
    key[MatrixField(i, kLeadingDim)] = stored[i]->ld;
    key[MatrixField(i, kBatchStride)] = matrices[i]->batch_stride;
    key[MatrixField(i, kAlignment)] = AlignmentOf(pointers[i]);
  }
  key[21] = static_cast<int64_t>(args.activation);
  key[22] = args.bias != nullptr;
  return Prepare(key, args);
}

absl::StatusOr<size_t> CublasLtGemm::WorkspaceBytes(
    const CublasLtGemmArgs& args) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Problem> problem, ProblemFor(args));
  return problem->workspace_bytes;
}

absl::Status CublasLtGemm::Run(const CublasLtGemmArgs& args, void* stream,
                               Allocator& workspace) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Problem> problem, ProblemFor(args));
  ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
  void* space = nullptr;
  if (problem->workspace_bytes > 0) {
    space = workspace.Allocate(problem->workspace_bytes);
    if (space == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no device memory for cuBLASLt's workspace of ",
                       problem->workspace_bytes, " bytes"));
    }
  }
  absl::Status status = Enqueue(*problem, args, stream, space);
  // Stream-ordered: the stream's next use of the block comes after the
  // matmul.
  if (space != nullptr) workspace.Free(space, problem->workspace_bytes);
  return status;
}

absl::Status CublasLtGemm::RunWithWorkspace(const CublasLtGemmArgs& args,
                                            void* stream, void* workspace,
                                            size_t workspace_bytes) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Problem> problem, ProblemFor(args));
  if (problem->workspace_bytes > workspace_bytes ||
      (problem->workspace_bytes > 0 && workspace == nullptr)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cuBLASLt's algorithm needs a workspace of ", problem->workspace_bytes,
        " bytes; it was given ", workspace_bytes));
  }
  ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
  return Enqueue(*problem, args, stream,
                 problem->workspace_bytes > 0 ? workspace : nullptr);
}

absl::Status CublasLtGemm::Enqueue(Problem& problem_ref,
                                   const CublasLtGemmArgs& args, void* stream,
                                   void* space) const {
  Problem* problem = &problem_ref;
  const bool with_c = args.beta != 0;
  const void* c_data = with_c ? args.c.data : args.d.data;
  const double alpha64 = args.alpha, beta64 = args.beta;
  const float alpha32 = static_cast<float>(args.alpha),
              beta32 = static_cast<float>(args.beta);
  const bool doubles = args.dtype == DType::kFloat64;
  const void* alpha = doubles ? static_cast<const void*>(&alpha64)
                              : static_cast<const void*>(&alpha32);
  const void* beta = doubles ? static_cast<const void*>(&beta64)
                             : static_cast<const void*>(&beta32);
  std::lock_guard<std::mutex> lock(problem->mu);
  if (problem->bias) {
    RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmulDescSetAttribute(
        problem->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args.bias,
        sizeof(args.bias)));
  }
  RETURN_IF_CUBLASLT_ERROR(api_->cublasLtMatmul(
      handle_, problem->desc, alpha, args.b.data, problem->layouts[0],
      args.a.data, problem->layouts[1], beta, c_data, problem->layouts[2],
      const_cast<void*>(args.d.data), problem->layouts[3], &problem->algo,
      space, problem->workspace_bytes, static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

}  // namespace guardjit
