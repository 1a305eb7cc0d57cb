#ifndef GUARDJIT_RUNTIME_PROGRAM_LIVE_PROGRAMS_H_
#define GUARDJIT_RUNTIME_PROGRAM_LIVE_PROGRAMS_H_

// The programs a compiler built that are alive now (each held by a cache
// entry), for what a context reports of them in its memory stats
// (gj_memory_stats.packed_weight_bytes): a program registers when its entry
// is made and leaves when the entry is destroyed (evicted, its function
// destroyed). Thread-safe.

#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/program/program.h"

namespace guardjit {

class LivePrograms : public std::enable_shared_from_this<LivePrograms> {
 public:
  // Holds `program` registered until destroyed; destroy it before the
  // program. Keeps the registry alive as long.
  class Registration {
   public:
    Registration(std::shared_ptr<LivePrograms> registry,
                 const Program* program);
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    const std::shared_ptr<LivePrograms> registry_;
    const Program* const program_;
  };

  static std::shared_ptr<LivePrograms> Create() {
    return std::shared_ptr<LivePrograms>(new LivePrograms);
  }

  std::unique_ptr<Registration> Add(const Program& program);

  int64_t size() const;
  // The bytes of constants the live programs' steps hold packed into
  // layouts of their own (StepRunner::packed_bytes), summed now.
  int64_t PackedBytes() const;

 private:
  LivePrograms() = default;

  // A std::mutex: TSan sees it (Debian's absl is not instrumented).
  mutable std::mutex mu_;
  absl::flat_hash_set<const Program*> programs_ ABSL_GUARDED_BY(mu_);
};

// What `program`'s steps hold packed (StepRunner::packed_bytes).
int64_t PackedBytes(const Program& program);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_LIVE_PROGRAMS_H_
