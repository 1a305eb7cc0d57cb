/*
 * guardjit C API, part of guardjit/guardjit.h: functions (a graph plus its
 * compiled cache entries), calls, logging, introspection and compile
 * reports. Include <guardjit/guardjit.h>; its conventions apply here.
 */
#ifndef GUARDJIT_FUNCTION_H_
#define GUARDJIT_FUNCTION_H_

#include "guardjit.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Since 0.8: how a function runs its CUDA calls (CPU calls ignore it).
 *
 * GJ_MODE_REDUCE_OVERHEAD (torch.compile(mode="reduce-overhead")): each CUDA
 * cache entry, per concrete size key (the values of its size symbols; a
 * static entry has one key), runs plain kernel launches on its first call
 * (the warm-up), captures its launches into a CUDA graph on its second
 * (stream capture on a private stream, thread-local mode, with the entry's
 * intermediates in a private pool of device memory per key), and from then
 * on replays it with one cuGraphLaunch on the call's stream. A graph
 * recorded during a call on one stream replays on any other.
 *
 * No copy-in: PyTorch copies each new input into a static placeholder
 * before a replay; guardjit remembers which kernel-node parameters hold
 * which input and output, and when a call's input or output addresses
 * differ from the last replay's it patches only the nodes holding them
 * (cuGraphExecKernelNodeSetParams, counted in
 * gj_function_stats.cuda_graph_pointer_updates): inputs are read where the
 * host keeps them and outputs written into its destinations. Calls that
 * reuse their tensors replay with no host work beyond the launch. Matrix
 * products and convolutions run on cuBLASLt, whose captured nodes are not
 * patchable: an operand of theirs that is a call input or output is read in
 * place until it moves, then (up to 1 MiB) copied through the key's pool by
 * a memcpy node of the graph, patched on later moves and counted the same
 * way; a larger one that moves re-captures the key.
 *
 * Refusals never fail a call: the entry (or key) runs plain launches and
 * says why in explain() and under GJ_LOGS=cudagraphs ("skipping cudagraphs
 * due to ..."): a CPU tensor among the inputs (a scalar uploaded per call),
 * a node that runs on the host (its reference kernel on host copies, which
 * waits for the stream), a cuBLASLt operand it would read through a
 * contiguous copy (a channels-last convolution weight), intermediates over
 * the private pool's cap (1 GiB per key) or device memory running out, a
 * capture the driver rejects. A call
 * with a cancel flag or a timeout runs plain launches (a graph cannot stop
 * between kernels), as does a call made while another call replays the
 * same entry. Past max_graphs_per_entry keys the least recently used
 * key's graph and pool are freed (an eviction; the key records again when
 * it comes back, a re-capture). */
typedef enum gj_function_mode {
  GJ_MODE_DEFAULT = 0,        /* plain kernel launches */
  GJ_MODE_REDUCE_OVERHEAD = 1 /* CUDA graphs per entry and size key */
} gj_function_mode;

/* Since 0.8: when a miss compiles (gj_function_options.compile). */
typedef enum gj_compile_mode {
  GJ_COMPILE_SYNC = 0, /* the missing call compiles, then runs the entry */
  GJ_COMPILE_ASYNC = 1 /* the missing call runs eagerly; the entry compiles
                          in the background */
} gj_compile_mode;

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
  /* Since 0.8: nonzero makes a graph break an error naming the node and the
   * reason (torch.compile(fullgraph=True)), instead of splitting the graph.
   * A graph breaks at a cond whose predicate is computed from tensor values
   * and at an op whose output size depends on values (nonzero,
   * masked_select, unique, item): the function then runs as segments, each
   * with its own guards and cache entries, compiled when first reached; the
   * host reads the predicate (or the sizes) between them. See explain(). */
  int32_t fullgraph;
  /* Since 0.8: GJ_MODE_DEFAULT (the default) or GJ_MODE_REDUCE_OVERHEAD; see
   * gj_function_mode. */
  gj_function_mode mode;
  /* Since 0.8: CUDA graphs kept per cache entry in reduce-overhead mode (one
   * per size key); 0 = the default, 8. Negative is INVALID_ARGUMENT. */
  int32_t max_graphs_per_entry;
  /* Since 0.8: GJ_COMPILE_ASYNC makes a miss answer at once: the call runs
   * on the reference kernels (the eager interpreter) while the entry
   * compiles on a background thread of the context, and later calls with
   * the same guards use the compiled entry once it is published. A server
   * sees no compile stall on a new shape. Calls that miss on a key already
   * compiling run eagerly too (gj_function_stats.eager_while_compiling). A
   * background compile that fails is logged as a warning and its key stays
   * eager (counted in fallback_calls). Destroying the function waits for its
   * compile in progress and cancels the queued ones. */
  gj_compile_mode compile;
  /* Since 0.9: the bytes from one mark_dynamic element to the next, so that
   * gj_dynamic_dim can grow: 0 (what _init sets) means sizeof(gj_dynamic_dim)
   * of 0.3, 24. A host built against a newer header passes its own
   * sizeof(gj_dynamic_dim); this library reads the fields it knows and
   * requires the bytes past them to be zero (a field it would ignore is
   * INVALID_ARGUMENT naming the element). Below 24 is INVALID_ARGUMENT. */
  size_t mark_dynamic_stride;
} gj_function_options;

