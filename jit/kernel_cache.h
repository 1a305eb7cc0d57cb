#ifndef GUARDJIT_JIT_KERNEL_CACHE_H_
#define GUARDJIT_JIT_KERNEL_CACHE_H_

// The compiled-kernel cache every KernelBackend keeps (jit/kernel_backend.h):
// the LLVM backend per kernel (KernelCompiler), the CUDA backends per module
// (a program's kernels in one translation unit). Keyed by (backend, target,
// options, source): the source's hash picks the bucket and the whole source
// is compared on a hit, so a hash collision can never return another
// kernel's code.
//
// The ASSERT_COMPILE switch (tinygrad's): while GJ_ASSERT_NO_COMPILE=1 is in
// the environment (read once, at the first cache miss of the process) or a
// ScopedForbidKernelCompiles lives, every cache miss fails the compile with
// FAILED_PRECONDITION naming the backend and the kernel, so a test can
// assert that a warm path compiles nothing. JitCompiler passes that error to
// the caller instead of running the eager plan (IsKernelCacheMissError).

#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace guardjit {

struct KernelCacheKey {
  std::string backend;  // "llvm", "cuda", "cuda-simt"
  std::string target;   // the LLVM target triple and CPU, "sm_90"
  std::string options;  // whatever else changes the code ("block_threads=256")
  std::string source;   // the printed loop IR, the CUDA C
  uint64_t source_hash = 0;

  // A key with source_hash computed from `source`.
  static KernelCacheKey Make(std::string backend, std::string target,
                             std::string options, std::string source);
  // "llvm:x86_64-unknown-linux-gnu/skylake", for messages.
  std::string Where() const;

  friend bool operator==(const KernelCacheKey& a, const KernelCacheKey& b) {
    return a.source_hash == b.source_hash && a.backend == b.backend &&
           a.target == b.target && a.options == b.options &&
           a.source == b.source;
  }
  template <typename H>
  friend H AbslHashValue(H h, const KernelCacheKey& k) {
    return H::combine(std::move(h), k.backend, k.target, k.options,
                      k.source_hash);
  }
};

struct KernelCacheStats {
  int64_t compiles = 0;   // entries inserted (compiled, or loaded from the
                          // persistent compile cache: KernelCompiler counts
                          // those apart)
  int64_t hits = 0;       // lookups served from the cache
  int64_t evictions = 0;  // entries dropped past the capacity
  int64_t entries = 0;    // entries held now
};

// Whether cache misses fail (GJ_ASSERT_NO_COMPILE=1, or a live
// ScopedForbidKernelCompiles in any thread).
bool KernelCompilesForbidden();

// While one lives, kernel cache misses fail the compile (tests). Nests.
class ScopedForbidKernelCompiles {
 public:
  ScopedForbidKernelCompiles();
  ~ScopedForbidKernelCompiles();
  ScopedForbidKernelCompiles(const ScopedForbidKernelCompiles&) = delete;
  ScopedForbidKernelCompiles& operator=(const ScopedForbidKernelCompiles&) =
      delete;
};

// OK, or when compiles are forbidden the FAILED_PRECONDITION error of a miss
// of `key` for `kernel` (a label for the message: "kernel 0 (computing
// add, relu)"). The error carries a payload IsKernelCacheMissError finds.
absl::Status CheckKernelCompileAllowed(const KernelCacheKey& key,
                                       absl::string_view kernel);
bool IsKernelCacheMissError(const absl::Status& status);
// The label of a module of `count` kernels for that error: `labels` joined,
// or "<count> kernels" without labels.
std::string ModuleLabel(absl::Span<const std::string> labels, size_t count);

// A thread-safe LRU map from KernelCacheKey to `Value` (a shared_ptr or a
// struct of them: values are copied out, and an evicted one is released
// after the lock, so code a live program still runs stays loaded through
// the program's own reference). `capacity` 0 keeps nothing.
template <typename Value>
class KernelCache {
 public:
  explicit KernelCache(int capacity) : capacity_(capacity) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The cached value (counted as a hit, made most recent), or nullopt.
  // A miss is not checked against the ASSERT_COMPILE switch: callers that
  // compile on a miss call CheckKernelCompileAllowed first.
  std::optional<Value> Lookup(const KernelCacheKey& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return FindLocked(key);
  }

  // Counts a hit that did not go through Lookup (a kernel repeated within
  // one compile, compiled once).
  void CountHit() {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.hits;
  }

  // Adds a compiled value (counted as a compile; a key already present keeps
  // its value) and evicts the least recently used entries past the
  // capacity.
  void Insert(const KernelCacheKey& key, Value value) {
    std::vector<Value> evicted;  // released after the lock
    std::lock_guard<std::mutex> lock(mu_);
    InsertLocked(key, std::move(value), &evicted);
  }

  // The cached value, or `compile`'s, compiled once per key: a thread
  // missing a key another thread is compiling waits for it and takes its
  // value as a hit (if that compile fails, the waiter compiles itself).
  // Under ScopedForbidKernelCompiles / GJ_ASSERT_NO_COMPILE a miss fails
  // (CheckKernelCompileAllowed) instead of compiling.
  absl::StatusOr<Value> GetOrCompile(
      const KernelCacheKey& key, absl::string_view kernel,
      absl::FunctionRef<absl::StatusOr<Value>()> compile) {
    std::vector<Value> evicted;  // released after the lock
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (std::optional<Value> hit = FindLocked(key)) return *std::move(hit);
      if (!compiling_.contains(key)) break;
      compiled_cv_.wait(lock);
    }
    absl::Status allowed = CheckKernelCompileAllowed(key, kernel);
    if (!allowed.ok()) return allowed;
    compiling_.insert(key);
    lock.unlock();
    absl::StatusOr<Value> value = compile();
    lock.lock();
    compiling_.erase(key);
    compiled_cv_.notify_all();
    if (!value.ok()) return value.status();
    InsertLocked(key, *value, &evicted);
    return value;
  }

  KernelCacheStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    KernelCacheStats s = stats_;
    s.entries = static_cast<int64_t>(entries_.size());
    return s;
  }
  int capacity() const { return capacity_; }

 private:
  struct Entry {
    Value value;
    typename std::list<const KernelCacheKey*>::iterator lru;
  };

  std::optional<Value> FindLocked(const KernelCacheKey& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.value;
  }

  void InsertLocked(const KernelCacheKey& key, Value value,
                    std::vector<Value>* evicted) {
    auto [it, inserted] = entries_.try_emplace(key);
    if (!inserted) return;
    ++stats_.compiles;
    it->second.value = std::move(value);
    lru_.push_front(&it->first);
    it->second.lru = lru_.begin();
    while (static_cast<int>(entries_.size()) > capacity_) {
      auto oldest = entries_.find(*lru_.back());
      evicted->push_back(std::move(oldest->second.value));
      lru_.pop_back();
      entries_.erase(oldest);
      ++stats_.evictions;
    }
  }

  const int capacity_;
  mutable std::mutex mu_;
  std::condition_variable compiled_cv_;
  // node_hash_map: the keys' addresses, which lru_ holds, are stable.
  absl::node_hash_map<KernelCacheKey, Entry> entries_;
  std::list<const KernelCacheKey*> lru_;  // most recently used first
  absl::flat_hash_set<KernelCacheKey> compiling_;
  KernelCacheStats stats_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_KERNEL_CACHE_H_
