//! Raw declarations of guardjit's C API: `guardjit/guardjit.h` (C API 0.12)
//! and the parts of DLPack 0.6 (`dlpack/dlpack.h`) it uses, written by hand
//! to match the header declaration for declaration.
//!
//! Everything here is `unsafe` to use; the `guardjit` crate is the safe API.
//! Names are the C names. C enums are integer type aliases plus constants
//! (as bindgen does), because the library and hosts may store values a Rust
//! `enum` could not hold. The header's `static inline` argument helpers
//! (`gj_arg_ref`, ..., `gj_kwarg`) are Rust `const fn`s with the same bodies.
//!
//! `tests/layout.rs` checks every struct's size and alignment and every
//! field's offset and size against the C compiler's view of the installed
//! header, and every constant's value.
//!
//! The build script links the shared library `libguardjit` found with
//! `pkg-config --libs guardjit` (or in `$GUARDJIT_LIB_DIR`).

#![no_std]
#![allow(non_camel_case_types, non_upper_case_globals)]

use core::ffi::{c_char, c_int, c_uint, c_void};
use core::marker::{PhantomData, PhantomPinned};

// ------------------------------------------------------------------------
// DLPack 0.6 (dlpack/dlpack.h)

/// `DLPACK_VERSION` of the dlpack.h guardjit's header includes.
pub const DLPACK_VERSION: c_uint = 60;

/// `DLDeviceType`.
pub type DLDeviceType = c_uint;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLOpenCL: DLDeviceType = 4;
pub const kDLVulkan: DLDeviceType = 7;
pub const kDLMetal: DLDeviceType = 8;
pub const kDLVPI: DLDeviceType = 9;
pub const kDLROCM: DLDeviceType = 10;
pub const kDLROCMHost: DLDeviceType = 11;
pub const kDLExtDev: DLDeviceType = 12;
pub const kDLCUDAManaged: DLDeviceType = 13;

#[repr(C)]
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: c_int,
}

/// `DLDataTypeCode` (stored as `uint8_t` in `DLDataType::code`).
pub type DLDataTypeCode = c_uint;
pub const kDLInt: DLDataTypeCode = 0;
pub const kDLUInt: DLDataTypeCode = 1;
pub const kDLFloat: DLDataTypeCode = 2;
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
pub const kDLBfloat: DLDataTypeCode = 4;
pub const kDLComplex: DLDataTypeCode = 5;

#[repr(C)]
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: c_int,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    /// In elements; NULL = compact row-major.
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

// ------------------------------------------------------------------------
// guardjit.h

pub const GJ_API_VERSION_MAJOR: u32 = 0;
pub const GJ_API_VERSION_MINOR: u32 = 12;

/// DLPack 0.8+ code for bool (Debian's dlpack.h is 0.6 and lacks it).
pub const GJ_DL_BOOL: u8 = 6;

macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            // Neither Send, Sync nor Unpin: what the C side allows is the
            // safe wrapper's business.
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque! {
    /// An error the caller owns (`gj_error_destroy`).
    gj_error;
    /// Owns the thread pool and the compiler.
    gj_context;
    /// An immutable graph.
    gj_graph;
    gj_graph_builder;
    /// A graph plus its compiled cache entries.
    gj_function;
}

/// `gj_error_code`: absl's canonical codes.
pub type gj_error_code = c_uint;
pub const GJ_OK: gj_error_code = 0;
pub const GJ_CANCELLED: gj_error_code = 1;
pub const GJ_UNKNOWN: gj_error_code = 2;
pub const GJ_INVALID_ARGUMENT: gj_error_code = 3;
pub const GJ_DEADLINE_EXCEEDED: gj_error_code = 4;
pub const GJ_NOT_FOUND: gj_error_code = 5;
pub const GJ_ALREADY_EXISTS: gj_error_code = 6;
pub const GJ_PERMISSION_DENIED: gj_error_code = 7;
pub const GJ_RESOURCE_EXHAUSTED: gj_error_code = 8;
pub const GJ_FAILED_PRECONDITION: gj_error_code = 9;
pub const GJ_ABORTED: gj_error_code = 10;
pub const GJ_OUT_OF_RANGE: gj_error_code = 11;
pub const GJ_UNIMPLEMENTED: gj_error_code = 12;
pub const GJ_INTERNAL: gj_error_code = 13;
pub const GJ_UNAVAILABLE: gj_error_code = 14;
pub const GJ_DATA_LOSS: gj_error_code = 15;
pub const GJ_UNAUTHENTICATED: gj_error_code = 16;

