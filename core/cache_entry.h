#ifndef GUARDJIT_CORE_CACHE_ENTRY_H_
#define GUARDJIT_CORE_CACHE_ENTRY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/executable.h"
#include "core/guard_tree.h"

namespace guardjit {

// One compiled specialization of a function: its guards and its executable.
// Owned by the Function; never mutated after insertion except the counters.
struct CacheEntry {
  CacheEntry(int id, GuardTree guards, std::unique_ptr<Executable> executable)
      : id(id), guards(std::move(guards)), executable(std::move(executable)) {}

  int id;  // set by the Function when it publishes the entry
  const GuardTree guards;
  const std::unique_ptr<Executable> executable;
  std::string reason;  // what compiled it: "first call" or the guard failure
  double compile_ms = 0;
  std::atomic<int64_t> hits{0};
  std::atomic<uint64_t> last_used{0};  // a Function-wide tick, for MRU order
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_CACHE_ENTRY_H_
