//! Calls on the example graphs, checked against values computed here.

mod common;

use common::{assert_close, data, example, example_text, mlp_reference};
use guardjit::{CallOptions, Context, DType, Function, Graph, Result, TensorView, TensorViewMut};

#[test]
fn seed_mul_on_several_shapes_into_caller_outputs() -> Result<()> {
    let ctx = Context::new()?;
    let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt"))?;
    assert_eq!((graph.num_inputs(), graph.num_outputs()), (2, 1));
    assert_eq!(graph.input_names(), ["x", "b"]);
    assert_eq!(graph.output_names(), ["mul"]);
    let f = Function::new(&graph)?;
    assert_eq!((f.num_inputs(), f.num_outputs()), (2, 1));
    for shape in [&[10i64][..], &[3, 4], &[2, 3, 5], &[0], &[]] {
        let n = shape.iter().product::<i64>() as usize;
        let (x, b) = (data(n, 1), data(n, 2));
        let mut out = vec![f32::NAN; n];
        f.call(
            &[TensorView::new(&x, shape)?, TensorView::new(&b, shape)?],
            &mut [TensorViewMut::new(&mut out, shape)?],
        )?;
        let want: Vec<f64> = x.iter().zip(&b).map(|(&x, &b)| f64::from(x * b)).collect();
        assert_close(&out, &want, 0.0);
    }
    Ok(())
}

#[test]
fn seed_mul_call_alloc_and_broadcast() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
    let x = data(12, 3);
    let b = [1.0f32, 10.0, 100.0];
    let out = f.call_alloc(&[TensorView::new(&x, &[4, 3])?, TensorView::new(&b, &[3])?])?;
    assert_eq!(out.len(), 1);
    let t = &out[0];
    assert_eq!(t.dtype(), DType::Float32);
    assert_eq!(t.shape(), [4, 3]);
    assert_eq!(t.strides(), [3, 1]);
    assert_eq!(t.numel(), 12);
    let want: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| f64::from(v * b[i % 3]))
        .collect();
    assert_close(t.as_slice::<f32>()?, &want, 0.0);
    assert_eq!(t.as_bytes().len(), 48);
    // The wrong element type is refused, not reinterpreted.
    let e = t.as_slice::<i32>().unwrap_err();
    assert_eq!(e.code(), guardjit::ErrorCode::InvalidArgument);
    assert!(e.message().contains("float32"), "{e}");
    Ok(())
}

#[test]
fn other_dtypes_through_seed_mul() -> Result<()> {
    // The placeholders' meta says float32, but a call specializes on what it
    // gets: each dtype is its own cache entry.
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
    let x64 = [1.5f64, -2.0, 3.25];
    let out = f.call_alloc(&[TensorView::new(&x64, &[3])?, TensorView::new(&x64, &[3])?])?;
    assert_eq!(out[0].as_slice::<f64>()?, [2.25, 4.0, 10.5625]);
    let xi = [3i32, -4, 5, 7];
    let mut oi = [0i32; 4];
    f.call(
        &[TensorView::new(&xi, &[4])?, TensorView::new(&xi, &[4])?],
        &mut [TensorViewMut::new(&mut oi, &[4])?],
    )?;
    assert_eq!(oi, [9, 16, 25, 49]);
    let xl = [1i64 << 20, -3];
    let out = f.call_alloc(&[TensorView::new(&xl, &[2])?, TensorView::new(&xl, &[2])?])?;
    assert_eq!(out[0].to_vec::<i64>()?, [1i64 << 40, 9]);
    let xb = [true, false, true];
    let yb = [true, true, false];
    let out = f.call_alloc(&[TensorView::new(&xb, &[3])?, TensorView::new(&yb, &[3])?])?;
    assert_eq!(out[0].dtype(), DType::Bool);
    assert_eq!(out[0].as_slice::<bool>()?, [true, false, false]);
    let xh: Vec<guardjit::F16> = [1.5f32, -2.0, 0.25]
        .iter()
        .map(|&v| guardjit::F16::from_f32(v))
        .collect();
    let out = f.call_alloc(&[TensorView::new(&xh, &[3])?, TensorView::new(&xh, &[3])?])?;
    let got: Vec<f32> = out[0]
        .as_slice::<guardjit::F16>()?
        .iter()
        .map(|h| h.to_f32())
        .collect();
    assert_eq!(got, [2.25, 4.0, 0.0625]);
    Ok(())
}

