//! `Context`: the thread pool, the compiler and the caching allocator.

use crate::compile_cache::CompileCacheStats;
use crate::error::{check, Error, Result};
use crate::graph::path_c_string;
use crate::versioned;
use guardjit_sys as sys;
use std::ffi::CString;
use std::fmt;
use std::path::PathBuf;
use std::ptr::{self, NonNull};
use std::sync::Arc;

/// What compiles a cache entry on a miss (`gj_backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// The best available: the CPU JIT for CPU tensors.
    #[default]
    Default,
    /// Specialized eager plans (torch.compile's `backend="eager"`).
    Eager,
    /// Fused kernels compiled in process by LLVM's ORC JIT.
    CpuJit,
}

impl Backend {
    fn to_raw(self) -> sys::gj_backend {
        match self {
            Backend::Default => sys::GJ_BACKEND_DEFAULT,
            Backend::Eager => sys::GJ_BACKEND_EAGER,
            Backend::CpuJit => sys::GJ_BACKEND_CPU_JIT,
        }
    }
}

/// `gj_context_options`, starting from the library's defaults
/// (`gj_context_options_init`). The library validates the values.
///
/// The compile cache's strings keep the C API's rule: an option never set is
/// NULL, and the library takes `GJ_CACHE_DIR`, `GJ_CACHE_KEY` or
/// `GJ_REMOTE_CACHE` from the environment; one set to `""` turns that part
/// off whatever the environment says.
#[derive(Clone)]
pub struct ContextOptions {
    raw: sys::gj_context_options,
    // Since 0.11; copied into C strings by Context::with_options (the raw
    // struct's pointers stay NULL here).
    cache_dir: Option<PathBuf>,
    cache_key: Option<Vec<u8>>,
    remote_cache: Option<String>,
}

impl ContextOptions {
    pub fn new() -> ContextOptions {
        ContextOptions {
            raw: versioned::init(),
            cache_dir: None,
            cache_key: None,
            remote_cache: None,
        }
    }

    /// Threads compiled programs run on, the calling thread included; 0 =
    /// the process-wide pool (`GJ_NUM_THREADS`, else one per core).
    pub fn num_threads(mut self, n: i32) -> Self {
        self.raw.num_threads = n;
        self
    }

    pub fn backend(mut self, backend: Backend) -> Self {
        self.raw.backend = backend.to_raw();
        self
    }

    /// Compiled kernels kept for reuse once no function uses them (default
    /// 1024, 0 = none).
    pub fn max_cached_kernels(mut self, n: i32) -> Self {
        self.raw.max_cached_kernels = n;
        self
    }

    /// Host bytes the caching allocator keeps after outputs and
    /// intermediates are freed (default 1 GiB, 0 = none).
    pub fn max_cached_bytes(mut self, bytes: i64) -> Self {
        self.raw.max_cached_bytes = bytes;
        self
    }

    /// The persistent compile cache (since 0.11): a directory where the
    /// context stores the code it compiles and looks it up before
    /// compiling, so that the next process, or any process sharing the
    /// directory, loads what was compiled once. Unset: `GJ_CACHE_DIR` if
    /// set, else none; `""`: none. Created if missing; creating the context
    /// fails with `Unavailable`, naming it, when it cannot be created or
    /// written.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The cache directory's size limit in bytes (since 0.11); beyond it the
    /// least recently used records are removed. Default 1 GiB, 0 =
    /// unbounded.
    pub fn max_cache_bytes(mut self, bytes: i64) -> Self {
        self.raw.max_cache_bytes = bytes;
        self
    }

    /// A secret key (any bytes but NUL) that signs every record the context
    /// stores (HMAC-SHA256, since 0.11); with a key, a record without a
    /// valid signature under it is refused
    /// ([`CompileCacheStats::rejected`]) and compiled anew. Unset:
    /// `GJ_CACHE_KEY` if set, else none; `""`: none.
    pub fn cache_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.cache_key = Some(key.into());
        self
    }

    /// A Redis server the records are shared through, for a fleet (since
    /// 0.11): `redis://[:password@]host[:port][/db]` with optional
    /// `?timeout_ms=100&ttl_s=0&max_value_bytes=67108864&lock_ms=10000&wait_ms=10000`.
    /// An unreachable server is not an error (the context compiles locally,
    /// with one warning); a malformed URL fails with `InvalidArgument`.
    /// Unset: `GJ_REMOTE_CACHE` if set, else none; `""`: none.
    pub fn remote_cache(mut self, url: impl Into<String>) -> Self {
        self.remote_cache = Some(url.into());
        self
    }
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions::new()
    }
}

