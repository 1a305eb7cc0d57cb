//! `Graph`: an immutable, validated graph, loaded from protobuf (text or
//! binary) or made with a [`GraphBuilder`](crate::GraphBuilder).

use crate::context::Context;
use crate::dtype::DType;
use crate::error::{check, Error, ErrorCode, Result};
use crate::tensor::{with_dl_array, TensorSpec};
use crate::{c_string, take_string, versioned};
use guardjit_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

/// `gj_graph_load_options`.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    external_data_dir: Option<PathBuf>,
}

impl LoadOptions {
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }

    /// Directory that relative ExternalData paths resolve against (default:
    /// the current directory; for `from_file`, the file's directory).
    pub fn external_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.external_data_dir = Some(dir.into());
        self
    }

    /// Calls `f` with the raw options (NULL for defaults).
    fn with_raw<R>(
        &self,
        f: impl FnOnce(*const sys::gj_graph_load_options) -> Result<R>,
    ) -> Result<R> {
        let Some(dir) = &self.external_data_dir else {
            return f(ptr::null());
        };
        let dir = path_c_string("LoadOptions::external_data_dir", dir)?;
        let mut raw: sys::gj_graph_load_options = versioned::init();
        raw.external_data_dir = dir.as_ptr();
        f(&raw)
    }
}

pub(crate) fn path_c_string(what: &str, path: &Path) -> Result<CString> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path
        .to_str()
        .ok_or_else(|| Error::invalid_argument(format!("{what}: path {path:?} is not UTF-8")))?
        .as_bytes()
        .to_vec();
    CString::new(bytes)
        .map_err(|_| Error::invalid_argument(format!("{what}: path {path:?} contains a NUL byte")))
}

/// Options of [`Graph::compile_report`] (`gj_compile_report_options`).
#[derive(Debug, Clone, Default)]
pub struct CompileReportOptions {
    target: Option<String>,
    emulate: bool,
    seed: u64,
}

impl CompileReportOptions {
    pub fn new() -> CompileReportOptions {
        CompileReportOptions::default()
    }

    /// `"cpu"` (the default) or a CUDA target: `"cuda:sm_90"`, `"sm_90"`.
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// Also run the graph through the target's kernels on random inputs and
    /// compare every output with the eager interpreter.
    pub fn emulate(mut self, emulate: bool) -> Self {
        self.emulate = emulate;
        self
    }

    /// Seed of the random inputs (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// What [`Graph::compile_report`] returns.
#[derive(Debug, Clone)]
pub struct CompileReport {
    /// The report for people: specialized graph, fusion plan, kernels.
    pub text: String,
    /// The emulated run's comparison with eager (`None` without
    /// `emulate`).
    pub check: Option<CompileCheck>,
}

/// `gj_compile_check`: how the target's run compared with eager.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompileCheck {
    /// `None` when the run succeeded, else why it failed (the report's text
    /// has the message).
    pub run_error: Option<ErrorCode>,
    /// Largest |target - eager| over every output element.
    pub max_abs_error: f64,
    /// Every element within its dtype's tolerance (false if the run failed).
    pub within_tolerance: bool,
}

/// An immutable graph; functions made from it keep their own reference, so
/// it may be dropped while they live.
pub struct Graph {
    raw: NonNull<sys::gj_graph>,
    context: Context,
}

// SAFETY: guardjit.h: "handles may be used from any thread".
unsafe impl Send for Graph {}
// SAFETY: guardjit.h: "Graphs: immutable once loaded; may be shared by
// several functions"; gj_graph_compile_report is marked "Thread-safe", and
// the other calls on a graph only read it.
unsafe impl Sync for Graph {}

impl Graph {
    /// Reads a file: protobuf text format if it ends in `.pbtxt` or `.txt`,
    /// binary otherwise.
    pub fn from_file(context: &Context, path: impl AsRef<Path>) -> Result<Graph> {
        Graph::from_file_with(context, path, &LoadOptions::default())
    }

