/*
 * guardjit C API.
 *
 * A host hands guardjit a graph (FX-shaped protobuf with ATen targets, or
 * built node by node with the builder below) and calls it with DLPack
 * tensors. See README.md for a walk-through and capi/CHANGELOG.md for the
 * history of this header.
 *
 * Conventions
 * - Every fallible function returns gj_error*: NULL on success, otherwise an
 *   error the caller owns and frees with gj_error_destroy. No C++ exception
 *   crosses this boundary.
 * - Output parameters are named out_*; they are set to NULL/0 on entry and
 *   written only on success.
 * - Handles are opaque; every destroy function accepts NULL.
 * - Options structs start with `size_t struct_size`; call the matching
 *   *_init() to fill defaults. Fields are only ever appended, so a host built
 *   against an older header keeps working (the library reads only the fields
 *   that fit in struct_size). Passing NULL options means defaults; a
 *   struct_size below sizeof(size_t) is an uninitialized struct and fails
 *   with INVALID_ARGUMENT.
 * - Tensors are borrowed DLTensor (dlpack.h) for the duration of a call
 *   unless a function says otherwise.
 * - Thread safety: handles may be used from any thread. Functions on distinct
 *   handles never block each other. gj_function_call may run concurrently on
 *   one function. A handle must not be destroyed while another thread uses it.
 *
 * Versioning: MAJOR changes when an existing declaration changes meaning or
 * layout (never planned); MINOR when declarations or appended option fields
 * are added. gj_version() reports the library actually loaded.
 */
#ifndef GUARDJIT_GUARDJIT_H_
#define GUARDJIT_GUARDJIT_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GJ_API_VERSION_MAJOR 0
#define GJ_API_VERSION_MINOR 4

#if defined(__GNUC__)
#define GJ_EXPORT __attribute__((visibility("default")))
#else
#define GJ_EXPORT
#endif

/* DLPack 0.8+ code for bool (Debian's dlpack.h is 0.6 and lacks it). */
#define GJ_DL_BOOL 6

/* ------------------------------------------------------------------------ */
/* Version                                                                   */

/* "MAJOR.MINOR.PATCH" of the loaded library. Static storage. */
GJ_EXPORT const char* gj_version(void);
/* (GJ_API_VERSION_MAJOR << 16) | GJ_API_VERSION_MINOR of the loaded library. */
GJ_EXPORT uint32_t gj_api_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

/* absl's canonical codes. */
typedef enum gj_error_code {
  GJ_OK = 0,
  GJ_CANCELLED = 1,
  GJ_UNKNOWN = 2,
  GJ_INVALID_ARGUMENT = 3,
  GJ_DEADLINE_EXCEEDED = 4,
  GJ_NOT_FOUND = 5,
  GJ_ALREADY_EXISTS = 6,
  GJ_PERMISSION_DENIED = 7,
  GJ_RESOURCE_EXHAUSTED = 8,
  GJ_FAILED_PRECONDITION = 9,
  GJ_ABORTED = 10,
  GJ_OUT_OF_RANGE = 11,
  GJ_UNIMPLEMENTED = 12,
  GJ_INTERNAL = 13,
  GJ_UNAVAILABLE = 14,
  GJ_DATA_LOSS = 15,
  GJ_UNAUTHENTICATED = 16,
} gj_error_code;

typedef struct gj_error gj_error;

/* GJ_OK for NULL. */
GJ_EXPORT gj_error_code gj_error_get_code(const gj_error* error);
/* Lives as long as `error`; "" for NULL. The message names the node, input or
 * argument at fault. */
GJ_EXPORT const char* gj_error_message(const gj_error* error);
GJ_EXPORT void gj_error_destroy(gj_error* error);

/* Strings the library allocates (graph dumps) are freed with this. */
GJ_EXPORT void gj_string_destroy(char* text);

