//! Loads a graph, calls it on float32 inputs and prints the outputs and what
//! the guard cache did.
//!
//!     cargo run --example run_graph -- [GRAPH] [NAME=D0xD1x...]...
//!
//! With no arguments: the repository's examples/mlp.pbtxt with x=4x8.
//! Inputs are filled with a fixed ramp of values in [-1, 1).

use guardjit::{Context, Function, Graph, TensorView};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("run_graph: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../examples/mlp.pbtxt")
    });
    let mut specs: Vec<(String, Vec<i64>)> = args
        .map(|a| {
            let (name, dims) = a
                .split_once('=')
                .ok_or(format!("expected NAME=D0xD1..., got {a:?}"))?;
            let dims = dims
                .split('x')
                .map(str::parse)
                .collect::<Result<Vec<i64>, _>>()?;
            Ok((name.to_string(), dims))
        })
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    if specs.is_empty() {
        specs.push(("x".into(), vec![4, 8]));
    }

    println!(
        "guardjit {} (C API {:?})",
        guardjit::version(),
        guardjit::api_version()
    );
    let ctx = Context::new()?;
    let graph = Graph::from_file(&ctx, &path)?;
    println!(
        "{}: inputs {:?}, outputs {:?}",
        path.display(),
        graph.input_names(),
        graph.output_names()
    );

    // One buffer per graph input, in the graph's order.
    let mut buffers = Vec::new();
    for name in graph.input_names() {
        let (_, shape) = specs.iter().find(|(n, _)| n == name).ok_or(format!(
            "no shape given for input '{name}' (pass {name}=D0xD1...)"
        ))?;
        let n: i64 = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|i| (i % 20) as f32 / 10.0 - 1.0).collect();
        buffers.push((data, shape.clone()));
    }
    let inputs = buffers
        .iter()
        .map(|(data, shape)| TensorView::new(data, shape))
        .collect::<Result<Vec<_>, _>>()?;

    let function = Function::new(&graph)?;
    let start = Instant::now();
    let outputs = function.call_alloc(&inputs)?;
    println!(
        "first call (compiles): {:.2} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    for (name, out) in graph.output_names().iter().zip(&outputs) {
        let values: Vec<String> = match out.dtype() {
            guardjit::DType::Float32 => out
                .as_slice::<f32>()?
                .iter()
                .take(8)
                .map(|v| format!("{v:.4}"))
                .collect(),
            guardjit::DType::Bool => out
                .as_slice::<bool>()?
                .iter()
                .take(8)
                .map(|v| v.to_string())
                .collect(),
            _ => out
                .as_bytes()
                .iter()
                .take(8)
                .map(|b| format!("{b:#04x}"))
                .collect(),
        };
        let more = if out.numel() > 8 { ", ..." } else { "" };
        println!(
            "{name} = {}{:?}: [{}{more}]",
            out.dtype(),
            out.shape(),
            values.join(", ")
        );
    }

    let calls = 1000;
    let start = Instant::now();
    for _ in 0..calls {
        function.call_alloc(&inputs)?;
    }
    println!(
        "cached calls: {:.2} us each",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(calls)
    );
    let stats = function.stats()?;
    println!(
        "calls {}, hits {}, misses {}, compiles {}, compile {:.1} ms",
        stats.calls, stats.hits, stats.misses, stats.compiles, stats.compile_ms_total
    );
    Ok(())
}
