//! Every error path surfaces the library's code and a message naming what
//! is at fault.

mod common;

use common::example;
use guardjit::{
    Arg, CallOptions, Context, ContextOptions, DType, Error, ErrorCode, Function, FunctionOptions,
    Graph, GraphBuilder, Result, TensorSpec, TensorView, TensorViewMut,
};
use std::ops::Bound;
use std::sync::atomic::AtomicI32;
use std::time::Duration;

/// The error of `r`, which must fail with `code` and a message holding
/// every one of `words`.
#[track_caller]
fn expect_err<T>(r: Result<T>, code: ErrorCode, words: &[&str]) -> Error {
    let Err(e) = r else {
        panic!("expected {code}, got Ok")
    };
    eprintln!("{e}");
    assert_eq!(e.code(), code, "{e}");
    for w in words {
        assert!(e.message().contains(w), "{e:?} lacks {w:?}");
    }
    assert_eq!(e.to_string(), format!("{}: {}", code.name(), e.message()));
    e
}

fn seed_mul(ctx: &Context) -> Function {
    Function::new(&Graph::from_file(ctx, example("seed_mul.pbtxt")).unwrap()).unwrap()
}

#[test]
fn graph_loading_errors() {
    let ctx = Context::new().unwrap();
    expect_err(
        Graph::from_text(&ctx, "this is { not a graph"),
        ErrorCode::InvalidArgument,
        &["malformed graph text"],
    );
    expect_err(
        Graph::from_text(
            &ctx,
            "name: \"g\" placeholders { name: \"x\" } outputs { ref: \"nope\" }",
        ),
        ErrorCode::InvalidArgument,
        &["nope"],
    );
    expect_err(
        Graph::from_text(
            &ctx,
            "name: \"g\" placeholders { name: \"x\" } \
             nodes { name: \"n\" target: \"aten.no_such_op.default\" args { ref: \"x\" } } outputs { ref: \"n\" }",
        ),
        ErrorCode::Unimplemented,
        &["aten.no_such_op.default"],
    );
    expect_err(
        Graph::from_bytes(&ctx, b"\xff\xff\xff\xff garbage"),
        ErrorCode::InvalidArgument,
        &["malformed"],
    );
    expect_err(
        Graph::from_file(&ctx, "/nonexistent/graph.pbtxt"),
        ErrorCode::NotFound,
        &["/nonexistent/graph.pbtxt"],
    );
    // Rejected before the library: a path with a NUL byte.
    expect_err(
        Graph::from_file(&ctx, "a\0b.pbtxt"),
        ErrorCode::InvalidArgument,
        &["Graph::from_file", "NUL"],
    );
}

#[test]
fn context_and_function_option_errors() {
    expect_err(
        Context::with_options(&ContextOptions::new().num_threads(-1)),
        ErrorCode::InvalidArgument,
        &["num_threads"],
    );
    let ctx = Context::new().unwrap();
    let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt")).unwrap();
    expect_err(
        Function::with_options(&graph, &FunctionOptions::new().mark_dynamic(5, 0, ..)),
        ErrorCode::InvalidArgument,
        &["mark_dynamic"],
    );
    expect_err(
        Function::with_options(
            &graph,
            &FunctionOptions::new().mark_dynamic(0, 0, (Bound::Included(10), Bound::Included(4))),
        ),
        ErrorCode::InvalidArgument,
        &["mark_dynamic"],
    );
    expect_err(
        Function::with_options(&graph, &FunctionOptions::new().name("a\0b")),
        ErrorCode::InvalidArgument,
        &["FunctionOptions::name"],
    );
}

