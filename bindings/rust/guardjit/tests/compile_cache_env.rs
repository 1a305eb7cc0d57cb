//! The compile cache's environment variables (C API 0.11): a cache option
//! never set is NULL, so `GJ_CACHE_DIR` applies; `cache_dir("")` is "", which
//! turns the cache off whatever the environment says. A test binary of its
//! own, with one test, because it sets the process's environment.

mod common;

use common::example;
use guardjit::{CompileCacheStats, Context, ContextOptions, Function, Graph, Result, TensorView};

fn run_attention(ctx: &Context) -> Result<()> {
    let f = Function::new(&Graph::from_file(ctx, example("attention.pbtxt"))?)?;
    let x: Vec<f32> = (0..64).map(|i| 0.01 * (i % 17) as f32 - 0.05).collect();
    f.call_alloc(&[TensorView::new(&x, &[2, 4, 8])?])?;
    Ok(())
}

#[test]
fn unset_options_take_the_environment_and_empty_ones_override_it() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("guardjit-rust-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var("GJ_CACHE_DIR", &dir);
    let result = (|| -> Result<()> {
        let off = Context::with_options(&ContextOptions::new().cache_dir(""))?;
        run_attention(&off)?;
        let cs = off.compile_cache_stats()?;
        assert_eq!(
            CompileCacheStats {
                kernels_compiled: 0,
                ..cs
            },
            CompileCacheStats::default(),
            "{cs:?}"
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

        let from_env = Context::new()?;
        run_attention(&from_env)?;
        let cs = from_env.compile_cache_stats()?;
        assert!(cs.disk_misses > 0 && cs.disk_stores > 0, "{cs:?}");
        assert!(std::fs::read_dir(&dir).unwrap().count() > 0);
        Ok(())
    })();
    std::env::remove_var("GJ_CACHE_DIR");
    let _ = std::fs::remove_dir_all(&dir);
    result
}