#[test]
fn strided_inputs_and_outputs() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
    // x: the transpose of a 3x2 row-major buffer, viewed as 2x3.
    let xt = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // rows (1,2) (3,4) (5,6)
    let x = TensorView::with_strides(&xt, &[2, 3], &[1, 2])?; // [[1,3,5],[2,4,6]]
    let b = [1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0];
    // Output written into every other element of a buffer of 12.
    let mut buf = [0.0f32; 12];
    f.call(
        &[x, TensorView::new(&b, &[2, 3])?],
        &mut [TensorViewMut::with_strides(&mut buf, &[2, 3], &[6, 2])?],
    )?;
    assert_eq!(
        buf,
        [1.0, 0.0, 3.0, 0.0, 5.0, 0.0, 4.0, 0.0, 8.0, 0.0, 12.0, 0.0]
    );
    Ok(())
}

#[test]
fn output_fed_back_as_input() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_text(&ctx, &example_text("seed_mul.pbtxt"))?)?;
    let x = [2.0f32, 3.0];
    let once = f.call_alloc(&[TensorView::new(&x, &[2])?, TensorView::new(&x, &[2])?])?;
    let twice = f.call_alloc(&[once[0].view(), TensorView::new(&x, &[2])?])?;
    assert_eq!(twice[0].as_slice::<f32>()?, [8.0, 27.0]);
    Ok(())
}

#[test]
fn mlp_matches_a_reference_computed_here() -> Result<()> {
    let pbtxt = example_text("mlp.pbtxt");
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("mlp.pbtxt"))?)?;
    for batch in [4usize, 1, 7, 32] {
        let x = data(batch * 8, batch as u32);
        let out = f.call_alloc(&[TensorView::new(&x, &[batch as i64, 8])?])?;
        assert_eq!(out[0].shape(), [batch as i64, 4]);
        assert_close(out[0].as_slice()?, &mlp_reference(&pbtxt, &x, batch), 1e-5);
    }
    Ok(())
}

#[test]
fn seed_abs_div_two_outputs_float_and_bool() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_abs_div.pbtxt"))?)?;
    assert_eq!(f.num_outputs(), 2);
    for (a, b) in [
        (data(10, 5), data(10, 6)),
        (data(10, 7), vec![1.0; 10]),
        (vec![3.0; 10], vec![-1.0; 10]),
    ] {
        let out = f.call_alloc(&[TensorView::new(&a, &[10])?, TensorView::new(&b, &[10])?])?;
        let want: Vec<f64> = a.iter().map(|&v| f64::from(v / (v.abs() + 1.0))).collect();
        assert_close(out[0].as_slice()?, &want, 1e-6);
        assert_eq!(out[1].dtype(), DType::Bool);
        assert_eq!(out[1].shape(), [] as [i64; 0]);
        let sum: f32 = b.iter().sum();
        assert_eq!(out[1].as_slice::<bool>()?, [sum < 0.0]);
        // The same into caller outputs: a 0-d bool.
        let mut div = vec![0.0f32; 10];
        let negative = sum < 0.0;
        let mut lt = [!negative]; // the opposite, to see it overwritten
        f.call(
            &[TensorView::new(&a, &[10])?, TensorView::new(&b, &[10])?],
            &mut [
                TensorViewMut::new(&mut div, &[10])?,
                TensorViewMut::new(&mut lt, &[])?,
            ],
        )?;
        assert_eq!(lt, [negative]);
        assert_close(&div, &want, 1e-6);
    }
    Ok(())
}

#[test]
fn seed_cat_branch_takes_the_branch_its_sizes_pick() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_cat_branch.pbtxt"))?)?;
    // cat is 6 long: 6 > 2, so z * 2.
    let x = [1.0f32, 2.0, 3.0];
    let out = f.call_alloc(&[TensorView::new(&x, &[3])?, TensorView::new(&x, &[3])?])?;
    assert_eq!(out[0].as_slice::<f32>()?, [2.0, 4.0, 6.0, 2.0, 4.0, 6.0]);
    // cat is 2 long: z + 2.
    let y = [5.0f32];
    let out = f.call_alloc(&[TensorView::new(&y, &[1])?, TensorView::new(&y, &[1])?])?;
    assert_eq!(out[0].as_slice::<f32>()?, [7.0, 7.0]);
    Ok(())
}

