//! The persistent compile cache (C API 0.11): its counters
//! ([`Context::compile_cache_stats`](crate::Context::compile_cache_stats)) and
//! the maintenance of a cache directory ([`inspect_cache_dir`],
//! [`clear_cache_dir`]). A context gets a cache from
//! [`ContextOptions::cache_dir`](crate::ContextOptions::cache_dir).

use crate::error::{check, Error, Result};
use crate::graph::path_c_string;
use crate::{take_string, versioned};
use guardjit_sys as sys;
use std::ffi::CString;
use std::path::Path;
use std::ptr;

/// What a context's compile cache did (`gj_compile_cache_stats`). A record
/// is one compiled kernel; a lookup that finds no usable record is a miss,
/// and the kernel compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompileCacheStats {
    /// Kernels the context compiled.
    pub kernels_compiled: i64,
    /// Kernels loaded from the cache instead.
    pub kernels_loaded: i64,
    pub disk_hits: i64,
    pub disk_misses: i64,
    pub disk_stores: i64,
    /// From Redis ([`ContextOptions::remote_cache`](crate::ContextOptions::remote_cache)).
    pub remote_hits: i64,
    pub remote_misses: i64,
    pub remote_stores: i64,
    /// Kernels left to another replica holding their compile lock.
    pub lock_waits: i64,
    /// Of those, the waits that ended without its record (compiled here
    /// then).
    pub lock_timeouts: i64,
    /// Records refused: truncated, corrupt (digest), of another record
    /// format, stored under another key, unsigned or wrongly signed with a
    /// [`cache_key`](crate::ContextOptions::cache_key). Each is removed, its
    /// kernel compiled and stored again.
    pub rejected: i64,
    /// I/O and Redis failures: each a miss or a lost store.
    pub errors: i64,
    /// Records this context removed past
    /// [`max_cache_bytes`](crate::ContextOptions::max_cache_bytes).
    pub evictions: i64,
}

impl CompileCacheStats {
    pub(crate) fn from_raw(raw: &sys::gj_compile_cache_stats) -> CompileCacheStats {
        CompileCacheStats {
            kernels_compiled: raw.kernels_compiled,
            kernels_loaded: raw.kernels_loaded,
            disk_hits: raw.disk_hits,
            disk_misses: raw.disk_misses,
            disk_stores: raw.disk_stores,
            remote_hits: raw.remote_hits,
            remote_misses: raw.remote_misses,
            remote_stores: raw.remote_stores,
            lock_waits: raw.lock_waits,
            lock_timeouts: raw.lock_timeouts,
            rejected: raw.rejected,
            errors: raw.errors,
            evictions: raw.evictions,
        }
    }
}

/// A compile cache directory as a whole (`gj_cache_dir_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheDirStats {
    /// Record files.
    pub records: i64,
    /// Their total size.
    pub bytes: i64,
    /// Last use of the least recently used record (Unix milliseconds; 0
    /// without records).
    pub oldest_use_ms: i64,
    /// Last use of the most recently used record (Unix milliseconds).
    pub newest_use_ms: i64,
    /// With `verify`: records whose checks passed.
    pub verified: i64,
    /// With `verify`: records that failed them.
    pub bad: i64,
    /// With `remove_bad`: bad records removed.
    pub removed: i64,
}

/// Counts the records of compile cache directory `dir`
/// (`gj_cache_dir_inspect`; `guardjit cache stats|verify DIR`). With
/// `verify`, reads each one whole and checks it as a load would (its digest,
/// its file name against its key and, with a `key`, its signature), and with
/// `remove_bad` also removes those that fail. Returns the counts and a
/// report: a summary by kind of record, then one line per bad record naming
/// the file and the problem. `NotFound` when `dir` does not exist. Safe while
/// other processes use the directory.
pub fn inspect_cache_dir(
    dir: impl AsRef<Path>,
    key: Option<&[u8]>,
    verify: bool,
    remove_bad: bool,
) -> Result<(CacheDirStats, String)> {
    let dir = path_c_string("inspect_cache_dir", dir.as_ref())?;
    // The key is a secret: the error does not repeat it.
    let key = key
        .map(|k| {
            CString::new(k).map_err(|_| {
                Error::invalid_argument("inspect_cache_dir: the key contains a NUL byte")
            })
        })
        .transpose()?;
    let mut raw: sys::gj_cache_dir_stats = versioned::init();
    let mut report = ptr::null_mut();
    // SAFETY: NUL-terminated strings (key NULL or one) alive for the call;
    // raw initialized by _init_v; report owned on success and freed by
    // take_string.
    unsafe {
        check(sys::gj_cache_dir_inspect(
            dir.as_ptr(),
            key.as_ref().map_or(ptr::null(), |k| k.as_ptr()),
            verify.into(),
            remove_bad.into(),
            &mut raw,
            &mut report,
        ))?;
        let report = take_string(report);
        Ok((
            CacheDirStats {
                records: raw.records,
                bytes: raw.bytes,
                oldest_use_ms: raw.oldest_use_ms,
                newest_use_ms: raw.newest_use_ms,
                verified: raw.verified,
                bad: raw.bad,
                removed: raw.removed,
            },
            report,
        ))
    }
}

/// Removes every record (and leftover temporary file) of compile cache
/// directory `dir` (`gj_cache_dir_clear`; `guardjit cache clear DIR`) and
/// returns how many files it removed. `NotFound` when `dir` does not exist.
pub fn clear_cache_dir(dir: impl AsRef<Path>) -> Result<i64> {
    let dir = path_c_string("clear_cache_dir", dir.as_ref())?;
    let mut removed = 0i64;
    // SAFETY: a NUL-terminated path alive for the call; removed is a valid
    // out-pointer.
    unsafe { check(sys::gj_cache_dir_clear(dir.as_ptr(), &mut removed))? };
    Ok(removed)
}