/// `gj_backend` (since 0.4).
pub type gj_backend = c_uint;
pub const GJ_BACKEND_DEFAULT: gj_backend = 0;
pub const GJ_BACKEND_EAGER: gj_backend = 1;
pub const GJ_BACKEND_CPU_JIT: gj_backend = 2;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_context_options {
    pub struct_size: usize,
    pub num_threads: i32,
    /// Since 0.4.
    pub backend: gj_backend,
    /// Since 0.5.
    pub max_cached_kernels: i32,
    /// Since 0.5.
    pub max_cached_bytes: i64,
    /// Since 0.11: the persistent compile cache's directory. NULL:
    /// `GJ_CACHE_DIR` if set, else none; `""`: none.
    pub cache_dir: *const c_char,
    /// Since 0.11: the directory's size limit (default 1 GiB, 0 =
    /// unbounded).
    pub max_cache_bytes: i64,
    /// Since 0.11: the key signing the records (HMAC-SHA256). NULL:
    /// `GJ_CACHE_KEY` if set, else none; `""`: none.
    pub cache_key: *const c_char,
    /// Since 0.11: `redis://[:password@]host[:port][/db]` the records are
    /// shared through. NULL: `GJ_REMOTE_CACHE` if set, else none; `""`: none.
    pub remote_cache: *const c_char,
}

/// Since 0.5.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_memory_stats {
    pub struct_size: usize,
    pub bytes_in_use: i64,
    pub bytes_cached: i64,
    pub peak_bytes_in_use: i64,
    pub system_allocations: i64,
    pub cache_hits: i64,
    pub compiled_modules: i64,
    pub cached_kernels: i64,
    /// Since 0.13 (appended).
    pub packed_weight_bytes: i64,
}

/// Since 0.11: what the context's compile cache did.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_compile_cache_stats {
    pub struct_size: usize,
    pub kernels_compiled: i64,
    pub kernels_loaded: i64,
    pub disk_hits: i64,
    pub disk_misses: i64,
    pub disk_stores: i64,
    pub remote_hits: i64,
    pub remote_misses: i64,
    pub remote_stores: i64,
    pub lock_waits: i64,
    pub lock_timeouts: i64,
    pub rejected: i64,
    pub errors: i64,
    pub evictions: i64,
}

/// Since 0.11: a compile cache directory as a whole.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_cache_dir_stats {
    pub struct_size: usize,
    pub records: i64,
    pub bytes: i64,
    /// Unix milliseconds.
    pub oldest_use_ms: i64,
    pub newest_use_ms: i64,
    pub verified: i64,
    pub bad: i64,
    pub removed: i64,
}

/// `gj_graph_format` (since 0.12): what the bytes or file given to a loader are.
pub type gj_graph_format = c_uint;
/// An ONNX ModelProto when the content says so, else a guardjit graph.
pub const GJ_GRAPH_FORMAT_DETECT: gj_graph_format = 0;
pub const GJ_GRAPH_FORMAT_GUARDJIT: gj_graph_format = 1;
/// An ONNX ModelProto (binary: gj_graph_from_text refuses it).
pub const GJ_GRAPH_FORMAT_ONNX: gj_graph_format = 2;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_graph_load_options {
    pub struct_size: usize,
    pub external_data_dir: *const c_char,
    /// Since 0.12 (appended).
    pub format: gj_graph_format,
}

