#include "jit/cuda/nvrtc_compiler.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/cuda/nvrtc_api.h"

namespace guardjit {

namespace {

std::string ArchName(int number) {
  return CudaArch{number / 10, number % 10}.ToString();
}

}  // namespace

absl::StatusOr<NvrtcTarget> SelectNvrtcTarget(CudaArch requested,
                                              absl::Span<const int> supported) {
  const int number = requested.number();
  if (supported.empty() || number < supported.front()) {
    return absl::InvalidArgumentError(absl::StrCat(
        requested.ToString(), " is older than every arch this NVRTC compiles ",
        "for", supported.empty() ? "" : " (the oldest is ",
        supported.empty() ? "" : ArchName(supported.front()),
        supported.empty() ? "" : ")"));
  }
  for (int arch : supported) {
    if (arch == number) return NvrtcTarget{requested, false, ""};
  }
  int below = supported.front();  // the newest listed arch under `number`
  for (int arch : supported) {
    if (arch < number) below = arch;
  }
  const CudaArch chosen{below / 10, below % 10};
  if (number > supported.back()) {
    return NvrtcTarget{
        chosen, true,
        absl::StrCat(requested.ToString(), " is newer than every arch this ",
                     "NVRTC compiles for: compiled compute_", below,
                     " PTX, which the driver compiles for the device at load")};
  }
  if (chosen.major == requested.major) {
    return NvrtcTarget{
        chosen, false,
        absl::StrCat(requested.ToString(), " is not an NVRTC target: ",
                     "compiled ", chosen.ToString(), ", whose CUBIN runs on ",
                     "every sm_", requested.major, "x at or above it")};
  }
  return NvrtcTarget{
      chosen, true,
      absl::StrCat(requested.ToString(), " is not an NVRTC target: compiled ",
                   "compute_", below,
                   " PTX for the driver to compile at load")};
}

struct NvrtcCompiler::Pending {
  std::promise<absl::StatusOr<std::shared_ptr<const CudaCompileResult>>>
      promise;
  std::shared_future<absl::StatusOr<std::shared_ptr<const CudaCompileResult>>>
      future = promise.get_future().share();
};

int64_t NvrtcCompiler::compiled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_;
}

int64_t NvrtcCompiler::cache_hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_hits_;
}

int64_t NvrtcCompiler::loaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_;
}

namespace {

// A result as a compile-cache payload: the image's length (8 bytes,
// little-endian), the image, then the log. The rest of a result follows
// from the key (arch, options, NVRTC version) or the log (kernel
// resources).
std::string EncodeResult(const CudaCompileResult& result) {
  std::string out;
  const uint64_t n = result.image.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  out += result.image;
  out += result.log;
  return out;
}

std::string PersistentKey(const std::string& key) {
  return absl::StrCat("guardjit nvrtc\n", key);
}

}  // namespace

std::shared_ptr<const CudaCompileResult> NvrtcCompiler::LoadPersistent(
    const std::string& key, const NvrtcTarget& target,
    const std::vector<std::string>& options) const {
  if (options_.persistent == nullptr) return nullptr;
  std::optional<CompileCache::Hit> hit =
      options_.persistent->Lookup(PersistentKey(key));
  if (!hit.has_value()) return nullptr;
  const std::string& payload = hit->record.payload;
  uint64_t n = 0;
  for (int i = 0; i < 8 && i < static_cast<int>(payload.size()); ++i) {
    n |= uint64_t{static_cast<uint8_t>(payload[i])} << (8 * i);
  }
  if (payload.size() < 8 || n == 0 || n > payload.size() - 8) {
    options_.persistent->CountError(
        absl::DataLossError("a cached NVRTC result does not hold an image"));
    return nullptr;
  }
  auto result = std::make_shared<CudaCompileResult>();
  result->image = payload.substr(8, n);
  result->log = payload.substr(8 + n);
  if (!target.ptx) result->kernels = ParsePtxasLog(result->log);
  result->ptx = target.ptx;
  result->arch = target.arch;
  result->note = target.note;
  result->options = options;
  result->compile_time = absl::Milliseconds(hit->record.info.compile_ms);
  result->nvrtc_version = nvrtc_version();
  return result;
}

