#include "runtime/simt/simt_emulator.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/status_macros.h"
#include "runtime/simt/simt_crew.h"
#include "runtime/simt/simt_module_cache.h"

namespace guardjit {
namespace {

// Compiler diagnostics kept in an error: the first ones say what is wrong.
constexpr size_t kMaxDiagnosticBytes = 4096;

// -O1: simt_emulator_benchmark's module compiles in 84-89 ms at -O0 and -O1
// and 104 ms at -O2 (g++ 12, 2 cores); -O1 inlines the emulation header's
// helpers, and emulated kernels spend their time in barriers, not in code
// that -O2 would speed up.
constexpr const char* kDefaultFlags[] = {
    "-std=c++17", "-shared", "-fPIC", "-O1", "-fno-math-errno", "-w"};

bool IsIdentifierChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

bool IsIdentifier(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

// Whether `name` occurs in `source` as a whole token.
bool Mentions(absl::string_view source, absl::string_view name) {
  for (size_t at = source.find(name); at != absl::string_view::npos;
       at = source.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || !IsIdentifierChar(source[at - 1])) &&
        (end == source.size() || !IsIdentifierChar(source[end]))) {
      return true;
    }
  }
  return false;
}

std::string HostCompiler(const SimtOptions& options) {
  if (!options.host_compiler.empty()) return options.host_compiler;
  for (const char* var : {"GJ_HOST_CXX", "CXX"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') return value;
  }
  return "c++";
}

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    return absl::InternalError(
        absl::StrCat("SIMT emulator: cannot write ", path));
  }
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The start of a compiler's output, cut at a line end within the bound.
std::string FirstDiagnostics(absl::string_view log) {
  if (log.size() <= kMaxDiagnosticBytes) return std::string(log);
  absl::string_view head = log.substr(0, kMaxDiagnosticBytes);
  const size_t line_end = head.rfind('\n');
  if (line_end != absl::string_view::npos) head = head.substr(0, line_end + 1);
  return absl::StrCat(head, "... (", log.size() - head.size(),
                      " more bytes of diagnostics)");
}

// The compiler's output without the temporary directory's name, so that
// diagnostics name "kernel.cu" and "gj_simt_emulation.h".
std::string CompilerLog(const std::string& log_path, const std::string& dir) {
  return absl::StrReplaceAll(ReadFile(log_path), {{dir + "/", ""}});
}

// Runs the compiler (no shell) with its output in `log_path`; returns that
// output's start on failure.
absl::Status RunCompiler(const std::vector<std::string>& args,
                         const std::string& log_path, const std::string& dir) {
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawn_error =
      posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    return absl::UnavailableError(absl::StrCat(
        "SIMT emulator: cannot run the host compiler '", args[0],
        "': ", std::strerror(spawn_error),
        " (SimtOptions.host_compiler, else $GJ_HOST_CXX, $CXX, c++)"));
  }
  int status = 0;
  pid_t waited;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  // ECHILD: the host reaps children itself; dlopen tells.
  if (waited < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    return absl::OkStatus();
  }
  const std::string log = CompilerLog(log_path, dir);
  const std::string how =
      WIFEXITED(status) ? absl::StrCat("exit status ", WEXITSTATUS(status))
                        : absl::StrCat("signal ", WTERMSIG(status));
  return absl::InternalError(absl::StrCat(
      "SIMT emulator: the host compiler '", args[0],
      "' failed on the CUDA source (", how, "):\n", FirstDiagnostics(log)));
}