/// `gj_dtype`: element types, numbered as guardjit.proto.DType.
pub type gj_dtype = c_uint;
/// Since 0.12: graph metadata that names no dtype.
pub const GJ_DTYPE_UNKNOWN: gj_dtype = 0;
pub const GJ_DTYPE_FLOAT32: gj_dtype = 1;
pub const GJ_DTYPE_FLOAT64: gj_dtype = 2;
pub const GJ_DTYPE_FLOAT16: gj_dtype = 3;
pub const GJ_DTYPE_BFLOAT16: gj_dtype = 4;
pub const GJ_DTYPE_INT8: gj_dtype = 5;
pub const GJ_DTYPE_UINT8: gj_dtype = 6;
pub const GJ_DTYPE_INT16: gj_dtype = 7;
pub const GJ_DTYPE_INT32: gj_dtype = 8;
pub const GJ_DTYPE_INT64: gj_dtype = 9;
pub const GJ_DTYPE_BOOL: gj_dtype = 10;

/// `gj_arg_kind`.
pub type gj_arg_kind = c_uint;
pub const GJ_ARG_NONE: gj_arg_kind = 0;
pub const GJ_ARG_REF: gj_arg_kind = 1;
pub const GJ_ARG_INT: gj_arg_kind = 2;
pub const GJ_ARG_FLOAT: gj_arg_kind = 3;
pub const GJ_ARG_BOOL: gj_arg_kind = 4;
pub const GJ_ARG_STRING: gj_arg_kind = 5;
pub const GJ_ARG_DTYPE: gj_arg_kind = 6;
pub const GJ_ARG_DEVICE: gj_arg_kind = 7;
pub const GJ_ARG_INT_LIST: gj_arg_kind = 8;
pub const GJ_ARG_FLOAT_LIST: gj_arg_kind = 9;
pub const GJ_ARG_REF_LIST: gj_arg_kind = 10;
pub const GJ_ARG_SUBGRAPH: gj_arg_kind = 11;

/// One argument of a node; `name` non-NULL makes it a keyword argument.
/// Pointers are read during `gj_graph_builder_add_node` only.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_arg {
    pub kind: gj_arg_kind,
    pub name: *const c_char,
    pub i: i64,
    pub f: f64,
    pub str: *const c_char,
    pub dtype: gj_dtype,
    pub ints: *const i64,
    pub floats: *const f64,
    pub refs: *const *const c_char,
    pub len: usize,
}

/// `gj_dynamic_mode`.
pub type gj_dynamic_mode = c_uint;
pub const GJ_DYNAMIC_AUTO: gj_dynamic_mode = 0;
pub const GJ_DYNAMIC_STATIC: gj_dynamic_mode = 1;
pub const GJ_DYNAMIC_DYNAMIC: gj_dynamic_mode = 2;

/// `gj_function_mode` (since 0.8): how a function runs its CUDA calls.
pub type gj_function_mode = c_uint;
pub const GJ_MODE_DEFAULT: gj_function_mode = 0;
pub const GJ_MODE_REDUCE_OVERHEAD: gj_function_mode = 1;

/// `gj_compile_mode` (since 0.8): when a miss compiles.
pub type gj_compile_mode = c_uint;
pub const GJ_COMPILE_SYNC: gj_compile_mode = 0;
pub const GJ_COMPILE_ASYNC: gj_compile_mode = 1;

