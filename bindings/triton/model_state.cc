#include "bindings/triton/model_state.h"

#include <sys/stat.h>

#include "bindings/triton/errors.h"

namespace guardjit_triton {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// `message` as JSON; deletes it when `owned` (the model config is the
// caller's, the backend config Triton's).
TRITONSERVER_Error* MessageToJson(TRITONSERVER_Message* message, bool owned,
                                  Json* out) {
  const char* base = nullptr;
  size_t size = 0;
  TRITONSERVER_Error* err =
      TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  std::string text;
  if (err == nullptr) text.assign(base, size);
  if (owned) {
    TRITONSERVER_Error* deleted = TRITONSERVER_MessageDelete(message);
    if (deleted != nullptr) TRITONSERVER_ErrorDelete(deleted);
  }
  if (err != nullptr) return err;
  std::string error;
  if (!Json::Parse(text, out, &error)) {
    return Error(TRITONSERVER_ERROR_INTERNAL,
                 "a message Triton gave is not JSON: " + error);
  }
  return nullptr;
}

// The config Triton holds for `model`, as JSON.
TRITONSERVER_Error* ReadConfig(TRITONBACKEND_Model* model, Json* out) {
  TRITONSERVER_Message* message = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelConfig(model, 1, &message));
  return MessageToJson(message, /*owned=*/true, out);
}

TRITONSERVER_Error* WriteConfig(TRITONBACKEND_Model* model,
                                const Json& config) {
  const std::string text = config.Serialize();
  TRITONSERVER_Message* message = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONSERVER_MessageNewFromSerializedJson(
      &message, text.data(), text.size()));
  TRITONSERVER_Error* err = TRITONBACKEND_ModelSetConfig(model, 1, message);
  TRITONSERVER_Error* deleted = TRITONSERVER_MessageDelete(message);
  if (deleted != nullptr) TRITONSERVER_ErrorDelete(deleted);
  return err;
}

}  // namespace

TRITONSERVER_Error* ReadBackendOptions(TRITONBACKEND_Backend* backend,
                                       BackendOptions* out) {
  TRITONSERVER_Message* message = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_BackendConfig(backend, &message));
  Json config;
  GJ_TRITON_RETURN_IF_ERROR(MessageToJson(message, /*owned=*/false, &config));
  const Json* cmdline = config.Find("cmdline");
  const Json* value = cmdline != nullptr && cmdline->is_object()
                          ? cmdline->Find("default-max-batch-size")
                          : nullptr;
  if (value != nullptr && (!value->AsInt(&out->default_max_batch_size) ||
                           out->default_max_batch_size < 0)) {
    return Error(TRITONSERVER_ERROR_INVALID_ARG,
                 "guardjit: default-max-batch-size is not a count");
  }
  return nullptr;
}

TRITONSERVER_Error* ModelState::Create(TRITONBACKEND_Model* model,
                                       const BackendOptions& options,
                                       std::unique_ptr<ModelState>* out) {
  std::unique_ptr<ModelState> state(new ModelState());
  const char* name = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelName(model, &name));
  state->name_ = name;
  const std::string what = "model '" + state->name_ + "': ";
  uint64_t version = 0;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelVersion(model, &version));
  TRITONBACKEND_ArtifactType artifact;
  const char* location = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(
      TRITONBACKEND_ModelRepository(model, &artifact, &location));
  if (artifact != TRITONBACKEND_ARTIFACT_FILESYSTEM) {
    return Error(TRITONSERVER_ERROR_UNSUPPORTED,
                 what + "only file-system model repositories are supported");
  }

  Json config;
  GJ_TRITON_RETURN_IF_ERROR(ReadConfig(model, &config));
  std::string error;
  ModelConfig parsed;
  if (!ParseModelConfig(config, &parsed, &error)) {
    return Error(TRITONSERVER_ERROR_INVALID_ARG, what + error);
  }
  const std::string dir = std::string(location) + "/" + std::to_string(version);
  if (!parsed.default_model_filename.empty()) {
    state->graph_path_ = dir + "/" + parsed.default_model_filename;
  } else {
    state->graph_path_ =
        IsFile(dir + "/model.pb") || !IsFile(dir + "/model.pbtxt")
            ? dir + "/model.pb"
            : dir + "/model.pbtxt";
  }
  GJ_TRITON_RETURN_IF_ERROR(
      FromGjError(gj_context_create(nullptr, &state->context_), what));
  GJ_TRITON_RETURN_IF_ERROR(FromGjError(
      gj_graph_from_file(state->context_, state->graph_path_.c_str(), nullptr,
                         &state->graph_),
      what));

  bool auto_complete = false;
  GJ_TRITON_RETURN_IF_ERROR(
      TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete));
  if (auto_complete) {
    bool changed = false;
    if (!AutoCompleteConfig(state->graph_, options.default_max_batch_size,
                            &config, &changed, &error)) {
      return Error(TRITONSERVER_ERROR_INVALID_ARG, what + error);
    }
    if (changed) {
      GJ_TRITON_RETURN_IF_ERROR(WriteConfig(model, config));
      parsed = ModelConfig();
      if (!ParseModelConfig(config, &parsed, &error)) {
        return Error(TRITONSERVER_ERROR_INVALID_ARG, what + error);
      }
    }
  }
  if (!CheckConfigAgainstGraph(parsed, state->graph_, &error)) {
    return Error(TRITONSERVER_ERROR_INVALID_ARG, what + error);
  }
  state->config_ = std::move(parsed);
  Log(TRITONSERVER_LOG_INFO, what + "loaded " + state->graph_path_);
  *out = std::move(state);
  return nullptr;
}

ModelState::~ModelState() {
  gj_graph_destroy(graph_);
  gj_context_destroy(context_);
}

}  // namespace guardjit_triton