impl fmt::Debug for ContextOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key and the Redis URL (which may hold a password) are not
        // printed, only whether they are set.
        let set = |v: bool| if v { "<set>" } else { "<unset>" };
        f.debug_struct("ContextOptions")
            .field("num_threads", &self.raw.num_threads)
            .field("backend", &self.raw.backend)
            .field("max_cached_kernels", &self.raw.max_cached_kernels)
            .field("max_cached_bytes", &self.raw.max_cached_bytes)
            .field("cache_dir", &self.cache_dir)
            .field("max_cache_bytes", &self.raw.max_cache_bytes)
            .field("cache_key", &set(self.cache_key.is_some()))
            .field("remote_cache", &set(self.remote_cache.is_some()))
            .finish()
    }
}

/// The context's memory (`gj_memory_stats`). Host bytes are counted by
/// size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    /// Outputs and intermediates alive now (library-allocated outputs count
    /// until dropped, even after the context is gone).
    pub bytes_in_use: i64,
    /// Freed, kept for reuse.
    pub bytes_cached: i64,
    /// Since the context was created.
    pub peak_bytes_in_use: i64,
    /// Blocks taken from the system.
    pub system_allocations: i64,
    /// Blocks served from the cache.
    pub cache_hits: i64,
    /// JIT code modules loaded.
    pub compiled_modules: i64,
    /// Compiled kernels kept for reuse.
    pub cached_kernels: i64,
    /// Graph weights the context's live cache entries hold again, packed
    /// into their kernels' layouts (since 0.13; 0 from an older library and
    /// for a CUDA device).
    pub packed_weight_bytes: i64,
}

struct ContextHandle(NonNull<sys::gj_context>);

// SAFETY: guardjit.h: "Thread safety: handles may be used from any thread."
unsafe impl Send for ContextHandle {}
// SAFETY: guardjit.h calls the context the thing to "share one per process"
// ("Context: owns the thread pool and the compiler; share one per
// process"), says "Functions on distinct handles never block each other",
// and marks gj_context_get_memory_stats and gj_context_release_cached_memory
// "Thread-safe"; those, and making graphs, builders and functions from it,
// are all a shared Context does.
unsafe impl Sync for ContextHandle {}

impl Drop for ContextHandle {
    fn drop(&mut self) {
        // SAFETY: the last reference: every Graph, GraphBuilder and Function
        // holds a Context clone, so they are gone ("Every graph and function
        // made from the context must be destroyed first").
        unsafe { sys::gj_context_destroy(self.0.as_ptr()) }
    }
}

/// Owns guardjit's thread pool, compiler and caching allocator; share one
/// per process. Cloning is cheap (a reference count); graphs, builders and
/// functions hold a clone, so the context is destroyed after the last of
/// them.
#[derive(Clone)]
pub struct Context {
    handle: Arc<ContextHandle>,
}

impl Context {
    /// A context with the default options.
    pub fn new() -> Result<Context> {
        Context::create(ptr::null())
    }

    pub fn with_options(options: &ContextOptions) -> Result<Context> {
        let cache_dir = options
            .cache_dir
            .as_deref()
            .map(|d| path_c_string("ContextOptions::cache_dir", d))
            .transpose()?;
        // The key is a secret: the error does not repeat it.
        let cache_key = options
            .cache_key
            .clone()
            .map(|k| {
                CString::new(k).map_err(|_| {
                    Error::invalid_argument("ContextOptions::cache_key contains a NUL byte")
                })
            })
            .transpose()?;
        let remote_cache = options
            .remote_cache
            .as_deref()
            .map(|u| {
                CString::new(u).map_err(|_| {
                    Error::invalid_argument("ContextOptions::remote_cache contains a NUL byte")
                })
            })
            .transpose()?;
        let c_str = |s: &Option<CString>| s.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        let mut raw = options.raw;
        raw.cache_dir = c_str(&cache_dir);
        raw.cache_key = c_str(&cache_key);
        raw.remote_cache = c_str(&remote_cache);
        // The strings outlive the call, which copies them.
        Context::create(&raw)
    }

    fn create(options: *const sys::gj_context_options) -> Result<Context> {
        let mut raw = ptr::null_mut();
        // SAFETY: options is NULL or an initialized struct; raw is written
        // only on success.
        unsafe { check(sys::gj_context_create(options, &mut raw))? };
        let raw = NonNull::new(raw).expect("gj_context_create succeeded without a context");
        Ok(Context {
            handle: Arc::new(ContextHandle(raw)),
        })
    }

    /// The `gj_context*` (owned by this value and its clones).
    pub fn as_ptr(&self) -> *mut sys::gj_context {
        self.handle.0.as_ptr()
    }

