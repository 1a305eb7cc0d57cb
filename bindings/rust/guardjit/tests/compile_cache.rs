//! The persistent compile cache (C API 0.11): `ContextOptions::cache_dir`,
//! `cache_key`, `max_cache_bytes`, `remote_cache`,
//! `Context::compile_cache_stats`, `FunctionStats::entries_loaded`,
//! `inspect_cache_dir` and `clear_cache_dir`. The environment variables are
//! in tests/compile_cache_env.rs, a binary of its own.

mod common;

use common::example;
use guardjit::{
    clear_cache_dir, inspect_cache_dir, CompileCacheStats, Context, ContextOptions, ErrorCode,
    Function, FunctionStats, Graph, Result, TensorView,
};
use std::path::{Path, PathBuf};

/// A fresh directory under the system's temporary one, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "guardjit-rust-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// examples/attention.pbtxt on a fixed x of float32[2,4,8], in a new
/// function of `ctx`: its output, stats and explain text.
fn attention(ctx: &Context) -> Result<(Vec<f32>, FunctionStats, String)> {
    let f = Function::new(&Graph::from_file(ctx, example("attention.pbtxt"))?)?;
    let x: Vec<f32> = (0..64).map(|i| 0.01 * (i % 17) as f32 - 0.05).collect();
    let out = f.call_alloc(&[TensorView::new(&x, &[2, 4, 8])?])?;
    assert_eq!(out[0].shape(), &[2, 4, 8]);
    Ok((out[0].to_vec::<f32>()?, f.stats()?, f.explain()?))
}

#[test]
fn a_second_context_loads_what_the_first_compiled() -> Result<()> {
    let dir = TempDir::new("across");
    let first = Context::with_options(&ContextOptions::new().cache_dir(dir.path()))?;
    let (want, stats, _) = attention(&first)?;
    let cs = first.compile_cache_stats()?;
    assert!(cs.kernels_compiled > 0, "{cs:?}");
    assert_eq!(cs.kernels_loaded, 0, "{cs:?}");
    assert_eq!(cs.disk_stores, cs.kernels_compiled, "{cs:?}");
    assert!(cs.disk_misses > 0, "{cs:?}");
    assert_eq!(stats.entries_loaded, 0, "{stats:?}");

    let second = Context::with_options(&ContextOptions::new().cache_dir(dir.path()))?;
    let (got, stats, explain) = attention(&second)?;
    let cs2 = second.compile_cache_stats()?;
    assert_eq!(cs2.kernels_compiled, 0, "{cs2:?}");
    assert!(cs2.kernels_loaded > 0, "{cs2:?}");
    assert_eq!(cs2.disk_hits, cs2.kernels_loaded, "{cs2:?}");
    assert_eq!((cs2.rejected, cs2.errors), (0, 0), "{cs2:?}");
    assert_eq!((stats.entries_loaded, stats.compiles), (1, 1), "{stats:?}");
    assert!(explain.contains("loaded from the disk cache"), "{explain}");
    // Bit for bit: the same code ran.
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );

    let (ds, report) = inspect_cache_dir(dir.path(), None, true, false)?;
    assert!(
        ds.records > 0 && ds.records <= cs.disk_stores,
        "{ds:?}\n{report}"
    );
    assert_eq!(
        (ds.verified, ds.bad, ds.removed),
        (ds.records, 0, 0),
        "{ds:?}"
    );
    assert!(ds.bytes > 0 && ds.newest_use_ms >= ds.oldest_use_ms && ds.oldest_use_ms > 0);
    assert!(!report.is_empty());

    // With a key, the unsigned records are refused and stored again signed.
    let keyed = Context::with_options(&ContextOptions::new().cache_dir(dir.path()).cache_key("k"))?;
    attention(&keyed)?;
    let ks = keyed.compile_cache_stats()?;
    assert!(ks.rejected > 0 && ks.kernels_compiled > 0, "{ks:?}");
    assert_eq!(ks.kernels_loaded, 0, "{ks:?}");
    let (signed, report) = inspect_cache_dir(dir.path(), Some(b"k"), true, false)?;
    assert!(
        signed.records > 0 && signed.bad == 0,
        "{signed:?}\n{report}"
    );

    let removed = clear_cache_dir(dir.path())?;
    assert!(removed >= signed.records, "{removed} of {signed:?}");
    let (empty, _) = inspect_cache_dir(dir.path(), None, false, false)?;
    assert_eq!((empty.records, empty.bytes), (0, 0), "{empty:?}");
    let missing = dir.path().join("missing");
    assert_eq!(
        clear_cache_dir(&missing).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        inspect_cache_dir(&missing, None, false, false)
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
    Ok(())
}

#[test]
fn an_empty_cache_dir_disables_the_cache() -> Result<()> {
    let off = Context::with_options(&ContextOptions::new().cache_dir(""))?;
    attention(&off)?;
    let cs = off.compile_cache_stats()?;
    assert_eq!(cs.disk_misses, 0, "{cs:?}");
    // Kernels compile (and are counted) but nothing is looked up, loaded or
    // stored.
    assert!(cs.kernels_compiled > 0, "{cs:?}");
    assert_eq!(
        CompileCacheStats {
            kernels_compiled: 0,
            ..cs
        },
        CompileCacheStats::default()
    );
    Ok(())
}

#[test]
fn bad_cache_options_are_refused() {
    let dir = TempDir::new("bad");
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let err =
        Context::with_options(&ContextOptions::new().cache_dir(file.join("sub"))).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err}");
    assert!(err.message().contains("cache_dir"), "{err}");
    let err = Context::with_options(&ContextOptions::new().cache_dir("").max_cache_bytes(-5))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("max_cache_bytes"), "{err}");
    let err = Context::with_options(&ContextOptions::new().cache_dir("").remote_cache("http://x"))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("remote_cache"), "{err}");
    // Caught before the library: a NUL byte; the key is not repeated.
    let err =
        Context::with_options(&ContextOptions::new().cache_key(&b"se\0cret"[..])).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(
        err.message().contains("cache_key") && !err.message().contains("cret"),
        "{err}"
    );
    let err = Context::with_options(&ContextOptions::new().cache_dir("a\0b")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    // Debug shows neither the key nor the Redis URL (it may hold a password).
    let shown = format!(
        "{:?}",
        ContextOptions::new()
            .cache_key("hunter2")
            .remote_cache("redis://:pw@h")
    );
    assert!(
        !shown.contains("hunter2") && !shown.contains("pw@"),
        "{shown}"
    );
}
