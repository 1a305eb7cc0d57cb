//! `Function`: a graph plus its guard cache of compiled entries, and the
//! calls.

use crate::context::Context;
use crate::error::{check, Error, Result};
use crate::graph::Graph;
use crate::tensor::{with_dl_array, Tensor, TensorSpec, TensorView, TensorViewMut};
use crate::{c_string, take_string, versioned};
use guardjit_sys as sys;
use std::ffi::{c_void, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::ptr::{self, NonNull};
use std::sync::atomic::AtomicI32;
use std::sync::OnceLock;
use std::time::Duration;

/// How sizes are specialized (`gj_dynamic_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DynamicMode {
    /// Static first; sizes that change become symbolic (automatic dynamic).
    #[default]
    Auto,
    /// Every size specialized.
    Static,
    /// Every size symbolic from the first compile.
    Dynamic,
}

impl DynamicMode {
    fn to_raw(self) -> sys::gj_dynamic_mode {
        match self {
            DynamicMode::Auto => sys::GJ_DYNAMIC_AUTO,
            DynamicMode::Static => sys::GJ_DYNAMIC_STATIC,
            DynamicMode::Dynamic => sys::GJ_DYNAMIC_DYNAMIC,
        }
    }
}

/// How a function runs its CUDA calls (`gj_function_mode`, since C API
/// 0.8); CPU calls ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FunctionMode {
    /// Plain kernel launches.
    #[default]
    Default,
    /// torch.compile's `mode="reduce-overhead"`: each CUDA cache entry
    /// records a CUDA graph per size key on its second call and replays it
    /// afterwards, patching new input and output addresses into the
    /// captured kernels.
    ReduceOverhead,
}

impl FunctionMode {
    fn to_raw(self) -> sys::gj_function_mode {
        match self {
            FunctionMode::Default => sys::GJ_MODE_DEFAULT,
            FunctionMode::ReduceOverhead => sys::GJ_MODE_REDUCE_OVERHEAD,
        }
    }
}

/// When a cache miss compiles (`gj_compile_mode`, since C API 0.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompileMode {
    /// The missing call compiles its entry, then runs it.
    #[default]
    Sync,
    /// The missing call runs on the eager interpreter at once while its
    /// entry compiles on the context's background thread; later calls use
    /// the entry once it is published (no compile stall on a new shape).
    Async,
}

impl CompileMode {
    fn to_raw(self) -> sys::gj_compile_mode {
        match self {
            CompileMode::Sync => sys::GJ_COMPILE_SYNC,
            CompileMode::Async => sys::GJ_COMPILE_ASYNC,
        }
    }
}

/// `gj_function_options`; unset fields keep the library's defaults
/// (`gj_function_options_init`).
#[derive(Debug, Clone, Default)]
pub struct FunctionOptions {
    name: Option<String>,
    recompile_limit: Option<i32>,
    dynamic: Option<DynamicMode>,
    mark_dynamic: Vec<sys::gj_dynamic_dim>,
    fullgraph: bool,
    mode: FunctionMode,
    max_graphs_per_entry: Option<i32>,
    compile: CompileMode,
}

impl FunctionOptions {
    pub fn new() -> FunctionOptions {
        FunctionOptions::default()
    }

    /// For logs and explain (default: the graph's name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Cache entries before the function runs only what it has (default 8).
    pub fn recompile_limit(mut self, limit: i32) -> Self {
        self.recompile_limit = Some(limit);
        self
    }

    pub fn dynamic(mut self, mode: DynamicMode) -> Self {
        self.dynamic = Some(mode);
        self
    }