/* ------------------------------------------------------------------------ */
/* Context: owns the thread pool and the compiler; share one per process    */

typedef struct gj_context gj_context;

/* What compiles a cache entry on a miss. Since 0.4. */
typedef enum gj_backend {
  /* The best available: GJ_BACKEND_CPU_JIT for CPU tensors. */
  GJ_BACKEND_DEFAULT = 0,
  /* Specialized eager plans: the reference kernels with shapes resolved once
   * per entry (torch.compile's backend="eager"). */
  GJ_BACKEND_EAGER = 1,
  /* Fused kernels compiled in process by LLVM's ORC JIT; ops it cannot
   * compile run their reference kernels inside the compiled program. */
  GJ_BACKEND_CPU_JIT = 2,
} gj_backend;

typedef struct gj_context_options {
  size_t struct_size;
  /* Threads that compiled CPU programs run on (parallel kernel loops, GEMM
   * panels, conv images), the calling thread included; a context with a
   * count owns a pool of that many threads, and 1 also keeps OpenBLAS to one
   * thread. 0 = the process-wide pool: GJ_NUM_THREADS if set, else one per
   * core. */
  int32_t num_threads;
  /* Since 0.4 (appended); GJ_BACKEND_DEFAULT unless set. */
  gj_backend backend;
} gj_context_options;

GJ_EXPORT void gj_context_options_init(gj_context_options* options);
GJ_EXPORT gj_error* gj_context_create(const gj_context_options* options,
                                      gj_context** out_context);
/* Every graph and function made from the context must be destroyed first. */
GJ_EXPORT void gj_context_destroy(gj_context* context);

/* ------------------------------------------------------------------------ */
/* Graphs: immutable once loaded; may be shared by several functions        */

typedef struct gj_graph gj_graph;

typedef struct gj_graph_load_options {
  size_t struct_size;
  /* Directory that relative ExternalData paths resolve against; NULL = the
   * current directory (gj_graph_from_file: the file's directory). */
  const char* external_data_dir;
} gj_graph_load_options;

GJ_EXPORT void gj_graph_load_options_init(gj_graph_load_options* options);

/* A graph from a serialized guardjit.proto.Graph (binary protobuf). The bytes
 * are copied. Errors: INVALID_ARGUMENT (malformed bytes, bad references,
 * wrong arguments, constants whose bytes do not match dtype x shape),
 * UNIMPLEMENTED (unknown target), NOT_FOUND (external data file). */
GJ_EXPORT gj_error* gj_graph_from_proto(gj_context* context, const void* data,
                                        size_t size,
                                        const gj_graph_load_options* options,
                                        gj_graph** out_graph);
/* The same from protobuf text format. */
GJ_EXPORT gj_error* gj_graph_from_text(gj_context* context, const char* text,
                                       size_t size,
                                       const gj_graph_load_options* options,
                                       gj_graph** out_graph);
/* Reads a file: text format if it ends in .pbtxt or .txt, binary otherwise. */
GJ_EXPORT gj_error* gj_graph_from_file(gj_context* context, const char* path,
                                       const gj_graph_load_options* options,
                                       gj_graph** out_graph);
/* Functions made from the graph keep their own reference; destroying the
 * graph does not affect them. */
GJ_EXPORT void gj_graph_destroy(gj_graph* graph);

GJ_EXPORT size_t gj_graph_num_inputs(const gj_graph* graph);
GJ_EXPORT size_t gj_graph_num_outputs(const gj_graph* graph);
/* Name of input `index`; lives as long as the graph; NULL if out of range. */
GJ_EXPORT const char* gj_graph_input_name(const gj_graph* graph, size_t index);

/* The graph as torch.fx's print_tabular shows it (opcode, name, target, args,
 * kwargs). Free *out_text with gj_string_destroy. */
GJ_EXPORT gj_error* gj_graph_to_tabular(const gj_graph* graph, char** out_text);

