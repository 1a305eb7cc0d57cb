#include "testing/cuda/emulated_cublaslt.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/half.h"
#include "testing/cuda/emulated_driver.h"

namespace guardjit {

namespace {

struct EmuLayout {
  cudaDataType type = CUDA_R_32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;
};
struct EmuDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType scale = CUDA_R_32F;
  int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
};
struct EmuPreference {
  uint64_t max_workspace = 0;
  uint32_t min_alignment[4] = {256, 256, 256, 256};  // A, B, C, D
};
struct EmuHandle {
  int unused = 0;
};

constexpr uint64_t kAlgoTag = 0x67756172646a6974;  // "guardjit"
constexpr size_t kWorkspaceBytes = 4096;

struct State {
  std::mutex mu;
  EmulatedCublasLt::Counters counters;             // guarded by mu
  int failures_left = 0;                           // guarded by mu
  cublasStatus_t failure = CUBLAS_STATUS_SUCCESS;  // guarded by mu
};
State& state() {
  static State* const kState = new State;
  return *kState;
}
template <typename F>
void Count(F&& update) {
  std::lock_guard<std::mutex> lock(state().mu);
  update(state().counters);
}

// Copies an attribute value of type T from (buf, size).
template <typename T>
cublasStatus_t Read(const void* buf, size_t size, T* out) {
  if (buf == nullptr || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(out, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

size_t ElementBytes(cudaDataType type) {
  switch (type) {
    case CUDA_R_32F:
      return 4;
    case CUDA_R_64F:
      return 8;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    default:
      return 0;
  }
}

double Load(const void* base, cudaDataType type, int64_t index) {
  const char* p = static_cast<const char*>(base) + index * ElementBytes(type);
  switch (type) {
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CUDA_R_64F: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case CUDA_R_16F: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return HalfBitsToFloat(v);
    }
    default: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return BFloat16BitsToFloat(v);
    }
  }
}

void Store(void* base, cudaDataType type, int64_t index, double value) {
  char* p = static_cast<char*>(base) + index * ElementBytes(type);
  switch (type) {
    case CUDA_R_32F: {
      const float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      break;
    }
    case CUDA_R_64F:
      std::memcpy(p, &value, 8);
      break;
    case CUDA_R_16F: {
      const uint16_t v = FloatToHalfBits(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      break;
    }
    default: {
      const uint16_t v = FloatToBFloat16Bits(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      break;
    }
  }
}

// The problem a (desc, layouts) tuple describes: D (m x n) = op(A) (m x k)
// op(B) (k x n), per batch. INVALID_VALUE / NOT_SUPPORTED as cuBLASLt would.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int32_t batch = 1;
};
cublasStatus_t Validate(const EmuDesc& d, const EmuLayout& a,
                        const EmuLayout& b, const EmuLayout& c,
                        const EmuLayout& out, Problem* problem) {
  for (const EmuLayout* l : {&a, &b, &c, &out}) {
    if (l->order != CUBLASLT_ORDER_COL || ElementBytes(l->type) == 0) {
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (l->ld < std::max<int64_t>(1, static_cast<int64_t>(l->rows))) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (l->batch_count != out.batch_count || l->batch_count < 1) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  if (a.type != b.type || c.type != out.type || a.type != out.type) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const bool doubles = out.type == CUDA_R_64F;
  if (doubles != (d.compute == CUBLAS_COMPUTE_64F) ||
      d.scale != (doubles ? CUDA_R_64F : CUDA_R_32F) ||
      d.pointer_mode != CUBLASLT_POINTER_MODE_HOST) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  switch (d.epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
    case CUBLASLT_EPILOGUE_RELU:
    case CUBLASLT_EPILOGUE_BIAS:
    case CUBLASLT_EPILOGUE_RELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      break;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const bool ta = d.transa != CUBLAS_OP_N, tb = d.transb != CUBLAS_OP_N;
  problem->m = static_cast<int64_t>(out.rows);
  problem->n = static_cast<int64_t>(out.cols);
  problem->k = static_cast<int64_t>(ta ? a.rows : a.cols);
  problem->batch = out.batch_count;
  if (static_cast<int64_t>(ta ? a.cols : a.rows) != problem->m ||
      static_cast<int64_t>(tb ? b.cols : b.rows) != problem->k ||
      static_cast<int64_t>(tb ? b.rows : b.cols) != problem->n ||
      c.rows != out.rows || c.cols != out.cols) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

double Gelu(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

const char* StatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    default:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}

CublasLtApi* Build() {
  auto* api = new CublasLtApi;
  api->library_path = "(emulated: guardjit's host cuBLASLt)";
  api->version = 130000;
  api->cublasLtGetStatusName = [](cublasStatus_t s) { return StatusName(s); };
  api->cublasLtGetStatusString = [](cublasStatus_t) -> const char* {
    return "reported by guardjit's emulated cuBLASLt";
  };
  api->cublasLtGetVersion = []() -> size_t { return 130000; };
  api->cublasLtCreate = [](cublasLtHandle_t* handle) -> cublasStatus_t {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = reinterpret_cast<cublasLtHandle_t>(new EmuHandle);
    Count([](auto& c) { ++c.handles; });
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtDestroy = [](cublasLtHandle_t handle) -> cublasStatus_t {
    delete reinterpret_cast<EmuHandle*>(handle);
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmulDescCreate = [](cublasLtMatmulDesc_t* desc,
                                     cublasComputeType_t compute,
                                     cudaDataType_t scale) -> cublasStatus_t {
    if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto* d = new EmuDesc;
    d->compute = compute;
    d->scale = scale;
    *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
    Count([](auto& c) { ++c.matmul_descs; });
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmulDescDestroy =
      [](cublasLtMatmulDesc_t desc) -> cublasStatus_t {
    delete reinterpret_cast<EmuDesc*>(desc);
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmulDescSetAttribute =
      [](cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
         const void* buf, size_t size) -> cublasStatus_t {
    auto* d = reinterpret_cast<EmuDesc*>(desc);
    if (d == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
      case CUBLASLT_MATMUL_DESC_TRANSA:
        return Read(buf, size, &d->transa);
      case CUBLASLT_MATMUL_DESC_TRANSB:
        return Read(buf, size, &d->transb);
      case CUBLASLT_MATMUL_DESC_EPILOGUE:
        return Read(buf, size, &d->epilogue);
      case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        return Read(buf, size, &d->bias);
      case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        return Read(buf, size, &d->pointer_mode);
      default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  };
  api->cublasLtMatrixLayoutCreate =
      [](cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
         uint64_t cols, int64_t ld) -> cublasStatus_t {
    if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto* l = new EmuLayout;
    l->type = type;
    l->rows = rows;
    l->cols = cols;
    l->ld = ld;
    *layout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
    Count([](auto& c) { ++c.layouts; });
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatrixLayoutDestroy =
      [](cublasLtMatrixLayout_t layout) -> cublasStatus_t {
    delete reinterpret_cast<EmuLayout*>(layout);
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatrixLayoutSetAttribute =
      [](cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
         const void* buf, size_t size) -> cublasStatus_t {
    auto* l = reinterpret_cast<EmuLayout*>(layout);
    if (l == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
      case CUBLASLT_MATRIX_LAYOUT_ORDER:
        return Read(buf, size, &l->order);
      case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
        return Read(buf, size, &l->batch_count);
      case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
        return Read(buf, size, &l->batch_stride);
      default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  };
  api->cublasLtMatmulPreferenceCreate =
      [](cublasLtMatmulPreference_t* pref) -> cublasStatus_t {
    if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *pref = reinterpret_cast<cublasLtMatmulPreference_t>(new EmuPreference);
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmulPreferenceDestroy =
      [](cublasLtMatmulPreference_t pref) -> cublasStatus_t {
    delete reinterpret_cast<EmuPreference*>(pref);
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmulPreferenceSetAttribute =
      [](cublasLtMatmulPreference_t pref,
         cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
         size_t size) -> cublasStatus_t {
    auto* p = reinterpret_cast<EmuPreference*>(pref);
    if (p == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
      case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
        return Read(buf, size, &p->max_workspace);
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
        return Read(
            buf, size,
            &p->min_alignment[attr -
                              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES]);
      default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  };
  api->cublasLtMatmulAlgoGetHeuristic =
      [](cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
         cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
         cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
         cublasLtMatmulPreference_t pref, int requested,
         cublasLtMatmulHeuristicResult_t results[],
         int* returned) -> cublasStatus_t {
    if (handle == nullptr || desc == nullptr || a == nullptr || b == nullptr ||
        c == nullptr || d == nullptr || pref == nullptr || requested < 1 ||
        results == nullptr || returned == nullptr) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    Count([](auto& counters) { ++counters.heuristic_queries; });
    Problem problem;
    const cublasStatus_t valid = Validate(
        *reinterpret_cast<EmuDesc*>(desc), *reinterpret_cast<EmuLayout*>(a),
        *reinterpret_cast<EmuLayout*>(b), *reinterpret_cast<EmuLayout*>(c),
        *reinterpret_cast<EmuLayout*>(d), &problem);
    if (valid != CUBLAS_STATUS_SUCCESS) return valid;
    const size_t workspace = std::min<uint64_t>(
        kWorkspaceBytes, reinterpret_cast<EmuPreference*>(pref)->max_workspace);
    results[0] = cublasLtMatmulHeuristicResult_t{};
    results[0].algo.data[0] = kAlgoTag;
    results[0].algo.data[1] = workspace;
    // The algorithm assumes the alignments the preference promised; matmul
    // checks the pointers it gets keep the promise.
    const EmuPreference& preference = *reinterpret_cast<EmuPreference*>(pref);
    for (int i = 0; i < 4; ++i) {
      results[0].algo.data[2 + i] = preference.min_alignment[i];
    }
    results[0].workspaceSize = workspace;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
  };
  api->cublasLtMatmul =
      [](cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
         const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
         cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
         cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
         const cublasLtMatmulAlgo_t* algo, void* workspace,
         size_t workspace_bytes, cudaStream_t stream) -> cublasStatus_t {
    if (handle == nullptr || desc == nullptr || alpha == nullptr ||
        beta == nullptr || a == nullptr || b == nullptr || d == nullptr ||
        a_desc == nullptr || b_desc == nullptr || c_desc == nullptr ||
        d_desc == nullptr) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    {
      std::lock_guard<std::mutex> lock(state().mu);
      if (state().failures_left > 0) {
        --state().failures_left;
        return state().failure;
      }
    }
    const EmuDesc& op = *reinterpret_cast<EmuDesc*>(desc);
    const EmuLayout& la = *reinterpret_cast<EmuLayout*>(a_desc);
    const EmuLayout& lb = *reinterpret_cast<EmuLayout*>(b_desc);
    const EmuLayout& lc = *reinterpret_cast<EmuLayout*>(c_desc);
    const EmuLayout& ld = *reinterpret_cast<EmuLayout*>(d_desc);
    Problem p;
    const cublasStatus_t valid = Validate(op, la, lb, lc, ld, &p);
    if (valid != CUBLAS_STATUS_SUCCESS) return valid;
    // The algorithm's workspace must be there (null algo: cuBLASLt picks
    // one itself, within the workspace it is given).
    if (algo != nullptr) {
      if (algo->data[0] != kAlgoTag || workspace_bytes < algo->data[1] ||
          (algo->data[1] > 0 && workspace == nullptr)) {
        return CUBLAS_STATUS_INVALID_VALUE;
      }
      const void* pointers[4] = {a, b, c, d};
      for (int i = 0; i < 4; ++i) {
        if (pointers[i] != nullptr &&
            reinterpret_cast<uintptr_t>(pointers[i]) % algo->data[2 + i] != 0) {
          return CUBLAS_STATUS_INVALID_VALUE;
        }
      }
    }
    const bool has_bias = (op.epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
    if (has_bias && op.bias == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    const bool doubles = ld.type == CUDA_R_64F;
    double alpha_v, beta_v;
    if (doubles) {
      std::memcpy(&alpha_v, alpha, 8);
      std::memcpy(&beta_v, beta, 8);
    } else {
      float f;
      std::memcpy(&f, alpha, 4);
      alpha_v = f;
      std::memcpy(&f, beta, 4);
      beta_v = f;
    }
    if (beta_v != 0 && c == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    // The product, with the descriptor's state as it is now (a captured
    // matmul keeps the bias pointer and epilogue it was enqueued with).
    auto run = [op, la, lb, lc, ld, p, alpha_v, beta_v, a, b, c, d, stream] {
      const bool ta = op.transa != CUBLAS_OP_N, tb = op.transb != CUBLAS_OP_N;
      const bool has_bias = (op.epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
      for (int32_t batch = 0; batch < p.batch; ++batch) {
        const int64_t oa = batch * la.batch_stride,
                      ob = batch * lb.batch_stride,
                      oc = batch * lc.batch_stride,
                      od = batch * ld.batch_stride;
        for (int64_t j = 0; j < p.n; ++j) {
          for (int64_t i = 0; i < p.m; ++i) {
            double acc = 0;
            for (int64_t kk = 0; kk < p.k; ++kk) {
              const int64_t ia = ta ? kk + i * la.ld : i + kk * la.ld;
              const int64_t ib = tb ? j + kk * lb.ld : kk + j * lb.ld;
              acc += Load(a, la.type, oa + ia) * Load(b, lb.type, ob + ib);
            }
            double v = alpha_v * acc;
            if (beta_v != 0) v += beta_v * Load(c, lc.type, oc + i + j * lc.ld);
            if (has_bias) v += Load(op.bias, ld.type, i);
            if ((op.epilogue & CUBLASLT_EPILOGUE_RELU) != 0) {
              v = std::max(v, 0.0);
            }
            if ((op.epilogue & CUBLASLT_EPILOGUE_GELU) != 0) v = Gelu(v);
            Store(d, ld.type, od + i + j * ld.ld, v);
          }
        }
      }
      Count([&](auto& counters) {
        ++counters.matmuls;
        if (beta_v != 0) ++counters.matmuls_reading_c;
        counters.last_beta = beta_v;
        counters.last_epilogue = static_cast<int>(op.epilogue);
        counters.last_stream = stream;
      });
    };
    // On a capturing stream the matmul becomes a node of the graph (as a
    // real cuBLASLt's kernels do), run by each launch of it.
    if (EmulatedCudaDriver::CaptureForeignWork(
            reinterpret_cast<CUstream>(stream), run)) {
      Count([](auto& counters) { ++counters.captured_matmuls; });
    } else {
      run();
    }
    return CUBLAS_STATUS_SUCCESS;
  };
  return api;
}

}  // namespace

const CublasLtApi* EmulatedCublasLt::Get() {
  static const CublasLtApi* const kApi = Build();
  return kApi;
}

EmulatedCublasLt::Counters EmulatedCublasLt::counters() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().counters;
}

void EmulatedCublasLt::FailNextMatmuls(int count, cublasStatus_t status) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().failures_left = count;
  state().failure = status;
}

}  // namespace guardjit
