//! `GraphBuilder`: graphs node by node, without protobuf
//! (`gj_graph_builder_*`).

use crate::c_string;
use crate::context::Context;
use crate::dtype::DType;
use crate::error::{check, Result};
use crate::graph::Graph;
use crate::tensor::TensorView;
use guardjit_sys as sys;
use std::ffi::{c_char, CString};
use std::fmt;
use std::ptr::{self, NonNull};

/// The value of a node argument (`gj_arg_kind`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue<'a> {
    None,
    /// Name of an earlier input, constant or node.
    Ref(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'a str),
    DType(DType),
    /// `"cpu"`, `"cuda:0"`.
    Device(&'a str),
    IntList(&'a [i64]),
    FloatList(&'a [f64]),
    RefList(&'a [&'a str]),
    /// Name of a subgraph.
    Subgraph(&'a str),
}

/// One argument of a node: positional, or keyword with [`Arg::named`].
///
/// ```
/// use guardjit::Arg;
/// let args = [Arg::reference("x"), Arg::reference("y"), Arg::int(2).named("alpha")];
/// # let _ = args;
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arg<'a> {
    pub name: Option<&'a str>,
    pub value: ArgValue<'a>,
}

impl<'a> Arg<'a> {
    pub const fn new(value: ArgValue<'a>) -> Arg<'a> {
        Arg { name: None, value }
    }
    pub const fn none() -> Arg<'a> {
        Arg::new(ArgValue::None)
    }
    /// A reference to an earlier input, constant or node.
    pub const fn reference(name: &'a str) -> Arg<'a> {
        Arg::new(ArgValue::Ref(name))
    }
    pub const fn int(v: i64) -> Arg<'a> {
        Arg::new(ArgValue::Int(v))
    }
    pub const fn float(v: f64) -> Arg<'a> {
        Arg::new(ArgValue::Float(v))
    }
    pub const fn bool(v: bool) -> Arg<'a> {
        Arg::new(ArgValue::Bool(v))
    }
    pub const fn string(s: &'a str) -> Arg<'a> {
        Arg::new(ArgValue::Str(s))
    }
    pub const fn dtype(d: DType) -> Arg<'a> {
        Arg::new(ArgValue::DType(d))
    }
    pub const fn device(d: &'a str) -> Arg<'a> {
        Arg::new(ArgValue::Device(d))
    }
    pub const fn ints(v: &'a [i64]) -> Arg<'a> {
        Arg::new(ArgValue::IntList(v))
    }
    pub const fn floats(v: &'a [f64]) -> Arg<'a> {
        Arg::new(ArgValue::FloatList(v))
    }
    pub const fn references(names: &'a [&'a str]) -> Arg<'a> {
        Arg::new(ArgValue::RefList(names))
    }
    pub const fn subgraph(name: &'a str) -> Arg<'a> {
        Arg::new(ArgValue::Subgraph(name))
    }
    /// Makes this a keyword argument: `Arg::int(2).named("alpha")`.
    pub const fn named(self, name: &'a str) -> Arg<'a> {
        Arg {
            name: Some(name),
            value: self.value,
        }
    }
}

/// The C strings and pointer arrays `gj_arg`s point into, kept alive for
/// one `gj_graph_builder_add_node`. (A CString's bytes and a Vec's buffer
/// do not move when the owner moves.)
#[derive(Default)]
struct ArgStorage {
    strings: Vec<CString>,
    lists: Vec<Vec<*const c_char>>,
}

impl ArgStorage {
    fn c_str(&mut self, what: &str, s: &str) -> Result<*const c_char> {
        let c = c_string(what, s)?;
        let p = c.as_ptr();
        self.strings.push(c);
        Ok(p)
    }

    fn raw(&mut self, arg: &Arg<'_>) -> Result<sys::gj_arg> {
        let what = "GraphBuilder::add_node";
        let mut raw = match arg.value {
            ArgValue::None => sys::gj_arg_none(),
            ArgValue::Ref(s) => sys::gj_arg_ref(self.c_str(what, s)?),
            ArgValue::Int(i) => sys::gj_arg_int(i),
            ArgValue::Float(f) => sys::gj_arg_float(f),
            ArgValue::Bool(b) => sys::gj_arg_bool(b.into()),
            ArgValue::Str(s) => sys::gj_arg_string(self.c_str(what, s)?),
            ArgValue::DType(d) => sys::gj_arg_dtype(d.to_raw()),
            ArgValue::Device(s) => sys::gj_arg {
                kind: sys::GJ_ARG_DEVICE,
                ..sys::gj_arg_string(self.c_str(what, s)?)
            },
            ArgValue::IntList(v) => sys::gj_arg_ints(v.as_ptr(), v.len()),
            ArgValue::FloatList(v) => sys::gj_arg {
                kind: sys::GJ_ARG_FLOAT_LIST,
                floats: v.as_ptr(),
                len: v.len(),
                ..sys::gj_arg_none()
            },
            ArgValue::RefList(names) => {
                let list = names
                    .iter()
                    .map(|n| self.c_str(what, n))
                    .collect::<Result<Vec<_>>>()?;
                let raw = sys::gj_arg_refs(list.as_ptr(), list.len());
                self.lists.push(list);
                raw
            }
            ArgValue::Subgraph(s) => sys::gj_arg {
                kind: sys::GJ_ARG_SUBGRAPH,
                ..sys::gj_arg_string(self.c_str(what, s)?)
            },
        };
        if let Some(name) = arg.name {
            raw = sys::gj_kwarg(self.c_str(what, name)?, raw);
        }
        Ok(raw)
    }
}

/// Builds a graph node by node. Each add checks its node at once; a failed
/// add leaves the builder as it was, so the caller may correct and retry.
///
/// ```no_run
/// # fn main() -> guardjit::Result<()> {
/// use guardjit::{Arg, Context, GraphBuilder};
/// let ctx = Context::new()?;
/// let mut b = GraphBuilder::new(&ctx, "hello")?;
/// b.add_input("a")?;
/// b.add_input("b")?;
/// b.add_node("add", "aten.add.Tensor", &[Arg::reference("a"), Arg::reference("b")])?;
/// b.add_node("relu", "aten.relu.default", &[Arg::reference("add")])?;
/// b.set_outputs(&["relu"])?;
/// let graph = b.finish()?;
/// # let _ = graph; Ok(()) }
/// ```
pub struct GraphBuilder {
    raw: NonNull<sys::gj_graph_builder>,
    context: Context,
}

// SAFETY: guardjit.h: "handles may be used from any thread". Not Sync: the
// header allows no concurrent use of one builder (every method takes &mut).
unsafe impl Send for GraphBuilder {}

impl GraphBuilder {
    pub fn new(context: &Context, name: &str) -> Result<GraphBuilder> {
        let name = c_string("GraphBuilder::new", name)?;
        let mut raw = ptr::null_mut();
        // SAFETY: live context, NUL-terminated name; raw written on success.
        unsafe {
            check(sys::gj_graph_builder_create(
                context.as_ptr(),
                name.as_ptr(),
                &mut raw,
            ))?
        };
        let raw = NonNull::new(raw).expect("gj_graph_builder_create succeeded without a builder");
        Ok(GraphBuilder {
            raw,
            context: context.clone(),
        })
    }

    pub fn add_input(&mut self, name: &str) -> Result<()> {
        let name = c_string("GraphBuilder::add_input", name)?;
        // SAFETY: a live, unfinished builder (finish consumes it).
        unsafe {
            check(sys::gj_graph_builder_add_input(
                self.raw.as_ptr(),
                name.as_ptr(),
            ))
        }
    }

    /// Copies `value` into the graph as a constant.
    pub fn add_constant(&mut self, name: &str, value: &TensorView<'_>) -> Result<()> {
        let name = c_string("GraphBuilder::add_constant", name)?;
        // SAFETY: as add_input; value is a valid CPU DLTensor for the call.
        unsafe {
            check(sys::gj_graph_builder_add_constant(
                self.raw.as_ptr(),
                name.as_ptr(),
                value.as_raw(),
            ))
        }
    }

    /// Adds a call node: `target` is an ATen overload (`"aten.add.Tensor"`)
    /// with ATen's argument order.
    pub fn add_node(&mut self, name: &str, target: &str, args: &[Arg<'_>]) -> Result<()> {
        let name = c_string("GraphBuilder::add_node", name)?;
        let target = c_string("GraphBuilder::add_node", target)?;
        let mut storage = ArgStorage::default();
        let raw_args = args
            .iter()
            .map(|a| storage.raw(a))
            .collect::<Result<Vec<_>>>()?;
        // SAFETY: as add_input; the args' pointers live in storage and in
        // the caller's slices until after the call. The `_v` form (0.9)
        // reads elements this crate's `gj_arg` size apart, so a library
        // whose `gj_arg` grew still reads these.
        unsafe {
            check(sys::gj_graph_builder_add_node_v(
                self.raw.as_ptr(),
                name.as_ptr(),
                target.as_ptr(),
                raw_args.as_ptr(),
                raw_args.len(),
                std::mem::size_of::<sys::gj_arg>(),
            ))
        }
    }

    /// The graph's outputs, by name of an input, constant or node.
    pub fn set_outputs(&mut self, names: &[&str]) -> Result<()> {
        let mut storage = ArgStorage::default();
        let names = names
            .iter()
            .map(|n| storage.c_str("GraphBuilder::set_outputs", n))
            .collect::<Result<Vec<_>>>()?;
        // SAFETY: as add_input; the names live in storage.
        unsafe {
            check(sys::gj_graph_builder_set_outputs(
                self.raw.as_ptr(),
                names.as_ptr(),
                names.len(),
            ))
        }
    }

    /// The finished graph. The builder is spent either way ("The builder is
    /// spent afterwards: only destroy it").
    pub fn finish(self) -> Result<Graph> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live builder; raw written on success; self is dropped
        // (destroyed) afterwards.
        unsafe {
            check(sys::gj_graph_builder_finish(self.raw.as_ptr(), &mut raw))?;
            Ok(Graph::from_raw(raw, self.context.clone()))
        }
    }
}

impl Drop for GraphBuilder {
    fn drop(&mut self) {
        // SAFETY: owned, destroyed once.
        unsafe { sys::gj_graph_builder_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for GraphBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("GraphBuilder").field(&self.raw).finish()
    }
}