    /// torch's `mark_dynamic(input, dim, min, max)`: the dim is symbolic from
    /// the first compile and a size outside `sizes` fails the entry's guards.
    /// An unbounded start is 2 and an unbounded end `i64::MAX` (`..` is "any
    /// size"; sizes 0 and 1 are always specialized). Ignored with
    /// [`DynamicMode::Static`].
    pub fn mark_dynamic(mut self, input: usize, dim: usize, sizes: impl RangeBounds<i64>) -> Self {
        let min = match sizes.start_bound() {
            Bound::Included(&v) => v,
            Bound::Excluded(&v) => v.saturating_add(1),
            Bound::Unbounded => 2,
        };
        let max = match sizes.end_bound() {
            Bound::Included(&v) => v,
            Bound::Excluded(&v) => v.saturating_sub(1),
            Bound::Unbounded => i64::MAX,
        };
        // An index past i32 stays invalid, for the library to name.
        let input = i32::try_from(input).unwrap_or(i32::MAX);
        let dim = i32::try_from(dim).unwrap_or(i32::MAX);
        self.mark_dynamic.push(sys::gj_dynamic_dim {
            input,
            dim,
            min,
            max,
        });
        self
    }

    /// torch.compile's `fullgraph=True`: a graph break (a cond whose
    /// predicate reads tensor values, an op whose output size depends on
    /// values) fails the call with `Unimplemented` naming the node, instead
    /// of splitting the graph into segments (the default).
    pub fn fullgraph(mut self, enabled: bool) -> Self {
        self.fullgraph = enabled;
        self
    }

    pub fn mode(mut self, mode: FunctionMode) -> Self {
        self.mode = mode;
        self
    }

    /// CUDA graphs kept per cache entry in [`FunctionMode::ReduceOverhead`]
    /// (one per size key; past it the least recently used is evicted).
    /// Default 8; 0 also means the default.
    pub fn max_graphs_per_entry(mut self, n: u32) -> Self {
        self.max_graphs_per_entry = Some(i32::try_from(n).unwrap_or(i32::MAX));
        self
    }

    pub fn compile(mut self, mode: CompileMode) -> Self {
        self.compile = mode;
        self
    }
}

/// The library's call defaults, computed once (CallOptions are made per
/// call).
fn call_option_defaults() -> sys::gj_call_options {
    struct Defaults(sys::gj_call_options);
    // SAFETY: the defaults' pointers are NULL.
    unsafe impl Send for Defaults {}
    // SAFETY: as above; never written after initialization.
    unsafe impl Sync for Defaults {}
    static DEFAULTS: OnceLock<Defaults> = OnceLock::new();
    DEFAULTS.get_or_init(|| Defaults(versioned::init())).0
}

/// Per-call options (`gj_call_options`), borrowing the cancel flag and the
/// requires-grad flags for the call, and holding the CUDA stream (if any).
#[derive(Clone, Copy)]
pub struct CallOptions<'a> {
    raw: sys::gj_call_options,
    requires_grad_len: Option<usize>,
    _borrow: PhantomData<(&'a [bool], &'a AtomicI32)>,
}

// SAFETY: the raw pointers are shared borrows of &'a [bool] and
// &'a AtomicI32, both Sync, and a CUstream, a driver handle any thread may
// use.
unsafe impl Send for CallOptions<'_> {}
// SAFETY: as above.
unsafe impl Sync for CallOptions<'_> {}