GJ_EXPORT void gj_function_options_init_v(gj_function_options* options,
                                          size_t struct_size);
GJ_INIT_FUNCTION(gj_function_options, gj_function_options_init)
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
  /* Since 0.5: a flag the host may set nonzero from any thread to stop the
   * call; NULL = none. Read with relaxed atomic loads while the call runs. */
  const int32_t* cancel;
  /* Since 0.5: the call stops once this many microseconds have passed since
   * it started; 0 = no limit. */
  int64_t timeout_us;
  /* Since 0.7: for a call on CUDA tensors, the CUstream its work is
   * enqueued on; NULL = the legacy default stream (what NULL means to a host
   * on the CUDA runtime). Ignored for CPU calls. */
  void* stream;
  /* Since 0.7: nonzero makes a CUDA call wait for its stream before
   * returning and report a device-side check that failed during this call
   * (see "Devices" at gj_function_call). Ignored for CPU calls. */
  int32_t synchronize;
} gj_call_options;

GJ_EXPORT void gj_call_options_init_v(gj_call_options* options,
                                      size_t struct_size);
GJ_INIT_FUNCTION(gj_call_options, gj_call_options_init)

/* Runs the function into caller-provided outputs. Each output DLTensor must
 * have the output's dtype and shape (strides NULL for contiguous, or any
 * non-overlapping strides) and must not overlap another output; an output
 * may overlap an input. Inputs and outputs are borrowed for the call; data +
 * byte_offset must be aligned to the item size; CPU tensors have device_id
 * 0; the product of the sizes must fit in int64 even where another dim is 0.
 * Outputs are checked before anything runs. A CPU call blocks until the
 * results are written; on error no output has been written. Where outputs
 * are written in place and where they are copied (gj_function_explain names
 * each copy and why), how overlap is decided, and how often a stoppable call
 * checks its stop conditions: capi/docs/function_call.md.
 * Stopping: with options->cancel or options->timeout_us the call returns
 * CANCELLED or DEADLINE_EXCEEDED with no output written.
 * Devices (since 0.7): tensors are kDLCPU, kDLCUDAHost (pinned host memory,
 * read as host memory) or kDLCUDA (device_id = the CUDA ordinal), all on one
 * device except 0-dim CPU inputs (scalars beside CUDA tensors, as in
 * PyTorch); the device is part of the cache entry's guards. A CUDA call runs
 * in the device's primary context, enqueues its work on options->stream and
 * returns: outputs are ready when the stream reaches them, and inputs must
 * stay valid until then. A device-side check that fails (an index out of
 * range in a gather) is reported by the next call of the function, naming
 * the node, and by the call itself with options->synchronize (or
 * GJ_CUDA_LAUNCH_BLOCKING=1 in the environment).
 * Errors: INVALID_ARGUMENT naming the input or output (NULL pointer, wrong
 * count, unsupported dtype, negative sizes, shapes an op rejects, tensors on
 * different devices, a CUDA ordinal the driver does not have), OUT_OF_RANGE
 * (element count or byte extent past int64), UNAVAILABLE (CUDA tensors where
 * no CUDA driver is usable), CANCELLED, DEADLINE_EXCEEDED. */
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
 * A CUDA call's outputs are kDLCUDA memory of its device from guardjit's
 * stream-ordered caching allocator, ready when options->stream reaches
 * them; releasing one returns its memory for reuse by work enqueued after
 * that point on the same stream (a host that used it on another stream
 * synchronizes that stream first, as with PyTorch's caching allocator).
 * Errors as gj_function_call. */
GJ_EXPORT gj_error* gj_function_call_alloc(gj_function* function,
                                           const DLTensor* const* inputs,
                                           size_t num_inputs,
                                           const gj_call_options* options,
                                           DLManagedTensor** out_outputs,
                                           size_t num_outputs);

/* Since 0.5: compiles the cache entry a call with these inputs would use,
 * without running it, so the first real call is a hit (a server warming up
 * before traffic). Only the inputs' metadata is read (dtype, shape, strides,
 * device): data may be NULL, and inputs with NULL data never alias one
 * another. An entry that already serves such a call makes this a no-op;
 * otherwise the compile counts in gj_function_stats as a miss (and a
 * compile), not as a call.
 * Errors as gj_function_call's for inputs; FAILED_PRECONDITION when the
 * function is past its recompile limit (calls would run eagerly). */
GJ_EXPORT gj_error* gj_function_precompile(gj_function* function,
                                           const DLTensor* const* inputs,
                                           size_t num_inputs,
                                           const gj_call_options* options);

/* ------------------------------------------------------------------------ */
/* Logging (since 0.5)                                                      */

/* Receives guardjit's log lines instead of stderr: `topic` is "guards",
 * "recompiles", "graph_breaks", "codegen", "cudagraphs", "cache" (since
 * 0.11: the compile cache's hits and stores) or "warning";
 * `message` has no
 * "[guardjit:...]" prefix. Both strings live only during the call. Called
 * from whichever thread logs, one message at a time; it must not call back
 * into guardjit. */
typedef void (*gj_log_callback)(void* user_data, const char* topic,
                                const char* message);
/* Process-wide. NULL restores stderr. */
GJ_EXPORT void gj_set_log_callback(gj_log_callback callback, void* user_data);
/* Which topics log, as GJ_LOGS says ("guards,recompiles", "all", ""):
 * replaces what GJ_LOGS set. Warnings always log. Process-wide. */
GJ_EXPORT void gj_set_log_topics(const char* spec);

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
  /* Since 0.8: graphs (segments) reached so far, and the graph breaks
   * between them (1 and 0 for a function without breaks). Counters above
   * cover all segments: compiles, misses and entries are summed; calls and
   * hits count whole calls (a hit: no segment missed). */
  int64_t graph_count;
  int64_t graph_break_count;
  /* Since 0.8, reduce-overhead mode (gj_function_mode), over all entries:
   * CUDA graphs captured and instantiated (re-captures included), replays
   * (cuGraphLaunch calls), kernel and memcpy nodes patched with a call's new
   * input or output addresses, re-captures (a key recorded again after an
   * eviction or a change its node parameters could not express), graphs evicted
   * past max_graphs_per_entry, and the device bytes the entries' private pools
   * hold now. */
  int64_t cuda_graphs_recorded;
  int64_t cuda_graph_replays;
  int64_t cuda_graph_pointer_updates;
  int64_t cuda_graph_recaptures;
  int64_t cuda_graph_evictions;
  int64_t cuda_graph_pool_bytes;
  /* Since 0.8: calls answered by the eager interpreter because their entry
   * was compiling in the background (GJ_COMPILE_ASYNC). */
  int64_t eager_while_compiling;
  /* Since 0.11 (appended): entries (of `compiles`) whose code all came from
   * the context's compile cache (gj_context_options.cache_dir): nothing was
   * compiled for them. explain() says "loaded from the disk cache". */
  int64_t entries_loaded;
} gj_function_stats;