absl::Status CheckDims(const char* what, SimtDim3 d, SimtDim3 max) {
  if (d.x == 0 || d.y == 0 || d.z == 0 || d.x > max.x || d.y > max.y ||
      d.z > max.z) {
    return absl::InvalidArgumentError(
        absl::StrCat("SIMT launch: ", what, " (", d.x, ", ", d.y, ", ", d.z,
                     ") is out of range: each dimension from 1 to (", max.x,
                     ", ", max.y, ", ", max.z, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SimtModule>> SimtModule::Compile(
    absl::string_view cuda_source, absl::Span<const std::string> kernel_names,
    const SimtOptions& options) {
  std::vector<std::string> names;  // each once, in order
  for (const std::string& name : kernel_names) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    if (!IsIdentifier(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("SIMT emulator: kernel name '", absl::CEscape(name),
                       "' is not an identifier"));
    }
    if (!Mentions(cuda_source, name)) {
      return absl::NotFoundError(absl::StrCat("SIMT emulator: kernel '", name,
                                              "' is not in the CUDA source"));
    }
  }
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::string dir = (tmp / "gj_simt_XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("SIMT emulator: cannot create a directory like ", dir,
                     ": ", std::strerror(errno)));
  }
  // Nothing in it is needed once the module is loaded.
  absl::Cleanup remove_dir = [&dir] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  };
  const std::string header = dir + "/gj_simt_emulation.h";
  const std::string source = dir + "/module.cc";
  const std::string library = dir + "/module.so";
  const std::string module_source = absl::StrCat(
      "#include \"gj_simt_emulation.h\"\n"
      "#line 1 \"kernel.cu\"\n",
      cuda_source, "\n", SimtEntryPoints(names));
  std::vector<std::string> args = {HostCompiler(options)};
  args.insert(args.end(), std::begin(kDefaultFlags), std::end(kDefaultFlags));
  args.insert(args.end(), options.extra_flags.begin(),
              options.extra_flags.end());
  // The module cache's key: everything the shared object depends on
  // (simt_module_cache.h). No cache where the compiler's identity is
  // unknown.
  const std::optional<SimtModuleCache> cache =
      SimtModuleCache::Open(options.cache_dir);
  std::string key;
  if (cache.has_value()) {
    const std::string compiler = SimtModuleCache::CompilerIdentity(args[0]);
    if (!compiler.empty()) {
      key = absl::StrCat(
          "guardjit SIMT module\ncompiler: ", compiler,
          "\nflags: ", absl::StrJoin(args.begin() + 1, args.end(), " "),
          "\nheader:\n", SimtEmulationHeader(), "\nsource:\n", module_source);
    }
  }
  const std::string log = dir + "/compiler.log";
  if (key.empty() || !cache->Fetch(key, library)) {
    RETURN_IF_ERROR(WriteFile(header, SimtEmulationHeader()));
    RETURN_IF_ERROR(WriteFile(source, module_source));
    args.insert(args.end(), {"-x", "c++", source, "-o", library});
    RETURN_IF_ERROR(RunCompiler(args, log, dir));
    if (!key.empty()) cache->Store(key, library);
  }

  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::InternalError(absl::StrCat(
        "SIMT emulator: cannot load the compiled module: ", dlerror(), "\n",
        FirstDiagnostics(CompilerLog(log, dir))));
  }
  absl::flat_hash_map<std::string, Kernel> kernels;
  for (const std::string& name : names) {
    Kernel k;
    k.entry = reinterpret_cast<decltype(k.entry)>(
        dlsym(handle, SimtEntrySymbol(name).c_str()));
    auto arity = reinterpret_cast<int (*)()>(
        dlsym(handle, SimtAritySymbol(name).c_str()));
    if (k.entry == nullptr || arity == nullptr) {
      dlclose(handle);
      return absl::NotFoundError(absl::StrCat(
          "SIMT emulator: no entry point for kernel '", name, "'"));
    }
    k.arity = arity();
    kernels[name] = k;
  }
  return std::unique_ptr<SimtModule>(
      new SimtModule(handle, std::move(kernels)));
}

SimtModule::SimtModule(void* handle,
                       absl::flat_hash_map<std::string, Kernel> kernels)
    : handle_(handle),
      kernels_(std::move(kernels)),
      crew_(std::make_unique<SimtCrew>()) {}

SimtModule::~SimtModule() {
  // The threads first: their thread-locals live in the module.
  crew_.reset();
  dlclose(handle_);
}

absl::Status SimtModule::Launch(absl::string_view kernel, SimtDim3 grid,
                                SimtDim3 block, void* const* params) const {
  auto it = kernels_.find(kernel);
  if (it == kernels_.end()) {
    std::vector<absl::string_view> names;
    for (const auto& [name, k] : kernels_) names.push_back(name);
    std::sort(names.begin(), names.end());
    return absl::NotFoundError(absl::StrCat(
        "SIMT launch: no kernel '", kernel,
        "' in this module (it has: ", absl::StrJoin(names, ", "), ")"));
  }
  RETURN_IF_ERROR(CheckDims("grid", grid, {0x7fffffffu, 65535, 65535}));
  RETURN_IF_ERROR(CheckDims("block", block, {1024, 1024, 64}));
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SIMT launch: block (", block.x, ", ", block.y, ", ", block.z, ") has ",
        threads, " threads; a block has at most 1024"));
  }
  if (params == nullptr && it->second.arity > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("SIMT launch: kernel '", kernel, "' takes ",
                     it->second.arity, " arguments but params is null"));
  }
  std::lock_guard<std::mutex> lock(launch_mu_);
  crew_->Run(it->second.entry, params, {grid.x, grid.y, grid.z},
             {block.x, block.y, block.z});
  return absl::OkStatus();
}

int SimtModule::Arity(absl::string_view kernel) const {
  auto it = kernels_.find(kernel);
  return it == kernels_.end() ? -1 : it->second.arity;
}

}  // namespace guardjit