#[test]
fn call_errors_name_the_input_or_output() {
    let ctx = Context::new().unwrap();
    let f = seed_mul(&ctx);
    let x = [1.0f32; 10];
    let xv = TensorView::new(&x, &[10]).unwrap();
    // Wrong input count.
    expect_err(
        f.call_alloc(&[xv]),
        ErrorCode::InvalidArgument,
        &["takes 2 inputs (x, b), got 1"],
    );
    expect_err(
        f.call_alloc(&[xv, xv, xv]),
        ErrorCode::InvalidArgument,
        &["takes 2 inputs (x, b), got 3"],
    );
    // Shapes the op rejects: 10 and 3 do not broadcast.
    let y = [1.0f32; 3];
    expect_err(
        f.call_alloc(&[xv, TensorView::new(&y, &[3]).unwrap()]),
        ErrorCode::InvalidArgument,
        &["node 'mul'", "not broadcastable"],
    );
    // Wrong output count, dtype and shape.
    let mut out = [0.0f32; 10];
    expect_err(
        f.call(&[xv, xv], &mut []),
        ErrorCode::InvalidArgument,
        &["returns 1 outputs, got num_outputs 0"],
    );
    let mut wrong_dtype = [0i32; 10];
    expect_err(
        f.call(
            &[xv, xv],
            &mut [TensorViewMut::new(&mut wrong_dtype, &[10]).unwrap()],
        ),
        ErrorCode::InvalidArgument,
        &["output 0: expected float32[10], got int32[10]"],
    );
    let mut wrong_shape = [0.0f32; 10];
    expect_err(
        f.call(
            &[xv, xv],
            &mut [TensorViewMut::new(&mut wrong_shape, &[2, 5]).unwrap()],
        ),
        ErrorCode::InvalidArgument,
        &["output"],
    );
    assert_eq!(wrong_shape, [0.0; 10], "nothing written on error");
    // Then a good call still works.
    f.call(
        &[xv, xv],
        &mut [TensorViewMut::new(&mut out, &[10]).unwrap()],
    )
    .unwrap();
    assert_eq!(out, [1.0; 10]);
}

#[test]
fn views_refuse_data_outside_their_slice() {
    let x = [0.0f32; 6];
    expect_err(
        TensorView::new(&x, &[2, 4]),
        ErrorCode::InvalidArgument,
        &["TensorView::new", "8", "6"],
    );
    expect_err(
        TensorView::new(&x, &[-1, 6]),
        ErrorCode::InvalidArgument,
        &["negative"],
    );
    expect_err(
        TensorView::with_strides(&x, &[2, 3], &[3, 2]),
        ErrorCode::InvalidArgument,
        &["reaches element 7"],
    );
    expect_err(
        TensorView::with_strides(&x, &[2, 3], &[3]),
        ErrorCode::InvalidArgument,
        &["1 strides for 2 dims"],
    );
    expect_err(
        TensorView::with_strides(&x, &[2, 3], &[-3, 1]),
        ErrorCode::InvalidArgument,
        &["negative stride"],
    );
    expect_err(
        TensorView::new(&x, &[i64::MAX, 2]),
        ErrorCode::InvalidArgument,
        &["2^63"],
    );
    let mut y = [0u8; 4];
    expect_err(
        TensorViewMut::new(&mut y, &[5]),
        ErrorCode::InvalidArgument,
        &["TensorViewMut::new"],
    );
    // A view whose sizes include 0 reads nothing, whatever its strides.
    TensorView::with_strides(&x, &[0, 100], &[100, 1]).unwrap();
}

#[test]
fn requires_grad_must_have_one_flag_per_input() {
    let ctx = Context::new().unwrap();
    let f = seed_mul(&ctx);
    let x = [1.0f32; 10];
    let xv = TensorView::new(&x, &[10]).unwrap();
    let flags = [true];
    expect_err(
        f.call_alloc_with(&[xv, xv], &CallOptions::new().requires_grad(&flags)),
        ErrorCode::InvalidArgument,
        &["requires_grad", "1 flags for 2 inputs"],
    );
    let flags = [true, false];
    f.call_alloc_with(&[xv, xv], &CallOptions::new().requires_grad(&flags))
        .unwrap();
}

#[test]
fn a_set_cancel_flag_cancels_and_writes_nothing() {
    let ctx = Context::new().unwrap();
    let f = seed_mul(&ctx);
    let x = [2.0f32; 10];
    let xv = TensorView::new(&x, &[10]).unwrap();
    let cancel = AtomicI32::new(1);
    let mut out = [0.0f32; 10];
    expect_err(
        f.call_with(
            &[xv, xv],
            &mut [TensorViewMut::new(&mut out, &[10]).unwrap()],
            &CallOptions::new().cancel(&cancel),
        ),
        ErrorCode::Cancelled,
        &["cancelled by the host"],
    );
    assert_eq!(out, [0.0; 10]);
    expect_err(
        f.call_alloc_with(&[xv, xv], &CallOptions::new().cancel(&cancel)),
        ErrorCode::Cancelled,
        &[],
    );
    cancel.store(0, std::sync::atomic::Ordering::Relaxed);
    f.call_with(
        &[xv, xv],
        &mut [TensorViewMut::new(&mut out, &[10]).unwrap()],
        &CallOptions::new().cancel(&cancel),
    )
    .unwrap();
    assert_eq!(out, [4.0; 10]);
}