/// `mark_dynamic(input, dim, min, max)` (since 0.3).
#[repr(C)]
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub struct gj_dynamic_dim {
    pub input: i32,
    pub dim: i32,
    pub min: i64,
    pub max: i64,
}

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_function_options {
    pub struct_size: usize,
    pub name: *const c_char,
    pub recompile_limit: i32,
    pub dynamic: gj_dynamic_mode,
    /// Since 0.3.
    pub mark_dynamic: *const gj_dynamic_dim,
    pub num_mark_dynamic: usize,
    /// Since 0.8: nonzero makes a graph break UNIMPLEMENTED.
    pub fullgraph: i32,
    /// Since 0.8.
    pub mode: gj_function_mode,
    /// Since 0.8: CUDA graphs per cache entry in reduce-overhead mode;
    /// 0 = 8.
    pub max_graphs_per_entry: i32,
    /// Since 0.8.
    pub compile: gj_compile_mode,
    /// Since 0.9: the byte distance between `mark_dynamic` elements (the
    /// caller's `size_of::<gj_dynamic_dim>()`); 0 = 24, the 0.3 size.
    pub mark_dynamic_stride: usize,
}

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_call_options {
    pub struct_size: usize,
    pub grad_mode: i32,
    pub deterministic: i32,
    /// Since 0.2.
    pub requires_grad: *const u8,
    /// Since 0.5: read with relaxed atomic loads while the call runs.
    pub cancel: *const i32,
    /// Since 0.5.
    pub timeout_us: i64,
    /// Since 0.7: the `CUstream` a call on CUDA tensors is enqueued on;
    /// null = the legacy default stream.
    pub stream: *mut c_void,
    /// Since 0.7: nonzero makes a CUDA call wait for its stream.
    pub synchronize: i32,
}

/// `gj_log_callback` (since 0.5).
pub type gj_log_callback = Option<
    unsafe extern "C" fn(user_data: *mut c_void, topic: *const c_char, message: *const c_char),
>;

/// Since 0.2.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_function_stats {
    pub struct_size: usize,
    pub calls: i64,
    pub hits: i64,
    pub misses: i64,
    pub compiles: i64,
    pub recompiles: i64,
    pub fallback_calls: i64,
    pub cache_entries: i64,
    pub compile_ms_total: f64,
    pub guard_ns_mean: f64,
    /// Since 0.8: graphs (segments) reached, and the breaks between them.
    pub graph_count: i64,
    pub graph_break_count: i64,
    /// Since 0.8: reduce-overhead mode's CUDA graphs, over all entries.
    pub cuda_graphs_recorded: i64,
    pub cuda_graph_replays: i64,
    pub cuda_graph_pointer_updates: i64,
    pub cuda_graph_recaptures: i64,
    pub cuda_graph_evictions: i64,
    pub cuda_graph_pool_bytes: i64,
    /// Since 0.8: calls run eagerly while their entry compiled in the
    /// background (`GJ_COMPILE_ASYNC`).
    pub eager_while_compiling: i64,
    /// Since 0.11: entries whose code all came from the compile cache.
    pub entries_loaded: i64,
}

/// Since 0.6.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_compile_report_options {
    pub struct_size: usize,
    pub target: *const c_char,
    pub emulate: i32,
    pub seed: u64,
}

/// Since 0.6.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gj_compile_check {
    pub struct_size: usize,
    pub checked: i32,
    pub run_code: gj_error_code,
    pub max_abs_error: f64,
    pub within_tolerance: i32,
}