/* ------------------------------------------------------------------------ */
/* Graph builder: the same graphs without protobuf                           */

/* Element types, numbered as guardjit.proto.DType. */
typedef enum gj_dtype {
  GJ_DTYPE_FLOAT32 = 1,
  GJ_DTYPE_FLOAT64 = 2,
  GJ_DTYPE_FLOAT16 = 3,
  GJ_DTYPE_BFLOAT16 = 4,
  GJ_DTYPE_INT8 = 5,
  GJ_DTYPE_UINT8 = 6,
  GJ_DTYPE_INT16 = 7,
  GJ_DTYPE_INT32 = 8,
  GJ_DTYPE_INT64 = 9,
  GJ_DTYPE_BOOL = 10,
} gj_dtype;

typedef enum gj_arg_kind {
  GJ_ARG_NONE = 0,
  GJ_ARG_REF = 1,        /* str: name of an earlier input, constant or node */
  GJ_ARG_INT = 2,        /* i */
  GJ_ARG_FLOAT = 3,      /* f */
  GJ_ARG_BOOL = 4,       /* i (0 or 1) */
  GJ_ARG_STRING = 5,     /* str */
  GJ_ARG_DTYPE = 6,      /* dtype */
  GJ_ARG_DEVICE = 7,     /* str: "cpu", "cuda:0" */
  GJ_ARG_INT_LIST = 8,   /* ints, len */
  GJ_ARG_FLOAT_LIST = 9, /* floats, len */
  GJ_ARG_REF_LIST = 10,  /* refs, len */
  GJ_ARG_SUBGRAPH = 11,  /* str: name of a subgraph */
} gj_arg_kind;

/* One argument of a node; `name` non-NULL makes it a keyword argument.
 * Pointers are read during gj_graph_builder_add_node only. */
typedef struct gj_arg {
  gj_arg_kind kind;
  const char* name;
  int64_t i;
  double f;
  const char* str;
  gj_dtype dtype;
  const int64_t* ints;
  const double* floats;
  const char* const* refs;
  size_t len;
} gj_arg;

typedef struct gj_graph_builder gj_graph_builder;

GJ_EXPORT gj_error* gj_graph_builder_create(gj_context* context,
                                            const char* name,
                                            gj_graph_builder** out_builder);
GJ_EXPORT void gj_graph_builder_destroy(gj_graph_builder* builder);
/* Each add checks its node at once; a failed add leaves the builder as it
 * was, so the host may correct and retry. */
GJ_EXPORT gj_error* gj_graph_builder_add_input(gj_graph_builder* builder,
                                               const char* name);
/* Copies `value` (a CPU tensor of any strides) into the graph. */
GJ_EXPORT gj_error* gj_graph_builder_add_constant(gj_graph_builder* builder,
                                                  const char* name,
                                                  const DLTensor* value);
GJ_EXPORT gj_error* gj_graph_builder_add_node(gj_graph_builder* builder,
                                              const char* name,
                                              const char* target,
                                              const gj_arg* args,
                                              size_t num_args);
GJ_EXPORT gj_error* gj_graph_builder_set_outputs(gj_graph_builder* builder,
                                                 const char* const* names,
                                                 size_t num_outputs);
/* The finished graph. The builder is spent afterwards: only destroy it. */
GJ_EXPORT gj_error* gj_graph_builder_finish(gj_graph_builder* builder,
                                            gj_graph** out_graph);

/* ------------------------------------------------------------------------ */
/* Functions: a graph plus its compiled cache entries                        */

typedef struct gj_function gj_function;

typedef enum gj_dynamic_mode {
  GJ_DYNAMIC_AUTO = 0,   /* static first; sizes that change become symbolic */
  GJ_DYNAMIC_STATIC = 1, /* every size specialized */
  GJ_DYNAMIC_DYNAMIC = 2 /* every size symbolic from the first compile */
} gj_dynamic_mode;

