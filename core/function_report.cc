// What a Function reports about itself: stats, explain(), guard dumps,
// recompile reasons, and the graphs (segments) it runs as.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "core/function.h"

namespace guardjit {

std::vector<CacheEntry*> Function::EntriesMostRecentFirst() const {
  // Calls on other threads move last_used while this sorts: sort a snapshot
  // of the ticks (a comparator whose answers change mid-sort breaks the
  // sort's invariants, which crashed a 16-thread soak test).
  std::vector<std::pair<uint64_t, CacheEntry*>> order;
  order.reserve(entries_.size());
  for (const auto& e : entries_) {
    order.emplace_back(e->last_used.load(std::memory_order_relaxed), e.get());
  }
  std::stable_sort(
      order.begin(), order.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<CacheEntry*> out;
  out.reserve(order.size());
  for (const auto& [tick, entry] : order) out.push_back(entry);
  return out;
}

FunctionStats Function::stats() const {
  if (segments_ != nullptr) {
    std::vector<const Function*> graphs;
    std::vector<std::string> breaks;
    CollectGraphs(graphs);
    CollectBreaks(breaks);
    FunctionStats s;
    s.calls = calls_.load();
    s.hits = segment_hits_.load();
    s.misses = misses_.load();
    s.graph_count = static_cast<int64_t>(graphs.size());
    s.graph_break_count = static_cast<int64_t>(breaks.size());
    double guard_ns = 0;
    int sampled = 0;
    for (const Function* f : graphs) {
      const FunctionStats g = f->stats();
      s.compiles += g.compiles;
      s.recompiles += g.recompiles;
      s.fallback_calls += g.fallback_calls;
      s.cache_entries += g.cache_entries;
      s.compile_ms_total += g.compile_ms_total;
      s.entries_loaded += g.entries_loaded;
      s.eager_while_compiling += g.eager_while_compiling;
      if (g.guard_ns_mean > 0) {
        guard_ns += g.guard_ns_mean;
        ++sampled;
      }
    }
    // A whole call checks every segment's guards.
    s.guard_ns_mean = sampled ? guard_ns * graphs.size() / sampled : 0;
    return s;
  }
  FunctionStats s;
  s.calls = calls_.load();
  s.misses = misses_.load();
  s.fallback_calls = fallback_calls_.load();
  const int64_t samples = guard_samples_.load();
  s.guard_ns_mean =
      samples ? static_cast<double>(guard_ns_total_.load()) / samples : 0;
  std::lock_guard<std::mutex> lock(mu_);
  s.compiles = static_cast<int64_t>(entries_.size());
  s.recompiles = s.compiles > 0 ? s.compiles - 1 : 0;
  s.cache_entries = s.compiles;
  for (const auto& e : entries_) {
    s.hits += e->hits.load(std::memory_order_relaxed);
    s.entries_loaded += e->executable->origin().all_loaded();
  }
  s.compile_ms_total = compile_ms_total_;
  s.eager_while_compiling = eager_while_compiling_.load();
  return s;
}

std::vector<std::string> Function::RecompileReasons() const {
  if (segments_ != nullptr) {
    std::vector<const Function*> graphs;
    CollectGraphs(graphs);
    std::vector<std::string> out;
    for (size_t i = 0; i < graphs.size(); ++i) {
      for (std::string& r : graphs[i]->RecompileReasons()) {
        out.push_back(absl::StrCat("graph ", i + 1, " ('", graphs[i]->name(),
                                   "'): ", std::move(r)));
      }
    }
    return out;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return policy_.recompile_reasons();
}

std::string Function::DumpGuards() const {
  if (segments_ != nullptr) {
    std::vector<const Function*> graphs;
    CollectGraphs(graphs);
    std::string out;
    for (size_t i = 0; i < graphs.size(); ++i) {
      absl::StrAppend(&out, "graph ", i + 1, " ('", graphs[i]->name(), "'):\n",
                      graphs[i]->DumpGuards());
    }
    return out;
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const CacheEntry* e : EntriesMostRecentFirst()) {
    absl::StrAppend(&out, "entry ", e->id, " (", e->hits.load(), " hits):\n",
                    e->guards.Dump());
  }
  return out;
}

void Function::AppendGuards(std::string& out, const std::string& label) const {
  for (const CacheEntry* e : EntriesMostRecentFirst()) {
    absl::StrAppend(&out, "  ", label, "entry ", e->id, ":\n");
    for (absl::string_view line :
         absl::StrSplit(e->guards.Dump(), '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, "    ", line, "\n");
    }
  }
}

void Function::AppendCompileTimes(std::string& out,
                                  const std::string& label) const {
  for (const auto& e : entries_) {
    const CodeOrigin o = e->executable->origin();
    std::string took = absl::StrFormat("%.3f ms", e->compile_ms);
    if (o.all_loaded()) {
      const char* tier = o.loaded_remote == o.loaded ? "remote"
                         : o.loaded_remote > 0       ? "disk and remote"
                                                     : "disk";
      took = absl::StrFormat(
          "loaded from the %s cache in %.3f ms (compiled in %.1f ms by pid "
          "%d)",
          tier, e->compile_ms, o.original_compile_ms, o.original_pid);
    } else if (o.loaded > 0) {
      absl::StrAppend(
          &took, absl::StrFormat(", %d of %d kernels loaded from the compile "
                                 "cache",
                                 o.loaded, o.loaded + o.compiled + o.reused));
    }
    absl::StrAppend(
        &out, absl::StrFormat("  %sentry %d: %s (%s) - %s\n", label, e->id,
                              took, e->executable->Describe(), e->reason));
  }
}

void Function::AppendStepTimes(std::string& out,
                               const std::string& label) const {
  for (const auto& e : entries_) {
    const std::string profile = e->executable->DescribeProfile();
    if (profile.empty()) continue;
    absl::StrAppend(&out, "  ", label, "entry ", e->id, ": ",
                    absl::StrReplaceAll(profile, {{"\n", "\n    "}}), "\n");
  }
}

namespace {

void AppendOps(std::string& out, const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.kind == NodeKind::kCallFunction)
      absl::StrAppend(&out, "    ", node.target, "\n");
  }
}

}  // namespace

std::string Function::Explain() const {
  if (segments_ != nullptr) return ExplainSegments();
  const FunctionStats s = stats();
  std::lock_guard<std::mutex> lock(mu_);
  const Graph& g = *graph_;
  std::string out;
  // What torch._dynamo.explain() prints.
  absl::StrAppend(&out, "Graph Count: 1\nGraph Break Count: 0\nOp Count: ",
                  g.num_ops(), "\nBreak Reasons:\nOps per Graph:\n  Ops 1:\n");
  AppendOps(out, g);
  absl::StrAppend(&out, "Out Guards:\n");
  AppendGuards(out, "");
  absl::StrAppend(&out, "Compile Times:\n");
  AppendCompileTimes(out, "");
  if (std::string steps; AppendStepTimes(steps, ""), !steps.empty()) {
    absl::StrAppend(&out, "Step Times (GJ_PROFILE):\n", steps);
  }
  absl::StrAppend(&out, "Function: '", options_.name, "' (graph '", g.name(),
                  "')\n");
  absl::StrAppend(
      &out, absl::StrFormat(
                "Cache: %d entries (recompile_limit %d)%s, backend %s\n",
                static_cast<int>(entries_.size()), policy_.limit(),
                policy_.run_only() ? ", run-only" : "", compiler_->name()));
  absl::StrAppend(&out, absl::StrFormat("Calls: %d, hits: %d, misses: %d, "
                                        "recompiles: %d, eager fallback: %d\n",
                                        s.calls, s.hits, s.misses, s.recompiles,
                                        s.fallback_calls));
  for (const std::string& why : skipped_) {
    absl::StrAppend(&out, "Eager (", why, ")\n");
  }
  if (async_ != nullptr) {
    std::lock_guard<std::mutex> in_flight(async_->mu);
    absl::StrAppend(
        &out, absl::StrFormat("Compile: async, %d compiling now, %d calls "
                              "answered eagerly while compiling, %d keys "
                              "eager after a failed compile\n",
                              async_->in_flight, s.eager_while_compiling,
                              static_cast<int>(eager_keys_.size())));
  }
  absl::StrAppend(&out, "Recompile Reasons:\n");
  for (const std::string& r : policy_.recompile_reasons())
    absl::StrAppend(&out, "  ", r, "\n");
  absl::StrAppend(
      &out,
      absl::StrFormat("Guard Check Latency: %.0f ns (mean of sampled hits)\n",
                      s.guard_ns_mean));
  return out;
}

std::string Function::ExplainSegments() const {
  const FunctionStats s = stats();
  std::vector<const Function*> graphs;
  std::vector<std::string> breaks;
  CollectGraphs(graphs);
  CollectBreaks(breaks);
  int ops = 0;
  for (const Function* f : graphs) ops += f->graph_->num_ops();
  std::string out;
  // What torch._dynamo.explain() prints, over the graphs reached so far.
  absl::StrAppend(&out, "Graph Count: ", graphs.size(),
                  "\nGraph Break Count: ", breaks.size(), "\nOp Count: ", ops,
                  "\nBreak Reasons:\n");
  for (size_t i = 0; i < breaks.size(); ++i) {
    absl::StrAppend(&out, "  Break Reason ", i + 1,
                    ":\n    Reason: ", breaks[i], "\n");
  }
  absl::StrAppend(&out, "Ops per Graph:\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    absl::StrAppend(&out, "  Ops ", i + 1, ":\n");
    AppendOps(out, *graphs[i]->graph_);
  }
  absl::StrAppend(&out, "Out Guards:\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::lock_guard<std::mutex> lock(graphs[i]->mu_);
    graphs[i]->AppendGuards(out, absl::StrCat("graph ", i + 1, " "));
  }
  absl::StrAppend(&out, "Compile Times:\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::lock_guard<std::mutex> lock(graphs[i]->mu_);
    graphs[i]->AppendCompileTimes(out, absl::StrCat("graph ", i + 1, " "));
  }
  std::string steps;
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::lock_guard<std::mutex> lock(graphs[i]->mu_);
    graphs[i]->AppendStepTimes(steps, absl::StrCat("graph ", i + 1, " "));
  }
  if (!steps.empty()) {
    absl::StrAppend(&out, "Step Times (GJ_PROFILE):\n", steps);
  }
  absl::StrAppend(&out, "Function: '", options_.name, "' (graph '",
                  graph_->name(), "')\n");
  absl::StrAppend(&out, "Graphs:\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    const Function& f = *graphs[i];
    std::lock_guard<std::mutex> lock(f.mu_);
    absl::StrAppend(
        &out, absl::StrFormat("  graph %d: '%s' (graph '%s', inputs %s): %d "
                              "ops, %d entries%s\n",
                              i + 1, f.options_.name, f.graph_->name(),
                              absl::StrJoin(f.input_names_, ", "),
                              f.graph_->num_ops(),
                              static_cast<int>(f.entries_.size()),
                              f.policy_.run_only() ? ", run-only" : ""));
  }
  absl::StrAppend(
      &out, absl::StrFormat("Cache: %d entries over %d graphs "
                            "(recompile_limit %d per graph), backend %s\n",
                            s.cache_entries, s.graph_count,
                            options_.recompile_limit, compiler_->name()));
  absl::StrAppend(&out, absl::StrFormat("Calls: %d, hits: %d, misses: %d, "
                                        "recompiles: %d, eager fallback: %d\n",
                                        s.calls, s.hits, s.misses, s.recompiles,
                                        s.fallback_calls));
  if (options_.compile_queue != nullptr) {
    absl::StrAppend(&out, "Compile: async, ", s.eager_while_compiling,
                    " calls answered eagerly while compiling\n");
  }
  absl::StrAppend(&out, "Recompile Reasons:\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    for (const std::string& r : graphs[i]->RecompileReasons())
      absl::StrAppend(&out, "  graph ", i + 1, ": ", r, "\n");
  }
  absl::StrAppend(
      &out,
      absl::StrFormat("Guard Check Latency: %.0f ns (mean of sampled hits)\n",
                      s.guard_ns_mean));
  return out;
}

void Function::CollectGraphs(std::vector<const Function*>& graphs) const {
  if (segments_ != nullptr) {
    segments_->CollectGraphs(graphs);
  } else {
    graphs.push_back(this);
  }
}

void Function::CollectBreaks(std::vector<std::string>& reasons) const {
  if (segments_ != nullptr) segments_->CollectBreaks(reasons);
}

}  // namespace guardjit
