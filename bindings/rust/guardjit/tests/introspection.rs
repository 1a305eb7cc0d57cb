//! Stats, explain, guard dumps, dynamic shapes, precompile, call options,
//! logging, compile reports, graph breaks and function modes.

mod common;

use common::{assert_close, example};
use guardjit::{
    CallOptions, CompileMode, CompileReportOptions, Context, DType, DynamicMode, ErrorCode,
    Function, FunctionMode, FunctionOptions, Graph, Result, TensorSpec, TensorView,
};
use std::sync::{Arc, Mutex};

/// x * b with x and b distinct buffers (the cache also guards on aliasing).
fn call_seed_mul(f: &Function, n: usize) -> Result<()> {
    let (x, b) = (vec![1.5f32; n], vec![1.5f32; n]);
    let shape = [n as i64];
    let out = f.call_alloc(&[TensorView::new(&x, &shape)?, TensorView::new(&b, &shape)?])?;
    assert_eq!(out[0].as_slice::<f32>()?, vec![2.25f32; n]);
    Ok(())
}

fn seed_mul_with(ctx: &Context, options: &FunctionOptions) -> Result<Function> {
    Function::with_options(&Graph::from_file(ctx, example("seed_mul.pbtxt"))?, options)
}

#[test]
fn stats_explain_and_guards() -> Result<()> {
    let ctx = Context::new()?;
    let f = seed_mul_with(&ctx, &FunctionOptions::new().name("my_mul"))?;
    for _ in 0..3 {
        call_seed_mul(&f, 10)?;
    }
    let s = f.stats()?;
    assert_eq!(
        (
            s.calls,
            s.hits,
            s.misses,
            s.compiles,
            s.recompiles,
            s.cache_entries
        ),
        (3, 2, 1, 1, 0, 1),
        "{s:?}"
    );
    assert!(s.compile_ms_total > 0.0, "{s:?}");
    let explain = f.explain()?;
    assert!(explain.contains("aten.mul.Tensor"), "{explain}");
    assert!(
        explain.contains("Calls: 3, hits: 2, misses: 1"),
        "{explain}"
    );
    let guards = f.dump_guards()?;
    assert!(guards.contains("TREE_GUARD_MANAGER"), "{guards}");
    assert!(guards.contains("TENSOR_MATCH"), "{guards}");
    Ok(())
}

#[test]
fn dynamic_modes_and_mark_dynamic() -> Result<()> {
    let ctx = Context::new()?;
    let compiles = |options: FunctionOptions, sizes: &[usize]| -> Result<i64> {
        let f = seed_mul_with(&ctx, &options)?;
        for &n in sizes {
            call_seed_mul(&f, n)?;
        }
        Ok(f.stats()?.compiles)
    };
    let sizes = [5, 6, 7, 8];
    assert_eq!(
        compiles(FunctionOptions::new().dynamic(DynamicMode::Static), &sizes)?,
        4
    );
    assert_eq!(
        compiles(FunctionOptions::new().dynamic(DynamicMode::Dynamic), &sizes)?,
        1
    );
    // Automatic dynamic: static first, then the size that changed is
    // symbolic.
    assert_eq!(
        compiles(FunctionOptions::new().dynamic(DynamicMode::Auto), &sizes)?,
        2
    );
    // mark_dynamic in [2, 8]: 9 fails the range guard and compiles again.
    let marked = FunctionOptions::new()
        .dynamic(DynamicMode::Static)
        .mark_dynamic(0, 0, 2..=8)
        .mark_dynamic(1, 0, ..=8);
    let f = seed_mul_with(&ctx, &marked)?;
    for n in sizes {
        call_seed_mul(&f, n)?;
    }
    assert_eq!(
        f.stats()?.compiles,
        4,
        "mark_dynamic is ignored with DynamicMode::Static"
    );
    let marked = FunctionOptions::new()
        .mark_dynamic(0, 0, 2..=8)
        .mark_dynamic(1, 0, ..9);
    let f = seed_mul_with(&ctx, &marked)?;
    for n in sizes {
        call_seed_mul(&f, n)?;
    }
    assert_eq!(f.stats()?.compiles, 1);
    call_seed_mul(&f, 9)?;
    assert_eq!(f.stats()?.compiles, 2);
    assert!(f.dump_guards()?.contains("<= 8"), "{}", f.dump_guards()?);
    Ok(())
}