/* torch._dynamo.mark_dynamic(input, dim, min, max): the dim is symbolic
 * from the first compile; a size outside [min, max] fails the entry's guards
 * (and sizes 0 and 1 are always specialized). min = 2, max = INT64_MAX is
 * "any size". Since 0.3. */
typedef struct gj_dynamic_dim {
  int32_t input;
  int32_t dim;
  int64_t min;
  int64_t max;
} gj_dynamic_dim;

typedef struct gj_function_options {
  size_t struct_size;
  /* For logs and explain(); NULL = the graph's name. Copied. */
  const char* name;
  /* Cache entries before the function runs only what it has (default 8). */
  int32_t recompile_limit;
  gj_dynamic_mode dynamic;
  /* Since 0.3: dims to make symbolic (copied; ignored with
   * GJ_DYNAMIC_STATIC). */
  const gj_dynamic_dim* mark_dynamic;
  size_t num_mark_dynamic;
} gj_function_options;

GJ_EXPORT void gj_function_options_init(gj_function_options* options);
GJ_EXPORT gj_error* gj_function_create(gj_context* context,
                                       const gj_graph* graph,
                                       const gj_function_options* options,
                                       gj_function** out_function);
GJ_EXPORT void gj_function_destroy(gj_function* function);

GJ_EXPORT size_t gj_function_num_inputs(const gj_function* function);
GJ_EXPORT size_t gj_function_num_outputs(const gj_function* function);

typedef struct gj_call_options {
  size_t struct_size;
  /* Ambient state the cache guards on (torch.is_grad_enabled(), ...). */
  int32_t grad_mode;     /* default 1 */
  int32_t deterministic; /* default 0 */
  /* Since 0.2: per input, nonzero where the host's tensor requires grad
   * (DLPack does not carry it); NULL = none. Read during the call only. */
  const uint8_t* requires_grad;
} gj_call_options;

GJ_EXPORT void gj_call_options_init(gj_call_options* options);

/* Runs the function into caller-provided outputs: each DLTensor must have the
 * output's dtype and shape (strides may be NULL for contiguous, or any
 * non-overlapping strides) and must not overlap another output. An output may
 * overlap an input. Inputs and outputs are borrowed for the call; their
 * data + byte_offset must be aligned to the item size. Blocks until the
 * results are written; on error no output has been written.
 * Errors: INVALID_ARGUMENT naming the input or output (NULL pointer, wrong
 * count, unsupported dtype, negative sizes, shapes an op rejects),
 * OUT_OF_RANGE (element count or byte extent past int64), UNIMPLEMENTED (a
 * device this build cannot run on). */
GJ_EXPORT gj_error* gj_function_call(gj_function* function,
                                     const DLTensor* const* inputs,
                                     size_t num_inputs,
                                     const DLTensor* const* outputs,
                                     size_t num_outputs,
                                     const gj_call_options* options);

/* Runs the function and returns library-allocated contiguous outputs: fills
 * out_outputs[0 .. num_outputs) (num_outputs must equal
 * gj_function_num_outputs). The caller owns each DLManagedTensor and releases
 * it with gj_tensor_release (or by calling its deleter); each has its own
 * buffer, with explicit row-major strides. On error every entry is NULL.
 * Errors as gj_function_call. */
GJ_EXPORT gj_error* gj_function_call_alloc(gj_function* function,
                                           const DLTensor* const* inputs,
                                           size_t num_inputs,
                                           const gj_call_options* options,
                                           DLManagedTensor** out_outputs,
                                           size_t num_outputs);

/* ------------------------------------------------------------------------ */
/* Introspection: what the guard cache did and why (since 0.2)               */

typedef struct gj_function_stats {
  size_t struct_size;
  int64_t calls;
  int64_t hits;
  int64_t misses;
  int64_t compiles;
  int64_t recompiles;     /* compiles after the first */
  int64_t fallback_calls; /* eager runs past the recompile limit */
  int64_t cache_entries;
  double compile_ms_total;
  double guard_ns_mean; /* guard lookup on hits, sampled */
} gj_function_stats;

