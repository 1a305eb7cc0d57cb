#include "testing/cuda/emulated_driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/simt/simt_emulator.h"
#include "testing/cuda/emulated_device_state.h"

namespace guardjit {

namespace emulated {

// What cuGraphKernelNodeGetParams reports as a foreign node's function.
CUfunction ForeignFunction() {
  static int foreign;
  return reinterpret_cast<CUfunction>(&foreign);
}

State& state() {
  static State* const kState = new State;
  return *kState;
}

// Whether `stream` is being captured (its work is recorded, not run).
bool Capturing(CUstream stream) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().capturing.contains(stream);
}

// Why this thread's last failing call failed, for cuGetErrorString (a real
// driver says no more than the code; the emulator can say which compile or
// launch went wrong).
thread_local std::string t_last_error;

CUresult Fail(CUresult code, absl::string_view why) {
  t_last_error.assign(why.data(), std::min<size_t>(why.size(), 2048));
  return code;
}

// Copies and memsets are not recorded into graphs (guardjit's runs make
// none while capturing): one on a capturing stream fails loudly.
CUresult NotCaptured(absl::string_view what) {
  return Fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
              absl::StrCat(what,
                           " on a capturing stream: the emulated "
                           "device records only kernel launches"));
}

CUresult Copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0 && (dst == nullptr || src == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (bytes > 0) std::memmove(dst, src, bytes);
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().counters.memcpy_calls;
  return CUDA_SUCCESS;
}

void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

}  // namespace emulated

