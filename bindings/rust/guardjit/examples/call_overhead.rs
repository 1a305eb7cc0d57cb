//! Per-call cost of a cached call through the safe API against the same
//! call made directly through the raw C ABI (guardjit-sys), on
//! examples/seed_mul.pbtxt with float32[N] inputs (N = first argument, 10 by
//! default). Build in release:
//!
//!     cargo run --release --example call_overhead -- [N]
//!
//! Prints, in ns per call, the best of 21 rounds of 20k calls for each of
//! gj_function_call into caller outputs and gj_function_call_alloc, safe and
//! raw, the four measured in turn within each round so that load from other
//! processes falls on all of them alike.

use guardjit::sys;
use guardjit::{Context, Function, Graph, TensorView, TensorViewMut};
use std::ptr;
use std::time::Instant;

const CALLS: u32 = 20_000;
const ROUNDS: usize = 21;

fn ns_per_call(f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
}

/// The best time of each closure over ROUNDS rounds, run in turn.
fn best_interleaved<const K: usize>(mut fs: [&mut dyn FnMut(); K]) -> [f64; K] {
    let mut best = [f64::INFINITY; K];
    for _ in 0..ROUNDS {
        for (b, f) in best.iter_mut().zip(fs.iter_mut()) {
            *b = b.min(ns_per_call(*f));
        }
    }
    best
}

fn main() -> guardjit::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(10, |a| a.parse().expect("N"));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../examples/seed_mul.pbtxt"
    );
    let ctx = Context::new()?;
    let function = Function::new(&Graph::from_file(&ctx, path)?)?;
    let x = vec![1.5f32; n];
    let b = vec![2.0f32; n];
    let mut out = vec![0.0f32; n];
    let shape = [n as i64];

    // Safe API.
    let inputs = [TensorView::new(&x, &shape)?, TensorView::new(&b, &shape)?];
    function.call_alloc(&inputs)?; // compile
    let mut safe_call = || {
        let mut outputs = [TensorViewMut::new(&mut out, &shape).unwrap()];
        function.call(&inputs, &mut outputs).unwrap();
    };
    let mut safe_alloc = || {
        let outs = function.call_alloc(&inputs).unwrap();
        std::hint::black_box(&outs);
    };

    // The same calls through the raw C ABI, on the same function.
    let dl = |data: *mut f32| sys::DLTensor {
        data: data.cast(),
        device: sys::DLDevice {
            device_type: sys::kDLCPU,
            device_id: 0,
        },
        ndim: 1,
        dtype: guardjit::DType::Float32.to_dlpack(),
        shape: shape.as_ptr().cast_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let mut out_raw = vec![0.0f32; n];
    let (xt, bt, ot) = (
        dl(x.as_ptr().cast_mut()),
        dl(b.as_ptr().cast_mut()),
        dl(out_raw.as_mut_ptr()),
    );
    let ins = [&xt as *const sys::DLTensor, &bt];
    let outs = [&ot as *const sys::DLTensor];
    let raw = function.as_ptr();
    let mut raw_call = || {
        // SAFETY: live function, valid tensors over live buffers.
        let e =
            unsafe { sys::gj_function_call(raw, ins.as_ptr(), 2, outs.as_ptr(), 1, ptr::null()) };
        assert!(e.is_null());
    };
    let mut raw_alloc = || {
        let mut o = ptr::null_mut();
        // SAFETY: as above; the output is released at once.
        unsafe {
            let e = sys::gj_function_call_alloc(raw, ins.as_ptr(), 2, ptr::null(), &mut o, 1);
            assert!(e.is_null());
            sys::gj_tensor_release(o);
        }
    };
    let [safe_call, raw_call, safe_alloc, raw_alloc] = best_interleaved([
        &mut safe_call,
        &mut raw_call,
        &mut safe_alloc,
        &mut raw_alloc,
    ]);
    assert!(out.iter().chain(&out_raw).all(|&v| v == 3.0));
    println!("seed_mul float32[{n}], best of {ROUNDS} rounds x {CALLS} calls (ns per call):");
    println!(
        "  call        safe {safe_call:8.1}   raw C ABI {raw_call:8.1}   overhead {:+.1}",
        safe_call - raw_call
    );
    println!(
        "  call_alloc  safe {safe_alloc:8.1}   raw C ABI {raw_alloc:8.1}   overhead {:+.1}",
        safe_alloc - raw_alloc
    );
    Ok(())
}