    pub fn memory_stats(&self) -> Result<MemoryStats> {
        let mut raw: sys::gj_memory_stats = versioned::init();
        // SAFETY: fills the fields inside raw.struct_size; thread-safe per
        // the header.
        unsafe { check(sys::gj_context_get_memory_stats(self.as_ptr(), &mut raw))? };
        Ok(MemoryStats {
            bytes_in_use: raw.bytes_in_use,
            bytes_cached: raw.bytes_cached,
            peak_bytes_in_use: raw.peak_bytes_in_use,
            system_allocations: raw.system_allocations,
            cache_hits: raw.cache_hits,
            compiled_modules: raw.compiled_modules,
            cached_kernels: raw.cached_kernels,
            packed_weight_bytes: raw.packed_weight_bytes,
        })
    }

    /// What the context's compile cache did (`gj_compile_cache_stats`,
    /// since 0.11). Without a compile cache only `kernels_compiled` counts
    /// (what a JIT context compiles; all are 0 with [`Backend::Eager`]).
    pub fn compile_cache_stats(&self) -> Result<CompileCacheStats> {
        let mut raw: sys::gj_compile_cache_stats = versioned::init();
        // SAFETY: fills the fields inside raw.struct_size; thread-safe per
        // the header.
        unsafe {
            check(sys::gj_context_get_compile_cache_stats(
                self.as_ptr(),
                &mut raw,
            ))?
        };
        Ok(CompileCacheStats::from_raw(&raw))
    }

    /// Returns every cached host block to the system.
    pub fn release_cached_memory(&self) -> Result<()> {
        // SAFETY: a live context; the call is thread-safe per the header.
        unsafe { check(sys::gj_context_release_cached_memory(self.as_ptr())) }
    }

    /// The memory of one device (`gj_context_get_device_memory_stats`,
    /// since 0.10): `Device::Cpu` is this context's host memory (as
    /// [`Context::memory_stats`]); `Device::Cuda(i)` is device i's
    /// stream-ordered caching allocator, shared by every context of the
    /// process (`system_allocations` counts `cuMemAlloc` calls;
    /// `compiled_modules` and `cached_kernels` are 0). `Unavailable` naming
    /// the device without a usable CUDA driver or device.
    pub fn device_memory_stats(&self, device: Device) -> Result<MemoryStats> {
        let mut raw: sys::gj_memory_stats = versioned::init();
        // SAFETY: as memory_stats; the device is passed by value.
        unsafe {
            check(sys::gj_context_get_device_memory_stats(
                self.as_ptr(),
                device.to_raw(),
                &mut raw,
            ))?
        };
        Ok(MemoryStats {
            bytes_in_use: raw.bytes_in_use,
            bytes_cached: raw.bytes_cached,
            peak_bytes_in_use: raw.peak_bytes_in_use,
            system_allocations: raw.system_allocations,
            cache_hits: raw.cache_hits,
            compiled_modules: raw.compiled_modules,
            cached_kernels: raw.cached_kernels,
            packed_weight_bytes: raw.packed_weight_bytes,
        })
    }

    /// Returns one device's idle cached blocks to the system (since 0.10;
    /// `Device::Cuda(i)`: `cuMemFree` of every idle block once the streams
    /// that used them are done). Blocks in use stay. Errors as
    /// [`Context::device_memory_stats`].
    pub fn release_cached_device_memory(&self, device: Device) -> Result<()> {
        // SAFETY: a live context; thread-safe per the header.
        unsafe {
            check(sys::gj_context_release_cached_device_memory(
                self.as_ptr(),
                device.to_raw(),
            ))
        }
    }
}

/// A device, as DLPack names it: where a tensor's memory is, and where
/// memory stats are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// Host memory (`kDLCPU`, id 0).
    Cpu,
    /// CUDA device ordinal (`kDLCUDA`).
    Cuda(i32),
    /// Page-locked host memory registered with CUDA (`kDLCUDAHost`): read as
    /// host memory beside CUDA tensors.
    CudaHost,
}

impl Device {
    pub(crate) fn to_raw(self) -> sys::DLDevice {
        let (device_type, device_id) = match self {
            Device::Cpu => (sys::kDLCPU, 0),
            Device::Cuda(id) => (sys::kDLCUDA, id),
            Device::CudaHost => (sys::kDLCUDAHost, 0),
        };
        sys::DLDevice {
            device_type,
            device_id,
        }
    }

    pub(crate) fn from_raw(d: sys::DLDevice) -> Option<Device> {
        match d.device_type {
            sys::kDLCPU => Some(Device::Cpu),
            sys::kDLCUDA => Some(Device::Cuda(d.device_id)),
            sys::kDLCUDAHost => Some(Device::CudaHost),
            _ => None,
        }
    }

    /// Whether the host can read this memory (CPU and pinned host memory).
    pub fn is_host(self) -> bool {
        !matches!(self, Device::Cuda(_))
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Context").field(&self.as_ptr()).finish()
    }
}