impl<'a> CallOptions<'a> {
    pub fn new() -> CallOptions<'a> {
        CallOptions {
            raw: call_option_defaults(),
            requires_grad_len: None,
            _borrow: PhantomData,
        }
    }

    /// torch.is_grad_enabled() (default true); the cache guards on it.
    pub fn grad_mode(mut self, enabled: bool) -> Self {
        self.raw.grad_mode = enabled.into();
        self
    }

    /// torch.are_deterministic_algorithms_enabled() (default false).
    pub fn deterministic(mut self, enabled: bool) -> Self {
        self.raw.deterministic = enabled.into();
        self
    }

    /// Per input, whether the host's tensor requires grad; one flag per
    /// input of the call.
    pub fn requires_grad(mut self, flags: &'a [bool]) -> Self {
        // bool is one byte, 0 or 1: a valid uint8_t array.
        self.raw.requires_grad = flags.as_ptr().cast();
        self.requires_grad_len = Some(flags.len());
        self
    }

    /// A flag another thread may set nonzero to stop the call: it then
    /// returns `Cancelled` with no output written. Read with relaxed loads.
    pub fn cancel(mut self, flag: &'a AtomicI32) -> Self {
        // AtomicI32 has the size, alignment and bit validity of i32.
        self.raw.cancel = flag.as_ptr().cast_const();
        self
    }

    /// The call stops with `DeadlineExceeded` (no output written) once this
    /// much time has passed since it started. Rounded up to whole
    /// microseconds; `Duration::ZERO` is 1 µs (0 would mean no limit).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        let us = timeout.as_nanos().div_ceil(1000).max(1);
        self.raw.timeout_us = i64::try_from(us).unwrap_or(i64::MAX);
        self
    }

    /// The `CUstream` a call on CUDA tensors runs on (null, the default, is
    /// the legacy default stream): the call enqueues on the stream and
    /// returns; outputs are ready when the stream reaches them. Calls on CPU
    /// tensors, all that this crate's views hold today, ignore it.
    ///
    /// # Safety
    /// `stream` is null or a stream of the CUDA context the call's device
    /// runs in (its primary context), valid until the stream has run the
    /// call's work.
    pub unsafe fn stream(mut self, stream: *mut c_void) -> Self {
        self.raw.stream = stream;
        self
    }

    /// A call on CUDA tensors waits for its stream before returning and
    /// reports a device-side check that failed during the call (default
    /// false). Calls on CPU tensors ignore it.
    pub fn synchronize(mut self, enabled: bool) -> Self {
        self.raw.synchronize = enabled.into();
        self
    }

    fn check_inputs(&self, what: &str, num_inputs: usize) -> Result<()> {
        match self.requires_grad_len {
            Some(n) if n != num_inputs => Err(Error::invalid_argument(format!(
                "{what}: CallOptions::requires_grad has {n} flags for {num_inputs} inputs"
            ))),
            _ => Ok(()),
        }
    }
}

impl Default for CallOptions<'_> {
    fn default() -> Self {
        CallOptions::new()
    }
}

impl fmt::Debug for CallOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("grad_mode", &(self.raw.grad_mode != 0))
            .field("deterministic", &(self.raw.deterministic != 0))
            .field("requires_grad_len", &self.requires_grad_len)
            .field("cancel", &!self.raw.cancel.is_null())
            .field("timeout_us", &self.raw.timeout_us)
            .field("stream", &self.raw.stream)
            .field("synchronize", &(self.raw.synchronize != 0))
            .finish()
    }
}

/// What the guard cache did (`gj_function_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FunctionStats {
    pub calls: i64,
    pub hits: i64,
    pub misses: i64,
    pub compiles: i64,
    /// Compiles after the first.
    pub recompiles: i64,
    /// Eager runs past the recompile limit.
    pub fallback_calls: i64,
    pub cache_entries: i64,
    pub compile_ms_total: f64,
    /// Guard lookup on hits, sampled.
    pub guard_ns_mean: f64,
    /// Graphs (segments) reached so far: 1 for a function without graph
    /// breaks. With breaks, `compiles`, `misses`, `cache_entries` and
    /// `compile_ms_total` sum over the graphs and a hit is a call on which
    /// no graph missed.
    pub graph_count: i64,
    pub graph_break_count: i64,
    /// [`FunctionMode::ReduceOverhead`], over all entries: CUDA graphs
    /// captured (re-captures included).
    pub cuda_graphs_recorded: i64,
    pub cuda_graph_replays: i64,
    /// Kernel nodes patched with a call's new input or output addresses.
    pub cuda_graph_pointer_updates: i64,
    /// Keys recorded again after an eviction or a change the patching
    /// could not express.
    pub cuda_graph_recaptures: i64,
    /// Graphs freed past [`FunctionOptions::max_graphs_per_entry`].
    pub cuda_graph_evictions: i64,
    /// Device bytes the entries' private pools hold now.
    pub cuda_graph_pool_bytes: i64,
    /// [`CompileMode::Async`]: calls run eagerly while their entry was
    /// compiling in the background.
    pub eager_while_compiling: i64,
    /// Entries (of `compiles`) whose code all came from the context's
    /// compile cache ([`ContextOptions::cache_dir`](crate::ContextOptions::cache_dir),
    /// since 0.11): nothing was compiled for them, and
    /// [`explain`](Function::explain) says "loaded from the disk cache".
    pub entries_loaded: i64,
}

