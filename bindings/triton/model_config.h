#ifndef GUARDJIT_BINDINGS_TRITON_MODEL_CONFIG_H_
#define GUARDJIT_BINDINGS_TRITON_MODEL_CONFIG_H_

// A guardjit model's Triton configuration (config.pbtxt as the JSON Triton
// hands the backend): what the backend reads of it, the auto-completion of
// inputs and outputs from the graph's declared metadata, and the
// `parameters` it understands.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bindings/triton/dtypes.h"
#include "bindings/triton/json.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

struct TensorConfig {
  std::string name;
  const DTypeInfo* dtype = nullptr;
  std::vector<int64_t> dims;  // without the batch dim; -1 for any size
};

struct ModelConfig {
  std::string name;
  int64_t max_batch_size = 0;
  std::vector<TensorConfig> inputs;
  std::vector<TensorConfig> outputs;
  std::string default_model_filename;
  // `parameters { key: "k" value { string_value: "v" } }`.
  std::map<std::string, std::string> parameters;

  // The backend's parameters, checked by Parse.
  gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO;
  int32_t recompile_limit = 0;  // 0: the library's default
  int32_t num_threads = 0;      // per instance; 0: the process-wide pool
  gj_compile_mode compile = GJ_COMPILE_SYNC;
  // reduce-overhead replays CUDA graphs; CPU calls ignore it.
  gj_function_mode mode = GJ_MODE_DEFAULT;
  // Batch sizes (max_batch_size > 0) run at instance load; with
  // max_batch_size 0 a "1" runs the configured shapes once.
  std::vector<int64_t> warmup;
  // The compile cache (gj_context_options; README "Compile cache"): unset
  // leaves GJ_CACHE_DIR, GJ_REMOTE_CACHE and GJ_CACHE_KEY to apply, "" turns
  // each off. The key is read from a file (cache_key_file, its trailing
  // newline dropped) when an instance is created, so that config.pbtxt
  // holds no secret.
  std::optional<std::string> cache_dir;
  std::optional<std::string> remote_cache;
  std::optional<std::string> cache_key_file;
  int64_t max_cache_bytes = -1;  // -1: the library's default
};

// Reads `config` (Triton's JSON). False with *error naming the field.
bool ParseModelConfig(const Json& config, ModelConfig* out, std::string* error);

// Fills what `config` leaves out from what `graph` declares (names, data
// types, dims; `default_max_batch_size` — Triton's --backend-config
// default-max-batch-size, 4 unless set — with dynamic batching when dim 0 of
// every input and output is one symbol and the config sets no
// max_batch_size).
// Inputs and outputs the config lists are kept. Sets *changed when it wrote
// anything. False with *error when the graph does not declare what the
// config needs ("input 'x': the graph declares no shape ...").
bool AutoCompleteConfig(const gj_graph* graph, int64_t default_max_batch_size,
                        Json* config, bool* changed, std::string* error);

// Checks the config's inputs and outputs against the graph's: same names
// (every graph input listed), data types and dims where both declare them.
bool CheckConfigAgainstGraph(const ModelConfig& config, const gj_graph* graph,
                             std::string* error);

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_MODEL_CONFIG_H_