#[test]
fn precompile_makes_the_first_call_a_hit() -> Result<()> {
    let ctx = Context::new()?;
    let f = seed_mul_with(&ctx, &FunctionOptions::new())?;
    let spec = TensorSpec::new(DType::Float32, &[10])?;
    f.precompile(&[spec, spec])?;
    f.precompile(&[spec, spec])?; // a no-op now
    let before = f.stats()?;
    assert_eq!((before.calls, before.compiles), (0, 1), "{before:?}");
    call_seed_mul(&f, 10)?;
    let after = f.stats()?;
    assert_eq!(
        (after.calls, after.hits, after.compiles),
        (1, 1, 1),
        "{after:?}"
    );
    Ok(())
}

#[test]
fn ambient_state_and_requires_grad_are_guarded() -> Result<()> {
    let ctx = Context::new()?;
    let f = seed_mul_with(&ctx, &FunctionOptions::new())?;
    let (x, b) = ([1.0f32; 4], [2.0f32; 4]);
    let (xv, bv) = (TensorView::new(&x, &[4])?, TensorView::new(&b, &[4])?);
    f.call_alloc(&[xv, bv])?;
    f.call_alloc_with(&[xv, bv], &CallOptions::new().grad_mode(false))?;
    f.call_alloc_with(&[xv, bv], &CallOptions::new().deterministic(true))?;
    f.call_alloc_with(&[xv, bv], &CallOptions::new().requires_grad(&[true, false]))?;
    f.call_alloc_with(&[xv, bv], &CallOptions::new().grad_mode(false))?; // a hit
    f.call_alloc(&[xv, xv])?; // aliased inputs: another entry
    let s = f.stats()?;
    assert_eq!((s.calls, s.compiles, s.hits), (6, 5, 1), "{s:?}");
    assert!(f.dump_guards()?.contains("DUPLICATE_INPUT"));
    Ok(())
}

#[test]
fn log_handler_receives_recompile_reasons() -> Result<()> {
    let lines = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let sink = Arc::clone(&lines);
    guardjit::set_log_handler(move |topic, message| {
        sink.lock().unwrap().push((topic.into(), message.into()))
    });
    guardjit::set_log_topics("recompiles")?;
    let ctx = Context::new()?;
    let f = seed_mul_with(
        &ctx,
        &FunctionOptions::new()
            .name("logged_fn")
            .dynamic(DynamicMode::Static),
    )?;
    call_seed_mul(&f, 3)?;
    call_seed_mul(&f, 4)?;
    guardjit::set_log_topics("")?;
    guardjit::clear_log_handler();
    let lines = lines.lock().unwrap();
    assert!(
        lines.iter().any(|(t, m)| t == "recompiles"
            && m.contains("logged_fn")
            && m.contains("size mismatch")),
        "{lines:?}"
    );
    Ok(())
}

#[test]
fn compile_report_for_the_cpu() -> Result<()> {
    let ctx = Context::new()?;
    let graph = Graph::from_file(&ctx, example("mlp.pbtxt"))?;
    let x = TensorSpec::new(DType::Float32, &[4, 8])?;
    let report = graph.compile_report(&[x], &CompileReportOptions::new())?;
    assert!(report.check.is_none());
    assert!(
        report.text.contains("define"),
        "LLVM IR expected:\n{}",
        report.text
    );
    let report = graph.compile_report(
        &[x],
        &CompileReportOptions::new()
            .target("cpu")
            .emulate(true)
            .seed(7),
    )?;
    let check = report.check.expect("emulate gives a check");
    assert_eq!(check.run_error, None);
    assert!(check.within_tolerance, "{check:?}");
    assert!(check.max_abs_error < 1e-4, "{check:?}");
    let e = graph
        .compile_report(&[x], &CompileReportOptions::new().target("tpu:v9"))
        .unwrap_err();
    assert_eq!(e.code(), guardjit::ErrorCode::InvalidArgument);
    assert!(e.message().contains("tpu:v9"), "{e}");
    Ok(())
}

