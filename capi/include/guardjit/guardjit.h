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
 *   that fit in struct_size). *_init() is inline: it calls
 *   *_init_v(&s, sizeof s) (since 0.7), which fills exactly the bytes the
 *   host's header defines, so a host may run against a newer library than
 *   its header (GJ_INIT_FUNCTION below). Passing NULL
 *   options means defaults; a struct_size below sizeof(size_t) is an
 *   uninitialized struct and fails with INVALID_ARGUMENT.
 * - Tensors are borrowed DLTensor (dlpack.h) for the duration of a call
 *   unless a function says otherwise.
 * - Thread safety: handles may be used from any thread. Functions on distinct
 *   handles never block each other. On one function, gj_function_call,
 *   gj_function_call_alloc, gj_function_precompile, gj_function_get_stats,
 *   gj_function_explain and gj_function_dump_guards may all run
 *   concurrently; a call that misses compiles without holding any lock the
 *   others need (calls missing on the same guards wait for that one
 *   compile, or run eagerly with GJ_COMPILE_ASYNC), so stats, explain and
 *   hits never wait for a compile. A gj_context and a gj_graph are shared
 *   freely: graphs and functions may be created from them on many threads,
 *   and graph queries only read. A gj_graph_builder is for one thread at a
 *   time. Log settings (gj_set_log_callback, gj_set_log_topics) are
 *   process-wide. A handle must not be destroyed while another thread uses
 *   it; functions keep what they need of their context and graph, so those
 *   may be destroyed first.
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
#define GJ_API_VERSION_MINOR 13

#if defined(__GNUC__)
#define GJ_EXPORT __attribute__((visibility("default")))
#else
#define GJ_EXPORT
#endif

/* gj_*_init(&s): the defaults of a struct as THIS header lays it out. Each
 * is an inline call of the exported gj_*_init_v(&s, sizeof s) (since the
 * header after 0.10), so the library writes exactly the host's sizeof
 * whichever version is loaded. The library still exports gj_*_init symbols
 * for hosts built against earlier headers, whose _init was a library call:
 * those fill only the struct's first release (its sizeof in the version
 * that introduced it, capi/CHANGELOG.md), which every such host's struct
 * holds; a field appended later keeps the library's default unless the host
 * sets struct_size over it. (Before, they filled the loaded library's
 * sizeof and wrote past an older host's struct.) FFI hosts that bind symbols
 * by name call gj_*_init_v(&s, sizeof s). GJ_LEGACY_INIT_SYMBOLS is for the
 * library's capi/legacy_init.cc, which defines those exported symbols. */
#ifdef GJ_LEGACY_INIT_SYMBOLS
#define GJ_INIT_FUNCTION(type, name) GJ_EXPORT void name(type* s);
#else
#define GJ_INIT_FUNCTION(type, name) \
  static inline void name(type* s) { name##_v(s, sizeof *s); }
#endif

/* DLPack 0.8+ code for bool (Debian's dlpack.h is 0.6 and lacks it). Each
 * bool element is one byte holding 0 or 1, as in PyTorch and NumPy; other
 * byte values are not checked (that would read every input) and give
 * unspecified values, never a crash or a write out of bounds. */
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
  /* Since 0.5 (appended): compiled kernels the context keeps for reuse once
   * no function uses them (least recently used dropped beyond); default
   * 1024, 0 = none. Code in use by a live function stays whatever the cap:
   * destroying functions returns their compiled code's memory. */
  int32_t max_cached_kernels;
  /* Since 0.5 (appended): host memory the context's caching allocator keeps
   * for reuse after outputs and intermediates are freed (a call that
   * allocates what the last one did gets the same pages back); default
   * 1 GiB, 0 = none. gj_context_release_cached_memory returns it all. */
  int64_t max_cached_bytes;
  /* Since 0.11 (appended): the persistent compile cache, a directory where
   * the context stores the code it compiles and looks it up before
   * compiling, so that the next process, or any process sharing the
   * directory, loads what was compiled once (README "Compile cache"). NULL:
   * GJ_CACHE_DIR if set, else none; "": none. Created if missing;
   * gj_context_create fails with UNAVAILABLE, naming it, when it cannot be
   * created or written. Several processes may share one directory. */
  const char* cache_dir;
  /* Since 0.11 (appended): the directory's size limit in bytes; beyond it
   * the least recently used records are removed. Default 1 GiB, 0 =
   * unbounded. */
  int64_t max_cache_bytes;
  /* Since 0.11 (appended): a secret key (any bytes up to the NUL) that
   * signs every record the context stores (HMAC-SHA256); with a key, a
   * record without a valid signature under it is refused (counted in
   * gj_compile_cache_stats.rejected) and the code compiled anew, so whoever
   * can write to the directory cannot make the process run code. NULL:
   * GJ_CACHE_KEY if set, else none; "": none. */
  const char* cache_key;
  /* Since 0.11 (appended): a Redis server the records are shared through,
   * for a fleet: "redis://[:password@]host[:port][/db]" with optional
   * "?timeout_ms=100&ttl_s=0&max_value_bytes=67108864&lock_ms=10000&
   * wait_ms=10000". A lookup that misses the directory asks Redis (a hit is
   * written to the directory); what the context compiles is stored in both.
   * Replicas missing the same kernel at once compile it once: one takes a
   * lock (SET NX PX lock_ms), the others wait up to wait_ms for its record,
   * then compile themselves. Every Redis command is bounded by timeout_ms;
   * after a failure Redis is left alone for a backoff (1 s doubling to 30
   * s) and the context compiles locally, with one warning. NULL:
   * GJ_REMOTE_CACHE if set, else none; "": none. A malformed URL fails
   * gj_context_create with INVALID_ARGUMENT; an unreachable server does
   * not. */
  const char* remote_cache;
} gj_context_options;