extern "C" {
    // Version
    pub fn gj_version() -> *const c_char;
    pub fn gj_api_version() -> u32;

    // Errors
    pub fn gj_error_get_code(error: *const gj_error) -> gj_error_code;
    pub fn gj_error_message(error: *const gj_error) -> *const c_char;
    pub fn gj_error_destroy(error: *mut gj_error);
    pub fn gj_string_destroy(text: *mut c_char);

    // Context

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_context_options_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_context_options_init_v")]
    pub fn gj_context_options_init(options: *mut gj_context_options);
    pub fn gj_context_options_init_v(options: *mut gj_context_options, struct_size: usize);
    pub fn gj_context_create(
        options: *const gj_context_options,
        out_context: *mut *mut gj_context,
    ) -> *mut gj_error;
    pub fn gj_context_destroy(context: *mut gj_context);

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_memory_stats_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_memory_stats_init_v")]
    pub fn gj_memory_stats_init(stats: *mut gj_memory_stats);
    pub fn gj_memory_stats_init_v(stats: *mut gj_memory_stats, struct_size: usize);
    pub fn gj_context_get_memory_stats(
        context: *const gj_context,
        stats: *mut gj_memory_stats,
    ) -> *mut gj_error;
    pub fn gj_context_release_cached_memory(context: *mut gj_context) -> *mut gj_error;
    /// Since 0.10: `{kDLCPU, 0}` is the context's host memory; `{kDLCUDA, i}`
    /// device i's caching allocator (shared by every context).
    pub fn gj_context_get_device_memory_stats(
        context: *const gj_context,
        device: DLDevice,
        stats: *mut gj_memory_stats,
    ) -> *mut gj_error;
    /// Since 0.10.
    pub fn gj_context_release_cached_device_memory(
        context: *mut gj_context,
        device: DLDevice,
    ) -> *mut gj_error;

    // Compile cache (since 0.11; the header's `gj_*_init` for these two
    // structs are `static inline` calls of `_init_v`, with no symbol)
    pub fn gj_compile_cache_stats_init_v(stats: *mut gj_compile_cache_stats, struct_size: usize);
    pub fn gj_context_get_compile_cache_stats(
        context: *const gj_context,
        stats: *mut gj_compile_cache_stats,
    ) -> *mut gj_error;
    pub fn gj_cache_dir_stats_init_v(stats: *mut gj_cache_dir_stats, struct_size: usize);
    /// `key` may be NULL; `stats` and `out_report` are optional.
    pub fn gj_cache_dir_inspect(
        dir: *const c_char,
        key: *const c_char,
        verify: i32,
        remove_bad: i32,
        stats: *mut gj_cache_dir_stats,
        out_report: *mut *mut c_char,
    ) -> *mut gj_error;
    pub fn gj_cache_dir_clear(dir: *const c_char, out_removed: *mut i64) -> *mut gj_error;

    // Graphs

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_graph_load_options_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_graph_load_options_init_v")]
    pub fn gj_graph_load_options_init(options: *mut gj_graph_load_options);
    pub fn gj_graph_load_options_init_v(options: *mut gj_graph_load_options, struct_size: usize);
    pub fn gj_graph_from_proto(
        context: *mut gj_context,
        data: *const c_void,
        size: usize,
        options: *const gj_graph_load_options,
        out_graph: *mut *mut gj_graph,
    ) -> *mut gj_error;
    pub fn gj_graph_from_text(
        context: *mut gj_context,
        text: *const c_char,
        size: usize,
        options: *const gj_graph_load_options,
        out_graph: *mut *mut gj_graph,
    ) -> *mut gj_error;
    pub fn gj_graph_from_file(
        context: *mut gj_context,
        path: *const c_char,
        options: *const gj_graph_load_options,
        out_graph: *mut *mut gj_graph,
    ) -> *mut gj_error;
    pub fn gj_graph_destroy(graph: *mut gj_graph);
    pub fn gj_graph_num_inputs(graph: *const gj_graph) -> usize;
    pub fn gj_graph_num_outputs(graph: *const gj_graph) -> usize;
    pub fn gj_graph_input_name(graph: *const gj_graph, index: usize) -> *const c_char;
    pub fn gj_graph_output_name(graph: *const gj_graph, index: usize) -> *const c_char;
    // Since 0.12: declared input/output metadata.
    pub fn gj_graph_input_dtype(graph: *const gj_graph, index: usize) -> gj_dtype;
    pub fn gj_graph_input_rank(graph: *const gj_graph, index: usize) -> i64;
    pub fn gj_graph_input_dim(graph: *const gj_graph, index: usize, dim: usize) -> i64;
    pub fn gj_graph_input_dim_symbol(
        graph: *const gj_graph,
        index: usize,
        dim: usize,
    ) -> *const c_char;
    pub fn gj_graph_output_dtype(graph: *const gj_graph, index: usize) -> gj_dtype;
    pub fn gj_graph_output_rank(graph: *const gj_graph, index: usize) -> i64;
    pub fn gj_graph_output_dim(graph: *const gj_graph, index: usize, dim: usize) -> i64;
    pub fn gj_graph_output_dim_symbol(
        graph: *const gj_graph,
        index: usize,
        dim: usize,
    ) -> *const c_char;
    pub fn gj_graph_to_tabular(graph: *const gj_graph, out_text: *mut *mut c_char)
        -> *mut gj_error;

    // Graph builder
    pub fn gj_graph_builder_create(
        context: *mut gj_context,
        name: *const c_char,
        out_builder: *mut *mut gj_graph_builder,
    ) -> *mut gj_error;
    pub fn gj_graph_builder_destroy(builder: *mut gj_graph_builder);
    pub fn gj_graph_builder_add_input(
        builder: *mut gj_graph_builder,
        name: *const c_char,
    ) -> *mut gj_error;
    pub fn gj_graph_builder_add_constant(
        builder: *mut gj_graph_builder,
        name: *const c_char,
        value: *const DLTensor,
    ) -> *mut gj_error;
    pub fn gj_graph_builder_add_node(
        builder: *mut gj_graph_builder,
        name: *const c_char,
        target: *const c_char,
        args: *const gj_arg,
        num_args: usize,
    ) -> *mut gj_error;
    /// Since 0.9: `args` elements are `arg_size` bytes apart (the caller's
    /// `size_of::<gj_arg>()`).
    pub fn gj_graph_builder_add_node_v(
        builder: *mut gj_graph_builder,
        name: *const c_char,
        target: *const c_char,
        args: *const gj_arg,
        num_args: usize,
        arg_size: usize,
    ) -> *mut gj_error;
    pub fn gj_graph_builder_set_outputs(
        builder: *mut gj_graph_builder,
        names: *const *const c_char,
        num_outputs: usize,
    ) -> *mut gj_error;
    pub fn gj_graph_builder_finish(
        builder: *mut gj_graph_builder,
        out_graph: *mut *mut gj_graph,
    ) -> *mut gj_error;

    // Functions

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_function_options_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_function_options_init_v")]
    pub fn gj_function_options_init(options: *mut gj_function_options);
    pub fn gj_function_options_init_v(options: *mut gj_function_options, struct_size: usize);
    pub fn gj_function_create(
        context: *mut gj_context,
        graph: *const gj_graph,
        options: *const gj_function_options,
        out_function: *mut *mut gj_function,
    ) -> *mut gj_error;
    pub fn gj_function_destroy(function: *mut gj_function);
    pub fn gj_function_num_inputs(function: *const gj_function) -> usize;
    pub fn gj_function_num_outputs(function: *const gj_function) -> usize;

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_call_options_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_call_options_init_v")]
    pub fn gj_call_options_init(options: *mut gj_call_options);
    pub fn gj_call_options_init_v(options: *mut gj_call_options, struct_size: usize);
    pub fn gj_function_call(
        function: *mut gj_function,
        inputs: *const *const DLTensor,
        num_inputs: usize,
        outputs: *const *const DLTensor,
        num_outputs: usize,
        options: *const gj_call_options,
    ) -> *mut gj_error;
    pub fn gj_function_call_alloc(
        function: *mut gj_function,
        inputs: *const *const DLTensor,
        num_inputs: usize,
        options: *const gj_call_options,
        out_outputs: *mut *mut DLManagedTensor,
        num_outputs: usize,
    ) -> *mut gj_error;
    pub fn gj_function_precompile(
        function: *mut gj_function,
        inputs: *const *const DLTensor,
        num_inputs: usize,
        options: *const gj_call_options,
    ) -> *mut gj_error;

    // Logging
    pub fn gj_set_log_callback(callback: gj_log_callback, user_data: *mut c_void);
    pub fn gj_set_log_topics(spec: *const c_char);

    // Introspection

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_function_stats_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_function_stats_init_v")]
    pub fn gj_function_stats_init(stats: *mut gj_function_stats);
    pub fn gj_function_stats_init_v(stats: *mut gj_function_stats, struct_size: usize);
    pub fn gj_function_get_stats(
        function: *const gj_function,
        stats: *mut gj_function_stats,
    ) -> *mut gj_error;
    pub fn gj_function_explain(
        function: *const gj_function,
        out_text: *mut *mut c_char,
    ) -> *mut gj_error;
    pub fn gj_function_dump_guards(
        function: *const gj_function,
        out_text: *mut *mut c_char,
    ) -> *mut gj_error;
    pub fn gj_tensor_release(tensor: *mut DLManagedTensor);

    // Compile reports

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_compile_report_options_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(
        note = "fills only the struct's first release; use gj_compile_report_options_init_v"
    )]
    pub fn gj_compile_report_options_init(options: *mut gj_compile_report_options);
    pub fn gj_compile_report_options_init_v(
        options: *mut gj_compile_report_options,
        struct_size: usize,
    );

    /// The legacy symbol for hosts built against C headers up to 0.10: fills
    /// only the struct's first release. Call `gj_compile_check_init_v(&mut s, size_of_val(&s))`.
    #[deprecated(note = "fills only the struct's first release; use gj_compile_check_init_v")]
    pub fn gj_compile_check_init(check: *mut gj_compile_check);
    pub fn gj_compile_check_init_v(check: *mut gj_compile_check, struct_size: usize);
    pub fn gj_graph_compile_report(
        graph: *const gj_graph,
        inputs: *const *const DLTensor,
        num_inputs: usize,
        options: *const gj_compile_report_options,
        out_text: *mut *mut c_char,
        out_check: *mut gj_compile_check,
    ) -> *mut gj_error;

    // Ops (since 0.7)
    pub fn gj_list_ops(out_json: *mut *mut c_char) -> *mut gj_error;
}

