#include "core/function.h"

#include <algorithm>
#include <chrono>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_breaks.h"
#include "core/logging.h"
#include "core/specializer.h"
#include "core/status_macros.h"
#include "core/symbol_messages.h"

namespace guardjit {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kGuardSamplePeriod = 64;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

std::vector<std::string> InputNames(const Graph& graph) {
  std::vector<std::string> names;
  for (int i : graph.inputs()) names.push_back(graph.node(i).name);
  return names;
}

// Adds the bounds `executable` relies on (Executable::chosen_bounds) to
// `guards`; an executable that chose bounds it was not allowed to, or
// bounds the call that made it exceeds, is an internal error.
absl::Status AddChosenBounds(const Executable& executable,
                             const Specialization& spec,
                             const CallSignature& call,
                             SymbolicGuards& guards) {
  const absl::Span<const SymbolBound> chosen = executable.chosen_bounds();
  if (chosen.empty()) return absl::OkStatus();
  if (!spec.may_choose_bounds || guards.empty()) {
    return absl::InternalError(
        "the compiler relied on bounds of its own choosing where the "
        "specialization allows none");
  }
  for (const SymbolBound& b : chosen) {
    if (b.symbol < 0 || b.symbol >= guards.num_symbols() ||
        b.symbol >= static_cast<int>(spec.symbols.size())) {
      return absl::InternalError(
          absl::StrCat("the compiler chose a bound for symbol ", b.symbol,
                       " of an entry with ", guards.num_symbols()));
    }
    const SymbolSource& source = spec.symbols[b.symbol];
    const int64_t value = call.inputs[source.input].sizes[source.dim];
    if (value > b.max) {
      return absl::InternalError(absl::StrCat(
          "the compiler chose the bound ", guards.symbol_names[b.symbol],
          " <= ", b.max, ", which the call that made the entry exceeds (",
          value, ")"));
    }
    guards.chosen_bounds.push_back({b.symbol, b.max});
  }
  guards.chosen_bounds_purpose = executable.chosen_bounds_purpose();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Function>> Function::Create(
    std::shared_ptr<const Graph> graph, std::shared_ptr<Compiler> compiler,
    FunctionOptions options) {
  if (graph == nullptr || compiler == nullptr) {
    return absl::InvalidArgumentError("function needs a graph and a compiler");
  }
  if (options.recompile_limit < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "recompile_limit must be >= 0, got ", options.recompile_limit));
  }
  if (options.max_graphs_per_entry < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_graphs_per_entry must be >= 1, got ",
                     options.max_graphs_per_entry));
  }
  for (const DynamicDim& d : options.mark_dynamic) {
    if (d.input < 0 || d.input >= static_cast<int>(graph->inputs().size()) ||
        d.dim < 0 || d.min < 0 || d.min > d.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "mark_dynamic(input ", d.input, ", dim ", d.dim, ", min ", d.min,
          ", max ", d.max, "): the graph has ", graph->inputs().size(),
          " inputs; dims and ranges must be non-negative with min <= max"));
    }
  }
  if (options.name.empty()) options.name = graph->name();
  std::unique_ptr<Function> f(new Function(graph, compiler, options));
  if (options.fullgraph) {
    if (std::optional<GraphBreak> at = FindGraphBreak(*graph)) {
      const Node& node = graph->node(at->node);
      f->fullgraph_error_ = absl::UnimplementedError(absl::StrCat(
          "function '", options.name, "' (fullgraph): graph break at node '",
          node.name, "' (", node.target, "): ", at->reason,
          "; without fullgraph the graph runs as segments"));
    }
    return f;
  }
  // A graph with value-specialized inputs is specialized whole: each entry
  // (a graph rebuilt for its values, maybe) runs eagerly where it breaks.
  if (!graph->value_inputs().empty()) return f;
  ASSIGN_OR_RETURN(std::optional<SegmentPlan> plan, PlanGraphBreak(graph));
  if (plan.has_value()) {
    ASSIGN_OR_RETURN(f->segments_,
                     GraphSegments::Create(std::move(graph), *std::move(plan),
                                           std::move(compiler), f->options_));
  }
  return f;
}