/// A graph plus its compiled cache entries: each call is checked against
/// the entries' guards, compiled on a miss and run.
///
/// Thread safety follows guardjit.h: [`call`](Function::call) and
/// [`call_alloc`](Function::call_alloc) take `&self` and may run
/// concurrently (share a `Function` across threads by reference or `Arc`),
/// and so may [`precompile`](Function::precompile),
/// [`stats`](Function::stats), [`explain`](Function::explain) and
/// [`dump_guards`](Function::dump_guards), which the header allows beside
/// calls on one function.
pub struct Function {
    raw: NonNull<sys::gj_function>,
    num_inputs: usize,
    num_outputs: usize,
    _context: Context,
}

// SAFETY: guardjit.h: "Thread safety: handles may be used from any thread."
unsafe impl Send for Function {}
// SAFETY: guardjit.h: "On one function, gj_function_call,
// gj_function_call_alloc, gj_function_precompile, gj_function_get_stats,
// gj_function_explain and gj_function_dump_guards may all run
// concurrently." Those, and cached counts, are the &self methods.
unsafe impl Sync for Function {}

impl Function {
    /// A function over `graph` with default options.
    pub fn new(graph: &Graph) -> Result<Function> {
        Function::create(graph, ptr::null())
    }

    pub fn with_options(graph: &Graph, options: &FunctionOptions) -> Result<Function> {
        let name = options
            .name
            .as_deref()
            .map(|n| c_string("FunctionOptions::name", n))
            .transpose()?;
        let mut raw: sys::gj_function_options = versioned::init();
        raw.name = name.as_ref().map_or(ptr::null(), |n: &CString| n.as_ptr());
        if let Some(limit) = options.recompile_limit {
            raw.recompile_limit = limit;
        }
        if let Some(mode) = options.dynamic {
            raw.dynamic = mode.to_raw();
        }
        if !options.mark_dynamic.is_empty() {
            raw.mark_dynamic = options.mark_dynamic.as_ptr();
            raw.num_mark_dynamic = options.mark_dynamic.len();
            raw.mark_dynamic_stride = std::mem::size_of::<sys::gj_dynamic_dim>();
        }
        raw.fullgraph = options.fullgraph.into();
        raw.mode = options.mode.to_raw();
        if let Some(n) = options.max_graphs_per_entry {
            raw.max_graphs_per_entry = n;
        }
        raw.compile = options.compile.to_raw();
        Function::create(graph, &raw)
    }

    fn create(graph: &Graph, options: *const sys::gj_function_options) -> Result<Function> {
        let context = graph.context().clone();
        let mut raw = ptr::null_mut();
        // SAFETY: live context and graph (made from it); options NULL or
        // initialized, with name and mark_dynamic alive for the call (the
        // library copies them).
        unsafe {
            check(sys::gj_function_create(
                context.as_ptr(),
                graph.as_ptr(),
                options,
                &mut raw,
            ))?
        };
        let raw = NonNull::new(raw).expect("gj_function_create succeeded without a function");
        // SAFETY: a live function.
        let (num_inputs, num_outputs) = unsafe {
            (
                sys::gj_function_num_inputs(raw.as_ptr()),
                sys::gj_function_num_outputs(raw.as_ptr()),
            )
        };
        Ok(Function {
            raw,
            num_inputs,
            num_outputs,
            _context: context,
        })
    }

    pub fn as_ptr(&self) -> *mut sys::gj_function {
        self.raw.as_ptr()
    }

    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Runs the function into caller-provided outputs, each of the output's
    /// dtype and shape. Blocks until the results are written; on error no
    /// output has been written.
    pub fn call(&self, inputs: &[TensorView<'_>], outputs: &mut [TensorViewMut<'_>]) -> Result<()> {
        self.call_raw(inputs, outputs, ptr::null())
    }