GJ_EXPORT void gj_function_stats_init(gj_function_stats* stats);
/* Fills the fields that fit in stats->struct_size (call _init first). */
GJ_EXPORT gj_error* gj_function_get_stats(const gj_function* function,
                                          gj_function_stats* stats);
/* torch._dynamo.explain()-style text: graph and op counts, ops, guards of
 * every entry, compile times, cache state, counters, recompile reasons,
 * guard latency. Free *out_text with gj_string_destroy. */
GJ_EXPORT gj_error* gj_function_explain(const gj_function* function,
                                        char** out_text);
/* The guards of every cache entry in TREE_GUARD_MANAGER form, most recently
 * used first. Free *out_text with gj_string_destroy. */
GJ_EXPORT gj_error* gj_function_dump_guards(const gj_function* function,
                                            char** out_text);

/* Releases an output of gj_function_call_alloc. Accepts NULL. */
GJ_EXPORT void gj_tensor_release(DLManagedTensor* tensor);

/* ------------------------------------------------------------------------ */
/* Argument helpers for the builder                                          */

static inline gj_arg gj_arg_ref(const char* name) {
  gj_arg a = {GJ_ARG_REF,       NULL, 0,    0.0,  name,
              GJ_DTYPE_FLOAT32, NULL, NULL, NULL, 0};
  return a;
}
static inline gj_arg gj_arg_int(int64_t v) {
  gj_arg a = {GJ_ARG_INT,       NULL, v,    0.0,  NULL,
              GJ_DTYPE_FLOAT32, NULL, NULL, NULL, 0};
  return a;
}
static inline gj_arg gj_arg_float(double v) {
  gj_arg a = {GJ_ARG_FLOAT,     NULL, 0,    v,    NULL,
              GJ_DTYPE_FLOAT32, NULL, NULL, NULL, 0};
  return a;
}
static inline gj_arg gj_arg_bool(int v) {
  gj_arg a = {GJ_ARG_BOOL,      NULL, v != 0, 0.0,  NULL,
              GJ_DTYPE_FLOAT32, NULL, NULL,   NULL, 0};
  return a;
}
static inline gj_arg gj_arg_string(const char* s) {
  gj_arg a = {GJ_ARG_STRING,    NULL, 0,    0.0,  s,
              GJ_DTYPE_FLOAT32, NULL, NULL, NULL, 0};
  return a;
}
static inline gj_arg gj_arg_ints(const int64_t* v, size_t n) {
  gj_arg a = {GJ_ARG_INT_LIST,  NULL, 0,    0.0,  NULL,
              GJ_DTYPE_FLOAT32, v,    NULL, NULL, n};
  return a;
}
static inline gj_arg gj_arg_refs(const char* const* v, size_t n) {
  gj_arg a = {GJ_ARG_REF_LIST,  NULL, 0,    0.0, NULL,
              GJ_DTYPE_FLOAT32, NULL, NULL, v,   n};
  return a;
}
static inline gj_arg gj_arg_dtype(gj_dtype d) {
  gj_arg a = {GJ_ARG_DTYPE, NULL, 0, 0.0, NULL, d, NULL, NULL, NULL, 0};
  return a;
}
static inline gj_arg gj_arg_none(void) {
  gj_arg a = {GJ_ARG_NONE,      NULL, 0,    0.0,  NULL,
              GJ_DTYPE_FLOAT32, NULL, NULL, NULL, 0};
  return a;
}
/* Makes `a` a keyword argument: gj_kwarg("alpha", gj_arg_int(2)). */
static inline gj_arg gj_kwarg(const char* name, gj_arg a) {
  a.name = name;
  return a;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GUARDJIT_GUARDJIT_H_ */