Function::Function(std::shared_ptr<const Graph> graph,
                   std::shared_ptr<Compiler> compiler, FunctionOptions options)
    : graph_(std::move(graph)),
      compiler_(std::move(compiler)),
      options_(std::move(options)),
      input_names_(InputNames(*graph_)),
      policy_(options_, input_names_) {
  for (const Node& node : graph_->nodes()) {
    if (node.kind == NodeKind::kConstant &&
        node.constant.storage() != nullptr) {
      constant_storage_.insert(node.constant.storage().get());
    }
  }
  cuda_graph_policy_.max_graphs_per_entry = options_.max_graphs_per_entry;
  cuda_graph_policy_.counters = &cuda_graph_counters_;
  if (options_.compile_queue != nullptr) {
    async_ = std::make_shared<AsyncCompiles>();
  }
  tables_.push_back(std::make_unique<GuardTable>());
  table_.store(tables_.back().get(), std::memory_order_release);
}

Function::~Function() {
  if (async_ == nullptr) return;
  // Queued compiles see the flag and return; one in progress finishes.
  std::unique_lock<std::mutex> lock(async_->mu);
  async_->cancelled = true;
  async_->cv.wait(lock, [this] { return async_->in_flight == 0; });
}

Function::OwnedCall::OwnedCall(const CallSignature& call)
    : ambient(call.ambient) {
  for (const InputView& v : call.inputs) {
    sizes.emplace_back(v.sizes, v.sizes + v.rank);
    strides.emplace_back(v.strides, v.strides + v.rank);
  }
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    InputView v = call.inputs[i];
    v.sizes = sizes[i].data();
    v.strides = strides[i].data();
    views.push_back(v);
  }
}

namespace {

// The symbol values `entry`'s guards bound into `bound` (Hit), or empty when
// it has more than Lookup fills.
absl::Span<const int64_t> BoundOf(const CacheEntry& entry,
                                  const int64_t* bound) {
  const size_t n = entry.guards.symbolic().num_symbols();
  if (n > GuardTable::kMaxBoundSymbols) return {};
  return absl::Span<const int64_t>(bound, n);
}

}  // namespace