GJ_EXPORT void gj_function_stats_init_v(gj_function_stats* stats,
                                        size_t struct_size);
GJ_INIT_FUNCTION(gj_function_stats, gj_function_stats_init)
/* Fills the fields that fit in stats->struct_size (call _init first). */
GJ_EXPORT gj_error* gj_function_get_stats(const gj_function* function,
                                          gj_function_stats* stats);
/* torch._dynamo.explain()-style text: graph and op counts, ops, guards of
 * every entry, compile times, cache state, counters, recompile reasons,
 * guard latency. For a graph that breaks (see fullgraph): the graphs reached
 * so far, "Graph Break Count", each break's reason naming the node
 * ("data-dependent predicate: cond 'cond' reads the value of 'lt'"), and
 * ops, guards and compile times per graph. Free *out_text with
 * gj_string_destroy. */
GJ_EXPORT gj_error* gj_function_explain(const gj_function* function,
                                        char** out_text);
/* The guards of every cache entry in TREE_GUARD_MANAGER form, most recently
 * used first. Free *out_text with gj_string_destroy. */
GJ_EXPORT gj_error* gj_function_dump_guards(const gj_function* function,
                                            char** out_text);

/* Releases an output of gj_function_call_alloc. Accepts NULL. */
GJ_EXPORT void gj_tensor_release(DLManagedTensor* tensor);

/* ------------------------------------------------------------------------ */
/* Compile reports: the code a target gets (since 0.6)                       */

