#ifndef GUARDJIT_BINDINGS_TRITON_MODEL_STATE_H_
#define GUARDJIT_BINDINGS_TRITON_MODEL_STATE_H_

// One Triton model served by guardjit: its config (auto-completed from the
// graph's declared metadata), and the graph, loaded once and shared by the
// model's instances.

#include <memory>
#include <string>

#include "bindings/triton/model_config.h"
#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

// What the server's --backend-config=guardjit,... says.
struct BackendOptions {
  int64_t default_max_batch_size = 4;  // Triton's default
};
TRITONSERVER_Error* ReadBackendOptions(TRITONBACKEND_Backend* backend,
                                       BackendOptions* out);

class ModelState {
 public:
  // Reads the config, loads `<repository>/<version>/<file>` (model.pb, else
  // model.pbtxt; default_model_filename overrides), auto-completes the
  // config when Triton allows it and checks it against the graph. An error
  // names the model and carries the loader's message.
  static TRITONSERVER_Error* Create(TRITONBACKEND_Model* model,
                                    const BackendOptions& options,
                                    std::unique_ptr<ModelState>* out);
  ~ModelState();
  ModelState(const ModelState&) = delete;
  ModelState& operator=(const ModelState&) = delete;

  const std::string& name() const { return name_; }
  const ModelConfig& config() const { return config_; }
  const gj_graph* graph() const { return graph_; }
  const std::string& graph_path() const { return graph_path_; }

 private:
  ModelState() = default;

  std::string name_;
  std::string graph_path_;
  ModelConfig config_;
  gj_context* context_ = nullptr;  // the graph's loader
  gj_graph* graph_ = nullptr;
};

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_MODEL_STATE_H_
