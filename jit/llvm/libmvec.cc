#include "jit/llvm/libmvec.h"

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/TargetParser/Triple.h"

namespace guardjit {
namespace {

// The scalar functions the codegen emits (jit/llvm/llvm_element_ops.cc:
// intrinsics and libm calls) with the libmvec name of their float64 form and
// the number of vector arguments. float32 exp is expanded inline
// (jit/llvm/llvm_math.h).
struct MathFunction {
  const char* intrinsic;  // llvm.<name>, or nullptr where there is none
  const char* name;       // libm's float64 name; float32 adds 'f'
  int args;
};
constexpr MathFunction kFunctions[] = {
    {"log", "log", 1},    {"sin", "sin", 1},   {"cos", "cos", 1},
    {"exp", "exp", 1},    {"pow", "pow", 2},   {nullptr, "log1p", 1},
    {nullptr, "tanh", 1}, {nullptr, "erf", 1},
};

struct Table {
  bool loaded = false;
  std::deque<std::string> names;  // storage behind the descriptors' StringRefs
  std::vector<llvm::VecDesc> sse;
  std::vector<llvm::VecDesc> avx2;
};

// One vector width: `isa` is the x86 vector ABI letter ('b' SSE, 'd' AVX2),
// `floats` the lanes of a float32 vector.
void AddWidth(Table& table, char isa, int floats,
              std::vector<llvm::VecDesc>& out) {
  for (const MathFunction& f : kFunctions) {
    for (bool single : {true, false}) {
      const int lanes = single ? floats : floats / 2;
      const std::string scalar = absl::StrCat(f.name, single ? "f" : "");
      const std::string params(f.args, 'v');
      const std::string vector = absl::StrCat("_ZGV", std::string(1, isa), "N",
                                              lanes, params, "_", scalar);
      if (llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(vector) ==
          nullptr) {
        continue;  // an older libmvec
      }
      const llvm::StringRef vector_name = table.names.emplace_back(vector);
      const llvm::StringRef prefix =
          table.names.emplace_back(absl::StrCat("_ZGV_LLVM_N", lanes, params));
      const llvm::ElementCount vf = llvm::ElementCount::getFixed(lanes);
      out.emplace_back(table.names.emplace_back(scalar), vector_name, vf,
                       /*Masked=*/false, prefix);
      if (f.intrinsic != nullptr) {
        const std::string intrinsic =
            absl::StrCat("llvm.", f.intrinsic, single ? ".f32" : ".f64");
        out.emplace_back(table.names.emplace_back(intrinsic), vector_name, vf,
                         /*Masked=*/false, prefix);
      }
    }
  }
}

const Table& LibmvecTable() {
  static const Table* table = [] {
    auto* t = new Table;
    std::string error;
    t->loaded = !llvm::sys::DynamicLibrary::LoadLibraryPermanently(
        "libmvec.so.1", &error);
    if (t->loaded) {
      AddWidth(*t, 'b', 4, t->sse);
      AddWidth(*t, 'd', 8, t->avx2);
    }
    return t;
  }();
  return *table;
}

}  // namespace

bool LoadLibmvec() { return LibmvecTable().loaded; }

int AddLibmvecFunctions(const llvm::TargetMachine& machine,
                        llvm::TargetLibraryInfoImpl& tlii) {
  if (machine.getTargetTriple().getArch() != llvm::Triple::x86_64) return 0;
  const Table& table = LibmvecTable();
  if (!table.loaded) return 0;
  tlii.addVectorizableFunctions(table.sse);
  int added = static_cast<int>(table.sse.size());
  // Features are "+avx2,..." strings; an AVX2 vector argument needs ymm.
  const llvm::StringRef features = machine.getTargetFeatureString();
  if (features.contains("+avx2")) {
    tlii.addVectorizableFunctions(table.avx2);
    added += static_cast<int>(table.avx2.size());
  }
  return added;
}

}  // namespace guardjit
