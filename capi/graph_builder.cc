#include "core/graph_builder.h"

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capi/arg_convert.h"
#include "capi/dlpack_convert.h"
#include "capi/error.h"
#include "capi/graph.h"
#include "capi/options.h"
#include "capi/raw_enum.h"
#include "core/io_spec.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"
#include "runtime/tensor_copy.h"

struct gj_graph_builder {
  explicit gj_graph_builder(std::string name) : builder(std::move(name)) {}
  guardjit::GraphBuilder builder;
  // Finish() hands the graph away; the builder only accepts destroy then.
  bool finished = false;
};

namespace guardjit::capi {
namespace {

absl::Status CheckBuilder(const gj_graph_builder* builder,
                          absl::string_view function) {
  if (builder == nullptr) return NullArgument(function, "builder");
  if (builder->finished) {
    return absl::FailedPreconditionError(
        absl::StrCat(function, ": the builder was finished; only destroy it"));
  }
  return absl::OkStatus();
}

// Prefixes the C function so a host sees where a builder error came from.
absl::Status Prefixed(absl::string_view function, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(function, ": ", status.message()));
}

// `arg_size`: the bytes between elements of `args` (0: sizeof(gj_arg)).
absl::Status AddNode(gj_graph_builder* builder, const char* name,
                     const char* target, const gj_arg* args, size_t num_args,
                     size_t arg_size, absl::string_view kFn) {
  RETURN_IF_ERROR(CheckBuilder(builder, kFn));
  if (name == nullptr) return NullArgument(kFn, "name");
  if (target == nullptr) return NullArgument(kFn, "target");
  if (args == nullptr && num_args > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": args is NULL with num_args ", num_args, " (node '",
                     name, "')"));
  }
  std::vector<Arg> positional;
  Kwargs kwargs;
  for (size_t k = 0; k < num_args; ++k) {
    gj_arg a;
    RETURN_IF_ERROR(ReadGrownElement(
        args, k, arg_size,
        absl::StrCat(kFn, ": node '", name, "': args[", k, "]"), &a));
    std::string what =
        a.name == nullptr
            ? absl::StrCat(kFn, ": node '", name, "': args[", k, "]")
            : absl::StrCat(kFn, ": node '", name, "': args[", k, "] ('", a.name,
                           "')");
    ASSIGN_OR_RETURN(Arg arg, ArgFromC(a, what));
    if (a.name == nullptr) {
      positional.push_back(std::move(arg));
    } else {
      kwargs.emplace_back(a.name, std::move(arg));
    }
  }
  return Prefixed(
      kFn, builder->builder
               .AddNode(name, target, std::move(positional), std::move(kwargs))
               .status());
}

absl::Status AddConstant(gj_graph_builder* builder, const char* name,
                         const DLTensor* value) {
  constexpr absl::string_view kFn = "gj_graph_builder_add_constant";
  RETURN_IF_ERROR(CheckBuilder(builder, kFn));
  if (name == nullptr) return NullArgument(kFn, "name");
  if (value == nullptr) return NullArgument(kFn, "value");
  ASSIGN_OR_RETURN(
      Tensor borrowed,
      BorrowDLTensor(value, absl::StrCat(kFn, ": constant '", name, "'")));
  if (!borrowed.device().is_cpu()) {
    // The constant is copied now, by the host: its memory must be host memory.
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": constant '", name, "' is on ", borrowed.device().ToString(),
        "; constants are copied from host memory (kDLCPU or kDLCUDAHost)"));
  }
  ASSIGN_OR_RETURN(Tensor owned,
                   Tensor::Empty(borrowed.dtype(), borrowed.sizes()));
  CopyInto(owned, borrowed);
  return Prefixed(
      kFn, builder->builder.AddConstant(name, std::move(owned)).status());
}

absl::Status SetOutputs(gj_graph_builder* builder, const char* const* names,
                        size_t num_outputs) {
  constexpr absl::string_view kFn = "gj_graph_builder_set_outputs";
  RETURN_IF_ERROR(CheckBuilder(builder, kFn));
  if (names == nullptr && num_outputs > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": names is NULL with num_outputs ", num_outputs));
  }
  std::vector<Arg> outputs;
  for (size_t k = 0; k < num_outputs; ++k) {
    if (names[k] == nullptr)
      return NullArgument(kFn, absl::StrCat("names[", k, "]"));
    outputs.push_back(Arg::Ref(names[k]));
  }
  return Prefixed(kFn, builder->builder.SetOutputs(std::move(outputs)));
}

absl::Status Finish(gj_graph_builder* builder, gj_graph** out_graph) {
  constexpr absl::string_view kFn = "gj_graph_builder_finish";
  if (out_graph == nullptr) return NullArgument(kFn, "out_graph");
  RETURN_IF_ERROR(CheckBuilder(builder, kFn));
  auto graph = builder->builder.Finish();
  RETURN_IF_ERROR(Prefixed(kFn, graph.status()));
  builder->finished = true;
  *out_graph = new gj_graph(std::shared_ptr<const Graph>(*std::move(graph)));
  return absl::OkStatus();
}

