// The entry points Triton calls (tritonbackend.h): the backend, its models
// and their instances. Nothing here throws across the C boundary: every
// failure is a TRITONSERVER_Error, and a model that fails to load is
// UNAVAILABLE with the message while the server keeps running.

#include <exception>
#include <memory>
#include <string>

#include "bindings/triton/errors.h"
#include "bindings/triton/instance_state.h"
#include "bindings/triton/metrics.h"
#include "bindings/triton/model_state.h"
#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {
namespace {

// Runs `body`, turning an escaping C++ exception (std::bad_alloc) into an
// INTERNAL error.
template <typename Body>
TRITONSERVER_Error* Guarded(const char* where, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Error(TRITONSERVER_ERROR_INTERNAL,
                 std::string(where) + ": " + e.what());
  } catch (...) {
    return Error(TRITONSERVER_ERROR_INTERNAL,
                 std::string(where) + ": unknown exception");
  }
}

}  // namespace
}  // namespace guardjit_triton

using guardjit_triton::Error;
using guardjit_triton::Guarded;
using guardjit_triton::InstanceState;
using guardjit_triton::ModelState;

extern "C" {

#define GJ_TRITON_EXPORT __attribute__((visibility("default")))

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_Initialize(
    TRITONBACKEND_Backend* backend) {
  uint32_t major = 0, minor = 0;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  if (major != GJ_TRITONBACKEND_API_VERSION_MAJOR ||
      minor < GJ_TRITONBACKEND_API_VERSION_MINOR) {
    return Error(TRITONSERVER_ERROR_UNSUPPORTED,
                 "the guardjit backend needs Triton's backend API " +
                     std::to_string(GJ_TRITONBACKEND_API_VERSION_MAJOR) + "." +
                     std::to_string(GJ_TRITONBACKEND_API_VERSION_MINOR) +
                     " or a later 1.x (Triton 2.51+); this server has " +
                     std::to_string(major) + "." + std::to_string(minor));
  }
  if ((gj_api_version() >> 16) != GJ_API_VERSION_MAJOR ||
      (gj_api_version() & 0xffff) < GJ_API_VERSION_MINOR) {
    return Error(
        TRITONSERVER_ERROR_UNSUPPORTED,
        std::string("the guardjit backend was built for libguardjit ") +
            std::to_string(GJ_API_VERSION_MAJOR) + "." +
            std::to_string(GJ_API_VERSION_MINOR) + ", loaded " + gj_version());
  }
  auto options = std::make_unique<guardjit_triton::BackendOptions>();
  GJ_TRITON_RETURN_IF_ERROR(
      guardjit_triton::ReadBackendOptions(backend, options.get()));
  GJ_TRITON_RETURN_IF_ERROR(
      TRITONBACKEND_BackendSetState(backend, options.get()));
  options.release();
  guardjit_triton::InstanceMetrics::CreateFamilies();
  guardjit_triton::Log(TRITONSERVER_LOG_INFO,
                       std::string("guardjit backend on libguardjit ") +
                           gj_version() + ", backend API " +
                           std::to_string(major) + "." + std::to_string(minor));
  return nullptr;
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_Finalize(
    TRITONBACKEND_Backend* backend) {
  guardjit_triton::InstanceMetrics::DeleteFamilies();
  void* state = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, &state));
  delete static_cast<guardjit_triton::BackendOptions*>(state);
  return nullptr;
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(
    TRITONBACKEND_Model* model) {
  return Guarded("TRITONBACKEND_ModelInitialize", [&]() -> TRITONSERVER_Error* {
    TRITONBACKEND_Backend* backend = nullptr;
    GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelBackend(model, &backend));
    void* options = nullptr;
    GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_BackendState(backend, &options));
    std::unique_ptr<ModelState> state;
    GJ_TRITON_RETURN_IF_ERROR(ModelState::Create(
        model, *static_cast<guardjit_triton::BackendOptions*>(options),
        &state));
    GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelSetState(model, state.get()));
    state.release();
    return nullptr;
  });
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(
    TRITONBACKEND_Model* model) {
  void* state = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelState(model, &state));
  delete static_cast<ModelState*>(state);
  return nullptr;
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(
    TRITONBACKEND_ModelInstance* instance) {
  return Guarded(
      "TRITONBACKEND_ModelInstanceInitialize", [&]() -> TRITONSERVER_Error* {
        TRITONBACKEND_Model* model = nullptr;
        GJ_TRITON_RETURN_IF_ERROR(
            TRITONBACKEND_ModelInstanceModel(instance, &model));
        void* model_state = nullptr;
        GJ_TRITON_RETURN_IF_ERROR(
            TRITONBACKEND_ModelState(model, &model_state));
        std::unique_ptr<InstanceState> state;
        GJ_TRITON_RETURN_IF_ERROR(InstanceState::Create(
            static_cast<ModelState*>(model_state), instance, &state));
        GJ_TRITON_RETURN_IF_ERROR(
            TRITONBACKEND_ModelInstanceSetState(instance, state.get()));
        state.release();
        return nullptr;
      });
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(
    TRITONBACKEND_ModelInstance* instance) {
  void* state = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  delete static_cast<InstanceState*>(state);
  return nullptr;
}

GJ_TRITON_EXPORT TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
    const uint32_t request_count) {
  void* state = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  // Execute answers and releases every request itself; an error returned
  // from here would tell Triton that none was released.
  static_cast<InstanceState*>(state)->Execute(requests, request_count);
  return nullptr;
}

}  // extern "C"