namespace {

using emulated::Capturing;
using emulated::Copy;
using emulated::EmuEvent;
using emulated::EmuFunction;
using emulated::EmuGraph;
using emulated::EmuGraphExec;
using emulated::EmuKernelNode;
using emulated::EmuModule;
using emulated::EmuStream;
using emulated::Fail;
using emulated::ForeignFunction;
using emulated::InstallGraphFunctions;
using emulated::NotCaptured;
using emulated::Ptr;
using emulated::State;
using emulated::state;
using emulated::t_last_error;

// The device's primary context: any non-null handle will do.
CUcontext PrimaryContext() {
  static int context;
  return reinterpret_cast<CUcontext>(&context);
}
thread_local std::vector<CUcontext> t_context_stack;
// Every function the emulator does not model: CUDA_ERROR_NOT_SUPPORTED.
template <typename F>
struct Unsupported;
template <typename... A>
struct Unsupported<CUresult (*)(A...)> {
  static CUresult Call(A...) { return CUDA_ERROR_NOT_SUPPORTED; }
};

// The __global__ functions of generated source: the identifier before the
// parameter list of each `__global__ void [__launch_bounds__(...)] NAME(`.
std::vector<std::string> KernelNames(absl::string_view source) {
  std::vector<std::string> names;
  constexpr absl::string_view kGlobal = "__global__ void ";
  for (size_t at = source.find(kGlobal); at != absl::string_view::npos;
       at = source.find(kGlobal, at + 1)) {
    size_t p = at + kGlobal.size();
    constexpr absl::string_view kBounds = "__launch_bounds__(";
    if (source.substr(p, kBounds.size()) == kBounds) {
      p = source.find(')', p);
      if (p == absl::string_view::npos) break;
      p += 2;  // ") "
    }
    const size_t paren = source.find('(', p);
    if (paren == absl::string_view::npos) break;
    names.emplace_back(source.substr(p, paren - p));
  }
  return names;
}

void* AllocateBlock(size_t bytes) {
  // 256-byte aligned, as cudaMalloc's blocks are.
  return std::aligned_alloc(256,
                            (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
}

CUresult DeviceAlloc(CUdeviceptr* ptr, size_t bytes) {
  if (ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  void* block = AllocateBlock(bytes);
  if (block == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.device_blocks[reinterpret_cast<uintptr_t>(block)] = bytes;
  ++s.counters.device_allocations;
  s.counters.live_device_bytes += static_cast<int64_t>(bytes);
  *ptr = reinterpret_cast<CUdeviceptr>(block);
  return CUDA_SUCCESS;
}

CUresult DeviceFree(CUdeviceptr ptr) {
  if (ptr == 0) return CUDA_SUCCESS;
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.device_blocks.find(static_cast<uintptr_t>(ptr));
    if (it == s.device_blocks.end()) return CUDA_ERROR_INVALID_VALUE;
    s.counters.live_device_bytes -= static_cast<int64_t>(it->second);
    s.device_blocks.erase(it);
  }
  std::free(reinterpret_cast<void*>(ptr));
  return CUDA_SUCCESS;
}

const char* ErrorName(CUresult error) {
  switch (error) {
    case CUDA_SUCCESS:
      return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_INVALID_IMAGE:
      return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_NOT_FOUND:
      return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_INVALID_HANDLE:
      return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case CUDA_ERROR_ILLEGAL_STATE:
      return "CUDA_ERROR_ILLEGAL_STATE";
    default:
      return nullptr;
  }
}

CudaDriver* Build() {
  auto* d = new CudaDriver;
  d->library_path = "(emulated: guardjit's SIMT emulator)";
  d->driver_version = 13000;
  d->loads_cuda_source = true;
#define GJ_EMU_DEFAULT(name, symbol, signature) \
  d->name = &Unsupported<decltype(d->name)>::Call;
  GJ_CUDA_DRIVER_FUNCTIONS(GJ_EMU_DEFAULT)
#undef GJ_EMU_DEFAULT

  d->cuGetErrorName = [](CUresult error, const char** out) -> CUresult {
    const char* name = ErrorName(error);
    if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *out = name;
    return CUDA_SUCCESS;
  };
  d->cuGetErrorString = [](CUresult error, const char** out) -> CUresult {
    const char* name = ErrorName(error);
    if (out == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *out = t_last_error.empty() ? "reported by guardjit's emulated CUDA device"
                                : t_last_error.c_str();
    return CUDA_SUCCESS;
  };
  d->cuInit = [](unsigned int) -> CUresult { return CUDA_SUCCESS; };
  d->cuDriverGetVersion = [](int* v) -> CUresult {
    *v = 13000;
    return CUDA_SUCCESS;
  };
  d->cuDeviceGetCount = [](int* n) -> CUresult {
    *n = 1;
    return CUDA_SUCCESS;
  };
  d->cuDeviceGet = [](CUdevice* device, int ordinal) -> CUresult {
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
  };
  d->cuDeviceGetName = [](char* name, int len, CUdevice) -> CUresult {
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<size_t>(len), "%s",
                  "guardjit emulated sm_90");
    return CUDA_SUCCESS;
  };
  d->cuDeviceGetAttribute = [](int* value, CUdevice_attribute attribute,
                               CUdevice) -> CUresult {
    switch (attribute) {
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *value = 9;
        break;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *value = 0;
        break;
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *value = 132;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = 1024;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
        *value = 2048;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
        *value = 65536;
        break;
      case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *value = 32;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *value = 48 * 1024;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *value = 227 * 1024;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        *value = 228 * 1024;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *value = 2147483647;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *value = 65535;
        break;
      case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        *value = 50 * 1024 * 1024;
        break;
      default:
        *value = 0;
        break;
    }
    return CUDA_SUCCESS;
  };
  d->cuDeviceTotalMem = [](size_t* bytes, CUdevice) -> CUresult {
    *bytes = size_t{16} << 30;
    return CUDA_SUCCESS;
  };
  d->cuDevicePrimaryCtxRetain = [](CUcontext* context, CUdevice) -> CUresult {
    *context = PrimaryContext();
    return CUDA_SUCCESS;
  };
  d->cuDevicePrimaryCtxRelease = [](CUdevice) -> CUresult {
    return CUDA_SUCCESS;
  };
  d->cuCtxGetCurrent = [](CUcontext* context) -> CUresult {
    *context = t_context_stack.empty() ? nullptr : t_context_stack.back();
    return CUDA_SUCCESS;
  };
  d->cuCtxSetCurrent = [](CUcontext context) -> CUresult {
    if (t_context_stack.empty()) {
      t_context_stack.push_back(context);
    } else {
      t_context_stack.back() = context;
    }
    return CUDA_SUCCESS;
  };
  d->cuCtxPushCurrent = [](CUcontext context) -> CUresult {
    t_context_stack.push_back(context);
    return CUDA_SUCCESS;
  };
  d->cuCtxPopCurrent = [](CUcontext* context) -> CUresult {
    if (t_context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) *context = t_context_stack.back();
    t_context_stack.pop_back();
    return CUDA_SUCCESS;
  };

  d->cuModuleLoadData = [](CUmodule* module, const void* image) -> CUresult {
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const absl::string_view source(static_cast<const char*>(image));
    const std::vector<std::string> names = KernelNames(source);
    if (names.empty()) {
      return Fail(CUDA_ERROR_INVALID_IMAGE,
                  absl::StrCat("the image is not CUDA C source with "
                               "__global__ kernels; it starts with '",
                               absl::CHexEscape(source.substr(0, 64)), "' (",
                               source.size(), " bytes)"));
    }
    absl::StatusOr<std::unique_ptr<SimtModule>> simt =
        SimtModule::Compile(source, names);
    if (!simt.ok()) {
      return Fail(CUDA_ERROR_INVALID_IMAGE, simt.status().ToString());
    }
    auto* loaded = new EmuModule;
    loaded->simt = std::move(*simt);
    for (const std::string& name : names) {
      auto fn = std::make_unique<EmuFunction>();
      fn->module = loaded;
      fn->name = name;
      loaded->functions[name] = std::move(fn);
    }
    {
      std::lock_guard<std::mutex> lock(state().mu);
      ++state().counters.module_loads;
    }
    *module = reinterpret_cast<CUmodule>(loaded);
    return CUDA_SUCCESS;
  };
  d->cuModuleUnload = [](CUmodule module) -> CUresult {
    delete reinterpret_cast<EmuModule*>(module);
    return CUDA_SUCCESS;
  };
  d->cuModuleGetFunction = [](CUfunction* fn, CUmodule module,
                              const char* name) -> CUresult {
    auto* m = reinterpret_cast<EmuModule*>(module);
    if (m == nullptr || fn == nullptr || name == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto it = m->functions.find(name);
    if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
    *fn = reinterpret_cast<CUfunction>(it->second.get());
    return CUDA_SUCCESS;
  };
  d->cuFuncGetAttribute = [](int* value, CUfunction_attribute,
                             CUfunction) -> CUresult {
    *value = 0;
    return CUDA_SUCCESS;
  };
  d->cuFuncSetAttribute = [](CUfunction, CUfunction_attribute,
                             int) -> CUresult { return CUDA_SUCCESS; };
  d->cuLaunchKernel = [](CUfunction f, unsigned int gx, unsigned int gy,
                         unsigned int gz, unsigned int bx, unsigned int by,
                         unsigned int bz, unsigned int, CUstream stream,
                         void** params, void** extra) -> CUresult {
    auto* fn = reinterpret_cast<EmuFunction*>(f);
    if (fn == nullptr || extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
    {
      std::lock_guard<std::mutex> lock(state().mu);
      auto capture = state().capturing.find(stream);
      if (capture != state().capturing.end()) {
        // Recorded, not run.
        const int arity = fn->module->simt->Arity(fn->name);
        if (arity > 0 && params == nullptr) return CUDA_ERROR_INVALID_VALUE;
        auto node = std::make_unique<EmuKernelNode>();
        node->function = fn;
        node->grid = SimtDim3{gx, gy, gz};
        node->block = SimtDim3{bx, by, bz};
        node->SetValues(params, arity);
        capture->second->nodes.push_back(std::move(node));
        ++state().counters.captured_launches;
        return CUDA_SUCCESS;
      }
      ++state().counters.launches;
      state().counters.last_launch_stream = stream;
    }
    const absl::Status launched = fn->module->simt->Launch(
        fn->name, SimtDim3{gx, gy, gz}, SimtDim3{bx, by, bz}, params);
    if (launched.ok()) return CUDA_SUCCESS;
    return Fail(launched.code() == absl::StatusCode::kInvalidArgument
                    ? CUDA_ERROR_INVALID_VALUE
                    : CUDA_ERROR_LAUNCH_FAILED,
                launched.ToString());
  };

  d->cuMemAlloc = [](CUdeviceptr* ptr, size_t bytes) -> CUresult {
    return DeviceAlloc(ptr, bytes);
  };
  d->cuMemFree = [](CUdeviceptr ptr) -> CUresult { return DeviceFree(ptr); };
  d->cuMemAllocAsync = [](CUdeviceptr* ptr, size_t bytes,
                          CUstream) -> CUresult {
    return DeviceAlloc(ptr, bytes);
  };
  d->cuMemFreeAsync = [](CUdeviceptr ptr, CUstream) -> CUresult {
    return DeviceFree(ptr);
  };
  d->cuMemHostAlloc = [](void** ptr, size_t bytes, unsigned int) -> CUresult {
    if (ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    void* block = AllocateBlock(bytes);
    if (block == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    std::lock_guard<std::mutex> lock(state().mu);
    state().host_blocks[reinterpret_cast<uintptr_t>(block)] = bytes;
    *ptr = block;
    return CUDA_SUCCESS;
  };
  d->cuMemFreeHost = [](void* ptr) -> CUresult {
    {
      std::lock_guard<std::mutex> lock(state().mu);
      if (state().host_blocks.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    std::free(ptr);
    return CUDA_SUCCESS;
  };
  d->cuMemHostGetDevicePointer = [](CUdeviceptr* dptr, void* host,
                                    unsigned int) -> CUresult {
    *dptr = reinterpret_cast<CUdeviceptr>(host);
    return CUDA_SUCCESS;
  };
  d->cuMemcpyHtoD = [](CUdeviceptr dst, const void* src,
                       size_t bytes) -> CUresult {
    return Copy(Ptr(dst), src, bytes);
  };
  d->cuMemcpyDtoH = [](void* dst, CUdeviceptr src, size_t bytes) -> CUresult {
    return Copy(dst, Ptr(src), bytes);
  };
  d->cuMemcpyDtoD = [](CUdeviceptr dst, CUdeviceptr src,
                       size_t bytes) -> CUresult {
    return Copy(Ptr(dst), Ptr(src), bytes);
  };
  d->cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t bytes,
                            CUstream stream) -> CUresult {
    if (Capturing(stream)) return NotCaptured("cuMemcpyHtoDAsync");
    return Copy(Ptr(dst), src, bytes);
  };
  d->cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t bytes,
                            CUstream stream) -> CUresult {
    if (Capturing(stream)) return NotCaptured("cuMemcpyDtoHAsync");
    return Copy(dst, Ptr(src), bytes);
  };
  d->cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                            CUstream stream) -> CUresult {
    {
      // Recorded as a memcpy node, not run.
      std::lock_guard<std::mutex> lock(state().mu);
      auto capture = state().capturing.find(stream);
      if (capture != state().capturing.end()) {
        if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
        auto node = std::make_unique<EmuKernelNode>();
        node->kind = EmuKernelNode::Kind::kMemcpy;
        node->dst = dst;
        node->src = src;
        node->bytes = bytes;
        capture->second->nodes.push_back(std::move(node));
        ++state().counters.captured_copies;
        return CUDA_SUCCESS;
      }
    }
    return Copy(Ptr(dst), Ptr(src), bytes);
  };
  d->cuMemsetD8 = [](CUdeviceptr dst, unsigned char value,
                     size_t n) -> CUresult {
    std::memset(Ptr(dst), value, n);
    return CUDA_SUCCESS;
  };
  d->cuMemsetD8Async = [](CUdeviceptr dst, unsigned char value, size_t n,
                          CUstream stream) -> CUresult {
    if (Capturing(stream)) return NotCaptured("cuMemsetD8Async");
    std::memset(Ptr(dst), value, n);
    return CUDA_SUCCESS;
  };
  d->cuMemsetD32Async = [](CUdeviceptr dst, unsigned int value, size_t n,
                           CUstream stream) -> CUresult {
    if (Capturing(stream)) return NotCaptured("cuMemsetD32Async");
    auto* words = static_cast<unsigned int*>(Ptr(dst));
    for (size_t i = 0; i < n; ++i) words[i] = value;
    return CUDA_SUCCESS;
  };

  d->cuStreamCreate = [](CUstream* stream, unsigned int flags) -> CUresult {
    *stream = reinterpret_cast<CUstream>(new EmuStream{flags});
    return CUDA_SUCCESS;
  };
  d->cuStreamDestroy = [](CUstream stream) -> CUresult {
    delete reinterpret_cast<EmuStream*>(stream);
    return CUDA_SUCCESS;
  };
  d->cuStreamSynchronize = [](CUstream) -> CUresult { return CUDA_SUCCESS; };
  d->cuStreamQuery = [](CUstream) -> CUresult { return CUDA_SUCCESS; };
  d->cuStreamWaitEvent = [](CUstream, CUevent, unsigned int) -> CUresult {
    return CUDA_SUCCESS;
  };
  InstallGraphFunctions(d);
  d->cuEventCreate = [](CUevent* event, unsigned int flags) -> CUresult {
    *event = reinterpret_cast<CUevent>(new EmuEvent{flags});
    return CUDA_SUCCESS;
  };
  d->cuEventDestroy = [](CUevent event) -> CUresult {
    delete reinterpret_cast<EmuEvent*>(event);
    return CUDA_SUCCESS;
  };
  d->cuEventRecord = [](CUevent event, CUstream) -> CUresult {
    if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    std::lock_guard<std::mutex> lock(state().mu);
    ++state().counters.event_records;
    return CUDA_SUCCESS;
  };
  d->cuEventSynchronize = [](CUevent) -> CUresult { return CUDA_SUCCESS; };
  d->cuEventQuery = [](CUevent) -> CUresult { return CUDA_SUCCESS; };
  d->cuEventElapsedTime = [](float* ms, CUevent, CUevent) -> CUresult {
    *ms = 0;
    return CUDA_SUCCESS;
  };
  return d;
}

}  // namespace

const CudaDriver* EmulatedCudaDriver::Get() {
  static const CudaDriver* const kDriver = Build();
  return kDriver;
}

EmulatedCudaDriver::Counters EmulatedCudaDriver::counters() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().counters;
}

bool EmulatedCudaDriver::CaptureForeignWork(CUstream stream,
                                            std::function<void()> work) {
  std::lock_guard<std::mutex> lock(state().mu);
  auto capture = state().capturing.find(stream);
  if (capture == state().capturing.end()) return false;
  auto node = std::make_unique<EmuKernelNode>();
  node->kind = EmuKernelNode::Kind::kForeign;
  node->work = std::move(work);
  capture->second->nodes.push_back(std::move(node));
  ++state().counters.captured_foreign;
  return true;
}

int EmulatedCudaDriver::Arity(CUfunction function) {
  auto* fn = reinterpret_cast<EmuFunction*>(function);
  return fn == nullptr ? -1 : fn->module->simt->Arity(fn->name);
}

}  // namespace guardjit
