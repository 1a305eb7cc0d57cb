//! Nothing leaks (the library's memory stats after many calls and many
//! handles), and one Function serves 8 threads at once.

mod common;

use common::{assert_close, data, example, mlp_reference};
use guardjit::{
    Context, ContextOptions, Device, ErrorCode, Function, Graph, GraphBuilder, MemoryStats, Result,
    Tensor, TensorView, TensorViewMut,
};

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>() {}

#[test]
fn handles_are_send_and_sync_where_the_header_allows() {
    assert_send_sync::<Context>();
    assert_send_sync::<Graph>();
    assert_send_sync::<Function>();
    assert_send_sync::<Tensor>();
    assert_send_sync::<TensorView<'static>>();
    assert_send::<GraphBuilder>();
    assert_send::<TensorViewMut<'static>>();
}

fn mlp(ctx: &Context) -> Result<Function> {
    Function::new(&Graph::from_file(ctx, example("mlp.pbtxt"))?)
}

#[test]
fn outputs_and_intermediates_are_freed_after_many_calls() -> Result<()> {
    let ctx = Context::with_options(&ContextOptions::new().num_threads(1))?;
    let f = mlp(&ctx)?;
    let x = data(64 * 8, 1);
    let xv = TensorView::new(&x, &[64, 8])?;
    let mut kept = Vec::new();
    let mut warm = MemoryStats::default();
    for i in 0..2000 {
        let out = f.call_alloc(&[xv])?;
        if i == 10 {
            warm = ctx.memory_stats()?;
            assert!(warm.bytes_in_use >= 64 * 4 * 4, "{warm:?}");
        }
        if i % 100 == 0 {
            kept.push(out); // alive across later calls
        }
    }
    let busy = ctx.memory_stats()?;
    assert!(busy.bytes_in_use >= 20 * 64 * 4 * 4, "{busy:?}");
    drop(kept);
    let done = ctx.memory_stats()?;
    assert_eq!(done.bytes_in_use, 0, "{done:?}");
    // The allocator reused its blocks: no new system allocations per call.
    assert!(
        done.system_allocations <= warm.system_allocations + 25,
        "{warm:?} -> {done:?}"
    );
    assert!(done.cache_hits >= 1900, "{done:?}");
    ctx.release_cached_memory()?;
    assert_eq!(ctx.memory_stats()?.bytes_cached, 0);
    Ok(())
}

#[test]
fn device_memory_stats_of_the_host_are_the_contexts() -> Result<()> {
    let ctx = Context::with_options(&ContextOptions::new().num_threads(1))?;
    let f = mlp(&ctx)?;
    let x = data(16 * 8, 3);
    let out = f.call_alloc(&[TensorView::new(&x, &[16, 8])?])?;
    let host = ctx.device_memory_stats(Device::Cpu)?;
    assert_eq!(host, ctx.memory_stats()?);
    assert!(host.bytes_in_use >= 16 * 4 * 4, "{host:?}");
    drop(out);
    ctx.release_cached_device_memory(Device::Cpu)?;
    let after = ctx.device_memory_stats(Device::Cpu)?;
    assert_eq!(
        (after.bytes_in_use, after.bytes_cached),
        (0, 0),
        "{after:?}"
    );
    // A CUDA device: its allocator's counters where a driver and device
    // exist, else UNAVAILABLE naming the device; never another error.
    match ctx.device_memory_stats(Device::Cuda(0)) {
        Ok(s) => assert_eq!((s.compiled_modules, s.cached_kernels), (0, 0), "{s:?}"),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::Unavailable, "{e}");
            assert!(e.message().contains("CUDA device 0"), "{e}");
        }
    }
    let e = ctx.device_memory_stats(Device::Cuda(-1)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("device id -1 is negative"), "{e}");
    Ok(())
}

#[test]
fn destroyed_functions_return_their_compiled_code() -> Result<()> {
    let ctx = Context::with_options(&ContextOptions::new().num_threads(1).max_cached_kernels(0))?;
    let graph = Graph::from_file(&ctx, example("mlp.pbtxt"))?;
    let x = data(4 * 8, 2);
    for round in 0..20 {
        let f = Function::new(&graph)?;
        f.call_alloc(&[TensorView::new(&x, &[4, 8])?])?;
        let s = ctx.memory_stats()?;
        // Its code or its packed weights (the MLP's relu epilogues compile
        // nothing: the library runs them).
        assert!(
            s.compiled_modules >= 1 || s.packed_weight_bytes > 0,
            "round {round}: {s:?}"
        );
        drop(f);
        let s = ctx.memory_stats()?;
        assert_eq!(
            (s.compiled_modules, s.cached_kernels, s.bytes_in_use),
            (0, 0, 0),
            "round {round}: {s:?}"
        );
    }
    Ok(())
}