    pub fn from_file_with(
        context: &Context,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Graph> {
        let path = path_c_string("Graph::from_file", path.as_ref())?;
        options.with_raw(|opts| {
            // SAFETY: live context, NUL-terminated path, options NULL or
            // initialized; all read during the call only.
            Graph::load(context, |out| unsafe {
                sys::gj_graph_from_file(context.as_ptr(), path.as_ptr(), opts, out)
            })
        })
    }

    /// A graph from protobuf text format (`guardjit.proto.Graph`).
    pub fn from_text(context: &Context, text: &str) -> Result<Graph> {
        Graph::from_text_with(context, text, &LoadOptions::default())
    }

    pub fn from_text_with(context: &Context, text: &str, options: &LoadOptions) -> Result<Graph> {
        options.with_raw(|opts| {
            // SAFETY: text and its size; the library copies what it keeps.
            Graph::load(context, |out| unsafe {
                sys::gj_graph_from_text(
                    context.as_ptr(),
                    text.as_ptr().cast(),
                    text.len(),
                    opts,
                    out,
                )
            })
        })
    }

    /// A graph from a serialized (binary) `guardjit.proto.Graph`.
    pub fn from_bytes(context: &Context, bytes: &[u8]) -> Result<Graph> {
        Graph::from_bytes_with(context, bytes, &LoadOptions::default())
    }

    pub fn from_bytes_with(
        context: &Context,
        bytes: &[u8],
        options: &LoadOptions,
    ) -> Result<Graph> {
        options.with_raw(|opts| {
            // SAFETY: bytes and their size; "The bytes are copied."
            Graph::load(context, |out| unsafe {
                sys::gj_graph_from_proto(
                    context.as_ptr(),
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    opts,
                    out,
                )
            })
        })
    }

    fn load(
        context: &Context,
        f: impl FnOnce(*mut *mut sys::gj_graph) -> *mut sys::gj_error,
    ) -> Result<Graph> {
        let mut raw = ptr::null_mut();
        // SAFETY: f's call returns NULL or an owned error.
        unsafe { check(f(&mut raw))? };
        // SAFETY: the library is the caller's; f made a graph.
        unsafe { Ok(Graph::from_raw(raw, context.clone())) }
    }

    /// Takes ownership of a graph made from `context`.
    ///
    /// # Safety
    /// `raw` is a non-NULL graph the caller owns, made from `context`.
    pub(crate) unsafe fn from_raw(raw: *mut sys::gj_graph, context: Context) -> Graph {
        Graph {
            raw: NonNull::new(raw).expect("a successful load returns a graph"),
            context,
        }
    }

    pub fn as_ptr(&self) -> *const sys::gj_graph {
        self.raw.as_ptr()
    }

    /// The context the graph was made from.
    pub fn context(&self) -> &Context {
        &self.context
    }

    pub fn num_inputs(&self) -> usize {
        // SAFETY: a live graph.
        unsafe { sys::gj_graph_num_inputs(self.as_ptr()) }
    }

    pub fn num_outputs(&self) -> usize {
        // SAFETY: a live graph.
        unsafe { sys::gj_graph_num_outputs(self.as_ptr()) }
    }

    fn name(p: *const std::ffi::c_char) -> Option<&'static str> {
        // SAFETY: NULL or a NUL-terminated name (callers shorten the
        // lifetime to the graph's).
        (!p.is_null())
            .then(|| unsafe { CStr::from_ptr(p) }.to_str().ok())
            .flatten()
    }

    /// Name of input `index` (None if out of range, or not UTF-8).
    pub fn input_name(&self, index: usize) -> Option<&str> {
        // SAFETY: a live graph; the name "lives as long as the graph".
        Graph::name(unsafe { sys::gj_graph_input_name(self.as_ptr(), index) })
    }

    /// Name of the value output `index` returns (its node's name, or
    /// `"node[k]"` for element k of a multi-output node).
    pub fn output_name(&self, index: usize) -> Option<&str> {
        // SAFETY: as input_name.
        Graph::name(unsafe { sys::gj_graph_output_name(self.as_ptr(), index) })
    }

    pub fn input_names(&self) -> Vec<&str> {
        (0..self.num_inputs())
            .filter_map(|i| self.input_name(i))
            .collect()
    }

    pub fn output_names(&self) -> Vec<&str> {
        (0..self.num_outputs())
            .filter_map(|i| self.output_name(i))
            .collect()
    }

    /// What the graph declares of each input (C API 0.12), in call order.
    pub fn inputs(&self) -> Vec<TensorInfo> {
        (0..self.num_inputs()).map(|i| self.info(i, true)).collect()
    }