GJ_EXPORT void gj_context_options_init_v(gj_context_options* options,
                                         size_t struct_size);
GJ_INIT_FUNCTION(gj_context_options, gj_context_options_init)
GJ_EXPORT gj_error* gj_context_create(const gj_context_options* options,
                                      gj_context** out_context);
/* Graphs, builders and functions made from the context keep what they need
 * of it (its compilers, allocator and compile thread), so they may outlive
 * it and are destroyed on their own. Memory: a function's compiled code is
 * freed when the function is
 * destroyed (beyond what max_cached_kernels keeps); the context's own state
 * does not grow with the number of graphs compiled. */
GJ_EXPORT void gj_context_destroy(gj_context* context);

/* Since 0.5: the context's memory. Host bytes are counted by size class
 * (what the allocator reserved, at most 25% over what was asked). */
typedef struct gj_memory_stats {
  size_t struct_size;
  int64_t bytes_in_use;       /* outputs and intermediates alive now */
  int64_t bytes_cached;       /* freed, kept for reuse */
  int64_t peak_bytes_in_use;  /* since the context was created */
  int64_t system_allocations; /* blocks taken from the system */
  int64_t cache_hits;         /* blocks served from the cache */
  int64_t compiled_modules;   /* JIT code modules loaded */
  int64_t cached_kernels;     /* compiled kernels kept for reuse */
  /* Since 0.13 (appended): bytes of the graphs' constant weights that the
   * context's live cache entries hold again, packed once into their kernels'
   * layouts (a packed product's panels, oneDNN's blocked formats); freed
   * with the entry. Host only ({kDLCPU, 0}); 0 for a CUDA device. */
  int64_t packed_weight_bytes;
} gj_memory_stats;

GJ_EXPORT void gj_memory_stats_init_v(gj_memory_stats* stats,
                                      size_t struct_size);
GJ_INIT_FUNCTION(gj_memory_stats, gj_memory_stats_init)
/* Fills the fields that fit in stats->struct_size (call _init first).
 * Thread-safe. Library-allocated outputs (gj_function_call_alloc) count as
 * in use until released, even after the context is destroyed. */
GJ_EXPORT gj_error* gj_context_get_memory_stats(const gj_context* context,
                                                gj_memory_stats* stats);
/* Since 0.11: what the context's compile cache (gj_context_options.cache_dir)
 * did. A record is one compiled kernel; a lookup that finds no usable
 * record is a miss, and the kernel compiles. */