#[test]
fn seed_cat_add_concatenates_then_adds() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_cat_add.pbtxt"))?)?;
    let x = data(6, 9);
    let y = data(12, 10);
    let out = f.call_alloc(&[TensorView::new(&x, &[2, 3])?, TensorView::new(&y, &[4, 3])?])?;
    assert_eq!(out[0].shape(), [6, 3]);
    let want: Vec<f64> = x.iter().chain(&y).map(|&v| f64::from(v + 2.0)).collect();
    assert_close(out[0].as_slice()?, &want, 0.0);
    Ok(())
}

#[test]
fn tensors_outlive_their_function_and_context() -> Result<()> {
    let out = {
        let ctx = Context::new()?;
        let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
        let x = [1.0f32, 2.0];
        f.call_alloc(&[TensorView::new(&x, &[2])?, TensorView::new(&x, &[2])?])?
    };
    assert_eq!(out[0].as_slice::<f32>()?, [1.0, 4.0]);
    Ok(())
}

#[test]
fn graph_dropped_before_its_function() -> Result<()> {
    let ctx = Context::new()?;
    let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt"))?;
    let f = Function::new(&graph)?;
    drop(graph);
    drop(ctx); // the function keeps the context alive
    let x = [3.0f32];
    let out = f.call_alloc(&[TensorView::new(&x, &[1])?, TensorView::new(&x, &[1])?])?;
    assert_eq!(out[0].as_slice::<f32>()?, [9.0]);
    Ok(())
}

#[test]
fn owned_tensors_are_writable_and_hand_over_ownership() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
    let x = [1.0f32, 2.0, 3.0];
    let mut out = f.call_alloc(&[TensorView::new(&x, &[3])?, TensorView::new(&x, &[3])?])?;
    let mut t = out.remove(0);
    t.as_mut_slice::<f32>()?[0] = -1.0;
    assert!(t.as_mut_slice::<f64>().is_err());
    // Out to a raw DLManagedTensor and back.
    let raw = t.into_raw();
    // SAFETY: raw came from into_raw and is owned here.
    let t = unsafe { guardjit::Tensor::from_raw(raw) }?;
    assert_eq!(t.as_slice::<f32>()?, [-1.0, 4.0, 9.0]);
    assert_eq!(format!("{t:?}"), "Tensor { dtype: Float32, shape: [3] }");
    drop(t);
    assert_eq!(ctx.memory_stats()?.bytes_in_use, 0);
    Ok(())
}

/// guardjit.h: a call's stream and synchronize are "Ignored for CPU calls".
/// A pointer that is no CUstream (host memory the library allocated) must
/// leave CPU calls as they were; were the library to use it as a stream, the
/// call would fail or crash.
#[test]
fn cpu_calls_ignore_the_stream_and_synchronize() -> Result<()> {
    let ctx = Context::new()?;
    let f = Function::new(&Graph::from_file(&ctx, example("seed_mul.pbtxt"))?)?;
    let (x, b) = (data(10, 1), data(10, 2));
    let inputs = [TensorView::new(&x, &[10])?, TensorView::new(&b, &[10])?];
    let mut not_a_stream = f.call_alloc(&inputs)?;
    let want: Vec<f64> = x.iter().zip(&b).map(|(&x, &b)| f64::from(x * b)).collect();
    let stream = not_a_stream[0].as_mut_slice::<f32>()?.as_mut_ptr().cast();
    // SAFETY: the calls below are on CPU tensors, which the header says
    // ignore the stream.
    let options = unsafe { CallOptions::new().stream(stream) }.synchronize(true);
    let out = f.call_alloc_with(&inputs, &options)?;
    assert_close(out[0].as_slice::<f32>()?, &want, 0.0);
    let mut into = vec![f32::NAN; 10];
    f.call_with(
        &inputs,
        &mut [TensorViewMut::new(&mut into, &[10])?],
        &options,
    )?;
    assert_close(&into, &want, 0.0);
    Ok(())
}