    /// What the graph declares of each output.
    pub fn outputs(&self) -> Vec<TensorInfo> {
        (0..self.num_outputs())
            .map(|i| self.info(i, false))
            .collect()
    }

    fn info(&self, i: usize, input: bool) -> TensorInfo {
        let g = self.as_ptr();
        // SAFETY: a live graph, i in range; names and symbols live as long
        // as the graph and are copied here.
        unsafe {
            let (name, raw, rank) = if input {
                (
                    self.input_name(i),
                    sys::gj_graph_input_dtype(g, i),
                    sys::gj_graph_input_rank(g, i),
                )
            } else {
                (
                    self.output_name(i),
                    sys::gj_graph_output_dtype(g, i),
                    sys::gj_graph_output_rank(g, i),
                )
            };
            let dims = (rank >= 0).then(|| {
                (0..rank as usize)
                    .map(|k| {
                        let (size, symbol) = if input {
                            (
                                sys::gj_graph_input_dim(g, i, k),
                                sys::gj_graph_input_dim_symbol(g, i, k),
                            )
                        } else {
                            (
                                sys::gj_graph_output_dim(g, i, k),
                                sys::gj_graph_output_dim_symbol(g, i, k),
                            )
                        };
                        if size >= 0 {
                            Dim::Static(size)
                        } else {
                            Dim::Dynamic(
                                Graph::name(symbol)
                                    .filter(|s| !s.is_empty())
                                    .map(str::to_owned),
                            )
                        }
                    })
                    .collect()
            });
            TensorInfo {
                name: name.unwrap_or_default().to_owned(),
                dtype: DType::ALL.into_iter().find(|d| d.to_raw() == raw),
                dims,
            }
        }
    }

    /// The graph as torch.fx's `print_tabular` shows it.
    pub fn to_tabular(&self) -> Result<String> {
        let mut text = ptr::null_mut();
        // SAFETY: a live graph; text is owned on success.
        unsafe {
            check(sys::gj_graph_to_tabular(self.as_ptr(), &mut text))?;
            Ok(take_string(text))
        }
    }

    /// What guardjit compiles the graph into for a target, given the
    /// inputs' dtypes and shapes (one spec per graph input), as text; with
    /// `emulate`, also the comparison against eager. Takes the compilers'
    /// time (0.1 s to seconds).
    pub fn compile_report(
        &self,
        inputs: &[TensorSpec<'_>],
        options: &CompileReportOptions,
    ) -> Result<CompileReport> {
        let target = options
            .target
            .as_deref()
            .map(|t| c_string("CompileReportOptions::target", t))
            .transpose()?;
        let mut raw: sys::gj_compile_report_options = versioned::init();
        let mut check_raw: sys::gj_compile_check = versioned::init();
        raw.target = target.as_ref().map_or(ptr::null(), |t| t.as_ptr());
        raw.emulate = i32::from(options.emulate);
        raw.seed = options.seed;
        let mut text = ptr::null_mut();
        with_dl_array(inputs, |array| {
            // SAFETY: a live graph; inputs.len() specs; options and check
            // initialized; text owned on success.
            unsafe {
                check(sys::gj_graph_compile_report(
                    self.as_ptr(),
                    array,
                    inputs.len(),
                    &raw,
                    &mut text,
                    &mut check_raw,
                ))
            }
        })?;
        // SAFETY: text is the library's string, owned now.
        let text = unsafe { take_string(text) };
        let check = (check_raw.checked != 0).then(|| CompileCheck {
            run_error: ErrorCode::from_raw(check_raw.run_code),
            max_abs_error: check_raw.max_abs_error,
            within_tolerance: check_raw.within_tolerance != 0,
        });
        Ok(CompileReport { text, check })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: owned; functions made from it keep their own reference.
        unsafe { sys::gj_graph_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("inputs", &self.input_names())
            .field("outputs", &self.output_names())
            .finish()
    }
}

/// One dim a graph declares: a static size, or a dynamic one with the name
/// of its symbol (`"batch"`; dims sharing a symbol have equal sizes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    Static(i64),
    Dynamic(Option<String>),
}

/// What a graph declares of an input or output (C API 0.12): the dtype and
/// shape its exporter saw. `None` where it declares nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: Option<DType>,
    pub dims: Option<Vec<Dim>>,
}