typedef struct gj_compile_cache_stats {
  size_t struct_size;
  int64_t kernels_compiled; /* kernels the context compiled */
  int64_t kernels_loaded;   /* kernels loaded from the cache instead */
  int64_t disk_hits;
  int64_t disk_misses;
  int64_t disk_stores;
  int64_t remote_hits; /* from Redis (gj_context_options.remote_cache) */
  int64_t remote_misses;
  int64_t remote_stores;
  /* Kernels left to another replica holding their compile lock, and of
   * those the waits that ended without its record (compiled here then). */
  int64_t lock_waits;
  int64_t lock_timeouts;
  /* Records refused: truncated, corrupt (digest), of another record format,
   * stored under another key, unsigned or wrongly signed with cache_key set.
   * Each is removed, its kernel compiled and stored again. */
  int64_t rejected;
  int64_t errors;    /* I/O and Redis failures: each a miss or a lost store */
  int64_t evictions; /* records this context removed past max_cache_bytes */
} gj_compile_cache_stats;

GJ_EXPORT void gj_compile_cache_stats_init_v(gj_compile_cache_stats* stats,
                                             size_t struct_size);
static inline void gj_compile_cache_stats_init(gj_compile_cache_stats* s) {
  gj_compile_cache_stats_init_v(s, sizeof *s);
}
/* Fills the fields that fit in stats->struct_size (call _init first).
 * kernels_compiled counts for every JIT context; the other counters stay 0
 * without a compile cache, and all of them with the eager backend.
 * Thread-safe. */
GJ_EXPORT gj_error* gj_context_get_compile_cache_stats(
    const gj_context* context, gj_compile_cache_stats* stats);

/* Since 0.11: a compile cache directory as a whole, for tools (`guardjit
 * cache stats|verify|clear DIR`) and hosts that maintain one. */
typedef struct gj_cache_dir_stats {
  size_t struct_size;
  int64_t records;       /* record files */
  int64_t bytes;         /* their total size */
  int64_t oldest_use_ms; /* last use of the least recently used (Unix ms) */
  int64_t newest_use_ms; /* last use of the most recently used (Unix ms) */
  int64_t verified;      /* with verify: records whose checks passed */
  int64_t bad;           /* with verify: records that failed them */
  int64_t removed;       /* with remove_bad: bad records removed */
} gj_cache_dir_stats;

GJ_EXPORT void gj_cache_dir_stats_init_v(gj_cache_dir_stats* stats,
                                         size_t struct_size);
static inline void gj_cache_dir_stats_init(gj_cache_dir_stats* s) {
  gj_cache_dir_stats_init_v(s, sizeof *s);
}
/* Counts the records of cache directory `dir`; with `verify`, reads each
 * one whole and checks it as a load would (its digest, its file name
 * against its key, with a non-NULL `key` its signature), and with
 * `remove_bad` also removes those that fail. `out_report` (optional; free
 * with gj_string_destroy): a summary by kind of record, then one line per
 * bad record naming the file and the problem. NOT_FOUND when `dir` does not
 * exist. Safe while other processes use the directory. */
GJ_EXPORT gj_error* gj_cache_dir_inspect(const char* dir, const char* key,
                                         int32_t verify, int32_t remove_bad,
                                         gj_cache_dir_stats* stats,
                                         char** out_report);
/* Removes every record (and leftover temporary file) of cache directory
 * `dir`; `out_removed` (optional) gets how many files. NOT_FOUND when `dir`
 * does not exist. */
GJ_EXPORT gj_error* gj_cache_dir_clear(const char* dir, int64_t* out_removed);

/* Returns every cached host block to the system. Thread-safe. */
GJ_EXPORT gj_error* gj_context_release_cached_memory(gj_context* context);
/* Since 0.10: the memory of one device. {kDLCPU, 0}: the context's host
 * memory, as gj_context_get_memory_stats. {kDLCUDA, i}: device i's
 * stream-ordered caching allocator (outputs and intermediates of CUDA calls,
 * cuBLASLt workspaces), which every context of the process shares, as CUDA
 * devices are per process: bytes in use count by size class until a block's
 * stream has passed its last use; system_allocations counts cuMemAlloc calls;
 * compiled_modules and cached_kernels are 0 (they are per context and
 * reported for the host). UNAVAILABLE without a usable CUDA driver or when
 * the device does not exist; INVALID_ARGUMENT for other device types.
 * Thread-safe. */
GJ_EXPORT gj_error* gj_context_get_device_memory_stats(
    const gj_context* context, DLDevice device, gj_memory_stats* stats);