// ------------------------------------------------------------------------
// Argument helpers for the builder (the header's static inline functions)

const fn arg(kind: gj_arg_kind) -> gj_arg {
    gj_arg {
        kind,
        name: core::ptr::null(),
        i: 0,
        f: 0.0,
        str: core::ptr::null(),
        dtype: GJ_DTYPE_FLOAT32,
        ints: core::ptr::null(),
        floats: core::ptr::null(),
        refs: core::ptr::null(),
        len: 0,
    }
}

pub const fn gj_arg_ref(name: *const c_char) -> gj_arg {
    gj_arg {
        str: name,
        ..arg(GJ_ARG_REF)
    }
}
pub const fn gj_arg_int(v: i64) -> gj_arg {
    gj_arg {
        i: v,
        ..arg(GJ_ARG_INT)
    }
}
pub const fn gj_arg_float(v: f64) -> gj_arg {
    gj_arg {
        f: v,
        ..arg(GJ_ARG_FLOAT)
    }
}
pub const fn gj_arg_bool(v: c_int) -> gj_arg {
    gj_arg {
        i: (v != 0) as i64,
        ..arg(GJ_ARG_BOOL)
    }
}
pub const fn gj_arg_string(s: *const c_char) -> gj_arg {
    gj_arg {
        str: s,
        ..arg(GJ_ARG_STRING)
    }
}
pub const fn gj_arg_ints(v: *const i64, n: usize) -> gj_arg {
    gj_arg {
        ints: v,
        len: n,
        ..arg(GJ_ARG_INT_LIST)
    }
}
pub const fn gj_arg_refs(v: *const *const c_char, n: usize) -> gj_arg {
    gj_arg {
        refs: v,
        len: n,
        ..arg(GJ_ARG_REF_LIST)
    }
}
pub const fn gj_arg_dtype(d: gj_dtype) -> gj_arg {
    gj_arg {
        dtype: d,
        ..arg(GJ_ARG_DTYPE)
    }
}
pub const fn gj_arg_none() -> gj_arg {
    arg(GJ_ARG_NONE)
}
/// Makes `a` a keyword argument: `gj_kwarg(c"alpha".as_ptr(), gj_arg_int(2))`.
pub const fn gj_kwarg(name: *const c_char, a: gj_arg) -> gj_arg {
    gj_arg { name, ..a }
}