/// examples/seed_graph_break.pbtxt (Dynamo's toy example) on `a` and `b`,
/// checked against a / (|a| + 1) * (b.sum() < 0 ? -b : b).
fn call_graph_break(f: &Function, a: &[f32], b: &[f32]) -> Result<()> {
    let shape = [a.len() as i64];
    let out = f.call_alloc(&[TensorView::new(a, &shape)?, TensorView::new(b, &shape)?])?;
    let sign = if b.iter().sum::<f32>() < 0.0 {
        -1.0
    } else {
        1.0
    };
    let want: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(&a, &b)| f64::from(a) / (f64::from(a).abs() + 1.0) * sign * f64::from(b))
        .collect();
    assert_close(out[0].as_slice::<f32>()?, &want, 1e-6);
    Ok(())
}

#[test]
fn graph_breaks_and_fullgraph() -> Result<()> {
    let ctx = Context::new()?;
    let graph = Graph::from_file(&ctx, example("seed_graph_break.pbtxt"))?;
    let a: Vec<f32> = (0..10).map(|i| i as f32 - 4.5).collect();
    let positive = vec![0.5f32; 10];
    let negative = vec![-0.5f32; 10];

    let f = Function::new(&graph)?;
    call_graph_break(&f, &a, &positive)?;
    let s = f.stats()?;
    assert_eq!((s.graph_count, s.graph_break_count), (2, 1), "{s:?}");
    let explain = f.explain()?;
    assert!(explain.contains("Graph Count: 2"), "{explain}");
    // The other branch is a third graph, compiled when first reached.
    call_graph_break(&f, &a, &negative)?;
    assert_eq!(f.stats()?.graph_count, 3);

    let f = Function::with_options(&graph, &FunctionOptions::new().fullgraph(true))?;
    let shape = [10];
    let e = f
        .call_alloc(&[
            TensorView::new(&a, &shape)?,
            TensorView::new(&positive, &shape)?,
        ])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unimplemented, "{e}");
    assert!(e.message().contains("graph break at node 'cond'"), "{e}");
    Ok(())
}

#[test]
fn reduce_overhead_is_ignored_on_cpu() -> Result<()> {
    let ctx = Context::new()?;
    let options = FunctionOptions::new()
        .mode(FunctionMode::ReduceOverhead)
        .max_graphs_per_entry(2);
    let f = seed_mul_with(&ctx, &options)?;
    for _ in 0..3 {
        call_seed_mul(&f, 10)?;
    }
    let s = f.stats()?;
    assert_eq!((s.calls, s.hits, s.graph_count), (3, 2, 1), "{s:?}");
    assert_eq!(
        (
            s.cuda_graphs_recorded,
            s.cuda_graph_replays,
            s.cuda_graph_pool_bytes
        ),
        (0, 0, 0),
        "{s:?}"
    );
    Ok(())
}

#[test]
fn async_compile_answers_eagerly_then_serves_the_entry() -> Result<()> {
    let ctx = Context::new()?;
    let f = seed_mul_with(&ctx, &FunctionOptions::new().compile(CompileMode::Async))?;
    // Every call is right, eager or compiled; the entry is published within
    // a few seconds and then hits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        call_seed_mul(&f, 10)?;
        let s = f.stats()?;
        if s.hits > 0 {
            assert_eq!(s.compiles, 1, "{s:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never hit: {s:?}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(())
}

#[test]
fn versions() {
    let (major, minor) = guardjit::api_version();
    assert_eq!(u32::from(major), guardjit::sys::GJ_API_VERSION_MAJOR);
    assert!(u32::from(minor) >= guardjit::sys::GJ_API_VERSION_MINOR);
    assert_eq!(
        guardjit::version().split('.').count(),
        3,
        "{}",
        guardjit::version()
    );
}

#[test]
fn list_ops_names_every_op_with_its_schema() -> Result<()> {
    let json = guardjit::list_ops()?;
    assert!(
        json.starts_with("{\"ops\": ["),
        "{}",
        &json[..json.len().min(80)]
    );
    assert!(json.contains("\"target\": \"aten.add.Tensor\""));
    assert!(json.contains("\"target\": \"aten.mm.default\""));
    Ok(())
}