#[test]
fn many_contexts_graphs_and_functions_come_and_go() -> Result<()> {
    // Each round makes and drops every kind of handle; the process's resident
    // memory must not grow with the rounds.
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let round = || -> Result<()> {
        let ctx = Context::with_options(&ContextOptions::new().num_threads(1))?;
        let graph = Graph::from_file(&ctx, example("seed_mul.pbtxt"))?;
        let f = Function::new(&graph)?;
        let mut b = GraphBuilder::new(&ctx, "spare")?;
        b.add_input("x")?;
        let x = [1.0f32; 16];
        let out = f.call_alloc(&[TensorView::new(&x, &[16])?, TensorView::new(&x, &[16])?])?;
        assert_eq!(out[0].as_slice::<f32>()?, [1.0; 16]);
        Ok(())
    };
    for _ in 0..20 {
        round()?;
    }
    let before = rss_kib();
    for _ in 0..200 {
        round()?;
    }
    let grown = rss_kib().saturating_sub(before);
    // A leaked context, function or compiled module per round would be
    // tens of KiB each: 200 rounds would grow by megabytes.
    eprintln!("RSS grew by {grown} KiB");
    assert!(grown < 4096, "RSS grew by {grown} KiB over 200 rounds");
    Ok(())
}

#[test]
fn eight_threads_call_one_function() -> Result<()> {
    let pbtxt = common::example_text("mlp.pbtxt");
    let ctx = Context::new()?;
    let f = mlp(&ctx)?;
    let calls_per_thread = 150;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let f = &f;
                let pbtxt = &pbtxt;
                s.spawn(move || -> Result<()> {
                    for i in 0..calls_per_thread {
                        // A few shared batch sizes (hits after the first
                        // compile) and one size per thread.
                        let batch = [1usize, 4, 16, 9 + t][i % 4];
                        let x = data(batch * 8, (t * 1000 + i) as u32);
                        let want = mlp_reference(pbtxt, &x, batch);
                        let shape = [batch as i64, 8];
                        if i % 2 == 0 {
                            let out = f.call_alloc(&[TensorView::new(&x, &shape)?])?;
                            assert_close(out[0].as_slice()?, &want, 1e-5);
                        } else {
                            let mut out = vec![0.0f32; batch * 4];
                            let out_shape = [batch as i64, 4];
                            f.call(
                                &[TensorView::new(&x, &shape)?],
                                &mut [TensorViewMut::new(&mut out, &out_shape)?],
                            )?;
                            assert_close(&out, &want, 1e-5);
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a calling thread panicked")?;
        }
        Ok::<(), guardjit::Error>(())
    })?;
    let stats = f.stats()?;
    assert_eq!(stats.calls, 8 * calls_per_thread as i64, "{stats:?}");
    assert_eq!(stats.hits + stats.misses, stats.calls, "{stats:?}");
    assert_eq!(ctx.memory_stats()?.bytes_in_use, 0);
    Ok(())
}

#[test]
fn one_context_shared_by_threads_and_tensors_sent_between_them() -> Result<()> {
    let ctx = Context::new()?;
    let text = common::example_text("seed_mul.pbtxt");
    let tensors: Vec<Tensor> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (ctx, text) = (&ctx, &text);
                s.spawn(move || -> Result<Tensor> {
                    let f = Function::new(&Graph::from_text(ctx, text)?)?;
                    let x = [t as f32; 3];
                    Ok(
                        f.call_alloc(&[TensorView::new(&x, &[3])?, TensorView::new(&x, &[3])?])?
                            .remove(0),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Result<Vec<_>>>()
    })?;
    for (t, tensor) in tensors.iter().enumerate() {
        assert_eq!(tensor.as_slice::<f32>()?, [(t * t) as f32; 3]);
    }
    // Dropped on another thread than the one that made them.
    std::thread::spawn(move || drop(tensors)).join().unwrap();
    assert_eq!(ctx.memory_stats()?.bytes_in_use, 0);
    Ok(())
}
