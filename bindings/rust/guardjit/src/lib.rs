//! Safe Rust API for guardjit, an embeddable JIT for tensor graphs with a
//! guard cache (TorchDynamo's model), over its C ABI (`guardjit.h`, C API
//! 0.12; raw declarations in the `guardjit-sys` crate).
//!
//! ```no_run
//! # fn main() -> guardjit::Result<()> {
//! use guardjit::{Context, Function, Graph, TensorView};
//! let ctx = Context::new()?;
//! let graph = Graph::from_file(&ctx, "examples/seed_mul.pbtxt")?;
//! let f = Function::new(&graph)?;
//! let x = [1.0f32, 2.0, 3.0];
//! let b = [4.0f32, 5.0, 6.0];
//! let out = f.call_alloc(&[TensorView::new(&x, &[3])?, TensorView::new(&b, &[3])?])?;
//! assert_eq!(out[0].as_slice::<f32>()?, &[4.0, 10.0, 18.0]);
//! # Ok(()) }
//! ```
//!
//! Ownership: every handle frees itself on drop. [`Graph`], [`GraphBuilder`]
//! and [`Function`] hold a clone of their [`Context`], so the context is
//! destroyed after them; a [`Tensor`] (a library-allocated output) may
//! outlive everything. Thread safety follows the header: every handle is
//! `Send`; `Context`, `Graph` and `Function` are `Sync` (see each type's
//! notes), and concurrent calls on one `Function` go through `&self`.
//!
//! The header allows concurrency only where it says so, and the types
//! enforce it. A builder cannot be shared between threads:
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>() {}
//! shared::<guardjit::GraphBuilder>();
//! ```
//!
//! while a shared `Function` calls, precompiles, reads its stats and explains
//! itself from any thread, as the header allows (a server holding an
//! `Arc<Function>` reads the stats while other threads call it):
//!
//! ```
//! fn calls_so_far(f: &std::sync::Arc<guardjit::Function>) -> guardjit::Result<i64> {
//!     Ok(f.stats()?.calls)
//! }
//! ```
//!
//! A view cannot outlive the slice it borrows:
//!
//! ```compile_fail,E0597
//! let view = {
//!     let data = vec![1.0f32; 4];
//!     guardjit::TensorView::new(&data, &[4]).unwrap()
//! };
//! let _ = view;
//! ```

mod builder;
mod compile_cache;
mod context;
mod dtype;
mod error;
mod function;
mod graph;
mod log;
mod tensor;
mod versioned;

pub use builder::{Arg, ArgValue, GraphBuilder};
pub use compile_cache::{clear_cache_dir, inspect_cache_dir, CacheDirStats, CompileCacheStats};
pub use context::{Backend, Context, ContextOptions, Device, MemoryStats};
pub use dtype::{DType, Element, BF16, F16};
pub use error::{Error, ErrorCode, Result};
pub use function::{
    CallOptions, CompileMode, DynamicMode, Function, FunctionMode, FunctionOptions, FunctionStats,
};
pub use graph::{
    CompileCheck, CompileReport, CompileReportOptions, Dim, Graph, LoadOptions, TensorInfo,
};
pub use log::{clear_log_handler, set_log_handler, set_log_topics};
pub use tensor::{Tensor, TensorSpec, TensorView, TensorViewMut};

/// The raw declarations, for what the safe API does not cover.
pub use guardjit_sys as sys;

use std::ffi::{c_char, CStr, CString};

/// "MAJOR.MINOR.PATCH" of the loaded library.
pub fn version() -> &'static str {
    // SAFETY: static storage, NUL-terminated.
    unsafe { CStr::from_ptr(sys::gj_version()) }
        .to_str()
        .unwrap_or("?")
}

/// (major, minor) C API version of the loaded library.
pub fn api_version() -> (u16, u16) {
    // SAFETY: no arguments.
    let v = unsafe { sys::gj_api_version() };
    ((v >> 16) as u16, (v & 0xffff) as u16)
}

/// Every op the library knows, as the JSON `guardjit ops` prints:
/// `{"ops": [{"target": "aten.add.Tensor", "schema": ..., "reference_kernel":
/// true, "cpu_lowering": true, "extern_step": false, "cuda_lowering": true},
/// ...]}`, sorted by target (`gj_list_ops`).
pub fn list_ops() -> Result<String> {
    let mut json = std::ptr::null_mut();
    // SAFETY: json is a valid out-pointer; on success it owns a library
    // string, which take_string frees.
    unsafe {
        error::check(sys::gj_list_ops(&mut json))?;
        Ok(take_string(json))
    }
}

/// A C string, or `InvalidArgument` naming `what` for an interior NUL.
pub(crate) fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::invalid_argument(format!("{what}: {s:?} contains a NUL byte")))
}

/// Copies a library-allocated string and frees it (`gj_string_destroy`).
///
/// # Safety
/// `text` is NULL or a string the library allocated, owned by the caller.
pub(crate) unsafe fn take_string(text: *mut c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: per the caller; freed once, after the copy.
    unsafe {
        let s = CStr::from_ptr(text).to_string_lossy().into_owned();
        sys::gj_string_destroy(text);
        s
    }
}