    pub fn call_with(
        &self,
        inputs: &[TensorView<'_>],
        outputs: &mut [TensorViewMut<'_>],
        options: &CallOptions<'_>,
    ) -> Result<()> {
        options.check_inputs("Function::call", inputs.len())?;
        self.call_raw(inputs, outputs, &options.raw)
    }

    fn call_raw(
        &self,
        inputs: &[TensorView<'_>],
        outputs: &mut [TensorViewMut<'_>],
        options: *const sys::gj_call_options,
    ) -> Result<()> {
        with_dl_array(inputs, |ins| {
            with_dl_array(outputs, |outs| {
                // SAFETY: a live function ("gj_function_call may run
                // concurrently on one function"); the arrays hold
                // inputs.len() / outputs.len() DLTensors whose data lie
                // inside borrowed slices (checked when the views were made),
                // outputs exclusively borrowed; options NULL or initialized
                // with its borrows alive.
                unsafe {
                    check(sys::gj_function_call(
                        self.as_ptr(),
                        ins,
                        inputs.len(),
                        outs,
                        outputs.len(),
                        options,
                    ))
                }
            })
        })
    }

    /// Runs the function and returns library-allocated contiguous outputs.
    pub fn call_alloc(&self, inputs: &[TensorView<'_>]) -> Result<Vec<Tensor>> {
        self.call_alloc_raw(inputs, ptr::null())
    }

    pub fn call_alloc_with(
        &self,
        inputs: &[TensorView<'_>],
        options: &CallOptions<'_>,
    ) -> Result<Vec<Tensor>> {
        options.check_inputs("Function::call_alloc", inputs.len())?;
        self.call_alloc_raw(inputs, &options.raw)
    }

    fn call_alloc_raw(
        &self,
        inputs: &[TensorView<'_>],
        options: *const sys::gj_call_options,
    ) -> Result<Vec<Tensor>> {
        let n = self.num_outputs;
        // The library's output pointers: on the stack for up to 8 outputs.
        let mut stack = [ptr::null_mut::<sys::DLManagedTensor>(); 8];
        let mut heap = Vec::new();
        let outs: &mut [*mut sys::DLManagedTensor] = if n <= stack.len() {
            &mut stack[..n]
        } else {
            heap.resize(n, ptr::null_mut());
            &mut heap
        };
        with_dl_array(inputs, |ins| {
            // SAFETY: as call_raw; outs has num_outputs slots, every one
            // written on success and none on error.
            unsafe {
                check(sys::gj_function_call_alloc(
                    self.as_ptr(),
                    ins,
                    inputs.len(),
                    options,
                    outs.as_mut_ptr(),
                    n,
                ))
            }
        })?;
        let mut tensors = Vec::with_capacity(n);
        let mut rest = outs.iter().copied();
        while let Some(p) = rest.next() {
            // SAFETY: each entry is an output the caller (we) owns.
            match unsafe { Tensor::from_raw(p) } {
                Ok(t) => tensors.push(t),
                Err(e) => {
                    for p in rest {
                        // SAFETY: owned, not wrapped; released once.
                        unsafe { sys::gj_tensor_release(p) };
                    }
                    return Err(e);
                }
            }
        }
        Ok(tensors)
    }

    /// Compiles the cache entry a call with inputs of these dtypes, shapes
    /// and strides would use, without running it, so the first real call is
    /// a hit. `FailedPrecondition` past the recompile limit.
    pub fn precompile(&self, inputs: &[TensorSpec<'_>]) -> Result<()> {
        self.precompile_with(inputs, &CallOptions::new())
    }

    /// As [`precompile`](Function::precompile), for calls with these
    /// options (the cache guards on grad mode, determinism, requires_grad).
    pub fn precompile_with(
        &self,
        inputs: &[TensorSpec<'_>],
        options: &CallOptions<'_>,
    ) -> Result<()> {
        options.check_inputs("Function::precompile", inputs.len())?;
        with_dl_array(inputs, |ins| {
            // SAFETY: as call_raw; only metadata is read ("data may be
            // NULL"). The header allows precompile concurrently with calls,
            // stats and explain on one function.
            unsafe {
                check(sys::gj_function_precompile(
                    self.as_ptr(),
                    ins,
                    inputs.len(),
                    &options.raw,
                ))
            }
        })
    }

    /// The guard cache's counters. `&self`: the header allows it concurrently
    /// with calls, so a server holding an `Arc<Function>` reads them.
    pub fn stats(&self) -> Result<FunctionStats> {
        let mut raw: sys::gj_function_stats = versioned::init();
        // SAFETY: fills the fields inside raw.struct_size; safe concurrently
        // with calls (guardjit.h, thread safety).
        unsafe { check(sys::gj_function_get_stats(self.as_ptr(), &mut raw))? };
        Ok(FunctionStats {
            calls: raw.calls,
            hits: raw.hits,
            misses: raw.misses,
            compiles: raw.compiles,
            recompiles: raw.recompiles,
            fallback_calls: raw.fallback_calls,
            cache_entries: raw.cache_entries,
            compile_ms_total: raw.compile_ms_total,
            guard_ns_mean: raw.guard_ns_mean,
            graph_count: raw.graph_count,
            graph_break_count: raw.graph_break_count,
            cuda_graphs_recorded: raw.cuda_graphs_recorded,
            cuda_graph_replays: raw.cuda_graph_replays,
            cuda_graph_pointer_updates: raw.cuda_graph_pointer_updates,
            cuda_graph_recaptures: raw.cuda_graph_recaptures,
            cuda_graph_evictions: raw.cuda_graph_evictions,
            cuda_graph_pool_bytes: raw.cuda_graph_pool_bytes,
            eager_while_compiling: raw.eager_while_compiling,
            entries_loaded: raw.entries_loaded,
        })
    }

    /// torch._dynamo.explain()-style text: graph and op counts, guards of
    /// every entry, compile times, cache state, recompile reasons; for a
    /// function with graph breaks, "Graph Count", "Graph Break Count", each
    /// break's reason and the ops and guards per graph.
    pub fn explain(&self) -> Result<String> {
        let mut text = ptr::null_mut();
        // SAFETY: a live function (concurrent use allowed); text owned on
        // success.
        unsafe {
            check(sys::gj_function_explain(self.as_ptr(), &mut text))?;
            Ok(take_string(text))
        }
    }

    /// The guards of every cache entry in TREE_GUARD_MANAGER form, most
    /// recently used first.
    pub fn dump_guards(&self) -> Result<String> {
        let mut text = ptr::null_mut();
        // SAFETY: as explain.
        unsafe {
            check(sys::gj_function_dump_guards(self.as_ptr(), &mut text))?;
            Ok(take_string(text))
        }
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        // SAFETY: owned; &mut self in drop means no other thread uses it
        // ("A handle must not be destroyed while another thread uses it").
        unsafe { sys::gj_function_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("inputs", &self.num_inputs)
            .field("outputs", &self.num_outputs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of_val};

    #[test]
    fn stream_and_synchronize_land_inside_struct_size() {
        let defaults = CallOptions::new().raw;
        assert!(defaults.stream.is_null() && defaults.synchronize == 0);
        let mut marker = 0u8;
        let stream = (&mut marker as *mut u8).cast::<c_void>();
        // SAFETY: only read back here; no call is made with it.
        let raw = unsafe { CallOptions::new().stream(stream) }
            .synchronize(true)
            .raw;
        assert_eq!((raw.stream, raw.synchronize), (stream, 1));
        // The library reads only the fields inside struct_size.
        let end = offset_of!(sys::gj_call_options, synchronize) + size_of_val(&raw.synchronize);
        assert!(end <= raw.struct_size, "{end} > {}", raw.struct_size);
    }
}