void NvrtcCompiler::StorePersistent(const std::string& key,
                                    const CudaCompileResult& result) const {
  if (options_.persistent == nullptr) return;
  CacheRecord record;
  record.key = PersistentKey(key);
  record.info.kind = result.ptx ? "nvrtc-ptx" : "nvrtc-cubin";
  record.info.pid = ::getpid();
  record.info.compile_ms = absl::ToDoubleMilliseconds(result.compile_time);
  record.info.created_ms = absl::ToUnixMillis(absl::Now());
  record.payload = EncodeResult(result);
  options_.persistent->Store(record);
}

size_t NvrtcCompiler::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

void NvrtcCompiler::Insert(std::string key,
                           std::shared_ptr<const CudaCompileResult> result) {
  if (options_.cache_capacity == 0) return;
  lru_.push_front(Cached{std::move(key), std::move(result)});
  cache_.emplace(lru_.front().key, lru_.begin());
  while (lru_.size() > options_.cache_capacity) {
    cache_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

namespace {

// How much of a failed compile's log goes into the error.
constexpr size_t kMaxLogBytesInError = 4096;

std::string BoundedLog(absl::string_view log) {
  if (log.size() <= kMaxLogBytesInError) return std::string(log);
  return absl::StrCat(log.substr(0, kMaxLogBytesInError), "\u2026 (",
                      log.size() - kMaxLogBytesInError, " more bytes)");
}

bool HasFp16Header(const std::string& dir) {
  std::error_code error;
  return std::filesystem::exists(dir + "/cuda_fp16.h", error);
}

std::vector<std::string> DefaultIncludeDirs(const NvrtcApi& api) {
  std::vector<std::string> candidates;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(variable);
    if (root != nullptr && root[0] != '\0') {
      candidates.push_back(absl::StrCat(root, "/include"));
    }
  }
  // libnvrtc in <toolkit>/lib64 (or lib, or targets/<triple>/lib).
  const std::filesystem::path library(api.library_path);
  candidates.push_back(
      (library.parent_path().parent_path() / "include").string());
  candidates.push_back("/usr/local/cuda/include");
  for (const std::string& dir : candidates) {
    if (HasFp16Header(dir)) return {dir};
  }
  return {};
}

// Destroys an NVRTC program on every path out of a compile.
class ProgramGuard {
 public:
  ProgramGuard(const NvrtcApi& api, nvrtcProgram program)
      : api_(api), program_(program) {}
  ~ProgramGuard() { (void)api_.nvrtcDestroyProgram(&program_); }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<NvrtcCompiler>> NvrtcCompiler::Create(
    Options options) {
  ASSIGN_OR_RETURN(const NvrtcApi* api, NvrtcApi::Get());
  if (options.include_dirs.empty()) {
    options.include_dirs = DefaultIncludeDirs(*api);
  }
  return std::shared_ptr<NvrtcCompiler>(
      new NvrtcCompiler(api, std::move(options)));
}

int NvrtcCompiler::nvrtc_version() const { return api_->version(); }

const std::vector<int>& NvrtcCompiler::supported_archs() const {
  return api_->supported_archs;
}

absl::StatusOr<std::shared_ptr<const CudaCompileResult>> NvrtcCompiler::Compile(
    const CudaCompileRequest& request) {
  ASSIGN_OR_RETURN(const NvrtcTarget target,
                   SelectNvrtcTarget(request.arch, api_->supported_archs));
  std::vector<std::string> options = {
      target.ptx ? absl::StrCat("-arch=compute_", target.arch.number())
                 : absl::StrCat("-arch=", target.arch.ToString()),
      "--std=c++17", "-Xptxas=-v"};
  if (options_.line_info) options.push_back("-lineinfo");
  for (const std::string& dir : options_.include_dirs) {
    options.push_back(absl::StrCat("-I", dir));
  }
  options.insert(options.end(), request.options.begin(), request.options.end());

  // The key holds everything the output depends on. Options and names
  // cannot contain a NUL, so NULs separate the parts unambiguously.
  std::string key = absl::StrCat(api_->version());
  key.push_back('\0');
  key.append(request.name);
  key.push_back('\0');
  for (const std::string& option : options) {
    key.append(option);
    key.push_back('\0');
  }
  key.push_back('\0');
  key.append(request.source.data(), request.source.size());

  std::shared_ptr<Pending> pending;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto hit = cache_.find(key); hit != cache_.end()) {
      ++cache_hits_;
      lru_.splice(lru_.begin(), lru_, hit->second);
      return hit->second->result;
    }
    if (auto in_flight = pending_.find(key); in_flight != pending_.end()) {
      ++cache_hits_;
      auto future = in_flight->second->future;
      lock.unlock();
      return future.get();
    }
    pending = std::make_shared<Pending>();
    pending_.emplace(key, pending);
  }
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      LoadPersistent(key, target, options);
  const bool loaded = *result != nullptr;
  if (!loaded) {
    result = CompileUncached(request, target, std::move(options));
    if (result.ok()) StorePersistent(key, **result);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(key);
    ++(loaded ? loaded_ : compiled_);
    if (result.ok()) Insert(std::move(key), *result);
  }
  pending->promise.set_value(result);
  return result;
}

absl::StatusOr<std::shared_ptr<const CudaCompileResult>>
NvrtcCompiler::CompileUncached(const CudaCompileRequest& request,
                               const NvrtcTarget& target,
                               std::vector<std::string> options) const {
  const NvrtcApi& api = *api_;
  const std::string source(request.source);
  nvrtcProgram program = nullptr;
  RETURN_IF_NVRTC_ERROR(api.nvrtcCreateProgram(
      &program, source.c_str(), request.name.c_str(), 0, nullptr, nullptr));
  ProgramGuard guard(api, program);

  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& option : options) argv.push_back(option.c_str());
  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult compiled = api.nvrtcCompileProgram(
      program, static_cast<int>(argv.size()), argv.data());

  auto result = std::make_shared<CudaCompileResult>();
  size_t log_size = 0;
  RETURN_IF_NVRTC_ERROR(api.nvrtcGetProgramLogSize(program, &log_size));
  result->log.resize(log_size);
  if (log_size > 0) {
    RETURN_IF_NVRTC_ERROR(api.nvrtcGetProgramLog(program, result->log.data()));
    // The size counts the terminating NUL.
    while (!result->log.empty() && result->log.back() == '\0') {
      result->log.pop_back();
    }
  }
  if (compiled != NVRTC_SUCCESS) {
    const absl::Status status = NvrtcStatus(compiled, "nvrtcCompileProgram");
    const bool caller_at_fault =
        !request.options.empty() || compiled == NVRTC_ERROR_INVALID_OPTION;
    const std::string message = absl::StrCat(
        "NVRTC could not compile ", request.name, " for ",
        target.ptx ? absl::StrCat("compute_", target.arch.number())
                   : target.arch.ToString(),
        " (options: ", absl::StrJoin(options, " "), "): ", status.message(),
        "; log:\n", BoundedLog(result->log));
    return caller_at_fault ? absl::InvalidArgumentError(message)
                           : absl::InternalError(message);
  }
  size_t size = 0;
  if (target.ptx) {
    RETURN_IF_NVRTC_ERROR(api.nvrtcGetPTXSize(program, &size));
    result->image.resize(size);  // keeps PTX's terminating NUL
    RETURN_IF_NVRTC_ERROR(api.nvrtcGetPTX(program, result->image.data()));
  } else {
    RETURN_IF_NVRTC_ERROR(api.nvrtcGetCUBINSize(program, &size));
    result->image.resize(size);
    RETURN_IF_NVRTC_ERROR(api.nvrtcGetCUBIN(program, result->image.data()));
    result->kernels = ParsePtxasLog(result->log);
  }
  result->compile_time =
      absl::FromChrono(std::chrono::steady_clock::now() - start);
  if (result->image.empty()) {
    return absl::InternalError(absl::StrCat("NVRTC compiled ", request.name,
                                            " for ", target.arch.ToString(),
                                            " but returned an empty image"));
  }
  result->ptx = target.ptx;
  result->arch = target.arch;
  result->note = target.note;
  result->options = std::move(options);
  result->nvrtc_version = api.version();
  return std::shared_ptr<const CudaCompileResult>(std::move(result));
}

}  // namespace guardjit