CacheEntry* Function::Hit(const CallSignature& call,
                          absl::Span<int64_t> bound) {
  const int64_t n = calls_.fetch_add(1, std::memory_order_relaxed);
  const GuardTable* table = table_.load(std::memory_order_acquire);
  CacheEntry* entry;
  if (n % kGuardSamplePeriod == 0) {
    auto start = Clock::now();
    entry = table->Lookup(call, bound);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Clock::now() - start)
                  .count();
    if (entry != nullptr) {
      guard_samples_.fetch_add(1, std::memory_order_relaxed);
      guard_ns_total_.fetch_add(ns, std::memory_order_relaxed);
    }
  } else {
    entry = table->Lookup(call, bound);
  }
  if (entry == nullptr) return nullptr;
  entry->hits.fetch_add(1, std::memory_order_relaxed);
  entry->last_used.store(tick_.fetch_add(1, std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  return entry;
}

absl::StatusOr<std::vector<Tensor>> Function::Call(
    absl::Span<const Tensor> inputs, const CallSignature& call,
    const RunContext& ctx) {
  std::vector<Tensor> outputs(graph_->num_outputs());
  RunContext own = ctx;
  bool hit = true;
  RETURN_IF_ERROR(Call(inputs, call, own, absl::MakeSpan(outputs), hit));
  return outputs;
}

absl::Status Function::Call(absl::Span<const Tensor> inputs,
                            const CallSignature& call, RunContext& ctx,
                            absl::Span<Tensor> outputs) {
  bool hit = true;
  return Call(inputs, call, ctx, outputs, hit);
}

// The one path of every call: a hit runs its entry with the symbols its
// guards bound; a miss resolves an executable (compiling, waiting for a
// compile, or the eager fallback) and runs it.
absl::Status Function::Call(absl::Span<const Tensor> inputs,
                            const CallSignature& call, RunContext& ctx,
                            absl::Span<Tensor> outputs, bool& hit) {
  if (outputs.size() != static_cast<size_t>(graph_->num_outputs()))
      [[unlikely]] {
    return absl::InternalError(absl::StrCat("expected ", graph_->num_outputs(),
                                            " output slots, got ",
                                            outputs.size()));
  }
  if (segments_ != nullptr) [[unlikely]] {
    calls_.fetch_add(1, std::memory_order_relaxed);
    bool all_hit = true;
    absl::Status status = segments_->Call(inputs, call, ctx, outputs, all_hit);
    if (all_hit) {
      segment_hits_.fetch_add(1, std::memory_order_relaxed);
    } else {
      misses_.fetch_add(1, std::memory_order_relaxed);
      hit = false;
    }
    return status;
  }
  int64_t bound[GuardTable::kMaxBoundSymbols];
  CacheEntry* entry = Hit(call, absl::MakeSpan(bound));
  const Executable* executable;
  if (entry != nullptr) [[likely]] {
    executable = entry->executable.get();
    ctx.symbols = BoundOf(*entry, bound);
  } else {
    hit = false;
    ASSIGN_OR_RETURN(executable, Resolve(call, false));
    ctx.symbols = {};
  }
  absl::Status status = executable->Run(ctx, inputs, outputs);
  ctx.symbols = {};
  if (!status.ok()) [[unlikely]] {
    return WithCallSymbols(
        status, entry != nullptr ? entry : table_.load()->Lookup(call), call);
  }
  return status;
}

absl::Status Function::CheckValueInputs(const CallSignature& call) const {
  for (int i : graph_->value_inputs()) {
    if (i >= static_cast<int>(call.inputs.size())) break;  // arity: later
    RETURN_IF_ERROR(CheckValueInput(call.inputs[i], InputLabel(i)));
  }
  return absl::OkStatus();
}

std::string Function::MissKey(const CallSignature& call) const {
  // Every field any guard can read, exactly: two calls with one key get the
  // same specialization, so one compile serves both.
  std::string key;
  auto put = [&key](int64_t v) {
    key.append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  put(static_cast<int64_t>(call.ambient.Bits()));
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const InputView& v = call.inputs[i];
    put(static_cast<int64_t>(v.dtype) | (int64_t{v.requires_grad} << 8) |
        (static_cast<int64_t>(v.device.type) << 16) |
        (int64_t{v.device.index} << 24) | (int64_t{v.rank} << 40));
    for (int d = 0; d < v.rank; ++d) put(v.sizes[d]);
    for (int d = 0; d < v.rank; ++d) put(v.strides[d]);
    put(FirstAlias(call.inputs, i));
  }
  // Entries of a value-specialized input differ by its values.
  for (int i : graph_->value_inputs()) {
    if (i >= static_cast<int>(call.inputs.size())) break;
    const InputView& v = call.inputs[i];
    if (v.data == nullptr) continue;
    for (int64_t k = 0; k < NumValues(v); ++k) put(ValueAt(v, k));
  }
  return key;
}

absl::Status Function::Precompile(const CallSignature& call) {
  if (segments_ != nullptr) return segments_->Precompile(call);
  return Resolve(call, true).status();
}

absl::StatusOr<const Executable*> Function::Resolve(const CallSignature& call,
                                                    bool precompile) {
  if (!fullgraph_error_.ok()) return fullgraph_error_;
  RETURN_IF_ERROR(CheckValueInputs(call));
  // Single flight per miss key: the first thread to miss on a key compiles
  // it without holding mu_; others on the same key wait for it and look up
  // again; misses on other keys compile at the same time, and stats,
  // explain and guard dumps never wait for a compile.
  const std::string key = MissKey(call);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (CacheEntry* entry =
            table_.load(std::memory_order_acquire)->Lookup(call)) {
      if (!precompile) entry->hits.fetch_add(1, std::memory_order_relaxed);
      return entry->executable.get();
    }
    auto it = pending_.find(key);
    if (it == pending_.end()) break;
    if (async_ != nullptr && !precompile && fallback_ != nullptr) {
      // Compiling in the background: answer now.
      eager_while_compiling_.fetch_add(1, std::memory_order_relaxed);
      return fallback_.get();
    }
    std::shared_ptr<Pending> pending = it->second;
    pending_cv_.wait(lock, [&] { return pending->done; });
  }
  if (precompile &&
      static_cast<int>(entries_.size() + pending_.size()) >= policy_.limit()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "function '", options_.name, "' has reached its recompile limit (",
        policy_.limit(), "); calls that miss run eagerly"));
  }
  if (!precompile && eager_keys_.contains(key)) {
    // Its background compile failed (logged): these guards run eagerly.
    fallback_calls_.fetch_add(1, std::memory_order_relaxed);
    return fallback_.get();
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::string> failures;
  // A call beyond a bound an entry's compiler chose gets an entry that
  // chooses none, so it serves every larger size (one recompile, not one
  // per bound).
  bool exceeds_chosen_bound = false;
  for (CacheEntry* e : EntriesMostRecentFirst()) {
    bool chosen_bound = false;
    if (auto why = e->guards.FailureReason(call, &chosen_bound)) {
      failures.push_back(absl::StrCat("0/", e->id, ": ", *why));
      exceeds_chosen_bound |= chosen_bound;
    }
  }
  std::string reason =
      failures.empty() ? "first call" : absl::StrJoin(failures, "; ");
  if (precompile) reason = absl::StrCat("precompile: ", reason);
  std::optional<std::string> warning;
  // Compiles in flight count against the limit as the entries they become.
  if (!policy_.OnMiss(static_cast<int>(entries_.size() + pending_.size()),
                      reason, warning, options_.name)) {
    if (warning) Log(LogTopic::kWarnings, *warning);
    if (graph_->rebuilder() != nullptr) {
      // The graph exists only per values: there is no eager fallback.
      return absl::FailedPreconditionError(
          absl::StrCat("function '", options_.name,
                       "' has reached its recompile limit (", policy_.limit(),
                       ") and its graph runs only specialized to the "
                       "values of its value-specialized inputs: ",
                       reason));
    }
    if (fallback_ == nullptr) {
      ASSIGN_OR_RETURN(fallback_, compiler_->Fallback(graph_));
    }
    fallback_calls_.fetch_add(1, std::memory_order_relaxed);
    return fallback_.get();
  }
  if (!entries_.empty() && LogEnabled(LogTopic::kRecompiles)) {
    Log(LogTopic::kRecompiles,
        absl::StrCat(
            "Recompiling function ", options_.name,
            "\n    triggered by the following guard failure(s):\n    - ",
            absl::StrJoin(failures, "\n    - ")));
  }
  // A graph rebuilt per values has no eager fallback to answer with.
  const bool background =
      async_ != nullptr && !precompile && graph_->rebuilder() == nullptr;
  if (background && fallback_ == nullptr) {
    ASSIGN_OR_RETURN(fallback_, compiler_->Fallback(graph_));
  }
  ASSIGN_OR_RETURN(std::vector<DynamicDim> dynamic, policy_.DynamicDims(call));
  // A value-specialized input's sizes stay static: its values are guarded.
  std::erase_if(dynamic, [&](const DynamicDim& d) {
    return absl::c_linear_search(graph_->value_inputs(), d.input);
  });
  auto pending = std::make_shared<Pending>();
  pending_.emplace(key, pending);
  if (background) {
    // GJ_COMPILE_ASYNC: the entry compiles on the context's queue from a
    // copy of the call's metadata; this call runs eagerly.
    eager_while_compiling_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> in_flight(async_->mu);
      ++async_->in_flight;
    }
    options_.compile_queue->Schedule([this, state = async_,
                                      owned = std::make_shared<OwnedCall>(call),
                                      dynamic = std::move(dynamic), key, reason,
                                      pending, exceeds_chosen_bound]() mutable {
      bool cancelled;
      {
        std::lock_guard<std::mutex> in_flight(state->mu);
        cancelled = state->cancelled;
      }
      if (!cancelled) {
        auto built = Build(owned->signature(), std::move(dynamic), key, reason,
                           pending, /*background=*/true, !exceeds_chosen_bound);
        if (!built.ok()) {
          Log(LogTopic::kWarnings,
              absl::StrCat("function '", options_.name,
                           "': the background compile failed (",
                           built.status().message(),
                           "); calls with these guards run eagerly"));
        }
      }
      {
        std::lock_guard<std::mutex> in_flight(state->mu);
        --state->in_flight;
      }
      state->cv.notify_all();
    });
    return fallback_.get();
  }
  lock.unlock();
  return Build(call, std::move(dynamic), key, reason, pending,
               /*background=*/false, !exceeds_chosen_bound);
}