#[test]
fn a_timeout_stops_a_long_call() {
    let ctx = Context::new().unwrap();
    let f = Function::new(&Graph::from_file(&ctx, example("mlp.pbtxt")).unwrap()).unwrap();
    let batch = 1 << 16;
    let x = vec![0.5f32; batch * 8];
    let shape = [batch as i64, 8];
    let xv = TensorView::new(&x, &shape).unwrap();
    // Compile first, so the timed call only runs.
    f.precompile(&[xv.spec()]).unwrap();
    expect_err(
        f.call_alloc_with(&[xv], &CallOptions::new().timeout(Duration::from_nanos(1))),
        ErrorCode::DeadlineExceeded,
        &["timeout"],
    );
    f.call_alloc_with(&[xv], &CallOptions::new().timeout(Duration::from_secs(60)))
        .unwrap();
}

#[test]
fn precompile_past_the_recompile_limit_fails_precondition() {
    let ctx = Context::new().unwrap();
    let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt")).unwrap();
    let f = Function::with_options(
        &graph,
        &FunctionOptions::new()
            .recompile_limit(1)
            .dynamic(guardjit::DynamicMode::Static),
    )
    .unwrap();
    let s3 = TensorSpec::new(DType::Float32, &[3]).unwrap();
    f.precompile(&[s3, s3]).unwrap();
    let s4 = TensorSpec::new(DType::Float32, &[4]).unwrap();
    expect_err(
        f.precompile(&[s4, s4]),
        ErrorCode::FailedPrecondition,
        &["recompile limit"],
    );
    // Calls still run (eagerly) past the limit.
    let x = [1.0f32; 4];
    let xv = TensorView::new(&x, &[4]).unwrap();
    assert_eq!(
        f.call_alloc(&[xv, xv]).unwrap()[0]
            .as_slice::<f32>()
            .unwrap(),
        [1.0; 4]
    );
    let stats = f.stats().unwrap();
    assert_eq!(stats.fallback_calls, 1, "{stats:?}");
}

#[test]
fn builder_errors_leave_the_builder_usable() {
    let ctx = Context::new().unwrap();
    let mut b = GraphBuilder::new(&ctx, "g").unwrap();
    b.add_input("x").unwrap();
    expect_err(b.add_input("x"), ErrorCode::InvalidArgument, &["x"]);
    expect_err(
        b.add_node("n", "aten.relu.default", &[Arg::reference("missing")]),
        ErrorCode::InvalidArgument,
        &["missing"],
    );
    expect_err(
        b.add_node("n", "aten.not_an_op.default", &[Arg::reference("x")]),
        ErrorCode::Unimplemented,
        &["aten.not_an_op.default"],
    );
    expect_err(
        b.add_node("n", "aten.relu.default", &[Arg::reference("x\0")]),
        ErrorCode::InvalidArgument,
        &["NUL"],
    );
    expect_err(
        b.set_outputs(&["nowhere"]),
        ErrorCode::InvalidArgument,
        &["nowhere"],
    );
    b.add_node("n", "aten.relu.default", &[Arg::reference("x")])
        .unwrap();
    b.set_outputs(&["n"]).unwrap();
    let g = b.finish().unwrap();
    assert_eq!(g.output_names(), ["n"]);
}

#[test]
fn error_codes_round_trip() {
    for raw in 1..=16 {
        let code = ErrorCode::from_raw(raw).unwrap();
        assert_eq!(code.to_raw(), raw);
    }
    assert_eq!(ErrorCode::from_raw(0), None);
    assert_eq!(ErrorCode::from_raw(99), Some(ErrorCode::Unknown));
    let e = Error::new(ErrorCode::NotFound, "gone");
    assert_eq!(e.to_string(), "NOT_FOUND: gone");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    assert_eq!(boxed.to_string(), "NOT_FOUND: gone");
}