/// CUDA tensors cross the binding as raw views (`from_raw_parts`) and reach
/// the library: without a usable driver or device the call is UNAVAILABLE
/// naming the input, and nothing is written; the views' own checks refuse
/// bad metadata first.
#[test]
fn cuda_views_reach_the_library() -> Result<()> {
    use guardjit::{Device, ErrorCode, TensorSpec};
    let ctx = Context::new()?;
    if ctx.device_memory_stats(Device::Cuda(0)).is_ok() {
        eprintln!("a CUDA device is present: the no-driver path is not what runs here");
        return Ok(());
    }
    let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt"))?;
    let f = Function::new(&graph)?;
    let shape = [4i64, 8];
    let (x, b) = (data(32, 1), data(32, 2));
    let mut out = vec![7.0f32; 32];
    // SAFETY: the library refuses the call before it touches the memory
    // (no driver); the pointers are valid host memory either way.
    let (xv, bv, ov) = unsafe {
        (
            TensorView::from_raw_parts(
                x.as_ptr().cast(),
                Device::Cuda(0),
                DType::Float32,
                &shape,
                None,
            )?,
            TensorView::from_raw_parts(
                b.as_ptr().cast(),
                Device::Cuda(0),
                DType::Float32,
                &shape,
                None,
            )?,
            TensorViewMut::from_raw_parts(
                out.as_mut_ptr().cast(),
                Device::Cuda(0),
                DType::Float32,
                &shape,
                None,
            )?,
        )
    };
    assert_eq!(
        (xv.device(), ov.device()),
        (Device::Cuda(0), Device::Cuda(0))
    );
    let e = f.call(&[xv, bv], &mut [ov]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unavailable, "{e}");
    assert!(
        e.message().contains("'x'") || e.message().contains("input 0"),
        "{e}"
    );
    assert!(out.iter().all(|&v| v == 7.0), "an output was written");
    let e = f.call_alloc(&[xv, bv]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unavailable, "{e}");
    let spec = TensorSpec::new(DType::Float32, &shape)?.on(Device::Cuda(0));
    let e = f.precompile(&[spec, spec]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unavailable, "{e}");
    // The binding's own checks.
    let bad = |r: Result<TensorView<'_>>, want: &str| {
        let e = r.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
        assert!(e.message().contains(want), "{e}");
    };
    let p = x.as_ptr().cast::<std::ffi::c_void>();
    // SAFETY: each is refused before any memory is used.
    unsafe {
        bad(
            TensorView::from_raw_parts(p, Device::Cuda(-1), DType::Float32, &shape, None),
            "ordinal -1 is negative",
        );
        bad(
            TensorView::from_raw_parts(p, Device::Cuda(0), DType::Float32, &shape, Some(&[8])),
            "1 strides for 2 dims",
        );
        bad(
            TensorView::from_raw_parts(p, Device::Cuda(0), DType::Float32, &shape, Some(&[-8, 1])),
            "negative stride",
        );
        bad(
            TensorView::from_raw_parts(
                p.cast::<u8>().add(1).cast(),
                Device::Cuda(0),
                DType::Float32,
                &shape,
                None,
            ),
            "not aligned",
        );
        bad(
            TensorView::from_raw_parts(
                std::ptr::null(),
                Device::Cuda(0),
                DType::Float32,
                &shape,
                None,
            ),
            "NULL",
        );
    }
    // A raw host view is an ordinary CPU input.
    // SAFETY: x and b outlive the call; out is written by it alone.
    let mut host_out = vec![0.0f32; 32];
    unsafe {
        f.call(
            &[
                TensorView::from_raw_parts(
                    x.as_ptr().cast(),
                    Device::Cpu,
                    DType::Float32,
                    &shape,
                    None,
                )?,
                TensorView::from_raw_parts(
                    b.as_ptr().cast(),
                    Device::Cpu,
                    DType::Float32,
                    &shape,
                    None,
                )?,
            ],
            &mut [TensorViewMut::from_raw_parts(
                host_out.as_mut_ptr().cast(),
                Device::Cpu,
                DType::Float32,
                &shape,
                None,
            )?],
        )?;
    }
    let want: Vec<f64> = x.iter().zip(&b).map(|(&x, &b)| f64::from(x * b)).collect();
    assert_close(&host_out, &want, 0.0);
    Ok(())
}