absl::StatusOr<const Executable*> Function::Build(
    const CallSignature& call, std::vector<DynamicDim> dynamic,
    const std::string& key, const std::string& reason,
    std::shared_ptr<Pending> pending, bool background, bool may_choose_bounds) {
  // Whatever happens below, waiters on this key wake up and look again.
  auto finish = [&](std::unique_ptr<CacheEntry> entry) -> CacheEntry* {
    std::lock_guard<std::mutex> relock(mu_);
    CacheEntry* raw = entry.get();
    // A failed background compile: its key runs eagerly from now on.
    if (entry == nullptr && background) eager_keys_.insert(key);
    if (entry != nullptr) {
      // Numbered in the order entries are published.
      entry->id = static_cast<int>(entries_.size());
      compile_ms_total_ += entry->compile_ms;
      entry->last_used.store(tick_.fetch_add(1, std::memory_order_relaxed) + 1);
      entries_.push_back(std::move(entry));
      std::vector<CacheEntry*> all;
      for (const auto& e : entries_) all.push_back(e.get());
      tables_.push_back(std::make_unique<GuardTable>(std::move(all)));
      table_.store(tables_.back().get(), std::memory_order_release);
    }
    pending_.erase(key);
    pending->done = true;
    pending_cv_.notify_all();
    return raw;
  };
  auto start = Clock::now();
  // Value-specialized inputs: their values become constants of the entry
  // (and the graph is rebuilt for them where it has a rebuilder).
  std::vector<InputValues> values;
  for (int i : graph_->value_inputs()) {
    values.push_back(ReadInputValues(i, call.inputs[i]));
  }
  std::shared_ptr<const Graph> graph = graph_;
  if (graph_->rebuilder() != nullptr) {
    auto rebuilt = graph_->rebuilder()->Rebuild(*graph_, values);
    if (rebuilt.ok() &&
        (*rebuilt)->inputs().size() != graph_->inputs().size()) {
      rebuilt = absl::InternalError(absl::StrCat(
          "the graph rebuilt for its value-specialized inputs takes ",
          (*rebuilt)->inputs().size(), " inputs, not ",
          graph_->inputs().size()));
    }
    if (!rebuilt.ok()) {
      finish(nullptr);
      std::vector<std::string> bound;
      for (const InputValues& v : values) {
        bound.push_back(absl::StrCat(input_names_[v.input], " = ",
                                     FormatValues(v.dtype, v.values)));
      }
      return absl::Status(
          rebuilt.status().code(),
          absl::StrCat(rebuilt.status().message(), " (specialized to ",
                       absl::StrJoin(bound, ", "), ")"));
    }
    graph = *std::move(rebuilt);
  }
  auto built =
      SpecializeCall(graph, input_names_, call, std::move(dynamic), values);
  if (!built.ok()) {
    finish(nullptr);
    return built.status();
  }
  auto& [env, symbolic, specialized] = *built;
  Specialization spec;
  spec.inputs = symbolic.metas;
  spec.meta = std::move(specialized.meta);
  for (int s = 0; s < env.num_symbols(); ++s) {
    const SymbolInfo& info = env.symbols()[s];
    spec.symbols.push_back({info.input, info.dim});
    spec.symbol_max.push_back(env.ImpliedRange(s).second);
  }
  spec.may_choose_bounds = may_choose_bounds && spec.dynamic();
  for (const InputView& v : call.inputs) {
    spec.example_sizes.emplace_back(v.sizes, v.sizes + v.rank);
    spec.example_strides.emplace_back(v.strides, v.strides + v.rank);
  }
  auto compiled = compiler_->Compile(specialized.graph, spec);
  if (!compiled.ok() &&
      compiled.status().code() == absl::StatusCode::kUnimplemented &&
      graph_->rebuilder() != nullptr) {
    // No fallback of the whole graph: this entry runs its own graph
    // eagerly.
    Log(LogTopic::kWarnings,
        absl::StrCat("function '", options_.name,
                     "': skipped: ", compiled.status().message(),
                     "; calls with these guards run eagerly"));
    compiled = compiler_->Fallback(specialized.graph);
  }
  if (!compiled.ok() &&
      compiled.status().code() == absl::StatusCode::kUnimplemented &&
      graph_->rebuilder() == nullptr) {
    // The backend rejects this specialization (Dynamo's "skipped"
    // frames): calls with these guards run eagerly, said once.
    std::string why = absl::StrCat("skipped: ", compiled.status().message());
    std::lock_guard<std::mutex> relock(mu_);
    if (fallback_ == nullptr) {
      auto fallback = compiler_->Fallback(graph_);
      if (fallback.ok()) fallback_ = *std::move(fallback);
    }
    if (fallback_ != nullptr) {
      Log(LogTopic::kWarnings,
          absl::StrCat("function '", options_.name, "': ", why,
                       "; calls with these guards run eagerly"));
      eager_keys_.insert(key);
      skipped_.push_back(std::move(why));
      pending_.erase(key);
      pending->done = true;
      pending_cv_.notify_all();
      fallback_calls_.fetch_add(1, std::memory_order_relaxed);
      return fallback_.get();
    }
  }
  if (!compiled.ok()) {
    finish(nullptr);
    return WithSymbolSources(compiled.status(), env);
  }
  // Bounds the compiler relied on beyond the specialization's ranges
  // become guards of the entry.
  if (absl::Status bounds =
          AddChosenBounds(**compiled, spec, call, symbolic.symbolic);
      !bounds.ok()) {
    finish(nullptr);
    return bounds;
  }
  for (const InputValues& v : values) {
    symbolic.tensors[v.input].values = v.values;
  }
  auto entry = std::make_unique<CacheEntry>(
      -1, MakeGuardTree(call, std::move(symbolic), env), *std::move(compiled));
  entry->compile_ms = MillisSince(start);
  entry->reason = reason;
  CacheEntry* raw = finish(std::move(entry));
  if (LogEnabled(LogTopic::kGuards)) {
    Log(LogTopic::kGuards, absl::StrCat("GUARDS for ", options_.name, " entry ",
                                        raw->id, ":\n", raw->guards.Dump()));
  }
  return raw->executable.get();
}

std::string Function::InputLabel(size_t index) const {
  return absl::StrCat("input ", index, " ('", input_names_[index], "')");
}

bool Function::AliasesConstant(const Tensor& tensor) const {
  return tensor.storage() != nullptr &&
         constant_storage_.contains(tensor.storage().get());
}

}  // namespace guardjit