typedef struct gj_compile_report_options {
  size_t struct_size;
  /* "cpu" (NULL = "cpu"), or a CUDA target: "cuda:sm_90", "sm_90",
   * "cuda:90", with an optional 'a'/'f' variant ("cuda:sm_90a"). Read during
   * the call only. */
  const char* target;
  /* Nonzero: also run the graph through the target's kernels on random
   * inputs (CUDA: the kernels as CUDA C on the SIMT emulator, compiled by
   * the host C++ compiler, $GJ_HOST_CXX else $CXX else c++; cpu: the LLVM
   * JIT) and compare every output with the eager interpreter. */
  int32_t emulate;
  /* Seed of the random inputs (default 0): floats uniform in [-2, 2),
   * integers in [0, 8), bools 0 or 1. */
  uint64_t seed;
} gj_compile_report_options;

GJ_EXPORT void gj_compile_report_options_init_v(
    gj_compile_report_options* options, size_t struct_size);
GJ_INIT_FUNCTION(gj_compile_report_options, gj_compile_report_options_init)

/* The comparison gj_graph_compile_report made with options->emulate. */
typedef struct gj_compile_check {
  size_t struct_size;
  /* 1 when the graph ran (or was tried) on the target: options->emulate. */
  int32_t checked;
  /* GJ_OK, or why the target's run failed (a gather index out of range in
   * the random inputs, a kernel the emulator rejects); the report's text
   * has the message. */
  gj_error_code run_code;
  /* Largest |target - eager| over every output element; infinity where
   * one side is NaN or infinite and the other is not. */
  double max_abs_error;
  /* 1 when every element is within its dtype's tolerance (absolute plus
   * relative: float32 2e-5, float64 1e-11, float16 2e-3, bfloat16 1.6e-2,
   * integers and bool exact; NaN only where eager has NaN); 0 when not or
   * when the run failed. */
  int32_t within_tolerance;
} gj_compile_check;

GJ_EXPORT void gj_compile_check_init_v(gj_compile_check* check,
                                       size_t struct_size);
GJ_INIT_FUNCTION(gj_compile_check, gj_compile_check_init)

/* What guardjit compiles `graph` into for a target, as text for people
 * (`guardjit compile`): the graph specialized for the inputs' dtypes and
 * shapes, its fusion plan (steps with their loop IR), then for CUDA the
 * generated CUDA C, one line per kernel (mapping, threads per block,
 * registers and spills as ptxas reports them) and NVRTC's result (arch,
 * CUBIN or PTX bytes, compile time); for "cpu" the kernels' LLVM IR before
 * optimization. With options->emulate, the comparison against eager per
 * output, summarized in *out_check when out_check is not NULL (call
 * gj_compile_check_init first; the fields inside its struct_size are
 * zeroed on entry and written on success).
 * Only the inputs' metadata is read (dtype and shape; data, strides and
 * device are not), one per graph input in order. NVRTC (libnvrtc, loaded
 * with dlopen) is needed for CUDA targets; no GPU is. Free *out_text with
 * gj_string_destroy. Thread-safe; takes the compilers' time (about 0.1 s to
 * a few seconds).
 * Errors: INVALID_ARGUMENT for an unknown target (quoting it), a wrong input
 * count, a NULL or malformed input or an unsupported dtype (naming the
 * input), shapes the graph rejects (naming the node); OUT_OF_RANGE for an
 * element count past int64; UNAVAILABLE when NVRTC cannot be loaded;
 * UNIMPLEMENTED for a construct the CUDA generator has no lowering for;
 * INTERNAL when NVRTC rejects the generated code. A failed emulated run is
 * not an error: see gj_compile_check.run_code. */
GJ_EXPORT gj_error* gj_graph_compile_report(
    const gj_graph* graph, const DLTensor* const* inputs, size_t num_inputs,
    const gj_compile_report_options* options, char** out_text,
    gj_compile_check* out_check);

/* Since 0.7: every op the library knows, as JSON for tools (`guardjit ops`):
 * {"ops": [{"target": "aten.add.Tensor", "schema": "add.Tensor(...) -> ...",
 * "reference_kernel": true, "cpu_lowering": true, "extern_step": false,
 * "cuda_lowering": true}, ...]}, sorted by target. reference_kernel: the
 * eager interpreter runs it; cpu_lowering / cuda_lowering: compiled entries
 * fuse it into generated kernels (a lowering may still leave some dtypes or
 * arguments to the reference kernel); extern_step: the CPU JIT runs it as a
 * library call (BLAS GEMM, im2col + GEMM). Free *out_json with
 * gj_string_destroy. Thread-safe; does not block. Errors: INVALID_ARGUMENT
 * for a NULL out_json. */
GJ_EXPORT gj_error* gj_list_ops(char** out_json);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GUARDJIT_FUNCTION_H_ */