// The IoSpec of a gj_graph_builder_set_*_info call; `what` names its
// input or output.
absl::StatusOr<IoSpec> SpecFromC(const gj_dtype& dtype, int64_t rank,
                                 const int64_t* dims,
                                 const char* const* dim_symbols,
                                 absl::string_view what) {
  IoSpec spec;
  if (RawEnum(dtype) != GJ_DTYPE_UNKNOWN) {
    spec.dtype = DTypeFromC(dtype);
    if (!spec.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dtype ", RawEnum(dtype), " is not a gj_dtype"));
    }
  }
  if (rank < -1 || rank > kMaxIoRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": rank ", rank, " is not -1 (unknown) or 0 to ", kMaxIoRank));
  }
  if (rank == -1) return spec;
  if (dims == nullptr && rank > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dims is NULL with rank ", rank));
  }
  spec.dims.emplace();
  for (int64_t k = 0; k < rank; ++k) {
    const char* symbol = dim_symbols == nullptr ? nullptr : dim_symbols[k];
    spec.dims->push_back({dims[k], symbol == nullptr ? "" : symbol});
  }
  return spec;
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

gj_error* gj_graph_builder_create(gj_context* context, const char* name,
                                  gj_graph_builder** out_builder) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_graph_builder_create";
  if (out_builder != nullptr) *out_builder = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (out_builder == nullptr) return NullArgument(kFn, "out_builder");
    if (context == nullptr) return NullArgument(kFn, "context");
    if (name == nullptr) return NullArgument(kFn, "name");
    *out_builder = new gj_graph_builder(name);
    return absl::OkStatus();
  });
}

void gj_graph_builder_destroy(gj_graph_builder* builder) { delete builder; }

gj_error* gj_graph_builder_add_input(gj_graph_builder* builder,
                                     const char* name) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_graph_builder_add_input";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    RETURN_IF_ERROR(guardjit::capi::CheckBuilder(builder, kFn));
    if (name == nullptr) return NullArgument(kFn, "name");
    return guardjit::capi::Prefixed(
        kFn, builder->builder.AddPlaceholder(name).status());
  });
}

gj_error* gj_graph_builder_add_constant(gj_graph_builder* builder,
                                        const char* name,
                                        const DLTensor* value) {
  return guardjit::capi::Guarded(
      [&] { return guardjit::capi::AddConstant(builder, name, value); });
}

gj_error* gj_graph_builder_add_node(gj_graph_builder* builder, const char* name,
                                    const char* target, const gj_arg* args,
                                    size_t num_args) {
  return guardjit::capi::Guarded([&] {
    return guardjit::capi::AddNode(builder, name, target, args, num_args, 0,
                                   "gj_graph_builder_add_node");
  });
}

gj_error* gj_graph_builder_add_node_v(gj_graph_builder* builder,
                                      const char* name, const char* target,
                                      const gj_arg* args, size_t num_args,
                                      size_t arg_size) {
  return guardjit::capi::Guarded([&] {
    if (arg_size == 0) {
      return absl::InvalidArgumentError(
          "gj_graph_builder_add_node_v: arg_size is 0; pass sizeof(gj_arg)");
    }
    return guardjit::capi::AddNode(builder, name, target, args, num_args,
                                   arg_size, "gj_graph_builder_add_node_v");
  });
}

gj_error* gj_graph_builder_set_outputs(gj_graph_builder* builder,
                                       const char* const* names,
                                       size_t num_outputs) {
  return guardjit::capi::Guarded(
      [&] { return guardjit::capi::SetOutputs(builder, names, num_outputs); });
}

gj_error* gj_graph_builder_set_input_info(gj_graph_builder* builder,
                                          const char* name, gj_dtype dtype,
                                          int64_t rank, const int64_t* dims,
                                          const char* const* dim_symbols) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_graph_builder_set_input_info";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    RETURN_IF_ERROR(guardjit::capi::CheckBuilder(builder, kFn));
    if (name == nullptr) return NullArgument(kFn, "name");
    ASSIGN_OR_RETURN(
        guardjit::IoSpec spec,
        guardjit::capi::SpecFromC(dtype, rank, dims, dim_symbols,
                                  absl::StrCat(kFn, ": input '", name, "'")));
    return guardjit::capi::Prefixed(
        kFn, builder->builder.SetInputSpec(name, std::move(spec)));
  });
}

gj_error* gj_graph_builder_set_output_info(gj_graph_builder* builder,
                                           size_t index, gj_dtype dtype,
                                           int64_t rank, const int64_t* dims,
                                           const char* const* dim_symbols) {
  constexpr absl::string_view kFn = "gj_graph_builder_set_output_info";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    RETURN_IF_ERROR(guardjit::capi::CheckBuilder(builder, kFn));
    ASSIGN_OR_RETURN(
        guardjit::IoSpec spec,
        guardjit::capi::SpecFromC(dtype, rank, dims, dim_symbols,
                                  absl::StrCat(kFn, ": output ", index)));
    if (index > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": output ", index, " is out of range"));
    }
    return guardjit::capi::Prefixed(
        kFn, builder->builder.SetOutputSpec(static_cast<int>(index),
                                            std::move(spec)));
  });
}

gj_error* gj_graph_builder_finish(gj_graph_builder* builder,
                                  gj_graph** out_graph) {
  if (out_graph != nullptr) *out_graph = nullptr;
  return guardjit::capi::Guarded(
      [&] { return guardjit::capi::Finish(builder, out_graph); });
}

}  // extern "C"