/* Since 0.10: returns the device's cached blocks to the system ({kDLCPU, 0}:
 * as gj_context_release_cached_memory; {kDLCUDA, i}: cuMemFree of every idle
 * block of device i, after waiting for the streams that used them last).
 * Blocks still in use stay. Errors as gj_context_get_device_memory_stats. */
GJ_EXPORT gj_error* gj_context_release_cached_device_memory(gj_context* context,
                                                            DLDevice device);

/* ------------------------------------------------------------------------ */
/* Graphs: immutable once loaded; may be shared by several functions        */

typedef struct gj_graph gj_graph;

/* Element types, numbered as guardjit.proto.DType. */
typedef enum gj_dtype {
  GJ_DTYPE_UNKNOWN = 0, /* since 0.12: graph metadata that names no dtype */
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

/* Since 0.12: what the bytes or the file given to a loader are. */
typedef enum gj_graph_format {
  /* An ONNX ModelProto when the content says so (a top-level varint field
   * 1, ONNX's ir_version, which no guardjit graph has), else a
   * guardjit.proto.Graph. */
  GJ_GRAPH_FORMAT_DETECT = 0,
  GJ_GRAPH_FORMAT_GUARDJIT = 1, /* a guardjit.proto.Graph */
  /* An ONNX ModelProto (binary: gj_graph_from_text refuses it). */
  GJ_GRAPH_FORMAT_ONNX = 2,
} gj_graph_format;

typedef struct gj_graph_load_options {
  size_t struct_size;
  /* Directory that relative ExternalData paths resolve against; NULL = the
   * current directory (gj_graph_from_file: the file's directory). */
  const char* external_data_dir;
  /* Since 0.12 (appended): GJ_GRAPH_FORMAT_DETECT unless set. Another value
   * is INVALID_ARGUMENT naming it. */
  gj_graph_format format;
} gj_graph_load_options;

GJ_EXPORT void gj_graph_load_options_init_v(gj_graph_load_options* options,
                                            size_t struct_size);
GJ_INIT_FUNCTION(gj_graph_load_options, gj_graph_load_options_init)

/* A graph from a serialized guardjit.proto.Graph (binary protobuf), or from
 * a serialized ONNX ModelProto (opsets 7 to 20 of the default domain), told
 * apart by content: a top-level varint field 1 (ONNX's ir_version) is ONNX,
 * which no guardjit graph has. ONNX initializers become constants, each node
 * ATen nodes; an op, attribute value, dtype or domain the importer cannot map
 * exactly is UNIMPLEMENTED with a message naming the ONNX node, op, domain
 * and opset. The bytes are copied. Errors: INVALID_ARGUMENT (malformed bytes,
 * bad references, wrong arguments, constants whose bytes do not match dtype x
 * shape), UNIMPLEMENTED (unknown target, unmappable ONNX node), NOT_FOUND
 * (external data file), DATA_LOSS (external data file shorter than the
 * constant), OUT_OF_RANGE (a constant of more than 2^63 elements or bytes). */
GJ_EXPORT gj_error* gj_graph_from_proto(gj_context* context, const void* data,
                                        size_t size,
                                        const gj_graph_load_options* options,
                                        gj_graph** out_graph);
/* The same from protobuf text format. */
GJ_EXPORT gj_error* gj_graph_from_text(gj_context* context, const char* text,
                                       size_t size,
                                       const gj_graph_load_options* options,
                                       gj_graph** out_graph);
/* Reads a file: an ONNX model whatever it is called (by content, as
 * gj_graph_from_proto), else text format if it ends in .pbtxt or .txt,
 * binary otherwise. */
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
/* Since 0.5: name of the value output `index` returns (its node's name, or
 * "node[k]" for element k of a multi-output node); lives as long as the
 * graph; NULL if out of range. Outputs returning one value share its name. */
GJ_EXPORT const char* gj_graph_output_name(const gj_graph* graph, size_t index);

/* Since 0.12: what the graph declares of its inputs and outputs: the dtypes
 * and shapes its exporter saw (guardjit.proto's TensorMeta, which
 * guardjit.export writes; gj_graph_builder_set_input_info), for hosts that
 * describe a model before any call (a server's model metadata). Calls are
 * not checked against it: they are specialized on the real inputs.
 * - dtype: a gj_dtype, or GJ_DTYPE_UNKNOWN where the graph does not say (or
 *   `index` is out of range);
 * - rank: the number of dims, or -1 where not known;
 * - dim: the static size of dim `dim`, or -1 where it is dynamic (or not
 *   known, or out of range);
 * - dim_symbol: for a dynamic dim, the symbol naming its size ("batch";
 *   dims that share a symbol have equal sizes), or "" when it has none;
 *   NULL for a static dim or out of range. Lives as long as the graph.
 * None of them fails; thread-safe (they only read). */
GJ_EXPORT gj_dtype gj_graph_input_dtype(const gj_graph* graph, size_t index);
GJ_EXPORT int64_t gj_graph_input_rank(const gj_graph* graph, size_t index);
GJ_EXPORT int64_t gj_graph_input_dim(const gj_graph* graph, size_t index,
                                     size_t dim);
GJ_EXPORT const char* gj_graph_input_dim_symbol(const gj_graph* graph,
                                                size_t index, size_t dim);
GJ_EXPORT gj_dtype gj_graph_output_dtype(const gj_graph* graph, size_t index);
GJ_EXPORT int64_t gj_graph_output_rank(const gj_graph* graph, size_t index);
GJ_EXPORT int64_t gj_graph_output_dim(const gj_graph* graph, size_t index,
                                      size_t dim);
GJ_EXPORT const char* gj_graph_output_dim_symbol(const gj_graph* graph,
                                                 size_t index, size_t dim);

/* The graph as torch.fx's print_tabular shows it (opcode, name, target, args,
 * kwargs). Free *out_text with gj_string_destroy. */
GJ_EXPORT gj_error* gj_graph_to_tabular(const gj_graph* graph, char** out_text);

/* ------------------------------------------------------------------------ */
/* Graph builder: the same graphs without protobuf                           */

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
/* Since 0.9: gj_graph_builder_add_node for arguments `arg_size` bytes
 * apart (the host's sizeof(gj_arg)), so that gj_arg can grow: this library
 * reads the fields it knows of each element and requires the bytes past
 * them to be zero (INVALID_ARGUMENT naming the argument otherwise: the host
 * set a field this library is too old for). An arg_size below this
 * library's sizeof(gj_arg) is INVALID_ARGUMENT. */
GJ_EXPORT gj_error* gj_graph_builder_add_node_v(
    gj_graph_builder* builder, const char* name, const char* target,
    const gj_arg* args, size_t num_args, size_t arg_size);
GJ_EXPORT gj_error* gj_graph_builder_set_outputs(gj_graph_builder* builder,
                                                 const char* const* names,
                                                 size_t num_outputs);
/* Since 0.12: declares what input `name` (added before) or output `index`
 * (after gj_graph_builder_set_outputs) is, for gj_graph_input_dtype and
 * friends: `dtype` (GJ_DTYPE_UNKNOWN: not known), `rank` (-1: not known;
 * `dims` and `dim_symbols` are then not read), `dims[rank]` (a size >= 0,
 * or -1 for a dynamic dim), `dim_symbols` (NULL, or per dim NULL or "" for
 * no name; a name, an identifier of letters, digits, '_' and '.', only on a
 * dynamic dim). Arrays are read during the call only; a later call for the
 * same input or output replaces what an earlier one declared. When every
 * input is declared with dtype and static sizes, finish checks the
 * outputs' declarations against the shapes it infers. Errors:
 * INVALID_ARGUMENT naming the input or output and the dim (unknown input,
 * index out of range, NULL arrays with rank > 0, bad sizes or symbols, rank
 * above 64), FAILED_PRECONDITION for an output before set_outputs. */
GJ_EXPORT gj_error* gj_graph_builder_set_input_info(
    gj_graph_builder* builder, const char* name, gj_dtype dtype, int64_t rank,
    const int64_t* dims, const char* const* dim_symbols);
GJ_EXPORT gj_error* gj_graph_builder_set_output_info(
    gj_graph_builder* builder, size_t index, gj_dtype dtype, int64_t rank,
    const int64_t* dims, const char* const* dim_symbols);
/* The finished graph. The builder is spent afterwards: only destroy it. */
GJ_EXPORT gj_error* gj_graph_builder_finish(gj_graph_builder* builder,
                                            gj_graph** out_graph);

/* Functions, logging, introspection and compile reports live in a part of
 * this header with a file of its own; hosts include this header only. */
#include "function.h"

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
